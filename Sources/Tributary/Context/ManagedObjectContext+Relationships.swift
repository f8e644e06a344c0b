import Foundation

extension ManagedObjectContext {
    // MARK: Setting values

    /// Sets `key` of `object`, keeping inverse relationships in step (under the lock).
    func setValue(_ value: AttributeValue, forKey key: String, of object: ManagedObject) throws {
        guard !object.isDeletedState else {
            throw TributaryError(.invalidInput, "cannot change a deleted \(object.layout.name)", location: object.id.uriRepresentation, hint: "change objects before deleting them")
        }
        let layout = object.layout
        try object.fireIfNeeded()
        if let slot = layout.slotIndex[key], slot < layout.attributeCount {
            if layout.table.attributes[slot].isDerived { throw ValueValidator(table: layout.table).derived(key, row: nil).located(object.id.uriRepresentation) }
            if value.isNull || value.matches(layout.attributeTypes[slot]) {
                object.values[slot] = value
            } else {
                var validator = ValueValidator(table: layout.table)
                validator.writesValuesAsGiven = writesValuesAsGiven
                object.values[slot] = try validator.attributeValue(value, layout.table.attributes[slot], row: nil)
            }
            object.changedSlots |= 1 << UInt64(slot)
            markDirty(object)
            return
        }
        let validator = ValueValidator(table: layout.table)
        guard let relationship = layout.entity.relationship(named: key) else { throw object.unknownKey(key) }
        if makesBatchInsertObjects { return try setBatchInsertRelationship(value, relationship, of: object, validator: validator) }
        if relationship.isToMany {
            let wanted = Set(try targets(value, relationship, validator))
            let current = try members(of: object, relationship)
            for target in current.subtracting(wanted).sorted() { try unrelate(object, relationship, target) }
            for target in wanted.subtracting(current).sorted() { try relate(object, relationship, target) }
        } else {
            let target = try targets(value, relationship, validator).first
            let current = try members(of: object, relationship).first
            if current == target { return }
            if let current { try unrelate(object, relationship, current) }
            if let target { try relate(object, relationship, target) }
        }
    }

    /// A batch insert's object takes a to-one relationship held in its row, as the insert's
    /// dictionary does (no inverse to keep: the insert writes the row alone); it cannot take
    /// others, which Core Data's batch inserts do not set either.
    private func setBatchInsertRelationship(_ value: AttributeValue, _ relationship: RelationshipDescription, of object: ManagedObject, validator: ValueValidator) throws {
        guard case .slot(let slot) = object.layout.relationshipKinds[relationship.name] else {
            throw TributaryError(.invalidInput, "a batch insert cannot set '\(relationship.name)' of \(object.layout.name): it sets attributes and to-one relationships held in the row",
                                 location: object.layout.name, hint: "link the objects after the insert, with a context save or a BatchUpdateRequest's addedLinks")
        }
        object.values[slot] = try targets(value, relationship, validator).first.map { .objectID($0) } ?? .null
        object.changedSlots |= 1 << UInt64(slot)
    }

    /// The object IDs a relationship value names.
    private func targets(_ value: AttributeValue, _ relationship: RelationshipDescription, _ validator: ValueValidator) throws -> [ObjectID] {
        let storeID = try requireStore().identifier
        func one(_ item: AttributeValue) throws -> ObjectID? {
            switch item {
            case .null: return nil
            case .objectID(let id) where id.entityName == relationship.destinationEntity && id.storeID == storeID: return id
            case .string(let text):
                if let id = ObjectID(uriRepresentation: text), id.entityName == relationship.destinationEntity, id.storeID == storeID { return id }
            default: break
            }
            throw TributaryError(.typeMismatch, "'\(relationship.name)' of \(validator.table.name) points to \(relationship.destinationEntity), and \(ValueValidator.preview(item)) is not an object ID of one in this store",
                                 location: validator.table.name, hint: "give the objectID of a \(relationship.destinationEntity)")
        }
        if case .array(let items) = value {
            guard relationship.isToMany else {
                throw TributaryError(.typeMismatch, "'\(relationship.name)' of \(validator.table.name) is to-one and takes one object ID, not a list", location: validator.table.name)
            }
            return try items.compactMap(one)
        }
        if relationship.isToMany && !value.isNull {
            throw TributaryError(.typeMismatch, "'\(relationship.name)' of \(validator.table.name) is to-many and takes a list of object IDs", location: validator.table.name)
        }
        return try one(value).map { [$0] } ?? []
    }

    /// The current members of `relationship` of `object` (loading them if needed).
    func members(of object: ManagedObject, _ relationship: RelationshipDescription) throws -> Set<ObjectID> {
        try object.fireIfNeeded()
        switch object.layout.relationshipKinds[relationship.name]! {
        case .slot(let slot):
            if case .objectID(let id) = object.values[slot] { return [id] }
            return []
        case .link(let link):
            try object.loadLink(link)
            return object.linkStates[link]?.current ?? []
        }
    }

    /// Adds `target` to `relationship` of `object`, and `object` to the inverse of `target`.
    func relate(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ObjectID) throws {
        let other = try registeredOrFault(target)
        guard !other.isDeletedState else {
            throw TributaryError(.invalidInput, "cannot relate \(object.layout.name) to a deleted \(other.layout.name)", location: target.uriRepresentation)
        }
        let inverse = other.layout.entity.relationship(named: relationship.inverseName)!
        if !inverse.isToMany, let previous = try members(of: other, inverse).first, previous != object.id {
            // `other` leaves its previous owner.
            let previousOwner = try registeredOrFault(previous)
            try rawRemove(previousOwner, relationship, target)
        }
        try rawAdd(object, relationship, target)
        try rawAdd(other, inverse, object.id)
    }

    /// Removes `target` from `relationship` of `object`, and `object` from the inverse of `target`.
    func unrelate(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ObjectID) throws {
        try rawRemove(object, relationship, target)
        let other = try registeredOrFault(target)
        if !other.isDeletedState || other.isInsertedState {
            let inverse = other.layout.entity.relationship(named: relationship.inverseName)!
            try rawRemove(other, inverse, object.id)
        }
    }

    /// Adds `target` on this side only.
    func rawAdd(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ObjectID) throws {
        try object.fireIfNeeded()
        switch object.layout.relationshipKinds[relationship.name]! {
        case .slot(let slot):
            if object.values[slot] == .objectID(target) { return }
            object.values[slot] = .objectID(target)
            object.changedSlots |= 1 << UInt64(slot)
        case .link(let link):
            if object.linkStates.isEmpty { object.linkStates = Array(repeating: nil, count: object.layout.links.count) }
            var state = object.linkStates[link] ?? LinkState()
            if !relationship.isToMany, state.base == nil, !object.isInsertedState { try object.loadLink(link); state = object.linkStates[link]! }
            if !relationship.isToMany { for old in state.current where old != target { state.remove(old) } }
            state.add(target)
            object.linkStates[link] = state
        }
        markDirty(object)
    }

    /// Removes `target` on this side only.
    func rawRemove(_ object: ManagedObject, _ relationship: RelationshipDescription, _ target: ObjectID) throws {
        try object.fireIfNeeded()
        if object.isDeletedState && !object.isInsertedState && object.snapshot.isEmpty { return }
        switch object.layout.relationshipKinds[relationship.name]! {
        case .slot(let slot):
            guard object.values[slot] == .objectID(target) else { return }
            object.values[slot] = .null
            object.changedSlots |= 1 << UInt64(slot)
        case .link(let link):
            if object.linkStates.isEmpty { object.linkStates = Array(repeating: nil, count: object.layout.links.count) }
            var state = object.linkStates[link] ?? LinkState()
            state.remove(target)
            object.linkStates[link] = state
        }
        markDirty(object)
    }

    // MARK: Deleting

    /// Marks `object` deleted and applies its delete rules in memory.
    func propagateDelete(_ object: ManagedObject) throws {
        guard !object.isDeletedState else { return }
        try object.fireIfNeeded()
        guard !object.isDeletedState else { return }
        markDeleted(object)
        for relationship in object.layout.entity.relationships where relationship.deleteRule != .deny {
            let targets = try members(of: object, relationship)
            for target in targets.sorted() {
                let other = try registeredOrFault(target)
                switch relationship.deleteRule {
                case .cascade:
                    try propagateDelete(other)
                case .nullify:
                    let inverse = other.layout.entity.relationship(named: relationship.inverseName)!
                    try rawRemove(other, inverse, object.id)
                case .deny:
                    break
                }
            }
        }
    }

    func markDeleted(_ object: ManagedObject) {
        object.isDeletedState = true
        markDirty(object)
    }

    // MARK: Prefetching

    /// Loads the relationships named by `keyPaths` (dotted paths allowed) of `objects` in one query per step.
    func prefetch(_ keyPaths: [String], of objects: [ManagedObject], layout: ContextEntity) throws {
        let store = try requireStore()
        for keyPath in keyPaths {
            var current = objects
            var currentLayout = layout
            for name in keyPath.split(separator: ".").map(String.init) {
                guard let relationship = currentLayout.entity.relationship(named: name) else {
                    throw TributaryError(.unknownProperty, "\(currentLayout.name) has no relationship '\(name)'", location: "relationshipKeyPathsForPrefetching '\(keyPath)'",
                                         hint: "\(currentLayout.name) has \(currentLayout.entity.relationships.map(\.name).joined(separator: ", "))")
                }
                let destination = try store.contextSchema.entity(relationship.destinationEntity)
                var targetKeys: [Int64] = []
                switch currentLayout.relationshipKinds[name]! {
                case .slot(let slot):
                    for object in current {
                        try object.fireIfNeeded()
                        if case .objectID(let id) = object.values[slot], id.primaryKey > 0 { targetKeys.append(id.primaryKey) }
                    }
                case .link(let link):
                    let saved = current.filter { !$0.isInsertedState && ($0.linkStates.isEmpty || $0.linkStates[link]?.base == nil) }
                    var bases: [Int64: Set<ObjectID>] = Dictionary(uniqueKeysWithValues: saved.map { ($0.id.primaryKey, []) })
                    if parent == nil, !saved.isEmpty {
                        let list = AttributeValue.string("[" + saved.map { String($0.id.primaryKey) }.joined(separator: ",") + "]")
                        try withReader { db in
                            let statement = try db.makeStatement(currentLayout.linkPairsSQL(link))
                            try statement.bind([list])
                            while try statement.step() {
                                bases[statement.int64(at: 0), default: []].insert(ObjectID(storeID: store.identifier, entityName: destination.name, primaryKey: statement.int64(at: 1)))
                            }
                        }
                        for object in saved {
                            if object.linkStates.isEmpty { object.linkStates = Array(repeating: nil, count: currentLayout.links.count) }
                            var state = object.linkStates[link] ?? LinkState()
                            state.base = bases[object.id.primaryKey] ?? []
                            object.linkStates[link] = state
                        }
                    }
                    for object in current {
                        try object.loadLink(link)
                        targetKeys += (object.linkStates[link]?.current ?? []).map(\.primaryKey).filter { $0 > 0 }
                    }
                }
                current = try loadObjects(Array(Set(targetKeys)).sorted(), of: destination)
                currentLayout = destination
            }
        }
    }

    /// Registers and fills the objects with `keys` of `layout` in one query (faults already filled stay).
    func loadObjects(_ keys: [Int64], of layout: ContextEntity) throws -> [ManagedObject] {
        let store = try requireStore()
        var objects: [ManagedObject] = []
        var missing: [Int64] = []
        for key in keys {
            let object = try registeredOrFault(ObjectID(storeID: store.identifier, entityName: layout.name, primaryKey: key))
            objects.append(object)
            if object.isFaultState { missing.append(key) }
        }
        guard !missing.isEmpty, parent == nil else { return objects }
        let list = AttributeValue.keyList(missing)
        try withReader { db in
            let statement = try db.makeStatement(layout.selectAllSQL + " WHERE \(layout.table.key) IN (SELECT value FROM json_each(?))")
            try statement.bind([list])
            while try statement.step() {
                if let object = registry[layout.index][statement.int64(at: 0)], object.isFaultState {
                    fill(object, version: statement.int64(at: 1), values: layout.readSlots(statement, from: 2, storeID: store.identifier))
                }
            }
        }
        return objects
    }
}

extension ManagedObject {
    /// The IDs of the objects a relationship points to, read without making
    /// objects of them (Core Data's `objectIDs(forRelationshipNamed:)`).
    ///
    /// ```swift
    /// let tagIDs = try post.objectIDs(forRelationshipNamed: "tags")
    /// ```
    public func objectIDs(forRelationshipNamed name: String) throws -> [ObjectID] {
        try withContextLock {
            guard let relationship = layout.entity.relationship(named: name) else { throw unknownKey(name) }
            guard let context else { throw detached() }
            return try context.members(of: self, relationship).sorted()
        }
    }

    /// The object a to-one relationship points to, or nil.
    ///
    /// ```swift
    /// let post = try attachment.destination(forRelationship: "post")
    /// ```
    public func destination(forRelationship name: String) throws -> ManagedObject? {
        try withContextLock {
            guard let context else { throw detached() }
            return try objectIDs(forRelationshipNamed: name).first.map { try context.registeredOrFault($0) }
        }
    }

    /// The objects a relationship points to, in object ID order.
    ///
    /// ```swift
    /// for tag in try post.destinations(forRelationship: "tags") { print(tag["name"]) }
    /// ```
    public func destinations(forRelationship name: String) throws -> [ManagedObject] {
        try withContextLock {
            guard let context else { throw detached() }
            return try objectIDs(forRelationshipNamed: name).map { try context.registeredOrFault($0) }
        }
    }

    /// Adds `object` to a to-many relationship (and this object to its inverse).
    ///
    /// ```swift
    /// try post.add(tag, toRelationship: "tags")
    /// ```
    public func add(_ object: ManagedObject, toRelationship name: String) throws {
        try withContextLock {
            guard let context else { throw detached() }
            guard let relationship = layout.entity.relationship(named: name) else { throw unknownKey(name) }
            guard !isDeletedState else { throw TributaryError(.invalidInput, "cannot change a deleted \(layout.name)", location: id.uriRepresentation) }
            if try context.members(of: self, relationship).contains(object.id) { return }
            if !relationship.isToMany, let current = try context.members(of: self, relationship).first { try context.unrelate(self, relationship, current) }
            try context.relate(self, relationship, object.id)
        }
    }

    /// Removes `object` from a relationship (and this object from its inverse).
    public func remove(_ object: ManagedObject, fromRelationship name: String) throws {
        try withContextLock {
            guard let context else { throw detached() }
            guard let relationship = layout.entity.relationship(named: name) else { throw unknownKey(name) }
            guard try context.members(of: self, relationship).contains(object.id) else { return }
            try context.unrelate(self, relationship, object.id)
        }
    }
}
