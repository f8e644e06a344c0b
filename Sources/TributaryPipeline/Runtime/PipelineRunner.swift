import Foundation
import Logging
import Tributary
import TributaryStreams

/// Runs one pipeline, a step at a time: ``runOnce()`` reads the history after the
/// consumer's position (at most `checkpoint.records` records), applies the transforms,
/// delivers to every sink with its `on_error` policy, and checkpoints when due: every sink
/// reports the records durable, then the consumer is committed, then consumed history is
/// pruned if the pipeline says so. ``finish()`` checkpoints and closes the sinks. Loops
/// (``PipelineService``) only schedule these steps.
///
/// ```swift
/// let runner = try PipelineRunner(pipeline: try PipelineFile(contentsOf: url))
/// while try await !runner.runOnce().caughtUp {}
/// try await runner.finish()
/// ```
public final class PipelineRunner {
    /// What one step did.
    public struct Step: Sendable, Equatable {
        /// Records read from history (before filters).
        public var read = 0
        /// Records delivered, counted once per sink.
        public var delivered = 0
        /// Records written to dead letters, counted once per sink.
        public var deadLettered = 0
        /// Whether the pipeline has read everything committed when the step began.
        public var caughtUp = true
        /// Whether the step checkpointed.
        public var checkpointed = false
        /// Whether a stop request cut a retry short (the batch is delivered again next time).
        public var interrupted = false
    }

    struct SinkState {
        let sink: any Sink
        let onError: PipelineFile.OnError
        let batchSize: Int
        let deadLetterDirectory: URL?
        var deadLetters: DeadLetterWriter?
        var durable: StreamPosition?
        /// Records this sink took and records it dead-lettered, since the runner was made.
        var delivered = 0
        var deadLettered = 0
    }

    /// What each sink received since the runner was made: records delivered and records
    /// dead-lettered, by sink name, in the pipeline's order (for `run --once`'s summary).
    public var sinkTotals: [(name: String, delivered: Int, deadLettered: Int)] {
        states.map { ($0.sink.name, $0.delivered, $0.deadLettered) }
    }

    struct Interrupted: Error {}

    /// The pipeline.
    public let pipeline: PipelineFile
    /// The source store's coordinator.
    public let coordinator: PersistentStoreCoordinator
    /// Waits between retries (injectable: tests pass one that does not sleep).
    public var sleep: @Sendable (TimeInterval) async throws -> Void = { try await Task.sleep(for: .milliseconds(Int64(saturating: $0 * 1000))) }
    /// Random numbers in 0...1 for the backoff's jitter.
    public var random: @Sendable () -> Double = { Double.random(in: 0...1) }
    /// Told of deliveries, failures to retry and recoveries, as values (see ``Event``).
    public var events: @Sendable (Event) -> Void = { _ in }
    /// Asked before each retry wait: true cuts the retries short so the pipeline can stop.
    public var shouldStop: @Sendable () -> Bool = { false }
    /// The clock checkpoints are timed by.
    public var now: @Sendable () -> Date = { Date() }
    /// How long a sink may stay unavailable (opening, delivering or checkpointing) before the
    /// runner gives up with `pipelineStopped`, whatever its retry policy; nil (the default) to
    /// retry as the policy says. `tributary run --once` sets it so a run always returns.
    public var giveUpAfter: TimeInterval?
    /// Asked before pruning: false holds pruning back (``PipelineService`` says so while a
    /// pipeline of the run has not registered its consumer yet).
    public var pruneAllowed: @Sendable () -> Bool = { true }
    /// The pipeline's metrics (made with the process's metrics backend unless replaced).
    public var metrics: PipelineMetrics
    /// Where failures, retries and dead letters are logged, with pipeline and sink as metadata.
    public var logger: Logger

    var states: [SinkState]
    private var opened = false
    private let storeID: UUID
    /// Reads the pipeline's history and commits its consumer.
    private let follower: HistoryFollower
    private var committed: Int64 = 0
    private var lastRead: StreamPosition?
    private var readThrough: Int64 = 0
    private var checkpointedRead: StreamPosition?
    private var sinceCheckpoint = 0
    private var lastCheckpoint = Date()
    private var lastPrune = Date(timeIntervalSince1970: 0)
    /// When a sink began failing without a success since (for ``giveUpAfter``).
    private var failingSince: Date?
    /// Whether a failure was reported to ``events`` without a recovery since.
    private var failing = false
    /// When the lag gauges were last set, and how long counting took.
    private var lagUpdated: (at: ContinuousClock.Instant, took: Duration)?

    /// A runner for `pipeline`, opening its store and making its sinks from their settings.
    public convenience init(pipeline: PipelineFile, environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let url = URL(fileURLWithPath: pipeline.source.store)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TributaryError(.fileNotFound, "the source store does not exist", location: "\(pipeline.path): source.store: \(pipeline.source.store)",
                                 hint: "set TRIBUTARY_STORE or source.store to an existing store")
        }
        let coordinator = PersistentStoreCoordinator()
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: url))
        try self.init(pipeline: pipeline, coordinator: coordinator, sinks: pipeline.sinks.map { Self.makeSink($0, environment: environment) })
    }

    /// A runner for `pipeline` over `coordinator`'s store, delivering to `sinks` (one per
    /// entry of `pipeline.sinks`, whose policies they follow).
    public init(pipeline: PipelineFile, coordinator: PersistentStoreCoordinator, sinks: [any Sink]) throws {
        precondition(sinks.count == pipeline.sinks.count, "one sink per entry of pipeline.sinks")
        guard let store = coordinator.persistentStores.first else { throw TributaryError(.noStore, "the coordinator has no store") }
        self.pipeline = pipeline
        self.coordinator = coordinator
        self.storeID = store.identifier
        self.follower = HistoryFollower(coordinator: coordinator, storeID: store.identifier, consumerName: pipeline.source.consumer, filter: pipeline.source.filter)
        self.metrics = PipelineMetrics(pipeline: pipeline.name, sinks: pipeline.sinks.map(\.name))
        var logger = Logger(label: "tributary.pipeline")
        logger[metadataKey: "pipeline"] = "\(pipeline.name)"
        self.logger = logger
        self.states = zip(sinks, pipeline.sinks).map { sink, settings in
            SinkState(sink: sink, onError: settings.onError, batchSize: settings.batchSize,
                      deadLetterDirectory: settings.deadLetterDirectory.map { URL(fileURLWithPath: $0) }, deadLetters: nil, durable: nil)
        }
    }

    /// The sink a setting describes (made by its type's ``SinkConfiguration``).
    public static func makeSink(_ settings: PipelineFile.SinkSettings, environment: [String: String] = ProcessInfo.processInfo.environment) -> any Sink {
        settings.configuration.makeSink(settings, environment: environment)
    }

    /// The consumer's committed token.
    public var committedToken: Int64 { committed }

    /// Registers the pipeline's consumer if it is new, at the oldest history kept, so that
    /// pipelines run beside it do not prune what it has to read; returns a warning when
    /// history was already pruned before it. A pipeline that starts with a snapshot registers
    /// its consumer only once the snapshot is delivered (at the snapshot's token).
    public func registerConsumer() throws -> String? {
        let name = pipeline.source.consumer
        guard (try? coordinator.historyConsumer(named: name)) == nil, !pipeline.source.snapshot else { return nil }
        let consumer = try coordinator.registerHistoryConsumer(name, startingAt: .oldest)
        guard consumer.token.value > 0 else { return nil }
        return "pipeline \(pipeline.name): consumer \(name) is new and history through token \(consumer.token.value) was already pruned, so it starts after it; "
            + "set source.snapshot: true to deliver the rows that history changed"
    }

    /// Gives up when a sink has failed for longer than ``giveUpAfter``.
    func giveUpIfDue(_ sink: String, _ failure: TributaryError) throws {
        guard let giveUpAfter else { return }
        let since = failingSince ?? now()
        failingSince = since
        guard now().timeIntervalSince(since) >= giveUpAfter else { return }
        throw TributaryError(.pipelineStopped, "sink \(sink) was unavailable for \(Int64(saturating: giveUpAfter)) s (\(failure.message)); giving up",
                             location: pipeline.path, hint: "start the sink's server and run again: consumer \(pipeline.source.consumer) stays at token \(committed), so nothing is skipped")
    }

    private func openIfNeeded() async throws {
        guard !opened else { return }
        let store = coordinator.persistentStores[0]
        let existing = try? coordinator.historyConsumer(named: pipeline.source.consumer)
        let context = SinkContext(pipeline: pipeline.name, storeID: storeID, model: try startingModel(consumer: existing) ?? store.model)
        for index in states.indices {
            states[index].durable = try await openSink(index, context: context)
            try requireHistoryHeld(by: states[index])
            if let directory = states[index].deadLetterDirectory {
                states[index].deadLetters = try DeadLetterWriter(directory: directory, storeID: storeID, model: store.model)
            }
        }
        if existing == nil, pipeline.source.snapshot {
            try await runSnapshot()
        }
        let consumer = try existing ?? coordinator.registerHistoryConsumer(pipeline.source.consumer, startingAt: .oldest)
        committed = consumer.token.value
        readThrough = committed
        lastCheckpoint = now()
        opened = true
    }

    /// Checks that the store still holds the history a sink holds: its durable position is not
    /// past the store's newest token, and the store holds the chain hash the sink kept. A store
    /// put back from an older copy hands the sink's tokens out again to other transactions,
    /// which the sink would skip as delivered: `historyTampered` stops the pipeline instead.
    private func requireHistoryHeld(by state: SinkState) throws {
        let sink = "sink \(state.sink.name)"
        if let durable = state.durable { _ = try follower.head(after: durable.token, deliveredBy: sink) }
        if let point = state.sink.durableChainPoint { try follower.requireHistory(hash: point.hash, at: point.token, recordedBy: sink) }
    }

    /// Delivers a consistent snapshot of the rows (op `r`), then registers the consumer at its token.
    private func runSnapshot() async throws {
        var token: PersistentHistoryToken?
        var records: [StreamRecord] = []
        let time = now()
        try coordinator.enumerateSnapshot(entities: pipeline.source.filter.entities, begin: { token = $0 }) { object in
            let record = StreamRecord(snapshot: object, position: StreamPosition(token: token!.value, index: records.count, isSnapshot: true), timestamp: time)
            records.append(record)
        }
        guard let token else { return }
        var step = Step()
        let transformed = try records.compactMap { try transform($0) }
        try await deliver(transformed, step: &step)
        if let last = records.last {
            lastRead = last.position
            for index in states.indices { states[index].durable = try await checkpointSink(index, through: last.position) }
        }
        try coordinator.registerHistoryConsumer(pipeline.source.consumer, startingAt: .token(token))
    }

    private func transform(_ record: StreamRecord) throws -> StreamRecord? {
        try Self.transform(record, by: pipeline.transforms)
    }

    private static func transform(_ record: StreamRecord, by transforms: [RecordTransform]) throws -> StreamRecord? {
        if transforms.isEmpty { return record }
        var current: StreamRecord? = record
        for transform in transforms {
            guard let value = current else { return nil }
            current = try transform.apply(to: value)
        }
        return current
    }

    /// What one read of history gave.
    struct Read: Sendable {
        var records: [StreamRecord] = []
        /// Schema and capture gap records, each with the index in ``records`` it comes before.
        var markers: [(before: Int, marker: Marker)] = []
        /// Records read (before filters).
        var read = 0
        var newestRead: StreamPosition?
        /// Whether it read everything committed through `through`.
        var caughtUp = true
        /// When it stopped at the limit: the newest transaction it read all of (the next
        /// change belongs to a later one), so the consumer may be committed through it.
        var completeThrough: Int64?
        var through: PersistentHistoryToken
    }

    /// The next step's history, read while this step's records are delivered; kept with the
    /// place it starts from, and used only if the next step starts there.
    private struct Prefetch {
        let after: Int64
        let resumeAfter: StreamPosition?
        let task: Task<Read, any Error>
    }
    private var prefetch: Prefetch?

    /// ``readHistory(follower:pipeline:after:resumeAfter:)`` in a task of its own.
    private static func startReading(follower: HistoryFollower, pipeline: PipelineFile, after: Int64, resumeAfter: StreamPosition?) -> Task<Read, any Error> {
        Task { try readHistory(follower: follower, pipeline: pipeline, after: after, resumeAfter: resumeAfter) }
    }

    /// Reads the history after token `after` (skipping records at or before `resumeAfter`),
    /// at most `checkpoint.records` records, transformed.
    private static func readHistory(follower: HistoryFollower, pipeline: PipelineFile, after: Int64, resumeAfter: StreamPosition?) throws -> Read {
        let limit = pipeline.checkpoint.records
        var records: [StreamRecord] = []
        records.reserveCapacity(min(limit, 16_384))
        let resume = resumeAfter.flatMap { $0.isSnapshot ? nil : (token: $0.token, index: $0.index) }
        var markers: [(before: Int, marker: Marker)] = []
        let schema = { (event: SchemaChangeEvent) in markers.append((records.count, .schema(SchemaRecord(event, storeID: follower.storeID)))) }
        let gap = { (event: CaptureGapEvent) in markers.append((records.count, .gap(CaptureGapRecord(event, storeID: follower.storeID)))) }
        let step = try follower.readChanges(after: after, through: try follower.head(after: after), resumingAfter: resume, limit: limit, schema: schema, gaps: gap) { view in
            var record = try StreamRecord(view)
            record.chainHash = view.chainHash
            if pipeline.transforms.isEmpty {
                records.append(record)   // moved in, not copied through transform(_:by:)
            } else if let kept = try transform(record, by: pipeline.transforms) {
                records.append(kept)
            }
        }
        // Read whole through the head when caught up; else through the last transaction read
        // when the limit fell between transactions, or the one before the transaction it cut.
        let whole = step.caughtUp ? step.through.value : step.completeThrough ?? (step.newest?.token ?? after) - 1
        keepChainHashesOnTransactionEnds(&records, completeThrough: whole)
        return Read(records: records, markers: markers, read: step.count, newestRead: step.newest.map { StreamPosition(token: $0.token, index: $0.index) } ?? resumeAfter,
                    caughtUp: step.caughtUp, completeThrough: step.completeThrough, through: step.through)
    }

    /// Reads, transforms and delivers the next records (at most `checkpoint.records`), and
    /// checkpoints when due (records or seconds since the last one, or caught up). When more
    /// history waits, the next step's records are read while this step's are delivered.
    @discardableResult
    public func runOnce() async throws -> Step {
        try await openIfNeeded()
        var step = Step()
        try updateLag(force: false)
        var after = max(committed, readThrough)
        if let lastRead { after = max(after, lastRead.completeToken) }
        var read: Read
        let ahead = prefetch
        prefetch = nil
        if let ahead, ahead.after == after, ahead.resumeAfter == lastRead, let early = try? await ahead.task.value {
            read = early
            // Read while the last step was delivered: commits since then are not in it, so
            // it is caught up only if nothing was committed after what it read through.
            if read.caughtUp, try coordinator.currentPersistentHistoryToken().value > read.through.value {
                read.caughtUp = false
                read.completeThrough = read.through.value   // everything through it was read
            }
        } else {
            // No read ahead, one from elsewhere, or one that failed: read now.
            read = try Self.readHistory(follower: follower, pipeline: pipeline, after: after, resumeAfter: lastRead)
        }
        step.read = read.read
        step.caughtUp = read.caughtUp
        if !read.caughtUp, let newest = read.newestRead {
            // Where the next step will start once this one is delivered.
            let nextAfter = max(after, newest.completeToken, read.completeThrough ?? 0)
            prefetch = Prefetch(after: nextAfter, resumeAfter: newest,
                                task: Self.startReading(follower: follower, pipeline: pipeline, after: nextAfter, resumeAfter: newest))
        }
        do {
            try await deliverInOrder(read, step: &step)
        } catch is Interrupted {
            step.interrupted = true
            return step
        }
        lastRead = read.newestRead
        if step.caughtUp {
            readThrough = max(readThrough, read.through.value)
        } else if let complete = read.completeThrough {
            readThrough = max(readThrough, complete)   // delivered whole: the consumer may pass it
        }
        sinceCheckpoint += step.read
        let due = sinceCheckpoint >= pipeline.checkpoint.records || now().timeIntervalSince(lastCheckpoint) >= pipeline.checkpoint.seconds || step.caughtUp
        if due {
            step.checkpointed = try await checkpoint(completeThrough: step.caughtUp ? read.through.value : nil)
        }
        return step
    }

    /// Delivers `records` to every sink (those after its durable position), in its batch size, by its policy.
    func deliver(_ records: [StreamRecord], step: inout Step) async throws {
        guard !records.isEmpty else { return }
        for index in states.indices {
            // Records are in position order: those after the sink's durable position are a suffix.
            var pending = records
            if let durable = states[index].durable, let first = pending.first, first.position <= durable {
                pending = Array(pending.drop { $0.position <= durable })
            }
            var start = 0
            while start < pending.count {
                let end = min(pending.count, start + states[index].batchSize)
                let chunk = start == 0 && end == pending.count ? pending : Array(pending[start..<end])
                if try await deliver(chunk, to: index) {
                    step.delivered += chunk.count
                    states[index].delivered += chunk.count
                } else {
                    step.deadLettered += chunk.count
                    states[index].deadLettered += chunk.count
                }
                start += chunk.count
            }
        }
    }

    /// Delivers one batch: true when delivered, false when dead-lettered.
    private func deliver(_ chunk: [StreamRecord], to index: Int) async throws -> Bool {
        let state = states[index]
        var attempt = 0
        while true {
            do {
                let started = ContinuousClock.now
                try await state.sink.deliver(chunk)
                succeeded()
                events(.delivered(sink: state.sink.name, records: chunk.count))
                metrics.delivered(sink: index, records: chunk.count, transactions: Set(chunk.map(\.position.token)).count, duration: ContinuousClock.now - started)
                return true
            } catch {
                let failure = Self.tributaryError(error, sink: state.sink.name)
                attempt += 1
                let transient = failure.code != .sinkRejected
                let retries = pipeline.retry.maximumAttempts
                let exhausted = retries > 0 && attempt >= retries
                reportFailure(Failure(sink: state.sink.name, error: failure, attempt: attempt, step: .delivery, records: chunk.count))
                if failure.code == .pipelineStopped { throw failure }   // the sink says retrying cannot help
                if (transient || state.onError == .retry) && !exhausted {
                    try giveUpIfDue(state.sink.name, failure)
                    metrics.retried(sink: index)
                    try? updateLag()   // commits keep arriving while the sink is away: the lag shows it
                    if shouldStop() { throw Interrupted() }
                    try await sleep(retryBackoff.seconds(attempt: attempt, random: random()))
                    if shouldStop() { throw Interrupted() }
                    continue
                }
                if state.onError == .deadLetter, let letters = state.deadLetters {
                    try letters.write(chunk, sink: state.sink.name, error: failure)
                    events(.deadLettered(sink: state.sink.name, records: chunk.count, error: failure))
                    metrics.deadLettered(sink: index, records: chunk.count)
                    return false
                }
                throw TributaryError(.pipelineStopped, "sink \(state.sink.name) failed\(exhausted ? " after \(attempt) attempts" : ""): \(failure.message)",
                                     location: pipeline.path, hint: failure.hint ?? "fix the sink, then run the pipeline again: it resumes where it stopped")
            }
        }
    }

    /// A sink worked: the failure clock stops, and a recovery is reported after a failure.
    func succeeded() {
        failingSince = nil
        if failing {
            failing = false
            events(.recovered)
        }
    }

    /// The retry policy's backoff.
    var retryBackoff: Backoff { Backoff(initialSeconds: pipeline.retry.initial, maximumSeconds: pipeline.retry.maximum) }

    func reportFailure(_ failure: Failure) {
        failing = true
        events(.failed(failure))
    }

    private static func tributaryError(_ error: any Error, sink: String) -> TributaryError {
        if let error = error as? TributaryError { return error }
        return TributaryError.sinkUnavailable(sink, "\(error)")
    }

    /// Checkpoints now: every sink makes what it has durable, then the consumer is committed
    /// through `completeThrough` (or the last transaction wholly read), then history is pruned
    /// if the pipeline says so (at most every ten seconds). Returns whether anything moved.
    @discardableResult
    public func checkpoint(completeThrough: Int64? = nil) async throws -> Bool {
        try await openIfNeeded()
        var moved = false
        if let lastRead, lastRead != checkpointedRead {
            for index in states.indices {
                states[index].durable = try await checkpointSink(index, through: lastRead)
            }
            checkpointedRead = lastRead
            moved = true
        }
        var token = lastRead.map { $0.isSnapshot ? committed : $0.completeToken } ?? committed
        if let completeThrough { token = max(token, completeThrough) }
        token = max(token, readThrough)
        if token > committed {
            try follower.commit(through: token)
            committed = token
            moved = true
            metrics.checkpointed()
            try updateLag(force: completeThrough != nil)
        }
        sinceCheckpoint = 0
        lastCheckpoint = now()
        if let prune = pipeline.prune, moved, now().timeIntervalSince(lastPrune) >= 10, pruneAllowed() {
            try coordinator.deleteHistory(.deleteConsumedHistory(maximumAge: prune.maximumAge))
            lastPrune = now()
        }
        return moved
    }

    /// Sets the lag gauges from the consumer's position. Counting the lag reads every
    /// transaction after the consumer's token, so while the pipeline works through a backlog
    /// (`force` false) the gauges are set at most once a second of wall time, and less often
    /// when counting takes long (at most a twentieth of the time goes to it); a checkpoint that
    /// caught up, an attempt that will be retried and ``finish()`` always set them.
    private func updateLag(force: Bool = true) throws {
        let started = ContinuousClock.now
        if !force, let lagUpdated, started - lagUpdated.at < max(.seconds(1), lagUpdated.took * 20) { return }
        let consumer = try coordinator.historyConsumer(named: pipeline.source.consumer)
        metrics.lag(changes: try coordinator.historySize(after: consumer.token).changes, seconds: consumer.lagSeconds)
        lagUpdated = (started, ContinuousClock.now - started)
    }

    /// Opens a sink, retrying with backoff while its server is away (a pipeline started before
    /// its server waits for it, as one whose server goes away during a run does).
    private func openSink(_ index: Int, context: SinkContext) async throws -> StreamPosition? {
        let sink = states[index].sink
        var attempt = 0
        while true {
            do {
                let durable = try await sink.open(context)
                succeeded()
                return durable
            } catch let error as TributaryError where error.code == .sinkUnavailable {
                try giveUpIfDue(sink.name, error)
                attempt += 1
                reportFailure(Failure(sink: sink.name, error: error, attempt: attempt, step: .open))
                metrics.retried(sink: index)
                if shouldStop() || (pipeline.retry.maximumAttempts > 0 && attempt >= pipeline.retry.maximumAttempts) { throw error }
                try? updateLag()
                try await sleep(retryBackoff.seconds(attempt: attempt, random: random()))
            }
        }
    }

    private func checkpointSink(_ index: Int, through position: StreamPosition) async throws -> StreamPosition? {
        let sink = states[index].sink
        var attempt = 0
        while true {
            do {
                let durable = try await sink.checkpoint(through: position)
                guard let durable, durable >= position else {
                    throw TributaryError(.pipelineStopped, "sink \(sink.name) reports \(durable.map(\.description) ?? "nothing") durable, not \(position)",
                                         location: pipeline.path, hint: "the sink lost records; start it over")
                }
                succeeded()
                return durable
            } catch let error as TributaryError where error.code == .sinkUnavailable {
                try giveUpIfDue(sink.name, error)
                attempt += 1
                reportFailure(Failure(sink: sink.name, error: error, attempt: attempt, step: .checkpoint))
                if shouldStop() || (pipeline.retry.maximumAttempts > 0 && attempt >= pipeline.retry.maximumAttempts) { throw error }
                try? updateLag()
                try await sleep(retryBackoff.seconds(attempt: attempt, random: random()))
            }
        }
    }

    /// Prunes the history every consumer has committed, if the pipeline says so (`prune:`)
    /// and ``pruneAllowed`` agrees: what ``finish()`` does last. ``PipelineService`` calls it
    /// again once every pipeline of a run has finished, for what the others consumed after.
    public func pruneConsumedHistory() throws {
        guard let prune = pipeline.prune, pruneAllowed() else { return }
        try coordinator.deleteHistory(.deleteConsumedHistory(maximumAge: prune.maximumAge))
        lastPrune = now()
    }

    /// Checkpoints what was delivered, prunes consumed history if the pipeline says so, and closes the sinks.
    public func finish() async throws {
        // A read ahead runs to its end (it does not look for cancellation): wait it out.
        if let ahead = prefetch { _ = try? await ahead.task.value }
        prefetch = nil
        guard opened else { return }
        try await checkpoint()
        try? updateLag()   // the gauges only: a failure here must not keep the sinks open
        try pruneConsumedHistory()
        for state in states { try await state.sink.close() }
        opened = false
    }
}
