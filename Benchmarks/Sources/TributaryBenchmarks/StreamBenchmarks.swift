import Foundation
import Tributary
import TributaryStreams

/// Change-stream benchmarks: export against the system `zstd`, compressed bytes per change
/// with and without a dictionary, replay against batch insert, peak memory of export and
/// replay (run as child processes, so each has its own peak).
enum StreamBenchmarks {
    /// Changes exported and replayed (1,000,000; `STREAM_BENCH_CHANGES` overrides).
    static var changes: Int { Int(ProcessInfo.processInfo.environment["STREAM_BENCH_CHANGES"] ?? "") ?? 1_000_000 }
    /// Changes of the memory benchmarks (5,000,000; `STREAM_BENCH_RSS_CHANGES` overrides).
    static var rssChanges: Int { Int(ProcessInfo.processInfo.environment["STREAM_BENCH_RSS_CHANGES"] ?? "") ?? 5_000_000 }

    static func source(_ path: String, changes: Int) throws -> PersistentStoreCoordinator {
        let coordinator = try TributaryBench.open(path, history: true)
        try HistoryBenchmarks.insert(coordinator, rows: changes, batch: 1000, author: "importer")
        return coordinator
    }

    static func export(_ coordinator: PersistentStoreCoordinator, to directory: URL, consumer: String, dictionary: Bool = false) throws -> Double {
        var options = ExportOptions()
        options.consumerName = consumer
        options.dictionary = dictionary
        options.compressionLevel = 3
        try? FileManager.default.removeItem(at: directory)
        return try Harness.time { _ = try StreamExporter(coordinator: coordinator, directory: directory, options: options).exportOnce() }
    }

    static func segmentBytes(_ directory: URL) throws -> Int {
        try StreamManifest.load(from: directory)?.segments.reduce(0) { $0 + $1.bytes } ?? 0
    }

    /// The stream's records as one NDJSON file (what `zstd -3` compresses on the other side).
    static func ndjson(_ directory: URL, to url: URL) throws -> Int {
        let manifest = try StreamManifest.load(from: directory)!
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        let decoder = try ZstdFrameDecoder()
        var records = 0
        var buffer: [UInt8] = []
        for segment in manifest.segments {
            try SegmentReader(directory: directory, segment: segment, format: manifest.format, decoder: decoder).forEachRecord { line, _ in
                buffer += line
                buffer.append(0x0A)
                records += 1
                if buffer.count > 1 << 20 { handle.write(Data(buffer)); buffer.removeAll(keepingCapacity: true) }
                return true
            }
        }
        handle.write(Data(buffer))
        return records
    }

    static func run(_ executable: String, _ arguments: [String]) throws -> Double {
        try Harness.time {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = [executable] + arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw TributaryError(.io, "\(executable) failed") }
        }
    }

    static func exportVsZstd() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let n = changes
            let coordinator = try source(dir.appendingPathComponent("s.sqlite").path, changes: n)
            let stream = dir.appendingPathComponent("stream")
            let ndjsonURL = dir.appendingPathComponent("records.ndjson")
            _ = try export(coordinator, to: stream, consumer: "bench-0")
            _ = try ndjson(stream, to: ndjsonURL)
            var round = 0
            let best = try Harness.interleaved(rounds: 2, [
                { round += 1; return try export(coordinator, to: stream, consumer: "bench-\(round)") },
                { try run("zstd", ["-3", "-q", "-f", "-T1", ndjsonURL.path, "-o", dir.appendingPathComponent("records.zst").path]) },
            ])
            let bytes = try segmentBytes(stream)
            let ndjsonBytes = (try FileManager.default.attributesOfItem(atPath: ndjsonURL.path)[.size] as? Int) ?? 0
            let dictionaryStream = dir.appendingPathComponent("dictionary")
            _ = try export(coordinator, to: dictionaryStream, consumer: "bench-dictionary", dictionary: true)
            let dictionaryBytes = try segmentBytes(dictionaryStream)
            return [
                Measurement(name: "export_vs_zstd", value: best[1] / best[0], unit: "ratio", goal: ">= 0.3",
                            details: [("changes", n), ("export_changes_per_s", Double(n) / best[0]), ("zstd_records_per_s", Double(n) / best[1]), ("ndjson_bytes", ndjsonBytes)]),
                Measurement(name: "bytes_per_change", value: Double(bytes) / Double(n), unit: "bytes", goal: ">= 0",
                            details: [("ratio", Double(ndjsonBytes) / Double(bytes)), ("records_per_frame", 64)]),
                Measurement(name: "bytes_per_change_dictionary", value: Double(dictionaryBytes) / Double(n), unit: "bytes", goal: ">= 0",
                            details: [("ratio", Double(ndjsonBytes) / Double(dictionaryBytes)), ("records_per_frame", 64)]),
            ]
        }
    }

    static func replayVsBatchInsert() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let n = changes
            let coordinator = try source(dir.appendingPathComponent("s.sqlite").path, changes: n)
            let stream = dir.appendingPathComponent("stream")
            _ = try export(coordinator, to: stream, consumer: "bench")
            var round = 0
            let best = try Harness.interleaved(rounds: 2, [
                {
                    round += 1
                    let replayer = try StreamReplayer(directory: stream)
                    let target = try replayer.openTarget(at: dir.appendingPathComponent("replay-\(round).sqlite"))
                    return try Harness.time { _ = try replayer.replay(into: target, verified: true) }
                },
                { try TributaryBench.insertPosts(at: dir.appendingPathComponent("insert-\(round).sqlite").path, rows: n, batch: 1000) },
            ])
            return [Measurement(name: "replay_vs_batch_insert", value: best[1] / best[0], unit: "ratio", goal: ">= 0.5",
                                details: [("changes", n), ("replay_changes_per_s", Double(n) / best[0]), ("insert_rows_per_s", Double(n) / best[1])])]
        }
    }

    /// Runs this executable as a child (`__stream_child export|replay …`) and returns the peak
    /// RSS it reports (its own VmHWM: the rusage of a child started with posix_spawn also
    /// counts the parent's memory at the time of the spawn on Linux).
    static func childPeakRSS(_ arguments: [String]) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["__stream_child"] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let megabytes = Double(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TributaryError(.io, "the child failed (status \(process.terminationStatus))")
        }
        return megabytes
    }

    static func peakMemory() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let n = rssChanges
            let path = dir.appendingPathComponent("s.sqlite").path
            _ = try source(path, changes: n)
            let stream = dir.appendingPathComponent("stream").path
            let export = try childPeakRSS(["export", path, stream])
            let replay = try childPeakRSS(["replay", stream, dir.appendingPathComponent("r.sqlite").path])
            return [
                Measurement(name: "export_peak_rss_mb", value: export, unit: "MB", goal: "<= 150", details: [("changes", n)]),
                Measurement(name: "replay_peak_rss_mb", value: replay, unit: "MB", goal: "<= 150", details: [("changes", n)]),
            ]
        }
    }

    /// The child side of ``peakMemory()``.
    static func child(_ arguments: [String]) throws {
        let coordinator = PersistentStoreCoordinator()
        switch arguments.first {
        case "export":
            try coordinator.addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: arguments[1])))
            _ = try StreamExporter(coordinator: coordinator, directory: URL(fileURLWithPath: arguments[2]), options: ExportOptions()).exportOnce()
        case "replay":
            let replayer = try StreamReplayer(directory: URL(fileURLWithPath: arguments[1]))
            _ = try replayer.replay(into: try replayer.openTarget(at: URL(fileURLWithPath: arguments[2])), verified: true)
        default:
            throw TributaryError(.invalidInput, "unknown child \(arguments)")
        }
        print(Harness.peakRSSMegabytes())
    }
}
