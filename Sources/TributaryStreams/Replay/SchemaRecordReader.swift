import Foundation
import Tributary

extension SchemaRecord {
    /// The schema record in `line` (one record of a stream in `format`, without its newline),
    /// nil when the line is a change record: native `"type":"schema"`, the CloudEvent
    /// `tributary.schema` (the native body as `data`), or Debezium's schema change event
    /// (Tributary's fields beside `ddl` and `tableChanges`). The model is decoded from the
    /// record's `model`; a schema record that does not read is `damagedStream`.
    ///
    /// ```swift
    /// if let schema = try SchemaRecord.read(line, format: .native) { print(schema.position, schema.change.changes) }
    /// ```
    public static func read(_ line: ArraySlice<UInt8>, format: StreamFormat) throws -> SchemaRecord? {
        guard mayBeSchema(line) else { return nil }
        guard case .object(let top) = try RecordJSONParser.parse(line) else { return nil }
        var bodyBytes = line
        var body = top
        if format == .cloudevents {
            guard top["type"] == .string("tributary.schema"), case .object(let data)? = top["data"],
                  let range = try RecordJSONParser.memberRange("data", in: line) else { return nil }
            body = data
            bodyBytes = line[range]
        }
        guard body["type"] == .string("schema") else { return nil }
        return try decode(body, modelBytes: RecordJSONParser.memberRange("model", in: bodyBytes).map { bodyBytes[$0] })
    }

    /// Whether the record at `position` may be a schema record: a schema transaction has no
    /// changes, so its record is the first of its token. Replay asks this before looking into
    /// a line, as most records are not first.
    static func mayBeAt(_ position: StreamPosition) -> Bool { position.index == 0 }

    /// Whether `line` holds `"type":"schema"` (every encoding's schema record does; a JSON
    /// string cannot, its quotes being escaped): the cheap test before parsing.
    static func mayBeSchema(_ line: ArraySlice<UInt8>) -> Bool {
        RecordJSONParser.contains(schemaMarker, in: line)
    }

    private static let schemaMarker = Array(#""type":"schema""#.utf8)

    private static func decode(_ body: [String: JSONValue], modelBytes: ArraySlice<UInt8>?) throws -> SchemaRecord {
        guard let (position, storeID, timestamp) = RecordJSONParser.transactionFields(body),
              case .string(let toVersion)? = body["toVersion"], let modelBytes else {
            throw ReplayChange.bad("a schema record lacks position, storeID, timestamp, toVersion or model")
        }
        let model: ManagedObjectModel
        do {
            model = try ManagedObjectModel.fromJSON(Data(modelBytes))
        } catch let error as TributaryError {
            throw TributaryError(.damagedStream, "the schema record at \(position) holds a model that does not read: \(error.message)",
                                 hint: "the stream was edited or damaged; restore it from a copy")
        }
        var fromVersion: String?
        if case .string(let text)? = body["fromVersion"] { fromVersion = text }
        var changes: [String] = []
        if case .array(let items)? = body["changes"] { changes = items.compactMap { if case .string(let text) = $0 { text } else { nil } } }
        let change = SchemaChange(fromVersion: fromVersion, toVersion: toVersion, changes: changes, model: model, isDetected: body["detected"] == .bool(true))
        return SchemaRecord(position: position, storeID: storeID, timestamp: timestamp, change: change)
    }
}

extension RecordJSONParser {
    /// The `position`, `storeID` and `timestamp` of a record of a whole transaction (a schema
    /// record, a capture gap), nil when one is missing or does not read.
    static func transactionFields(_ body: [String: JSONValue]) -> (StreamPosition, UUID, Date)? {
        guard case .string(let positionText)? = body["position"], let position = try? StreamPosition(parsing: positionText),
              case .string(let storeText)? = body["storeID"], let storeID = UUID(uuidString: storeText),
              case .string(let time)? = body["timestamp"], let timestamp = ISO8601.date(from: time) else { return nil }
        return (position, storeID, timestamp)
    }

    /// Whether `line` holds `marker`, a `"type":"…"` member (a JSON string cannot hold one,
    /// its quotes being escaped): the cheap test before parsing.
    static func contains(_ marker: [UInt8], in line: ArraySlice<UInt8>) -> Bool {
        guard line.count >= marker.count, marker.count >= 2 else { return false }
        return line.withUnsafeBufferPointer { bytes in
            marker.withUnsafeBufferPointer { m in
                for i in 0...(bytes.count - m.count) where bytes[i] == m[0] && bytes[i + 1] == m[1] {
                    if memcmp(bytes.baseAddress! + i, m.baseAddress!, m.count) == 0 { return true }
                }
                return false
            }
        }
    }

    /// The bytes of member `key`'s value in the JSON object `bytes` holds, nil when it has none.
    static func memberRange(_ key: String, in bytes: ArraySlice<UInt8>) throws -> Range<Int>? {
        var parser = RecordJSONParser(bytes)
        return try parser.memberRange(key)
    }

    private mutating func memberRange(_ key: String) throws -> Range<Int>? {
        skipSpace()
        guard i < bytes.endIndex, bytes[i] == 0x7B else { return nil }
        i += 1
        skipSpace()
        if i < bytes.endIndex, bytes[i] == 0x7D { return nil }
        while true {
            skipSpace()
            guard i < bytes.endIndex, bytes[i] == 0x22 else { throw fail("expected a key") }
            let name = try string()
            skipSpace()
            guard i < bytes.endIndex, bytes[i] == 0x3A else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            let start = i
            _ = try value(depth: 1)
            if name == key { return start..<i }
            skipSpace()
            guard i < bytes.endIndex else { throw fail("unexpected end") }
            if bytes[i] == 0x2C { i += 1; continue }
            if bytes[i] == 0x7D { return nil }
            throw fail("expected ',' or '}'")
        }
    }
}
