/*
 * The wake benchmark's pattern without Java (`depot bench wake`'s floor): a child says it waits,
 * the parent sleeps 1 ms, stamps CLOCK_MONOTONIC and wakes it, through a shared futex word, then through a
 * UNIX stream socket; the child records now minus the stamp. p50 and p90 of 2,000 wakes each.
 *   cc -O2 -o /tmp/futex_wake depot-bench/probes/futex_wake.c && /tmp/futex_wake
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WAKES 2000

static long now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000L + t.tv_nsec;
}

static int by_value(const void *a, const void *b) {
    long x = *(const long *) a, y = *(const long *) b;
    return x < y ? -1 : x > y;
}

int main(void) {
    int *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    volatile long *stamp = (volatile long *) (word + 16);
    int sv[2], ready[2];
    if (word == MAP_FAILED || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0 || pipe(ready) != 0) {
        perror("setup");
        return 1;
    }
    pid_t child = fork();
    if (child == 0) {
        static long futex_ns[WAKES], socket_ns[WAKES];
        char b = 'w';
        for (int i = 0; i < WAKES; i++) {
            int seq = __atomic_load_n(word, __ATOMIC_ACQUIRE);
            if (write(ready[1], &b, 1) != 1) _exit(1);
            while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == seq) {
                syscall(SYS_futex, word, FUTEX_WAIT, seq, NULL, NULL, 0);
            }
            futex_ns[i] = now_ns() - *stamp;
        }
        for (int i = 0; i < WAKES; i++) {
            long sent;
            if (write(ready[1], &b, 1) != 1 || read(sv[1], &sent, sizeof sent) != sizeof sent) _exit(1);
            socket_ns[i] = now_ns() - sent;
        }
        qsort(futex_ns, WAKES, sizeof(long), by_value);
        qsort(socket_ns, WAKES, sizeof(long), by_value);
        printf("C futex wake p50 %.1f us p90 %.1f; socket wake p50 %.1f us p90 %.1f\n", futex_ns[WAKES / 2] / 1e3,
               futex_ns[WAKES * 9 / 10] / 1e3, socket_ns[WAKES / 2] / 1e3, socket_ns[WAKES * 9 / 10] / 1e3);
        fflush(stdout);
        _exit(0);
    }
    struct timespec settle = {0, 1000000};
    char b;
    for (int i = 0; i < WAKES; i++) {
        if (read(ready[0], &b, 1) != 1) return 1;
        nanosleep(&settle, NULL);
        *stamp = now_ns();
        __atomic_add_fetch(word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, word, FUTEX_WAKE, 1 << 30, NULL, NULL, 0);
    }
    for (int i = 0; i < WAKES; i++) {
        if (read(ready[0], &b, 1) != 1) return 1;
        nanosleep(&settle, NULL);
        long sent = now_ns();
        if (write(sv[0], &sent, sizeof sent) != sizeof sent) return 1;
    }
    int status;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
