import CSQLite
import Foundation

/// Records the writes of programs that do not use Tributary (the `sqlite3` shell,
/// Python, any SQLite client) in the store's history, one history transaction per
/// SQL transaction, in commit order with Tributary's own.
///
/// - Triggers (``CaptureTriggers``) log each row event of another program into
///   ``CaptureLog``, in the same SQL transaction. Tributary's writer runs no
///   main-schema trigger (``Connection/disableMainTriggers()``), so its own writes,
///   recorded by the pre-update hook, neither pay for the triggers nor appear twice.
/// - Where one transaction's log rows end is read from the write-ahead log: each commit
///   frame ends a transaction, and the log b-tree's largest rowid as of that frame
///   (``WALScanner``, ``LogMaximum``) is its last row. A read transaction held open
///   (a pin, as Litestream holds one; ``CapturePins``, one process per store) keeps
///   frames not yet folded from being checkpointed away and the log restarted.
/// - Every write transaction of the store's writer first folds what other programs
///   committed before it (``ForeignFold``), so tokens follow commit order; readers of
///   history fold first too (``PersistentStore/foldForeignWrites()``).
///
/// When the boundaries are gone (no Tributary process held a pin while other programs
/// wrote, checkpointed and restarted the log), the changes are still all recorded, in
/// order, in transactions whose source says "foreign, boundaries unknown".
// @unchecked Sendable: every method runs under the writer's lock (``WriteParticipant``,
// ``StoreDatabase/withWriter(_:)`` for the maintenance), or before it is registered.
final class ForeignCapture: WriteParticipant, @unchecked Sendable {
    /// Source rows of the history transactions the fold writes: process ID and name.
    static let foreignSource: (Int32, String) = (-1, "foreign")
    static let unknownBoundariesSource: (Int32, String) = (-2, "foreign, boundaries unknown")
    /// A range whose boundaries are unknown is cut into transactions of at most this many rows.
    static let unknownGroupSize: Int64 = 1_000
    /// How long the pin may stay behind the writes before it is moved on.
    static let pinInterval: TimeInterval = 0.05
    /// The log size above which the holder re-pins with a checkpoint between, so that the
    /// log restarts: under the 1,000 pages past which the other processes' SQLite checkpoints.
    static let restartSize: Int64 = 3 << 20

    /// The captured tables, and the fold that reads their log rows (made again when they change).
    private(set) var tables: [CapturedTable] = [] {
        didSet { fold = ForeignFold(tables: tables, schema: schema) }
    }
    private var fold: ForeignFold
    private let schema: StoreSchema
    private let pins: CapturePins
    private var scanner = WALScanner()
    /// Commits read from the log but not folded yet.
    private var commits: [WALScanner.Commit] = []
    private var lastDataVersion: Int64 = -1
    /// Whether this process has held a pin without a gap since its last fold.
    private var pinnedSinceFold = false
    private var folded = false
    private var lastRestart = Date.distantPast
    private var lastClaim = Date.distantPast
    /// The database's page size, read at open.
    private var pageSize: Int?
    private var maintenance: CaptureMaintenance?
    /// The log's root page under the schemas (by cookie) this process saw last, newest last:
    /// at its last scans, and before its own transaction's change of the schema.
    private var logRoots: [(cookie: UInt32, root: UInt32)] = []
    private var lastMaintainedFrames: UInt32 = 0
    private var check = CaptureCheck()

    private init(schema: StoreSchema, pins: CapturePins) {
        self.schema = schema
        self.pins = pins
        self.fold = ForeignFold(tables: [], schema: schema)
    }

    /// Installs capture on the store's writer, folds what was logged before, and registers
    /// it with every later write transaction.
    static func enable(on database: StoreDatabase, schema: StoreSchema) throws -> ForeignCapture {
        let capture = ForeignCapture(schema: schema, pins: try CapturePins(path: database.path, busyTimeout: database.busyTimeout))
        try database.addParticipant(capture) { db in
            try db.transaction {
                try capture.rememberLogSchema(on: db)
                try capture.makeLog(on: db)
                capture.pageSize = try db.scalar("PRAGMA page_size")?.integerValue.map { Int($0) }
                capture.tables = try CaptureInstaller.recorded(on: db, schema: schema)
                capture.fold.unwatched = try CaptureInstaller.unwatched(capture.tables, on: db)
                try capture.foldPending(on: db, recordingPosition: true)
                capture.tables = try capture.check.run(on: db, schema: schema)
                try db.execute("UPDATE _tributary_metadata SET value = '\(HistorySchema.formatVersion)' WHERE key = 'historyFormat'")
                // The first pin is taken before this commit, so no commit falls between the
                // position recorded and the pin.
                try capture.claimPins(on: db)
            }
            capture.pinnedSinceFold = capture.pins.isPinned
        }
        capture.maintenance = CaptureMaintenance { [weak capture, weak database] in
            (try? database?.withWriter { db in capture?.maintain(on: db) }) ?? false
        }
        return capture
    }

    /// Takes the pin holder's part when no other process has it (at most twice a second)
    /// and, in a transaction with nothing left to fold, the first pin. The holder leaves
    /// checkpoints to the log restart: its pin keeps SQLite's own checkpoint after each
    /// commit from completing, so past its threshold it would run (and sync) after every
    /// commit; the other processes keep SQLite's.
    private func claimPins(on db: Connection) throws {
        guard !pins.isHolder, Date().timeIntervalSince(lastClaim) >= 0.5 else { return }
        lastClaim = Date()
        guard pins.claim() else { return }
        try db.execute("PRAGMA wal_autocheckpoint = 0")
        if db.isInTransaction { try pins.move() }
    }

    /// Whether other programs committed log rows not folded yet, or changed the schema
    /// (``CaptureCheck``): read outside any
    /// transaction (two seeks), so that a reader of history takes the write lock only when
    /// there is something to fold, not after every commit of another Tributary process.
    /// (`PRAGMA data_version` cannot tell: outside a transaction it is only as fresh as
    /// the connection's last read.)
    func hasPending(on db: Connection) throws -> Bool {
        if try check.isDue(on: db) { return true }
        return try CaptureLog.hasUnfoldedRows(on: db)
    }

    // MARK: WriteParticipant

    func writeDidBegin(on db: Connection) throws {
        let version = try db.scalar("PRAGMA data_version")?.integerValue ?? -1
        guard version != lastDataVersion else { return }
        // The fold writes no schema, so the schema version read once holds for both checks.
        let due = try check.isDue(on: db)
        // Before folding: rows another model's triggers logged would be read with this one's columns.
        if due {
            try Self.checkModel(schema.model, on: db)
            // Another process may have installed the triggers again (other columns) and folded what its old ones logged.
            tables = try CaptureInstaller.recorded(on: db, schema: schema)
            try rememberLogSchema(on: db)
            try makeLog(on: db)
            fold.unwatched = try CaptureInstaller.unwatched(tables, on: db)
        }
        try foldPending(on: db)
        if due { tables = try check.run(on: db, schema: schema) }
        lastDataVersion = version
    }

    func writeWillCommit(on db: Connection) throws -> Int64? {
        try claimPins(on: db)
        guard pins.isHolder, folded || !pins.isPinned || Date().timeIntervalSince(pins.lastMove) >= Self.pinInterval else { return nil }
        do {
            try pins.move()
        } catch {
            // The transaction must not fail for its pin: without one, a later fold that finds
            // the log restarted records the changes between as of unknown boundaries.
            pins.drop()
            pinnedSinceFold = false
        }
        return nil
    }

    func writeDidCommit(on db: Connection, written: Int64?) {
        pins.releaseOld()
        if folded { pinnedSinceFold = pins.isPinned }
        restartLogIfLarge(on: db)
        folded = false
    }

    func writeDidRollback(on db: Connection) {
        pins.releaseOld()
        lastDataVersion = -1
        folded = false
    }

    /// Work between transactions, run by ``CaptureMaintenance`` with the writer idle: the
    /// holder whose own writes stopped still restarts the log that other processes grow,
    /// and another process takes the holder's part when it exits. Returns whether the log
    /// changed since the last call (the maintenance then comes back sooner).
    func maintain(on db: Connection) -> Bool {
        var frames: UInt32 = 0
        let changed = tributary_wal_frames(db.handle, &frames) == SQLITE_OK && frames != lastMaintainedFrames
        lastMaintainedFrames = frames
        if !pins.isHolder { try? claimPins(on: db) }
        guard pins.isHolder else { return changed }
        if !pins.isPinned { repin(on: db, checkpoint: false) }
        restartLogIfLarge(on: db)
        return changed
    }

    /// A pin taken while frames wait to be checkpointed keeps the log from ever restarting,
    /// so under a steady writer it would grow without bound. Past ``restartSize`` (at most
    /// five times a second) the holder re-pins with a checkpoint between.
    private func restartLogIfLarge(on db: Connection) {
        // The frames in use (the WAL index's count), not the file's size: a restarted log
        // keeps its file and is written over.
        var frames: UInt32 = 0
        guard pins.isHolder, Date().timeIntervalSince(lastRestart) >= 0.2, tributary_wal_frames(db.handle, &frames) == SQLITE_OK,
              Int64(frames) * Int64(24 + (pageSize ?? 4096)) > Self.restartSize else { return }
        lastRestart = Date()
        repin(on: db, checkpoint: true)
    }

    /// In a write transaction of its own (nothing can commit meanwhile) that finds nothing
    /// left to fold, drops the pins, checkpoints when asked (a checkpoint then copies every
    /// frame into the database, another program's reader permitting), and pins again: on a
    /// log wholly copied, so the next writer starts it over. The transaction is rolled
    /// back, so it writes no frame that would stop the restart. When another program holds
    /// the write lock past the busy timeout, the pin held stays where it is (dropped, it let a
    /// checkpoint copy frames not read yet and the log restart over them), and the next
    /// upkeep tries again.
    private func repin(on db: Connection, checkpoint: Bool) {
        do {
            try db.execute("BEGIN IMMEDIATE")
        } catch {
            return
        }
        do {
            defer { try? db.execute("ROLLBACK") }
            let newest = try db.scalar("SELECT max(seq) FROM \(CaptureLog.table)")?.integerValue ?? 0
            guard newest <= (try CaptureState.read(on: db)).foldedSeq else { return }
            pins.drop()
            if checkpoint { try pins.checkpoint() }
            try pins.move()
        } catch {
            pins.drop()
            pinnedSinceFold = false
        }
    }

    /// Refuses to go on when another process gave the store another model since this one
    /// opened it (`tributary adopt` ran again, or a migration): its capture triggers are that
    /// model's, and this process would fold their rows with its own columns and install its
    /// own triggers over them, losing what the new ones capture.
    static func checkModel(_ model: ManagedObjectModel, on db: Connection) throws {
        guard let stored = try StoreMetadata.cachedModel(on: db), stored.versionHash != model.versionHash else { return }
        throw TributaryError(.incompatibleModel, "another process changed the store's model since this one opened it (model \(model.versionHash) → \(stored.versionHash))",
                             location: db.path, hint: "open the store again (tributary adopt ran again, or another process migrated it)")
    }

    /// Notes the log's root under the schema as this transaction sees it (before it changes
    /// it, ``makeLog(on:)``; and at each scan), for ``scanCommits(on:)`` to read the commits
    /// made under it. A few are kept: commits under older schemas are read by then.
    private func rememberLogSchema(on db: Connection) throws {
        guard try db.hasTable(CaptureLog.table) else { return }
        let now = try logSchema(on: db)
        guard logRoots.last.map({ $0 != now }) ?? true else { return }
        logRoots.append(now)
        if logRoots.count > 8 { logRoots.removeFirst() }
    }

    /// Makes the log when it is missing; when another program dropped it, records a gap.
    private func makeLog(on db: Connection) throws {
        guard try CaptureLog.create(on: db, schema: schema) else { return }
        try CaptureCheck.recordGap(schema.tables.keys.sorted(), "writes by other programs since token \(try CaptureCheck.since(on: db)) may be missing: "
                                   + "another program dropped Tributary's capture log (made again; their writes failed while it was missing)", on: db)
    }

    // MARK: Folding

    /// Folds every log row other programs committed into history transactions, on the
    /// writer inside its write transaction.
    func foldPending(on db: Connection, recordingPosition: Bool = false) throws {
        let state = try CaptureState.read(on: db)
        let newest = try db.scalar("SELECT max(seq) FROM \(CaptureLog.table)")?.integerValue ?? 0
        guard newest > state.foldedSeq else {
            if recordingPosition { try recordPosition(state, on: db) }
            return
        }
        let groups = try boundaries(state: state, through: newest, on: db)
        let indexed = try ObjectTimelineIndex.exists(on: db)
        // Each group encoded as the walk reaches it, so that only the payloads wait for the
        // walk's end (the transactions are written oldest first, for their tokens).
        let (results, lost) = try fold.changes(in: groups, on: db) { try Encoded($0, indexed: indexed) }
        var sourceIDs: [Bool: Int64] = [:]
        for (group, result) in zip(groups, results) {
            if let row = result.row {
                let (processID, processName) = group.exact ? Self.foreignSource : Self.unknownBoundariesSource
                let source = HistorySource(author: nil, contextName: nil, processID: processID, processName: processName)
                let id = try sourceIDs[group.exact] ?? HistoryRecorder.sourceID(source, on: db)
                sourceIDs[group.exact] = id
                _ = try HistoryRecorder.insertTransaction(row.from(source), sourceID: id, on: db)
            }
            if !result.nonKeys.isEmpty { try ForeignFold.NonKey.recordGap(result.nonKeys, on: db) }
        }
        try Self.recordLost(lost, on: db)
        try markFolded(through: newest, on: db)
    }

    /// Says which tables' logged writes were left out of the fold (``ForeignFold/locate(_:on:)``):
    /// a capture gap after the changes folded with them.
    private static func recordLost(_ lost: [String], on db: Connection) throws {
        guard !lost.isEmpty else { return }
        let one = lost.count == 1
        try CaptureCheck.recordGap(lost, "writes by other programs to \(lost.joined(separator: ", ")) were not recorded: \(one ? "the table was" : "the tables were") "
                                   + "dropped, or left the model, before Tributary read \(one ? "its" : "their") log rows", on: db)
    }

    /// Folds the log rows this transaction's own statements wrote with the stored triggers on
    /// (``Connection/withMainTriggers(_:)``: a `WITHOUT ROWID` table's writes): every row past
    /// the folded position, since what other programs committed before was folded when the
    /// transaction began. Returns their changes, for the transaction's own history.
    func foldOwnWrites(on db: Connection) throws -> [RecordedChange] {
        let state = try CaptureState.read(on: db)
        let newest = try db.scalar("SELECT max(seq) FROM \(CaptureLog.table)")?.integerValue ?? 0
        guard newest > state.foldedSeq else { return [] }
        let group = ForeignFold.Group(after: state.foldedSeq, through: newest, exact: true)
        let (results, lost) = try fold.changes(in: [group], on: db) { $0 }
        let result = results.first
        if let nonKeys = result?.nonKeys, !nonKeys.isEmpty { try ForeignFold.NonKey.recordGap(nonKeys, on: db) }
        try Self.recordLost(lost, on: db)
        try markFolded(through: newest, on: db)
        return result?.changes ?? []
    }

    /// Drops the log rows through `newest`, keeping its number (a watermark row, so the log's
    /// rowids go on from it), and records the position.
    private func markFolded(through newest: Int64, on db: Connection) throws {
        try db.execute("DELETE FROM \(CaptureLog.table) WHERE seq <= ?", [.integer(newest)])
        try db.execute("INSERT INTO \(CaptureLog.table) (seq, t) VALUES (?, 0)", [.integer(newest)])
        let salts = WALScanner.salts(walReader(db))
        try CaptureState(salts: salts, walFrame: scanner.frame, foldedSeq: newest).write(on: db)
        commits.removeAll { $0.maxSeq <= newest }
        folded = true
    }

    /// Writes where the log has been read to when nothing was pending (at open, with the
    /// first pin taken in the same transaction): the next fold then knows its generation.
    private func recordPosition(_ state: CaptureState, on db: Connection) throws {
        let read = walReader(db)
        try scanCommits(on: db)
        commits.removeAll { $0.maxSeq <= state.foldedSeq }
        try CaptureState(salts: WALScanner.salts(read), walFrame: scanner.frame, foldedSeq: state.foldedSeq).write(on: db)
    }

    /// The transactions in `(state.foldedSeq, newest]`: exact where the write-ahead log
    /// still holds their commit frames, else cut blindly and marked unknown.
    private func boundaries(state: CaptureState, through newest: Int64, on db: Connection) throws -> [ForeignFold.Group] {
        var groups: [ForeignFold.Group] = []
        var lower = state.foldedSeq
        let read = walReader(db)
        let header = WALScanner.salts(read)
        let sameGeneration = header != nil && state.salts.map { $0 == header! } == true
        try scanCommits(on: db)
        if !sameGeneration && !pinnedSinceFold {
            // The frames since the last fold may be gone: what the database file holds was
            // committed before every frame still in the log, and its boundaries are lost.
            var inFile = LogMaximum.largestRowID(root: try logRoot(on: db), page: try filePage(db)) ?? lower
            // Another process's checkpoint may be copying frames into the file meanwhile (it
            // runs beside a writer): a read in the middle of it can end inside a transaction.
            // The range of unknown boundaries then takes in the commit that holds that point
            // (one read inside the log's first commit cannot be told from the state before it).
            if let holder = zip(commits, commits.dropFirst()).first(where: { $0.maxSeq < inFile && inFile < $1.maxSeq })?.1 { inFile = holder.maxSeq }
            groups += try Self.blind(after: lower, through: min(inFile, newest), on: db)
            lower = max(lower, min(inFile, newest))
        }
        for commit in commits where commit.maxSeq > lower && lower < newest {
            let through = min(commit.maxSeq, newest)
            if commit.exact {
                groups.append(ForeignFold.Group(after: lower, through: through, exact: true))
            } else {
                groups += try Self.blind(after: lower, through: through, on: db)
            }
            lower = through
        }
        return try groups + Self.blind(after: lower, through: newest, on: db)
    }

    /// Reads the log's commit frames not read yet into ``commits``. Each is read at the log's
    /// root under the schema it was made in (its page 1's cookie): today's, or the one this
    /// process saw at its last scan, which an uncommitted change of this transaction's own
    /// does not replace (``rememberLogSchema(on:)``), or else the one that commit's own
    /// schema pages give (``SchemaRoot``): the log's root page may have been elsewhere then
    /// (another program ran `VACUUM`, or dropped a table of an auto-vacuumed database), and
    /// the page at today's root held another table's rows. A commit whose schema pages do
    /// not give it is not read (``WALScanner``: the next one read is not exact).
    private func scanCommits(on db: Connection) throws {
        try rememberLogSchema(on: db)
        let file = try filePage(db)
        let roots = Dictionary(logRoots, uniquingKeysWith: { _, newer in newer })
        var header = [UInt8](repeating: 0, count: 48)
        let index = header.withUnsafeMutableBufferPointer { tributary_wal_index_header(db.handle, $0.baseAddress) } == SQLITE_OK ? WALScanner.IndexHeader(header) : nil
        var read: [UInt32: UInt32?] = [:]   // roots read from commits' own schema pages (or not found), by cookie
        commits += scanner.scan(walReader(db), index: index) { page in
            guard let first = page(1) ?? file(1), first.count >= 44 else { return nil }
            let cookie = first.bigEndian32(40)
            if roots[cookie] == nil, read[cookie] == nil { read[cookie] = SchemaRoot.rootPage(ofTable: CaptureLog.table, page: { page($0) ?? file($0) }) }
            guard let root = roots[cookie] ?? read[cookie] ?? nil else { return nil }
            return LogMaximum.largestRowID(root: root, page: { page($0) ?? file($0) })
        }
    }

    /// The schema cookie and the log's root page, as this transaction sees them.
    private func logSchema(on db: Connection) throws -> (cookie: UInt32, root: UInt32) {
        (UInt32(truncatingIfNeeded: try CaptureCheck.schemaVersion(on: db)), try logRoot(on: db))
    }

    // MARK: Pages

    private func logRoot(on db: Connection) throws -> UInt32 {
        UInt32(clamping: try db.scalar("SELECT rootpage FROM sqlite_master WHERE name = '\(CaptureLog.table)'")?.integerValue ?? 0)
    }

    private func walReader(_ db: Connection) -> WALScanner.Read {
        { offset, count in Self.read(db, journal: true, offset: offset, count: count) }
    }

    private func filePage(_ db: Connection) throws -> (UInt32) -> [UInt8]? {
        let size = Int(try db.scalar("PRAGMA page_size")?.integerValue ?? 4096)
        return { number in number == 0 ? nil : Self.read(db, journal: false, offset: Int64(number - 1) * Int64(size), count: size) }
    }

    private static func read(_ db: Connection, journal: Bool, offset: Int64, count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        let rc = bytes.withUnsafeMutableBytes { tributary_read_file(db.handle, journal ? 1 : 0, $0.baseAddress, Int32(count), offset) }
        return rc == SQLITE_OK ? bytes : nil
    }
}
