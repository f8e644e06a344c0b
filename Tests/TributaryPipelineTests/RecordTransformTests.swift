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

    /// A blob in a text attribute stays marked when a `rename` transform gives its entity
    /// another name: encoders look the attribute up under the model's name. Before, the new
    /// name was not in the model and the blob was written as base64 text, like the text it is not.
    @Test func aRenamedRecordsBlobsAreMarkedByTheModelsEntity() throws {
        let kv = EntityDescription(name: "kv", attributes: [AttributeDescription(name: "v", type: .string), AttributeDescription(name: "b", type: .binary)])
        let model = try ManagedObjectModel(entities: [kv])
        let blobs = [PropertyChange(name: "v", after: .data(Data([0xCA, 0xFE]))), PropertyChange(name: "b", after: .data(Data([0x00, 0xFF])))]
        let once = try #require(try RecordTransform(.rename(["kv": "cache"])).apply(to: record(.create, entity: "kv", blobs)))
        let twice = try #require(try RecordTransform(.rename(["cache": "kv-cache"])).apply(to: once))
        #expect(once.entityName == "cache" && twice.entityName == "kv-cache")
        for renamed in [once, twice] {
            var native = NativeEncoder(), cloudEvents = CloudEventsEncoder()
            native.use(model)
            cloudEvents.use(model)
            var lines: [[UInt8]] = [[], []]
            native.encode(renamed, into: &lines[0])
            cloudEvents.encode(renamed, into: &lines[1])
            for line in lines.map({ String(decoding: $0, as: UTF8.self) }) {
                #expect(line.contains(#""v":{"base64":"yv4="}"#) && line.contains(#""b":"AP8=""#) && line.contains(renamed.entityName), "\(line)")
            }
        }
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
