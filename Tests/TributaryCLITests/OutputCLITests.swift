import Foundation
import Testing
import TributaryTestSupport

/// Output people read and signals that end long-running commands: grammar, version, help,
/// search hits, follow modes stopped by SIGINT and SIGTERM, the example programs' flags.
@Suite struct OutputCLITests {
    let scratch = Scratch()

    func makeStore(posts count: Int = 3) throws -> String {
        let store = scratch.path("o.sqlite")
        #expect(try CLI.run(["init", store, "--model", CLI.blogModel, "--history"]).status == 0)
        if count > 0 {
            let lines = (0..<count).map { #"{"externalID": "e\#($0)", "title": "Post \#($0)", "content": "swift on linux \#($0)", "createdAt": \#($0)}"# }
            #expect(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: lines.joined(separator: "\n") + "\n").status == 0)
        }
        return store
    }

    @Test func verifySpeaksInTheRightNumber() throws {
        let empty = try makeStore(posts: 0)
        let stream = scratch.path("empty-stream")
        #expect(try CLI.run(["export", empty, "--to", stream]).status == 0)
        let nothing = try CLI.run(["verify", stream])
        #expect(nothing.status == 0, "\(nothing.stderr)")
        #expect(nothing.stdout == "ok: 0 segments, 0 records (native)\n", "\(nothing.stdout)")

        let store = scratch.path("one.sqlite")
        #expect(try CLI.run(["init", store, "--model", CLI.blogModel, "--history"]).status == 0)
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: #"{"externalID": "e", "title": "t", "createdAt": 0}"# + "\n")
        let one = scratch.path("one-stream")
        let export = try CLI.run(["export", store, "--to", one])
        #expect(export.stdout.hasPrefix("exported 1 record in 1 segment to \(one); consumer export at token "), "\(export.stdout)")
        let verified = try CLI.run(["verify", one])
        #expect(verified.stdout.hasPrefix("ok: 1 segment, 1 record (native)"), "\(verified.stdout)")
        #expect(verified.stdout.contains("x compressed"))
    }

    @Test func versionAndHelp() throws {
        let version = try CLI.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("tributary "), "\(version.stdout)")
        #expect(version.stdout.contains("store format 1"))
        let help = try CLI.run(["run", "--help"], environment: ["COLUMNS": "300"])
        #expect(help.stdout.contains("SIGTERM or SIGINT drains the records in flight, commits the checkpoints and exits 0"), "\(help.stdout)")
        #expect(try CLI.run(["--help"]).stdout.contains("--generate-completion-script"))
        #expect(try CLI.run(["--generate-completion-script", "bash"]).stdout.contains("tributary"))
    }

    @Test func searchHitsNameEntityTitleAndScore() throws {
        let store = try makeStore(posts: 3)
        let out = scratch.path("out")
        let pipeline = scratch.write("s.yml", "source: {store: \(store)}\nsinks:\n  - type: fts\n    path: \(out)/search.sqlite\n    entities: {Post: [title, content]}\n")
        #expect(try CLI.run(["run", pipeline, "--once"]).status == 0)
        let search = try CLI.run(["search", "\(out)/search.sqlite", "linux", "--limit", "2"])
        let lines = search.stdoutLines
        #expect(lines.count == 6, "\(search.stdout)")
        #expect(lines[0].hasPrefix("1. Post p"), "\(lines[0])")
        #expect(lines[0].contains(#""Post "#) && lines[0].contains("  relevance 100% (score "), "\(lines[0])")
        #expect(lines[1].contains("[linux]"))
        #expect(lines[3].hasPrefix("2. Post p"))
        let json = try #require(try CLI.run(["search", "\(out)/search.sqlite", "linux", "--limit", "1", "--json"]).stdoutLines.first)
        let hit = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect((hit["title"] as? String)?.hasPrefix("Post ") == true)
        #expect(hit["score"] as? Double == -(hit["rank"] as? Double ?? 0))
    }

    /// Starts `arguments`, waits until its output holds `ready`, sends `signal`, and returns
    /// the exit status and the output.
    func stopWith(_ signal: Int32, _ arguments: [String], ready: String) throws -> (Int32, String) {
        let output = scratch.url.appendingPathComponent("out-\(UUID().uuidString).txt")
        let process = try TributaryProcess.start(arguments, environment: [:], output: output)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline, !((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains(ready) { Thread.sleep(forTimeInterval: 0.05) }
        Thread.sleep(forTimeInterval: 0.2)
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        return (process.terminationStatus, (try? String(contentsOf: output, encoding: .utf8)) ?? "")
    }

    @Test func followModesEndTheSameWayOnSIGINTAndSIGTERM() throws {
        let store = try makeStore(posts: 3)
        for (number, signal) in [SIGINT, SIGTERM].enumerated() {
            let stream = scratch.path("follow-\(number)")
            let (status, output) = try stopWith(signal, ["export", store, "--to", stream, "--follow"], ready: "exported 3 records through token")
            #expect(status == 0, "signal \(signal): \(output)")
            #expect(output.contains("exported 3 records in 1 segment to \(stream); consumer export"), "signal \(signal): \(output)")
            try CLI.run(["consumers", store, "remove", "export"])

            let (piped, lines) = try stopWith(signal, ["export", store, "--to", "-", "--follow"], ready: "\"e2\"")
            #expect(piped == 0, "signal \(signal): \(lines)")
            #expect(lines.split(separator: "\n").count == 3, "\(lines)")

            let (tail, printed) = try stopWith(signal, ["tail", store, "--follow"], ready: "Post/p3")
            #expect(tail == 0, "signal \(signal): \(printed)")
        }
    }

    @Test func examplesTakeHelpAndRefuseMisspelledFlags() throws {
        let bin = CLI.binary.deletingLastPathComponent()
        for (name, flag) in [("blog-importer", "--store"), ("blog-viewer", "--store"), ("audit-tail", "--consumer"), ("search-indexer", "--index")] {
            let help = try run(bin.appendingPathComponent(name), ["--help"])
            #expect(help.status == 0, "\(name)")
            #expect(help.stdout.hasPrefix("usage: \(name) ") && help.stdout.contains(flag), "\(name): \(help.stdout)")
            let typo = try run(bin.appendingPathComponent(name), [String(flag.dropLast()), "x"])
            #expect(typo.status == 2, "\(name)")
            #expect(typo.stderr.contains("unknown option '\(flag.dropLast())'; did you mean \(flag)?"), "\(name): \(typo.stderr)")
        }
        // Nothing was created by the refused runs (they ran in the scratch directory).
        #expect(!FileManager.default.fileExists(atPath: scratch.path("blog.sqlite")))
    }

    func run(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.currentDirectoryURL = scratch.url
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (o, e) = TributaryProcess.finish(process, out: out, err: err)
        return (process.terminationStatus, String(decoding: o, as: UTF8.self), String(decoding: e, as: UTF8.self))
    }

    @Test func everyShippedPipelineTakesTheMetricsAddress() throws {
        let directory = CLI.repositoryRoot.appendingPathComponent("pipelines")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".yml") }
        #expect(files.count >= 6)
        for file in files {
            let text = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            #expect(text.contains("\nmetrics: ${TRIBUTARY_METRICS:-}"), "\(file)")
        }
    }

    @Test func theSearchIndexersShellEquivalentWritesWhereItSays() throws {
        let readme = try String(contentsOf: CLI.repositoryRoot.appendingPathComponent("examples/search-indexer/README.md"), encoding: .utf8)
        #expect(readme.contains("TRIBUTARY_STORE=blog.sqlite TRIBUTARY_OUT=. tributary run pipelines/search-index.yml --once"))
        #expect(readme.contains("tributary search search.sqlite 'swift AND linux'"))
        _ = try makeStore(posts: 3)
        let pipeline = CLI.repositoryRoot.appendingPathComponent("pipelines/search-index.yml").path
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["run", pipeline, "--once"]
        process.currentDirectoryURL = scratch.url
        process.environment = ProcessInfo.processInfo.environment.merging(["TRIBUTARY_STORE": "o.sqlite", "TRIBUTARY_OUT": "."]) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(FileManager.default.fileExists(atPath: scratch.path("search.sqlite")))
        #expect(try CLI.run(["search", scratch.path("search.sqlite"), "swift AND linux"]).stdoutLines.count == 9)
    }

    @Test func progressShowsOnATerminalOnly() throws {
        let store = try makeStore(posts: 0)
        let lines = (0..<3000).map { #"{"externalID": "e\#($0)", "title": "t", "createdAt": 0}"# }
        let file = scratch.write("p.ndjson", lines.joined(separator: "\n") + "\n")
        let shown = try CLI.runOnTerminal(["import", store, "--entity", "Post", "--batch-size", "100", file], environment: [:])
        #expect(shown.contains("\u{1B}[K"), "\(shown)")
        #expect(shown.contains("imported 100 rows") || shown.contains("imported 3,000 rows"), "\(shown)")
        #expect(shown.contains("imported 3000 Post rows (3000 inserted, 0 updated) in "), "\(shown)")
        let piped = try CLI.run(["import", store, "--entity", "Post", "--batch-size", "100", file])
        #expect(piped.stderr.isEmpty)
        #expect(piped.stdout.hasPrefix("imported 3000 Post rows (0 inserted, 3000 updated) in "), "\(piped.stdout)")
        #expect(piped.stdout.hasSuffix(" rows/s)\n"))
    }
}
