import Foundation
import Tributary
import TributaryHTTPSink
import TributaryNATSSink
import TributaryPipeline
import TributaryPostgresSink
import TributaryRedisSink
import TributaryStreams
import TributaryTestSupport

/// Stores, workloads and pipelines the pipeline tests share.
enum PipelineFixtures {
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A new blog store with history at `url`.
    static func store(at url: URL) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let model = try ManagedObjectModel(yamlFile: repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    /// Inserts `count` posts (prefix in their external IDs), in transactions of `perTransaction`.
    @discardableResult
    static func insertPosts(_ coordinator: PersistentStoreCoordinator, count: Int, from start: Int = 0, perTransaction: Int = 10) throws -> [ObjectID] {
        var ids: [ObjectID] = []
        var i = start
        while i < start + count {
            let n = min(perTransaction, start + count - i)
            var request = BatchInsertRequest(entityName: "Post", objects: (i..<(i + n)).map { k in
                ["externalID": .string("ext-\(k)"), "title": .string("Post \(k) about \(k % 2 == 0 ? "swift" : "linux")"),
                 "content": .string("Body \(k) \(k % 3 == 0 ? "sqlite" : "history")"), "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(k)))]
            })
            request.resultType = .objectIDs
            ids += try coordinator.execute(request).objectIDs
            i += n
        }
        return ids
    }

    /// Updates the titles of `ids` and deletes every fifth of them.
    static func editPosts(_ coordinator: PersistentStoreCoordinator, _ ids: [ObjectID], round: Int) throws {
        var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .string("Edited \(round) swift")])
        update.objectIDs = ids
        try coordinator.execute(update)
        var delete = BatchDeleteRequest(entityName: "Post")
        delete.objectIDs = ids.enumerated().filter { $0.offset % 5 == 0 }.map(\.element)
        try coordinator.execute(delete)
    }

    /// Every change's position in `store`'s history, oldest first.
    static func historyPositions(_ store: PersistentStoreCoordinator) throws -> [StreamPosition] {
        var positions: [StreamPosition] = []
        try store.enumerateHistoryChanges(.fetchHistory(after: nil)) { positions.append(StreamPosition(token: $0.token.value, index: $0.index)) }
        return positions
    }

    /// The sink types under test: the standard ones and every sink module.
    static let sinks: SinkRegistry = SinkRegistry.standard.registering(HTTPSinkSettings.self, PostgresSinkSettings.self, NATSSinkSettings.self, RedisSinkSettings.self)

    /// Migrates the blog store at `url` with `tributary migrate` (a real process) to the blog
    /// model as `edit` changes it, and opens it with that model.
    static func migrateBlog(at url: URL, _ edit: (inout [EntityDescription]) -> Void) throws -> PersistentStoreCoordinator {
        var entities = try ManagedObjectModel(yamlFile: repositoryRoot.appendingPathComponent("examples/blog/model.yml")).entities
        edit(&entities)
        let model = try ManagedObjectModel(entities: entities)
        let modelFile = url.deletingLastPathComponent().appendingPathComponent("migrated-\(UUID().uuidString).yml")
        try model.yamlText.write(to: modelFile, atomically: true, encoding: .utf8)
        let migrate = try TributaryProcess.run(["migrate", url.path, "--model", modelFile.path], executable: TributaryProcess.binary)
        guard migrate.status == 0 else { throw TributaryError(.invalidInput, "tributary migrate failed: \(migrate.stderr)") }
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let store = PersistentStoreCoordinator(managedObjectModel: model)
        try store.addPersistentStore(with: description)
        return store
    }

    /// A pipeline read from `yaml` (path `test.yml`), with `environment`, knowing every sink type.
    static func pipeline(_ yaml: String, environment: [String: String] = [:]) throws -> PipelineFile {
        try PipelineFile(yaml: yaml, path: "test.yml", environment: environment, sinks: sinks)
    }
}

/// A temporary directory removed when released.
final class TemporaryDirectory: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-pipeline-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
    deinit { try? FileManager.default.removeItem(at: url) }
}
