import Foundation

/// The connections of one open store: one writer, serialised by a lock, and a
/// pool of readers, so that reads never wait for a write (WAL mode).
final class StoreDatabase: Sendable {
    /// What SQLite opens: a file path or a memdb URI.
    let path: String
    let isInMemory: Bool
    let isReadOnly: Bool
    private let writerLock = NSLock()
    private let writer: Connection?
    let readers: ReaderPool
    let busyTimeout: TimeInterval
    /// What takes part in each write transaction; read and changed under `writerLock` only.
    nonisolated(unsafe) private var participants: [WriteParticipant] = []
    /// What each connection runs once the store's model is known.
    private let temporarySchema = TemporarySchema()

    /// The connections of the database at `path`. A file is put in WAL mode when `usesWAL`
    /// says so (a file that is not to be a store is left as it is).
    init(path: String, isInMemory: Bool, readOnly: Bool, poolSize: Int, busyTimeout: TimeInterval, sqlDebug: SQLDebugLog = .fromEnvironment(),
         usesWAL: (Connection) throws -> Bool = { _ in true }) throws {
        self.path = path
        self.isInMemory = isInMemory
        self.isReadOnly = readOnly
        self.busyTimeout = busyTimeout
        let options = ConnectionOptions(readOnly: false, create: !readOnly, busyTimeout: busyTimeout, isURI: isInMemory, sqlDebug: sqlDebug)
        if readOnly {
            writer = nil
        } else {
            do {
                let connection = try Connection(path: path, options: options)
                try Self.configure(connection, isInMemory: isInMemory, busyTimeout: busyTimeout, usesWAL: usesWAL)
                writer = connection
            } catch let error as SQLiteError {
                throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
            }
        }
        let readerOptions = ConnectionOptions(readOnly: false, create: false, busyTimeout: busyTimeout, isURI: isInMemory, sqlDebug: sqlDebug)
        readers = ReaderPool(maximumSize: poolSize, timeout: busyTimeout) { [temporarySchema] in
            let connection = try Connection(path: path, options: readerOptions)
            try temporarySchema.apply(on: connection)
            try connection.execute("PRAGMA query_only = 1")
            return connection
        }
    }

    private static func configure(_ connection: Connection, isInMemory: Bool, busyTimeout: TimeInterval, usesWAL: (Connection) throws -> Bool) throws {
        do {
            // Reading the schema fails at once on a file that is not a database.
            try connection.execute("SELECT count(*) FROM sqlite_master")
            if !isInMemory, try usesWAL(connection) {
                try connection.execute("PRAGMA journal_mode = WAL")
                try connection.execute("PRAGMA synchronous = NORMAL")
            }
            // The writer's own triggers are TEMP copies; stored ones are for other programs.
            if Connection.canDisableMainTriggersOnly { try connection.disableMainTriggers() }
            connection.waitForLocksInShortSteps()
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: connection.path, timeout: busyTimeout)
        }
    }

    /// Runs `body` in an immediate write transaction on the writer, with every participant
    /// taking its part (``WriteParticipant``): what they keep of the transaction (its history)
    /// commits with it.
    func write<T>(_ body: (Connection) throws -> T) throws -> T {
        try writeTransaction(body).result
    }

    /// ``write(_:)``, also giving the sequence number a participant wrote the transaction
    /// under (its history token; nil when none wrote one).
    func writeTransaction<T>(_ body: (Connection) throws -> T) throws -> (result: T, written: Int64?) {
        guard let writer else { throw TributaryError(.readOnly, "the store is open read-only", location: path, hint: "open it without the read-only option to write") }
        writerLock.lock()
        defer { writerLock.unlock() }
        do {
            let done = try writer.transaction("IMMEDIATE") {
                for participant in participants { try participant.writeDidBegin(on: writer) }
                let result = try body(writer)
                var written: Int64?
                for participant in participants { written = try participant.writeWillCommit(on: writer) ?? written }
                return (result: result, written: written)
            }
            for participant in participants { participant.writeDidCommit(on: writer, written: done.written) }
            return done
        } catch let error as SQLiteError {
            for participant in participants { participant.writeDidRollback(on: writer) }
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        } catch {
            for participant in participants { participant.writeDidRollback(on: writer) }
            throw error
        }
    }

    /// Adds a participant to every later write transaction; `setUp` runs first on the writer,
    /// outside any transaction.
    func addParticipant(_ participant: WriteParticipant, setUp: (Connection) throws -> Void = { _ in }) throws {
        try withWriter { db in
            try setUp(db)
            participants.append(participant)
        }
    }

    /// Makes every connection, open or opened later, run `statements` (TEMP views only: those
    /// through which a store reads its `WITHOUT ROWID` tables). Readers opened before are closed.
    func useTemporarySchema(_ statements: [String]) throws {
        guard !statements.isEmpty else { return }
        temporarySchema.set(statements)
        if writer != nil { try withWriter { db in try temporarySchema.apply(on: db) } }
        readers.discardIdle()
    }

    /// Runs `body` with the writer outside any transaction (for pragmas, backups).
    func withWriter<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let writer else { throw TributaryError(.readOnly, "the store is open read-only", location: path, hint: "open it without the read-only option to write") }
        writerLock.lock()
        defer { writerLock.unlock() }
        do {
            return try body(writer)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        }
    }

    /// Runs `body` in a read transaction on a pooled reader: one consistent snapshot.
    func read<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try readers.checkout()
        defer { readers.checkin(connection) }
        do {
            try connection.execute("BEGIN DEFERRED")
            defer { try? connection.execute("COMMIT") }
            return try body(connection)
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        }
    }

    func close() {
        readers.close()
    }

}

/// The TEMP objects each connection of a store makes when it opens (``StoreDatabase/useTemporarySchema(_:)``).
// @unchecked Sendable: `statements` is guarded by `lock`.
private final class TemporarySchema: @unchecked Sendable {
    private let lock = NSLock()
    private var statements: [String] = []

    func set(_ statements: [String]) {
        lock.withLock { self.statements = statements }
    }

    func apply(on connection: Connection) throws {
        for sql in lock.withLock({ statements }) { try connection.execute(sql) }
    }
}
