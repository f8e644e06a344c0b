import ArgumentParser
import Foundation
import Tributary

/// `tributary demo`: builds a blog store with batch requests and queries it.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a blog store, import posts and tags through batch requests, query it, and report.",
        discussion: "Example: tributary demo --dir /tmp/tributary-demo"
    )

    @Option(name: .long, help: "Directory for the demo's files (a new temporary one by default).")
    var dir: String?

    @Option(name: .long, help: "Posts to import.")
    var posts: Int = 5000

    func run() async throws {
        let directory = try dir.map { path -> URL in
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            return URL(fileURLWithPath: path)
        } ?? FileManager.default.temporaryDirectory.appendingPathComponent("tributary-demo-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent("blog.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }

        let container = PersistentContainer(name: "Blog", managedObjectModel: try BlogModel.make())
        container.persistentStoreDescriptions = [PersistentStoreDescription(url: url)]
        try await container.loadPersistentStores()
        let coordinator = container.persistentStoreCoordinator
        Console.print("store: \(url.path)")

        let clock = ContinuousClock()
        let start = clock.now
        let tagNames = ["swift", "sqlite", "linux", "coredata", "history", "streams", "testing", "performance", "concurrency", "tools"]
        let tags = try coordinator.execute(objectIDs(BatchInsertRequest(entityName: "Tag", objects: tagNames.map { ["name": .string($0)] }))).objectIDs
        let images = try coordinator.execute(objectIDs(BatchInsertRequest(entityName: "ImageData", objects: (0..<posts / 10).map { i in
            ["bytes": .data(Data(repeating: UInt8(i % 251), count: 64)), "width": .integer(Int64(640 + i % 5)), "height": 480]
        }))).objectIDs
        var postIDs: [ObjectID] = []
        let base = Date(timeIntervalSince1970: 1_700_000_000)
        for batchStart in stride(from: 0, to: posts, by: 1000) {
            let objects: [[String: AttributeValue]] = (batchStart..<min(batchStart + 1000, posts)).map { i in
                [
                    "externalID": .string("post-\(i)"),
                    "title": .string("Post \(i) about \(tagNames[i % tagNames.count])"),
                    "content": .string("Body of post \(i). Lorem ipsum dolor sit amet."),
                    "createdAt": .date(base.addingTimeInterval(Double(i) * 60)),
                    "tags": .array([.objectID(tags[i % tags.count]), .objectID(tags[(i / 7) % tags.count])]),
                ]
            }
            postIDs += try coordinator.execute(objectIDs(BatchInsertRequest(entityName: "Post", objects: objects))).objectIDs
        }
        let attachments = try coordinator.execute(BatchInsertRequest(entityName: "Attachment", objects: images.enumerated().map { i, image in
            ["fileName": .string("image-\(i).png"), "mimeType": "image/png", "post": .objectID(postIDs[i * 10]), "imageData": .objectID(image)]
        }))
        let importTime = clock.now - start
        Console.print("imported \(tags.count) tags, \(postIDs.count) posts, \(attachments.count) attachments and \(images.count) images through batch inserts in \(Self.format(importTime))")

        // A re-import of the first 100 posts updates rather than duplicates (unique externalID).
        let reimport = try coordinator.execute(BatchInsertRequest(entityName: "Post", objects: (0..<100).map { i in
            ["externalID": .string("post-\(i)"), "title": .string("Post \(i), revised"), "createdAt": .date(base.addingTimeInterval(Double(i) * 60))]
        }))
        Console.print("re-imported 100 posts: \(reimport.inserted) inserted, \(reimport.updated) updated; \(try coordinator.count(for: FetchRequest(entityName: "Post"))) posts in all")

        let swiftPosts = try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "ANY tags.name == %@", "swift")))
        Console.print("query: posts tagged swift: \(swiftPosts)")
        let revised = try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title ENDSWITH[c] 'REVISED'")))
        Console.print("query: titles ending in 'revised': \(revised)")
        var latest = FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("createdAt", ascending: false)])
        latest.fetchLimit = 3
        let latestTitles = try coordinator.fetch(latest).compactMap { $0["title"]?.stringValue }
        Console.print("query: latest 3 posts: \(latestTitles.joined(separator: "; "))")
        let withImages = try coordinator.count(for: FetchRequest(entityName: "Attachment", predicate: try StorePredicate(format: "imageData.width >= 642 AND post.title BEGINSWITH 'Post'")))
        Console.print("query: attachments with images at least 642 wide: \(withImages)")

        let recolored = try coordinator.execute(BatchUpdateRequest(entityName: "Tag", predicate: try StorePredicate(format: "name IN %@", .array(["swift", "sqlite"])), propertiesToUpdate: ["color": "orange"]))
        Console.print("batch update: \(recolored.count) tags recolored")
        let cutoff = base.addingTimeInterval(Double(posts / 10) * 60)
        let deleted = try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt < %@", .date(cutoff))))
        Console.print("batch delete: \(deleted.count) posts older than \(ISO8601.string(from: cutoff)), and \(deleted.deleted - deleted.count) attachments and images by cascade")
        for entity in ["Post", "Tag", "Attachment", "ImageData"] {
            Console.print("  \(entity): \(try coordinator.count(for: FetchRequest(entityName: entity))) rows")
        }
        Console.print("done in \(Self.format(clock.now - start)); files in \(directory.path)")
    }

    private func objectIDs(_ request: BatchInsertRequest) -> BatchInsertRequest {
        var request = request
        request.resultType = .objectIDs
        return request
    }

    static func format(_ duration: Duration) -> String {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return String(format: "%.0f ms", ms)
    }
}
