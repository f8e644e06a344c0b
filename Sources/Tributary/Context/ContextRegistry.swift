import Synchronization

/// The live contexts of one coordinator, held weakly, so a save can reach its siblings.
final class ContextRegistry: Sendable {
    private let entries = Locked<[WeakContext]>([])

    func add(_ context: ManagedObjectContext) {
        entries.withLock { entries in
            entries.removeAll { $0.context == nil }
            entries.append(WeakContext(context))
        }
    }

    /// The live contexts.
    var all: [ManagedObjectContext] {
        entries.withLock { $0.compactMap(\.context) }
    }
}

/// The ``ManagedObject`` subclass each entity's objects are made as (``ManagedObject`` itself by default).
final class ObjectClassRegistry: Sendable {
    private let classes = Locked<[String: ManagedObject.Type]>([:])

    func register<T: EntityNamed>(_ type: T.Type) {
        register(type, for: T.entityName)
    }

    func register(_ type: ManagedObject.Type, for entityName: String) {
        classes.withLock { classes in
            if classes[entityName] == nil { classes[entityName] = type }
        }
    }

    /// Registers the classes the model maps its entities to.
    func register(_ model: ManagedObjectModel?) {
        for entity in model?.entities ?? [] {
            if let type = entity.managedObjectClass { register(type, for: entity.name) }
        }
    }

    func type(for entityName: String) -> ManagedObject.Type {
        classes.withLock { $0[entityName] } ?? ManagedObject.self
    }
}

extension PersistentStoreCoordinator {
    /// Makes contexts create `type` for its entity's objects. The typed context
    /// methods register their type themselves; register before a context first
    /// meets objects of the entity another way (a relationship, an ID).
    ///
    /// ```swift
    /// coordinator.registerSubclass(Post.self)
    /// ```
    public func registerSubclass<T: EntityNamed>(_ type: T.Type) {
        objectClasses.register(type)
    }
}
