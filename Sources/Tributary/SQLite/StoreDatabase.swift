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
    /// Records history on the writer; enabled when the store tracks history.
    let recorder = HistoryRecorder()
    /// Tells listeners of the same store about each commit (the `remoteChangeNotificationPost` option).
    let poster: RemoteChangePoster?
    /// What takes part in each write transaction; read and changed under `writerLock` only.
    nonisolated(unsafe) private var participants: [WriteParticipant] = []

    init(path: String, isInMemory: Bool, readOnly: Bool, poolSize: Int, busyTimeout: TimeInterval, sqlDebug: SQLDebugLog = .fromEnvironment(), postsRemoteChanges: Bool = false) throws {
        self.path = path
        self.isInMemory = isInMemory
        self.isReadOnly = readOnly
        self.busyTimeout = busyTimeout
        self.poster = postsRemoteChanges && !readOnly ? RemoteChangePoster(databasePath: path, isInMemory: isInMemory) : nil
        let options = ConnectionOptions(readOnly: false, create: !readOnly, busyTimeout: busyTimeout, isURI: isInMemory, sqlDebug: sqlDebug)
        if readOnly {
            writer = nil
        } else {
            do {
                let connection = try Connection(path: path, options: options)
                try Self.configure(connection, isInMemory: isInMemory, busyTimeout: busyTimeout)
                writer = connection
            } catch let error as SQLiteError {
                throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
            }
        }
        let readerOptions = ConnectionOptions(readOnly: false, create: false, busyTimeout: busyTimeout, isURI: isInMemory, sqlDebug: sqlDebug)
        readers = ReaderPool(maximumSize: poolSize, timeout: busyTimeout) {
            let connection = try Connection(path: path, options: readerOptions)
            try connection.execute("PRAGMA query_only = 1")
            return connection
        }
    }

    private static func configure(_ connection: Connection, isInMemory: Bool, busyTimeout: TimeInterval) throws {
        do {
            // Reading the schema fails at once on a file that is not a database.
            try connection.execute("SELECT count(*) FROM sqlite_master")
            if !isInMemory {
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

    /// Runs `body` in an immediate write transaction on the writer; when history is
    /// on, the changes it made are recorded in the same transaction, under `metadata`.
    /// After the commit, listeners of the store are told (when the store posts remote changes).
    func write<T>(_ metadata: TransactionMetadata = TransactionMetadata(), _ body: (Connection) throws -> T) throws -> T {
        try writeReturningToken(metadata, body).0
    }

    /// ``write(_:_:)``, also giving the history token the transaction recorded (nil when none).
    /// With `marking`, the token is marked there before the transaction commits (so no
    /// reader sees the transaction unmarked) and unmarked if the commit fails.
    func writeReturningToken<T>(_ metadata: TransactionMetadata = TransactionMetadata(), marking: LocalCommits? = nil, _ body: (Connection) throws -> T) throws -> (T, Int64?) {
        let (result, token) = try writeTransaction(metadata, marking: marking, body)
        poster?.didCommit(token: token)
        return (result, token)
    }

    /// The transaction, and the history token it recorded (nil when it recorded none).
    private func writeTransaction<T>(_ metadata: TransactionMetadata, marking: LocalCommits?, _ body: (Connection) throws -> T) throws -> (T, Int64?) {
        guard let writer else { throw TributaryError(.readOnly, "the store is open read-only", location: path, hint: "open it without the read-only option to write") }
        writerLock.lock()
        defer { writerLock.unlock() }
        var marked: Int64?
        do {
            let done = try writer.transaction("IMMEDIATE") {
                for participant in participants { try participant.writeDidBegin(on: writer) }
                let result = try body(writer)
                let token = recorder.isEnabled ? try recorder.commit(on: writer, metadata: metadata) : nil
                if let token, let marking {
                    marking.mark(token)
                    marked = token
                }
                for participant in participants { try participant.writeWillCommit(on: writer) }
                return (result, token)
            }
            for participant in participants { participant.writeDidEnd(on: writer, committed: true) }
            return done
        } catch let error as SQLiteError {
            rolledBack(marked, marking)
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        } catch {
            rolledBack(marked, marking)
            throw error
        }
    }

    private func rolledBack(_ marked: Int64?, _ marking: LocalCommits?) {
        recorder.discard()
        if let marked { marking?.unmark(marked) }
        if let writer { for participant in participants { participant.writeDidEnd(on: writer, committed: false) } }
    }

    /// Adds a participant to every later write transaction; `setUp` runs first on the writer,
    /// outside any transaction.
    func addParticipant(_ participant: WriteParticipant, setUp: (Connection) throws -> Void = { _ in }) throws {
        try withWriter { db in
            try setUp(db)
            participants.append(participant)
        }
    }

    /// Starts recording history for `schema` on the writer.
    func enableHistory(schema: StoreSchema) throws {
        try withWriter { db in try recorder.install(on: db, schema: schema) }
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
        poster?.close()
    }

}
