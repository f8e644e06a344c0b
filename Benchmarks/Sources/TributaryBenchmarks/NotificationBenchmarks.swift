import Foundation
import Synchronization
import Tributary

/// Commit-to-handler latency of remote change notifications, within a process and
/// between two, over single-object saves made one at a time (each save waits for the
/// watcher's handler to see the one before), and the CPU an idle watcher spends.
enum NotificationBenchmarks {
    /// 10,000, or `TRIBUTARY_BENCH_SAVES`.
    static let saves = ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_SAVES"].flatMap { Int($0) } ?? 10_000
    /// The child-process mode of the benchmark binary: `--notify-writer STORE`.
    static let writerFlag = "--notify-writer"

    /// CLOCK_MONOTONIC in nanoseconds: the same clock in every process of the machine.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    static func open(_ path: String) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try TributaryBench.blogModel())
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = true
        description.remoteChangeNotificationPost = true
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    static func save(_ coordinator: PersistentStoreCoordinator, _ i: Int) throws {
        var request = BatchInsertRequest(entityName: "Tag", objects: [["name": .string("tag-\(i)")]])
        request.resultType = .statusOnly
        request.transaction = TransactionMetadata(author: "writer")
        try coordinator.execute(request)
    }

    /// When the watcher's handler saw each token value.
    final class Arrivals: Sendable {
        private let times = Mutex<[Int64: Int64]>([:])
        private let arrived = DispatchSemaphore(value: 0)

        func record(_ batch: [PersistentHistoryTransaction]) {
            let t = NotificationBenchmarks.now()
            times.withLock { for transaction in batch { $0[transaction.token.value] = t } }
            arrived.signal()
        }

        /// Waits up to a second for `token`; its arrival time.
        func wait(for token: Int64) -> Int64? {
            let deadline = DispatchTime.now() + 1
            while true {
                if let t = times.withLock({ $0[token] }) { return t }
                if arrived.wait(timeout: deadline) == .timedOut { return times.withLock { $0[token] } }
            }
        }
    }

    /// Runs a watcher on `path` until the returned task is cancelled.
    static func watch(_ path: String, _ arrivals: Arrivals) throws -> (PersistentStoreCoordinator, Task<Void, Never>) {
        let coordinator = try open(path)
        var configuration = HistoryWatcher.Configuration()
        configuration.filter.authors = ["writer"]
        let watcher = try HistoryWatcher(coordinator: coordinator, configuration: configuration)
        let task = Task { await watcher.run { arrivals.record($0) } }
        Thread.sleep(forTimeInterval: 0.1)  // the loop is listening
        return (coordinator, task)
    }

    static func percentile(_ sorted: [Double], _ p: Double) -> Double {
        sorted.isEmpty ? .nan : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
    }

    static func latencies(_ samples: [Double], prefix: String, p50Goal: String?, p99Goal: String) -> [Measurement] {
        let sorted = samples.sorted()
        let details: [(String, Any)] = [("saves", samples.count), ("max_ms", sorted.last ?? .nan), ("note", "shared machine")]
        var result: [Measurement] = []
        if let p50Goal { result.append(Measurement(name: "\(prefix)_p50_ms", value: percentile(sorted, 0.5), unit: "ms", goal: p50Goal, details: details)) }
        result.append(Measurement(name: "\(prefix)_p99_ms", value: percentile(sorted, 0.99), unit: "ms", goal: p99Goal, details: details))
        return result
    }

    static func inProcess() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("n.sqlite").path
            let writer = try open(path)
            let arrivals = Arrivals()
            let (_, task) = try watch(path, arrivals)
            defer { task.cancel() }
            var samples: [Double] = []
            for i in 0..<saves {
                let start = now()
                try save(writer, i)
                let token = try writer.currentPersistentHistoryToken().value
                let arrived = arrivals.wait(for: token) ?? now()
                samples.append(Double(max(0, arrived - start)) / 1e6)
            }
            var result = latencies(samples, prefix: "notify_in_process", p50Goal: nil, p99Goal: "<= 1")
            result[0].details.insert(("p50_ms", percentile(samples.sorted(), 0.5)), at: 0)
            return result
        }
    }

    static func crossProcess() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("x.sqlite").path
            _ = try open(path)  // create it
            let arrivals = Arrivals()
            let (_, task) = try watch(path, arrivals)
            defer { task.cancel() }
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = [writerFlag, path]
            let input = Pipe(), output = Pipe()
            child.standardInput = input
            child.standardOutput = output
            try child.run()
            var lines = LineReader(output.fileHandleForReading)
            var samples: [Double] = []
            for _ in 0..<saves {
                input.fileHandleForWriting.write(Data("go\n".utf8))
                guard let line = lines.next() else { throw TributaryError(.io, "the writer process ended early") }
                let parts = line.split(separator: " ").compactMap { Int64($0) }
                guard parts.count == 2 else { throw TributaryError(.io, "the writer process said '\(line)'") }
                let arrived = arrivals.wait(for: parts[0]) ?? now()
                samples.append(Double(max(0, arrived - parts[1])) / 1e6)
            }
            try input.fileHandleForWriting.close()
            child.waitUntilExit()
            return latencies(samples, prefix: "notify_cross_process", p50Goal: "<= 1", p99Goal: "<= 5")
        }
    }

    /// The child process: one save per line read; prints "token startNanoseconds".
    static func writerProcess(_ path: String) throws {
        let coordinator = try open(path)
        var i = 0
        while readLine() != nil {
            let start = now()
            try save(coordinator, 1_000_000 + i)
            let token = try coordinator.currentPersistentHistoryToken().value
            FileHandle.standardOutput.write(Data("\(token) \(start)\n".utf8))
            i += 1
        }
    }

    /// The CPU time a watcher listening to an idle store adds to its process: the
    /// process's CPU over a period with the watcher, less the same period without it (a
    /// Swift process that merely waits spends some: libdispatch wakes every second).
    static func idleWatcher() throws -> [Measurement] {
        try Harness.withDirectory { dir in
            let path = dir.appendingPathComponent("i.sqlite").path
            let seconds = Double(ProcessInfo.processInfo.environment["TRIBUTARY_BENCH_IDLE_SECONDS"].flatMap { Double($0) } ?? 20)
            // The baseline: a task waiting on a stream that never yields.
            let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
            let waiting = Task { for await _ in stream {} }
            Thread.sleep(forTimeInterval: 0.1)
            let baselineStart = cpuMilliseconds()
            Thread.sleep(forTimeInterval: seconds)
            let baseline = cpuMilliseconds() - baselineStart
            continuation.finish()
            _ = waiting
            let arrivals = Arrivals()
            let (_, task) = try watch(path, arrivals)
            defer { task.cancel() }
            let (before, threadBefore) = (cpuMilliseconds(), listeningThreadMilliseconds())
            Thread.sleep(forTimeInterval: seconds)
            let spent = cpuMilliseconds() - before
            let threadSpent = listeningThreadMilliseconds() - threadBefore
            let perMinute = 60 / seconds
            return [Measurement(name: "idle_watcher_cpu_ms_per_min", value: max(0, spent - baseline) * perMinute, unit: "ms/min", goal: "<= 5",
                                details: [("seconds", seconds), ("process_with_watcher_ms_per_min", spent * perMinute),
                                          ("process_without_ms_per_min", baseline * perMinute),
                                          ("listening_thread_ms_per_min", threadSpent * perMinute), ("note", "shared machine")])]
        }
    }

    /// CPU time of the listening threads, from the scheduler's nanosecond counters.
    static func listeningThreadMilliseconds() -> Double {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var total = 0.0
        for task in tasks {
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            guard comm.hasPrefix("tributary-notif"),
                  let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/schedstat", encoding: .utf8),
                  let nanoseconds = stat.split(separator: " ").first.flatMap({ Double($0) }) else { continue }
            total += nanoseconds / 1e6
        }
        return total
    }

    static func cpuMilliseconds() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1000
    }
}

/// Lines from a pipe, read as they come.
struct LineReader {
    let handle: FileHandle
    var buffer = Data()

    init(_ handle: FileHandle) { self.handle = handle }

    mutating func next() -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                buffer.removeSubrange(buffer.startIndex...newline)
                return line
            }
            let data = handle.availableData
            if data.isEmpty { return nil }
            buffer.append(data)
        }
    }
}
