import Foundation
import Testing
import TributaryTestSupport

/// A store where it cannot be written (issue 18's unclear messages): a directory this user
/// may not write (mode 0555) with the store writable or not (0666, 0444), and a read-only
/// file system. Each write is one line saying which, a non-zero exit, and nothing written.
///
/// File modes do not stop root, so as root the commands run as `nobody` (setpriv). The
/// read-only file system is a read-only bind mount, which needs root (with CAP_SYS_ADMIN):
/// that test runs only as root, as the suite does here.
extension CLITests {
    /// The writes tried on the store in `directory` (a new store for `init`).
    func writes(_ store: String, in directory: String) -> [[String]] {
        let file = scratch.write("ro-posts.ndjson", posts(10..<12))
        return [["import", store, "--entity", "Post", file], ["update", store, "--entity", "Post", "--all", "--set", "title=x"],
                ["delete", store, "--entity", "Post", "--all"], ["consumers", store, "add", "audit"],
                ["init", directory + "/new.sqlite", "--model", CLI.blogModel]]
    }

    /// Runs the binary as `nobody` when this process is root (file modes bind only other users).
    func runUnprivileged(_ arguments: [String]) throws -> CLIResult {
        guard getuid() == 0 else { return try CLI.run(arguments) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "--", CLI.binary.path] + arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let (stdout, stderr) = TributaryProcess.finish(process, out: out, err: err)
        return CLIResult(status: process.terminationStatus, stdout: String(decoding: stdout, as: UTF8.self), stderr: String(decoding: stderr, as: UTF8.self))
    }

    /// The names and contents of the files in `directory`.
    func contents(_ directory: String) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) { files[name] = FileManager.default.contents(atPath: directory + "/" + name) }
        return files
    }

    /// A store with three posts, its WAL checkpointed into the file, alone in directory `name`.
    func storeAlone(in name: String) throws -> (directory: String, store: String) {
        let directory = scratch.path(name)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try CLI.makeBlogStore(at: directory + "/s.sqlite")
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: posts(0..<3))
        try sqlite3(store, "PRAGMA wal_checkpoint(TRUNCATE);")
        try? FileManager.default.removeItem(atPath: store + "-wal")
        try? FileManager.default.removeItem(atPath: store + "-shm")
        return (directory, store)
    }

    @Test func aStoreWhereThisUserCannotWriteIsOneLineAndNothingIsWritten() throws {
        // nobody must reach the scratch directory and the binary.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: scratch.url.path)
        for (fileMode, message) in [(0o666, "this user cannot write the store's directory"), (0o444, "the store's file is read-only")] {
            let (directory, store) = try storeAlone(in: "ro-\(fileMode)")
            try FileManager.default.setAttributes([.posixPermissions: fileMode], ofItemAtPath: store)
            try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory) }
            let before = try contents(directory)
            for arguments in writes(store, in: directory) {
                let expected = arguments[0] == "init" ? "this user cannot write the store's directory" : message
                expectOneLineError(try runUnprivileged(arguments), contains: expected)
                #expect(try contents(directory) == before, "\(arguments[0]) wrote nothing")
            }
        }
    }

    /// Runs `executable` with `arguments`; whether it exited 0.
    func succeeds(_ executable: String, _ arguments: [String]) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus == 0
    }

    @Test(.enabled(if: getuid() == 0, "a read-only bind mount needs root"))
    func aStoreOnAReadOnlyFileSystemIsOneLineAndNothingIsWritten() throws {
        let (directory, store) = try storeAlone(in: "rofs")
        let mounted = try succeeds("/bin/mount", ["--bind", directory, directory])
        defer { if mounted { _ = try? succeeds("/bin/umount", [directory]) } }
        try #require(try mounted && succeeds("/bin/mount", ["-o", "remount,bind,ro", directory]), "root could not bind-mount \(directory) read-only (CAP_SYS_ADMIN?)")
        let before = try contents(directory)
        for arguments in writes(store, in: directory) {
            expectOneLineError(try CLI.run(arguments), contains: "on a read-only file system")
            #expect(try contents(directory) == before, "\(arguments[0]) wrote nothing")
        }
    }
}
