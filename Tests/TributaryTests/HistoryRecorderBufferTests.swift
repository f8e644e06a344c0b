import Foundation
import Testing
@testable import Tributary

/// The recorder's hot-path structures: the object index (against a dictionary, through growth,
/// removals and many transactions) and the row writer (byte for byte what ByteWriter writes).
@Suite struct HistoryRecorderBufferTests {
    @Test func objectIndexAgreesWithADictionaryAcrossTransactions() {
        var index = ObjectIndex()
        var generator = SystemRandomNumberGenerator()
        for transaction in 0..<300 {
            var expected: [Int64: Int] = [:]
            // Small and large transactions alternate, so a small one follows a table grown large.
            let operations = transaction % 7 == 0 ? 5_000 : Int.random(in: 0...40, using: &generator)
            for op in 0..<operations {
                let entity = Int.random(in: 0...3, using: &generator)
                let key = Int64.random(in: -50...5_000, using: &generator)
                let combined = Int64(entity) << 32 | (key & 0xffff_ffff)
                if Int.random(in: 0..<5, using: &generator) == 0 {
                    index[entity: entity, key: key] = nil
                    expected[combined] = nil
                } else {
                    index[entity: entity, key: key] = op
                    expected[combined] = op
                }
                let probeEntity = Int.random(in: 0...3, using: &generator)
                let probeKey = Int64.random(in: -50...5_000, using: &generator)
                #expect(index[entity: probeEntity, key: probeKey] == expected[Int64(probeEntity) << 32 | (probeKey & 0xffff_ffff)])
            }
            for (combined, value) in expected {
                #expect(index[entity: Int(combined >> 32), key: Int64(Int32(truncatingIfNeeded: combined))] == value)
            }
            index.removeAll()
            for (combined, _) in expected {
                #expect(index[entity: Int(combined >> 32), key: Int64(Int32(truncatingIfNeeded: combined))] == nil)
            }
        }
    }

    @Test func rowWriterWritesWhatByteWriterWrites() {
        var generator = SystemRandomNumberGenerator()
        var row = RowWriter()
        defer { row.deallocate() }
        for _ in 0..<200 {
            var expected = ByteWriter()
            row.removeAll()
            for _ in 0..<Int.random(in: 1...50, using: &generator) {
                row.reserve(32)
                switch Int.random(in: 0..<5, using: &generator) {
                case 0:
                    let b = UInt8.random(in: 0...255, using: &generator)
                    expected.byte(b); row.byte(b)
                case 1:
                    let v = UInt64.random(in: 0...UInt64.max, using: &generator) >> UInt64.random(in: 0...63, using: &generator)
                    expected.varint(v); row.varint(v)
                case 2:
                    let v = Int64.random(in: Int64.min...Int64.max, using: &generator) >> Int64.random(in: 0...63, using: &generator)
                    expected.signed(v); row.signed(v)
                case 3:
                    let d = Double.random(in: -1e12...1e12, using: &generator)
                    expected.double(d); row.double(d)
                default:
                    let text = String(repeating: "é", count: Int.random(in: 0...300, using: &generator))
                    let utf8 = Array(text.utf8)
                    expected.bytes.append(contentsOf: utf8)
                    row.reserve(utf8.count)
                    utf8.withUnsafeBytes { if let base = $0.baseAddress { row.bytes(base, count: $0.count) } }
                }
            }
            #expect(Array(row.written) == expected.bytes)
        }
    }
}
