import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

/// `tributary verify DIR`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a change stream: manifest, segments, ranges, SHA-256 and zstd checksums, records against the model at their position.",
        discussion: "Example: tributary verify stream/   (exits non-zero naming the segment and offset of any damage)"
    )

    @Argument(help: "The stream directory.")
    var directory: String

    func run() async throws {
        let progressLine = ProgressLine(verb: "verified", noun: "record")
        let summary = try StreamVerifier(directory: URL(fileURLWithPath: directory)).verify { progress in
            progressLine.update(progress.records)
        }
        progressLine.finish()
        let manifest = summary.manifest
        var line = "ok: \(Plural.counted(summary.segments, "segment")), \(Plural.counted(summary.records, "record")) (\(manifest.format.rawValue))"
        if let first = summary.first, let last = summary.last { line += ", \(first) to \(last)" }
        if summary.bytes > 0 {
            line += ", \(Plural.counted(summary.bytes, "byte")), \(String(format: "%.1f", Double(summary.decompressedBytes) / Double(summary.bytes)))x compressed"
        }
        if summary.schemaRecords > 0 { line += ", \(Plural.counted(summary.schemaRecords, "model change")) (each record checked against the model at its position)" }
        if let snapshot = manifest.snapshot { line += ", snapshot at token \(snapshot.token) (\(Plural.counted(snapshot.objects, "object")))" }
        if let dictionary = manifest.dictionary { line += ", dictionary \(dictionary)" }
        if !summary.captureGaps.isEmpty { line += ", \(Plural.counted(summary.captureGaps.count, "capture gap"))" }
        Console.print(line)
        for gap in summary.captureGaps {
            Console.warn("warning: \(TerminalText.escaped(gap.summary)) (writes before it may be missing from the source's history and this stream)")
        }
        if let first = summary.firstValueMismatch {
            Console.warn("note: \(Plural.counted(summary.valueMismatches, "value")) of another type than the model's (as the store held them, another program having written them; replay writes them as given), the first: \(first)")
        }
    }
}
