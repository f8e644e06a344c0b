import Foundation
import Tributary

/// A store of the blog model (examples/blog/model.yml) in a fresh temporary directory,
/// opened once per fuzzer process, for the harnesses that compile or decode against a model.
public enum FuzzStore {
    /// The repository's root, found from this file's path (the harnesses are built in place).
    public static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The blog model.
    public static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(yamlFile: repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
        } catch {
            fatalError("fuzz setup: cannot read the blog model: \(error)")
        }
    }()

    /// A coordinator with the blog store open, history on.
    public static let coordinator: PersistentStoreCoordinator = {
        do {
            let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
            let description = PersistentStoreDescription(url: scratchDirectory.appendingPathComponent("blog.sqlite"))
            description.persistentHistoryTracking = true
            _ = try coordinator.addPersistentStore(with: description)
            return coordinator
        } catch {
            fatalError("fuzz setup: cannot open the blog store: \(error)")
        }
    }()

    /// The open store.
    public static var store: PersistentStore { coordinator.persistentStores[0] }

    /// A fresh directory for this process's files (removed by the OS's temporary-file cleanup).
    public static let scratchDirectory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-fuzz-\(getpid())-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            fatalError("fuzz setup: cannot create \(url.path): \(error)")
        }
        return url
    }()
}
