import Foundation
import Glibc
import Synchronization

/// The process-wide registry of listening monitors, by store: a commit posted by one
/// coordinator wakes every monitor of the same store in the process at once, without
/// going through the file system (and for named in-memory stores, which have no file).
final class RemoteChangeHub: Sendable {
    static let shared = RemoteChangeHub()

    private let monitors = Locked<[String: [ObjectIdentifier: StoreChangeMonitor]]>([:])

    /// The key of a store in the registry: the memdb URI of an in-memory store, the
    /// real path of a file store (so that two spellings of one path meet).
    static func key(databasePath: String, isInMemory: Bool) -> String {
        if isInMemory { return databasePath }
        guard let resolved = realpath(databasePath, nil) else { return databasePath }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    func register(_ monitor: StoreChangeMonitor) {
        monitors.withLock { $0[monitor.key, default: [:]][ObjectIdentifier(monitor)] = monitor }
    }

    func unregister(_ monitor: StoreChangeMonitor) {
        monitors.withLock { all in
            all[monitor.key]?[ObjectIdentifier(monitor)] = nil
            if all[monitor.key]?.isEmpty == true { all[monitor.key] = nil }
        }
    }

    /// Tells every monitor of the store `key` in this process about a commit, which
    /// recorded history up to `token` (nil when it recorded none).
    func post(key: String, token: Int64?) {
        let targets = monitors.withLock { $0[key].map { Array($0.values) } ?? [] }
        for monitor in targets { monitor.posted(token: token) }
    }
}
