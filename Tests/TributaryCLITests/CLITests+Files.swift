import Foundation
import Testing

/// A failed command leaves nothing behind, and a file that is not what a command expects
/// (a directory, an empty or damaged store, a changed model, a file for a directory) is
/// one line saying what, where and what to do (issue 18).
extension CLITests {
    /// The files in the scratch directory whose names start with `prefix`.
    func files(_ prefix: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: scratch.url.path).filter { $0.hasPrefix(prefix) }.sorted()
    }

    func size(_ path: String) throws -> Int {
        try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1
    }

    @Test func aFailedCommandOnAMissingOrEmptyFileLeavesItAsItWas() throws {
        expectOneLineError(try CLI.run(["consumers", scratch.path("missing.sqlite"), "add", "audit"]), contains: "no store at this path")
        #expect(try files("missing").isEmpty)
        #expect(FileManager.default.createFile(atPath: scratch.path("empty.sqlite"), contents: nil))
        expectOneLineError(try CLI.run(["consumers", scratch.path("empty.sqlite"), "add", "audit"]), contains: "an empty file, not a store")
        expectOneLineError(try CLI.run(["count", scratch.path("empty.sqlite"), "--entity", "Post"]), contains: "an empty file, not a store")
        #expect(try files("empty") == ["empty.sqlite"])
        #expect(try size(scratch.path("empty.sqlite")) == 0)
        // init makes a store of an empty file.
        #expect(try CLI.run(["init", scratch.path("empty.sqlite"), "--model", CLI.blogModel]).status == 0)
    }

    @Test func namesSQLiteKeepsAreRefusedBeforeAnyFileIsMade() throws {
        let models = [
            "entities:\n  sqlite_stat1:\n    attributes:\n      a: string\n",
            "entities:\n  sqlite_master:\n    attributes:\n      a: string\n",
            "entities:\n  A:\n    attributes:\n      a: string\n    relationships:\n      b: { to: B, inverse: a }\n  B:\n    relationships:\n      a: { to: A, inverse: b, toMany: true }\n  A_fk_b:\n    attributes:\n      x: string\n",
            "entities:\n  A:\n    attributes:\n      x_y: string\n      x: string\n      y: string\n    unique: [[x_y], [x, y]]\n",
        ]
        for (i, text) in models.enumerated() {
            let model = scratch.write("m\(i).yml", text)
            let result = try CLI.run(["init", scratch.path("n\(i).sqlite"), "--model", model])
            expectOneLineError(result, contains: i < 2 ? "keeps for itself" : "would name both")
            #expect(try files("n\(i).sqlite").isEmpty, "\(result.stderr)")
        }
    }

    @Test func aStoreThatCannotBeWrittenToTheEndIsRemoved() throws {
        // A file size limit makes SQLite's writes fail part way (as a full disk does).
        let store = scratch.path("limited.sqlite")
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "trap '' XFSZ; ulimit -f 2; exec \"$0\" init \"$1\" --model \"$2\" --history", CLI.binary.path, store, CLI.blogModel]
        let errors = Pipe()
        shell.standardError = errors
        shell.standardOutput = Pipe()
        try shell.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus != 0)
        #expect(message.split(separator: "\n").count == 1, "\(message)")
        #expect(message.contains(store) && !message.contains("SQLite error"), "\(message)")
        #expect(try files("limited").isEmpty)
    }

    @Test func filesOfTheWrongKindAreOneLine() throws {
        let store = try makeStore()
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3))
        let directory = scratch.path("adir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let plain = scratch.write("plain.txt", "not a directory")
        expectOneLineError(try CLI.run(["count", directory, "--entity", "Post"]), contains: "this is a directory, not a store file")
        expectOneLineError(try CLI.run(["init", directory, "--model", CLI.blogModel]), contains: "this is a directory, not a store file")
        expectOneLineError(try CLI.run(["count", "", "--entity", "Post"]), contains: "the store's path is empty")
        expectOneLineError(try CLI.run(["count", scratch.path("no/such/dir/s.sqlite"), "--entity", "Post"]), contains: "no store at this path")

        let history = try makeHistoryStore()
        try CLI.run(["import", history, "--entity", "Post", "-"], stdin: posts(0..<3))
        expectOneLineError(try CLI.run(["export", history, "--to", plain]), contains: "this is a file, not a stream directory")
        expectOneLineError(try CLI.run(["verify", plain]), contains: "this is a file, not a stream directory")
        expectOneLineError(try CLI.run(["replay", plain, "--into", scratch.path("r.sqlite")]), contains: "this is a file, not a stream directory")
        expectOneLineError(try CLI.run(["replay", scratch.path("nostream"), "--into", scratch.path("r.sqlite")]), contains: "no stream directory at this path")
        expectOneLineError(try CLI.run(["demo", "--dir", plain]), contains: "this is a file, not a demo directory")
        let stream = scratch.path("stream")
        #expect(try CLI.run(["export", history, "--to", stream]).status == 0)
        expectOneLineError(try CLI.run(["replay", stream, "--into", directory]), contains: "this is a directory, not a store file")
        #expect(try files("r.sqlite").isEmpty)

        // A damaged model.json beside a stream, a non-UTF-8 model file.
        try Data("{\"entities\": 3}".utf8).write(to: URL(fileURLWithPath: stream + "/model.json"))
        expectOneLineError(try CLI.run(["replay", stream, "--into", scratch.path("r2.sqlite")]), contains: "model.json is damaged")
        let latin1 = scratch.path("latin1.yml")
        try Data(Array("entities:\n  Caf".utf8) + [0xE9] + Array(":\n".utf8)).write(to: URL(fileURLWithPath: latin1))
        expectOneLineError(try CLI.run(["init", scratch.path("l.sqlite"), "--model", latin1]), contains: "is not UTF-8 text (invalid byte at offset 15)")
    }

    @Test func damagedStoresAreOneLine() throws {
        // The cached model changed by another program.
        let model = try makeStore()
        try sqlite3(model, "UPDATE _tributary_metadata SET value = '{\"entities\": 1}' WHERE key = 'model';")
        expectOneLineError(try CLI.run(["count", model, "--entity", "Post"]), contains: "the model cached in the store is damaged")

        // A table dropped, another renamed.
        let dropped = scratch.path("dropped.sqlite")
        #expect(try CLI.run(["init", dropped, "--model", CLI.blogModel]).status == 0)
        try sqlite3(dropped, "DROP TABLE ImageData; ALTER TABLE Tag RENAME TO Label;")
        expectOneLineError(try CLI.run(["count", dropped, "--entity", "Tag"]), contains: "another program dropped or renamed them")
        expectOneLineError(try CLI.run(["query", dropped, "--entity", "ImageData"]), contains: "another program dropped or renamed them")

        // A store cut short, and one with its pages overwritten.
        let truncated = scratch.path("truncated.sqlite")
        #expect(try CLI.run(["init", truncated, "--model", CLI.blogModel]).status == 0)
        try CLI.run(["import", truncated, "--entity", "Post", "-"], stdin: posts(0..<300))
        try sqlite3(truncated, "PRAGMA wal_checkpoint(TRUNCATE);")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: truncated))
        try handle.truncate(atOffset: UInt64(try size(truncated) / 2))
        try handle.close()
        let cut = try CLI.run(["query", truncated, "--entity", "Post"])
        expectOneLineError(cut, contains: "the store's file is damaged")

        let damaged = scratch.path("damaged.sqlite")
        #expect(try CLI.run(["init", damaged, "--model", CLI.blogModel]).status == 0)
        try CLI.run(["import", damaged, "--entity", "Post", "-"], stdin: posts(0..<300))
        try sqlite3(damaged, "PRAGMA wal_checkpoint(TRUNCATE);")
        let writer = try FileHandle(forUpdating: URL(fileURLWithPath: damaged))
        try writer.seek(toOffset: 4096)
        writer.write(Data(repeating: 0xA5, count: try size(damaged) - 4096))
        try writer.close()
        let broken = try CLI.run(["query", damaged, "--entity", "Post"])
        expectOneLineError(broken, contains: "damaged")
    }
}
