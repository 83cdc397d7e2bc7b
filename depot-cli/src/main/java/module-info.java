/**
 * The {@code depot} command. It ships as one class-path jar ({@code depot.jar}, shaded, without the modules'
 * descriptors), and runs {@code depot bench}, {@code demo} and {@code sort} from depot-bench by class name; this
 * descriptor states what its code may use, and the compiler holds it to that.
 */
module dev.depot.cli {
    requires com.fasterxml.jackson.databind;
    requires dev.depot.server;
    requires dev.depot.shuffle;
    requires info.picocli;

    // picocli sets the commands' annotated fields and calls their methods reflectively
    opens dev.depot.cli to info.picocli;
}
