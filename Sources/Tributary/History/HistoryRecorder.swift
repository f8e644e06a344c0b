import CSQLite
import Foundation

/// Collects every row change made on a writer connection through SQLite's
/// pre-update hook (so cascades, nullifications and join-table changes are
/// seen whatever the write path) and writes them as one history transaction
/// just before the SQL transaction commits: data and history commit or roll
/// back together.
///
/// The common case — each object changed once in a transaction — is encoded
/// straight from SQLite's values (or, for batch inserts, from the values bound:
/// ``HistoryRecorder+BoundInserts``) through a scratch buffer into the payload
/// body; a large body is compressed in chunks meanwhile (``HistoryChunkCompressor``).
/// An object changed a second time is decoded, merged (``HistoryRecorder+Coalescing``)
/// and re-encoded.
// @unchecked Sendable: used only by the writer connection's owner, under the writer lock.
final class HistoryRecorder: @unchecked Sendable {
    /// How one table's columns map to properties.
    struct TableCapture {
        enum Column {
            case ignored
            case attribute(name: String, type: AttributeType, excluded: Bool)
            case toOne(name: String, destination: String)
        }
        let entity: String
        let columns: [Column]
        /// The table's name as UTF-8 with a terminating NUL, to check cached pointers.
        let cName: [CChar]
        /// The captured columns as plain values, for the hot loop.
        let slots: [Slot]
        /// The declared key's attributes (``EntityDescription/declaredKey``), in key order, as
        /// indexes into ``slots``; empty for the tables of nearly every entity.
        var keySlots: [Int] = []
    }

    /// A captured column: where it is and how to write it.
    struct Slot {
        let column: Int32
        let isToOne: Bool
        let type: AttributeType
        let excluded: Bool
        /// Its index among the table's data columns (``StoreSchema/Table/dataColumns``): where a
        /// batch insert keeps the value it binds; -1 when it is not one.
        let dataIndex: Int
        /// Whether a bound insert reads its value from the row rather than from the value bound:
        /// SQLite computes it (a derived attribute's default, which a batch insert does not
        /// bind), or the column may store the text bound as a number (a string attribute on a
        /// column of numeric affinity, as an adopted `DATE` column is).
        let readsRow: Bool
    }

    /// A join table's two sides: (entity, relationship, destination) seen from the `src` row and from the `dst` row.
    struct JoinCapture {
        let source: (entity: String, relationship: String, destination: String)
        let destination: (entity: String, relationship: String, destination: String)
        let cName: [CChar]
    }

    enum Target {
        case table(Int)
        case join(Int)
        case none
    }

    struct SourceKey: Hashable {
        let author: String?
        let contextName: String?
    }

    /// Source rows already known, by author and context (this process's).
    var sourceIDs: [SourceKey: Int64] = [:]

    struct ObjectKey {
        let entity: Int
        let key: Int64
    }

    /// One encoded change in `body`.
    struct Segment {
        var start: Int
        var end: Int
        var live: Bool
        /// The entity's index in `names`.
        var entity: Int
        /// The object's primary key.
        var key: Int64
    }

    private(set) var captures: [TableCapture] = []
    private(set) var joins: [JoinCapture] = []
    private var captureByName: [String: Int] = [:]
    private var joinByName: [String: Int] = [:]
    /// Table-name pointers SQLite passed before, resolved (checked with strcmp on every hit).
    private var pointerCache: [UnsafeRawPointer: (Target, [CChar])] = [:]
    /// The last table resolved, checked first: rows of one table usually come in runs.
    @exclusivity(unchecked) private var lastTable: UnsafeRawPointer?
    @exclusivity(unchecked) private var lastTarget = Target.none
    /// A copy of the last table's name (owned, freed on replacement).
    private var lastName: UnsafeMutablePointer<CChar>?
    private(set) var isEnabled = false
    /// Whether the hook records nothing: while statements run with the stored triggers on,
    /// whose capture log the transaction folds into its history instead (``append(_:)``).
    @exclusivity(unchecked) var isPaused = false
    /// Whether the transaction ran statements with the stored triggers on, whose log it has
    /// not folded yet.
    @exclusivity(unchecked) var hasTriggeredWrites = false
    /// Whether the store keeps the object timeline index (``ObjectTimelineIndex``), read at install.
    private(set) var writesObjectIndex = false
    /// The metadata of the write transaction in hand, and where its token is marked
    /// (``prepare(_:marking:)``; reset when it ends).
    var inHand = TransactionInHand()

    // The transaction being recorded. Unchecked exclusivity: the recorder is used by one
    // thread at a time (the writer's), and these are touched for every row written.
    var names = NameTable()
    @exclusivity(unchecked) var body = ByteWriter()
    @exclusivity(unchecked) var segments: [Segment] = []
    @exclusivity(unchecked) var indexByObject = ObjectIndex()
    /// Compresses the body's first chunks while the transaction goes on.
    private let chunks = HistoryChunkCompressor()
    /// Bytes of `body` handed to `chunks`.
    @exclusivity(unchecked) private var submittedBytes = 0
    /// Where one row is encoded before it joins `body`.
    @exclusivity(unchecked) private var scratch = RowWriter()
    /// The values a batch insert is binding for its next row, while its statement steps
    /// (``recordingBoundInsert``).
    @exclusivity(unchecked) var boundInsert = BoundInsert()
    /// Whether batch inserts may record from bound values (off only in tests comparing the two ways).
    var boundInserts = true
    /// Per capture, each captured column with its property and destination names' indexes in `names` (filled on first use in a transaction).
    @exclusivity(unchecked) private var plans: [ContiguousArray<PlannedSlot>] = []
    /// Per capture, its declared key's planned slots (``TableCapture/keySlots``; filled with `plans`).
    @exclusivity(unchecked) var keyPlans: [ContiguousArray<PlannedSlot>] = []
    @exclusivity(unchecked) private var entityNameIDs: [Int] = []

    /// A captured column ready for the hot loop: the slot and its names in this transaction.
    struct PlannedSlot {
        let slot: Slot
        let name: Int
        let destination: Int
        var column: Int32 { slot.column }
        var isToOne: Bool { slot.isToOne }
        var excluded: Bool { slot.excluded }
        var type: AttributeType { slot.type }
        var dataIndex: Int { slot.dataIndex }
        var readsRow: Bool { slot.readsRow }
    }

    deinit {
        free(lastName)
        scratch.deallocate()
    }

    /// Sets up capture for `schema` on `db`, reading the real column order of each table.
    func install(on db: Connection, schema: StoreSchema) throws {
        writesObjectIndex = try ObjectTimelineIndex.exists(on: db)
        captures = []
        joins = []
        captureByName = [:]
        joinByName = [:]
        pointerCache = [:]
        forgetLastTable()
        for name in schema.tables.keys.sorted() {
            let table = schema.tables[name]!
            var columns: [TableCapture.Column] = []
            var keepsText: Set<String> = []
            let info = try db.makeStatement("SELECT name, type FROM pragma_table_info(?, 'main') ORDER BY cid")
            try info.bind([.string(name)])
            while try info.step() {
                let column = info.string(at: 0)
                if ColumnAffinity(declared: info.string(at: 1)).keepsText { keepsText.insert(column) }
                if let attribute = table.entity.attribute(named: column) {
                    columns.append(.attribute(name: column, type: attribute.type, excluded: attribute.isExcludedFromHistory))
                } else if let relationship = table.entity.relationship(named: column) {
                    columns.append(.toOne(name: column, destination: relationship.destinationEntity))
                } else {
                    columns.append(.ignored)
                }
            }
            captureByName[name] = captures.count
            let slots = columns.enumerated().compactMap { column, kind -> Slot? in
                switch kind {
                case .ignored:
                    return nil
                case .attribute(let name, let type, let excluded):
                    let dataIndex = table.columnIndex[name] ?? -1
                    let computed = dataIndex >= 0 && dataIndex < table.attributes.count && !table.attributes[dataIndex].isBoundByInserts
                    let convertsText = type == .string && !keepsText.contains(name)
                    return Slot(column: Int32(column), isToOne: false, type: type, excluded: excluded, dataIndex: dataIndex, readsRow: computed || convertsText)
                case .toOne(let name, _):
                    return Slot(column: Int32(column), isToOne: true, type: .integer, excluded: false, dataIndex: table.columnIndex[name] ?? -1, readsRow: false)
                }
            }
            var capture = TableCapture(entity: name, columns: columns, cName: Array(name.utf8CString), slots: slots)
            capture.keySlots = table.entity.declaredKey.compactMap { key in
                slots.firstIndex { if case .attribute(key, _, _) = columns[Int($0.column)] { true } else { false } }
            }
            captures.append(capture)
            for relationship in table.entity.relationships {
                if case .joinTable(let joinTable, "src", _) = table.storage[relationship.name]! {
                    joinByName[joinTable] = joins.count
                    joins.append(JoinCapture(source: (name, relationship.name, relationship.destinationEntity),
                                             destination: (relationship.destinationEntity, relationship.inverseName, name),
                                             cName: Array(joinTable.utf8CString)))
                }
            }
        }
        resetTransaction()
        sourceIDs = [:]
        isEnabled = true
        sqlite3_preupdate_hook(db.handle, historyPreUpdateHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Forgets the transaction's changes on rollback, and the source rows it learned: a
    /// rolled-back transaction takes the rows it added with it (an import recording
    /// history in parts adds one, then rolls back at a bad line).
    func discard() {
        resetTransaction()
        sourceIDs = [:]
    }

    private func resetTransaction() {
        hasTriggeredWrites = false
        chunks.discard()
        submittedBytes = 0
        names = NameTable()
        body.bytes.removeAll(keepingCapacity: true)
        segments.removeAll(keepingCapacity: true)
        indexByObject.removeAll()
        plans = captures.map { _ in [] }
        keyPlans = plans
        entityNameIDs = Array(repeating: -1, count: captures.count)
    }

    /// The stored payload of the transaction's live changes, their count and entities; nil when none.
    func takePayload() throws -> (payload: [UInt8], count: Int, entities: [String], objects: ObjectTimelineIndex.Entries?)? {
        defer { resetTransaction() }
        var count = 0
        var entities: [String] = []
        var seen = Set<Int>()
        var lastEntity = -1
        var allLive = true
        var objects: ObjectTimelineIndex.Entries? = writesObjectIndex ? ObjectTimelineIndex.Entries() : nil
        for segment in segments {
            guard segment.live else { allLive = false; continue }
            count += 1
            // Changes of one entity come in runs: hash only where the entity changes.
            if segment.entity != lastEntity {
                lastEntity = segment.entity
                if seen.insert(segment.entity).inserted { entities.append(names.strings[segment.entity]) }
            }
            objects?.add(entity: segment.entity, key: segment.key)
        }
        guard count > 0 else { return nil }
        objects?.names = names.strings
        if allLive && chunks.isActive {
            let frames = try chunks.frames()
            let payload = try body.bytes.withUnsafeBytes { bytes in
                try HistoryPayload.finish(frames: frames, tail: UnsafeRawBufferPointer(rebasing: bytes[submittedBytes...]), count: count, names: names)
            }
            return (payload, count, entities, objects)
        }
        if allLive { return (try HistoryPayload.finish(body: body.bytes, count: count, names: names), count, entities, objects) }
        var live: [UInt8] = []
        live.reserveCapacity(body.bytes.count)
        for segment in segments where segment.live { live.append(contentsOf: body.bytes[segment.start..<segment.end]) }
        return (try HistoryPayload.finish(body: live, count: count, names: names), count, entities, objects)
    }

    // MARK: Dispatch

    fileprivate func target(for table: UnsafePointer<CChar>) -> Target {
        let raw = UnsafeRawPointer(table)
        if raw == lastTable, let lastName, strcmp(lastName, table) == 0 { return lastTarget }
        let resolved: Target
        if let (cached, name) = pointerCache[raw], name.withUnsafeBufferPointer({ strcmp($0.baseAddress!, table) }) == 0 {
            resolved = cached
        } else {
            let name = String(cString: table)
            resolved = captureByName[name].map { .table($0) } ?? joinByName[name].map { .join($0) } ?? .none
            pointerCache[raw] = (resolved, Array(name.utf8CString))
        }
        forgetLastTable()
        lastTable = raw
        lastTarget = resolved
        lastName = strdup(table)
        return resolved
    }

    private func forgetLastTable() {
        free(lastName)
        lastName = nil
        lastTable = nil
    }

    fileprivate func capture(db: OpaquePointer, op: Int32, table: UnsafePointer<CChar>, oldKey: Int64, newKey: Int64) {
        if isPaused { return }
        switch target(for: table) {
        case .table(let i):
            if op == SQLITE_UPDATE, oldKey != newKey {
                captureMove(db: db, capture: i, from: oldKey, to: newKey)
                return
            }
            let key = op == SQLITE_INSERT ? newKey : oldKey
            if indexByObject[entity: i, key: key] != nil {
                mergeRow(db: db, op: op, capture: i, key: key)
            } else if op == SQLITE_INSERT, i == boundInsert.capture, let values = boundInsert.values, encodeBoundInsert(db: db, capture: i, key: key, values: values) {
                boundInsert.values = nil
            } else {
                encodeRow(db: db, op: op, capture: i, key: key)
            }
        case .join(let i):
            captureJoin(db: db, op: op, join: joins[i])
        case .none:
            return
        }
    }

    // MARK: Fast path: encode straight from SQLite's values

    /// Interns a table's entity, property and destination names once per transaction.
    private func internNames(of index: Int) {
        let capture = captures[index]
        entityNameIDs[index] = names.intern(capture.entity)
        var plan = ContiguousArray<PlannedSlot>()
        for slot in capture.slots {
            var name = -1, destination = -1
            switch capture.columns[Int(slot.column)] {
            case .ignored: break
            case .attribute(let n, _, _): name = names.intern(n)
            case .toOne(let n, let d):
                name = names.intern(n)
                destination = names.intern(d)
            }
            plan.append(PlannedSlot(slot: slot, name: name, destination: destination))
        }
        plans[index] = plan
        // Written only for a declared key: the others keep the empty plan without a copy.
        if !capture.keySlots.isEmpty { keyPlans[index] = ContiguousArray(capture.keySlots.map { plan[$0] }) }
    }

    private func encodeRow(db: OpaquePointer, op: Int32, capture index: Int, key: Int64) {
        let (entityID, slots) = plan(of: index)
        // Updates record only the columns that changed; an update that changed none is not a change.
        var changed: [Bool] = []
        var propertyCount = slots.count
        if op == SQLITE_UPDATE {
            changed = slots.map { Self.columnChanged(db, column: Int($0.column)) }
            propertyCount = changed.reduce(0) { $1 ? $0 + 1 : $0 }
            if propertyCount == 0 { return }
        }
        var out = keyPlans[index].isEmpty ? beginRow(op: op, entity: entityID, key: key, propertyCount: propertyCount)
            : beginKeyedRow(db: db, op: op, entity: entityID, key: key, propertyCount: propertyCount, keySlots: keyPlans[index])
        var flags: HistoryPayload.Flags = []
        if op != SQLITE_INSERT { flags.insert(.before) }
        if op != SQLITE_DELETE { flags.insert(.after) }
        let writeOld = op != SQLITE_INSERT
        let writeNew = op != SQLITE_DELETE
        for i in 0..<slots.count {
            if op == SQLITE_UPDATE && !changed[i] { continue }
            let slot = slots[i]
            let column = Int(slot.column)
            // Name and flags (11 bytes at most), then two values of at most 21 bytes each (tag and two
            // varints); text reserves its own length plus room for the next value's fixed part.
            out.reserve(64)
            out.varint(UInt64(slot.name))
            if slot.excluded {
                out.byte(HistoryPayload.Flags.excluded.rawValue)
                continue
            }
            out.byte(flags.rawValue)
            if slot.isToOne {
                if writeOld { Self.writeKey(db, column: column, old: true, destination: slot.destination, into: &out) }
                if writeNew { Self.writeKey(db, column: column, old: false, destination: slot.destination, into: &out) }
            } else {
                if writeOld { Self.writeValue(db, column: column, old: true, type: slot.type, into: &out) }
                if writeNew { Self.writeValue(db, column: column, old: false, type: slot.type, into: &out) }
            }
        }
        endRow(out, capture: index, entity: entityID, key: key)
    }

    /// Starts a row in the scratch buffer: the row goes there through plain pointer stores,
    /// then into the body in one copy (``endRow``).
    @inline(__always)
    func beginRow(op: Int32, entity: Int, key: Int64, propertyCount: Int) -> RowWriter {
        var out = scratch
        out.removeAll()
        out.reserve(32)
        out.byte(op == SQLITE_INSERT ? 0 : op == SQLITE_UPDATE ? 1 : 2)
        out.varint(UInt64(entity))
        out.signed(key)
        out.varint(UInt64(propertyCount))
        return out
    }

    /// Starts the row of an entity with a declared key: as ``beginRow``, with the key's values
    /// (new for an insert, old for an update or a delete) before the property count.
    private func beginKeyedRow(db: OpaquePointer, op: Int32, entity: Int, key: Int64, propertyCount: Int, keySlots: ContiguousArray<PlannedSlot>) -> RowWriter {
        var out = scratch
        out.removeAll()
        out.reserve(32)
        out.byte((op == SQLITE_INSERT ? 0 : op == SQLITE_UPDATE ? 1 : 2) | HistoryPayload.keyFlag)
        out.varint(UInt64(entity))
        out.signed(key)
        out.varint(UInt64(keySlots.count))
        for slot in keySlots {
            out.reserve(64)
            out.varint(UInt64(slot.name))
            Self.writeValue(db, column: Int(slot.column), old: op != SQLITE_INSERT, type: slot.type, into: &out)
        }
        out.varint(UInt64(propertyCount))
        return out
    }

    @inline(__always)
    func endRow(_ out: RowWriter, capture index: Int, entity: Int, key: Int64) {
        let start = body.bytes.count
        body.bytes.append(contentsOf: out.written)
        scratch = out
        indexByObject[entity: index, key: key] = segments.count
        segments.append(Segment(start: start, end: start + out.count, live: true, entity: entity, key: key))
        if body.bytes.count - submittedBytes >= HistoryChunkCompressor.chunkSize {
            chunks.submit(body.bytes[submittedBytes...])
            submittedBytes = body.bytes.count
        }
    }

    /// Gives back the scratch buffer of a row not written (it may have grown).
    func abandonRow(_ out: RowWriter) { scratch = out }

    /// The names and slots of a table in this transaction, interned on first use.
    @inline(__always)
    func plan(of index: Int) -> (entity: Int, slots: ContiguousArray<PlannedSlot>) {
        if entityNameIDs[index] < 0 { internNames(of: index) }
        return (entityNameIDs[index], plans[index])
    }

    /// Writes one value; room for its fixed-size part is reserved by the caller. A value
    /// stored in the class its type keeps is written in place; any other (a UUID, bytes, or
    /// what another program stored: text in an integer column, 7 in a bool one, a blob in a
    /// text one) as fetches read it (``read(_:column:old:as:)``).
    static func writeValue(_ db: OpaquePointer, column: Int, old: Bool, type: AttributeType, into out: inout RowWriter) {
        typealias Tag = HistoryPayload.ValueTag
        guard let v = value(db, column: column, old: old), case let stored = sqlite3_value_type(v), stored != SQLITE_NULL else {
            out.byte(Tag.null.rawValue)
            return
        }
        switch (type, stored) {
        case (.string, SQLITE_TEXT):
            out.byte(Tag.text.rawValue)
            // The bytes in place: sqlite3_value_text would copy each value to add a terminating NUL.
            let text = sqlite3_value_blob(v)
            let n = Int(sqlite3_value_bytes(v))
            out.varint(UInt64(n))
            if n > 0, let text {
                out.reserve(n + 24)
                out.bytes(text, count: n)
            }
        case (.integer, SQLITE_INTEGER):
            out.byte(Tag.integer.rawValue)
            out.signed(sqlite3_value_int64(v))
        case (.double, SQLITE_FLOAT):
            out.byte(Tag.double.rawValue)
            out.double(sqlite3_value_double(v))
        case (.bool, SQLITE_INTEGER) where (0...1).contains(sqlite3_value_int64(v)):
            out.byte(sqlite3_value_int64(v) != 0 ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case (.date, SQLITE_FLOAT), (.date, SQLITE_INTEGER):
            out.byte(Tag.date.rawValue)
            out.double(sqlite3_value_double(v))
        default:
            writeRare(read(db, column: column, old: old, as: type), into: &out)
        }
    }

    /// Writes a UUID or bytes value through ``ByteWriter`` (rare types; they hold no object
    /// IDs, so no names are interned), with room for the next value's fixed part after it.
    static func writeRare(_ value: AttributeValue, into out: inout RowWriter) {
        var encoded = ByteWriter()
        encoded.value(value) { _ in 0 }
        out.reserve(encoded.bytes.count + 24)
        encoded.bytes.withUnsafeBytes { out.bytes($0.baseAddress!, count: $0.count) }
    }

    private static func writeKey(_ db: OpaquePointer, column: Int, old: Bool, destination: Int, into out: inout RowWriter) {
        guard let v = value(db, column: column, old: old), sqlite3_value_type(v) != SQLITE_NULL else {
            out.byte(HistoryPayload.ValueTag.null.rawValue)
            return
        }
        out.byte(HistoryPayload.ValueTag.objectID.rawValue)
        out.varint(UInt64(destination))
        out.signed(sqlite3_value_int64(v))
    }

    // MARK: Reading pre-update values

    static func value(_ db: OpaquePointer, column: Int, old: Bool) -> OpaquePointer? {
        var value: OpaquePointer?
        let rc = old ? sqlite3_preupdate_old(db, Int32(column), &value) : sqlite3_preupdate_new(db, Int32(column), &value)
        return rc == SQLITE_OK ? value : nil
    }

    static func columnChanged(_ db: OpaquePointer, column: Int) -> Bool {
        guard let old = value(db, column: column, old: true), let new = value(db, column: column, old: false) else { return true }
        let type = sqlite3_value_type(old)
        guard type == sqlite3_value_type(new) else { return true }
        if type == SQLITE_NULL { return false }
        // Bytes of text and blobs only: asking a number for its bytes converts it to text, and
        // SQLite then reports a REAL column's integral value (kept as an integer) as TEXT.
        guard type == SQLITE_BLOB || type == SQLITE_TEXT else {
            return sqlite3_value_double(old) != sqlite3_value_double(new) || sqlite3_value_int64(old) != sqlite3_value_int64(new)
        }
        let n = sqlite3_value_bytes(old)
        guard n == sqlite3_value_bytes(new) else { return true }
        // SQLite gives NULL for the bytes of an empty string or blob: two empty values are equal.
        guard n > 0, let a = sqlite3_value_blob(old), let b = sqlite3_value_blob(new) else { return false }
        return memcmp(a, b, Int(n)) != 0
    }

    static func int64(_ db: OpaquePointer, column: Int, old: Bool) -> Int64 {
        guard let v = value(db, column: column, old: old) else { return 0 }
        return sqlite3_value_int64(v)
    }

    static func readKey(_ db: OpaquePointer, column: Int, old: Bool, destination: String) -> AttributeValue {
        guard let v = value(db, column: column, old: old), sqlite3_value_type(v) != SQLITE_NULL else { return .null }
        return .objectID(ObjectID(storeID: placeholderStore, entityName: destination, primaryKey: sqlite3_value_int64(v)))
    }

    /// Object IDs in recorded values carry the store's ID only once decoded; the payload keeps entity and key.
    static let placeholderStore = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// A value as fetches read it (``StoredValue/read(as:)``): as stored where its type does
    /// not keep that class, and text in a binary attribute as its bytes exactly.
    static func read(_ db: OpaquePointer, column: Int, old: Bool, as type: AttributeType) -> AttributeValue {
        guard let v = value(db, column: column, old: old) else { return .null }
        return StoredValue(value: v).read(as: type)
    }
}

/// The C callback: forwards to the recorder passed as context.
private func historyPreUpdateHook(context: UnsafeMutableRawPointer?, db: OpaquePointer?, op: Int32, database: UnsafePointer<CChar>?, table: UnsafePointer<CChar>?, oldKey: sqlite3_int64, newKey: sqlite3_int64) {
    guard let context, let db, let table else { return }
    // The recorder outlives its hook (it is removed before the recorder goes): no retain per row.
    Unmanaged<HistoryRecorder>.fromOpaque(context)._withUnsafeGuaranteedRef { $0.capture(db: db, op: op, table: table, oldKey: oldKey, newKey: newKey) }
}
