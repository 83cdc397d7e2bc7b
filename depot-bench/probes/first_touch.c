/*
 * What a process's first access of a page of a shared tmpfs mapping costs here (the figures behind
 * docs/DESIGN.md's and BENCHMARKS.md's first-touch costs): fresh pages, the same pages again through the same mapping, through a new mapping, and through a new
 * mapping pre-faulted with MADV_POPULATE_WRITE. CPU time of this process, and its minor faults.
 *   cc -O2 -o /tmp/first_touch depot-bench/probes/first_touch.c && /tmp/first_touch
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double cpu_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static long faults(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
}

static void timed(const char *what, char *m, size_t size, int populate) {
    long f0 = faults();
    double t0 = cpu_ms();
    if (populate && madvise(m, size, MADV_POPULATE_WRITE) != 0) {
        perror("madvise(MADV_POPULATE_WRITE)");
    }
    double t1 = cpu_ms();
    long f1 = faults();
    memset(m, 1, size);
    double t2 = cpu_ms();
    printf("%-44s populate %6.1f ms (%5ld faults), memset %6.1f ms (%5ld faults)\n", what, t1 - t0, f1 - f0,
           t2 - t1, faults() - f1);
}

int main(void) {
    size_t size = 64 << 20;
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/first-touch-%d", (int) getpid());
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0 || unlink(path) != 0 || ftruncate(fd, size) != 0) {
        perror(path);
        return 1;
    }
    char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    timed("64 MiB, fresh pages, first mapping", m, size, 0);
    timed("the same mapping again", m, size, 0);
    for (int r = 0; r < 2; r++) {
        char *n = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        timed("pages in memory, a new mapping", n, size, 0);
        munmap(n, size);
        n = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        timed("pages in memory, a new mapping, populated", n, size, 1);
        munmap(n, size);
    }
    return 0;
}
