import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// A capture gap record in every format reads back as itself and as nothing else: not a
/// schema record, not a change (Debezium's has no `op`).
@Suite struct CaptureGapRecordTests {
    static let gap = CaptureGapRecord(position: StreamPosition(token: 2, index: 0), storeID: EncodingTests.storeID, timestamp: EncodingTests.commit,
                                      description: "another program made audits after token 1; writes to it are not captured: run tributary adopt again", entities: ["users"])

    static func encoded(_ format: StreamFormat) -> [UInt8] {
        var encoder = format.makeEncoder(clock: { EncodingTests.exportTime })
        var line: [UInt8] = []
        encoder.encodeGap(gap, into: &line)
        return line
    }

    @Test(arguments: StreamFormat.allCases)
    func aGapRecordReadsBackAsItselfOnly(format: StreamFormat) throws {
        let line = Self.encoded(format)
        #expect(line.last == 0x0A && line.filter { $0 == 0x0A }.count == 1, "one line")
        let bytes = ArraySlice(line.dropLast())
        #expect(try CaptureGapRecord.read(bytes, format: format) == Self.gap)
        #expect(try CaptureGapRecord.read(bytes, format: format, at: StreamPosition(token: 2, index: 1)) == nil, "only the first record of a token")
        #expect(try SchemaRecord.read(bytes, format: format) == nil)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        switch format {
        case .native: #expect(json["type"] as? String == "captureGap")
        case .cloudevents:
            #expect(json["type"] as? String == "tributary.captureGap" && json["id"] as? String == Self.gap.eventID)
            #expect((json["data"] as? [String: Any])?["description"] as? String == Self.gap.description)
        case .debezium:
            #expect(json["op"] == nil && json["before"] == nil && json["after"] == nil, "Debezium consumers of change events pass over it")
            #expect((json["source"] as? [String: Any])?["connector"] as? String == "tributary")
        }
    }

    @Test func changeRecordsAreNotGaps() throws {
        for format in StreamFormat.allCases {
            for line in EncodingTests.encode(format, [EncodingTests.record(.create, [PropertyChange(name: "type", after: "captureGap")])]) {
                #expect(try CaptureGapRecord.read(ArraySlice(line.utf8), format: format) == nil, "\(format): \(line)")
            }
        }
    }
}
