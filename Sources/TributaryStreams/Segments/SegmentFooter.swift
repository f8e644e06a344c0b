import Foundation
import Tributary

/// The two skippable frames that end a segment (the `zstd` tool skips both):
///
/// 1. Tributary's frame index (magic `0x184D2A51`): a JSON line
///    `{"tributaryIndex":1,"frames":[["42.0",64],…]}`, the first position and record count of
///    every frame, so a reader can find a position by reading only this and one frame;
/// 2. zstd's seekable-format seek table (magic `0x184D2A5E`), last in the file: per frame its
///    compressed and decompressed size, then the frame count, a descriptor byte and the seekable
///    magic `0x8F92EAB1`, as zstd's `contrib/seekable_format` reads it.
///
/// ```swift
/// let footer = try SegmentFooter.read(fileBytes)
/// print(footer.frames.count)
/// ```
public struct SegmentFooter: Sendable, Equatable {
    /// One data frame of a segment.
    public struct Frame: Sendable, Equatable {
        /// The position of its first record.
        public var first: StreamPosition
        /// The records it holds.
        public var records: Int
        /// Its compressed size.
        public var compressedSize: Int
        /// Its decompressed size.
        public var decompressedSize: Int
        /// Its offset in the file.
        public var offset: Int
    }

    /// The data frames, in order.
    public var frames: [Frame]

    static let indexMagic: UInt32 = 0x184D_2A51
    static let seekTableMagic: UInt32 = 0x184D_2A5E
    static let seekableMagic: UInt32 = 0x8F92_EAB1

    /// The two skippable frames for `frames`.
    public static func encode(_ frames: [Frame]) -> [UInt8] {
        var json = JSONWriter()
        json.object { o in
            o.field("tributaryIndex", .integer(1))
            o.key("frames")
            o.array { a in for frame in frames { a.value(.array([.string(frame.first.description), .integer(Int64(frame.records))])) } }
        }
        var out: [UInt8] = []
        let index = Array(json.text.utf8)
        append32(indexMagic, to: &out)
        append32(UInt32(index.count), to: &out)
        out += index
        var table: [UInt8] = []
        for frame in frames {
            append32(UInt32(frame.compressedSize), to: &table)
            append32(UInt32(frame.decompressedSize), to: &table)
        }
        append32(UInt32(frames.count), to: &table)
        table.append(0)   // descriptor: no per-frame checksums (each frame carries zstd's own)
        append32(seekableMagic, to: &table)
        append32(seekTableMagic, to: &out)
        append32(UInt32(table.count), to: &out)
        out += table
        return out
    }

    /// Reads the footer at the end of `file`, checking that the seek table and the index agree
    /// and that the frames they describe tile the file exactly.
    public static func read(_ file: [UInt8]) throws -> SegmentFooter {
        guard file.count >= 17, read32(file, file.count - 4) == seekableMagic else {
            throw TributaryError(.damagedStream, "no seek table at the end (the segment is truncated or not a Tributary segment)")
        }
        let count = Int(read32(file, file.count - 9))
        let tableSize = count * 8 + 9
        let tableStart = file.count - tableSize - 8
        guard count < 1 << 24, tableStart >= 0, read32(file, tableStart) == seekTableMagic, Int(read32(file, tableStart + 4)) == tableSize else {
            throw TributaryError(.damagedStream, "the seek table is damaged", hint: "byte offset \(max(0, tableStart))")
        }
        var frames: [Frame] = []
        var offset = 0
        for i in 0..<count {
            let compressed = Int(read32(file, tableStart + 8 + i * 8))
            let decompressed = Int(read32(file, tableStart + 12 + i * 8))
            frames.append(Frame(first: StreamPosition(token: 0, index: 0), records: 0, compressedSize: compressed, decompressedSize: decompressed, offset: offset))
            offset += compressed
        }
        // The index frame sits between the data frames and the seek table.
        guard offset + 8 <= tableStart, read32(file, offset) == indexMagic, offset + 8 + Int(read32(file, offset + 4)) == tableStart else {
            throw TributaryError(.damagedStream, "the frame index does not follow the frames the seek table lists", hint: "byte offset \(offset)")
        }
        let indexBytes = Data(file[(offset + 8)..<tableStart])
        guard case .object(let index)? = try? JSONValue.parse(indexBytes), case .array(let entries)? = index["frames"], entries.count == count else {
            throw TributaryError(.damagedStream, "the frame index is damaged", hint: "byte offset \(offset)")
        }
        for (i, entry) in entries.enumerated() {
            guard case .array(let pair) = entry, pair.count == 2, case .string(let first) = pair[0], case .integer(let records) = pair[1],
                  let position = try? StreamPosition(parsing: first) else {
                throw TributaryError(.damagedStream, "entry \(i) of the frame index is damaged", hint: "byte offset \(offset)")
            }
            frames[i].first = position
            frames[i].records = Int(records)
        }
        return SegmentFooter(frames: frames)
    }

    static func append32(_ value: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: value))
        out.append(UInt8(truncatingIfNeeded: value >> 8))
        out.append(UInt8(truncatingIfNeeded: value >> 16))
        out.append(UInt8(truncatingIfNeeded: value >> 24))
    }

    static func read32(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }
}
