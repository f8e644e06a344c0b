import Foundation
import Testing
import Tributary
@testable import TributaryPipeline
import TributaryStreams

/// The index's own rules: documents keyed by entity slot and primary key, one store per
/// slot, a reused key replacing its document, and indexes of the earlier layout refused.
@Suite struct FullTextIndexTests {
    static let store = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!

    static func record(_ token: Int64, _ operation: StreamOperation, key: Int64, title: String?, store: UUID = store, entity: String = "Post") -> StreamRecord {
        StreamRecord(position: StreamPosition(token: token, index: 0), storeID: store, timestamp: Date(timeIntervalSince1970: 0), author: nil, contextName: nil,
                     operation: operation, objectID: ObjectID(storeID: store, entityName: entity, primaryKey: key),
                     properties: title.map { [PropertyChange(name: "title", after: .string($0))] } ?? [])
    }

    /// A batch that fails rolls its new slots back with it: tried again, they are recorded.
    @Test func slotsGivenInAFailedBatchAreGivenAgain() throws {
        let dir = TemporaryDirectory()
        let index = try FullTextIndex(path: dir.path("i.sqlite"))
        let entities = ["Post": ["title"], "Tag": ["title"]]
        _ = try index.apply([Self.record(1, .create, key: 1, title: "post")], through: nil, pipeline: "p", entities: entities)
        // Tag takes a new slot, then a record of another store for Post fails the batch.
        #expect(throws: TributaryError.self) {
            _ = try index.apply([Self.record(2, .create, key: 1, title: "tag", entity: "Tag"), Self.record(3, .create, key: 2, title: "x", store: UUID())],
                                through: nil, pipeline: "p", entities: entities)
        }
        _ = try index.apply([Self.record(2, .create, key: 1, title: "tag", entity: "Tag")], through: nil, pipeline: "p", entities: entities)
        let reopened = try FullTextIndex(path: dir.path("i.sqlite"), create: false)
        #expect(try reopened.search("tag").map(\.object) == ["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1"])
    }

    /// An index opened for searching finds the entities a writer adds afterwards.
    @Test func aReaderSeesSlotsAddedAfterItOpened() throws {
        let dir = TemporaryDirectory()
        let writer = try FullTextIndex(path: dir.path("i.sqlite"))
        _ = try writer.apply([Self.record(1, .create, key: 1, title: "post")], through: nil, pipeline: "p", entities: ["Post": ["title"]])
        let reader = try FullTextIndex(path: dir.path("i.sqlite"), create: false)
        _ = try writer.apply([Self.record(2, .create, key: 5, title: "label", entity: "Tag")], through: nil, pipeline: "p", entities: ["Tag": ["title"]])
        #expect(try reader.search("label").map(\.entity) == ["Tag"])
        // Replacing a document looks it up first; the lookup leaves no read snapshot open, so
        // the writer's next batch still begins after another connection wrote.
        _ = try writer.apply([Self.record(3, .create, key: 5, title: "again", entity: "Tag")], through: nil, pipeline: "p", entities: ["Tag": ["title"]])
        let other = try Connection(path: dir.path("i.sqlite"), options: ConnectionOptions())
        try other.execute("INSERT INTO tributary_index_positions(pipeline, position) VALUES ('q', '1.0')")
        _ = try writer.apply([Self.record(4, .create, key: 6, title: "third", entity: "Tag")], through: nil, pipeline: "p", entities: ["Tag": ["title"]])
        #expect(try reader.search("again OR third").map(\.object).sorted()
                == ["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p5", "tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p6"])
    }

    @Test func aReusedKeyReplacesItsDocument() throws {
        let dir = TemporaryDirectory()
        let index = try FullTextIndex(path: dir.path("i.sqlite"))
        let entities = ["Post": ["title"]]
        _ = try index.apply([Self.record(1, .create, key: 7, title: "first words")], through: nil, pipeline: "p", entities: entities)
        // The delete between the two was filtered out: the second insert must still win.
        _ = try index.apply([Self.record(3, .create, key: 7, title: "second words")], through: nil, pipeline: "p", entities: entities)
        let documents = try index.documents()
        #expect(documents == [FullTextIndex.Document(object: "tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p7", entity: "Post", content: "second words")])
        #expect(try index.search("first").isEmpty)
        #expect(try index.search("second").map(\.object) == ["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p7"])
        // Reopened, the slots and their store are read back.
        #expect(try FullTextIndex(path: dir.path("i.sqlite"), create: false).search("second").map(\.entity) == ["Post"])
    }

    /// An entity with nothing to index (listed as `all` with no string attribute) writes no
    /// document, and the position still moves: before, the insert had no columns and failed.
    @Test func anEntityWithNoFieldsWritesNothingAndMovesOn() throws {
        let dir = TemporaryDirectory()
        let index = try FullTextIndex(path: dir.path("i.sqlite"))
        let through = try index.apply([Self.record(1, .create, key: 1, title: "counted")], through: nil, pipeline: "p", entities: ["Post": []])
        #expect(through == StreamPosition(token: 1, index: 0))
        #expect(try index.documents().isEmpty)
    }

    @Test func aSlotHoldsOneStoresObjects() throws {
        let dir = TemporaryDirectory()
        let index = try FullTextIndex(path: dir.path("i.sqlite"))
        _ = try index.apply([Self.record(1, .create, key: 1, title: "a")], through: nil, pipeline: "p", entities: ["Post": ["title"]])
        let other = UUID()
        #expect {
            _ = try index.apply([Self.record(2, .create, key: 1, title: "b", store: other)], through: nil, pipeline: "q", entities: ["Post": ["title"]])
        } throws: { error in
            (error as? TributaryError)?.message.contains("objects of store 6f9619ff-8b86-d011-b42d-00cf4fc964ff, not \(other.uuidString.lowercased())") == true
        }
        #expect(try index.documents().map(\.content) == ["a"])
    }

    @Test func anIndexOfTheEarlierLayoutIsRefused() throws {
        let dir = TemporaryDirectory()
        let connection = try Connection(path: dir.path("old.sqlite"), options: ConnectionOptions())
        try connection.execute("""
            CREATE VIRTUAL TABLE tributary_fts USING fts5(entity UNINDEXED, object UNINDEXED, f0, f1, f2, f3, f4, f5, f6, f7);
            CREATE TABLE tributary_fts_entities(slot INTEGER PRIMARY KEY, entity TEXT NOT NULL UNIQUE);
            CREATE TABLE tributary_index_positions(pipeline TEXT PRIMARY KEY, position TEXT NOT NULL);
            """)
        #expect {
            _ = try FullTextIndex(path: dir.path("old.sqlite"), create: false)
        } throws: { error in
            let error = error as? TributaryError
            return error?.message == "not a full-text index of this version (it keeps an object column per document)" && error?.hint?.contains("deleting it") == true
        }
    }
}
