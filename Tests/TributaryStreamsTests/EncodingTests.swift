import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// Each encoding against fixed expected output, for every operation.
@Suite struct EncodingTests {
    static let storeID = UUID(uuidString: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")!
    static let commit = Date(timeIntervalSince1970: 1_714_564_800)   // 2024-05-01T12:00:00Z
    static let exportTime = Date(timeIntervalSince1970: 1_714_564_801.25)

    static func id(_ entity: String, _ key: Int64) -> ObjectID { ObjectID(storeID: storeID, entityName: entity, primaryKey: key) }

    static func record(_ operation: StreamOperation, _ properties: [PropertyChange], index: Int = 0, token: Int64 = 7, snapshot: Bool = false, entity: String = "Tag", key: Int64 = 1) -> StreamRecord {
        StreamRecord(position: StreamPosition(token: token, index: index, isSnapshot: snapshot), storeID: storeID, timestamp: commit,
                     author: snapshot ? nil : "importer", contextName: snapshot ? nil : "cli", operation: operation, objectID: id(entity, key), properties: properties)
    }

    static let insert = record(.create, [PropertyChange(name: "name", after: "swift"), PropertyChange(name: "color", after: "gray")])
    static let update = record(.update, [PropertyChange(name: "color", before: "gray", after: "red")], index: 1)
    static let delete = record(.delete, [PropertyChange(name: "name", before: "swift"), PropertyChange(name: "color", before: "red")], index: 2)
    static let read = record(.read, [PropertyChange(name: "title", after: "Hi"), PropertyChange(name: "createdAt", after: .date(commit)),
                                     PropertyChange(name: "tags", added: [id("Tag", 1)])], index: 0, snapshot: true, entity: "Post", key: 3)

    static func encode(_ format: StreamFormat, _ records: [StreamRecord]) -> [String] {
        var encoder = format.makeEncoder(clock: { exportTime })
        var bytes: [UInt8] = []
        for record in records { encoder.encode(record, into: &bytes) }
        #expect(bytes.last == 0x0A)
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    @Test func native() {
        let lines = Self.encode(.native, [Self.insert, Self.update, Self.delete, Self.read])
        #expect(lines == [
            #"{"position":"7.0","storeID":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","token":"7-6f9619ff","index":0,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"insert","after":{"name":"swift","color":"gray"}}"#,
            #"{"position":"7.1","storeID":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","token":"7-6f9619ff","index":1,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"update","updatedProperties":{"color":{"before":"gray","after":"red"}}}"#,
            #"{"position":"7.2","storeID":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","token":"7-6f9619ff","index":2,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"delete","before":{"name":"swift","color":"red"}}"#,
            #"{"position":"7.r0","storeID":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","token":"7-6f9619ff","index":0,"timestamp":"2024-05-01T12:00:00Z","author":null,"contextName":null,"entity":"Post","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p3","type":"read","after":{"title":"Hi","createdAt":"2024-05-01T12:00:00Z"},"relationships":{"tags":{"added":["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1"],"removed":[]}}}"#,
        ])
    }

    /// A date another program stored outside the years ISO 8601 writes is its seconds since
    /// 1970, a number (before the fix, the note terminals show), in every property position.
    @Test func nativeWritesDatesISO8601CannotWriteAsNumbers() {
        let far = Date(timeIntervalSince1970: 1e300)
        let record = Self.record(.update, [PropertyChange(name: "at", before: .date(Self.commit), after: .date(far))])
        let created = Self.record(.create, [PropertyChange(name: "at", after: .date(far))], entity: "Item")
        let lines = Self.encode(.native, [record, created])
        #expect(lines[0].contains(#""updatedProperties":{"at":{"before":"2024-05-01T12:00:00Z","after":1e+300}}"#), "\(lines[0])")
        #expect(lines[1].contains(#""after":{"at":1e+300}"#), "\(lines[1])")
    }

    @Test func debezium() {
        let lines = Self.encode(.debezium, [Self.insert, Self.update, Self.delete, Self.read])
        #expect(lines == [
            #"{"before":null,"after":{"_pk":1,"name":"swift","color":"gray"},"source":{"version":"tributary-1","connector":"tributary","name":"tributary","ts_ms":1714564800000,"snapshot":"false","db":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","table":"Tag","token":"7-6f9619ff","index":0,"author":"importer","contextName":"cli"},"op":"c","ts_ms":1714564801250,"transaction":{"id":"7-6f9619ff","total_order":1,"data_collection_order":1}}"#,
            #"{"before":{"_pk":1,"color":"gray"},"after":{"_pk":1,"color":"red"},"source":{"version":"tributary-1","connector":"tributary","name":"tributary","ts_ms":1714564800000,"snapshot":"false","db":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","table":"Tag","token":"7-6f9619ff","index":1,"author":"importer","contextName":"cli"},"op":"u","ts_ms":1714564801250,"transaction":{"id":"7-6f9619ff","total_order":2,"data_collection_order":2}}"#,
            #"{"before":{"_pk":1,"name":"swift","color":"red"},"after":null,"source":{"version":"tributary-1","connector":"tributary","name":"tributary","ts_ms":1714564800000,"snapshot":"false","db":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","table":"Tag","token":"7-6f9619ff","index":2,"author":"importer","contextName":"cli"},"op":"d","ts_ms":1714564801250,"transaction":{"id":"7-6f9619ff","total_order":3,"data_collection_order":3}}"#,
            #"{"before":null,"after":{"_pk":3,"title":"Hi","createdAt":"2024-05-01T12:00:00Z","tags":["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1"]},"source":{"version":"tributary-1","connector":"tributary","name":"tributary","ts_ms":1714564800000,"snapshot":"true","db":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","table":"Post","token":"7-6f9619ff","index":0,"author":null,"contextName":null},"op":"r","ts_ms":1714564801250,"transaction":null}"#,
        ])
    }

    /// The field rules of Debezium's documentation: op is c/u/d/r; c and r have no before,
    /// d has no after, u has both; source.ts_ms is the commit, ts_ms the export (lag = difference);
    /// total_order counts events in the transaction, data_collection_order those of one table.
    @Test func debeziumFieldRules() throws {
        let other = Self.record(.create, [PropertyChange(name: "title", after: "T")], index: 3, entity: "Post", key: 9)
        for line in Self.encode(.debezium, [Self.insert, Self.update, other, Self.delete, Self.read]) {
            guard case .object(let event) = try JSONValue.parse(line), case .string(let op)? = event["op"], case .object(let source)? = event["source"],
                  case .integer(let commit)? = source["ts_ms"], case .integer(let exported)? = event["ts_ms"] else {
                Issue.record("not an envelope: \(line)")
                continue
            }
            #expect(["c", "u", "d", "r"].contains(op))
            #expect((event["before"] == .null) == (op == "c" || op == "r"))
            #expect((event["after"] == .null) == (op == "d"))
            #expect(exported - commit == 1250)
            #expect(source["connector"] == .string("tributary") && source["table"] != nil && source["db"] != nil)
            #expect((event["transaction"] == .null) == (op == "r"))
        }
        let orders = Self.encode(.debezium, [Self.insert, Self.update, other, Self.delete]).map { line -> [JSONValue?] in
            guard case .object(let event) = try! JSONValue.parse(line), case .object(let t)? = event["transaction"] else { return [] }
            return [t["total_order"], t["data_collection_order"]]
        }
        #expect(orders == [[.integer(1), .integer(1)], [.integer(2), .integer(2)], [.integer(4), .integer(1)], [.integer(3), .integer(3)]])
    }

    @Test func cloudEvents() {
        let lines = Self.encode(.cloudevents, [Self.insert, Self.update, Self.delete, Self.read])
        #expect(lines == [
            #"{"specversion":"1.0","id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-0","source":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff","type":"tributary.Tag.insert","subject":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","time":"2024-05-01T12:00:00Z","datacontenttype":"application/json","data":{"position":"7.0","token":"7-6f9619ff","index":0,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"insert","after":{"name":"swift","color":"gray"}}}"#,
            #"{"specversion":"1.0","id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-1","source":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff","type":"tributary.Tag.update","subject":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","time":"2024-05-01T12:00:00Z","datacontenttype":"application/json","data":{"position":"7.1","token":"7-6f9619ff","index":1,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"update","updatedProperties":{"color":{"before":"gray","after":"red"}}}}"#,
            #"{"specversion":"1.0","id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-2","source":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff","type":"tributary.Tag.delete","subject":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","time":"2024-05-01T12:00:00Z","datacontenttype":"application/json","data":{"position":"7.2","token":"7-6f9619ff","index":2,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":"cli","entity":"Tag","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1","type":"delete","before":{"name":"swift","color":"red"}}}"#,
            #"{"specversion":"1.0","id":"6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-r0","source":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff","type":"tributary.Post.read","subject":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p3","time":"2024-05-01T12:00:00Z","datacontenttype":"application/json","data":{"position":"7.r0","token":"7-6f9619ff","index":0,"timestamp":"2024-05-01T12:00:00Z","author":null,"contextName":null,"entity":"Post","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p3","type":"read","after":{"title":"Hi","createdAt":"2024-05-01T12:00:00Z"},"relationships":{"tags":{"added":["tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1"],"removed":[]}}}}"#,
        ])
    }

    @Test func eventIDsAreDeterministicAndPositionsRoundTrip() throws {
        #expect(Self.update.eventID == "6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-1")
        #expect(Self.read.eventID == "6f9619ff-8b86-d011-b42d-00cf4fc964ff-7-r0")
        for text in ["42.3", "42.r3", "0.0"] { #expect(try StreamPosition(parsing: text).description == text) }
        #expect(StreamPosition(token: 7, index: 9) < StreamPosition(token: 7, index: 0, isSnapshot: true))
        #expect(StreamPosition(token: 7, index: 5, isSnapshot: true) < StreamPosition(token: 8, index: 0))
        #expect(throws: TributaryError.self) { try StreamPosition(parsing: "7") }
    }

    /// The bytes sinks write for event IDs, and `eventID`, are store, token and index, across stores, tokens, snapshot reads and zero.
    @Test func eventIDWriterWritesTheEventIDs() throws {
        let other = UUID(uuidString: "00000000-0000-0000-0000-0000000000AB")!
        var records = [Self.insert, Self.update, Self.delete, Self.read, Self.record(.create, [], index: 0, token: 0),
                       Self.record(.create, [], index: 123_456, token: Int64.max), Self.record(.create, [], index: 1, token: -5),
                       Self.record(.create, [], index: 2, token: Int64.min)]
        var elsewhere = Self.update
        elsewhere.storeID = other
        records.insert(elsewhere, at: 2)
        var writer = EventIDWriter()
        for record in records {
            var bytes: [UInt8] = Array("x".utf8)
            writer.append(record, to: &bytes)
            let expected = "\(record.storeID.uuidString.lowercased())-\(record.position.token)-\(record.position.isSnapshot ? "r" : "")\(record.position.index)"
            #expect(String(decoding: bytes, as: UTF8.self) == "x" + expected)
            #expect(record.eventID == expected)
        }
    }

    /// Every encoding reads back to the same change for replay.
    @Test func encodingsReadBackForReplay() throws {
        let model = try StreamFixtures.blogModel()
        for format in StreamFormat.allCases {
            let lines = Self.encode(format, [Self.update, Self.read])
            let update = try ReplayChange(line: ArraySlice(lines[0].utf8), format: format, model: model)
            #expect(update.operation == .update && update.primaryKey == 1 && update.values == ["color": "red"] && update.token == 7)
            let read = try ReplayChange(line: ArraySlice(lines[1].utf8), format: format, model: model)
            #expect(read.operation == .read && read.entityName == "Post" && read.values["createdAt"] == .date(Self.commit))
            #expect(read.added == ["tags": [Self.id("Tag", 1)]])
        }
    }
}

/// The exporter's in-place path: an insert encoded straight from the history payload is the
/// same bytes as the record made from it, for every value type, and the path declines what
/// it does not cover.
@Suite struct InPlaceEncodingTests {
    static let model = """
        entities:
          Item:
            attributes:
              text: string
              count: integer
              ratio: double
              flag: bool
              at: date
              uid: uuid
              bytes: binary
            relationships:
              owner: { to: Owner, inverse: items }
              labels: { to: Label, inverse: items, toMany: true }
          Owner:
            attributes:
              name: string
              secret: { type: string, excludedFromHistory: true }
            relationships:
              items: { to: Item, inverse: owner, toMany: true }
          Label:
            attributes:
              name: string
            relationships:
              items: { to: Item, inverse: labels, toMany: true }
        """

    @Test func insertsReadInPlaceEncodeAsTheirRecords() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("inplace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try ManagedObjectModel(yaml: Self.model))
        let description = PersistentStoreDescription(url: directory.appendingPathComponent("s.sqlite"))
        description.persistentHistoryTracking = true
        try coordinator.addPersistentStore(with: description)
        func insert(_ entity: String, _ values: [String: AttributeValue]) throws -> ObjectID {
            var request = BatchInsertRequest(entityName: entity, objects: [values])
            request.resultType = .objectIDs
            return try coordinator.execute(request).objectIDs[0]
        }
        let owner = try insert("Owner", ["name": "Ann"])
        let label = try insert("Label", ["name": "red"])
        let texts: [AttributeValue] = ["plain", "quote \" and \\ and\nnewline\ttab\u{1}", "café ünïcode 日本", "", .null]
        var objects: [[String: AttributeValue]] = []
        for (i, text) in texts.enumerated() {
            objects.append(["text": text, "count": .integer(Int64(i) * -1_000_000_007), "ratio": .double(Double(i) / 3), "flag": .bool(i % 2 == 0),
                            "at": .date(Date(timeIntervalSince1970: 1_714_564_800.125 + Double(i) * 90_000)), "uid": .uuid(UUID()),
                            "bytes": .data(Data([0, 1, 2, UInt8(i)])), "owner": i == 4 ? .null : .objectID(owner)])
        }
        var request = BatchInsertRequest(entityName: "Item", objects: objects)
        request.transaction = TransactionMetadata(author: "importer \"1\"", contextName: nil, reason: "ticket \"9\": backfill")
        try coordinator.execute(request)
        // Declined: an excluded value, a membership change, an update and a delete.
        _ = try insert("Owner", ["name": "Cy", "secret": "hidden"])
        _ = try insert("Item", ["text": "linked", "labels": .array([.objectID(label)])])
        try coordinator.execute(BatchUpdateRequest(entityName: "Owner", propertiesToUpdate: ["name": "Bea"]))
        var delete = BatchDeleteRequest(entityName: "Label")
        delete.objectIDs = [label]
        try coordinator.execute(delete)

        let storeID = coordinator.persistentStores[0].identifier
        var fast = NativeEncoder()
        var general = NativeEncoder()
        var encodedInPlace = 0, declined = 0
        try coordinator.enumerateHistoryChanges(.fetchHistory(after: nil)) { view in
            let position = StreamPosition(token: view.token.value, index: view.index)
            let record = StreamRecord(change: try view.copy(), timestamp: view.timestamp, author: view.author, contextName: view.contextName, reason: view.reason)
            var expected: [UInt8] = []
            general.encode(record, into: &expected)
            let text = String(decoding: expected, as: UTF8.self)
            #expect(text.contains(#","reason":"ticket \"9\": backfill","entity":"Item""#) == (view.entityName == "Item" && view.author != nil), "\(text)")
            var line: [UInt8] = [0x2A]   // bytes already in the buffer stay
            if try fast.encodeInsert(view, position: position, storeID: storeID, into: &line) {
                encodedInPlace += 1
                #expect(String(decoding: line.dropFirst(), as: UTF8.self) == String(decoding: expected, as: UTF8.self))
            } else {
                declined += 1
                #expect(line == [0x2A])
                let coveredKind = view.changeType == .insert && record.properties.allSatisfy { !$0.isMembershipChange && !$0.isValueExcluded }
                #expect(!coveredKind, "declined \(String(decoding: expected, as: UTF8.self))")
            }
        }
        // The label and five items in place; the owners (a value excluded from history), the
        // linked item (and the label's membership side), the update and the delete declined.
        #expect(encodedInPlace == 6)
        #expect(declined >= 4)
    }
}

/// Replay of a value of another class than its attribute's writes it as the source held it.
@Suite struct ReplayValueTypeTests {
    /// A number another program stored in an untyped column (a string attribute) or text in a
    /// number column is kept as the stream has it, for replay to write as given: before, replay
    /// refused the record ("'v' holds integer(42), which a string attribute does not store"),
    /// so an adopted database with an untyped column of numbers could not be replayed at all.
    @Test func aValueOfAnotherClassIsKeptAsTheSourceHeldIt() throws {
        #expect(try ReplayChange.convert(.integer(42), to: .string, name: "v") == .integer(42))
        #expect(try ReplayChange.convert(.double(1.5), to: .string, name: "v") == .double(1.5))
        #expect(try ReplayChange.convert(.integer(7), to: .bool, name: "v") == .integer(7))
        #expect(try ReplayChange.convert(.string("hello"), to: .integer, name: "i") == .string("hello"))
        #expect(try ReplayChange.convert(.string("not a uuid"), to: .uuid, name: "u") == .string("not a uuid"))
        #expect(ReplayChange.isAsStored(.integer(42), for: .string) && !ReplayChange.isAsStored(.bool(true), for: .bool) && !ReplayChange.isAsStored(.null, for: .integer))
        // What no source holds (a JSON array or object, a boolean for text) is still refused.
        let error = try #require(throws: TributaryError.self) { try ReplayChange.convert(.bool(true), to: .string, name: "v") }
        #expect(error.code == .typeMismatch && error.message == "'v' holds bool(true), which a string attribute does not store", "\(error.message)")
    }

    /// Text another program stored in a number or boolean column is exported as the text and
    /// replayed as that text; a lenient parse replayed `'nan'` as NULL, `'inf'` as an
    /// infinity, `'0x1p3'` as 8.0 and `'yes'` as true. Only the infinities' own spelling
    /// (``JSONWriter``) reads as a double.
    @Test func textInANumberOrBooleanAttributeIsNotReadAsOne() throws {
        for (text, type) in [("nan", AttributeType.double), ("inf", .double), ("0x1p3", .double), (" 3.5", .double), ("42", .integer), ("yes", .bool), ("1", .bool)] {
            #expect(try ReplayChange.convert(.string(text), to: type, name: "v") == .string(text), "\(text) as \(type)")
        }
        #expect(try ReplayChange.convert(.string("Infinity"), to: .double, name: "v") == .double(.infinity))
        #expect(try ReplayChange.convert(.string("-Infinity"), to: .double, name: "v") == .double(-.infinity))
        // An infinity another program stored in an INTEGER column is the double JSONWriter spelled so.
        #expect(try ReplayChange.convert(.string("-Infinity"), to: .integer, name: "v") == .double(-.infinity))
        #expect(try ReplayChange.convert(.string("2024-05-01T00:00:00Z"), to: .date, name: "v") == .date(Date(timeIntervalSince1970: 1_714_521_600)))
    }
}
