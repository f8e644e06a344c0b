import Foundation
import Testing

/// `examples/run-all` runs the importer, the viewer and the audit tail together; each printed what it should.
@Suite struct ExamplesTests {
    @Test func runAllRunsTheExamplesTogetherAndStopsThemCleanly() throws {
        let dir = Scratch()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [CLI.repositoryRoot.appendingPathComponent("examples/run-all").path, "4", dir.url.path]
        var environment = ProcessInfo.processInfo.environment
        environment["BIN_DIR"] = CLI.binary.deletingLastPathComponent().path
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        func lines(_ name: String) -> [String] {
            ((try? String(contentsOf: dir.url.appendingPathComponent(name), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
        let importer = lines("importer.out"), viewer = lines("viewer.out"), tail = lines("tail.out")
        #expect(importer.filter { $0.hasPrefix("round ") && $0.contains("updated (re-imported)") }.count >= 3)
        #expect(importer.last?.hasPrefix("importer stopped after") == true)
        // The viewer printed changing counts, each read in one generation: never half an import.
        let counts = viewer.filter { $0.hasPrefix("posts=") }
        #expect(counts.count >= 2)
        #expect(counts.allSatisfy { $0.hasSuffix(" consistent") })
        #expect(viewer.last == "viewer stopped")
        // The tail printed the importer's transactions and the re-imports' before and after values.
        #expect(tail.contains { $0.contains(" importer ") && $0.contains("inserts)") })
        #expect(tail.contains { $0.contains(" update Post/p") && $0.contains("→") && $0.contains("re-imported in round") })
        #expect(tail.last?.hasPrefix("audit-tail stopped at") == true)
        for name in ["importer.err", "viewer.err", "tail.err"] { #expect(lines(name).isEmpty, "\(name): \(lines(name))") }
    }

    @Test func theSearchIndexerIndexesAndFinds() throws {
        let dir = Scratch()
        let bin = CLI.binary.deletingLastPathComponent()
        let store = dir.path("blog.sqlite")
        let importer = Process()
        importer.executableURL = bin.appendingPathComponent("blog-importer")
        importer.arguments = ["--store", store, "--rounds", "2", "--batch", "50", "--interval-ms", "0"]
        importer.standardOutput = FileHandle.nullDevice
        try importer.run()
        importer.waitUntilExit()
        #expect(importer.terminationStatus == 0)
        let indexer = Process()
        indexer.executableURL = bin.appendingPathComponent("search-indexer")
        indexer.arguments = ["--store", store, "--index", dir.path("search.sqlite"), "--query", "swift"]
        let output = Pipe()
        indexer.standardOutput = output
        try indexer.run()
        Thread.sleep(forTimeInterval: 2)
        indexer.terminate()
        indexer.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(indexer.terminationStatus == 0, "\(text)")
        #expect(text.contains("'swift': Tag: [swift]") || text.contains("'swift': Post"), "\(text)")
        #expect(text.contains("search-indexer stopped after"))
    }
}
