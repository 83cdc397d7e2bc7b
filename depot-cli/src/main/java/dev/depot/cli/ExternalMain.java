package dev.depot.cli;

import dev.depot.errors.DepotException;
import java.io.PrintStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Runs an entry point of a class from another module (depot-bench), looked up by name at run time: the CLI
 * neither compiles against the benchmarks nor ships their libraries, and runs without them; a missing class is
 * a clear error, not a crash. depot-bench's jar is in a distribution's {@code lib/} and the wheel's
 * {@code depot/_jars/}; in a checkout, {@code depot.jar}'s manifest names {@code depot-bench-bundle.jar}. Prefers
 * {@code public static int run(String[], PrintStream out, PrintStream err)} (returns the exit status and writes
 * to the CLI's streams), else calls {@code public static void main(String[])} and returns 0.
 */
final class ExternalMain {
    private static final MethodType RUN = MethodType.methodType(int.class, String[].class, PrintStream.class,
        PrintStream.class);
    private static final MethodType MAIN = MethodType.methodType(void.class, String[].class);

    private ExternalMain() {
    }

    static int run(String className, String what, String[] args, PrintStream out, PrintStream err) throws Exception {
        Class<?> c;
        try {
            c = Class.forName(className, true, ExternalMain.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw missing(className, what, e);
        }
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        try {
            MethodHandle run = lookup.findStatic(c, "run", RUN);
            return (int) invoke(run, what, args, out, err);
        } catch (NoSuchMethodException | IllegalAccessException noRun) {
            try {
                MethodHandle main = lookup.findStatic(c, "main", MAIN);
                invoke(main, what, (Object) args);
                return 0;
            } catch (NoSuchMethodException | IllegalAccessException e) {
                throw missing(className + ".main(String[])", what, e);
            }
        }
    }

    private static Object invoke(MethodHandle handle, String what, Object... args) throws Exception {
        try {
            return handle.invokeWithArguments(args);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new DepotException(what + " failed: " + t, t);
        }
    }

    private static DepotException missing(String name, String what, Exception cause) {
        return new DepotException("the " + what + " is not in this build (" + name + " missing: " + cause
            + "); it comes with depot-bench's jar: in a checkout build it with `mvn -B package -DskipTests -pl "
            + "depot-bench -am` (depot-bench/target/depot-bench-bundle.jar), in a distribution put "
            + "depot-bench-VERSION.jar and HdrHistogram's jar back in lib/");
    }
}
