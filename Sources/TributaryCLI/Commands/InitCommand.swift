import ArgumentParser
import Foundation
import Tributary

/// `tributary init STORE --model FILE`: creates a store, or migrates it additively.
struct InitCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init",
        abstract: "Create a store from a YAML model (or migrate an existing one additively).",
        discussion: "Example: tributary init blog.sqlite --model examples/blog/model.yml"
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "The YAML model file.")
    var model: String

    @Flag(name: .long, help: "Record history for every write (kept on once the store has history).")
    var history = false

    func run() async throws {
        let model = try ManagedObjectModel(yamlFile: URL(fileURLWithPath: self.model))
        let existed = FileManager.default.fileExists(atPath: storeOptions.store)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: storeOptions.url)
        description.busyTimeout = storeOptions.busyTimeout
        description.persistentHistoryTracking = history
        let store = try coordinator.addPersistentStore(with: description)
        for change in store.migrationChanges { Console.print("migrated: \(change)") }
        let entities = store.model.entities.map(\.name).joined(separator: ", ")
        Console.print("\(existed ? "opened" : "created") \(storeOptions.store): store \(store.identifier.uuidString.lowercased()), entities \(entities)\(store.isHistoryTracked ? ", history on" : "")")
    }
}
