import Foundation
import Tributary

extension CaptureGapRecord {
    /// The capture gap record in `line` (one record of a stream in `format`, without its
    /// newline), nil when the line is another record: native `"type":"captureGap"`, the
    /// CloudEvent `tributary.captureGap` (the native body as `data`), or Debezium's record of
    /// Tributary's fields. A gap record that does not read is `damagedStream`.
    ///
    /// ```swift
    /// if let gap = try CaptureGapRecord.read(line, format: .native) { print("warning:", gap.summary) }
    /// ```
    public static func read(_ line: ArraySlice<UInt8>, format: StreamFormat) throws -> CaptureGapRecord? {
        guard RecordJSONParser.contains(marker, in: line), case .object(let top) = try RecordJSONParser.parse(line) else { return nil }
        var body = top
        if format == .cloudevents {
            guard top["type"] == .string("tributary.\(type)"), case .object(let data)? = top["data"] else { return nil }
            body = data
        }
        guard body["type"] == .string(type) else { return nil }
        guard let (position, storeID, timestamp) = RecordJSONParser.transactionFields(body), case .string(let description)? = body["description"] else {
            throw ReplayChange.bad("a capture gap record lacks position, storeID, timestamp or description")
        }
        var entities: [String] = []
        if case .array(let items)? = body["entities"] { entities = items.compactMap { if case .string(let text) = $0 { text } else { nil } } }
        return CaptureGapRecord(position: position, storeID: storeID, timestamp: timestamp, description: description, entities: entities)
    }

    /// The capture gap record at `position`, nil when there is none: a gap transaction has no
    /// changes, so its record is the first of its token (most records are not, and are not read).
    static func read(_ line: ArraySlice<UInt8>, format: StreamFormat, at position: StreamPosition) throws -> CaptureGapRecord? {
        guard SchemaRecord.mayBeAt(position) else { return nil }
        return try read(line, format: format)
    }

    private static let marker = Array(#""type":"captureGap""#.utf8)
}
