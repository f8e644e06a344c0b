import Foundation
import Synchronization
import Tributary
import TributaryPipeline
import TributaryStreams

/// The steps of `tributary demo`, each a plain method, run in order by ``DemoCommand``:
/// an importer and an app merging its changes through the watcher, the audit trail,
/// export, verify, replay, pruning, and a closing report.
struct DemoStory {
    let directory: URL
    let posts: Int
    let storeURL: URL
    private(set) var report: [(String, String)] = []

    private static let tagNames = ["swift", "sqlite", "linux", "coredata", "history", "streams", "testing", "performance", "concurrency", "tools"]
    private let base = Date(timeIntervalSince1970: 1_700_000_000)

    init(directory: URL, posts: Int) {
        self.directory = directory
        self.posts = posts
        storeURL = directory.appendingPathComponent("blog.sqlite")
    }

    /// The store's description: history and remote change notifications on.
    var description: PersistentStoreDescription {
        let description = PersistentStoreDescription(url: storeURL)
        description.persistentHistoryTracking = true
        description.remoteChangeNotificationPost = true
        return description
    }

    /// Removes what an earlier run left.
    func clean() throws {
        for name in ["blog.sqlite", "copy.sqlite", "search.sqlite"] {
            for suffix in ["", "-wal", "-shm", "-notify"] { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name + suffix)) }
        }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent("stream"))
    }

    mutating func add(_ name: String, _ value: String) {
        report.append((name, value))
    }

    /// The app's side: a coordinator whose view context merges other writers' saves,
    /// a live result of posts tagged swift, and a watcher timing each import's arrival.
    /// The importer (a second coordinator, as another process would be) imports
    /// batches; returns the latencies from each commit to the watcher's handler.
    mutating func importWhileWatching() async throws -> (app: PersistentStoreCoordinator, latencies: [Double]) {
        let model = try BlogModel.make()
        let app = PersistentStoreCoordinator(managedObjectModel: model)
        try app.addPersistentStore(with: description)
        let importer = PersistentStoreCoordinator(managedObjectModel: model)
        try importer.addPersistentStore(with: description)

        let viewContext = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: app)
        viewContext.name = "view"
        try viewContext.setQueryGenerationFrom(.current)
        viewContext.automaticallyMergesChangesFromParent = true
        var swiftPosts = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == 'swift'"), sortDescriptors: [SortDescriptor("title")])
        swiftPosts.fetchBatchSize = 100
        let live = try FetchedResultsController(fetchRequest: swiftPosts, managedObjectContext: viewContext)
        try live.performFetch()
        let liveChanges = LiveCount()
        let liveTask = Task { for await change in live.changes() { liveChanges.add(change.difference.insertions.count) } }

        // The watcher: when each transaction arrived.
        var configuration = HistoryWatcher.Configuration()
        configuration.filter.authors = ["importer"]
        let watcher = try HistoryWatcher(coordinator: app, configuration: configuration)
        let arrivals = Arrivals()
        let watching = Task { await watcher.run { batch in arrivals.record(batch.map(\.token.value)) } }
        try await Task.sleep(for: .milliseconds(50))   // the watcher is listening

        // The importer: tags, then posts in batches of 250, each a transaction; times each commit.
        var commits: [Int64: ContinuousClock.Instant] = [:]
        let clock = ContinuousClock()
        var tagRequest = BatchInsertRequest(entityName: "Tag", objects: Self.tagNames.map { ["name": .string($0)] })
        tagRequest.resultType = .objectIDs
        tagRequest.transaction = TransactionMetadata(author: "importer", contextName: "feed")
        let tags = try importer.execute(tagRequest).objectIDs
        commits[try importer.currentPersistentHistoryToken().value] = clock.now
        let start = clock.now
        for batchStart in stride(from: 0, to: posts, by: 250) {
            var request = BatchInsertRequest(entityName: "Post", objects: (batchStart..<min(batchStart + 250, posts)).map { i in
                [
                    "externalID": .string("post-\(i)"),
                    "title": .string("Post \(i) about \(Self.tagNames[i % Self.tagNames.count])"),
                    "content": .string("Body of post \(i). Lorem ipsum dolor sit amet."),
                    "createdAt": .date(base.addingTimeInterval(Double(i) * 60)),
                    "tags": .array([.objectID(tags[i % tags.count]), .objectID(tags[(i / 7) % tags.count])]),
                ]
            })
            request.transaction = TransactionMetadata(author: "importer", contextName: "feed")
            request.resultType = .statusOnly
            try importer.execute(request)
            let committed = clock.now
            commits[try importer.currentPersistentHistoryToken().value] = committed
            try await Task.sleep(for: .milliseconds(2))
        }
        // A re-import of 100 posts updates them (unique externalID), as a feed sending them again would.
        var reimport = BatchInsertRequest(entityName: "Post", objects: (0..<100).map { i in
            ["externalID": .string("post-\(i)"), "title": .string("Post \(i), revised"), "createdAt": .date(base.addingTimeInterval(Double(i) * 60))]
        })
        reimport.transaction = TransactionMetadata(author: "importer", contextName: "feed")
        let reimported = try importer.execute(reimport)
        commits[try importer.currentPersistentHistoryToken().value] = clock.now
        let importTime = clock.now - start
        add("import", "\(posts) posts in \(commits.count - 2) transactions of 250, then 100 re-imported (\(reimported.updated) updated, \(reimported.inserted) inserted), in \(Self.format(importTime))")

        let last = try importer.currentPersistentHistoryToken().value
        _ = await arrivalsUntil(arrivals, last)
        watching.cancel()
        await watching.value
        let latencies = commits.compactMap { token, committed in arrivals.time(of: token).map { ($0 - committed) } }
            .map { max(0, Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15) }   // a handler may run before the importer's clock reading
        // The view context merged the importer's saves: its live result holds the swift posts.
        let merged = await waitUntil { live.fetchedObjectIDs.count == (try? app.count(for: swiftPosts)) ?? -1 }
        liveTask.cancel()
        add("merged", "the app's view context merged the importer's saves through the watcher: \(live.fetchedObjectIDs.count) posts tagged swift in its live result\(merged ? "" : " (still merging)"), \(liveChanges.value) reported as insertions")
        withExtendedLifetime(viewContext) {}
        return (app, latencies)
    }

    private func arrivalsUntil(_ arrivals: Arrivals, _ token: Int64) async -> Bool {
        await waitUntil { arrivals.time(of: token) != nil }
    }

    private func waitUntil(_ condition: () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return condition()
    }

    /// An editor context changes a post and deletes old ones; the audit trail shows them.
    mutating func editAndTail(_ app: PersistentStoreCoordinator) throws -> [String] {
        let editor = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: app)
        editor.name = "editor"
        editor.transactionAuthor = "alice"
        try editor.performAndWait {
            var request = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID == %@", .string("post-\(posts - 1)")))
            request.fetchLimit = 1
            if let post = try editor.fetch(request).first {
                post["title"] = .string("Post \(posts - 1), edited by Alice")
                post["content"] = "Rewritten."
            }
            try editor.save()
        }
        let cutoff = base.addingTimeInterval(Double(posts / 10) * 60)
        var delete = BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt < %@", .date(cutoff)))
        delete.transaction = TransactionMetadata(author: "retention", contextName: "cleanup")
        let deleted = try app.execute(delete)
        add("edits", "alice edited a post in a context; retention deleted \(deleted.count) old posts")
        var request = PersistentHistoryChangeRequest.fetchHistory(withFilter: HistoryFilter())
        request.filter.authors = ["alice"]
        var lines: [String] = []
        for transaction in try app.fetchHistory(request).suffix(1) { lines += HistoryFormatter.lines(transaction) }
        return lines
    }

    /// Another program writes the store (the `sqlite3` shell, which knows nothing of
    /// Tributary); its write is in the audit trail with its before and after values.
    mutating func shellEdit(_ app: PersistentStoreCoordinator) throws -> [String] {
        let start = try app.currentPersistentHistoryToken()
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        let sql = "UPDATE Post SET title = 'Post \(posts - 2), fixed in the sqlite3 shell' WHERE externalID = 'post-\(posts - 2)'"
        shell.arguments = ["sqlite3", "-cmd", ".timeout 5000", storeURL.path, sql]
        shell.standardError = FileHandle.nullDevice
        do {
            try shell.run()
            shell.waitUntilExit()
        } catch {
            return ["(no sqlite3 shell on PATH: install it, e.g. apt-get install sqlite3, to see another program's write captured)"]
        }
        guard shell.terminationStatus == 0 else { return ["(the sqlite3 shell failed with status \(shell.terminationStatus))"] }
        let transactions = try app.fetchHistory(.fetchHistory(after: start))
        add("foreign", "the sqlite3 shell updated a post: \(transactions.count) history transaction, process foreign, with before and after values")
        return transactions.flatMap { HistoryFormatter.lines($0) }
    }

    /// Exports the history to compressed segments, verifies them, replays them into a copy.
    mutating func exportVerifyReplay(_ app: PersistentStoreCoordinator) throws -> Bool {
        let stream = directory.appendingPathComponent("stream")
        var options = ExportOptions()
        options.consumerName = "demo-export"
        let clock = ContinuousClock()
        let start = clock.now
        let exporter = try StreamExporter(coordinator: app, directory: stream, options: options)
        let summary = try exporter.exportOnce()
        let seconds = max(1e-9, Self.seconds(clock.now - start))
        let verified = try StreamVerifier(directory: stream).verify()
        let ratio = Double(verified.decompressedBytes) / Double(max(1, verified.bytes))
        add("export", "\(summary.records) records to \(verified.segments) zstd segments at \(Int64(saturating: Double(summary.records) / seconds)) records/s, \(verified.bytes) bytes for \(verified.decompressedBytes) of NDJSON (\(String(format: "%.1f", ratio))× smaller)")
        add("verify", "manifest, SHA-256 and zstd checksums of \(verified.segments) segments and \(verified.records) records: intact")
        let replayer = try StreamReplayer(directory: stream)
        let copyURL = directory.appendingPathComponent("copy.sqlite")
        let copy = try replayer.openTarget(at: copyURL)
        let replayed = try replayer.replay(into: copy, verified: true)
        let (source, replica) = (try Self.rows(of: app), try Self.rows(of: copy))
        let equal = source == replica
        if !equal, ProcessInfo.processInfo.environment["TRIBUTARY_DEMO_DEBUG"] != nil {
            print(Set(source).subtracting(replica).sorted().prefix(3), Set(replica).subtracting(source).sorted().prefix(3))
        }
        add("replay", "\(replayed.records) records into \(copyURL.lastPathComponent): \(equal ? "equal to the source, row for row" : "DIFFERENT from the source")")
        return equal
    }

    /// Runs the shipped search-index pipeline (pipelines/search-index.yml) until caught
    /// up, then queries the full-text index; returns the first hit's snippet.
    mutating func searchIndex(_ app: PersistentStoreCoordinator) async throws -> String? {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("pipelines/search-index.yml")
        var environment = ProcessInfo.processInfo.environment
        environment["TRIBUTARY_STORE"] = storeURL.path
        environment["TRIBUTARY_OUT"] = directory.path
        environment["TRIBUTARY_METRICS"] = ""
        let pipeline = try PipelineFile(contentsOf: file, environment: environment, sinks: .tributary)
        let runner = try PipelineRunner(pipeline: pipeline, environment: environment)
        var indexed = 0
        while true {
            let step = try await runner.runOnce()
            indexed += step.delivered
            if step.caughtUp && step.read == 0 { break }
        }
        try await runner.finish()
        let index = try FullTextIndex(path: directory.appendingPathComponent("search.sqlite").path, create: false)
        let hits = try index.search("edited AND alice", limit: 3)
        add("search", "search-index pipeline indexed \(indexed) records; 'edited AND alice' finds \(hits.count): \(hits.first.map { "\($0.entity) \($0.snippet)" } ?? "nothing")")
        return hits.first?.snippet
    }

    /// Prunes the history every consumer has read.
    mutating func prune(_ app: PersistentStoreCoordinator) throws {
        let before = try app.countHistory(.fetchHistory(after: nil))
        let result = try app.deleteHistory(.deleteConsumedHistory())
        let after = try app.countHistory(.fetchHistory(after: nil))
        add("prune", "history kept: \(before) transactions before pruning what the export consumer read, \(after) after (\(result.changes) changes pruned)")
    }

    /// Every row of every entity, with its values and links (attributes derived with now() left out: each store's own time).
    static func rows(of coordinator: PersistentStoreCoordinator) throws -> [String] {
        // Object IDs without the store's UUID: a copy is another store.
        func text(_ value: AttributeValue) -> String {
            switch value {
            case .objectID(let id): return "\(id.entityName)/p\(id.primaryKey)"
            case .array(let items): return "[" + items.map(text).joined(separator: ",") + "]"
            default: return value.description
            }
        }
        guard let model = coordinator.managedObjectModel else { return [] }
        var lines: [String] = []
        for entity in model.entities {
            let local = Set(entity.attributes.filter { $0.derivation == .now }.map(\.name))
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            for object in try context.fetch(FetchRequest(entityName: entity.name)) {
                let values = entity.propertyNames.filter { !local.contains($0) }.map { "\($0)=\(text(object[$0]))" }
                lines.append("\(object.objectID.primaryKey) \(entity.name) " + values.joined(separator: " "))
            }
        }
        return lines.sorted()
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.0f ms", seconds(duration) * 1000)
    }

    static func percentile(_ values: [Double], _ p: Double) -> Double {
        guard !values.isEmpty else { return 0 }
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * p).rounded()))]
    }
}

/// When each history token reached the watcher's handler.
final class Arrivals: Sendable {
    private let times = Mutex<[Int64: ContinuousClock.Instant]>([:])
    func record(_ tokens: [Int64]) {
        let now = ContinuousClock.now
        times.withLock { for token in tokens where $0[token] == nil { $0[token] = now } }
    }
    func time(of token: Int64) -> ContinuousClock.Instant? { times.withLock { $0[token] } }
}

/// A counter shared with a task.
final class LiveCount: Sendable {
    private let count = Mutex(0)
    func add(_ n: Int) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}
