import Foundation

extension ManagedObjectContext {
    /// Writes every insert, update and delete of the context in one SQLite
    /// transaction (with its history, under ``name`` and ``transactionAuthor``),
    /// or, for a child context, into its parent. Validates first (required
    /// values, deny rules); conflicts with newer rows and unique constraints
    /// follow ``mergePolicy``. On failure nothing is written and the context is
    /// left as it was.
    ///
    /// ```swift
    /// post["title"] = "Edited"
    /// try context.save()
    /// ```
    public func save() throws {
        let notification: ContextDidSave? = try withLock {
            guard hasChanges else {
                clearDirty()
                return nil
            }
            try validateForSave()
            if let parent { return try saveIntoParent(parent) }
            return try saveToStore()
        }
        if let notification { didSave(notification) }
    }

    // MARK: Validation

    /// Required values of inserted and updated objects, and deny rules of deleted ones.
    func validateForSave() throws {
        for object in dirtyObjects {
            let layout = object.layout
            if object.isDeletedState {
                guard !object.isInsertedState else { continue }
                for relationship in layout.entity.relationships where relationship.deleteRule == .deny {
                    let related = try members(of: object, relationship).filter { id in
                        !(registeredObject(for: id)?.isDeletedState ?? false)
                    }
                    if !related.isEmpty {
                        throw TributaryError(.deleteDenied, "cannot delete \(layout.name) \(object.id): its '\(relationship.name)' still has \(related.count) \(relationship.destinationEntity) object(s) and the rule is deny",
                                             location: object.id.uriRepresentation, hint: "delete or move the related \(relationship.destinationEntity) objects first")
                    }
                }
                continue
            }
            guard !object.isFaultState else { continue }
            for slot in layout.writableSlots where object.values[slot].isNull {
                let required = layout.attribute(at: slot).map { !$0.isOptional } ?? !layout.slotRelationships[slot - layout.attributeCount].isOptional
                if required {
                    throw TributaryError(.missingValue, "'\(layout.slotNames[slot])' of \(layout.name) is required and has no value", location: object.id.uriRepresentation,
                                         hint: "set \(layout.slotNames[slot]) before saving, or make it optional in the model")
                }
            }
        }
    }

    // MARK: Saving to the store

    /// What a save decided for one object, applied to it once the transaction commits.
    struct Outcome {
        var version: Int64
        var values: [AttributeValue]
        var key: Int64
    }

    private func saveToStore() throws -> ContextDidSave {
        let store = try requireStore()
        let objects = dirtyObjects
        let inserted = objects.filter { $0.isInsertedState && !$0.isDeletedState }
        let deleted = objects.filter { $0.isDeletedState && !$0.isInsertedState }
        let updated = objects.filter { !$0.isInsertedState && !$0.isDeletedState && $0.hasLocalChanges }
        let policy = mergePolicyValue
        let metadata = TransactionMetadata(author: authorValue, contextName: nameValue, reason: reasonValue)
        // A WITHOUT ROWID table's rows (its objects', or those their relationships reach) are
        // written as another program writes them (``KeyMap``).
        let throughTriggers = (inserted + deleted + updated).contains { $0.layout.table.reachesWithoutRowid }

        // Each object's outcome lives on the object until the save is applied (or fails).
        defer { for object in objects { object.saveOutcome = nil } }
        var gone: [ManagedObject] = []
        var droppedLinks: Set<ObjectIdentifier> = []
        var deletedKeys: [String: Set<Int64>] = [:]

        // Other contexts of this coordinator get the save directly: their watchers skip it.
        let marking = store.isHistoryTracked && store.description.remoteChangeNotificationPost ? persistentStoreCoordinator.localCommits : nil
        let (_, token) = try store.writeReturningToken(metadata, marking: marking) { db in
            let steps = {
                let checked = try self.checkVersions(updated: updated, deleted: deleted, policy: policy, on: db, store: store)  // 1.
                gone = checked.gone
                droppedLinks = checked.droppedLinks
                let keys = try self.insertObjects(inserted, policy: policy, on: db, store: store)                               // 2.
                try self.writeUpdates(checked.writes, keys: keys, on: db)                                                        // 3.
                try self.writeJoinRows(of: objects, except: droppedLinks, keys: keys, on: db)                                    // 4.
                deletedKeys = try self.deleteObjects(deleted, on: db, store: store)                                              // 5.
            }
            if throughTriggers { try store.writingThroughCaptureTriggers(on: db, steps) } else { try steps() }
        }
        var notification = finishStoreSave(objects: objects, gone: gone, deletedKeys: deletedKeys, store: store)
        notification.historyToken = token.map { PersistentHistoryToken(value: $0, storeID: store.identifier) }
        return notification
    }

    /// Applies a committed save to the objects and builds its notification.
    private func finishStoreSave(objects: [ManagedObject], gone: [ManagedObject], deletedKeys: [String: Set<Int64>], store: PersistentStore) -> ContextDidSave {
        var notification = ContextDidSave()
        var permanent: [Int64: Int64] = [:]   // temporary key -> row key
        // Children hold temporary IDs of objects they pushed here: they get the map.
        let needsIDMap = children.contains { $0.context != nil }
        var permanentIDs: [ObjectID: ObjectID] = [:]
        for object in objects where object.isInsertedState && !object.isDeletedState {
            guard let outcome = object.saveOutcome else { continue }
            permanent[object.id.primaryKey] = outcome.key
        }
        /// Temporary IDs in relationship slots made permanent.
        func remap(_ values: inout [AttributeValue], from first: Int) {
            guard !permanent.isEmpty else { return }
            for slot in first..<values.count {
                if case .objectID(let id) = values[slot], id.isTemporaryID, let key = permanent[id.primaryKey] {
                    values[slot] = .objectID(ObjectID(storeID: id.storeID, entityName: id.entityName, primaryKey: key))
                }
            }
        }
        // The IDs are gathered only when someone hears of the save.
        let announces = !didSaveContinuations.isEmpty || !changeObservers.isEmpty || needsIDMap
            || persistentStoreCoordinator.contexts.all.contains { $0 !== self && $0.parent == nil && $0.automaticallyMergesChangesFromParent }
        for object in objects {
            if object.isDeletedState {
                unregister(object)
                if announces && !object.isInsertedState { notification.deletedObjectIDs.insert(object.id) }
                object.context = nil
                continue
            }
            let wasInserted = object.isInsertedState
            if wasInserted {
                unregister(object)
                if let key = permanent[object.id.primaryKey] {
                    if needsIDMap { permanentIDs[object.id] = ObjectID(storeID: object.id.storeID, entityName: object.id.entityName, primaryKey: key) }
                    object.id = ObjectID(storeID: object.id.storeID, entityName: object.id.entityName, primaryKey: key)
                }
                if registry[object.layout.index][object.id.primaryKey] == nil { register(object) }
                if announces { notification.insertedObjectIDs.insert(object.id) }
            } else if announces {
                notification.updatedObjectIDs.insert(object.id)
            }
            if let outcome = object.saveOutcome {
                object.version = outcome.version
                object.values = outcome.values
            }
            remap(&object.values, from: object.layout.attributeCount)
            object.snapshot = object.values
            object.changedSlots = 0
            object.isInsertedState = false
            object.linkStates = []
            // The store's triggers computed its derived attributes: read them when next used.
            if object.layout.hasDerivedAttributes {
                object.values = []
                object.snapshot = []
                object.isFaultState = true
            }
        }
        for object in gone {
            unregister(object)
            object.isDeletedState = true
            object.context = nil
        }
        // Rows deleted by the store's delete rules that this context holds.
        for (entity, keys) in deletedKeys {
            guard let layout = store.contextSchema.byName[entity] else { continue }
            for key in keys {
                let id = ObjectID(storeID: store.identifier, entityName: entity, primaryKey: key)
                notification.deletedObjectIDs.insert(id)
                if let object = registry[layout.index][key] {
                    object.isDeletedState = true
                    unregister(object)
                    object.context = nil
                }
            }
        }
        if !notification.deletedObjectIDs.isEmpty { invalidateLinks() }
        notification.updatedObjectIDs.subtract(notification.deletedObjectIDs)
        notification.permanentIDs = permanentIDs
        clearDirty()
        generation.advanceAfterSave()
        return notification
    }

    /// Forgets loaded members of relationships stored elsewhere (they reload on next use), keeping unsaved changes.
    func invalidateLinks() {
        for entity in registry {
            for object in entity.values where !object.linkStates.isEmpty {
                for link in object.linkStates.indices {
                    if var state = object.linkStates[link], !state.hasChanges {
                        state.base = nil
                        object.linkStates[link] = state
                    }
                }
            }
        }
    }

    func clearDirty() {
        for object in dirtyObjects { object.isInDirtyList = false }
        dirtyObjects.removeAll()
    }

    /// The versions of `objects`' rows now, by entity index and key (missing rows absent).
    func currentVersions(of objects: [ManagedObject], on db: Connection) throws -> [Int: [Int64: Int64]] {
        var byEntity: [Int: [ManagedObject]] = [:]
        for object in objects { byEntity[object.layout.index, default: []].append(object) }
        var result: [Int: [Int64: Int64]] = [:]
        for (index, group) in byEntity {
            let layout = group[0].layout
            let list = AttributeValue.string("[" + group.map { String($0.id.primaryKey) }.joined(separator: ",") + "]")
            let statement = try db.cachedStatement("SELECT \(layout.table.key), \(layout.table.version()) FROM \(quote(layout.name)) WHERE \(layout.table.key) IN (SELECT value FROM json_each(?))")
            try statement.bind([list])
            var versions: [Int64: Int64] = [:]
            while try statement.step() { versions[statement.int64(at: 0)] = statement.int64(at: 1) }
            result[index] = versions
        }
        return result
    }

    /// One row's slot values in the writer's transaction, or nil.
    func readRow(_ key: Int64, of layout: ContextEntity, on db: Connection, storeID: UUID) throws -> [AttributeValue]? {
        let statement = try db.cachedStatement(layout.selectByKeySQL)
        try statement.bind(.integer(key), at: 1)
        defer { statement.rewind() }
        guard try statement.step() else { return nil }
        return layout.readSlots(statement, from: 1, storeID: storeID)
    }

    /// The slots to write and the values the object ends with, for a version conflict under `policy`.
    func resolve(_ object: ManagedObject, storeValues: [AttributeValue], policy: MergePolicy) -> (UInt64, [AttributeValue]) {
        let changed = object.persistentChangedSlots
        var write: UInt64 = 0
        var merged = storeValues
        for slot in 0..<storeValues.count {
            let bit: UInt64 = 1 << UInt64(slot)
            switch policy {
            case .mergeByPropertyObjectTrump:
                if changed & bit != 0 { write |= bit; merged[slot] = object.values[slot] }
            case .mergeByPropertyStoreTrump:
                let storeChanged = object.snapshot.isEmpty || storeValues[slot] != object.snapshot[slot]
                if changed & bit != 0 && !storeChanged { write |= bit; merged[slot] = object.values[slot] }
            case .overwrite:
                guard object.layout.attribute(at: slot)?.isDerived != true else { continue }
                if object.values[slot] != storeValues[slot] { write |= bit }
                merged[slot] = object.values[slot]
            case .rollback, .error:
                break
            }
        }
        return (write, merged)
    }

    func versionConflict(_ object: ManagedObject, storeValues: [AttributeValue]?, storeVersion: Int64) -> MergeConflict {
        let names = object.layout.slotNames
        func dictionary(_ values: [AttributeValue]) -> [String: AttributeValue] { Dictionary(uniqueKeysWithValues: zip(names, values)) }
        return MergeConflict(kind: .version, objectID: object.id, objectValues: dictionary(object.values),
                             snapshotValues: object.snapshot.isEmpty ? nil : dictionary(object.snapshot),
                             storeValues: storeValues.map(dictionary), snapshotVersion: object.version, storeVersion: storeVersion, existingObjectID: nil)
    }

    /// A new object whose unique values match an existing row: per `policy`, fail, merge onto the row, or take the row's values.
    func resolveUniqueConflict(_ object: ManagedObject, policy: MergePolicy, keys: [Int64: Int64], on db: Connection, storeID: UUID) throws -> Outcome {
        let layout = object.layout
        for constraint in layout.entity.uniquenessConstraints {
            let slots = constraint.compactMap { layout.slotIndex[$0] }
            let condition = constraint.map { "\(quote($0)) = ?" }.joined(separator: " AND ")
            let statement = try db.cachedStatement(layout.selectAllSQL + " WHERE \(condition)")
            try statement.bind(slots.map { resolved(object.values[$0], keys) })
            guard try statement.step() else { statement.reset(); continue }
            let key = statement.int64(at: 0)
            let version = statement.int64(at: 1)
            let storeValues = layout.readSlots(statement, from: 2, storeID: storeID)
            statement.reset()
            let existing = ObjectID(storeID: storeID, entityName: layout.name, primaryKey: key)
            switch policy {
            case .error:
                let names = layout.slotNames
                throw MergeConflictError(conflicts: [MergeConflict(kind: .uniqueConstraint(attributes: constraint), objectID: object.id,
                                                                   objectValues: Dictionary(uniqueKeysWithValues: zip(names, object.values)), snapshotValues: nil,
                                                                   storeValues: Dictionary(uniqueKeysWithValues: zip(names, storeValues)), snapshotVersion: 0, storeVersion: version, existingObjectID: existing)])
            case .mergeByPropertyStoreTrump, .rollback:
                return Outcome(version: version, values: storeValues, key: key)
            case .mergeByPropertyObjectTrump, .overwrite:
                var mask: UInt64 = 0
                var merged = storeValues
                for slot in 0..<storeValues.count {
                    let take = (policy == .overwrite && layout.attribute(at: slot)?.isDerived != true) || object.changedSlots & (1 << UInt64(slot)) != 0
                    if take { merged[slot] = object.values[slot] }
                    if take && resolved(object.values[slot], keys) != storeValues[slot] { mask |= 1 << UInt64(slot) }
                }
                guard mask != 0 else { return Outcome(version: version, values: merged, key: key) }
                let update = try db.cachedStatement(layout.updateSQL(mask: mask))
                var index: Int32 = 1
                for slot in 0..<merged.count where mask & (1 << UInt64(slot)) != 0 {
                    try update.bind(resolved(merged[slot], keys), at: index)
                    index += 1
                }
                try update.bind(.integer(key), at: index)
                try update.run()
                return Outcome(version: version + 1, values: merged, key: key)
            }
        }
        throw TributaryError(.uniqueConstraint, "a new \(layout.name) breaks a unique constraint that no existing row explains", location: object.id.uriRepresentation,
                             hint: "check the values of \(layout.entity.uniquenessConstraints.map { $0.joined(separator: "+") }.joined(separator: ", "))")
    }

    /// A value with temporary object IDs replaced by the keys given in this save.
    func resolved(_ value: AttributeValue, _ keys: [Int64: Int64]) -> AttributeValue {
        if case .objectID(let id) = value, id.isTemporaryID { return keys[id.primaryKey].map { .integer($0) } ?? .null }
        return value
    }
}
