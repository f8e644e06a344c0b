import Foundation
import Tributary

/// Reads one segment of a stream directory back, checking it against its manifest entry:
/// the file's size and SHA-256 on open, zstd's content checksum of every frame as it is
/// decompressed. Errors are `damagedStream`, located at the segment, with the byte offset
/// or the record number.
///
/// ```swift
/// let reader = try SegmentReader(directory: dir, segment: manifest.segments[0], decoder: try ZstdFrameDecoder())
/// try reader.forEachRecord { line, position in print(position) }
/// ```
public struct SegmentReader {
    /// The segment's manifest entry.
    public let segment: StreamManifest.Segment
    /// The segment's frames.
    public let footer: SegmentFooter
    private let bytes: [UInt8]
    private let decoder: ZstdFrameDecoder
    private let format: StreamFormat
    private let place: String

    /// Opens and checks the file of `segment` (its size and SHA-256, and that the frame index and seek table are whole).
    public init(directory: URL, segment: StreamManifest.Segment, format: StreamFormat, decoder: ZstdFrameDecoder) throws {
        self.segment = segment
        self.decoder = decoder
        self.format = format
        place = "segment \(segment.name)"
        let url = directory.appendingPathComponent(segment.name)
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw TributaryError(.damagedStream, "the segment is missing", location: place, hint: "the manifest lists it; restore the file from a copy")
        }
        bytes = [UInt8](data)
        guard bytes.count == segment.bytes else {
            throw TributaryError(.damagedStream, "the file has \(bytes.count) bytes, the manifest says \(segment.bytes)\(bytes.count < segment.bytes ? " (truncated at byte offset \(bytes.count))" : "")", location: place,
                                 hint: "restore the segment from a copy")
        }
        let digest = SHA256.hex(bytes)
        guard digest == segment.sha256 else {
            let where_ = (try? SegmentReader.firstBadFrame(bytes, decoder: decoder)).flatMap { $0 }.map { " (first bad frame at byte offset \($0))" } ?? ""
            throw TributaryError(.damagedStream, "SHA-256 is \(digest), the manifest says \(segment.sha256)\(where_)", location: place, hint: "the file was changed or damaged; restore it from a copy")
        }
        do {
            footer = try SegmentFooter.read(bytes)
        } catch let error as TributaryError {
            throw error.located(place)
        }
        guard footer.frames.count == segment.frames, footer.frames.reduce(0, { $0 + $1.records }) == segment.records else {
            throw TributaryError(.damagedStream, "the frame index holds \(footer.frames.reduce(0) { $0 + $1.records }) records in \(footer.frames.count) frames, the manifest says \(segment.records) in \(segment.frames)", location: place)
        }
    }

    /// Calls `body` with each record (its JSON line without the newline) and position, from
    /// frame `startFrame` on; `body` returns false to stop. Positions must rise strictly.
    public func forEachRecord(fromFrame startFrame: Int = 0, _ body: (ArraySlice<UInt8>, StreamPosition) throws -> Bool) throws {
        var previous: StreamPosition?
        var recordNumber = footer.frames[..<startFrame].reduce(0) { $0 + $1.records }
        for frame in footer.frames[startFrame...] {
            let content: [UInt8]
            do {
                content = try decoder.decompressFrame(bytes[frame.offset..<(frame.offset + frame.compressedSize)])
            } catch let error as TributaryError {
                throw TributaryError(error.code, "frame at byte offset \(frame.offset): \(error.message)", location: place, hint: error.hint)
            }
            guard content.count == frame.decompressedSize else {
                throw TributaryError(.damagedStream, "frame at byte offset \(frame.offset) holds \(content.count) bytes, the seek table says \(frame.decompressedSize)", location: place)
            }
            var start = 0
            var inFrame = 0
            while start < content.count {
                guard let end = content[start...].firstIndex(of: 0x0A) else {
                    throw TributaryError(.damagedStream, "record \(recordNumber + 1) does not end with a newline", location: place)
                }
                let line = content[start..<end]
                recordNumber += 1
                guard let position = RecordPosition.extract(line, format: format) else {
                    throw TributaryError(.damagedStream, "record \(recordNumber) has no position", location: place)
                }
                if inFrame == 0, position != frame.first {
                    throw TributaryError(.damagedStream, "record \(recordNumber) is at \(position), the frame index says \(frame.first)", location: place)
                }
                if let previous, position <= previous {
                    throw TributaryError(.damagedStream, "record \(recordNumber) is at \(position), not after \(previous)", location: place)
                }
                previous = position
                inFrame += 1
                if try !body(line, position) { return }
                start = end + 1
            }
            guard inFrame == frame.records else {
                throw TributaryError(.damagedStream, "frame at byte offset \(frame.offset) holds \(inFrame) records, the index says \(frame.records)", location: place)
            }
        }
    }

    /// The frame to start reading at to reach `position`: the last whose first record is at or before it.
    public func frame(containing position: StreamPosition) -> Int {
        var result = 0
        for (i, frame) in footer.frames.enumerated() where frame.first <= position { result = i }
        return result
    }

    /// The offset of the first frame that does not decompress, if any (to locate damage).
    static func firstBadFrame(_ bytes: [UInt8], decoder: ZstdFrameDecoder) throws -> Int? {
        var offset = 0
        while offset < bytes.count {
            let rest = bytes[offset...]
            if ZstdFrameDecoder.isSkippableFrame(rest) { return nil }
            guard let size = try? ZstdFrameDecoder.frameSize(rest), (try? decoder.decompressFrame(bytes[offset..<(offset + size)])) != nil else { return offset }
            offset += size
        }
        return nil
    }
}

/// Finds a record's position in its JSON line without decoding all of it.
enum RecordPosition {
    static func extract(_ line: ArraySlice<UInt8>, format: StreamFormat) -> StreamPosition? {
        switch format {
        case .native:
            if let position = nativePosition(line) { return position }
            return stringField(line, after: Array(#"{"position":""#.utf8)).flatMap { try? StreamPosition(parsing: $0) }
        case .cloudevents: return stringField(line, after: Array(#""data":{"position":""#.utf8)).flatMap { try? StreamPosition(parsing: $0) }
        case .debezium:
            guard let parsed: JSONValue = try? RecordJSONParser.parse(line), case .object(let record) = parsed,
                  let sourceValue: JSONValue = record["source"], case .object(let source) = sourceValue else { return nil }
            // A schema change event: Tributary's `position` beside Debezium's fields.
            if record["op"] == nil, let text: JSONValue = record["position"], case .string(let position) = text { return try? StreamPosition(parsing: position) }
            guard let tokenValue: JSONValue = source["token"], case .string(let token) = tokenValue,
                  let indexValue: JSONValue = source["index"], case .integer(let index) = indexValue,
                  let value = try? PersistentHistoryToken(parsing: token).value else { return nil }
            let isSnapshot = record["op"] == JSONValue.string("r")
            return StreamPosition(token: value, index: Int(index), isSnapshot: isSnapshot)
        }
    }

    private static let nativeMarker = Array(#"{"position":""#.utf8)

    /// The position of a native record that starts with its usual `{"position":"TOKEN.[r]INDEX"`,
    /// read from the bytes; nil for any other shape (the general path then reads it).
    private static func nativePosition(_ line: ArraySlice<UInt8>) -> StreamPosition? {
        let marker = nativeMarker
        guard line.count > marker.count + 3, line.prefix(marker.count).elementsEqual(marker) else { return nil }
        var i = line.startIndex + marker.count
        func digits() -> Int64? {
            var value: Int64 = 0
            var count = 0
            while i < line.endIndex, line[i] >= 0x30, line[i] <= 0x39 {
                guard count < 18 else { return nil }
                value = value * 10 + Int64(line[i] - 0x30)
                count += 1
                i += 1
            }
            return count > 0 ? value : nil
        }
        guard let token = digits(), i < line.endIndex, line[i] == 0x2E else { return nil }
        i += 1
        let snapshot = i < line.endIndex && line[i] == 0x72
        if snapshot { i += 1 }
        guard let index = digits(), i < line.endIndex, line[i] == 0x22 else { return nil }
        return StreamPosition(token: token, index: Int(index), isSnapshot: snapshot)
    }

    private static func stringField(_ line: ArraySlice<UInt8>, after marker: [UInt8]) -> String? {
        guard line.count > marker.count else { return nil }
        var i = line.startIndex
        let limit = line.endIndex - marker.count
        while i <= limit {
            if line[i] == marker[0], line[i..<(i + marker.count)].elementsEqual(marker) {
                let start = i + marker.count
                guard let end = line[start...].firstIndex(of: 0x22) else { return nil }
                return String(decoding: line[start..<end], as: UTF8.self)
            }
            i += 1
        }
        return nil
    }
}
