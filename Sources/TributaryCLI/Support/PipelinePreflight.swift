import Foundation
import Tributary
import TributaryPipeline

/// What `run` checks and says before a pipeline starts: names the source's model lacks are
/// refused, and whether the pipeline continues an existing consumer (and from where) or starts one.
enum PipelinePreflight {
    /// Checks `file` against its store's model; returns the line saying where its consumer stands,
    /// or nil when the store cannot be read here (the runner then reports why).
    static func check(_ file: PipelineFile) throws -> String? {
        guard FileManager.default.fileExists(atPath: file.source.store) else { return nil }
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: file.source.store))
        description.isReadOnly = true
        let store: PersistentStore
        do {
            store = try coordinator.addPersistentStore(with: description)
        } catch {
            return nil
        }
        defer { coordinator.remove(store) }
        try file.checkNames(against: store.model)
        guard store.isHistoryTracked else { return nil }
        let name = TerminalText.escaped(file.source.consumer)
        if let consumer = try coordinator.historyConsumers().first(where: { $0.name == file.source.consumer }) {
            return "pipeline \(TerminalText.escaped(file.name)): reusing consumer \(name) at token \(consumer.token) (last commit \(ISO8601.string(from: consumer.committedAt)), \(Plural.counted(consumer.lagTransactions, "transaction")) to read)"
        }
        let start = file.source.snapshot ? "with a snapshot of the current rows" : "at the oldest kept history (\(try coordinator.oldestKeptHistoryToken()))"
        return "pipeline \(TerminalText.escaped(file.name)): new consumer \(name), starting \(start)"
    }
}
