import Foundation
import Testing
import Tributary

/// A history request over 1,000,000 changes streams: the process printing all of it
/// stays far below what holding the changes would take.
@Suite struct HistoryStreamingTests {
    @Test func aMillionChangesStreamInBoundedMemory() throws {
        let scratch = Scratch()
        let path = scratch.path("million.sqlite")
        let model = try ManagedObjectModel { Entity("Note") { Attribute("text", .string); Attribute("n", .integer) } }
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = true
        try coordinator.addPersistentStore(with: description)
        let total = 1_000_000
        for start in stride(from: 0, to: total, by: 10_000) {
            let rows: [[AttributeValue]] = (start..<start + 10_000).map { [.string("note number \($0) with some text to make it realistic"), .integer(Int64($0))] }
            var request = BatchInsertRequest(entityName: "Note", columns: ["text", "n"], rows: rows)
            request.resultType = .statusOnly
            request.transaction = TransactionMetadata(author: "loader")
            try coordinator.execute(request)
        }
        coordinator.remove(coordinator.persistentStores[0])

        // Stream every change as NDJSON through a child process (into a file) and measure its peak memory.
        // GNU time forks the child from its own small process: the child's peak then counts only
        // itself (spawned from this test process, it would inherit this process's high-water mark,
        // which other tests running in parallel raise).
        let output = scratch.path("history.ndjson")
        let timing = scratch.path("peak-kb")
        let arguments = ["/usr/bin/time", "-f", "%M", "-o", timing, CLI.binary.path, "history", path, "--json", "--author", "loader"]
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        #expect(posix_spawn(&pid, arguments[0], &actions, nil, &argv, environ) == 0)
        var status: Int32 = 0
        #expect(waitpid(pid, &status, 0) == pid)
        let peakText = try String(contentsOfFile: timing, encoding: .utf8).split(separator: "\n").last.map(String.init) ?? ""
        let peakMB = (Double(peakText) ?? .infinity) / 1024
        let bytes = (try FileManager.default.attributesOfItem(atPath: output)[.size] as? Int) ?? 0
        var lines = 0
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: output))
        while let chunk = try handle.read(upToCount: 1 << 22), !chunk.isEmpty {
            lines += chunk.reduce(0) { $1 == 10 ? $0 + 1 : $0 }
        }
        #expect(status == 0)
        #expect(lines == total / 10_000)
        #expect(bytes > 150_000_000, "the output is \(bytes) bytes")
        // Holding the changes would take far more than the output's size; the child stays bounded.
        #expect(peakMB < 150, "peak RSS \(peakMB) MB while printing \(bytes / 1_000_000) MB")
    }
}
