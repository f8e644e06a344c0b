import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// A record of an adopted table with a declared key names its row by it in every format:
/// native and CloudEvents `key`, Debezium `key` beside the envelope (its `_pk` stays the
/// rowid), and the records still read back for replay, with the key (``ReplayChange/key``).
/// Debezium's schema change events name the declared key as the table's primary key.
@Suite struct DeclaredKeyStreamTests {
    static func keyed(_ record: StreamRecord, _ key: [String: AttributeValue]) -> StreamRecord {
        var record = record
        record.key = key
        return record
    }

    static let update = keyed(EncodingTests.record(.update, [PropertyChange(name: "name", before: "Ann", after: "Annie")], entity: "users", key: 3),
                              ["email": "ann@example.com"])
    static let insert = keyed(EncodingTests.record(.create, [PropertyChange(name: "org", after: "acme"), PropertyChange(name: "login", after: "ann")], index: 1,
                                                   entity: "members", key: 4), ["org": "acme", "login": "ann"])

    static func model() throws -> ManagedObjectModel {
        var users = EntityDescription(name: "users", attributes: [AttributeDescription(name: "email", type: .string), AttributeDescription(name: "name", type: .string)])
        users.tableKey = "rowid"
        users.declaredKey = ["email"]
        var members = EntityDescription(name: "members", attributes: [AttributeDescription(name: "org", type: .string), AttributeDescription(name: "login", type: .string)])
        members.tableKey = "rowid"
        members.declaredKey = ["org", "login"]
        return try ManagedObjectModel(entities: [users, members])
    }

    @Test func everyFormatWritesTheKeyAndReadsBack() throws {
        let model = try Self.model()
        for format in StreamFormat.allCases {
            let lines = EncodingTests.encode(format, [Self.update, Self.insert])
            #expect(lines[0].contains(#""key":{"email":"ann@example.com"}"#), "\(format): \(lines[0])")
            #expect(lines[1].contains(#""key":{"login":"ann","org":"acme"}"#), "\(format): in name order: \(lines[1])")
            if format == .debezium { #expect(lines[0].contains(#""before":{"_pk":3,"name":"Ann"}"#), "the row keeps its rowid: \(lines[0])") }
            let update = try ReplayChange(line: ArraySlice(lines[0].utf8), format: format, model: model)
            #expect(update.operation == .update && update.primaryKey == 3 && update.values == ["name": "Annie"], "\(format)")
            #expect(update.key == ["email": "ann@example.com"], "\(format)")
            let insert = try ReplayChange(line: ArraySlice(lines[1].utf8), format: format, model: model)
            #expect(insert.operation == .create && insert.primaryKey == 4 && insert.values == ["org": "acme", "login": "ann"], "\(format)")
            #expect(insert.key == ["org": "acme", "login": "ann"], "\(format)")
        }
    }

    static let read = keyed(EncodingTests.record(.read, [PropertyChange(name: "email", after: "dee@example.com"), PropertyChange(name: "name", after: "Dee")],
                                                 snapshot: true, entity: "users", key: 5), ["email": "dee@example.com"])

    @Test func aSnapshotReadWithAKeyReadsBackInEveryFormat() throws {
        let model = try Self.model()
        for format in StreamFormat.allCases {
            let line = try #require(EncodingTests.encode(format, [Self.read]).first)
            #expect(line.contains(#""key":{"email":"dee@example.com"}"#), "\(format): \(line)")
            let read = try ReplayChange(line: ArraySlice(line.utf8), format: format, model: model)
            #expect(read.operation == .read && read.primaryKey == 5 && read.values == ["email": "dee@example.com", "name": "Dee"], "\(format)")
            #expect(read.key == ["email": "dee@example.com"], "\(format)")
        }
        // Native inserts and reads take replay's fast path, which reads the key too.
        let lines = EncodingTests.encode(.native, [Self.read, Self.insert])
        let fast = lines.compactMap { NativeRecordReader().change(ArraySlice($0.utf8), model: model, ids: ObjectIDReader()) }
        #expect(fast.map(\.key) == [["email": "dee@example.com"], ["org": "acme", "login": "ann"]])
    }

    @Test func aKeyNamingAnAttributeTheEntityLacksIsRefused() throws {
        let model = try Self.model()
        for format in StreamFormat.allCases {
            let line = try #require(EncodingTests.encode(format, [Self.keyed(Self.read, ["handle": "dee"])]).first)
            let error = #expect(throws: TributaryError.self, "\(format)") { try ReplayChange(line: ArraySlice(line.utf8), format: format, model: model) }
            #expect(error?.code == .unknownProperty && error?.message.contains("'handle'") == true, "\(format): \(String(describing: error))")
        }
    }

    /// The Debezium schema change event creating `model`'s entities, and the
    /// `primaryKeyColumnNames` it gives each table.
    static func debeziumSchemaEvent(_ model: ManagedObjectModel) throws -> (record: SchemaRecord, line: [UInt8], primaryKeys: [String: [String]]) {
        let change = SchemaChange(fromVersion: nil, toVersion: model.versionHash, changes: model.entities.map { "added entity \($0.name)" }, model: model, isDetected: false)
        let record = SchemaRecord(position: StreamPosition(token: 7, index: 0), storeID: EncodingTests.storeID, timestamp: EncodingTests.commit, change: change)
        var encoder = DebeziumEncoder(clock: { EncodingTests.exportTime })
        var line: [UInt8] = []
        encoder.encodeSchema(record, into: &line)
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
        var keys: [String: [String]] = [:]
        for table in event["tableChanges"] as? [[String: Any]] ?? [] {
            let id = table["id"] as? String ?? "?"
            keys[String(id.split(separator: ".").last ?? "").trimmingCharacters(in: ["\""])] = (table["table"] as? [String: Any])?["primaryKeyColumnNames"] as? [String]
        }
        return (record, Array(line.dropLast()), keys)
    }

    @Test func debeziumSchemaChangesNameTheDeclaredKeyAsThePrimaryKey() throws {
        var entities = try Self.model().entities
        var counters = EntityDescription(name: "counters", attributes: [AttributeDescription(name: "hits", type: .integer)])
        counters.tableKey = "id"
        entities += [counters, EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string)])]
        let model = try ManagedObjectModel(entities: entities)
        let (record, line, keys) = try Self.debeziumSchemaEvent(model)
        #expect(keys == ["users": ["email"], "members": ["org", "login"], "counters": ["id"], "Tag": ["_pk"]], "in key order; others as before")
        #expect(try SchemaRecord.read(ArraySlice(line), format: .debezium) == record, "replay reads the event back")
    }

    @Test func aRecordWithoutAKeyIsWrittenAsBefore() {
        for format in StreamFormat.allCases {
            #expect(!EncodingTests.encode(format, [EncodingTests.insert, EncodingTests.update, EncodingTests.delete]).contains { $0.contains(#""key""#) }, "\(format)")
        }
    }
}
