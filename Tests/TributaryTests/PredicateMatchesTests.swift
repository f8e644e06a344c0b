import Foundation
import Testing
@testable import Tributary

/// `MATCHES`: ICU regular expressions over the whole text, bounded.
@Suite struct PredicateMatchesTests {
    @Test func matchesTheWholeText() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        try Fixtures.seedBlog(coordinator, posts: 12)   // Post 0 … Post 11
        func count(_ format: String) throws -> Int {
            try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: format)))
        }
        #expect(try count("title MATCHES 'Post [0-9]'") == 10)
        #expect(try count("title MATCHES 'Post 1[0-9]?'") == 3)
        #expect(try count("title MATCHES 'post .*'") == 0)
        #expect(try count("title MATCHES[c] 'post .*'") == 12)
        #expect(try count("title MATCHES '1'") == 0)   // the whole text, not a part
        #expect(try StorePredicate(format: "title MATCHES 'P.*'").evaluate(["title": "Post"]))
        #expect(try StorePredicate(format: "title MATCHES %@", "a|ab").evaluate(["title": "ab"]))
        #expect(try StorePredicate(format: StorePredicate(format: "title MATCHES 'x+'").predicateFormat) == StorePredicate(format: "title MATCHES 'x+'"))
    }

    @Test func badOrUnboundedPatternsAreRefused() throws {
        let coordinator = try Fixtures.blogCoordinator(.inMemory())
        let bad = try #require(throws: TributaryError.self) {
            try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title MATCHES '(unclosed'")))
        }
        #expect(bad.code == .invalidPredicate)
        let long = String(repeating: "a", count: PredicateRegex.maximumPatternLength + 1)
        #expect(throws: TributaryError.self) {
            try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "title MATCHES %@", long)))
        }
        #expect(throws: TributaryError.self) {
            try coordinator.count(for: FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt MATCHES 'x'")))
        }
    }
}
