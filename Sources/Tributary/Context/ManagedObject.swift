import Foundation

/// An object of an entity, held by a ``ManagedObjectContext`` (Core Data's
/// `NSManagedObject`).
///
/// An object fetched or looked up by ID starts as a *fault*: it knows its ID
/// and loads its row the first time a value is read. Values are read and set
/// by key, or through typed properties of a subclass (see ``Managed``):
///
/// ```swift
/// let post = context.insertNewObject(forEntityName: "Post")
/// post["title"] = "Hello"
/// try post.setValue(.date(Date()), forKey: "createdAt")
/// let title: String = try post.value(forKey: "title", as: String.self)
/// print(post.objectID.isTemporaryID)   // true until saved
/// ```
///
/// An object is used through its context: every read and write takes the
/// context's lock, so objects may be touched from any task, and ``ManagedObjectContext/perform(_:)``
/// groups several steps into one.
// @unchecked Sendable: every mutable field is read and written only under the owning context's lock.
open class ManagedObject: @unchecked Sendable, Hashable, CustomStringConvertible {
    /// The object's ID: temporary (``ObjectID/isTemporaryID``) until its context saves it to the store.
    public var objectID: ObjectID { withContextLock { id } }
    /// The object's entity.
    public var entity: EntityDescription { layout.entity }
    /// The context the object belongs to; nil once it was deleted and saved, or its context is gone.
    public var managedObjectContext: ManagedObjectContext? { context }

    let layout: ContextEntity
    weak var context: ManagedObjectContext?
    var id: ObjectID
    /// Current values by slot (empty while a fault).
    var values: [AttributeValue] = []
    /// Values as last read from the store (or parent), by slot (empty while a fault).
    var snapshot: [AttributeValue] = []
    /// The row version the snapshot was read at.
    var version: Int64 = 0
    /// Slots set since the snapshot.
    var changedSlots: UInt64 = 0
    /// Relationships stored elsewhere, by link index.
    var linkStates: [LinkState?] = []
    var isFaultState = true
    /// Whether the object is in its context's list of changed objects.
    var isInDirtyList = false
    /// What the save in progress decided for the object (set and cleared by the save).
    var saveOutcome: ManagedObjectContext.Outcome?
    var isInsertedState = false
    var isDeletedState = false

    /// Made by contexts only: ``ManagedObjectContext/insertNewObject(forEntityName:)``, fetches and ``ManagedObjectContext/object(with:)``.
    /// Subclasses inherit it and add no initializer of their own.
    public required init(_ seed: ManagedObjectSeed) {
        self.layout = seed.layout
        self.id = seed.id
        self.context = seed.context
    }

    // MARK: State

    /// Whether the object's values are not loaded yet.
    public var isFault: Bool { withContextLock { isFaultState } }
    /// Whether the object was inserted and not saved yet.
    public var isInserted: Bool { withContextLock { isInsertedState } }
    /// Whether the object was deleted (saved or not), or its row was found gone.
    public var isDeleted: Bool { withContextLock { isDeletedState } }
    /// Whether a saved object has unsaved changes of values or relationships.
    public var isUpdated: Bool { withContextLock { !isInsertedState && !isDeletedState && hasLocalChanges } }
    /// Whether saving would write anything for this object.
    public var hasChanges: Bool { withContextLock { isInsertedState || isDeletedState || hasLocalChanges } }

    /// Whether some value differs from the store's (setting a value back to what
    /// it was makes this false again, unlike ``hasChanges``).
    public var hasPersistentChangedValues: Bool {
        withContextLock {
            if isInsertedState || isDeletedState { return true }
            if linkStates.contains(where: { $0?.hasChanges ?? false }) { return true }
            return persistentChangedSlots != 0
        }
    }

    /// The changed values by key: attributes and to-one relationships set since
    /// the last save or refresh, and to-many relationships whose members changed.
    ///
    /// ```swift
    /// post["title"] = "New"
    /// post.changedValues()   // ["title": "New"]
    /// ```
    public func changedValues() -> [String: AttributeValue] {
        withContextLock {
            var result: [String: AttributeValue] = [:]
            for slot in 0..<layout.slotNames.count where changedSlots & (1 << UInt64(slot)) != 0 {
                result[layout.slotNames[slot]] = values[slot]
            }
            for (i, state) in linkStates.enumerated() {
                guard let state, state.hasChanges else { continue }
                result[layout.links[i].name] = linkValue(i)
            }
            return result
        }
    }

    /// The values last read from the store (or the parent context) for `keys`,
    /// all attributes and to-one relationships when nil.
    public func committedValues(forKeys keys: [String]? = nil) -> [String: AttributeValue] {
        withContextLock {
            try? fireIfNeeded()
            let names = keys ?? layout.slotNames
            var result: [String: AttributeValue] = [:]
            for name in names {
                guard let slot = layout.slotIndex[name] else { continue }
                result[name] = snapshot.isEmpty ? .null : snapshot[slot]
            }
            return result
        }
    }

    // MARK: Values

    /// The value of an attribute or relationship: a to-one as ``AttributeValue/objectID(_:)``
    /// (or nil), a to-many as an array of object IDs. Fires the fault.
    ///
    /// Throws for an unknown key, and for a fault whose row is gone when the
    /// context's ``ManagedObjectContext/shouldDeleteInaccessibleFaults`` is false.
    public func value(forKey key: String) throws -> AttributeValue {
        try withContextLock {
            if let slot = layout.slotIndex[key] {
                try fireIfNeeded()
                return values[slot]
            }
            if case .link(let link) = layout.relationshipKinds[key] {
                try fireIfNeeded()
                try loadLink(link)
                return linkValue(link)
            }
            throw unknownKey(key)
        }
    }

    /// The value of `key` as a Swift type: `String`, `Int`, `Int64`, `Double`, `Bool`,
    /// `Date`, `UUID`, `Data`, `ObjectID`, `[ObjectID]`, or an optional of one.
    ///
    /// ```swift
    /// let title = try post.value(forKey: "title", as: String.self)
    /// let content = try post.value(forKey: "content", as: String?.self)
    /// ```
    public func value<T: AttributeValueConvertible>(forKey key: String, as type: T.Type) throws -> T {
        let value = try value(forKey: key)
        guard let converted = T(attributeValue: value) else {
            throw TributaryError(.typeMismatch, "'\(key)' of \(layout.name) holds \(value.kindName) \(ValueValidator.preview(value)), not \(T.self)", location: id.uriRepresentation,
                                 hint: value.isNull ? "read it as \(T.self)? (an optional)" : "read it as the attribute's type")
        }
        return converted
    }

    /// Sets an attribute (converted to its type) or a relationship (object IDs or
    /// objects' IDs; for to-many, an array), keeping the inverse relationship of
    /// the other side in step.
    ///
    /// ```swift
    /// try post.setValue("Hello", forKey: "title")
    /// try post.setValue(.array([tag.objectID]), forKey: "tags")
    /// ```
    public func setValue(_ value: AttributeValue, forKey key: String) throws {
        guard let context else { throw detached() }
        try context.withLock { try context.setValue(value, forKey: key, of: self) }
    }

    /// Reads or sets a value by key. Reading gives nil (``AttributeValue/null``) where
    /// ``value(forKey:)`` would throw; setting an unknown key or a value of the
    /// wrong type stops the program (a programmer's error): use ``setValue(_:forKey:)``
    /// to get an error instead.
    public subscript(key: String) -> AttributeValue {
        get { (try? value(forKey: key)) ?? .null }
        set {
            do { try setValue(newValue, forKey: key) } catch { preconditionFailure("Tributary: \(error)") }
        }
    }

    // MARK: Hashable, description

    public static func == (lhs: ManagedObject, rhs: ManagedObject) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        withContextLock {
            let state = isDeletedState ? " (deleted)" : isInsertedState ? " (inserted)" : isFaultState ? " (fault)" : ""
            guard !isFaultState else { return "<\(layout.name) \(id)\(state)>" }
            let pairs = layout.slotNames.indices.map { "\(layout.slotNames[$0]): \(values[$0])" }
            return "<\(layout.name) \(id)\(state) { \(pairs.joined(separator: ", ")) }>"
        }
    }

    // MARK: Internals (under the context's lock)

    /// Runs `body` under the owning context's lock (or alone once detached).
    @inline(__always)
    func withContextLock<T>(_ body: () throws -> T) rethrows -> T {
        guard let context else { return try body() }
        return try context.withLock(body)
    }

    var hasLocalChanges: Bool {
        changedSlots != 0 || linkStates.contains { $0?.hasChanges ?? false }
    }

    /// Slots whose current value differs from the snapshot.
    var persistentChangedSlots: UInt64 {
        var mask: UInt64 = 0
        for slot in 0..<layout.slotNames.count where changedSlots & (1 << UInt64(slot)) != 0 {
            if snapshot.isEmpty || values[slot] != snapshot[slot] { mask |= 1 << UInt64(slot) }
        }
        return mask
    }

    /// Loads the row if the object is a fault.
    @inline(__always)
    func fireIfNeeded() throws {
        guard isFaultState else { return }
        guard let context else { throw detached() }
        try context.fireFault(self)
    }

    /// Loads a link relationship's members if they are not loaded.
    func loadLink(_ link: Int) throws {
        if linkStates.isEmpty { linkStates = Array(repeating: nil, count: layout.links.count) }
        if linkStates[link]?.base != nil { return }
        guard let context else { throw detached() }
        let base = isInsertedState ? [] : try context.loadLinkTargets(of: self, link: link)
        var state = linkStates[link] ?? LinkState()
        state.base = base
        linkStates[link] = state
    }

    /// The current members of link `link` (loaded), as a value.
    func linkValue(_ link: Int) -> AttributeValue {
        let members = linkStates[link]?.current ?? []
        if !layout.links[link].isToMany { return members.first.map { .objectID($0) } ?? .null }
        return .array(members.sorted().map { .objectID($0) })
    }

    func unknownKey(_ key: String) -> TributaryError {
        TributaryError(.unknownProperty, "\(layout.name) has no attribute or relationship '\(key)'", location: id.uriRepresentation,
                       hint: "\(layout.name) has \(layout.entity.propertyNames.joined(separator: ", "))")
    }

    func detached() -> TributaryError {
        TributaryError(.objectNotFound, "the object \(id) no longer belongs to a context (it was deleted and saved, or its context is gone)", location: id.uriRepresentation,
                       hint: "fetch it again through a live context")
    }
}

/// What a context gives a new object: opaque outside Tributary.
public struct ManagedObjectSeed {
    let layout: ContextEntity
    let id: ObjectID
    let context: ManagedObjectContext
}

/// Members of a relationship stored outside the object's row: what the store
/// (or parent) holds, once loaded, and what was added and removed since.
struct LinkState: Sendable {
    /// Members as loaded; nil until loaded.
    var base: Set<ObjectID>?
    var added: Set<ObjectID> = []
    var removed: Set<ObjectID> = []

    var hasChanges: Bool { !added.isEmpty || !removed.isEmpty }
    var current: Set<ObjectID> { (base ?? []).subtracting(removed).union(added) }

    mutating func add(_ id: ObjectID) {
        if removed.remove(id) == nil, !(base?.contains(id) ?? false) { added.insert(id) }
    }

    mutating func remove(_ id: ObjectID) {
        if added.remove(id) == nil { removed.insert(id) }
    }
}
