import CSQLite
import Foundation

/// Collects every row change made on a writer connection through SQLite's
/// pre-update hook (so cascades, nullifications and join-table changes are
/// seen whatever the write path), coalesces changes to the same object, and
/// writes them as one history transaction just before the SQL transaction
/// commits: data and history commit or roll back together.
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
        /// Property order for output: model order.
        let order: [String: Int]
    }

    /// A join table's two sides.
    struct JoinCapture {
        /// (entity, relationship, destination) seen from the `src` column's row.
        let source: (entity: String, relationship: String, destination: String)
        /// The same from the `dst` column's row.
        let destination: (entity: String, relationship: String, destination: String)
    }

    private var tables: [String: TableCapture] = [:]
    private var joins: [String: JoinCapture] = [:]
    private var changes: [RecordedChange] = []
    private var indexByObject: [ObjectKey: Int] = [:]
    private(set) var isEnabled = false

    struct ObjectKey: Hashable {
        let entity: String
        let key: Int64
    }

    /// Sets up capture for `schema` on `db`, reading the real column order of each table.
    func install(on db: Connection, schema: StoreSchema) throws {
        tables = [:]
        joins = [:]
        for (name, table) in schema.tables {
            var columns: [TableCapture.Column] = []
            let info = try db.makeStatement("SELECT name FROM pragma_table_info(?) ORDER BY cid")
            try info.bind([.string(name)])
            while try info.step() {
                let column = info.string(at: 0)
                if let attribute = table.entity.attribute(named: column) {
                    columns.append(.attribute(name: column, type: attribute.type, excluded: attribute.isExcludedFromHistory))
                } else if let relationship = table.entity.relationship(named: column) {
                    columns.append(.toOne(name: column, destination: relationship.destinationEntity))
                } else {
                    columns.append(.ignored)
                }
            }
            var order: [String: Int] = [:]
            for (i, property) in table.entity.propertyNames.enumerated() { order[property] = i }
            tables[name] = TableCapture(entity: name, columns: columns, order: order)
            for relationship in table.entity.relationships {
                if case .joinTable(let joinTable, "src", _) = table.storage[relationship.name]! {
                    let destination = schema.tables[relationship.destinationEntity]!.entity
                    joins[joinTable] = JoinCapture(
                        source: (name, relationship.name, destination.name),
                        destination: (destination.name, relationship.inverseName, name))
                }
            }
        }
        isEnabled = true
        sqlite3_preupdate_hook(db.handle, historyPreUpdateHook, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Stops capturing on `db`.
    func uninstall(from db: Connection) {
        sqlite3_preupdate_hook(db.handle, nil, nil)
        isEnabled = false
    }

    var hasChanges: Bool { !changes.isEmpty }

    /// Takes the collected changes (dropping updates that changed nothing) and resets.
    func drain() -> [RecordedChange] {
        defer {
            changes.removeAll(keepingCapacity: true)
            indexByObject.removeAll(keepingCapacity: true)
        }
        return changes.compactMap { change in
            var change = change
            if change.isCancelled { return nil }
            if change.type == .update {
                change.properties.removeAll { property in
                    if let membership = property.membership { return membership.added.isEmpty && membership.removed.isEmpty }
                    return !property.excluded && property.before == property.after
                }
                if change.properties.isEmpty { return nil }
            }
            if let order = tables[change.entity]?.order {
                change.properties.sort { (order[$0.name] ?? .max) < (order[$1.name] ?? .max) }
            }
            return change
        }
    }

    /// Forgets collected changes (on rollback).
    func discard() {
        changes.removeAll(keepingCapacity: true)
        indexByObject.removeAll(keepingCapacity: true)
    }

    // MARK: Capture

    fileprivate func capture(db: OpaquePointer, op: Int32, table: String, oldKey: Int64, newKey: Int64) {
        if let capture = tables[table] {
            captureRow(db: db, op: op, capture: capture, oldKey: oldKey, newKey: newKey)
        } else if let join = joins[table] {
            captureJoin(db: db, op: op, join: join)
        }
    }

    private func captureRow(db: OpaquePointer, op: Int32, capture: TableCapture, oldKey: Int64, newKey: Int64) {
        var properties: [RecordedChange.Property] = []
        properties.reserveCapacity(capture.columns.count)
        for (i, column) in capture.columns.enumerated() {
            switch column {
            case .ignored:
                continue
            case .attribute(let name, let type, let excluded):
                var property = RecordedChange.Property(name: name, excluded: excluded)
                if op != SQLITE_INSERT { property.before = excluded ? nil : Self.read(db, column: i, old: true, as: type) }
                if op != SQLITE_DELETE { property.after = excluded ? nil : Self.read(db, column: i, old: false, as: type) }
                if excluded, op == SQLITE_UPDATE, !Self.columnChanged(db, column: i) { continue }
                properties.append(property)
            case .toOne(let name, let destination):
                var property = RecordedChange.Property(name: name)
                if op != SQLITE_INSERT { property.before = Self.readKey(db, column: i, old: true, destination: destination) }
                if op != SQLITE_DELETE { property.after = Self.readKey(db, column: i, old: false, destination: destination) }
                properties.append(property)
            }
        }
        let type: PersistentHistoryChangeType = op == SQLITE_INSERT ? .insert : op == SQLITE_DELETE ? .delete : .update
        let key = op == SQLITE_INSERT ? newKey : oldKey
        record(RecordedChange(type: type, entity: capture.entity, primaryKey: key, properties: properties))
    }

    private func captureJoin(db: OpaquePointer, op: Int32, join: JoinCapture) {
        guard op == SQLITE_INSERT || op == SQLITE_DELETE else { return }
        let old = op == SQLITE_DELETE
        let src = Self.int64(db, column: 0, old: old)
        let dst = Self.int64(db, column: 1, old: old)
        func membership(_ side: (entity: String, relationship: String, destination: String), _ key: Int64, _ other: Int64) -> RecordedChange {
            let m = RecordedChange.Membership(destination: side.destination, added: old ? [] : [other], removed: old ? [other] : [])
            return RecordedChange(type: .update, entity: side.entity, primaryKey: key, properties: [RecordedChange.Property(name: side.relationship, membership: m)])
        }
        record(membership(join.source, src, dst))
        record(membership(join.destination, dst, src))
    }

    /// Adds a change, coalescing it with an earlier change to the same object.
    private func record(_ change: RecordedChange) {
        let key = ObjectKey(entity: change.entity, key: change.primaryKey)
        guard let index = indexByObject[key] else {
            indexByObject[key] = changes.count
            changes.append(change)
            return
        }
        var existing = changes[index]
        switch (existing.type, change.type) {
        case (.insert, .update):
            existing.properties = Self.apply(change.properties, onto: existing.properties, keepBefore: false)
        case (.update, .update):
            existing.properties = Self.apply(change.properties, onto: existing.properties, keepBefore: true)
        case (.insert, .delete):
            // Created and deleted within one transaction: nothing happened outside it.
            changes[index].isCancelled = true
            indexByObject[key] = nil
            return
        case (.update, .delete):
            var merged = change
            let earlier = Dictionary(existing.properties.map { ($0.name, $0.before) }, uniquingKeysWith: { a, _ in a })
            for i in merged.properties.indices where merged.properties[i].membership == nil {
                if let before = earlier[merged.properties[i].name] { merged.properties[i].before = before }
            }
            existing = merged
        default:
            // A delete followed by an insert reusing the key: keep both, in order.
            indexByObject[key] = changes.count
            changes.append(change)
            return
        }
        changes[index] = existing
    }

    /// Merges later property changes into earlier ones: the first `before`, the last `after`,
    /// memberships added and removed netted out.
    private static func apply(_ later: [RecordedChange.Property], onto earlier: [RecordedChange.Property], keepBefore: Bool) -> [RecordedChange.Property] {
        var result = earlier
        for property in later {
            if let i = result.firstIndex(where: { $0.name == property.name }) {
                if let membership = property.membership, var existing = result[i].membership {
                    for key in membership.added {
                        if let r = existing.removed.firstIndex(of: key) { existing.removed.remove(at: r) } else if !existing.added.contains(key) { existing.added.append(key) }
                    }
                    for key in membership.removed {
                        if let a = existing.added.firstIndex(of: key) { existing.added.remove(at: a) } else if !existing.removed.contains(key) { existing.removed.append(key) }
                    }
                    result[i].membership = existing
                } else {
                    result[i].after = property.after
                    if !keepBefore { result[i].before = nil }
                }
            } else {
                var added = property
                if !keepBefore { added.before = nil }
                result.append(added)
            }
        }
        return result
    }

    // MARK: Reading pre-update values

    private static func value(_ db: OpaquePointer, column: Int, old: Bool) -> OpaquePointer? {
        var value: OpaquePointer?
        let rc = old ? sqlite3_preupdate_old(db, Int32(column), &value) : sqlite3_preupdate_new(db, Int32(column), &value)
        return rc == SQLITE_OK ? value : nil
    }

    private static func columnChanged(_ db: OpaquePointer, column: Int) -> Bool {
        guard let old = value(db, column: column, old: true), let new = value(db, column: column, old: false) else { return true }
        let type = sqlite3_value_type(old)
        guard type == sqlite3_value_type(new) else { return true }
        let n = sqlite3_value_bytes(old)
        guard n == sqlite3_value_bytes(new) else { return true }
        if type == SQLITE_BLOB || type == SQLITE_TEXT {
            return memcmp(sqlite3_value_blob(old), sqlite3_value_blob(new), Int(n)) != 0
        }
        return sqlite3_value_double(old) != sqlite3_value_double(new) || sqlite3_value_int64(old) != sqlite3_value_int64(new)
    }

    private static func int64(_ db: OpaquePointer, column: Int, old: Bool) -> Int64 {
        guard let v = value(db, column: column, old: old) else { return 0 }
        return sqlite3_value_int64(v)
    }

    private static func readKey(_ db: OpaquePointer, column: Int, old: Bool, destination: String) -> AttributeValue {
        guard let v = value(db, column: column, old: old), sqlite3_value_type(v) != SQLITE_NULL else { return .null }
        return .objectID(ObjectID(storeID: placeholderStore, entityName: destination, primaryKey: sqlite3_value_int64(v)))
    }

    /// Object IDs in recorded values carry the store's ID only once decoded; the payload keeps entity and key.
    static let placeholderStore = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    private static func read(_ db: OpaquePointer, column: Int, old: Bool, as type: AttributeType) -> AttributeValue {
        guard let v = value(db, column: column, old: old) else { return .null }
        let storage = sqlite3_value_type(v)
        if storage == SQLITE_NULL { return .null }
        switch type {
        case .string:
            guard let text = sqlite3_value_text(v) else { return .string("") }
            return .string(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(v))), as: UTF8.self))
        case .integer: return .integer(sqlite3_value_int64(v))
        case .double: return .double(sqlite3_value_double(v))
        case .bool: return .bool(sqlite3_value_int64(v) != 0)
        case .date: return .date(Date(timeIntervalSince1970: sqlite3_value_double(v)))
        case .uuid:
            guard let text = sqlite3_value_text(v) else { return .null }
            let s = String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(v))), as: UTF8.self)
            return UUID(uuidString: s).map { .uuid($0) } ?? .string(s)
        case .binary:
            let n = Int(sqlite3_value_bytes(v))
            guard n > 0, let bytes = sqlite3_value_blob(v) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: n))
        }
    }
}

/// The C callback: forwards to the recorder passed as context.
private func historyPreUpdateHook(context: UnsafeMutableRawPointer?, db: OpaquePointer?, op: Int32, database: UnsafePointer<CChar>?, table: UnsafePointer<CChar>?, oldKey: sqlite3_int64, newKey: sqlite3_int64) {
    guard let context, let db, let table else { return }
    let name = String(cString: table)
    if name.hasPrefix("_tributary_") || name.hasPrefix("sqlite_") { return }
    let recorder = Unmanaged<HistoryRecorder>.fromOpaque(context).takeUnretainedValue()
    recorder.capture(db: db, op: op, table: name, oldKey: oldKey, newKey: newKey)
}
