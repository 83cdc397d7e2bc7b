package dev.depot.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** The writer ids Python's depot.dask.distributed packs ({@code python/tests/dask/test_writer_ids.py}: same bytes). */
class WriterIdDescriptorTest {
    static final long IDENTITY = 0x0000_1234_8000_5678L;
    static final String HEX = "44645731" + "00001234" + "80005678" + "0102030405060708";

    @Test
    void shouldPackAndReadTheWriterAsPythonDoes() {
        ObjectId id = WriterIdDescriptor.idOf(IDENTITY, 0x0102030405060708L);
        assertEquals(HEX, id.toHex());
        assertEquals(IDENTITY, WriterIdDescriptor.writerIdentity(ObjectId.fromHex(HEX)));
    }

    @Test
    void shouldNameNoWriterForOtherIds() {
        assertEquals(0, WriterIdDescriptor.writerIdentity(ObjectId.of("plain")));
        assertEquals(0, WriterIdDescriptor.writerIdentity(ObjectId.fromHex("44645732" + HEX.substring(8))));
    }
}
