import Foundation

/// The numbered steps of a save to the store (``ManagedObjectContext/save()``), each run
/// inside the save's one write transaction. Each object's outcome is kept on it
/// (`saveOutcome`) until the save is applied.
extension ManagedObjectContext {
    /// An update to write: the object, the slots to write, its version before, its values after.
    typealias PlannedWrite = (object: ManagedObject, mask: UInt64, version: Int64, values: [AttributeValue])

    /// What optimistic locking decided.
    struct CheckedVersions {
        var writes: [PlannedWrite] = []
        /// Updated objects whose rows are gone (deleted by another writer).
        var gone: [ManagedObject] = []
        /// Objects whose relationship changes the merge policy dropped (rollback).
        var droppedLinks: Set<ObjectIdentifier> = []
    }

    /// 1. Optimistic locking: compares each updated (and, under `.error`, deleted) object's
    /// version with its row's version now, and resolves a difference by the merge policy;
    /// throws every conflict at once under `.error`.
    func checkVersions(updated: [ManagedObject], deleted: [ManagedObject], policy: MergePolicy, on db: Connection, store: PersistentStore) throws -> CheckedVersions {
        var checked = CheckedVersions()
        var conflicts: [MergeConflict] = []
        let versions = try currentVersions(of: updated + deleted, on: db)
        for object in updated {
            let columns = object.persistentChangedSlots
            let storeVersion = versions[object.layout.index]?[object.id.primaryKey]
            if storeVersion == object.version {
                if columns != 0 { checked.writes.append((object, columns, object.version, object.values)) }
                continue
            }
            if storeVersion != nil && columns == 0 { continue }   // only relationships stored elsewhere changed
            let storeValues = try storeVersion == nil ? nil : readRow(object.id.primaryKey, of: object.layout, on: db, storeID: store.identifier)
            if policy == .error {
                conflicts.append(versionConflict(object, storeValues: storeValues, storeVersion: storeVersion ?? 0))
                continue
            }
            guard let storeValues, let storeVersion else {
                checked.gone.append(object)
                continue
            }
            let (write, merged) = resolve(object, storeValues: storeValues, policy: policy)
            if policy == .rollback { checked.droppedLinks.insert(ObjectIdentifier(object)) }
            if write == 0 {
                object.saveOutcome = Outcome(version: storeVersion, values: merged, key: object.id.primaryKey)
            } else {
                checked.writes.append((object, write, storeVersion, merged))
            }
        }
        for object in deleted where policy == .error {
            let storeVersion = versions[object.layout.index]?[object.id.primaryKey]
            if storeVersion != object.version {
                let storeValues = try storeVersion == nil ? nil : readRow(object.id.primaryKey, of: object.layout, on: db, storeID: store.identifier)
                conflicts.append(versionConflict(object, storeValues: storeValues, storeVersion: storeVersion ?? 0))
            }
        }
        if !conflicts.isEmpty { throw MergeConflictError(conflicts: conflicts) }
        return checked
    }

    /// 2. Inserts, each after the inserted objects it points to; a link to an inserted object
    /// not written yet (a cycle) is set once both are. Returns each temporary key's row key.
    func insertObjects(_ inserted: [ManagedObject], policy: MergePolicy, on db: Connection, store: PersistentStore) throws -> [Int64: Int64] {
        var keys: [Int64: Int64] = [:]   // temporary key -> row key
        var pendingLinks: [(ManagedObject, Int, ObjectID)] = []
        var visiting: Set<ObjectIdentifier> = []
        var insertStatements: [Int: Statement] = [:]
        func insert(_ object: ManagedObject) throws {
            guard object.saveOutcome == nil, visiting.insert(ObjectIdentifier(object)).inserted else { return }
            let layout = object.layout
            for slot in layout.attributeCount..<layout.slotNames.count {
                if case .objectID(let target) = object.values[slot], target.isTemporaryID, keys[target.primaryKey] == nil,
                   let targetObject = registry[try self.layout(target.entityName).index][target.primaryKey], targetObject.isInsertedState {
                    try insert(targetObject)
                }
            }
            let statement: Statement
            if let cached = insertStatements[layout.index] {
                statement = cached
            } else {
                statement = try db.cachedStatement(layout.insertSQL)
                insertStatements[layout.index] = statement
            }
            for (position, slot) in layout.writableSlots.enumerated() {
                var value = object.values[slot]
                if case .objectID(let target) = value, target.isTemporaryID {
                    if let key = keys[target.primaryKey] { value = .integer(key) } else { value = .null; pendingLinks.append((object, slot, target)) }
                }
                try statement.bind(value, at: Int32(position + 1))
            }
            db.lastInsertRowID = 0
            do {
                try statement.run()
                statement.rewind()
                let key = try layout.insertedKey(of: object.values, on: db)
                keys[object.id.primaryKey] = key
                object.saveOutcome = Outcome(version: 1, values: object.values, key: key)
            } catch let error as SQLiteError where error.code == .constraintUnique || error.code == .constraintPrimaryKey {
                statement.reset()
                let outcome = try resolveUniqueConflict(object, policy: policy, keys: keys, on: db, storeID: store.identifier)
                keys[object.id.primaryKey] = outcome.key
                object.saveOutcome = outcome
            }
        }
        for object in inserted { try insert(object) }
        for (object, slot, target) in pendingLinks {
            guard let key = keys[object.id.primaryKey], let targetKey = keys[target.primaryKey] else { continue }
            let table = object.layout.table
            try db.execute("UPDATE \(table.writtenTable) SET \(quote(object.layout.slotNames[slot])) = ? WHERE \(table.objectKey("= ?"))", [.integer(targetKey), .integer(key)])
        }
        return keys
    }

    /// 3. Updates: the changed slots of each object, its version moved on.
    func writeUpdates(_ writes: [PlannedWrite], keys: [Int64: Int64], on db: Connection) throws {
        for (object, mask, version, values) in writes {
            let layout = object.layout
            let statement = try db.cachedStatement(layout.updateSQL(mask: mask))
            var index: Int32 = 1
            for slot in 0..<layout.slotNames.count where mask & (1 << UInt64(slot)) != 0 {
                try statement.bind(resolved(values[slot], keys), at: index)
                index += 1
            }
            try statement.bind(.integer(object.id.primaryKey), at: index)
            do {
                try statement.run()
            } catch let error as SQLiteError {
                throw UniqueViolation.translate(error, table: layout.table, place: object.id.uriRepresentation)
            }
            object.saveOutcome = Outcome(version: version + 1, values: values, key: object.id.primaryKey)
        }
    }

    /// 4. Join-table rows, written from the side that owns the table.
    func writeJoinRows(of objects: [ManagedObject], except dropped: Set<ObjectIdentifier>, keys: [Int64: Int64], on db: Connection) throws {
        for object in objects where !object.isDeletedState && !dropped.contains(ObjectIdentifier(object)) {
            let source = object.isInsertedState ? keys[object.id.primaryKey] : object.id.primaryKey
            guard let source else { continue }
            for (link, state) in object.linkStates.enumerated() {
                guard let state, state.hasChanges,
                      case .joinTable(let table, "src", "dst") = object.layout.table.storage[object.layout.links[link].name]! else { continue }
                for target in state.added.sorted() {
                    guard let key = target.isTemporaryID ? keys[target.primaryKey] : target.primaryKey else { continue }
                    try db.execute("INSERT OR IGNORE INTO \(quote(table)) (\"src\", \"dst\") VALUES (?, ?)", [.integer(source), .integer(key)])
                }
                for target in state.removed.sorted() where !target.isTemporaryID {
                    try db.execute("DELETE FROM \(quote(table)) WHERE \"src\" = ? AND \"dst\" = ?", [.integer(source), .integer(target.primaryKey)])
                }
            }
        }
    }

    /// 5. Deletes, with the store applying delete rules to rows this context never loaded.
    /// Returns every key deleted, by entity.
    func deleteObjects(_ deleted: [ManagedObject], on db: Connection, store: PersistentStore) throws -> [String: Set<Int64>] {
        var deleter = BatchDeleter(schema: store.schema)
        var byEntity: [String: [Int64]] = [:]
        for object in deleted { byEntity[object.layout.name, default: []].append(object.id.primaryKey) }
        deleter.planned = byEntity.mapValues(Set.init)
        for (entity, keys) in byEntity.sorted(by: { $0.key < $1.key }) { try deleter.delete(keys, of: entity, on: db) }
        return deleter.deleted
    }
}
