import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// Publishes each record to a JetStream stream, on a subject made from the record
/// (`tributary.{entity}` by default), with `Nats-Msg-Id` set to its event ID so that
/// JetStream drops a redelivered record within the stream's duplicate window. Publishes are
/// asynchronous, at most `max_pending` in flight; ``checkpoint(through:)`` waits for every
/// acknowledgment (a `duplicate` acknowledgment is success) and publishes again, in order and
/// one at a time, whatever was not acknowledged.
///
/// Each message also carries `Tributary-Position`, `Tributary-Store`, `Tributary-Pipeline` and
/// `Tributary-Format`. On open the sink reads the newest messages of the stream back and
/// returns the highest position it published there as its durable position, so a restart
/// after an outage longer than the duplicate window still publishes nothing twice. The
/// stream is created when missing (subjects, retention, replicas, duplicate window); an
/// existing stream gets the sink's subject and duplicate window added if they differ.
///
/// ```swift
/// let sink = NATSSink(name: "nats", settings: NATSSinkSettings(url: "nats://127.0.0.1:4222"))
/// ```
public final class NATSSink: Sink {
    public let name: String
    /// The settings.
    public let settings: NATSSinkSettings
    private var connection: NATSConnection?
    private var encoder: any RecordEncoder
    private var context: SinkContext?
    /// Records published since the last checkpoint, kept to publish again if unacknowledged.
    private var unconfirmed: [NATSMessage] = []
    /// The newest position published (or found in the stream on open).
    private var lastPublished: StreamPosition?
    /// Acknowledgment failures counted when the last checkpoint ended.
    private var failuresSeen = 0
    /// Whether some of `unconfirmed` may be missing from the stream.
    private var needsRepublish = false
    /// Subjects by entity and operation, made once.
    private var subjects: [String: [StreamOperation: String]] = [:]
    /// The source store's ID as the header holds it.
    private var storeText = ""

    /// The header carrying the record's position.
    public static let positionHeader = "Tributary-Position"
    /// The header carrying the source store's ID.
    public static let storeHeader = "Tributary-Store"
    /// The header carrying the pipeline's name.
    public static let pipelineHeader = "Tributary-Pipeline"
    /// The header carrying the record format.
    public static let formatHeader = "Tributary-Format"
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
        storeText = context.storeID.lowercasedString
        let connection = try connect()
        try ensureStream(connection)
        lastPublished = try newestPublished(connection, context: context)
        return lastPublished
    }

    private func connect() throws -> NATSConnection {
        if let connection { return connection }
        let made = try NATSConnection(url: settings.url, sink: name, timeout: settings.timeout, maximumPending: settings.maximumPending)
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
    /// A message can land after newer ones only when it is published again after a failed
    /// acknowledgment, which happens within two in-flight windows of the stream's end; the
    /// scan reads that far back past the newest record of ours (and stops at 10,000 messages).
    private func newestPublished(_ connection: NATSConnection, context: SinkContext) throws -> StreamPosition? {
        guard let info = try connection.streamInfo(settings.stream), info.lastSequence > 0 else { return nil }
        let store = context.storeID.lowercasedString
        let window = 2 * settings.maximumPending + 1
        var newest: StreamPosition?
        var ours = 0
        var sequence = info.lastSequence
        var read = 0
        while sequence >= max(1, info.firstSequence), ours < window, read < 10_000 {
            read += 1
            if let message = try connection.message(stream: settings.stream, sequence: sequence),
               message.headers[Self.storeHeader] == store, message.headers[Self.pipelineHeader] == context.pipeline,
               let text = message.headers[Self.positionHeader], let position = try? StreamPosition(parsing: text) {
                ours += 1
                if newest.map({ position > $0 }) ?? true { newest = position }
            }
            sequence -= 1
        }
        return newest
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let context else { preconditionFailure("open the sink before delivering") }
        let connection = try connect()
        if needsRepublish { try republish(connection) }
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
            let message = NATSMessage(subject: subject, data: line, headers: [
                Self.messageIDHeader: record.eventID, Self.positionHeader: record.position.description, Self.storeHeader: storeText,
                Self.pipelineHeader: context.pipeline, Self.formatHeader: settings.format.rawValue,
            ])
            guard connection.isConnected else {
                throw TributaryError.sinkUnavailable(name, "the connection to \(settings.url) is down", hint: "the sink reconnects when the NATS server returns")
            }
            unconfirmed.append(message)
            lastPublished = record.position
            do {
                try connection.publishAsync(message)
            } catch {
                needsRepublish = true
                throw error
            }
        }
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        let connection = try connect()
        if !needsRepublish, !unconfirmed.isEmpty {
            let complete = connection.waitForAcknowledgments()
            if !complete || connection.acknowledgments.failed > failuresSeen { needsRepublish = true }
        }
        if needsRepublish { try republish(connection) }
        unconfirmed.removeAll(keepingCapacity: true)
        return max(position, lastPublished ?? position)
    }

    /// Publishes every unconfirmed message again, in order, waiting for each acknowledgment
    /// (a duplicate is one JetStream already holds).
    private func republish(_ connection: NATSConnection) throws {
        connection.abandonPending()
        failuresSeen = connection.acknowledgments.failed
        for message in unconfirmed { try connection.publish(message) }
        needsRepublish = false
        failuresSeen = connection.acknowledgments.failed
        unconfirmed.removeAll(keepingCapacity: true)
    }

    public func close() async throws {
        if let connection, !unconfirmed.isEmpty { _ = connection.waitForAcknowledgments() }
        connection = nil
        unconfirmed.removeAll()
    }
}
