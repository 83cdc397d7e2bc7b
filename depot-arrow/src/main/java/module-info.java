/**
 * Arrow IPC streams in Depot objects, read in place ({@code dev.depot.arrow}).
 *
 * <p>Arrow's format module requires FlatBuffers' jar by its file name (an automatic module: the build warns that
 * it is one); on the class path, where Spark and the tests run this module, that does not matter.
 */
module dev.depot.arrow {
    requires transitive dev.depot.client;
    requires transitive org.apache.arrow.memory.core;
    requires transitive org.apache.arrow.vector;
    requires org.apache.arrow.format;

    exports dev.depot.arrow;
}
