package dev.depot.cli;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Option;

/**
 * {@code depot}: the top of the command tree. Holds {@code --dir} when given before the command name, and the
 * process's streams, which the subcommands reach through {@code @ParentCommand}. A new command is one class
 * (a {@link StoreCommand}, or a {@link ForwardingCommand} for a main class of another module) added to
 * {@code subcommands} below.
 */
@Command(name = "depot",
    mixinStandardHelpOptions = true,
    versionProvider = DepotCommand.Version.class,
    customSynopsis = "depot [--dir DIR] COMMAND [OPTIONS]",
    description = "Depot: a node-local shared-memory object store.",
    subcommands = {ServeCommand.class, PutCommand.class, GetCommand.class, LsCommand.class, StatCommand.class,
        RmCommand.class, EvictCommand.class, WatchCommand.class, DoctorCommand.class, DemoCommand.class,
        BenchCommand.class, SortCommand.class, CompletionCommand.class, HelpCommand.class},
    footer = {"The store directory is --dir DIR (before or after the command), else $DEPOT_DIR,",
        "else /dev/shm/depot-$USER.",
        "Exit status: 0 ok, 1 error, 2 usage error, 3 object missing or timed out, 4 store full.",
        "Run `depot COMMAND --help` for a command's options."})
final class DepotCommand implements Callable<Integer> {
    static final String DIR_HELP = "store directory (default $DEPOT_DIR, else /dev/shm/depot-$USER)";

    @Option(names = "--dir", paramLabel = "DIR", description = DIR_HELP)
    String dir;

    final InputStream in;
    final PrintStream out;
    final PrintStream err;

    DepotCommand(InputStream in, PrintStream out, PrintStream err) {
        this.in = in;
        this.out = out;
        this.err = err;
    }

    @Override
    public Integer call() {
        throw new UsageException("no command given");
    }

    /** {@code depot --version}: the version Maven built, from {@code version.properties}. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"depot " + version()};
        }

        static String version() {
            Properties p = new Properties();
            try (var in = DepotCommand.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    p.load(in);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return p.getProperty("version", "unknown");
        }
    }
}
