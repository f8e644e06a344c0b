import Foundation
import Testing
@testable import Tributary

/// Explicit migrations of relationships: a renamed to-one keeps its links in its renamed
/// column, a removed entity takes its relationships' columns with it, and a rename that
/// would move a one-to-one's key to the other table is refused.
@Suite struct ExplicitRelationshipMigrationTests {
    let dir = TemporaryDirectory()
    var url: URL { dir.file("blog.sqlite") }

    /// The blog store with two posts, each with an attachment (and the first with image data).
    func makeStore() throws -> [ObjectID] {
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: url))
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
        var request = BatchInsertRequest(entityName: "Attachment", objects: posts.map { ["fileName": .string("f\($0.primaryKey)"), "post": .objectID($0)] })
        request.resultType = .objectIDs
        let attachments = try coordinator.execute(request).objectIDs
        try coordinator.execute(BatchInsertRequest(entityName: "ImageData", objects: [["width": 10, "attachment": .objectID(attachments[0])]]))
        coordinator.remove(coordinator.persistentStores[0])
        return posts
    }

    /// The blog model changed by `edit`.
    func blog(_ edit: (inout [EntityDescription]) -> Void) throws -> ManagedObjectModel {
        var entities = try Fixtures.blogModel().entities
        edit(&entities)
        return try ManagedObjectModel(entities: entities)
    }

    func migrate(to model: ManagedObjectModel) throws -> (PersistentStoreCoordinator, [String]) {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: url)
        description.allowsExplicitMigration = true
        return (coordinator, try coordinator.addPersistentStore(with: description).migrationChanges)
    }

    func index(_ entities: [EntityDescription], _ name: String) -> Int { entities.firstIndex { $0.name == name }! }

    func schemaSQL() throws -> String {
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        return try db.scalar("SELECT group_concat(name, ' ') FROM sqlite_master WHERE name NOT LIKE '%tributary%'")?.stringValue ?? ""
    }

    @Test func aRenamedToOneKeepsItsLinks() throws {
        let posts = try makeStore()
        let model = try blog { entities in
            let (attachment, post) = (index(entities, "Attachment"), index(entities, "Post"))
            let link = entities[attachment].relationships.firstIndex { $0.name == "post" }!
            entities[attachment].relationships[link].name = "owner"
            entities[attachment].relationships[link].renamingIdentifier = "post"
            let inverse = entities[post].relationships.firstIndex { $0.name == "attachments" }!
            entities[post].relationships[inverse].inverseName = "owner"
        }
        let (coordinator, changes) = try migrate(to: model)
        #expect(changes == ["renamed Attachment.post to Attachment.owner"])
        let owned = try coordinator.fetch(FetchRequest(entityName: "Attachment", predicate: try StorePredicate(format: "owner == %@", .objectID(posts[1]))))
        #expect(owned.map { $0["fileName"] } == [.string("f\(posts[1].primaryKey)")])
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "attachments.@count == 1"))) == 2)
        let names = try schemaSQL()
        #expect(names.contains("Attachment_fk_owner") && !names.contains("Attachment_fk_post"), "\(names)")
    }

    @Test func aRemovedEntityTakesTheColumnsOfItsRelationships() throws {
        _ = try makeStore()
        let model = try blog { entities in
            entities.remove(at: index(entities, "ImageData"))
            let attachment = index(entities, "Attachment")
            entities[attachment].relationships.removeAll { $0.name == "imageData" }
        }
        let (coordinator, changes) = try migrate(to: model)
        #expect(changes == ["removed entity ImageData", "removed Attachment.imageData"])
        #expect(try coordinator.count(for: FetchRequest(entityName: "Attachment")) == 2)
        let db = try Connection(path: url.path, options: ConnectionOptions(readOnly: true))
        #expect(try db.scalar("SELECT count(*) FROM pragma_table_info('Attachment') WHERE name = 'imageData'")?.integerValue == 0)
        let names = try schemaSQL()
        #expect(!names.contains("ImageData") && !names.contains("Attachment_fk_imageData"), "\(names)")
    }

    @Test func aRenameThatWouldMoveAOneToOnesKeyIsRefused() throws {
        _ = try makeStore()
        // (Attachment, imageData) sorts before (ImageData, attachment): the key is on Attachment.
        // Renamed to Zattachment, it would belong on ImageData's table.
        let model = try blog { entities in
            let (attachment, post, image) = (index(entities, "Attachment"), index(entities, "Post"), index(entities, "ImageData"))
            entities[attachment].name = "Zattachment"
            entities[attachment].renamingIdentifier = "Attachment"
            let inverse = entities[post].relationships.firstIndex { $0.name == "attachments" }!
            entities[post].relationships[inverse].destinationEntity = "Zattachment"
            entities[image].relationships[0].destinationEntity = "Zattachment"
        }
        let error = try #require(throws: TributaryError.self) { _ = try migrate(to: model) }
        #expect(error.code == .incompatibleModel)
        #expect(error.message.contains("would move the key of the one-to-one relationship Zattachment.imageData to ImageData's table"), "\(error.message)")
        #expect(try schemaSQL().contains("Attachment_fk_imageData"))
    }
}
