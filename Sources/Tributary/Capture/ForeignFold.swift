import Foundation

/// Rebuilds the changes of other programs' transactions from the capture log's rows.
///
/// The log holds only what the rows no longer do (old values, deleted rows), so the
/// fold starts from each touched row as it is now and walks the log backwards: before
/// an insert the row was absent; before an update of a column it held the logged old
/// value; before a delete it held the logged columns; before a key change it lived at
/// the old key. That gives every touched object's state at each transaction's start
/// and end, and the transaction's change to it is the difference: absent to present
/// an insert with every value, present to absent a delete with every value (a
/// tombstone), else an update of the columns that differ. Changes made and undone in
/// one transaction net out, as Core Data coalesces them. The walk also follows each row
/// through key changes: an object that ends under another key than it started is a
/// delete at its first key linked to an insert at its last one (``RecordedChange/movedKey``),
/// however many keys it passed through. A change of an entity with a declared key
/// (``EntityDescription/declaredKey``) carries that key's values from the row's state at the
/// transaction's end for an insert, at its start for an update or a delete.
struct ForeignFold {
    /// A range of log rows, `(after, through]`, that one transaction wrote.
    struct Group: Equatable {
        let after: Int64
        let through: Int64
        /// Whether the range is one transaction exactly; false when the write-ahead log
        /// that held the boundaries was reset before any Tributary process read it.
        let exact: Bool
    }

    /// A row's identity in the walk: table, key (and a join row's second key).
    struct RowKey: Hashable {
        let table: Int
        let key: AttributeValue
        var second: AttributeValue = .null
    }

    let tables: [Int: CapturedTable]
    let schema: StoreSchema
    /// The tables whose capture triggers were found gone before this fold (another program
    /// dropped them, or the table, and made it again, as a migration tool's rebuild does):
    /// their rows as they are now may hold writes no trigger logged, so the walk takes no
    /// value from them (``FoldValue/gone``: "changed; value not recorded"), only from the log.
    var unwatched: Set<Int> = []
    /// Join table name → (source entity, relationship, destination) seen from `src`, then from `dst`.
    private let joins: [String: (source: (String, String, String), destination: (String, String, String))]

    init(tables: [CapturedTable], schema: StoreSchema) {
        self.tables = Dictionary(uniqueKeysWithValues: tables.map { ($0.id, $0) })
        self.schema = schema
        var joins: [String: (source: (String, String, String), destination: (String, String, String))] = [:]
        for table in schema.tables.values {
            for relationship in table.entity.relationships {
                guard case .joinTable(let join, "src", _) = table.storage[relationship.name] else { continue }
                joins[join] = ((table.name, relationship.name, relationship.destinationEntity),
                               (relationship.destinationEntity, relationship.inverseName, table.name))
            }
        }
        self.joins = joins
    }

    /// One group's changes, and the values in them that were no keys.
    struct Folded {
        var changes: [RecordedChange]
        /// Values written into to-ones' columns that are not keys, recorded as nil.
        var nonKeys: [NonKey]
    }

    /// Each group's changes, in order (an empty list for a group that changed nothing), made
    /// into what the caller keeps of them by `keep` as each group is folded (newest first: the
    /// walk goes backwards), and the tables whose log rows could not be read into changes
    /// (``locate(_:on:)``): their rows are left out, for the caller to say so. The groups must
    /// follow each other. A group's log rows, spans and changes are dropped once `keep` has
    /// them, so a large fold holds what `keep` makes (an encoded payload) and the walk's
    /// states rather than every log row and every touched row's states at each group's ends.
    func changes<Kept>(in groups: [Group], on db: Connection, keep: (Folded) throws -> Kept) throws -> (folded: [Kept], lost: [String]) {
        guard let first = groups.first, let last = groups.last else { return ([], []) }
        let (names, lost) = try locate(try CaptureLogRow.tables(on: db, after: first.after, through: last.through), on: db)
        var walk = StateWalk(fold: self, names: names, db: db)
        var newestFirst: [Kept] = []
        newestFirst.reserveCapacity(groups.count)
        for group in groups.reversed() {
            var nonKeys: [NonKey] = []
            let rows = try CaptureLogRow.read(on: db, after: group.after, through: group.through)
            let group = try walk.span(rows[...]).flatMap { changes($0, nonKeys: &nonKeys) }
            newestFirst.append(try keep(Folded(changes: group.coalesced().deletesFirst(), nonKeys: nonKeys)))
        }
        return (newestFirst.reversed(), lost)
    }

    /// The tables log rows were logged for (by ID), as the database has them now: the name of
    /// each one whose rows can be read (another program may have renamed it: its capture
    /// triggers follow it, so their table is its name now), and the names of those whose
    /// cannot: dropped before the fold (with the rows that held the values), or no longer in
    /// the model (adopted again without them).
    func locate(_ ids: Set<Int>, on db: Connection) throws -> (names: [Int: String], lost: [String]) {
        var names: [Int: String] = [:], lost: [String] = []
        for id in ids.sorted() {
            guard let table = tables[id], table.kind == .join ? joins[table.name] != nil : schema.tables[table.name] != nil else {
                lost.append(try tables[id]?.name ?? CaptureInstaller.recordedName(of: id, on: db) ?? "table \(id)")
                continue
            }
            if let name = try CaptureInstaller.currentName(of: table, on: db) { names[id] = name } else { lost.append(table.name) }
        }
        return (names, lost)
    }

    // MARK: Changes

    /// The changes of one touched row: the difference of its states, or, where a key change
    /// moved the object that started or ended here, the start's delete (linked to the key the
    /// object moved to) and the end's insert (linked to the key it moved from).
    private func changes(_ span: StateWalk.Span, nonKeys: inout [NonKey]) -> [RecordedChange] {
        guard span.movedFrom != nil || span.movedTo != nil, let table = tables[span.key.table], table.kind == .entity else {
            return change(span.key, from: span.start, to: span.end, nonKeys: &nonKeys)
        }
        var changes: [RecordedChange] = []
        if var gone = entityChange(table, key: span.key.key, from: span.start, to: nil, nonKeys: &nonKeys) {
            gone.movedKey = span.movedTo?.key.integerValue
            changes.append(gone)
        }
        if var came = entityChange(table, key: span.key.key, from: nil, to: span.end, nonKeys: &nonKeys) {
            came.movedKey = span.movedFrom?.key.integerValue
            changes.append(came)
        }
        return changes
    }

    private func change(_ key: RowKey, from start: [AttributeValue]?, to end: [AttributeValue]?, nonKeys: inout [NonKey]) -> [RecordedChange] {
        guard let table = tables[key.table] else { return [] }
        switch table.kind {
        case .entity:
            return entityChange(table, key: key.key, from: start, to: end, nonKeys: &nonKeys).map { [$0] } ?? []
        case .join:
            guard (start == nil) != (end == nil), let join = joins[table.name], let src = key.key.integerValue, let dst = key.second.integerValue else { return [] }
            let added = end != nil
            func membership(_ side: (String, String, String), _ object: Int64, _ other: Int64) -> RecordedChange {
                let m = RecordedChange.Membership(destination: side.2, added: added ? [other] : [], removed: added ? [] : [other])
                return RecordedChange(type: .update, entity: side.0, primaryKey: object, properties: [RecordedChange.Property(name: side.1, membership: m)])
            }
            return [membership(join.source, src, dst), membership(join.destination, dst, src)]
        }
    }

    /// A value another program stored, as history records it for an attribute of `type`:
    /// text that is not valid UTF-8 as its bytes exactly in a binary attribute, and elsewhere
    /// decoded (``FoldValue``); else by the rule fetches and the pre-update hook read stored
    /// values by (``AttributeValue/read(as:)``).
    static func recorded(_ value: AttributeValue, as type: AttributeType) -> AttributeValue {
        if let bytes = FoldValue.undecodableBytes(value) { return type == .binary ? .data(bytes) : FoldValue.decoded(value) }
        return value.read(as: type)
    }

    /// The change of an entity's row from `start` to `end`. A to-one's column is the other
    /// object's ID; a value there that is no key (text another program wrote) is nil, and
    /// where written (in `end`) it is added to `nonKeys`.
    private func entityChange(_ table: CapturedTable, key: AttributeValue, from start: [AttributeValue]?, to end: [AttributeValue]?,
                              nonKeys: inout [NonKey]) -> RecordedChange? {
        guard let entity = schema.tables[table.name], let primaryKey = key.integerValue else { return nil }
        let type: PersistentHistoryChangeType
        switch (start, end) {
        case (nil, nil): return nil
        case (nil, _): type = .insert
        case (_, nil): type = .delete
        default: type = .update
        }
        var properties: [RecordedChange.Property] = []
        for (j, name) in table.columns.enumerated() {
            let before = start.map { j < $0.count ? $0[j] : .null }
            let after = end.map { j < $0.count ? $0[j] : .null }
            if type == .update && before == after { continue }
            var property = RecordedChange.Property(name: name)
            if before == FoldValue.gone || after == FoldValue.gone {
                // Dropped by another program before the fold read the row: changed, its value unknown.
                property.excluded = true
            } else if let attribute = entity.entity.attribute(named: name) {
                if attribute.isExcludedFromHistory {
                    property.excluded = true
                } else {
                    property.before = before.map { Self.recorded($0, as: attribute.type) }
                    property.after = after.map { Self.recorded($0, as: attribute.type) }
                }
            } else if let relationship = entity.entity.relationship(named: name) {
                property.before = before.map { NonKey.object($0, in: relationship) }
                property.after = after.map { NonKey.object($0, in: relationship) }
                if let value = after, NonKey.object(value, in: relationship).isNull, !value.isNull {
                    nonKeys.append(NonKey(entity: table.name, primaryKey: primaryKey, column: name, value: FoldValue.decoded(value), destination: relationship.destinationEntity))
                }
            }
            properties.append(property)
        }
        if type == .update && properties.isEmpty { return nil }
        var change = RecordedChange(type: type, entity: table.name, primaryKey: primaryKey, properties: properties)
        if let state = start ?? end, !entity.entity.declaredKey.isEmpty {
            change.key = entity.entity.declaredKey.compactMap { name in
                guard let j = table.columns.firstIndex(of: name), let attribute = entity.entity.attribute(named: name) else { return nil }
                let value = j < state.count && state[j] != FoldValue.gone ? state[j] : .null
                return (name, Self.recorded(value, as: attribute.type))
            }
        }
        return change
    }
}

extension Array where Element == RecordedChange {
    /// A transaction that moved a key lists its deletes first (in order), so that one applying
    /// it in order (a replica) frees each key, and each unique value, before an insert takes it.
    func deletesFirst() -> [RecordedChange] {
        guard contains(where: { $0.movedKey != nil }) else { return self }
        return filter { $0.type == .delete } + filter { $0.type != .delete }
    }

    /// One change per object: memberships join the object's insert or update.
    func coalesced() -> [RecordedChange] {
        var result: [RecordedChange] = []
        var index: [String: Int] = [:]
        for change in self {
            let id = "\(change.entity)/\(change.primaryKey)"
            guard let i = index[id], result[i].type != .delete, change.type == .update else {
                if change.type != .delete || index[id] == nil { index[id] = result.count }
                result.append(change)
                continue
            }
            for property in change.properties {
                if let membership = property.membership, let p = result[i].properties.firstIndex(where: { $0.name == property.name && $0.membership != nil }) {
                    result[i].properties[p].membership?.added += membership.added
                    result[i].properties[p].membership?.removed += membership.removed
                } else {
                    result[i].properties.append(property)
                }
            }
        }
        return result
    }
}
