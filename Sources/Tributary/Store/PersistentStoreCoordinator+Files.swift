import Foundation

extension PersistentStoreCoordinator {
    /// Empties the store at `url` through SQLite, waiting for other connections'
    /// locks: the file stays, holding an empty database, as Core Data's does.
    ///
    /// ```swift
    /// try coordinator.destroyPersistentStore(at: url)
    /// ```
    public func destroyPersistentStore(at url: URL, busyTimeout: TimeInterval = 5) throws {
        let path = url.standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: path) else { return }
        let empty = try Connection(path: ":memory:", options: ConnectionOptions())
        try Self.backup(from: empty, toPath: path, busyTimeout: busyTimeout)
    }

    /// Replaces the store at `destination` with a copy of the store at `source`,
    /// through SQLite's backup API (consistent even while `source` is being written).
    ///
    /// ```swift
    /// try coordinator.replacePersistentStore(at: live, withStoreAt: backup)
    /// ```
    public func replacePersistentStore(at destination: URL, withStoreAt source: URL, busyTimeout: TimeInterval = 5) throws {
        let sourcePath = source.standardizedFileURL.path
        guard FileManager.default.fileExists(atPath: sourcePath) else {
            throw TributaryError(.fileNotFound, "no store to copy from", location: sourcePath, hint: "check the source path")
        }
        let from = try Connection(path: sourcePath, options: ConnectionOptions(readOnly: true, create: false, busyTimeout: busyTimeout))
        do {
            _ = try StoreMetadata.load(on: from, given: nil, place: sourcePath, canWrite: false)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: sourcePath, timeout: busyTimeout)
        }
        try Self.backup(from: from, toPath: destination.standardizedFileURL.path, busyTimeout: busyTimeout)
    }

    private static func backup(from source: Connection, toPath path: String, busyTimeout: TimeInterval) throws {
        do {
            try source.backup(toPath: path, busyTimeout: busyTimeout)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        }
    }
}
