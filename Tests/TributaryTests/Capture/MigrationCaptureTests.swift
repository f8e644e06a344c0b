import Foundation
import Testing
@testable import Tributary

/// A store with history keeps recording after an explicit migration: Tributary's writes and
/// other programs' (the capture triggers are installed again for the renamed tables and
/// columns, in the migration's transaction, so no gap is recorded); history written before
/// keeps the old names.
@Suite struct MigrationCaptureTests {
    let dir = TemporaryDirectory()
    var path: URL { dir.file("blog.sqlite") }

    func change(_ transactions: [PersistentHistoryTransaction], _ entity: String, _ type: PersistentHistoryChangeType) -> PersistentHistoryChange? {
        transactions.flatMap(\.changes).first { $0.entityName == entity && $0.changeType == type }
    }

    func property(_ change: PersistentHistoryChange?, _ name: String) -> PropertyChange? {
        change?.properties.first { $0.name == name }
    }

    /// The blog store with history and two posts; a shell write is left for the migration to fold first.
    func makeStore() throws -> [ObjectID] {
        let description = PersistentStoreDescription(url: path)
        description.persistentHistoryTracking = true
        let first = try Fixtures.blogCoordinator(description)
        let (_, posts) = try Fixtures.seedBlog(first, posts: 2)
        first.remove(first.persistentStores[0])
        try ForeignWriter.shell(path, "UPDATE Post SET content = 'before' WHERE externalID = 'ext-0';")
        return posts
    }

    @Test func tributaryAndShellWritesAreRecordedUnderTheNewNames() throws {
        let posts = try makeStore()
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try BlogV2.model())
        #expect(try coordinator.migrateStore(at: path) == ["renamed entity Tag to Label", "renamed Post.content to Post.text"])
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: path))
        #expect(coordinator.persistentStores[0].isHistoryTracked)
        let start = try coordinator.currentPersistentHistoryToken()

        try coordinator.execute(BatchInsertRequest(entityName: "Label", objects: [["name": "rust"]]))
        try ForeignWriter.shell(path, """
            BEGIN;
            INSERT INTO Label (name) VALUES ('go');
            UPDATE Post SET text = 'after' WHERE externalID = 'ext-1';
            INSERT INTO _Label_posts (src, dst) SELECT l._pk, p._pk FROM Label l, Post p WHERE l.name = 'go' AND p.externalID = 'ext-1';
            COMMIT;
            """)
        let after = try coordinator.fetchHistory(.fetchHistory(after: start))
        #expect(after.count == 2)
        #expect(property(change(Array(after.prefix(1)), "Label", .insert), "name")?.after == .string("rust"))
        let foreign = try #require(after.last)
        #expect(foreign.processName == "foreign")
        #expect(property(change([foreign], "Label", .insert), "name")?.after == .string("go"))
        let updated = change([foreign], "Post", .update)
        #expect(updated?.changedObjectID.primaryKey == posts[1].primaryKey)
        #expect(property(updated, "text")?.before == .null)
        #expect(property(updated, "text")?.after == .string("after"))
        #expect(property(updated, "tags")?.added.map(\.entityName) == ["Label"])
        let go = try coordinator.fetch(FetchRequest(entityName: "Label", predicate: try StorePredicate(format: "name == 'go'")))[0]
        #expect(go["postCount"] == .integer(1), "the derived count's triggers read the renamed join table for the shell too")

        // Nothing was missed: no capture gap, and the shell write made before the migration
        // is in history under the names of then.
        let all = try coordinator.fetchHistory(.fetchHistory(after: nil))
        #expect(!all.contains { $0.processID == CaptureCheck.gapSource.0 }, "\(all.map(\.processName))")
        let earlier = all.filter { $0.token <= start }
        #expect(property(change(earlier, "Post", .update), "content")?.after == .string("before"))
        // The migration is a schema transaction of its own, with its change lines and the model after.
        let schema = try coordinator.schemaChanges()
        #expect(schema.last?.change.changes == ["renamed entity Tag to Label", "renamed Post.content to Post.text"])
        #expect(schema.last?.change.model == coordinator.persistentStores[0].model)
    }
}
