package dev.depot.shuffle;

import dev.depot.client.DepotClient;
import dev.depot.client.ObjectId;
import dev.depot.client.ObjectInfo;
import dev.depot.client.ObjectState;
import dev.depot.client.ObjectView;
import dev.depot.core.sys.ProcessIdentity;
import dev.depot.errors.DepotException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
 * missing objects do nothing. {@code depot doctor} reports them, and deletes them unless {@code --check}.
 */
final class AbandonedShuffles {
    /** How long a sweep waits for a spilled manifest to come back from disk. */
    private static final long RESTORE_TIMEOUT_MILLIS = 10_000;
    /** The longest name in UTF-8: each of its characters (UTF-16 units) takes at most 3 bytes. */
    private static final int MAX_NAME_BYTES = 3 * ShuffleIds.MAX_LENGTH;

    private AbandonedShuffles() {
    }

    /** Every abandoned shuffle in the store; deletes nothing. */
    static List<AbandonedShuffle> find(DepotClient client) {
        List<ObjectInfo> listing = client.list();
        Map<ObjectId, ObjectInfo> byId = new HashMap<>();
        for (ObjectInfo o : listing) {
            byId.put(o.id(), o);
        }
        List<AbandonedShuffle> found = new ArrayList<>();
        for (ObjectInfo o : listing) {
            if (o.dataSize() != ManifestDescriptor.LENGTH || o.metadataSize() <= 0
                || o.metadataSize() > MAX_NAME_BYTES
                || (o.state() != ObjectState.SEALED && o.state() != ObjectState.SPILLED)) {
                continue;
            }
            AbandonedShuffle a = abandoned(client, o.id(), byId);
            if (a != null) {
                found.add(a);
            }
        }
        return found;
    }

    /**
     * Deletes every abandoned shuffle in the store, as its creator's {@code close()} would; returns them. A delete
     * that fails (the object is being deleted by another sweep, or still being written by a process the daemon
     * has not reaped yet) is left to that other party or to the next sweep: a sweep never fails a create.
     */
    static List<AbandonedShuffle> sweep(DepotClient client) {
        List<AbandonedShuffle> found = find(client);
        for (AbandonedShuffle a : found) {
            Manifest m = manifestOf(client, a.id());
            if (m == null) {
                continue;  // swept by another process meanwhile
            }
            for (ObjectId each : new ShuffleIds(a.id()).all(m.maps(), m.partitions())) {
                try {
                    client.delete(each);
                } catch (DepotException e) {
                    // see above
                }
            }
        }
        return found;
    }

    /**
     * The shuffle whose manifest is {@code id}, when it is abandoned; else null. {@code listing} gives the sizes
     * of its objects.
     */
    private static AbandonedShuffle abandoned(DepotClient client, ObjectId id, Map<ObjectId, ObjectInfo> listing) {
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
        } catch (DepotException e) {
            return null;  // spilled with no daemon to restore it, or gone meanwhile: not examined this time
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
        int objects = 0;
        long bytes = 0;
        for (ObjectId each : ids.all(manifest.maps(), manifest.partitions())) {
            ObjectInfo o = listing.get(each);
            if (o != null) {
                objects++;
                bytes += o.dataSize();
            }
        }
        return new AbandonedShuffle(shuffleId, ProcessIdentity.pidOf(manifest.creator()), objects, bytes);
    }

    /** The manifest of {@code shuffleId}, or null when it is gone (swept by another process meanwhile). */
    private static Manifest manifestOf(DepotClient client, String shuffleId) {
        ObjectId id = new ShuffleIds(shuffleId).manifest();
        try (ObjectView v = client.tryGet(id, RESTORE_TIMEOUT_MILLIS)) {
            return v == null ? null : Manifest.decode(v.data(), shuffleId, id);
        } catch (DepotException e) {
            return null;
        }
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
