import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// Segments are standard zstd streams of NDJSON: the system `zstd` reads them.
@Suite struct SegmentTests {
    static func zstd(_ arguments: [String]) throws -> (status: Int32, output: Data) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["zstd"] + arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = Pipe()
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, data)
    }

    @Test func exportedSegmentsReadBackWithTheZstdTool() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        try StreamFixtures.workload(source)
        var options = ExportOptions()
        options.maximumSegmentRecords = 20
        options.recordsPerFrame = 8
        let stream = temp.child("stream")
        let summary = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
        let manifest = try #require(try StreamManifest.load(from: stream))
        #expect(manifest.segments.count == (summary.records + 19) / 20)
        var positions: [String] = []
        for segment in manifest.segments {
            let path = stream.appendingPathComponent(segment.name).path
            let check = try Self.zstd(["-t", "-q", path])
            #expect(check.status == 0)
            let result = try Self.zstd(["-dc", path])
            #expect(result.status == 0)
            let lines = String(decoding: result.output, as: UTF8.self).split(separator: "\n")
            #expect(lines.count == segment.records)
            for line in lines {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                positions.append(try #require(object["position"] as? String))
                #expect(object["storeID"] as? String == source.persistentStores[0].identifier.uuidString.lowercased())
            }
            #expect(positions.last == segment.last.description)
            #expect(SHA256.hex([UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))) == segment.sha256)
        }
        let expected = try source.fetchHistoryChanges(.fetchHistory(after: nil)).map { "\($0.token.value).\($0.index)" }
        #expect(positions == expected)
    }

    @Test func seekTableAndFrameIndexFindPositions() throws {
        let temp = TemporaryDirectory()
        let encoder = try ZstdFrameEncoder()
        let writer = try SegmentWriter(directory: temp.url, encoder: encoder, recordsPerFrame: 10)
        for i in 0..<95 {
            try writer.append(Array("{\"position\":\"\(i / 5 + 1).\(i % 5)\",\"n\":\(i)}\n".utf8), position: StreamPosition(token: Int64(i / 5 + 1), index: i % 5), timestamp: Date())
        }
        let entry = try writer.finish(previous: nil)
        #expect(entry.frames == 10 && entry.records == 95)
        #expect(!FileManager.default.fileExists(atPath: temp.child(SegmentWriter.temporaryName).path))
        let reader = try SegmentReader(directory: temp.url, segment: entry, format: .native, decoder: try ZstdFrameDecoder())
        #expect(reader.footer.frames.map(\.records) == [10, 10, 10, 10, 10, 10, 10, 10, 10, 5])
        let target = StreamPosition(token: 12, index: 3)   // record 58: frame 5
        let frame = reader.frame(containing: target)
        #expect(frame == 5)
        var firstSeen: StreamPosition?
        try reader.forEachRecord(fromFrame: frame) { _, position in firstSeen = position; return false }
        #expect(firstSeen == StreamPosition(token: 11, index: 0))
        // The seek table is zstd's seekable format: the last 9 bytes are frame count, descriptor, magic.
        let bytes = [UInt8](try Data(contentsOf: temp.child(entry.name)))
        #expect(Array(bytes.suffix(4)) == [0xB1, 0xEA, 0x92, 0x8F])
        #expect(SegmentFooter.read32(bytes, bytes.count - 9) == 10)
    }

    @Test func dictionaryStreamsNameTheirDictionaryAndFailClearlyWithoutIt() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        for round in 0..<8 { try StreamFixtures.workload(source, posts: 60, rounds: 2, prefix: "r\(round)-") }
        var options = ExportOptions()
        options.dictionary = true
        options.dictionarySampleBytes = 20_000
        options.recordsPerFrame = 1
        let stream = temp.child("stream")
        let exporter = try StreamExporter(coordinator: source, directory: stream, options: options)
        _ = try exporter.exportOnce()
        let manifest = try #require(try StreamManifest.load(from: stream))
        let name = try #require(manifest.dictionary, "warnings: \(exporter.warnings)")
        #expect(manifest.segments.allSatisfy { $0.dictionaryID != 0 && name == "dictionary-\($0.dictionaryID).zdict" })
        _ = try StreamVerifier(directory: stream).verify()
        // zstd reads it with the dictionary.
        let path = stream.appendingPathComponent(manifest.segments[0].name).path
        #expect(try Self.zstd(["-dc", "-D", stream.appendingPathComponent(name).path, path]).status == 0)
        try FileManager.default.removeItem(at: stream.appendingPathComponent(name))
        let error = try #require(throws: TributaryError.self) { try StreamVerifier(directory: stream).verify() }
        #expect(error.code == .damagedStream && error.message.contains("dictionary") && error.message.contains("missing"))
        let decoder = try ZstdFrameDecoder()
        let reader = try SegmentReader(directory: stream, segment: manifest.segments[0], format: .native, decoder: decoder)
        let frameError = try #require(throws: TributaryError.self) { try reader.forEachRecord { _, _ in true } }
        #expect(frameError.message.contains("needs zstd dictionary \(manifest.segments[0].dictionaryID)"))
    }
}
