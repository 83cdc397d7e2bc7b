package dev.depot.cli;

import dev.depot.errors.DepotException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Runs the {@code main(String[])} of a class from another module (depot-bench), looked up by name so that the
 * CLI builds and runs without it; a missing class is a clear error, not a crash.
 */
final class ExternalMain {
    private ExternalMain() {
    }

    static int run(String className, String what, String[] args) throws Exception {
        MethodHandle main;
        try {
            Class<?> c = Class.forName(className, true, ExternalMain.class.getClassLoader());
            main = MethodHandles.publicLookup().findStatic(c, "main", MethodType.methodType(void.class, String[].class));
        } catch (ClassNotFoundException | NoSuchMethodException | IllegalAccessException e) {
            throw new DepotException("the " + what + " is not in this build (" + className + " missing: " + e
                + "); rebuild with `mvn -B install -pl depot-bench,depot-cli -am`");
        }
        try {
            main.invokeExact(args);
        } catch (Exception | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new DepotException(what + " failed: " + t, t);
        }
        return 0;
    }
}
