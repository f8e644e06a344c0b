import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// Publishes each record to a JetStream stream, on a subject made from the record
/// (`tributary.{entity}` by default), with `Nats-Msg-Id` set to its event ID so that
/// JetStream drops a redelivered record within the stream's duplicate window. Publishes are
/// asynchronous, at most `max_pending` in flight; ``checkpoint(through:)`` waits for every
/// acknowledgment (a `duplicate` acknowledgment is success).
///
/// The stream holds the records in position order, whatever happens to the server. One
/// connection carries the publishes, in order, and the server stores what it receives in
/// order, so what a lost connection leaves in the stream is a prefix of what was sent on it.
/// The connection does not reconnect by itself (a reconnected one would carry newer records
/// while older ones sent on the dead one are missing); when it breaks, or an acknowledgment
/// fails or does not come, the sink publishes nothing new until it has read back which
/// unacknowledged records the stream holds and published the others again, in order and one
/// at a time, on a new connection. It stops with an error rather than publish after a gap
/// when the stream no longer holds records it acknowledged (a server that lost its tail: see
/// README's NATS section on `sync_interval`).
///
/// Each message also carries `Tributary-Position`, `Tributary-Store`, `Tributary-Pipeline` and
/// `Tributary-Format`; the message of a transaction's last record carries `Tributary-Chain`
/// too (`TOKEN:HASH`, the transaction's chain hash in hex: see `NATSChainPoint`), which
/// `tributary audit verify STORE --against nats://HOST:PORT/STREAM` checks the store against. On open the sink reads the newest messages of the stream back and
/// returns the highest position it published there as its durable position, so a restart
/// after an outage longer than the duplicate window still publishes nothing twice. The
/// stream is created when missing (subjects, retention, replicas, duplicate window); an
/// existing stream gets the sink's subject and duplicate window added if they differ.
///
/// Schema records (changes of the source's model) are messages too, in their place, marked
/// with `Tributary-Schema: 1` on the subject made with `_schema` for `{entity}` and `s` for
/// `{op}`; a pipeline's first message in a stream is one (the model it starts with, from
/// ``deliverSchema(_:)`` or else the source's model), so a replica needs no model given.
///
/// ```swift
/// let sink = NATSSink(name: "nats", settings: NATSSinkSettings(url: "nats://127.0.0.1:4222"))
/// ```
public final class NATSSink: Sink {
    public let name: String
    /// The settings.
    public let settings: NATSSinkSettings
    private var connection: NATSConnection?
    var encoder: any RecordEncoder
    private(set) var context: SinkContext?
    /// Whether the stream holds nothing of this pipeline yet: it must start with the model
    /// (a schema record) before the first change, so that a replica needs no `--model`.
    var needsBaseline = false
    /// Records published since the last checkpoint, oldest first, kept to publish again if unacknowledged.
    private var unconfirmed: [(position: StreamPosition, message: NATSMessage)] = []
    /// The newest position published (or found in the stream on open).
    private(set) var lastPublished: StreamPosition?
    /// The newest chain point among the stream's newest messages, as ``open(_:)`` read them.
    public private(set) var durableChainPoint: StreamManifest.ChainPoint?
    /// The newest position the stream acknowledged (at the last checkpoint, or found on open).
    private var acknowledged: StreamPosition?
    /// Acknowledgment failures counted when the last checkpoint ended.
    private var failuresSeen = 0
    /// Whether some of `unconfirmed` may be missing from the stream: nothing newer is
    /// published until ``resynchronize(_:)`` has put them there.
    private var needsResync = false
    /// Subjects by entity and operation, made once.
    private var subjects: [String: [StreamOperation: String]] = [:]
    /// The source store's ID as the header holds it.
    private(set) var storeText = ""

    /// The header carrying the record's position.
    public static let positionHeader = "Tributary-Position"
    /// The header carrying the source store's ID.
    public static let storeHeader = "Tributary-Store"
    /// The header carrying the pipeline's name.
    public static let pipelineHeader = "Tributary-Pipeline"
    /// The header carrying the record format.
    public static let formatHeader = "Tributary-Format"
    /// The header carrying `TOKEN:HASH`, the chain hash (hex) of the record's transaction, on
    /// the message of the transaction's last record only (`NATSChainPoint`).
    public static let chainHeader = "Tributary-Chain"
    /// The header marking a schema record (a change of the source's model): `1`.
    public static let schemaHeader = "Tributary-Schema"
    /// JetStream's de-duplication header.
    public static let messageIDHeader = "Nats-Msg-Id"

    /// A sink with `settings`.
    public init(name: String, settings: NATSSinkSettings) {
        self.name = name
        self.settings = settings
        encoder = settings.format.makeEncoder()
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        self.context = context
        encoder.use(context.model)
        storeText = context.storeID.lowercasedString
        let connection = try connect()
        try ensureStream(connection)
        lastPublished = try newestPublished(connection, context: context)
        acknowledged = lastPublished
        needsBaseline = lastPublished == nil
        return lastPublished
    }

    /// The connection; a new one when there is none or the last one broke (it stays closed:
    /// see the type's notes), after which the stream is read back (``resynchronize(_:)``)
    /// before anything newer is published.
    private func connect() throws -> NATSConnection {
        if let connection {
            if connection.isConnected { return connection }
            connection.abandonPending()
            self.connection = nil
            if !unconfirmed.isEmpty || acknowledged != nil { needsResync = true }
        }
        let made = try NATSConnection(url: settings.url, sink: name, timeout: settings.timeout, maximumPending: settings.maximumPending, reconnects: false)
        connection = made
        failuresSeen = 0
        return made
    }

    /// Creates the stream, or adds the sink's subject and duplicate window to it.
    private func ensureStream(_ connection: NATSConnection) throws {
        let wanted = NATSStreamConfig(name: settings.stream, subjects: [settings.streamSubject], retention: settings.retention, replicas: settings.replicas,
                                      duplicateWindow: settings.duplicateWindow)
        guard let info = try connection.streamInfo(settings.stream) else {
            try connection.addStream(wanted)
            return
        }
        var config = info.config
        guard config.retention == settings.retention else {
            throw TributaryError(.invalidPipeline, "stream \(settings.stream) has retention \(config.retention.rawValue), not \(settings.retention.rawValue)",
                                 location: "sink \(name)", hint: "set retention: \(config.retention.rawValue), or use another stream: JetStream cannot change a stream's retention")
        }
        var changed = false
        if !config.subjects.contains(settings.streamSubject) {
            config.subjects.append(settings.streamSubject)
            changed = true
        }
        if abs(config.duplicateWindow - settings.duplicateWindow) > 0.000_5 {
            config.duplicateWindow = settings.duplicateWindow
            changed = true
        }
        if config.replicas != settings.replicas {
            config.replicas = settings.replicas
            changed = true
        }
        if changed { try connection.updateStream(config) }
    }

    /// The highest position of this pipeline's records among the stream's newest messages.
    /// The sink keeps them in order, but a stream written by an earlier version may hold a
    /// record after newer ones (published again after a failed acknowledgment, within two
    /// in-flight windows of the end); the scan reads that far back past the newest record of
    /// ours (and stops at 10,000 messages).
    /// The newest chain point among those messages is kept as ``durableChainPoint``.
    private func newestPublished(_ connection: NATSConnection, context: SinkContext) throws -> StreamPosition? {
        let window = 2 * settings.maximumPending + 1
        var newest: StreamPosition?
        var chain: NATSChainPoint?
        var ours = 0
        try Self.scanBack(connection, stream: settings.stream, reading: 10_000) { message in
            guard message.headers[Self.pipelineHeader] == context.pipeline, let text = message.headers[Self.positionHeader],
                  let position = try? StreamPosition(parsing: text), message.headers[Self.storeHeader] == storeText else { return true }
            ours += 1
            if newest.map({ position > $0 }) ?? true { newest = position }
            if let point = NATSChainPoint(message, store: storeText), chain.map({ point.token > $0.token }) ?? true { chain = point }
            return ours < window
        }
        durableChainPoint = chain.map { StreamManifest.ChainPoint(token: $0.token, hash: $0.hash) }
        return newest
    }

    /// Calls `body` with the position of each of this pipeline's records in the stream, newest
    /// first, until it returns false or `limit` messages were read; returns true when the scan
    /// reached the stream's first message.
    @discardableResult
    private func scanBack(_ connection: NATSConnection, reading limit: Int, _ body: (StreamPosition) -> Bool) throws -> Bool {
        guard let context else { return true }
        return try Self.scanBack(connection, stream: settings.stream, reading: limit) { message in
            guard message.headers[Self.storeHeader] == storeText, message.headers[Self.pipelineHeader] == context.pipeline,
                  let text = message.headers[Self.positionHeader], let position = try? StreamPosition(parsing: text) else { return true }
            return body(position)
        }
    }

    /// Calls `body` with each message of `stream`, newest first, until it returns false or
    /// `limit` messages were read; returns true when the scan reached the stream's first
    /// message (or the stream is empty or missing).
    @discardableResult
    package static func scanBack(_ connection: NATSConnection, stream: String, reading limit: Int, _ body: (NATSMessage) throws -> Bool) throws -> Bool {
        guard let info = try connection.streamInfo(stream), info.lastSequence > 0 else { return true }
        var sequence = info.lastSequence
        var read = 0
        while sequence >= max(1, info.firstSequence) {
            guard read < limit else { return false }
            read += 1
            if let message = try connection.message(stream: stream, sequence: sequence), try !body(message) { return false }
            sequence -= 1
        }
        return true
    }

    /// Makes the stream hold every unconfirmed record before anything newer is published:
    /// reads back which of them it holds (a prefix, since one connection carried them in
    /// order) and publishes the others again, in order, each waiting for its acknowledgment.
    /// Reading the stream rather than counting on its duplicate window keeps an outage longer
    /// than the window from storing a record twice. Throws `pipelineStopped` when the stream
    /// no longer holds the newest record it acknowledged: publishing after it would leave a gap.
    private func resynchronize(_ connection: NATSConnection) throws {
        connection.abandonPending()
        failuresSeen = connection.acknowledgments.failed
        let first = unconfirmed.first?.position
        var held = Set<StreamPosition>()
        var older: StreamPosition?
        var olderSeen = 0
        let window = 2 * settings.maximumPending + 1
        let reachedStart = try scanBack(connection, reading: 100_000) { position in
            if let first, position >= first {
                held.insert(position)
                return true
            }
            let newest = max(older ?? position, position)
            older = newest
            olderSeen += 1
            // The acknowledged record is normally the first older one; a stream written by an
            // earlier version may hold it up to two in-flight windows further back.
            return acknowledged.map { newest < $0 } == true && olderSeen < window
        }
        if let acknowledged, older.map({ $0 < acknowledged }) ?? reachedStart {
            throw TributaryError(.pipelineStopped, "stream \(settings.stream) no longer holds position \(acknowledged), which it acknowledged (its newest record of "
                                 + "pipeline \(context?.pipeline ?? name) before that is \(older.map(\.description) ?? "none")): the server lost messages, or the stream was purged",
                                 location: "sink \(name)",
                                 hint: "give the server durable storage (JetStream sync_interval: always, or replicas); to publish the lost records again, move the pipeline's consumer back "
                                     + "(tributary consumers STORE move CONSUMER --to TOKEN) and run it again")
        }
        for (position, message) in unconfirmed where !held.contains(position) { try connection.publish(message) }
        if let last = unconfirmed.last?.position { acknowledged = last }
        needsResync = false
        failuresSeen = connection.acknowledgments.failed
        unconfirmed.removeAll(keepingCapacity: true)
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let context else { preconditionFailure("open the sink before delivering") }
        let connection = try deliveryConnection()
        if needsBaseline, let first = records.first { try publishBaseline(before: first, on: connection) }
        var line: [UInt8] = []
        for record in records {
            if let lastPublished, record.position <= lastPublished { continue }
            line.removeAll(keepingCapacity: true)
            encoder.encode(record, into: &line)
            if line.last == 0x0A { line.removeLast() }
            let subject: String
            if let known = subjects[record.entityName]?[record.operation] {
                subject = known
            } else {
                subject = settings.subject(for: record)
                subjects[record.entityName, default: [:]][record.operation] = subject
            }
            var headers = [
                Self.messageIDHeader: record.eventID, Self.positionHeader: record.position.description, Self.storeHeader: storeText,
                Self.pipelineHeader: context.pipeline, Self.formatHeader: settings.format.rawValue,
            ]
            if let hash = record.chainHash { headers[Self.chainHeader] = NATSChainPoint.headerValue(token: record.position.token, hash: hash) }
            try publish(NATSMessage(subject: subject, data: line, headers: headers), at: record.position, on: connection)
        }
    }

    /// Publishes `message`, the record at `position`, asynchronously, keeping it until acknowledged.
    func publish(_ message: NATSMessage, at position: StreamPosition, on connection: NATSConnection) throws {
        guard connection.isConnected else {
            throw TributaryError.sinkUnavailable(name, "the connection to \(settings.url) is down", hint: "the sink reconnects when the NATS server returns")
        }
        unconfirmed.append((position, message))
        lastPublished = position
        do {
            try connection.publishAsync(message)
        } catch {
            needsResync = true
            throw error
        }
    }

    /// The connection, resynchronized (see ``resynchronize(_:)``) when it must be, for a delivery.
    func deliveryConnection() throws -> NATSConnection {
        let connection = try connect()
        if needsResync { try resynchronize(connection) }
        return connection
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        var connection = try connect()
        if !needsResync, !unconfirmed.isEmpty {
            let complete = connection.waitForAcknowledgments()
            if !complete || connection.acknowledgments.failed > failuresSeen { needsResync = true }
            connection = try connect()   // a new one if it broke while the acknowledgments were awaited
        }
        if needsResync { try resynchronize(connection) }
        unconfirmed.removeAll(keepingCapacity: true)
        acknowledged = lastPublished
        return max(position, lastPublished ?? position)
    }

    public func close() async throws {
        if let connection {
            if !unconfirmed.isEmpty { _ = connection.waitForAcknowledgments() }
            connection.abandonPending()
        }
        connection = nil
        unconfirmed.removeAll()
    }
}
