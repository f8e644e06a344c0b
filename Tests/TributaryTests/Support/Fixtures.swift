import Foundation
@testable import Tributary

/// Models and stores the tests share.
enum Fixtures {
    /// The blog model written with the DSL; must equal examples/blog/model.yml.
    static func blogModel() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Post") {
                Attribute("title", .string, optional: false)
                Attribute("content", .string)
                Attribute("externalID", .string, optional: false).unique()
                Attribute("createdAt", .date, optional: false)
                DerivedAttributeDescription("updatedAt", .date, derivation: "now()")
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
                Relationship("attachments", to: "Attachment", inverse: "post", toMany: true, deleteRule: .cascade)
                FetchIndex("createdAt")
            }
            Entity("Tag") {
                Attribute("name", .string, optional: false).unique()
                Attribute("color", .string, default: "gray")
                DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
            Entity("Attachment") {
                Attribute("fileName", .string, optional: false)
                Attribute("mimeType", .string, default: "application/octet-stream")
                Relationship("post", to: "Post", inverse: "attachments")
                Relationship("imageData", to: "ImageData", inverse: "attachment", deleteRule: .cascade)
            }
            Entity("ImageData") {
                Attribute("bytes", .binary).excludedFromHistory()
                Attribute("width", .integer)
                Attribute("height", .integer)
                Relationship("attachment", to: "Attachment", inverse: "imageData")
            }
        }
    }

    /// The repository's root (for examples/ files).
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// A coordinator with the blog model on `description`.
    static func blogCoordinator(_ description: PersistentStoreDescription) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try blogModel())
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    /// A coordinator on the adopted database at `path`, with its stored model, tracking history.
    static func adoptedCoordinator(_ path: URL) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    /// The database at `path` made by the `sqlite3` shell from `schema`, adopted and opened
    /// (``adoptedCoordinator(_:)``), and the token before the caller's writes.
    static func adopted(_ path: URL, schema: String) throws -> (PersistentStoreCoordinator, PersistentHistoryToken) {
        try ForeignWriter.shell(path, schema)
        _ = try PersistentStoreCoordinator.adoptDatabase(at: path)
        let coordinator = try adoptedCoordinator(path)
        return (coordinator, try coordinator.currentPersistentHistoryToken())
    }

    /// Tags and posts: post i has tag (i % tags) and title "Post i".
    @discardableResult
    static func seedBlog(_ coordinator: PersistentStoreCoordinator, posts: Int = 20, tags: [String] = ["swift", "sqlite", "linux"]) throws -> (tags: [ObjectID], posts: [ObjectID]) {
        var tagRequest = BatchInsertRequest(entityName: "Tag", objects: tags.map { ["name": .string($0)] })
        tagRequest.resultType = .objectIDs
        let tagIDs = try coordinator.execute(tagRequest).objectIDs
        var postRequest = BatchInsertRequest(entityName: "Post", objects: (0..<posts).map { i in
            [
                "externalID": .string("ext-\(i)"),
                "title": .string("Post \(i)"),
                "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(i))),
                "tags": .array([.objectID(tagIDs[i % tagIDs.count])]),
            ]
        })
        postRequest.resultType = .objectIDs
        return (tagIDs, try coordinator.execute(postRequest).objectIDs)
    }
}
