import Foundation
import Testing
import Tributary
import TributaryTestSupport

/// A `tributary run` fed a commit every 10 ms keeps one listening thread and the same
/// descriptors (issue 21): it waits for commits after each step, and every wait shares the
/// store's one monitor instead of starting a thread, a connection, a pipe and an inotify
/// descriptor of its own.
@Suite struct PipelineRunResourcesTests {
    /// The listening threads' IDs and the inotify and pipe descriptors of process `pid`.
    static func sample(_ pid: Int32) -> (threads: Set<String>, descriptors: Set<String>) {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let threads = Set(tasks.filter { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/comm", encoding: .utf8)) ?? "").hasPrefix("tributary-notif")
        })
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let descriptors = Set(fds.compactMap { fd -> String? in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
                  target.contains("inotify") || target.hasPrefix("pipe:") else { return nil }
            return "\(fd) \(target)"
        })
        return (threads, descriptors)
    }

    @Test func aRunFedACommitEvery10msKeepsOneListeningThreadAndItsDescriptors() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        try PipelineFixtures.insertPosts(store, count: 1)
        let file = dir.path("p.yml")
        try """
            name: steady
            source:
              store: \(dir.path("s.sqlite"))
              consumer: steady
            sinks:
              - type: segments
                directory: \(dir.path("out"))
            """.write(toFile: file, atomically: true, encoding: .utf8)
        let run = try TributaryProcess.start(["run", file], environment: [:], output: dir.url.appendingPathComponent("run.log"))
        defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
        func consumer() -> Int64 { (try? store.historyConsumer(named: "steady").token.value) ?? -1 }
        let deadline = Date().addingTimeInterval(30)
        while consumer() < 1, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }

        // Commits for 6 s (and at least 300 of them, on a loaded machine), sampling from the 50th.
        var threads = Set<String>(), descriptorSets = Set<Set<String>>()
        var lastSample = Date.distantPast
        let start = Date()
        var i = 1
        while Date().timeIntervalSince(start) < 6 || i < 300 {
            try PipelineFixtures.insertPosts(store, count: 1, from: i)
            i += 1
            if i > 50, Date().timeIntervalSince(lastSample) >= 0.2 {
                let sample = Self.sample(run.processIdentifier)
                threads.formUnion(sample.threads)
                descriptorSets.insert(sample.descriptors)
                lastSample = Date()
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        let head = try store.currentPersistentHistoryToken().value
        let waited = Date().addingTimeInterval(20)
        while consumer() < head, Date() < waited { try await Task.sleep(for: .milliseconds(20)) }
        kill(run.processIdentifier, SIGTERM)
        run.waitUntilExit()
        #expect(run.terminationStatus == 0)
        #expect(consumer() == head, "the run delivered every commit")
        #expect(threads.count == 1, "listening threads seen over \(i - 50) commits: \(threads.count)")
        #expect(descriptorSets.count == 1, "its inotify and pipe descriptors changed: \(descriptorSets.count) different sets")
    }
}
