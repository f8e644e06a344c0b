import Foundation
import Synchronization
import Tributary
import TributaryTestSupport

/// The soak with faults (issue 18): one blog store with history; four writers (imports,
/// context saves, batch updates, deletes); two followers (`tail --follow --consumer`, `export
/// --follow`); one `tributary run` of three pipelines into PostgreSQL, Redis and NATS (real
/// servers); and a chaos loop that SIGKILLs one of them (or a server) every few seconds and
/// starts it again. ``run()`` drives it for `seconds`, then stops the writers and waits until
/// every consumer has caught up; the checks are in `Soak+Checks.swift`.
final class Soak: @unchecked Sendable {   // mutable fields are set before the threads start or behind `events`
    /// How long the writers and the chaos loop run: TRIBUTARY_SOAK_SECONDS (`make test`: 60, `make soak`: 600).
    static var seconds: Int { ProcessInfo.processInfo.environment["TRIBUTARY_SOAK_SECONDS"].flatMap { Int($0) } ?? 60 }

    /// Whether TRIBUTARY_SOAK_SECONDS asks for the soak.
    static var isRequested: Bool { ProcessInfo.processInfo.environment["TRIBUTARY_SOAK_SECONDS"] != nil }

    /// Consumers: the tail's, the export's and the three pipelines'.
    static let tailConsumer = "soak-tail"
    static let exportConsumer = "soak-export"
    static let pipelines = ["soak-postgres", "soak-redis", "soak-nats"]

    let seconds: Int
    let dir = TemporaryDirectory()
    let store: PersistentStoreCoordinator
    let postgres: LocalServer
    let redis: LocalServer
    let nats: LocalServer
    var storePath: String { dir.path("s.sqlite") }
    var streamURL: URL { dir.url.appendingPathComponent("stream") }
    private(set) var tail: SupervisedProcess!
    private(set) var export: SupervisedProcess!
    private(set) var pipeline: SupervisedProcess!
    private(set) var writers: [WriterLoop] = []
    /// Kills and restarts by target, and anything that went wrong in the harness itself.
    let events = Mutex<(kills: [String: Int], restarts: Int, problems: [String])>(([:], 0, []))

    init(seconds: Int) throws {
        self.seconds = seconds
        store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        _ = try store.registerHistoryConsumer(Self.tailConsumer, startingAt: .oldest)
        postgres = try PostgresServer.start(durable: true)
        redis = try RedisServer.start(appendOnly: true)
        nats = try NATSServer.start()
    }

    /// Stops the servers (the temporary directory goes with the object).
    func stop() {
        for process in [tail, export, pipeline] { process?.kill() }
        for server in [postgres, redis, nats] { server.stop() }
    }

    // MARK: Running

    /// Starts everything, runs the chaos loop for `seconds`, stops the writers, restarts what is
    /// down and waits until every consumer has reached the store's newest token (at most
    /// 120 s); returns the consumers that did not, their files kept with the run's thread stacks.
    func run() throws -> Stall? {
        try startFollowersAndPipeline()
        try waitForConsumers()
        writers = makeWriters()
        writers.forEach { $0.start() }
        let sampling = Mutex(true)
        Thread.detachNewThread { [self] in
            while sampling.withLock({ $0 }) {
                for process in [tail, export, pipeline] { process?.sampleMemory() }
                writers.forEach { $0.sampleMemory() }
                sleep(1)
            }
        }
        chaos(until: .now + .seconds(seconds))
        for server in [postgres, redis, nats] where !server.isRunning { restart(server) }
        for process in [tail!, export!, pipeline!] where !process.isRunning { try process.start() }
        for writer in writers { writer.stop(terminating: writer.name == "context") }
        let stall = try waitForCatchUp()
        sampling.withLock { $0 = false }
        for process in [tail!, export!, pipeline!] { process.terminate() }
        return stall
    }

    /// Consumers that stopped short of the newest token, and where their files were kept.
    struct Stall: CustomStringConvertible {
        let consumers: [String]
        let head: Int64
        let kept: String
        let runLines: String
        var description: String { "consumers \(consumers) did not reach token \(head) in 120 s (files and the run's thread stacks kept in \(kept)); the run's lines about them:\n\(runLines)" }
    }

    private func startFollowersAndPipeline() throws {
        let environment = ["TRIBUTARY_STORE": storePath, "POSTGRES_URL": postgres.url, "REDIS_URL": redis.url, "NATS_URL": nats.url]
        var files: [String] = []
        for (name, yaml) in zip(Self.pipelines, [Self.postgresPipeline, Self.redisPipeline, Self.natsPipeline]) {
            let file = dir.path("\(name).yml")
            try yaml.write(toFile: file, atomically: true, encoding: .utf8)
            files.append(file)
        }
        tail = SupervisedProcess(name: "tail", directory: dir.url, startPosition: { [store] in
            (try? store.historyConsumer(named: Self.tailConsumer).token.value) ?? -1
        }) { [storePath] output in
            try TributaryProcess.start(["tail", storePath, "--follow", "--consumer", Self.tailConsumer, "--json", "--busy-timeout", "60"], environment: [:], output: output)
        }
        export = SupervisedProcess(name: "export", directory: dir.url) { [storePath, streamURL] output in
            try TributaryProcess.start(["export", storePath, "--to", streamURL.path, "--consumer", Self.exportConsumer, "--follow", "--busy-timeout", "60"],
                                       environment: [:], output: output)
        }
        pipeline = SupervisedProcess(name: "run", directory: dir.url) { output in
            try TributaryProcess.start(["run"] + files, environment: environment, output: output)
        }
        for process in [tail!, export!, pipeline!] { try process.start() }
    }

    /// Waits until the export and the pipelines have registered their consumers (at the
    /// oldest history: the store is still empty), so they see every transaction.
    private func waitForConsumers() throws {
        let expected = Set([Self.tailConsumer, Self.exportConsumer] + Self.pipelines)
        let deadline = Date().addingTimeInterval(120)
        while Date() < deadline {
            if Set(try store.historyConsumers().map(\.name)).isSuperset(of: expected) { return }
            usleep(100_000)
        }
        throw LocalServerError("consumers \(expected.subtracting(try store.historyConsumers().map(\.name)).sorted()) were not registered in 120 s; "
                               + "run log: \(log(pipeline).suffix(1_000)) export log: \(log(export).suffix(500))")
    }

    /// Waits until every consumer is at the store's newest token; the stall when some did not in 120 s.
    private func waitForCatchUp() throws -> Stall? {
        let head = try store.currentPersistentHistoryToken().value
        let names = [Self.tailConsumer, Self.exportConsumer] + Self.pipelines
        let deadline = Date().addingTimeInterval(120)
        var behind = names
        while Date() < deadline {
            behind = try names.filter { try store.historyConsumer(named: $0).token.value < head }
            if behind.isEmpty { return nil }
            usleep(200_000)
        }
        let lines = log(pipeline).split(separator: "\n").filter { line in behind.contains { line.contains($0) } }.suffix(15).joined(separator: "\n")
        let kept = keepFiles()
        if let pid = pipeline.processIdentifier { saveThreadStacks(of: pid, to: kept + "/run-stacks.txt") }
        return Stall(consumers: behind, head: head, kept: kept, runLines: lines)
    }

    /// Every thread's stack of process `pid` (gdb), for a pipeline that stopped moving.
    func saveThreadStacks(of pid: Int32, to path: String) {
        let gdb = Process()
        gdb.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        gdb.arguments = ["gdb", "-batch", "-p", "\(pid)", "-ex", "thread apply all bt 40"]
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        gdb.standardOutput = handle
        gdb.standardError = handle
        try? gdb.run()
        gdb.waitUntilExit()
    }

    /// Copies the soak's directory (store, logs, stream) and the servers' logs where a failed run can be examined.
    func keepFiles() -> String {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-soak-failed-\(UUID().uuidString.prefix(8))")
        try? FileManager.default.copyItem(at: dir.url, to: kept)
        for server in [postgres, redis, nats] { try? FileManager.default.copyItem(at: server.logFile, to: kept.appendingPathComponent("\(server.name).log")) }
        return kept.path
    }

    /// The newest incarnation's output of `process`.
    func log(_ process: SupervisedProcess) -> String {
        process.incarnations.last.flatMap { try? String(contentsOf: $0.output, encoding: .utf8) } ?? ""
    }

    // MARK: Chaos

    /// Until `end`: every one to three seconds, SIGKILLs a random writer's command, follower,
    /// the pipeline or a server, and starts it again (a writer's loop starts its next command
    /// itself). A follower or the pipeline is killed only once it has run a while, so that its
    /// memory can be seen over time; a target with nothing to kill then gives way to another.
    private func chaos(until end: ContinuousClock.Instant) {
        let targets = writers.map(\.name) + ["tail", "export", "run", "postgres", "redis", "nats"]
        while ContinuousClock.now < end {
            usleep(useconds_t(Int.random(in: 1_000...3_000) * 1_000))
            for _ in 0..<10 where kill(targets.randomElement()!) { break }
        }
    }

    /// Kills `target` and starts it again; false when there was nothing to kill.
    private func kill(_ target: String) -> Bool {
        if let writer = writers.first(where: { $0.name == target }) {
            guard writer.kill() else { return false }
        } else if let process = [tail!, export!, pipeline!].first(where: { $0.name == target }) {
            guard process.age >= .seconds(max(10, seconds / 10)), process.kill() else { return false }
            usleep(useconds_t(Int.random(in: 100...1_000) * 1_000))
            do { try process.start() } catch { events.withLock { $0.problems.append("\(target) did not start again: \(error)") } }
        } else if let server = [postgres, redis, nats].first(where: { $0.name == target }) {
            server.kill()
            usleep(useconds_t(Int.random(in: 300...2_000) * 1_000))
            restart(server)
        }
        count(kill: target, restarted: true)
        return true
    }

    private func count(kill target: String, restarted: Bool) {
        events.withLock {
            $0.kills[target, default: 0] += 1
            if restarted { $0.restarts += 1 }
        }
    }

    /// Starts a killed server again; PostgreSQL may need a moment while its old backends exit.
    private func restart(_ server: LocalServer) {
        var lastError: (any Error)?
        for _ in 0..<10 {
            do { try server.restart(); return } catch { lastError = error }
            sleep(1)
        }
        events.withLock { $0.problems.append("\(server.name) did not start again: \(lastError.map { "\($0)" } ?? "")") }
    }
}
