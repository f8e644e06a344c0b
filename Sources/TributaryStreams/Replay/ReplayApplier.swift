import Foundation
import Tributary

/// Turns replayed changes into batch requests: runs of inserts (and snapshot reads) of one
/// entity become one ``BatchInsertRequest`` with the source's primary keys, runs of deletes
/// one ``BatchDeleteRequest`` by object ID, each update one ``BatchUpdateRequest``, and link
/// changes ``BatchUpdateRequest/addedLinks`` and ``BatchUpdateRequest/removedLinks``.
///
/// ```swift
/// var applier = ReplayApplier(coordinator: target, model: model, batchSize: 1000)
/// _ = try applier.add(change, position: position)
/// try applier.flush()
/// ```
struct ReplayApplier {
    let coordinator: PersistentStoreCoordinator
    private(set) var model: ManagedObjectModel
    let batchSize: Int
    private let storeID: UUID
    private let transaction = TransactionMetadata(author: "tributary-replay", contextName: "replay")
    private var pending: [ReplayChange] = []
    private var pendingLast: StreamPosition?
    /// The last position whose change is written.
    private(set) var appliedThrough: StreamPosition?

    init(coordinator: PersistentStoreCoordinator, model: ManagedObjectModel, batchSize: Int) {
        self.coordinator = coordinator
        self.model = model
        self.batchSize = max(1, batchSize)
        storeID = coordinator.persistentStores.first?.identifier ?? UUID()
        derivedAttributes = Self.derived(in: model)
    }

    /// Derived attributes by entity: the target's triggers compute them, so replay leaves them out.
    private var derivedAttributes: [String: Set<String>]

    private static func derived(in model: ManagedObjectModel) -> [String: Set<String>] {
        var derived: [String: Set<String>] = [:]
        for entity in model.entities { derived[entity.name] = Set(entity.attributes.filter(\.isDerived).map(\.name)) }
        return derived
    }

    /// Applies a schema record at `position`: writes what is pending, then migrates the target
    /// to the record's model, whose records follow (a target whose model is newer and has all
    /// the record's model names, as a replica made with a newer `--model`, keeps its own).
    mutating func migrate(to schema: SchemaRecord, at position: StreamPosition) throws {
        try flush()
        let wanted = schema.change.model
        do {
            try coordinator.migrateStore(to: wanted)
            model = coordinator.persistentStores.first?.model ?? wanted
            derivedAttributes = Self.derived(in: model)
        } catch let error as TributaryError where error.code == .incompatibleModel && model.covers(wanted) {
            // The target's model is newer and has all the record's model has: it stays.
        } catch let error as TributaryError where error.code == .incompatibleModel && model.entities.contains(where: { $0.tableKey != nil }) {
            throw Self.adoptedTargetRefusal(schema, at: position, target: coordinator.persistentStores.first?.url.path ?? "the replica")
        } catch let error as TributaryError {
            throw TributaryError(error.code, "the model change at \(position) (\(schema.change.summary)) cannot be applied to the target: \(error.message)",
                                 location: coordinator.persistentStores.first?.url.path, hint: error.hint)
        }
        pendingLast = position
        appliedThrough = position
    }

    /// The refusal of a model change for an adopted replica, whose tables Tributary never
    /// changes: what to change there, and how to go on from this record. A replay into a new
    /// file removes what it made when it fails, so the hint says how to make the replica
    /// through the record before.
    private static func adoptedTargetRefusal(_ schema: SchemaRecord, at position: StreamPosition, target: String) -> TributaryError {
        TributaryError(.incompatibleModel, "the model change at \(position) (\(schema.change.summary)) needs the replica's tables changed, "
                       + "and Tributary never changes an adopted database's tables", location: target,
                       hint: "make the same change to \(target)'s tables as the source had (sqlite3), run tributary adopt \(target), "
                           + "then replay again with --resume (a replica this replay was making is removed with it: make it first with --until \(PersistentHistoryToken(value: position.token - 1, storeID: schema.storeID)))")
    }

    /// A change's values without derived attributes.
    private func written(_ change: ReplayChange) -> [String: AttributeValue] {
        guard let derived = derivedAttributes[change.entityName], !derived.isEmpty else { return change.values }
        return change.values.filter { !derived.contains($0.key) }
    }

    /// Adds a change; returns true when this flushed a batch (so the position may be saved).
    mutating func add(_ change: ReplayChange, position: StreamPosition) throws -> Bool {
        var flushed = false
        if let first = pending.first, !Self.groups(first, change) || pending.count >= batchSize {
            try flush()
            flushed = true
        }
        pending.append(change)
        pendingLast = position
        return flushed
    }

    private static func groups(_ a: ReplayChange, _ b: ReplayChange) -> Bool {
        guard a.entityName == b.entityName else { return false }
        switch (a.operation, b.operation) {
        case (.create, .create), (.read, .read), (.create, .read), (.read, .create), (.delete, .delete): return true
        default: return false
        }
    }

    /// Writes the pending changes.
    mutating func flush() throws {
        guard let first = pending.first else { return }
        let entity = first.entityName
        switch first.operation {
        case .create, .read:
            var request = columnarInsert(entity) ?? BatchInsertRequest(entityName: entity, objects: pending.map(written))
            request.primaryKeys = pending.map(\.primaryKey)
            request.transaction = transaction
            request.writesValuesAsGiven = true
            try coordinator.execute(request)
            for change in pending where !change.added.isEmpty || !change.removed.isEmpty { try link(change) }
        case .update:
            for change in pending {
                let values = written(change)
                if !values.isEmpty {
                    var request = BatchUpdateRequest(entityName: entity, propertiesToUpdate: values)
                    request.objectIDs = [objectID(change)]
                    request.transaction = transaction
                    request.writesValuesAsGiven = true
                    do {
                        try coordinator.execute(request)
                    } catch let error as TributaryError where error.code == .uniqueConstraint {
                        throw Self.swapRefusal(error, of: objectID(change), at: pendingLast)
                    }
                }
                if !change.added.isEmpty || !change.removed.isEmpty { try link(change) }
            }
        case .delete:
            // A key change moves the row, so the target's history links the two keys as the
            // source's did; where it cannot (the new key is taken), a delete and the insert after.
            let deleted = try pending.filter { change in
                guard let key = change.movedToKey else { return true }
                return try !coordinator.moveObject(objectID(change), toKey: key, transaction: transaction)
            }
            if !deleted.isEmpty {
                var request = BatchDeleteRequest(entityName: entity)
                request.objectIDs = deleted.map(objectID)
                request.transaction = transaction
                request.deletesAsRecorded = true
                try coordinator.execute(request)
            }
        }
        pending.removeAll(keepingCapacity: true)
        appliedThrough = pendingLast
    }

    /// An update whose unique values another row still holds: the source changed both rows in
    /// one transaction (a swap of keys or unique values), which replay, writing each change on
    /// its own, cannot apply yet. Says where, and why, instead of SQLite's advice.
    private static func swapRefusal(_ error: TributaryError, of object: ObjectID, at position: StreamPosition?) -> TributaryError {
        let at = position.map { " at \($0)" } ?? ""
        return TributaryError(.uniqueConstraint, "the update of \(object.entityName)/p\(object.primaryKey)\(at) cannot be applied: \(error.message); "
                              + "where the source changed both rows in one transaction (a swap of unique values), replay, which writes each change on its own, cannot apply it yet",
                              location: error.location, hint: "replay cannot apply a swap of unique values yet (README, Limits): change those rows in the replica by hand, then replay again with --resume")
    }

    /// The pending inserts as one columnar request, when they are all in column form with the
    /// same attributes given, every required one among them (so that both forms would fail
    /// alike): no dictionary per row.
    private func columnarInsert(_ entity: String) -> BatchInsertRequest? {
        guard let layout = pending.first?.layout else { return nil }
        let given = pending[0].given
        guard given & layout.required == layout.required, pending.allSatisfy({ $0.layout === layout && $0.given == given }) else { return nil }
        let columns = layout.names.indices.filter { given & ~layout.derived & (1 << UInt64($0)) != 0 }
        let rows: [[AttributeValue]]
        if columns.count == layout.names.count {
            rows = pending.map(\.row)
        } else {
            rows = pending.map { change in columns.map { change.row[$0] } }
        }
        return BatchInsertRequest(entityName: entity, columns: columns.map { layout.names[$0] }, rows: rows)
    }

    /// Applies many-to-many link changes (to-many sides of one-to-many links are replayed
    /// through the to-one side, which history records too).
    private func link(_ change: ReplayChange) throws {
        guard let entity = model.entity(named: change.entityName) else { return }
        func manyToMany(_ name: String) -> Bool {
            guard let relationship = entity.relationship(named: name), relationship.isToMany,
                  let inverse = model.entity(named: relationship.destinationEntity)?.relationship(named: relationship.inverseName) else { return false }
            return inverse.isToMany
        }
        let added = change.added.filter { manyToMany($0.key) }
        let removed = change.removed.filter { manyToMany($0.key) }
        guard !added.isEmpty || !removed.isEmpty else { return }
        var request = BatchUpdateRequest(entityName: change.entityName)
        request.objectIDs = [objectID(change)]
        request.addedLinks = added
        request.removedLinks = removed
        request.transaction = transaction
        try coordinator.execute(request)
    }

    private func objectID(_ change: ReplayChange) -> ObjectID {
        ObjectID(storeID: storeID, entityName: change.entityName, primaryKey: change.primaryKey)
    }
}

extension ManagedObjectModel {
    /// Whether this model has every entity of `other`, with each of its attributes (of the
    /// same type) and relationships: records written with `other` apply to a store of this one.
    func covers(_ other: ManagedObjectModel) -> Bool {
        other.entities.allSatisfy { theirs in
            guard let ours = entity(named: theirs.name) else { return false }
            return theirs.attributes.allSatisfy { ours.attribute(named: $0.name)?.type == $0.type }
                && theirs.relationships.allSatisfy { ours.relationship(named: $0.name) != nil }
        }
    }
}
