import ArgumentParser
import Foundation
import Tributary
import TributaryNATSSink
import TributaryPipeline
import TributaryStreams

/// `tributary replay DIR --into STORE [--until TOKEN|DATE] [--model FILE] [--resume]`, or
/// `tributary replay nats://HOST:PORT/STREAM --into STORE [--model FILE] [--follow]`.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild a store from a change stream, up to a token or a date.",
        discussion: """
            Example: tributary replay stream/ --into copy.sqlite --until 2024-05-01T12:00:00Z
            From NATS JetStream: tributary replay nats://127.0.0.1:4222/TRIBUTARY --into replica.sqlite --follow \
            (a durable consumer named after the replica; a new replica takes its model from the stream's first schema message, \
            or from --model). Schema records (model changes) in a stream or on NATS migrate the target where they stand.
            """
    )

    @Argument(help: "The stream directory, or nats://HOST:PORT/STREAM.")
    var directory: String

    @Option(name: .long, help: "The store to rebuild (created if missing).")
    var into: String

    @Option(name: .long, help: "Stop after this token, or after the last transaction at or before this ISO 8601 date.")
    var until: String?

    @Option(name: .long, help: "A model file (YAML) to use instead of the model kept in the stream.")
    var model: String?

    @Flag(name: .long, help: "Continue into a store that is not empty (after the position an earlier replay saved).")
    var resume = false

    @Option(name: .long, help: "With nats://: the source store to replicate (its UUID) when the stream holds several; the first one seen otherwise.")
    var store: String?

    @Flag(name: .long, help: "With nats://: keep applying new messages until SIGTERM or SIGINT (which finish the batch in hand, print the summary and exit 0).")
    var follow = false

    func validate() throws {
        if follow && !directory.lowercased().hasPrefix("nats://") { throw ValidationError("--follow goes with a nats://HOST:PORT/STREAM source") }
        if directory.lowercased().hasPrefix("nats://") && (until != nil || resume) {
            throw ValidationError("--until and --resume go with a stream directory; a nats:// replica always resumes from its consumer")
        }
    }

    func run() async throws {
        if directory.lowercased().hasPrefix("nats://") { return try replayFromNATS() }
        let targetURL = URL(fileURLWithPath: into)
        let existed = FileManager.default.fileExists(atPath: targetURL.path)
        var opened: PersistentStoreCoordinator?
        do {
            try replayFromDirectory(targetURL) { opened = $0 }
        } catch {
            // A replay that fails leaves no new store behind (nor its position file), so that
            // the retry, with another --model say, starts as the first attempt did.
            if let opened { for store in opened.persistentStores { opened.remove(store) } }
            if !existed { ReplayTarget.remove(targetURL) }
            throw error
        }
    }

    private func replayFromDirectory(_ targetURL: URL, opened: (PersistentStoreCoordinator) -> Void) throws {
        let streamURL = URL(fileURLWithPath: directory)
        let limit = try until.map { try ReplayLimit(parsing: $0) }
        let givenModel = try model.map { try ManagedObjectModel(yamlFile: URL(fileURLWithPath: $0)) }
        let replayer = try StreamReplayer(directory: streamURL, model: givenModel)
        // Verify before touching the target, so a damaged stream creates no store.
        _ = try StreamVerifier(directory: streamURL).verify()
        if let manifest = try StreamManifest.load(from: streamURL) {
            try ReplayTarget.checkLimit(limit, manifest: manifest)
            try ReplayTarget.checkNotSource(targetURL, manifest: manifest)
        }
        let target = try replayer.openTarget(at: targetURL)
        opened(target)
        let progress = ProgressLine(verb: "replayed", noun: "record")
        let summary = try replayer.replay(into: target, until: limit, resume: resume, verified: true) { summary in
            progress.update(summary.records)
        }
        progress.finish()
        Console.print("replayed \(Plural.counted(summary.records, "record")) into \(into)\(summary.last.map { " through \($0)" } ?? "")\(progress.rateText(summary.records))")
        for gap in summary.captureGaps {
            Console.warn("warning: passed over a \(TerminalText.escaped(gap.summary)) (the replica lacks what the source missed)")
        }
    }

    private func replayFromNATS() throws {
        guard let url = URL(string: directory), let host = url.host, let port = url.port,
              let stream = url.path.split(separator: "/").first.map(String.init), url.path.split(separator: "/").count == 1 else {
            throw ValidationError("'\(directory)' is not nats://HOST:PORT/STREAM")
        }
        let givenModel = try model.map { try ManagedObjectModel(yamlFile: URL(fileURLWithPath: $0)) }
        let chosen = try store.map { text in
            guard let id = UUID(uuidString: text) else { throw TributaryError(.invalidInput, "'\(text)' is not a store ID", location: "--store", hint: "give the source store's UUID (tributary status STORE prints it)") }
            return id
        }
        let replicator = try NATSReplicator(url: "nats://\(host):\(port)", stream: stream, target: URL(fileURLWithPath: into), model: givenModel, sourceStore: chosen)
        let stop = StopSignal()
        let progress = ProgressLine(verb: "applied", noun: "record")
        let apply = { try replicator.run(follow: follow, stop: stop) { progress.update($0.records) } }
        // With --follow, SIGINT and SIGTERM end it as they end tail --follow: the batch in hand
        // is applied and acknowledged, then it returns.
        let summary = follow ? try Interruption.stoppingOnSignals(stop, apply) : try apply()
        progress.finish()
        Console.print("applied \(Plural.counted(summary.records, "record")) from stream \(stream) into \(into)\(summary.last.map { " through \($0)" } ?? "")\(progress.rateText(summary.records))")
    }
}
