import Foundation
import Testing

/// A capture gap (another program made a table or a unique index in an adopted database
/// after it was adopted) travels in the stream as a record of its own in every format:
/// `export` carries it and warns, `verify` accepts the stream and names the gap (it failed
/// with "the stream skips from 1.0 to 3.0"), and `replay` passes over it.
@Suite struct CaptureGapStreamCLITests {
    let scratch = Scratch()

    /// The reviewer's database: adopted, written by the shell, then given `ddl` by it, then
    /// written through Tributary.
    func makeApp(_ name: String, ddl: String) throws -> String {
        let db = scratch.path("\(name).db")
        #expect(try CLI.sqlite3(db, "CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES('a');").status == 0)
        let adopted = try CLI.run(["adopt", db])
        #expect(adopted.status == 0, "\(adopted.stderr)")
        #expect(try CLI.sqlite3(db, "INSERT INTO users(name) VALUES('b')").status == 0)
        #expect(try CLI.sqlite3(db, ddl).status == 0)
        let write = try CLI.run(["update", db, "--entity", "users", "--where", "name == 'b'", "--set", "name=c"])
        #expect(write.status == 0, "\(write.stderr)")
        let history = try CLI.run(["history", db, "--json"])
        #expect(history.stdout.contains(#""processName":"capture gap""#), "the scenario records a gap: \(history.stdout)")
        return db
    }

    /// Exports `db` in `format` and verifies the stream; returns the stream.
    func exportAndVerify(_ db: String, format: String, gap: String) throws -> String {
        let stream = scratch.path("stream-\(UUID().uuidString)")
        let export = try CLI.run(["export", db, "--to", stream, "--format", format])
        #expect(export.status == 0, "\(export.stderr)")
        #expect(export.stderr.contains("warning: the stream carries a capture gap at") && export.stderr.contains(gap), "\(export.stderr)")
        let verified = try CLI.run(["verify", stream])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.contains("1 capture gap"), "\(verified.stdout)")
        #expect(verified.stderr.contains("warning: capture gap at") && verified.stderr.contains(gap), "\(verified.stderr)")
        return stream
    }

    @Test(arguments: ["native", "cloudevents", "debezium"])
    func aTableMadeByAnotherProgramIsAGapTheStreamCarries(format: String) throws {
        let db = try makeApp("table-\(format)", ddl: "CREATE TABLE audits(id INTEGER PRIMARY KEY, what TEXT)")
        _ = try exportAndVerify(db, format: format, gap: "another program made audits")
        let piped = try CLI.run(["export", db, "--to", "-", "--format", format])
        #expect(piped.status == 0 && piped.stdout.contains(#""type":"captureGap""#), "\(piped.stdout)")
    }

    @Test(arguments: ["native", "cloudevents", "debezium"])
    func replayPassesOverAGap(format: String) throws {
        let db = try makeApp("index-\(format)", ddl: "CREATE UNIQUE INDEX by_name ON users(name)")
        let stream = try exportAndVerify(db, format: format, gap: "another program made a unique index")
        let replica = scratch.path("replica-\(format).sqlite")
        let replayed = try CLI.run(["replay", stream, "--into", replica])
        #expect(replayed.status == 0, "\(replayed.stderr)")
        #expect(replayed.stderr.contains("passed over a capture gap at"), "\(replayed.stderr)")
        let rows = try CLI.run(["query", replica, "--entity", "users", "--json"])
        #expect(rows.stdout.contains(#""c""#), "the write after the gap is replayed: \(rows.stdout)")
    }

    /// A pipeline hands the gap to its sinks in its place: the segments sink's stream carries
    /// it and verifies, standard output prints it.
    @Test func aPipelineHandsTheGapToItsSinks() throws {
        let db = try makeApp("pipeline", ddl: "CREATE UNIQUE INDEX by_name ON users(name)")
        let out = scratch.path("archive")
        let file = scratch.path("gap.yml")
        try "source: {store: \(db)}\nsinks:\n  - type: segments\n    directory: \(out)\n  - type: stdout\n    format: cloudevents\n".write(toFile: file, atomically: true, encoding: .utf8)
        let run = try CLI.run(["run", file, "--once"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains(#""type":"tributary.captureGap""#), "\(run.stdout)")
        let verified = try CLI.run(["verify", out])
        #expect(verified.status == 0 && verified.stderr.contains("another program made a unique index"), "\(verified.stdout)\(verified.stderr)")
    }
}
