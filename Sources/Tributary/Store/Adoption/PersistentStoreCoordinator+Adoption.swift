import Foundation

extension PersistentStoreCoordinator {
    /// Makes the SQLite database at `url`, made by any program, a store in place: its
    /// tables become entities (see ``AdoptionReport``), each foreign key to another adopted
    /// table's `INTEGER PRIMARY KEY` a to-one relationship named after its column (with a
    /// to-many inverse named after the table, its delete rule from the key's `ON DELETE`),
    /// and from then on every write to them, by Tributary or by any other program, is
    /// recorded in history.
    ///
    /// The user's tables are never changed: Tributary adds only its own `_tributary_*`
    /// tables and triggers, in one transaction, and switches the database to WAL (capture
    /// reads transaction boundaries from it). Adopting a store again picks up tables made
    /// since, keeping the store's identity and history; their triggers are installed in the
    /// same transaction that adds them to the model. ``undoAdoption(at:busyTimeout:)`` removes
    /// everything again. Open the store afterwards as any other, without a model.
    ///
    /// ```swift
    /// let report = try PersistentStoreCoordinator.adoptDatabase(at: URL(fileURLWithPath: "app.db"))
    /// print(report.tables.map(\.name))
    /// ```
    public static func adoptDatabase(at url: URL, options: DatabaseAdoption = DatabaseAdoption(), busyTimeout: TimeInterval = 5) throws -> AdoptionReport {
        do {
            return try adoptOnce(at: url, options: options, busyTimeout: busyTimeout)
        } catch is ForeignWritesPending {
            // Adopting again with other programs' writes not yet folded: the store, opened with
            // the model they were logged under, folds them in the write transaction that adopts
            // it again, so none can come between.
            let description = PersistentStoreDescription(url: url)
            description.busyTimeout = busyTimeout
            let store = try PersistentStore.open(description, model: nil)
            defer { store.close() }
            let path = url.standardizedFileURL.path
            do {
                return try store.write { db in try Adoption(db: db, path: path, journalMode: "wal").run(options) }
            } catch let error as SQLiteError {
                throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
            } catch is ForeignWritesPending {
                // Only when the store could not fold them (opened without capture: read-only).
                throw TributaryError(.readOnly, "other programs' writes to the database are not recorded yet, and this process cannot record them", location: path,
                                     hint: "adopt it again as a user who can write the database and its directory")
            }
        }
    }

    private static func adoptOnce(at url: URL, options: DatabaseAdoption, busyTimeout: TimeInterval) throws -> AdoptionReport {
        let path = url.standardizedFileURL.path
        return try withExistingDatabase(path, busyTimeout: busyTimeout) { db in
            // The journal mode changes only once the adoption committed: a refused one leaves
            // the file as it was, header included.
            let mode = try db.scalar("PRAGMA journal_mode")?.stringValue ?? "delete"
            let adoption = Adoption(db: db, path: path, journalMode: mode)
            let report = try db.transaction { try adoption.run(options) }
            if mode != "wal", try db.scalar("PRAGMA journal_mode = WAL")?.stringValue != "wal" {
                _ = try db.transaction { try adoption.undo() }
                throw TributaryError(.io, "the database cannot use a write-ahead log (journal mode \(mode)); nothing was adopted", location: path,
                                     hint: "capture needs WAL: adopt a database on a local file system")
            }
            return report
        }
    }

    /// Removes everything ``adoptDatabase(at:options:busyTimeout:)`` added (Tributary's
    /// tables, with the store's history, and its triggers) and puts the journal mode back,
    /// leaving the user's schema and data as they were. Returns the names of what it removed.
    /// A store made by Tributary (`tributary init`) is refused: its tables are its data.
    public static func undoAdoption(at url: URL, busyTimeout: TimeInterval = 5) throws -> [String] {
        let path = url.standardizedFileURL.path
        let removed = try withExistingDatabase(path, busyTimeout: busyTimeout) { db in
            // The journal mode first: leaving the write-ahead log needs the database to itself,
            // so another process that has it open is found before anything is removed.
            if let mode = try Adoption(db: db, path: path, journalMode: "").journalModeToRestore(), mode != "wal" {
                var now: String?
                do {
                    now = try db.scalar("PRAGMA journal_mode = \(mode)")?.stringValue?.lowercased()
                } catch let error as SQLiteError where error.primaryCode == .busy || error.primaryCode == .locked {
                    now = nil
                }
                guard now == mode else {
                    throw TributaryError(.storeLocked, "another process has the database open (a tributary tail, run or watcher, or another program), "
                                         + "so its journal mode cannot be put back to \(mode)", location: path,
                                         hint: "stop it and undo again; nothing was removed")
                }
            }
            return try db.transaction { try Adoption(db: db, path: path, journalMode: "").undo() }
        }
        try? FileManager.default.removeItem(atPath: RemoteChangePoster.sidecarPath(of: path))
        return removed
    }

    /// Runs `body` on a connection to the existing database at `path`, turning SQLite's
    /// errors about the file into one clear line.
    private static func withExistingDatabase<T>(_ path: String, busyTimeout: TimeInterval, _ body: (Connection) throws -> T) throws -> T {
        try ConnectionOptions.checkBusyTimeout(busyTimeout, place: path)
        if let problem = StoreDatabase.fileProblem(path) { throw problem }
        guard FileManager.default.fileExists(atPath: path) else {
            throw TributaryError(.fileNotFound, "no database at this path", location: path, hint: "give the path of an existing SQLite database; make a new store with tributary init")
        }
        do {
            let db = try Connection(path: path, options: ConnectionOptions(create: false, busyTimeout: busyTimeout))
            try db.execute("SELECT count(*) FROM sqlite_master")
            return try body(db)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        }
    }
}
