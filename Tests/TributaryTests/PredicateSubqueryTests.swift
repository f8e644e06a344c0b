import Foundation
import Testing
@testable import Tributary

/// `SUBQUERY(collection, $x, predicate).@count`, as Core Data's SQL store runs it.
@Suite struct PredicateSubqueryTests {
    /// Posts 0–3 with tags: 0 {swift, sqlite}, 1 {swift}, 2 {sqlite, linux, swift}, 3 {};
    /// post 0 has a PNG and a text attachment, post 2 a text one.
    private func seeded(_ dir: TemporaryDirectory) throws -> (PersistentStoreCoordinator, posts: [ObjectID], tags: [ObjectID]) {
        let coordinator = try Fixtures.blogCoordinator(PersistentStoreDescription(url: dir.file("s.sqlite")))
        var tagRequest = BatchInsertRequest(entityName: "Tag", objects: ["swift", "sqlite", "linux"].map { ["name": .string($0)] })
        tagRequest.resultType = .objectIDs
        let tags = try coordinator.execute(tagRequest).objectIDs
        let members: [[Int]] = [[0, 1], [0], [1, 2, 0], []]
        var postRequest = BatchInsertRequest(entityName: "Post", objects: members.enumerated().map { i, tagIndexes in
            ["externalID": .string("p\(i)"), "title": .string("Post \(i)"), "createdAt": .date(Date(timeIntervalSince1970: Double(i))),
             "tags": .array(tagIndexes.map { .objectID(tags[$0]) })]
        })
        postRequest.resultType = .objectIDs
        let posts = try coordinator.execute(postRequest).objectIDs
        try coordinator.execute(BatchInsertRequest(entityName: "Attachment", objects: [
            ["fileName": "a.png", "mimeType": "image/png", "post": .objectID(posts[0])],
            ["fileName": "a.txt", "mimeType": "text/plain", "post": .objectID(posts[0])],
            ["fileName": "b.txt", "mimeType": "text/plain", "post": .objectID(posts[2])],
        ]))
        return (coordinator, posts, tags)
    }

    private func titles(_ coordinator: PersistentStoreCoordinator, _ format: String, _ arguments: any AttributeValueConvertible...) throws -> [String] {
        let predicate = try StorePredicate(format: format, argumentArray: arguments.map(\.attributeValue))
        return try coordinator.fetch(FetchRequest(entityName: "Post", predicate: predicate, sortDescriptors: [SortDescriptor("title")]))
            .compactMap { $0["title"]?.stringValue }
    }

    @Test func countsTheMembersThatMatch() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _, _) = try seeded(dir)
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name BEGINSWITH 's').@count >= 2") == ["Post 0", "Post 2"])
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name == 'swift').@count == 1") == ["Post 0", "Post 1", "Post 2"])
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, TRUEPREDICATE).@count == 0") == ["Post 3"])
        // A key path without the variable reads the member, as NSPredicate evaluates it.
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, name == 'linux').@count > 0") == ["Post 2"])
        // The count on the right, and flipped around a constant.
        #expect(try titles(coordinator, "0 < SUBQUERY(attachments, $a, $a.mimeType == 'text/plain').@count") == ["Post 0", "Post 2"])
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name != 'linux').@count == tags.@count") == ["Post 0", "Post 1", "Post 3"])
        // Combined with other conditions and lists.
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name IN {'linux', 'sqlite'}).@count BETWEEN {1, 2} AND title != 'Post 0'") == ["Post 2"])
        #expect(try titles(coordinator, "NOT (SUBQUERY(tags, $t, $t.name == 'swift').@count > 0)") == ["Post 3"])
    }

    @Test func argumentsInsideAndOutsideKeepTheirOrder() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _, tags) = try seeded(dir)
        // The subquery's values are bound before the compared value, whatever the operator.
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name IN %@).@count == %@", ["swift", "linux"], 2) == ["Post 2"])
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name == %@ OR $t == %@).@count != %@", "sqlite", tags[2], 0) == ["Post 0", "Post 2"])
        #expect(try titles(coordinator, "SUBQUERY(tags, $t, $t.name == %@).@count IN %@", "swift", [1]) == ["Post 0", "Post 1", "Post 2"])
        #expect(try titles(coordinator, "title BEGINSWITH %@ AND SUBQUERY(tags, $t, $t.name ENDSWITH %@).@count > %@", "Post", "t", 0) == ["Post 0", "Post 1", "Post 2"])
    }

    @Test func nestsThroughTheVariable() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _, _) = try seeded(dir)
        let predicate = try StorePredicate(format: "SUBQUERY(posts, $p, SUBQUERY($p.attachments, $a, $a.mimeType == 'image/png').@count > 0).@count > 0")
        let tags = try coordinator.fetch(FetchRequest(entityName: "Tag", predicate: predicate, sortDescriptors: [SortDescriptor("name")]))
        #expect(tags.compactMap { $0["name"]?.stringValue } == ["sqlite", "swift"])   // the tags of post 0
        // An inner predicate may read the enclosing variable and the member alike.
        let both = try StorePredicate(format: "SUBQUERY(posts, $p, SUBQUERY($p.tags, $o, $o.name == 'linux').@count > 0 AND $p.title == 'Post 2').@count == 1")
        #expect(try coordinator.count(for: FetchRequest(entityName: "Tag", predicate: both)) == 3)
    }

    @Test func batchRequestsAndContextsTakeSubqueries() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _, _) = try seeded(dir)
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let lonely = try StorePredicate(format: "SUBQUERY(tags, $t, $t.name == %@).@count == 0", "swift")
        #expect(try context.fetch(FetchRequest(entityName: "Post", predicate: lonely)).count == 1)
        let result = try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: lonely))
        #expect(result.count == 1)
        var update = BatchUpdateRequest(entityName: "Post", predicate: try StorePredicate(format: "SUBQUERY(tags, $t, $t.name == %@).@count > 0", "linux"))
        update.propertiesToUpdate = ["content": "has linux"]
        #expect(try coordinator.execute(update).count == 1)
        #expect(try titles(coordinator, "content == %@", "has linux") == ["Post 2"])
    }

    @Test func printsAndParsesBack() throws {
        for predicate in [
            try StorePredicate(format: "SUBQUERY(tags, $t, $t.name BEGINSWITH[c] 's').@count >= 2"),
            try StorePredicate(format: "SUBQUERY(posts, $p, SUBQUERY($p.attachments, $a, $a.mimeType == 'x').@count > 0).@count > 0"),
            try StorePredicate(format: "SUBQUERY(tags, $t, $t IN %@).@count == 1", ["tributary://x/Tag/p1"]),
        ] {
            #expect(try StorePredicate(format: predicate.predicateFormat) == predicate)
        }
        let parsed = try StorePredicate(format: "2 <= SUBQUERY(tags, $t, TRUEPREDICATE).@count")
        #expect(parsed == .comparison(Comparison(left: .subqueryCount(Subquery(collection: ["tags"], variable: "t", predicate: .constant(true))),
                                                 op: .greaterOrEqual, right: .constant(.integer(2)))))
        // `subquery` alone is still a key path.
        #expect(try StorePredicate(format: "subquery == 1") == .comparison(Comparison(left: .keyPath(["subquery"]), op: .equal, right: .constant(.integer(1)))))
    }

    @Test func mistakesAreOneClearError() throws {
        let dir = TemporaryDirectory()
        let (coordinator, _, _) = try seeded(dir)
        func failure(_ format: String) throws -> TributaryError {
            try #require(throws: TributaryError.self) { _ = try titles(coordinator, format) }
        }
        #expect(try failure("SUBQUERY(title, $t, $t == 'x').@count > 0").message.contains("to-many"))
        #expect(try failure("SUBQUERY(tags, $t, $x.name == 'x').@count > 0").message.contains("unknown variable '$x'"))
        #expect(try failure("$t.name == 'x'").message.contains("unknown variable"))
        #expect(try failure("SUBQUERY(tags, $t, $t.name == 'x') > 0").message.contains(".@count"))
        #expect(try failure("SUBQUERY(tags, t, t.name == 'x').@count > 0").message.contains("variable"))
        #expect(try failure("SUBQUERY(tags, $t, $t.name == 'x').@count BEGINSWITH 'a'").message.contains("compares strings"))
        #expect(try failure("ANY SUBQUERY(tags, $t, TRUEPREDICATE).@count > 0").message.contains("SUBQUERY"))
        // Nesting is bounded like parentheses: no stack overflow.
        var deep = "TRUEPREDICATE"
        for _ in 0..<(PredicateFormatParser.maximumDepth + 1) { deep = "SUBQUERY(tags, $t, \(deep)).@count > 0" }
        #expect(try failure(deep).message.contains("nested"))
        // In memory, a subquery is refused up front.
        #expect(throws: TributaryError.self) { try StorePredicate(format: "SUBQUERY(tags, $t, TRUEPREDICATE).@count > 0").checkEvaluable() }
    }
}
