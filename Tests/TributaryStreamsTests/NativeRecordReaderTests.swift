import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// The fast path of native replay reads the same change as the general parser, or declines.
@Suite struct NativeRecordReaderTests {
    static let prefix = #"{"position":"7.0","storeID":"6f9619ff-8b86-d011-b42d-00cf4fc964ff","token":"7-6f9619ff","index":0,"timestamp":"2024-05-01T12:00:00Z","author":"importer","contextName":null,"entity":"Post","objectID":"tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Post/p3","type":"#

    static func line(_ rest: String) -> ArraySlice<UInt8> { ArraySlice((prefix + rest).utf8) }

    static func general(_ line: ArraySlice<UInt8>, _ model: ManagedObjectModel) throws -> ReplayChange {
        try ReplayChange(line: line, format: .native, model: model, ids: ObjectIDReader(), native: nil)
    }

    @Test func fastPathReadsWhatTheGeneralPathReads() throws {
        let model = try StreamFixtures.blogModel()
        let lines = [
            #""insert","after":{"title":"Hi \"there\"\n\u00e9","content":null,"externalID":"p-3","createdAt":"2024-05-01T12:00:00.125Z","updatedAt":"2024-05-01T12:00:01Z"}}"#,
            #""read","after":{"createdAt":"1969-12-31T23:59:59.5Z","title":"é","externalID":"x"}}"#,
            #""insert","after":{"title":"t","externalID":"e","createdAt":"2024-02-30T00:00:00Z"}}"#,
            #""insert","after":{"title":"t","externalID":"e","createdAt":"2024-05-01T12:00:00+02:00"}}"#,
            #""insert","after":{}}"#,
            // Values another program stored in another class than the attribute's: as given.
            #""insert","after":{"createdAt":"yesterday","title":42,"externalID":1.5}}"#,
        ]
        for text in lines {
            let native = NativeRecordReader()
            let fast = try #require(native.change(Self.line(text), model: model, ids: ObjectIDReader()), "\(text)")
            let slow = try Self.general(Self.line(text), model)
            #expect(fast.values == slow.values, "\(text)")
            #expect(fast.operation == slow.operation && fast.entityName == slow.entityName && fast.primaryKey == slow.primaryKey)
            #expect(fast.token == slow.token && fast.timestamp == slow.timestamp)
        }
    }

    @Test func fastPathDeclinesWhatItDoesNotRead() throws {
        let model = try StreamFixtures.blogModel()
        let lines = [
            #""update","updatedProperties":{"title":{"before":"a","after":"b"}}}"#,
            #""delete","before":{"title":"a"}}"#,
            #""insert","after":{"title":"t"},"relationships":{"tags":{"added":[],"removed":[]}}}"#,
            #""insert","after":{"nope":"t"}}"#,
            #""insert","after":{"title":[1]}}"#,
            #""insert","after":{"title":"t"}} trailing"#,
        ]
        for text in lines {
            #expect(NativeRecordReader().change(Self.line(text), model: model, ids: ObjectIDReader()) == nil, "\(text)")
        }
    }

    @Test func canonicalDatesMatchISO8601() {
        for text in ["2024-05-01T12:00:00Z", "2024-05-01T12:00:00.125Z", "1969-12-31T23:59:59.999Z", "2000-02-29T23:59:60Z", "0001-01-01T00:00:00Z", "2024-02-31T00:00:00Z"] {
            #expect(canonicalDate(ArraySlice(text.utf8)) == ISO8601.date(from: text), "\(text)")
        }
        #expect(canonicalDate(ArraySlice("2024-05-01t12:00:00Z".utf8)) == nil)
    }

    @Test func columnarBatchInsertKeepsPrimaryKeys() throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try StreamFixtures.blogModel())
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("columnar-keys-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: dir.appendingPathComponent("s.sqlite")))
        var request = BatchInsertRequest(entityName: "Tag", columns: ["name"], rows: [["a"], ["b"]])
        request.primaryKeys = [40, 42]
        request.resultType = .objectIDs
        let first = try coordinator.execute(request)
        #expect(first.objectIDs.map(\.primaryKey) == [40, 42] && first.inserted == 2)
        request.rows = [["a2"], ["b2"]]
        let second = try coordinator.execute(request)
        #expect(second.updated == 2 && second.inserted == 0)
        request.primaryKeys = [1]
        #expect(throws: TributaryError.self) { try coordinator.execute(request) }
    }
}

/// The fast path of the native encoder writes the bytes the general one does.
@Suite struct NativeEncoderFastPathTests {
    static func general(_ record: StreamRecord) -> [UInt8] {
        var json = JSONWriter()
        var texts = RecordTexts()
        texts.update(for: record)
        json.object { o in
            o.field("position", record.position.description)
            o.field("storeID", texts.store)
            RecordBody.writeTransaction(record, texts: texts, to: &o)
            RecordBody.write(record, texts: &texts, marking: BlobMarking(), to: &o)
        }
        return json.bytes + [0x0A]
    }

    @Test func insertsAndReadsMatchTheGeneralPath() {
        let store = EncodingTests.storeID
        let values: [AttributeValue] = ["plain", "quote \" back \\ newline \n tab \t \u{1} é", .null, .integer(0), .integer(-42), .integer(.max), .integer(.min),
                                        .double(2.5), .double(3), .double(.infinity), .bool(true), .date(Date(timeIntervalSince1970: 1_714_564_800.125)),
                                        .uuid(store), .data(Data([1, 2, 3])), .objectID(EncodingTests.id("Tag", 9))]
        var encoder = NativeEncoder()
        for (n, operation) in [StreamOperation.create, .read, .create].enumerated() {
            let properties = values.enumerated().map { PropertyChange(name: "p\($0.offset)", after: $0.element) } + [PropertyChange(name: "nil")]
            let record = StreamRecord(position: StreamPosition(token: Int64(7 + n), index: n * 1000, isSnapshot: operation == .read), storeID: store,
                                      timestamp: Date(timeIntervalSince1970: 1_714_564_800), author: n == 0 ? nil : "imp\"orter", contextName: n == 2 ? "cli" : nil,
                                      operation: operation, objectID: ObjectID(storeID: store, entityName: "Tag", primaryKey: Int64(n) - 1), properties: properties)
            var bytes: [UInt8] = []
            encoder.encode(record, into: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == String(decoding: Self.general(record), as: UTF8.self))
        }
    }
}

@Suite struct DateTextsTests {
    @Test func datesMatchISO8601() {
        var texts = DateTexts()
        var seconds: [Double] = [0, -1, -0.5, -86_400, -86_401.25, 1_714_564_800, 1_714_564_800.125, 1_714_564_800.9996, 1_714_651_199.999, 951_782_400, 253_402_300_799]
        for k in 0..<2_000 { seconds.append(1.7e9 + Double(k * 37) + Double(k % 7) / 8) }
        for s in seconds {
            let date = Date(timeIntervalSince1970: s)
            var bytes: [UInt8] = []
            texts.append(date, to: &bytes)
            #expect(String(decoding: bytes, as: UTF8.self) == ISO8601.string(from: date), "\(s)")
        }
    }
}
