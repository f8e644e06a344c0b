import Foundation
import Tributary
import TributaryTestSupport

/// The whole `tributary import` (the release binary, as a child process) against the
/// library's batch insert of the same rows already in memory, and the import's peak memory.
enum ImportBenchmarks {
    /// Rows of the speed comparison: 200,000, or `TRIBUTARY_BENCH_IMPORT_ROWS`.
    static let rows = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_IMPORT_ROWS"].flatMap { Int($0) } ?? 200_000
    /// Rows of each memory run: 1,000,000 and 10,000,000, or `TRIBUTARY_BENCH_IMPORT_RSS_ROWS` (comma-separated).
    static let rssRows: [Int] = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_IMPORT_RSS_ROWS"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1_000_000, 10_000_000]

    /// The `tributary` binary: `TRIBUTARY_BIN`, or the one built beside this benchmark.
    static func binary() throws -> URL {
        let url = ProcessInfo.processInfo.environment["TRIBUTARY_BIN"].map { URL(fileURLWithPath: $0) } ?? TributaryProcess.binary
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw TributaryError(.fileNotFound, "no tributary binary", location: url.path, hint: "build it: swift build -c release --package-path Benchmarks --product tributary (or set TRIBUTARY_BIN)")
        }
        return url
    }

    /// Writes posts 0..<rows of the workload as NDJSON, as `query --json` prints them.
    static func writeFile(_ url: URL, rows: Int) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let handle = FileHandle(forWritingAtPath: url.path) else {
            throw TributaryError(.io, "cannot create the input file", location: url.path)
        }
        defer { try? handle.close() }
        var json = JSONWriter()
        var chunk: [UInt8] = []
        chunk.reserveCapacity(1 << 20)
        for j in 0..<rows {
            json.reset()
            json.object { object in
                object.field("title", .string(Workload.title(j)))
                object.field("content", .string(Workload.content(j)))
                object.field("externalID", .string(Workload.externalID(j)))
                object.field("createdAt", .date(Date(timeIntervalSince1970: Workload.createdAt(j))))
            }
            chunk.append(contentsOf: json.bytes)
            chunk.append(0x0A)
            if chunk.count >= 1 << 20 {
                try handle.write(contentsOf: chunk)
                chunk.removeAll(keepingCapacity: true)
            }
        }
        try handle.write(contentsOf: chunk)
    }

    /// Runs the binary and waits; throws unless it exits 0.
    static func run(_ executable: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TributaryError(.io, "\(executable.lastPathComponent) \(arguments.first ?? "") failed (status \(process.terminationStatus)): \(String(decoding: message, as: UTF8.self))")
        }
    }

    /// A new store with history, made by the binary.
    static func makeStore(_ path: String, _ binary: URL) throws {
        try run(binary, ["init", path, "--model", try blogModelFile(), "--history"])
    }

    /// The blog model file of the repository (this package sits in its `Benchmarks/`).
    static func blogModelFile() throws -> String {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("examples/blog/model.yml").path
        guard FileManager.default.fileExists(atPath: path) else { throw TributaryError(.fileNotFound, "no blog model", location: path) }
        return path
    }

    /// `cli_import_vs_batch_insert`: best of 3 interleaved rounds of each side, history on both.
    static func cliVsBatchInsert() throws -> [Measurement] {
        let binary = try binary()
        let n = rows
        return try Harness.withDirectory { dir in
            let file = dir.appendingPathComponent("posts.ndjson")
            try writeFile(file, rows: n)
            // The library's side: the same rows, built before the clock starts, in batches of 1,000.
            let columns = ["title", "content", "externalID", "createdAt"]
            let batches: [[[AttributeValue]]] = stride(from: 0, to: n, by: Workload.batch).map { start in
                (start..<min(start + Workload.batch, n)).map { k in
                    [.string(Workload.title(k)), .string(Workload.content(k)), .string(Workload.externalID(k)), .date(Date(timeIntervalSince1970: Workload.createdAt(k)))]
                }
            }
            var round = 0
            let best = try Harness.interleaved(rounds: 3, [
                {
                    round += 1
                    let store = dir.appendingPathComponent("cli-\(round).sqlite").path
                    try makeStore(store, binary)
                    return try Harness.time { try run(binary, ["import", store, "--entity", "Post", file.path]) }
                },
                {
                    let coordinator = try TributaryBench.open(dir.appendingPathComponent("lib-\(round).sqlite").path, history: true)
                    return try Harness.time {
                        for rows in batches {
                            var request = BatchInsertRequest(entityName: "Post", columns: columns, rows: rows)
                            request.resultType = .statusOnly
                            try coordinator.execute(request)
                        }
                    }
                },
            ])
            let bytes = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            return [Measurement(name: "cli_import_vs_batch_insert", value: best[1] / best[0], unit: "ratio", goal: ">= 0.5",
                                details: [("rows", n), ("file_mb", Double(bytes) / 1e6), ("cli_rows_per_s", Double(n) / best[0]), ("batch_insert_rows_per_s", Double(n) / best[1]),
                                          ("statistic", "best of 3, interleaved"), ("history", true)])]
        }
    }

    /// `import_peak_rss_mb`: the child's peak resident memory, as GNU time reports it (its
    /// own rusage is the grandchild's alone; a child spawned straight from this process would
    /// count this process's memory at the spawn, on Linux).
    static func peakMemory() throws -> [Measurement] {
        let binary = try binary()
        let time = URL(fileURLWithPath: "/usr/bin/time")
        guard FileManager.default.isExecutableFile(atPath: time.path) else {
            throw TributaryError(.fileNotFound, "no /usr/bin/time", hint: "install GNU time (apt-get install time)")
        }
        return try rssRows.map { n in
            try Harness.withDirectory { dir in
                let file = dir.appendingPathComponent("posts.ndjson")
                try writeFile(file, rows: n)
                let store = dir.appendingPathComponent("rss.sqlite").path
                try makeStore(store, binary)
                let report = dir.appendingPathComponent("time.txt").path
                let seconds = try Harness.time { try run(time, ["-f", "%M", "-o", report, binary.path, "import", store, "--entity", "Post", file.path]) }
                let text = try String(contentsOfFile: report, encoding: .utf8)
                guard let kilobytes = text.split(separator: "\n").last.flatMap({ Double($0.trimmingCharacters(in: .whitespaces)) }) else {
                    throw TributaryError(.io, "GNU time printed no peak: \(text)")
                }
                let bytes = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
                return Measurement(name: "import_peak_rss_mb", value: kilobytes / 1024, unit: "MB", goal: "<= 100",
                                   details: [("rows", n), ("file_mb", Double(bytes) / 1e6), ("seconds", seconds), ("rows_per_s", Double(n) / seconds), ("history", true)])
            }
        }
    }
}
