import Foundation
import Testing

/// Streams and pipelines from the command line: what replay, export and run refuse, and what
/// a failed replay leaves behind (nothing).
@Suite struct StreamCLITests {
    let scratch = Scratch()

    func makeStore(_ name: String = "src.sqlite", posts count: Int = 3) throws -> String {
        let store = scratch.path(name)
        #expect(try CLI.run(["init", store, "--model", CLI.blogModel, "--history"]).status == 0)
        let lines = (0..<count).map { #"{"externalID": "e\#($0)", "title": "Post \#($0)", "createdAt": \#($0)}"# }
        #expect(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: lines.joined(separator: "\n") + "\n").status == 0)
        return store
    }

    func leftovers(_ path: String) -> [String] {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(name) }
    }

    @Test func aFailedReplayLeavesNothingAndAWrongModelDoesNotBlockTheRetry() throws {
        let store = try makeStore()
        let stream = scratch.path("stream")
        #expect(try CLI.run(["export", store, "--to", stream, "--snapshot"]).status == 0)
        let wrong = scratch.write("wrong.yml", "entities:\n  Note:\n    attributes:\n      text: string\n")
        let copy = scratch.path("copy.sqlite")
        let failed = try CLI.run(["replay", stream, "--into", copy, "--model", wrong])
        #expect(failed.status != 0)
        #expect(failed.stderrLines.count == 1, "\(failed.stderr)")
        #expect(leftovers(copy).isEmpty, "\(leftovers(copy))")
        let retry = try CLI.run(["replay", stream, "--into", copy])
        #expect(retry.status == 0, "\(retry.stderr)")
        #expect(retry.stdout.hasPrefix("replayed 3 records into \(copy) through "), "\(retry.stdout)")
        #expect(try CLI.run(["count", copy, "--entity", "Post"]).stdout == "3\n")

        let missing = try CLI.run(["replay", scratch.path("no-such-stream"), "--into", scratch.path("c2.sqlite")])
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no stream directory"), "\(missing.stderr)")
        #expect(!missing.stderr.contains("--model"))
        #expect(leftovers(scratch.path("c2.sqlite")).isEmpty)
    }

    @Test func replayRefusesItsSourceAndALimitBeforeTheStreamsStart() throws {
        let store = try makeStore()
        let early = try CLI.run(["token", store]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        Thread.sleep(forTimeInterval: 0.05)
        let before = ISO8601DateFormatter().string(from: Date().addingTimeInterval(-0.01))
        try CLI.run(["update", store, "--entity", "Post", "--all", "--set", "content=x"])
        let stream = scratch.path("stream")
        #expect(try CLI.run(["export", store, "--to", stream, "--snapshot"]).status == 0)
        let source = try CLI.run(["replay", stream, "--into", store, "--resume"])
        #expect(source.status != 0)
        #expect(source.stderr.contains("the stream's own source store"), "\(source.stderr)")
        let copy = scratch.path("copy.sqlite")
        let byToken = try CLI.run(["replay", stream, "--into", copy, "--until", early])
        #expect(byToken.status != 0)
        #expect(byToken.stderr.contains("starts with a snapshot at token"), "\(byToken.stderr)")
        let byDate = try CLI.run(["replay", stream, "--into", copy, "--until", before])
        #expect(byDate.status != 0)
        #expect(byDate.stderr.contains("starts with a snapshot taken at"), "\(byDate.stderr)")
        #expect(leftovers(copy).isEmpty)
    }

    @Test func theManifestWritesTheStoreIDInTheCLIsCaseAndReadsEither() throws {
        let store = scratch.path("ids.sqlite")
        let created = try CLI.run(["init", store, "--model", CLI.blogModel, "--history"])
        let id = try #require(created.stdout.split(separator: " ").first { $0.count == 37 && $0.hasSuffix(",") }.map { String($0.dropLast()) }, "\(created.stdout)")
        #expect(id == id.lowercased())
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: CLI.posts(0..<2))
        let stream = scratch.path("ids-stream")
        #expect(try CLI.run(["export", store, "--to", stream]).status == 0)
        let manifest = URL(fileURLWithPath: stream).appendingPathComponent("manifest.json")
        let written = try String(contentsOf: manifest, encoding: .utf8)
        #expect(written.contains(#""storeID" : "\#(id)""#), "\(written)")
        // A manifest written before (uppercase) still verifies and takes more segments.
        try written.replacingOccurrences(of: id, with: id.uppercased()).write(to: manifest, atomically: true, encoding: .utf8)
        #expect(try CLI.run(["verify", stream]).status == 0)
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: CLI.posts(2..<3))
        let more = try CLI.run(["export", store, "--to", stream])
        #expect(more.status == 0, "\(more.stderr)")
        #expect(try String(contentsOf: manifest, encoding: .utf8).contains(#""storeID" : "\#(id)""#))
        #expect(try CLI.run(["verify", stream]).stdout.hasPrefix("ok: 2 segments, 3 records"))
    }

    @Test func snapshotOfAnExistingStreamIsRefused() throws {
        let store = try makeStore()
        let stream = scratch.path("stream")
        let first = try CLI.run(["export", store, "--to", stream, "--snapshot"])
        #expect(first.stdout.contains("exported 3 records (3 snapshot objects) in 1 segment to"), "\(first.stdout)")
        let again = try CLI.run(["export", store, "--to", stream, "--snapshot"])
        #expect(again.status != 0)
        #expect(again.stderr.contains("the stream already holds 1 segment"), "\(again.stderr)")
        #expect(try CLI.run(["export", store, "--to", stream]).status == 0)
    }

    @Test func pipelineNamesAreCheckedAgainstTheModelAndStorePathsAreTheFilesOwn() throws {
        let directory = scratch.path("pipes")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        _ = try makeStore("pipes/blog.sqlite")
        let out = scratch.path("out")
        func pipeline(_ name: String, _ body: String) -> String {
            scratch.write("pipes/\(name).yml", "name: \(name)\nsource:\n  store: blog.sqlite\n\(body)")
        }
        let cases: [(String, String, String)] = [
            ("entities", "  entities: [Pots]\nsinks:\n  - type: stdout\n", "source.entities: unknown entity 'Pots'; the model has Post, Tag, Attachment, ImageData"),
            ("filter", "transforms:\n  - filter: \"titel == 'x'\"\n    entities: [Post]\nsinks:\n  - type: stdout\n", "transforms[0].filter: unknown attribute 'titel' in the filter; Post has"),
            ("fts", "sinks:\n  - type: fts\n    path: \(out)/i.sqlite\n    entities: {Post: [title, body]}\n", "sinks[0].entities.Post: Post has no attribute 'body'"),
        ]
        for (name, body, message) in cases {
            let result = try CLI.run(["run", pipeline(name, body), "--once"])
            #expect(result.status != 0, "\(name)")
            #expect(result.stderrLines.count == 1, "\(name): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(name): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: out))

        // store: blog.sqlite is the file's neighbour, wherever run is started from.
        let good = pipeline("good", "sinks:\n  - type: segments\n    directory: \(out)/seg\n")
        let first = try CLI.run(["run", good, "--once"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.contains("pipeline good: new consumer good, starting at the oldest kept history"), "\(first.stderr)")
        // run --once ends with what each sink received.
        #expect(first.stderr.contains("pipeline good: segments 3 records; consumer good at token "), "\(first.stderr)")
        #expect(first.stderr.contains(" records/s)"), "\(first.stderr)")
        let second = try CLI.run(["run", good, "--once"])
        #expect(second.stderr.contains("pipeline good: reusing consumer good at token "), "\(second.stderr)")
        #expect(second.stderr.contains("0 transactions to read"), "\(second.stderr)")
        #expect(second.stderr.contains("pipeline good: segments 0 records; consumer good"), "\(second.stderr)")
        let missing = scratch.write("pipes/missing.yml", "source:\n  store: nothere.sqlite\nsinks:\n  - type: stdout\n")
        let error = try CLI.run(["run", missing, "--once"])
        #expect(error.status != 0)
        #expect(error.stderr.contains(scratch.path("pipes/nothere.sqlite")), "\(error.stderr)")
    }
}
