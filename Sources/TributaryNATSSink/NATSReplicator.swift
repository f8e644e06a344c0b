import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// Keeps a replica store up to date from a JetStream stream written by a ``NATSSink``,
/// through a durable pull consumer: each fetched batch is applied (batch requests keeping the
/// source's primary keys), the stream sequence and record positions reached are saved beside
/// the replica (`STORE.nats-position`), and only then is the batch acknowledged.
///
/// The replica, not the consumer, is the truth about what was applied: on start the consumer
/// is made again to deliver from the message after the saved sequence, because messages a
/// killed replica had fetched but not acknowledged would otherwise be redelivered after newer
/// ones. So a replica killed at any point and started again loses nothing, and what it
/// repeats (a batch applied but not yet saved) changes nothing. Since the consumer is made
/// again, a stream with `interest` retention may drop messages no other consumer wants while
/// the replica starts: replicate from streams with `limits` retention (the sink's default).
///
/// ```swift
/// let replicator = try NATSReplicator(url: "nats://127.0.0.1:4222", stream: "TRIBUTARY", target: URL(fileURLWithPath: "replica.sqlite"), model: model)
/// let summary = try replicator.run(follow: false, stop: StopSignal())
/// ```
public final class NATSReplicator {
    /// What a replication did.
    public struct Summary: Sendable, Equatable {
        /// Records applied.
        public var records = 0
        /// Records skipped as already applied.
        public var skipped = 0
        /// The last position applied.
        public var last: StreamPosition?
    }

    /// The stream.
    public let stream: String
    /// The durable consumer's name.
    public let consumer: String
    /// The replica store.
    public let target: PersistentStoreCoordinator
    /// Messages per fetch (and the most left unacknowledged).
    public let batchSize: Int
    private let connection: NATSConnection
    private let subscription: NATSPullSubscription
    /// The replica's model (a schema message migrates it).
    private var model: ManagedObjectModel
    private let positionURL: URL
    private var applied: [String: StreamPosition]
    private var appliedSequence: UInt64
    /// The source store this replica applies (its ID in lowercase): the one chosen, else the
    /// first one seen, kept in the positions file. A replica is a copy of one store: messages
    /// of other stores are skipped when a store was chosen, and refused otherwise.
    public private(set) var sourceStore: String?
    private let storeChosen: Bool

    /// A replicator of `stream` on `url` into the store at `target` (created with `model` if
    /// missing; an existing store keeps its own model when `model` is nil), through durable
    /// consumer `consumer` (default: named after the target's path).
    ///
    /// ```swift
    /// let replicator = try NATSReplicator(url: "nats://127.0.0.1:4222", stream: "TRIBUTARY", target: URL(fileURLWithPath: "replica.sqlite"), model: nil)
    /// ```
    public init(url: String, stream: String, target targetFile: URL, model: ManagedObjectModel?, consumer: String? = nil, batchSize: Int = 500,
                ackWait: TimeInterval = 2, sourceStore: UUID? = nil) throws {
        self.stream = stream
        self.batchSize = max(1, batchSize)
        let targetURL = targetFile.standardizedFileURL
        self.consumer = consumer ?? Self.consumerName(for: targetURL)
        // Connect first, so that a wrong URL or stream creates no replica.
        connection = try NATSConnection(url: url, sink: "replay")
        guard let info = try connection.streamInfo(stream) else {
            throw TributaryError(.invalidInput, "there is no stream \(stream)", location: url, hint: "name the stream a nats sink publishes to, such as nats://HOST:PORT/TRIBUTARY")
        }
        guard info.config.subjects.count == 1, let subject = info.config.subjects.first else {
            throw TributaryError(.invalidInput, "stream \(stream) has \(info.config.subjects.count) subjects (\(info.config.subjects.joined(separator: ", ")))", location: url,
                                 hint: "replay from a stream with one subject filter, as a nats sink creates it")
        }
        let coordinator: PersistentStoreCoordinator
        if let model {
            coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        } else if FileManager.default.fileExists(atPath: targetURL.path) {
            coordinator = PersistentStoreCoordinator()
        } else {
            let first = try Self.startingModel(connection, stream: stream, store: sourceStore?.uuidString.lowercased())
            guard let first else {
                throw TributaryError(.invalidInput, "the replica does not exist yet, and the stream does not start with the source's model (a schema message), so its model is unknown",
                                     location: targetURL.path, hint: "give the source's model with --model FILE (the YAML the source store was made with)")
            }
            coordinator = PersistentStoreCoordinator(managedObjectModel: first)
        }
        try coordinator.addPersistentStore(with: StreamReplayer.targetDescription(targetURL))
        target = coordinator
        guard let store = coordinator.persistentStores.first else { throw TributaryError(.noStore, "the replica has no store", location: targetURL.path) }
        self.model = store.model
        positionURL = targetURL.deletingLastPathComponent().appendingPathComponent(targetURL.lastPathComponent + ".nats-position")
        (appliedSequence, applied) = try Self.loadPositions(positionURL)
        let chosen = sourceStore?.uuidString.lowercased()
        storeChosen = chosen != nil
        if let chosen, let other = applied.keys.first(where: { $0 != chosen }) {
            throw TributaryError(.invalidInput, "the replica holds changes of store \(other), not \(chosen)", location: targetURL.path,
                                 hint: "replicate store \(chosen) into a new replica")
        }
        self.sourceStore = chosen ?? applied.keys.sorted().first
        try connection.deleteConsumer(stream: stream, consumer: self.consumer)
        subscription = try connection.pullSubscribe(stream: stream, subject: subject, durable: self.consumer, maximumAckPending: self.batchSize, ackWait: ackWait,
                                                    startSequence: appliedSequence + 1)
    }

    /// The default consumer name: `replica-` and the target's file name, with a hash of its
    /// full path so two replicas of the same name elsewhere do not share a consumer.
    ///
    /// ```swift
    /// NATSReplicator.consumerName(for: URL(fileURLWithPath: "/data/copy.sqlite"))   // "replica-copy_sqlite-1a2b3c4d"
    /// ```
    public static func consumerName(for url: URL) -> String {
        var hash: UInt32 = 0x811c9dc5
        for byte in url.standardizedFileURL.path.utf8 {
            hash ^= UInt32(byte)
            hash = hash &* 0x01000193
        }
        let base = String(url.lastPathComponent.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" })
        return "replica-" + base + "-" + String(hash, radix: 16)
    }

    /// Fetches one batch (waiting at most `timeout` seconds for it), applies it, saves the
    /// positions and acknowledges it; returns the messages fetched (0 when none came).
    ///
    /// ```swift
    /// var summary = NATSReplicator.Summary()
    /// while try replicator.replicateOnce(summary: &summary) > 0 {}
    /// ```
    @discardableResult
    public func replicateOnce(timeout: TimeInterval = 1, summary: inout Summary) throws -> Int {
        let messages = try subscription.fetch(batch: batchSize, timeout: timeout)
        guard !messages.isEmpty else { return 0 }
        var applier = StreamRecordApplier(coordinator: target, model: model, batchSize: batchSize)
        var reached = applied
        var sequence = appliedSequence
        var handled = messages.count
        var refusal: TributaryError?
        for (offset, received) in messages.enumerated() {
            let message = received.message
            if message.sequence <= sequence {
                summary.skipped += 1
                continue
            }
            guard let store = message.headers[NATSSink.storeHeader], let text = message.headers[NATSSink.positionHeader],
                  let position = try? StreamPosition(parsing: text) else {
                throw TributaryError(.invalidInput, "message \(message.sequence) on \(message.subject) has no \(NATSSink.positionHeader) or \(NATSSink.storeHeader) header",
                                     location: "stream \(stream)", hint: "replay a stream that only a tributary nats sink publishes to")
            }
            if let source = sourceStore, store.lowercased() != source, !storeChosen {
                // What came before it is applied and acknowledged; it and what follows are not.
                refusal = TributaryError(.invalidInput, "message \(message.sequence) is a change of store \(store), and this replica copies store \(source)", location: "stream \(stream)",
                                         hint: "a replica copies one store: replay with --store \(source) into this one, and with --store \(store) into another")
                handled = offset
                break
            }
            sequence = message.sequence
            if let source = sourceStore, store.lowercased() != source {
                summary.skipped += 1
                continue
            }
            if sourceStore == nil { sourceStore = store.lowercased() }
            if let done = reached[store], position <= done {
                summary.skipped += 1
                continue
            }
            let format = try StreamFormat(parsing: message.headers[NATSSink.formatHeader] ?? StreamFormat.native.rawValue)
            try applier.add(line: message.data[...], format: format, position: position)
            reached[store] = position
            summary.records += 1
            summary.last = position
        }
        try applier.flush()
        model = applier.model
        if sequence != appliedSequence {
            try Self.savePositions(sequence, reached, to: positionURL)
            applied = reached
            appliedSequence = sequence
        }
        let done = messages.prefix(handled)
        for received in done.dropLast() { try received.acknowledge(wait: false) }
        try done.last?.acknowledge()
        if let refusal { throw refusal }
        return messages.count
    }

    /// Replicates until the consumer has nothing left (or, with `follow`, until `stop` is
    /// requested), calling `progress` after each batch.
    ///
    /// ```swift
    /// let summary = try replicator.run(follow: true, stop: stop) { print($0.records) }
    /// ```
    public func run(follow: Bool, stop: StopSignal, progress: (Summary) -> Void = { _ in }) throws -> Summary {
        var summary = Summary()
        while !stop.isRequested {
            let fetched = try replicateOnce(timeout: 1, summary: &summary)
            if fetched > 0 {
                progress(summary)
                continue
            }
            if !follow {
                let state = try subscription.state()
                if state.pending == 0 && state.ackPending == 0 { break }
            }
        }
        return summary
    }

    /// The positions file: `sequence N` (the last stream sequence applied), then one
    /// `STORE-ID POSITION` line per source store.
    private static func loadPositions(_ url: URL) throws -> (UInt64, [String: StreamPosition]) {
        guard let data = FileManager.default.contents(atPath: url.path) else { return (0, [:]) }
        var positions: [String: StreamPosition] = [:]
        var sequence: UInt64 = 0
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ")
            if parts.count == 2, parts[0] == "sequence", let value = UInt64(parts[1]) {
                sequence = value
                continue
            }
            guard parts.count == 2, let position = try? StreamPosition(parsing: String(parts[1])) else {
                throw TributaryError(.invalidInput, "the replica's position file has a bad line '\(line)'", location: url.path,
                                     hint: "delete the file and the replica, and replay again from the start")
            }
            positions[String(parts[0])] = position
        }
        return (sequence, positions)
    }

    private static func savePositions(_ sequence: UInt64, _ positions: [String: StreamPosition], to url: URL) throws {
        let text = "sequence \(sequence)\n" + positions.keys.sorted().map { "\($0) \(positions[$0]!)\n" }.joined()
        try DurableFile.write(Data(text.utf8), to: url)
    }
}
