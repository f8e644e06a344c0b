import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryStreams

/// Transforms: filter, include, exclude, rename, redact, hash, and their entity scope.
@Suite struct RecordTransformTests {
    let storeID = UUID()

    func record(_ op: StreamOperation, entity: String = "Post", _ properties: [PropertyChange]) -> StreamRecord {
        StreamRecord(position: StreamPosition(token: 1, index: 0), storeID: storeID, timestamp: Date(), author: nil, contextName: nil,
                     operation: op, objectID: ObjectID(storeID: storeID, entityName: entity, primaryKey: 7), properties: properties)
    }

    let post: [PropertyChange] = [PropertyChange(name: "title", after: .string("Swift")), PropertyChange(name: "email", after: .string("a@b.c")),
                                  PropertyChange(name: "views", after: .integer(3))]

    @Test func filterMatchesAfterValuesAndBeforeValuesForDeletes() throws {
        let keep = RecordTransform(.filter(try StorePredicate(format: "title BEGINSWITH[c] 'sw'")))
        #expect(try keep.apply(to: record(.create, post)) != nil)
        #expect(try keep.apply(to: record(.create, [PropertyChange(name: "title", after: .string("Go"))])) == nil)
        #expect(try keep.apply(to: record(.delete, [PropertyChange(name: "title", before: .string("swift"))])) != nil)
        let scoped = RecordTransform(.filter(try StorePredicate(format: "FALSEPREDICATE")), entities: ["Tag"])
        #expect(try scoped.apply(to: record(.create, post)) != nil, "a transform scoped to Tag leaves posts alone")
        #expect(try scoped.apply(to: record(.create, entity: "Tag", post)) == nil)
    }

    @Test func includeAndExcludeColumns() throws {
        let include = try RecordTransform(.include(["title", "Post.views"])).apply(to: record(.create, post))
        #expect(include?.properties.map(\.name) == ["title", "views"])
        let exclude = try RecordTransform(.exclude(["Post.email"])).apply(to: record(.create, post))
        #expect(exclude?.properties.map(\.name) == ["title", "views"])
        let other = try RecordTransform(.exclude(["Tag.email"])).apply(to: record(.create, post))
        #expect(other?.properties.count == 3)
    }

    @Test func renameRedactHash() throws {
        let renamed = try RecordTransform(.rename(["Post": "posts"])).apply(to: record(.create, post))
        #expect(renamed?.entityName == "posts")
        #expect(renamed?.objectID.primaryKey == 7)
        let redacted = try RecordTransform(.redact(["email"])).apply(to: record(.create, post))
        #expect(redacted?.properties[1].after == .string(RecordTransform.redactedText))
        #expect(redacted?.properties[0].after == .string("Swift"))
        let hashed = try RecordTransform(.hash(["email"], salt: "s")).apply(to: record(.create, post))
        var sha = SHA256()
        sha.update(Array("sa@b.c".utf8))
        #expect(hashed?.properties[1].after == .string(sha.finalize()))
        let nulls = try RecordTransform(.hash(["email"], salt: "")).apply(to: record(.create, [PropertyChange(name: "email", after: .null)]))
        #expect(nulls?.properties[0].after == .null)
    }

    @Test func theDeclaredKeyFollowsItsProperties() throws {
        var keyed = record(.update, [PropertyChange(name: "title", before: .string("A"), after: .string("B"))])
        keyed.key = ["email": .string("a@b.c"), "org": .string("acme")]
        #expect(try RecordTransform(.exclude(["Post.email"])).apply(to: keyed)?.key == ["org": .string("acme")])
        #expect(try RecordTransform(.include(["title", "org"])).apply(to: keyed)?.key == ["org": .string("acme")])
        #expect(try RecordTransform(.redact(["email"])).apply(to: keyed)?.key == ["email": .string(RecordTransform.redactedText), "org": .string("acme")])
        var sha = SHA256()
        sha.update(Array("sa@b.c".utf8))
        #expect(try RecordTransform(.hash(["email"], salt: "s")).apply(to: keyed)?.key["email"] == .string(sha.finalize()))
        #expect(try RecordTransform(.exclude(["Tag.email"])).apply(to: keyed)?.key.count == 2)
    }
}
