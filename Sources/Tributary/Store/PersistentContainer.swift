import Foundation
import Synchronization

/// A model, a coordinator and the descriptions of its store, set up together
/// (Core Data's `NSPersistentContainer`).
///
/// ```swift
/// let container = PersistentContainer(name: "Blog", managedObjectModel: model)
/// container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
/// try await container.loadPersistentStores()
/// let coordinator = container.persistentStoreCoordinator
/// ```
public final class PersistentContainer: Sendable {
    /// The container's name; the default store file is `<name>.sqlite`.
    public let name: String
    /// The model.
    public let managedObjectModel: ManagedObjectModel
    /// The coordinator that opens the stores.
    public let persistentStoreCoordinator: PersistentStoreCoordinator
    /// The context of the interface, on the main queue (Core Data's `viewContext`).
    public let viewContext: ManagedObjectContext
    private let descriptions: Locked<[PersistentStoreDescription]>

    /// A container whose default store is `defaultDirectoryURL()/<name>.sqlite`.
    public init(name: String, managedObjectModel: ManagedObjectModel) {
        self.name = name
        self.managedObjectModel = managedObjectModel
        self.persistentStoreCoordinator = PersistentStoreCoordinator(managedObjectModel: managedObjectModel)
        self.viewContext = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: persistentStoreCoordinator)
        let url = Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite")
        self.descriptions = Locked([PersistentStoreDescription(url: url)])
    }

    /// The stores `loadPersistentStores()` opens; set before loading.
    public var persistentStoreDescriptions: [PersistentStoreDescription] {
        get { descriptions.withLock { $0 } }
        set { descriptions.withLock { $0 = newValue } }
    }

    /// Where default stores go: `$XDG_DATA_HOME/tributary`, or `~/.local/share/tributary`.
    public static func defaultDirectoryURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_DATA_HOME"].map { URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("tributary")
    }

    /// Opens every described store (creating the default directory when needed).
    @discardableResult
    public func loadPersistentStores() async throws -> [PersistentStore] {
        var stores: [PersistentStore] = []
        for description in persistentStoreDescriptions {
            if case .file(let path) = description.kind, description.url.deletingLastPathComponent() == Self.defaultDirectoryURL() {
                try? FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            }
            stores.append(try persistentStoreCoordinator.addPersistentStore(with: description))
        }
        return stores
    }
}
