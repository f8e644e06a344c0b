import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import Tributary
import TributaryPipeline

/// `tributary run PIPELINE… [--once]`.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run pipelines: history through transforms into sinks, until stopped.",
        discussion: """
            Example: TRIBUTARY_STORE=blog.sqlite tributary run pipelines/search-index.yml --once
            Every file is checked before anything runs. SIGTERM or SIGINT drains the records in \
            flight, commits the checkpoints and exits 0; --once stops when every pipeline has \
            caught up, and fails if a sink stays unavailable longer than --give-up-after. Every \
            pipeline's consumer is registered before any runs, and each pipeline runs on its own, \
            so a sink that is away holds back only its pipeline. Failures, retries and dead letters \
            are logged on standard error (standard \
            output may be a sink); with --once on a terminal a live line shows the records delivered \
            and the rate. tributary status STORE shows each pipeline's state (running, retrying with \
            the sink's last error, stopped, failed). A pipeline with metrics: HOST:PORT serves \
            Prometheus metrics there, and on /healthz each pipeline's state, with status 503 while \
            one is retrying or failed.
            """
    )

    @Argument(help: "Pipeline files (YAML).")
    var pipelines: [String]

    @Flag(name: .long, help: "Deliver what there is, then exit.")
    var once = false

    @Option(name: .customLong("give-up-after"), help: "With --once: how long a sink may stay unavailable before the run fails (30s, 5m), its consumer left where it was.")
    var giveUpAfter = "60s"

    func validate() throws {
        guard !pipelines.isEmpty else { throw ValidationError("name at least one pipeline file") }
    }

    func run() async throws {
        let files = try pipelines.map { try PipelineFile(contentsOf: URL(fileURLWithPath: $0), sinks: .tributary) }
        let names = files.map(\.name)
        if let duplicate = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw ValidationError("two pipelines are named '\(duplicate)'; give each its own name:")
        }
        for file in files {
            if let line = try PipelinePreflight.check(file) { Console.warn(line) }
        }
        let board = PipelineStatusBoard()
        let servers = try MetricsServer.bootstrap(addresses: files.compactMap(\.metricsAddress), health: board)
        defer { for server in servers { server.stop() } }
        for server in servers { Console.warn("serving metrics on http://\(server.host):\(server.port)/metrics and health on /healthz") }
        // A live line on a terminal with --once: records delivered (once per sink) and the rate.
        let progress = SharedProgressLine(ProgressLine(verb: "delivered", noun: "record", enabled: once && Console.isErrorTerminal))
        defer { progress.finish() }
        let stop = StopSignal()
        let giveUp = once ? try DurationText.seconds(parsing: giveUpAfter, option: "--give-up-after") : nil
        let runners = try files.map { file in
            let runner = try PipelineRunner(pipeline: file)
            runner.shouldStop = { stop.isRequested }
            runner.giveUpAfter = giveUp
            runner.events = { event in
                if case .delivered(_, let records) = event { progress.add(records) }
            }
            return runner
        }
        let service = PipelineService(runners: runners, stop: stop, once: once, board: board)
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup, serviceName: "pipelines")],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: Logger(label: "tributary.run")))
        try await group.run()
        progress.finish()
        for runner in runners {
            let sinks = runner.sinkTotals.map { total in
                "\(total.name) \(Plural.counted(total.delivered, "record"))" + (total.deadLettered > 0 ? " (\(total.deadLettered) dead-lettered)" : "")
            }.joined(separator: ", ")
            Console.warn("pipeline \(TerminalText.escaped(runner.pipeline.name)): \(sinks); consumer \(TerminalText.escaped(runner.pipeline.source.consumer)) at token \(runner.committedToken)\(progress.rateText(runner.sinkTotals.map(\.delivered).max() ?? 0))")
        }
    }
}
