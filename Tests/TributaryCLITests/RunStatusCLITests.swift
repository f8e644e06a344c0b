import Foundation
import Testing
import TributaryTestSupport

/// What `tributary run` shows while it runs and after: each pipeline's state in `status`
/// (running, retrying with the sink's last error, stopped, failed), the health endpoint
/// (503 while a pipeline fails), and the live progress line of `run --once` on a terminal.
@Suite struct RunStatusCLITests {
    let scratch = Scratch()

    func makeStore(posts count: Int) throws -> String {
        let store = try CLI.makeBlogStore(at: scratch.path("s.sqlite"))
        let result = try CLI.run(["import", store, "--entity", "Post", "--batch-size", "100", "-"], stdin: CLI.posts(0..<count))
        #expect(result.status == 0, "\(result.stderr)")
        return store
    }

    /// `GET path` on the metrics server: the status line and the body.
    func get(_ path: String, port: Int) -> (status: String, body: String) {
        let answer = FreePort.request("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", to: port) ?? ""
        let parts = answer.components(separatedBy: "\r\n\r\n")
        return (parts.first?.components(separatedBy: "\r\n").first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    func statusJSON(_ store: String) throws -> [[String: Any]] {
        let json = try CLI.run(["status", store, "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        return try #require(object["pipelines"] as? [[String: Any]])
    }

    @Test func aPipelineWhoseSinkIsUnreachableIsRetryingUnhealthyAndStoppedOnceKilled() async throws {
        let store = try makeStore(posts: 3)
        let refusing = try FreePort.refusing()
        defer { withExtendedLifetime(refusing) {} }
        let metrics = try FreePort.next(), closed = refusing.port
        let pipeline = scratch.write("hook.yml", """
            name: hook
            source: {store: \(store)}
            sinks:
              - type: http
                url: http://127.0.0.1:\(closed)/h
                timeout: 1s
            retry: {initial: 100ms, max: 200ms}
            metrics: 127.0.0.1:\(metrics)

            """)
        let run = try TributaryProcess.start(["run", pipeline], environment: [:], output: URL(fileURLWithPath: scratch.path("run.log")))
        defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
        let retrying = "pipeline hook: retrying: sink http: cannot reach http://127.0.0.1:\(closed)/h"
        var status = ""
        #expect(try await Wait.until(.seconds(30)) {
            status = try CLI.run(["status", store]).stdout
            return status.contains(retrying)
        }, "\(status)")
        #expect(status.contains("(process \(run.processIdentifier), since "), "\(status)")
        let health = get("/healthz", port: metrics)
        #expect(health.status == "HTTP/1.1 503 Service Unavailable", "\(health)")
        #expect(health.body.hasPrefix("hook: retrying: sink http: cannot reach http://127.0.0.1:\(closed)/h"), "\(health.body)")
        #expect(get("/metrics", port: metrics).status == "HTTP/1.1 200 OK")

        kill(run.processIdentifier, SIGKILL)
        run.waitUntilExit()
        let after = try CLI.run(["status", store]).stdout
        #expect(after.contains("pipeline hook: stopped (process \(run.processIdentifier) is gone; it was retrying: sink http: cannot reach"), "\(after)")
        let pipelines = try statusJSON(store)
        #expect(pipelines.count == 1)
        #expect(pipelines.first?["state"] as? String == "stopped")
        #expect(pipelines.first?["recordedState"] as? String == "retrying")
        #expect((pipelines.first?["lastError"] as? String)?.hasPrefix("sink http: cannot reach") == true)
        #expect(pipelines.first?["process"] as? Int == Int(run.processIdentifier))

        // A pipeline that gives up is failed, with the error, after its process has ended.
        let giving = scratch.write("give.yml", "name: give\nsource: {store: \(store)}\nsinks:\n  - type: http\n    url: http://127.0.0.1:\(closed)/h\n    timeout: 1s\nretry: {initial: 10ms, max_attempts: 2}\n")
        let gaveUp = try CLI.run(["run", giving, "--once"])
        #expect(gaveUp.status != 0)
        let failed = try CLI.run(["status", store]).stdout
        #expect(failed.contains("pipeline give: failed: sink http failed after 2 attempts: cannot reach http://127.0.0.1:\(closed)/h"), "\(failed)")
        #expect(try statusJSON(store).first { $0["name"] as? String == "give" }?["state"] as? String == "failed")
    }

    @Test func aHealthyPipelineIsRunningAndStoppedBySIGINTOrSIGTERMWithNothingLost() async throws {
        let store = try makeStore(posts: 300)
        for (number, signal) in [SIGINT, SIGTERM].enumerated() {
            let name = "seg\(number)", metrics = try FreePort.next(), stream = scratch.path("stream-\(number)")
            let pipeline = scratch.write("\(name).yml", """
                name: \(name)
                source: {store: \(store)}
                sinks:
                  - type: segments
                    directory: \(stream)
                checkpoint: {records: 50}
                metrics: 127.0.0.1:\(metrics)

                """)
            let run = try TributaryProcess.start(["run", pipeline], environment: [:], output: URL(fileURLWithPath: scratch.path("\(name).log")))
            defer { if run.isRunning { kill(run.processIdentifier, SIGKILL) } }
            var status = ""
            #expect(try await Wait.until(.seconds(30)) {
                status = try CLI.run(["status", store]).stdout
                return status.contains("pipeline \(name): running (process \(run.processIdentifier), since ")
            }, "\(status)")
            #expect(await Wait.until(.seconds(10)) { get("/healthz", port: metrics).status == "HTTP/1.1 200 OK" })
            #expect(get("/healthz", port: metrics).body.contains("\(name): running\n"))
            // More commits arrive while it runs; the signal comes while it may be delivering them.
            try CLI.run(["import", store, "--entity", "Post", "--batch-size", "10", "-"], stdin: CLI.posts(1000 * (number + 1)..<1000 * (number + 1) + 100))
            kill(run.processIdentifier, signal)
            run.waitUntilExit()
            let log = (try? String(contentsOf: URL(fileURLWithPath: scratch.path("\(name).log")), encoding: .utf8)) ?? ""
            #expect(run.terminationReason == .exit && run.terminationStatus == 0, "signal \(signal): \(log)")
            #expect(try CLI.run(["status", store]).stdout.contains("pipeline \(name): stopped (process \(run.processIdentifier), since "))
            // Nothing lost: what the stream holds is exactly the history through the consumer's token.
            try expectStreamHoldsThroughConsumer(store: store, stream: stream, consumer: name)
            // Then the rest, nothing twice: every change once.
            #expect(try CLI.run(["run", pipeline, "--once"]).status == 0)
            let current = try CLI.run(["token", store]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try consumerToken(store, name) == current)
            try expectStreamHoldsThroughConsumer(store: store, stream: stream, consumer: name)
            #expect(try CLI.run(["verify", stream]).stdout.contains(", \(400 + 100 * number) records"))
        }
    }

    /// The stream verifies and holds every change through the consumer's token, and at most
    /// the beginning of the transaction after it (a stop may end a transaction's delivery
    /// part way: the sink's own position resumes it), nothing beyond.
    func expectStreamHoldsThroughConsumer(store: String, stream: String, consumer: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let token = try #require(try consumerToken(store, consumer), sourceLocation: sourceLocation)
        let value = Int(token.split(separator: "-").first ?? "") ?? -1
        let counts = try CLI.run(["history", store, "--json"]).stdoutLines.compactMap { line -> (Int, Int)? in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                  let token = (object["token"] as? String)?.split(separator: "-").first.flatMap({ Int($0) }), let changes = object["changeCount"] as? Int else { return nil }
            return (token, changes)
        }
        let through = counts.filter { $0.0 <= value }.reduce(0) { $0 + $1.1 }
        let next = counts.first { $0.0 == value + 1 }?.1 ?? 0
        let verified = try CLI.run(["verify", stream])
        #expect(verified.status == 0, "\(verified.stderr)", sourceLocation: sourceLocation)
        let records = verified.stdout.split(separator: ",").dropFirst().first.flatMap { Int($0.split(separator: " ").first ?? "") } ?? -1
        #expect(records >= through && (records < through + next || next == 0 && records == through), "consumer at \(token) (\(through) changes through it): \(verified.stdout)", sourceLocation: sourceLocation)
    }

    func consumerToken(_ store: String, _ name: String) throws -> String? {
        let list = try CLI.run(["status", store, "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(list.stdout.utf8)) as? [String: Any]
        let consumers = object?["consumers"] as? [[String: Any]] ?? []
        return consumers.first { $0["name"] as? String == name }?["token"] as? String
    }

    @Test func aRetryLoggedDuringTheProgressLineStartsALineOfItsOwn() throws {
        let store = try makeStore(posts: 200)
        let refusing = try FreePort.refusing()
        defer { withExtendedLifetime(refusing) {} }
        let closed = refusing.port
        let pipeline = scratch.write("two.yml", """
            name: two
            source: {store: \(store)}
            sinks:
              - type: segments
                directory: \(scratch.path("two-out"))
              - type: http
                url: http://127.0.0.1:\(closed)/h
                timeout: 1s
            retry: {initial: 10ms, max_attempts: 2}

            """)
        let shown = try CLI.runOnTerminal(["run", pipeline, "--once"], environment: [:])
        let failures = shown.split(separator: "\n").filter { $0.contains("delivery failed") }
        #expect(failures.count == 2, "\(shown)")
        #expect(shown.contains("\u{1B}[Kdelivered "), "\(shown)")
        for line in failures {
            // What the line shows once the terminal has applied its clears.
            let visible = line.components(separatedBy: "\u{1B}[K").last ?? ""
            #expect(!visible.contains("delivered "), "\(line)")
        }
    }

    @Test func helpTextsNameTheStatesAndTheHealthEndpoint() throws {
        let run = try CLI.run(["run", "--help"], environment: ["COLUMNS": "300"]).stdout
        #expect(run.contains("on /healthz each pipeline's state, with status 503 while one is retrying or failed"), "\(run)")
        #expect(run.contains("with --once on a terminal a live line shows the records delivered and the rate"), "\(run)")
        let status = try CLI.run(["status", "--help"], environment: ["COLUMNS": "300"]).stdout
        #expect(status.contains("running, retrying (with the sink's last error), stopped or failed"), "\(status)")
    }

    @Test func runOnceShowsALiveProgressLineOnATerminalOnly() throws {
        let store = try makeStore(posts: 3000)
        let pipeline = scratch.write("p.yml", "name: p\nsource: {store: \(store)}\nsinks:\n  - type: segments\n    directory: \(scratch.path("out"))\n    batch_size: 100\ncheckpoint: {records: 500}\n")
        let shown = try CLI.runOnTerminal(["run", pipeline, "--once"], environment: [:])
        #expect(shown.contains("\u{1B}[Kdelivered "), "\(shown)")
        #expect(shown.contains(" records/s") || shown.contains("/s"), "\(shown)")
        #expect(shown.contains("pipeline p: segments 3000 records; consumer p at token "), "\(shown)")
        try CLI.run(["import", store, "--entity", "Post", "-"], stdin: CLI.posts(5000..<5010))
        let piped = try CLI.run(["run", pipeline, "--once"])
        #expect(piped.status == 0)
        #expect(!piped.stderr.contains("\u{1B}[K") && !piped.stderr.contains("delivered "), "\(piped.stderr)")
        #expect(piped.stderr.contains("pipeline p: segments 10 records; consumer p at token "), "\(piped.stderr)")
    }
}
