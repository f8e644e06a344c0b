import Foundation
import Tributary
import TributaryStreams

/// Checks `replay` makes on its target before writing, and the removal of a target it created.
enum ReplayTarget {
    /// Removes a store `replay` created, with its WAL, shared-memory, notification and position files.
    static func remove(_ url: URL) {
        let files = [url.path, url.path + "-wal", url.path + "-shm", url.path + "-journal", url.path + "-notify",
                     StreamReplayer.positionFile(for: url).path]
        for file in files { try? FileManager.default.removeItem(atPath: file) }
    }

    /// Refuses a target that is the stream's own source store (same store ID): replaying a
    /// store's stream into itself, even with --resume, writes its past over its present.
    static func checkNotSource(_ url: URL, manifest: StreamManifest) throws {
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: url)
        description.isReadOnly = true
        guard let store = try? coordinator.addPersistentStore(with: description) else { return }
        defer { coordinator.remove(store) }
        if store.identifier == manifest.storeID {
            throw TributaryError(.invalidInput, "this is the stream's own source store (store \(manifest.storeID.uuidString.lowercased()))", location: url.path,
                                 hint: "replay into a new store, or into a replica an earlier replay made")
        }
    }

    /// Refuses `--until` before the stream's start: a stream that begins with a snapshot holds
    /// no state from before it, so replaying "until" then would give rows from after it.
    static func checkLimit(_ limit: ReplayLimit?, manifest: StreamManifest) throws {
        guard let snapshot = manifest.snapshot, let limit else { return }
        switch limit {
        case .token(let token) where token.value < snapshot.token:
            throw TributaryError(.invalidInput, "the stream starts with a snapshot at token \(snapshot.token), after \(token)", location: "--until",
                                 hint: "replay to a token at or after \(snapshot.token); earlier states are not in this stream")
        case .date(let date):
            guard let start = manifest.segments.first?.firstTimestamp, date < start else { return }
            throw TributaryError(.invalidInput, "the stream starts with a snapshot taken at \(ISO8601.string(from: start)), after \(ISO8601.string(from: date))", location: "--until",
                                 hint: "replay to a date at or after \(ISO8601.string(from: start)); earlier states are not in this stream")
        default:
            return
        }
    }
}
