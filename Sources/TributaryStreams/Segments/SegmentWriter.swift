import Foundation
import Tributary

/// Writes one segment: encoded records go into zstd frames of at most `recordsPerFrame`
/// records, each compressed independently (content checksum on) and appended to the
/// directory's temporary segment file as it fills (through a buffer of compressed frames of
/// at most 256 KB, so that small frames do not cost a system call each); ``finish(previous:)``
/// adds the frame index and seek table, fsyncs, and renames the file to its name from its
/// first and last position. Memory stays bounded by one frame and that buffer.
///
/// ```swift
/// let writer = try SegmentWriter(directory: dir, encoder: try ZstdFrameEncoder(), recordsPerFrame: 64)
/// try writer.append(line, position: record.position, timestamp: record.timestamp)
/// let entry = try writer.finish(previous: manifest.last)
/// ```
public final class SegmentWriter {
    /// The name of the one temporary segment a directory may hold.
    public static let temporaryName = "segment.tmp"
    /// The ending of segment file names.
    public static let fileExtension = ".ndjson.zst"

    private let directory: URL
    private let encoder: ZstdFrameEncoder
    private let recordsPerFrame: Int
    private let fd: Int32
    // Unchecked exclusivity on what each append touches: a writer is used by one thread at a
    // time, and the runtime's checks on these were a measurable part of an export.
    @exclusivity(unchecked) private var frameBuffer: [UInt8] = []
    @exclusivity(unchecked) private var frameRecords = 0
    @exclusivity(unchecked) private var frameFirst: StreamPosition?
    private var compressed: [UInt8] = []
    /// Compressed bytes not yet written to the file.
    private var output: [UInt8] = []
    private let temporaryURL: URL
    private var frames: [SegmentFooter.Frame] = []
    private var hash = SHA256()
    private var finished = false

    /// Records appended so far.
    @exclusivity(unchecked) public private(set) var records = 0
    /// Bytes written to the file so far (compressed), plus the open frame's uncompressed size.
    public var approximateBytes: Int { written + frameBuffer.count / 4 }
    /// When the first record was appended.
    public private(set) var openedAt: Date?
    private var written = 0
    @exclusivity(unchecked) private var first: StreamPosition?
    @exclusivity(unchecked) private var last: StreamPosition?
    private var firstTimestamp = Date(timeIntervalSince1970: 0)
    @exclusivity(unchecked) private var lastTimestamp = Date(timeIntervalSince1970: 0)

    /// A writer of a new segment in `directory` (replacing a leftover temporary segment).
    public init(directory: URL, encoder: ZstdFrameEncoder, recordsPerFrame: Int = 64) throws {
        self.directory = directory
        self.encoder = encoder
        self.recordsPerFrame = max(1, recordsPerFrame)
        let url = directory.appendingPathComponent(Self.temporaryName)
        temporaryURL = url
        fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw DurableFile.failure("cannot create", url) }
    }

    deinit {
        close(fd)
        if !finished { unlink(directory.appendingPathComponent(Self.temporaryName).path) }
    }

    /// Appends one encoded record (a JSON line ending in `\n`).
    public func append(_ line: [UInt8], position: StreamPosition, timestamp: Date) throws {
        if first == nil {
            first = position
            firstTimestamp = timestamp
            openedAt = Date()
        }
        if frameFirst == nil { frameFirst = position }
        last = position
        lastTimestamp = timestamp
        frameBuffer += line
        frameRecords += 1
        records += 1
        if frameRecords >= recordsPerFrame { try flushFrame() }
    }

    private func flushFrame() throws {
        guard frameRecords > 0, let frameFirst else { return }
        compressed.removeAll(keepingCapacity: true)
        let size = try encoder.compressFrame(frameBuffer, appendingTo: &compressed)
        frames.append(SegmentFooter.Frame(first: frameFirst, records: frameRecords, compressedSize: size, decompressedSize: frameBuffer.count, offset: written))
        try writeOut(compressed)
        frameBuffer.removeAll(keepingCapacity: true)
        frameRecords = 0
        self.frameFirst = nil
    }

    private func writeOut(_ bytes: [UInt8]) throws {
        output += bytes
        hash.update(bytes)
        written += bytes.count
        if output.count >= 1 << 18 { try flushOutput() }
    }

    private func flushOutput() throws {
        guard !output.isEmpty else { return }
        try output.withUnsafeBytes { try DurableFile.writeAll(fd, $0, url: temporaryURL) }
        output.removeAll(keepingCapacity: true)
    }

    /// Completes the segment: the last frame, the footer, fsync, rename. Returns its manifest entry.
    public func finish(previous: StreamPosition?) throws -> StreamManifest.Segment {
        precondition(!finished && records > 0, "finish a segment once, after appending records")
        try flushFrame()
        try writeOut(SegmentFooter.encode(frames))
        try flushOutput()
        let temporary = temporaryURL
        guard fsync(fd) == 0 else { throw DurableFile.failure("cannot fsync", temporary) }
        let name = Self.name(first: first!, last: last!)
        try DurableFile.rename(temporary, to: directory.appendingPathComponent(name))
        finished = true
        return StreamManifest.Segment(name: name, first: first!, last: last!, previous: previous, firstTimestamp: firstTimestamp, lastTimestamp: lastTimestamp,
                                      records: records, frames: frames.count, bytes: written, sha256: hash.finalize(), dictionaryID: encoder.dictionaryID)
    }

    /// The file name of a segment holding `first` through `last`.
    public static func name(first: StreamPosition, last: StreamPosition) -> String {
        "\(first.fileNameComponent)-\(last.fileNameComponent)\(fileExtension)"
    }
}
