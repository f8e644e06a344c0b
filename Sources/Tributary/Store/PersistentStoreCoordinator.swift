import Foundation
import Synchronization

/// Opens a store and runs requests against it: fetches and batch requests.
/// Each coordinator owns one writer connection and a pool of readers.
///
/// ```swift
/// let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
/// try coordinator.addPersistentStore(with: PersistentStoreDescription(url: url))
/// let count = try coordinator.count(for: FetchRequest(entityName: "Post"))
/// ```
///
/// A coordinator made without a model opens a store with the model cached in it,
/// which is how tools read any store without the application's code.
public final class PersistentStoreCoordinator: Sendable {
    let givenModel: ManagedObjectModel?
    private let openStore = Locked<PersistentStore?>(nil)
    /// The contexts working on this coordinator (for merging saves between them).
    let contexts = ContextRegistry()
    /// The ``ManagedObject`` subclass of each entity.
    let objectClasses = ObjectClassRegistry()
    /// Tokens of this coordinator's context saves, which its contexts' watchers skip.
    let localCommits = LocalCommits()

    /// A coordinator for `model`, or for whatever model the store holds when nil.
    public init(managedObjectModel: ManagedObjectModel? = nil) {
        self.givenModel = managedObjectModel
        objectClasses.register(managedObjectModel)
    }

    /// The model in force: the open store's, or the one given.
    public var managedObjectModel: ManagedObjectModel? {
        openStore.withLock { $0?.model } ?? givenModel
    }

    /// The open stores (zero or one).
    public var persistentStores: [PersistentStore] {
        openStore.withLock { $0.map { [$0] } ?? [] }
    }

    /// Opens the store described, creating or migrating it to the coordinator's model.
    /// A coordinator holds one store; adding a second throws.
    @discardableResult
    public func addPersistentStore(with description: PersistentStoreDescription) throws -> PersistentStore {
        let store = try PersistentStore.open(description, model: givenModel)
        try openStore.withLock { current in
            if current != nil {
                store.close()
                throw TributaryError(.invalidInput, "the coordinator already has a store", hint: "use one coordinator per store")
            }
            current = store
        }
        return store
    }

    /// Closes the store and removes it from the coordinator.
    public func remove(_ store: PersistentStore) {
        openStore.withLock { current in
            if current === store { current = nil }
        }
        store.close()
    }

    /// Migrates the open store to `model` in place, as opening it with `model` and
    /// ``PersistentStoreDescription/allowsExplicitMigration`` would (additive changes, and
    /// the renames, removals and conversions `tributary migrate` makes), recording the
    /// schema transaction when it keeps history: the store is closed and opened again with
    /// `model`. A replica applying a stream's schema record does this. A change that cannot
    /// be made throws `incompatibleModel`, the store left open as it was.
    ///
    /// ```swift
    /// try replica.migrateStore(to: schemaRecord.change.model)
    /// ```
    public func migrateStore(to model: ManagedObjectModel) throws {
        let store = try requireStore()
        guard store.model != model else { return }
        try openStore.withLock { current in
            guard current === store else { throw TributaryError(.noStore, "the coordinator's store changed while migrating") }
            store.close()
            // The model comes from the source's schema history: its renames, removals and
            // conversions were checked there, so the replica takes them as an explicit migration.
            let explicit = store.description.copy()
            explicit.allowsExplicitMigration = true
            do {
                current = try PersistentStore.open(explicit, model: model)
            } catch {
                current = try PersistentStore.open(store.description, model: store.model)
                throw error
            }
        }
        objectClasses.register(model)
    }

    /// The open store, or an error saying none is.
    func requireStore() throws -> PersistentStore {
        guard let store = openStore.withLock({ $0 }) else {
            throw TributaryError(.noStore, "the coordinator has no store", hint: "call loadPersistentStores() or addPersistentStore(with:) first")
        }
        return store
    }
}
