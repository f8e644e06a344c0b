import Foundation
import Testing
@testable import Tributary

/// Predicate arguments as plain Swift values, and `SELF`.
@Suite struct PredicateArgumentTests {
    @Test func plainSwiftValuesAreArguments() throws {
        let name = "swift", count = 3, ratio = 0.5, date = Date(timeIntervalSince1970: 10), id = UUID()
        let p = try StorePredicate(format: "a == %@ AND b == %@ AND c == %@ AND d == %@ AND e == %@", name, count, ratio, date, id)
        let q = try StorePredicate(format: "a == %@ AND b == %@ AND c == %@ AND d == %@ AND e == %@", .string(name), .integer(3), .double(0.5), .date(date), .uuid(id))
        #expect(p == q)
        let names = ["a", "b"]
        #expect(try StorePredicate(format: "name IN %@", names) == StorePredicate(format: "name IN %@", .array(["a", "b"])))
        let small: Int16 = 2, float: Float = 1.5
        #expect(try StorePredicate(format: "n == %@ AND f == %@", small, float) == StorePredicate(format: "n == 2 AND f == 1.5"))
    }

    @Test func selfMatchesObjectsByID() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 4)
        let chosen = [posts[1], posts[3]]
        #expect(try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "self IN %@", chosen))) == chosen)
        #expect(try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "SELF == %@", posts[2]))) == [posts[2]])
        #expect(try coordinator.fetchObjectIDs(FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "NOT (self IN %@)", chosen))) == [posts[0], posts[2]])
        #expect(try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "self.title == 'Post 0'"))) == 1)
        let tag = try coordinator.fetchObjectIDs(FetchRequest(entityName: "Tag"))[0]
        #expect(throws: TributaryError.self) {   // an ID of another entity
            try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "self == %@", tag)))
        }
    }
}
