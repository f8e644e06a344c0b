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
        var description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
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

        // Stream every change as NDJSON through a child process and measure its peak memory.
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["history", path, "--json", "--author", "loader"]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        var bytes = 0
        var lines = 0
        let handle = pipe.fileHandleForReading
        while true {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            bytes += chunk.count
            lines += chunk.reduce(0) { $1 == 10 ? $0 + 1 : $0 }
        }
        process.waitUntilExit()
        var usage = rusage()
        getrusage(RUSAGE_CHILDREN, &usage)
        let peakMB = Double(usage.ru_maxrss) / 1024
        #expect(process.terminationStatus == 0)
        #expect(lines == total / 10_000)
        #expect(bytes > 150_000_000, "the output is \(bytes) bytes")
        // Holding the changes would take far more than the output's size; the child stays bounded.
        #expect(peakMB < 150, "peak RSS \(peakMB) MB while printing \(bytes / 1_000_000) MB")
    }
}
