import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// `verify` catches a flipped byte, a truncated segment, a missing segment and a hand-edited manifest.
@Suite struct VerifyTests {
    /// A stream of several segments, and its directory.
    static func stream(_ temp: TemporaryDirectory) throws -> (URL, StreamManifest) {
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source, posts: 30)
        var options = ExportOptions()
        options.maximumSegmentRecords = 15
        options.recordsPerFrame = 4
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        let manifest = try #require(try StreamManifest.load(from: stream))
        #expect(manifest.segments.count >= 4)
        let summary = try StreamVerifier(directory: stream).verify()
        #expect(summary.records == manifest.segments.reduce(0) { $0 + $1.records })
        return (stream, manifest)
    }

    static func damage(_ expectations: (TributaryError) -> Bool, _ stream: URL, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            _ = try StreamVerifier(directory: stream).verify()
            Issue.record("verify passed a damaged stream", sourceLocation: sourceLocation)
        } catch let error as TributaryError {
            #expect(error.code == .damagedStream, sourceLocation: sourceLocation)
            #expect(expectations(error), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test func flippedByte() throws {
        let temp = TemporaryDirectory()
        let (stream, manifest) = try Self.stream(temp)
        let segment = manifest.segments[1]
        let url = stream.appendingPathComponent(segment.name)
        var bytes = [UInt8](try Data(contentsOf: url))
        bytes[20] ^= 0x40
        try Data(bytes).write(to: url)
        Self.damage({ $0.location == "segment \(segment.name)" && $0.message.contains("SHA-256") && $0.message.contains("byte offset 0") }, stream)
    }

    @Test func flippedByteWithMatchingHashIsCaughtByZstdChecksum() throws {
        // Someone "fixes" the manifest's hash too: zstd's content checksum still fails.
        let temp = TemporaryDirectory()
        var (stream, manifest) = try Self.stream(temp)
        let url = stream.appendingPathComponent(manifest.segments[0].name)
        var bytes = [UInt8](try Data(contentsOf: url))
        let frame = try SegmentFooter.read(bytes).frames[1]
        bytes[frame.offset + frame.compressedSize - 2] ^= 0x01   // inside the frame's checksum
        try Data(bytes).write(to: url)
        manifest.segments[0].sha256 = SHA256.hex(bytes)
        try manifest.save(to: stream)
        Self.damage({ $0.message.contains("frame at byte offset \(frame.offset)") && $0.location == "segment \(manifest.segments[0].name)" }, stream)
    }

    @Test func truncatedSegment() throws {
        let temp = TemporaryDirectory()
        let (stream, manifest) = try Self.stream(temp)
        let segment = manifest.segments[2]
        let url = stream.appendingPathComponent(segment.name)
        let bytes = try Data(contentsOf: url)
        try bytes.prefix(bytes.count - 30).write(to: url)
        Self.damage({ $0.message.contains("truncated at byte offset \(bytes.count - 30)") && $0.location == "segment \(segment.name)" }, stream)
    }

    @Test func missingSegmentFile() throws {
        let temp = TemporaryDirectory()
        let (stream, manifest) = try Self.stream(temp)
        try FileManager.default.removeItem(at: stream.appendingPathComponent(manifest.segments[1].name))
        Self.damage({ $0.message.contains("missing") && $0.location == "segment \(manifest.segments[1].name)" }, stream)
    }

    @Test func segmentDroppedFromTheManifestIsAGap() throws {
        let temp = TemporaryDirectory()
        var (stream, manifest) = try Self.stream(temp)
        let dropped = manifest.segments.remove(at: 1)
        try manifest.save(to: stream)
        Self.damage({ $0.message.contains("gap") && $0.location == "segment \(manifest.segments[1].name)" && !$0.message.contains(dropped.name) }, stream)
    }

    @Test func handEditedManifest() throws {
        let temp = TemporaryDirectory()
        let (stream, manifest) = try Self.stream(temp)
        let url = stream.appendingPathComponent(StreamManifest.fileName)
        let original = try String(contentsOf: url, encoding: .utf8)
        // A record count changed by hand.
        let segment = manifest.segments[0]
        try original.replacingOccurrences(of: "\"records\" : \(segment.records),", with: "\"records\" : \(segment.records + 1),").write(to: url, atomically: true, encoding: .utf8)
        Self.damage({ $0.location == "segment \(segment.name)" && $0.message.contains("\(segment.records + 1)") }, stream)
        // A last position moved by hand.
        try original.replacingOccurrences(of: "\"last\" : \"\(segment.last)\"", with: "\"last\" : \"\(segment.last.token).\(segment.last.index + 50)\"").write(to: url, atomically: true, encoding: .utf8)
        Self.damage({ $0.description.contains("edited by hand") && $0.location == "segment \(segment.name)" }, stream)
        // Not JSON any more.
        try (original + "}").write(to: url, atomically: true, encoding: .utf8)
        Self.damage({ $0.message.contains("manifest cannot be read") }, stream)
    }

    @Test func verifyCommandsExitNonZeroWithOneLine() throws {
        let temp = TemporaryDirectory()
        let (stream, manifest) = try Self.stream(temp)
        try FileManager.default.removeItem(at: stream.appendingPathComponent(manifest.segments.last!.name))
        let result = try TributaryProcess.run(["verify", stream.path])
        #expect(result.status != 0)
        #expect(result.stderr.split(separator: "\n").count == 1)
        #expect(result.stderr.contains(manifest.segments.last!.name) && result.stderr.contains("missing"))
    }
}
