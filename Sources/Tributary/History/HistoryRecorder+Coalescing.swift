import CSQLite
import Foundation

/// The slow path: a second change to an object in the same transaction is merged
/// with the first (Core Data coalesces the same way): insert then update is an
/// insert with the final values; update then update keeps the first `before` and
/// the last `after`; insert then delete is nothing; update then delete is a delete
/// with the original values; memberships added and removed net out. The declared key
/// (``RecordedChange/key``) follows: an insert's is its final one, an update's or a
/// delete's the one the object had before the first change.
extension HistoryRecorder {
    /// Merges a row event into the object's earlier change.
    func mergeRow(db: OpaquePointer, op: Int32, capture index: Int, key: Int64) {
        let capture = captures[index]
        var properties: [RecordedChange.Property] = []
        for (column, kind) in capture.columns.enumerated() {
            switch kind {
            case .ignored:
                continue
            case .attribute(let name, let type, let excluded):
                if op == SQLITE_UPDATE && !Self.columnChanged(db, column: column) { continue }
                var property = RecordedChange.Property(name: name, excluded: excluded)
                if !excluded {
                    if op != SQLITE_INSERT { property.before = Self.read(db, column: column, old: true, as: type) }
                    if op != SQLITE_DELETE { property.after = Self.read(db, column: column, old: false, as: type) }
                }
                properties.append(property)
            case .toOne(let name, let destination):
                if op == SQLITE_UPDATE && !Self.columnChanged(db, column: column) { continue }
                var property = RecordedChange.Property(name: name)
                if op != SQLITE_INSERT { property.before = Self.readKey(db, column: column, old: true, destination: destination) }
                if op != SQLITE_DELETE { property.after = Self.readKey(db, column: column, old: false, destination: destination) }
                properties.append(property)
            }
        }
        let type: PersistentHistoryChangeType = op == SQLITE_INSERT ? .insert : op == SQLITE_DELETE ? .delete : .update
        if type == .update && properties.isEmpty { return }
        var change = RecordedChange(type: type, entity: capture.entity, primaryKey: key, properties: properties)
        change.key = declaredKey(db: db, capture: capture, old: op != SQLITE_INSERT)
        record(change, entityIndex: index, keyAfter: op == SQLITE_UPDATE ? declaredKey(db: db, capture: capture, old: false) : [])
    }

    /// A row whose key changed (a replica following its source's key change,
    /// `UPDATE t SET key = 7 WHERE key = 1`): a delete at the old key linked to an insert at
    /// the new one, every value on both, as the fold records another program's key change
    /// (``RecordedChange/movedKey``).
    func captureMove(db: OpaquePointer, capture index: Int, from old: Int64, to new: Int64) {
        let capture = captures[index]
        var before: [RecordedChange.Property] = [], after: [RecordedChange.Property] = []
        for (column, kind) in capture.columns.enumerated() {
            switch kind {
            case .ignored:
                continue
            case .attribute(let name, let type, let excluded):
                before.append(RecordedChange.Property(name: name, before: excluded ? nil : Self.read(db, column: column, old: true, as: type), excluded: excluded))
                after.append(RecordedChange.Property(name: name, after: excluded ? nil : Self.read(db, column: column, old: false, as: type), excluded: excluded))
            case .toOne(let name, let destination):
                before.append(RecordedChange.Property(name: name, before: Self.readKey(db, column: column, old: true, destination: destination)))
                after.append(RecordedChange.Property(name: name, after: Self.readKey(db, column: column, old: false, destination: destination)))
            }
        }
        var delete = RecordedChange(type: .delete, entity: capture.entity, primaryKey: old, properties: before, movedKey: new)
        delete.key = declaredKey(db: db, capture: capture, old: true)
        var insert = RecordedChange(type: .insert, entity: capture.entity, primaryKey: new, properties: after, movedKey: old)
        insert.key = declaredKey(db: db, capture: capture, old: false)
        record(delete, entityIndex: index)
        record(insert, entityIndex: index)
    }

    /// The values of the row's declared key, old or new; empty for an entity without one.
    private func declaredKey(db: OpaquePointer, capture: TableCapture, old: Bool) -> [(name: String, value: AttributeValue)] {
        capture.keySlots.compactMap { i in
            let slot = capture.slots[i]
            guard case .attribute(let name, let type, _) = capture.columns[Int(slot.column)] else { return nil }
            return (name, Self.read(db, column: Int(slot.column), old: old, as: type))
        }
    }

    /// A join-table row inserted or deleted: a membership change on both objects.
    func captureJoin(db: OpaquePointer, op: Int32, join: JoinCapture) {
        guard op == SQLITE_INSERT || op == SQLITE_DELETE else { return }
        let old = op == SQLITE_DELETE
        let src = Self.int64(db, column: 0, old: old)
        let dst = Self.int64(db, column: 1, old: old)
        func membership(_ side: (entity: String, relationship: String, destination: String), _ key: Int64, _ other: Int64) {
            guard let index = captures.firstIndex(where: { $0.entity == side.entity }) else { return }
            let m = RecordedChange.Membership(destination: side.destination, added: old ? [] : [other], removed: old ? [other] : [])
            record(RecordedChange(type: .update, entity: side.entity, primaryKey: key, properties: [RecordedChange.Property(name: side.relationship, membership: m)]), entityIndex: index)
        }
        membership(join.source, src, dst)
        membership(join.destination, dst, src)
    }

    /// Adds a change, merging it with an earlier change to the same object; `keyAfter` is an
    /// update's declared key after it, the key of an insert it merges into.
    func record(_ change: RecordedChange, entityIndex: Int, keyAfter: [(name: String, value: AttributeValue)] = []) {
        let key = ObjectKey(entity: entityIndex, key: change.primaryKey)
        guard let segmentIndex = indexByObject[entity: key.entity, key: key.key],
              let existing = try? decodeSegment(segmentIndex)
        else {
            append(change, key: key)
            return
        }
        var merged = existing
        switch (existing.type, change.type) {
        case (.insert, .update):
            merged.properties = Self.apply(change.properties, onto: existing.properties, keepBefore: false)
            if !keyAfter.isEmpty { merged.key = keyAfter }
        case (.update, .update):
            merged.properties = Self.apply(change.properties, onto: existing.properties, keepBefore: true)
        case (.insert, .delete):
            // Created and deleted within one transaction: nothing happened outside it.
            segments[segmentIndex].live = false
            indexByObject[entity: key.entity, key: key.key] = nil
            return
        case (.update, .delete):
            merged = change
            if !existing.key.isEmpty { merged.key = existing.key }
            let earlier = Dictionary(existing.properties.map { ($0.name, $0.before) }, uniquingKeysWith: { a, _ in a })
            for i in merged.properties.indices where merged.properties[i].membership == nil {
                if let before = earlier[merged.properties[i].name] { merged.properties[i].before = before }
            }
        default:
            // A delete followed by an insert reusing the key: keep both, in order.
            append(change, key: key)
            return
        }
        segments[segmentIndex].live = false
        if merged.type == .update {
            merged.properties.removeAll { property in
                if let membership = property.membership { return membership.added.isEmpty && membership.removed.isEmpty }
                return !property.excluded && property.before == property.after
            }
            if merged.properties.isEmpty {
                indexByObject[entity: key.entity, key: key.key] = nil
                return
            }
        }
        append(merged, key: key)
    }

    private func append(_ change: RecordedChange, key: ObjectKey) {
        let start = body.bytes.count
        HistoryPayload.encodeChange(change, into: &body, names: &names)
        indexByObject[entity: key.entity, key: key.key] = segments.count
        segments.append(Segment(start: start, end: body.bytes.count, live: true, entity: names.intern(change.entity), key: change.primaryKey))
    }

    private func decodeSegment(_ index: Int) throws -> RecordedChange {
        let segment = segments[index]
        var reader = ByteReader(bytes: Array(body.bytes[segment.start..<segment.end]))
        return try HistoryPayload.decodeChange(&reader, names: names.strings)
    }

    /// Merges later property changes into earlier ones: the first `before`, the last `after`,
    /// memberships added and removed netted out.
    static func apply(_ later: [RecordedChange.Property], onto earlier: [RecordedChange.Property], keepBefore: Bool) -> [RecordedChange.Property] {
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
}
