import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

/// `tributary verify DIR`.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a change stream: manifest, segments, ranges, SHA-256 and zstd checksums.",
        discussion: "Example: tributary verify stream/   (exits non-zero naming the segment and offset of any damage)"
    )

    @Argument(help: "The stream directory.")
    var directory: String

    func run() async throws {
        let summary = try StreamVerifier(directory: URL(fileURLWithPath: directory)).verify { progress in
            Console.progress("verified \(progress.segments) segments, \(progress.records) records")
        }
        Console.endProgress()
        let manifest = summary.manifest
        let ratio = summary.bytes > 0 ? String(format: "%.1f", Double(summary.decompressedBytes) / Double(summary.bytes)) : "-"
        var line = "ok: \(summary.segments) segments, \(summary.records) records (\(manifest.format.rawValue))"
        if let first = summary.first, let last = summary.last { line += ", \(first) to \(last)" }
        line += ", \(summary.bytes) bytes, \(ratio)x compressed"
        if let snapshot = manifest.snapshot { line += ", snapshot at token \(snapshot.token) (\(snapshot.objects) objects)" }
        if let dictionary = manifest.dictionary { line += ", dictionary \(dictionary)" }
        Console.print(line)
    }
}
