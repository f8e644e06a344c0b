import Foundation
import Tributary

/// A store of the blog model (examples/blog/model.yml) in a fresh temporary directory,
/// opened once per process, for the targets that compile or decode against a model.
enum FuzzStore {
    /// The repository's root, found from this file's path (the harnesses and tests are built in place).
    static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The blog model.
    static let model: ManagedObjectModel = {
        do {
            return try ManagedObjectModel(yamlFile: repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
        } catch {
            fatalError("fuzz setup: cannot read the blog model: \(error)")
        }
    }()

    /// A coordinator with the blog store open, history on.
    static let coordinator: PersistentStoreCoordinator = {
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
    static var store: PersistentStore { coordinator.persistentStores[0] }

    /// A fresh directory for this process's files (removed by the OS's temporary-file cleanup).
    static let scratchDirectory: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-fuzz-\(getpid())-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        } catch {
            fatalError("fuzz setup: cannot create \(url.path): \(error)")
        }
        return url
    }()
}

extension FuzzStore {
    /// An NDJSON decoder for every entity of the blog model.
    static let decoders: [NDJSONDecoder] = model.entities.compactMap { try? NDJSONDecoder(entity: $0.name, store: store) }
}
