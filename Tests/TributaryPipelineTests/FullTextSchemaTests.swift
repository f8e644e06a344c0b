import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryTestSupport

/// The full-text index as the source's model changes (issue 23): an entity listed with `all`
/// gains the string attribute the model gains, and a rename through `tributary migrate`
/// keeps the renamed attribute's column, so documents indexed before the rename are updated
/// in place, and still after the pipeline is run again.
@Suite(.timeLimit(.minutes(5))) struct FullTextSchemaTests {
    @Test func anEntityIndexedWholeGainsNewFieldsAndRenamedOnesKeepTheirColumn() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("blog.sqlite")
        let indexPath = dir.path("search.sqlite")
        let text = "name: search\nsource: {store: \(url.path), snapshot: true}\non_schema_change: apply\nsinks:\n  - type: fts\n    path: \(indexPath)\n    entities: {Post: all}\n"
        let pipeline = try PipelineFixtures.pipeline(text, environment: [:])
        let ids: [ObjectID]
        do {
            let store = try PipelineFixtures.store(at: url)
            ids = try PipelineFixtures.insertPosts(store, count: 4)
            try await PostgresMirror.runToCatchUp(pipeline, store)
        }
        #expect(try FullTextIndex(path: indexPath, create: false).search("sqlite").count == 2, "posts 0 and 3 mention sqlite")

        // Post gains `summary` and its `content` becomes `body`, through tributary migrate.
        let store = try PipelineFixtures.migrateBlog(at: url) { entities in
            let post = entities.firstIndex { $0.name == "Post" }!
            let content = entities[post].attributes.firstIndex { $0.name == "content" }!
            entities[post].attributes[content].name = "body"
            entities[post].attributes[content].renamingIdentifier = "content"
            entities[post].attributes.append(AttributeDescription(name: "summary", type: .string, isOptional: true))
        }
        try store.execute(BatchInsertRequest(entityName: "Post", objects: [["externalID": "new", "title": "New", "body": "giraffe", "summary": "zebra", "createdAt": .date(Date())]]))
        var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["body": .string("walrus")])
        update.objectIDs = [ids[0]]
        try store.execute(update)
        try await PostgresMirror.runToCatchUp(pipeline, store)

        let index = try FullTextIndex(path: indexPath, create: false)
        #expect(try index.search("zebra").map(\.title) == ["New"], "summary, new in the model, is indexed")
        #expect(try index.search("giraffe").map(\.title) == ["New"], "body is indexed in content's column")
        #expect(try index.search("walrus").map(\.object) == [ids[0].uriRepresentation], "the old document is updated in place")
        #expect(try index.search("sqlite").map(\.object) == [ids[3].uriRepresentation])
        #expect(try index.documents().count == 5, "no document twice")

        // Run again (the sink reopens): the renamed field is still body, in content's column.
        update.objectIDs = [ids[3]]
        update.propertiesToUpdate = ["body": .string("narwhal")]
        try store.execute(update)
        try await PostgresMirror.runToCatchUp(pipeline, store)
        #expect(try index.search("sqlite").isEmpty && index.search("narwhal").map(\.object) == [ids[3].uriRepresentation])
        #expect(try index.documents().count == 5)
    }
}

extension FullTextSchemaTests {
    /// An entity renamed through `tributary migrate`: the pipeline stops at the rename (its
    /// file names the old entity); once the file names the new one, the index gives the old
    /// entity's documents to it, so they are updated in place and found under the new name.
    @Test func aRenamedEntityKeepsItsDocumentsOnceThePipelineNamesIt() async throws {
        let dir = TemporaryDirectory()
        let url = dir.url.appendingPathComponent("blog.sqlite")
        let indexPath = dir.path("search.sqlite")
        func pipeline(_ entity: String) throws -> PipelineFile {
            try PipelineFixtures.pipeline("name: search\nsource: {store: \(url.path), snapshot: true}\non_schema_change: apply\nsinks:\n  - type: fts\n    path: \(indexPath)\n    entities: {\(entity): all}\n")
        }
        let ids: [ObjectID]
        do {
            let store = try PipelineFixtures.store(at: url)
            ids = try PipelineFixtures.insertPosts(store, count: 4)
            try await PostgresMirror.runToCatchUp(try pipeline("Post"), store)
        }
        let store = try PipelineFixtures.migrateBlog(at: url) { entities in
            let post = entities.firstIndex { $0.name == "Post" }!
            entities[post].name = "Article"
            entities[post].renamingIdentifier = "Post"
            for i in entities.indices {
                for r in entities[i].relationships.indices where entities[i].relationships[r].destinationEntity == "Post" {
                    entities[i].relationships[r].destinationEntity = "Article"
                }
            }
        }
        var update = BatchUpdateRequest(entityName: "Article", propertiesToUpdate: ["content": .string("walrus")])
        let article = ObjectID(storeID: ids[0].storeID, entityName: "Article", primaryKey: ids[0].primaryKey)
        update.objectIDs = [article]
        try store.execute(update)

        let stopped = await #expect(throws: TributaryError.self) { try await PostgresMirror.runToCatchUp(try pipeline("Post"), store) }
        #expect(stopped?.message.contains("renamed entity Post to Article") == true && stopped?.message.contains("unknown entity 'Post'") == true, "\(String(describing: stopped))")
        try await PostgresMirror.runToCatchUp(try pipeline("Article"), store)
        let index = try FullTextIndex(path: indexPath, create: false)
        #expect(try index.search("walrus").map(\.object) == [article.uriRepresentation], "the old document, updated in place under its new entity")
        #expect(try index.documents().count == 4 && index.documents().allSatisfy { $0.entity == "Article" })
    }
}
