package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.core.sys.ProcessIdentity;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Finds the shuffles whose creator died without closing them and deletes their objects, which are KEEP and so
 * would stay in the store for good. {@link Shuffle#create} runs it first; {@link Shuffle#sweepAbandoned} runs it
 * on demand ({@code depot.shuffle.sweep_abandoned} in Python does the same).
 *
 * <p>A manifest is recognised by its size, its magic and its metadata, which names the shuffle; the name is
 * trusted only when it hashes to the manifest's own id. A shuffle is abandoned when the process named creator in
 * its manifest (pid and start time, so a reused pid does not count) is gone, and no map is still being written:
 * a map whose owner record names a live process but which has no status record yet keeps its shuffle, as the
 * creator's {@code close()} would not delete under it either. Manifests of an older version, without a name,
 * cannot be resolved and are left alone. Sweeping twice, or in two processes at once, is harmless: deletes of
 * missing objects do nothing.
 */
final class AbandonedShuffles {
    /** How long a sweep waits for a spilled manifest to come back from disk. */
    private static final long RESTORE_TIMEOUT_MILLIS = 10_000;
    /** The longest name in UTF-8: each of its characters (UTF-16 units) takes at most 3 bytes. */
    private static final int MAX_NAME_BYTES = 3 * ShuffleIds.MAX_LENGTH;

    private AbandonedShuffles() {
    }

    /** Deletes every abandoned shuffle in the store; returns their ids. */
    static List<String> sweep(DepotClient client) {
        List<String> swept = new ArrayList<>();
        for (ObjectInfo o : client.list()) {
            if (o.dataSize() != ManifestDescriptor.LENGTH || o.metadataSize() <= 0
                || o.metadataSize() > MAX_NAME_BYTES
                || (o.state() != ObjectState.SEALED && o.state() != ObjectState.SPILLED)) {
                continue;
            }
            String shuffleId = abandonedShuffleOf(client, o.id());
            if (shuffleId != null) {
                swept.add(shuffleId);
            }
        }
        return swept;
    }

    /** The id of the shuffle whose manifest is {@code id}, deleted here when abandoned; else null. */
    private static String abandonedShuffleOf(DepotClient client, ObjectId id) {
        String shuffleId;
        Manifest manifest;
        try (ObjectView v = client.tryGet(id, RESTORE_TIMEOUT_MILLIS)) {
            if (v == null || !Manifest.looksLikeOne(v.data())) {
                return null;
            }
            shuffleId = nameIn(v.metadata());
            if (shuffleId == null || !new ShuffleIds(shuffleId).manifest().equals(id)) {
                return null;  // an object that only looks like a manifest
            }
            manifest = Manifest.decode(v.data(), shuffleId, id);
        } catch (IllegalStateException e) {
            return null;  // a manifest of another version: its objects cannot be named here
        }
        if (manifest.creator() == 0 || ProcessIdentity.isAlive(manifest.creator())) {
            return null;
        }
        ShuffleIds ids = new ShuffleIds(shuffleId);
        for (int m = 0; m < manifest.maps(); m++) {
            long owner = MapStatus.ownerIdentity(client, ids, m);
            if (owner != 0 && ProcessIdentity.isAlive(owner) && !client.contains(ids.status(m))) {
                return null;  // map m is still being written
            }
        }
        RuntimeException failure = Shuffle.deleteAll(client, ids.all(manifest.maps(), manifest.partitions()), null);
        if (failure != null) {
            throw failure;
        }
        return shuffleId;
    }

    /** The shuffle id in a manifest's metadata, or null when it is not valid UTF-8 of a valid length. */
    private static String nameIn(byte[] metadata) {
        try {
            String name = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(metadata)).toString();
            return name.isEmpty() || name.length() > ShuffleIds.MAX_LENGTH ? null : name;
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
