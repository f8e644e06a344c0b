import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

extension NATSSink {
    /// Publishes a schema record in its place (after what was delivered before it), encoded
    /// in the sink's format, marked with `Tributary-Schema: 1`, de-duplicated by its event ID.
    /// The first one a sink is given before any change is the stream's baseline model.
    ///
    /// ```swift
    /// try await sink.deliverSchema(SchemaRecord(event, storeID: storeID))
    /// ```
    public func deliverSchema(_ record: SchemaRecord) async throws {
        guard context != nil else { preconditionFailure("open the sink before delivering") }
        let connection = try deliveryConnection()
        needsBaseline = false
        if let lastPublished, record.position <= lastPublished { return }
        try publish(schemaMessage(record, id: record.eventID), at: record.position, on: connection)
    }

    /// Publishes the model the stream starts with (the source's model, `fromVersion` nil) just
    /// before `first`, the first change this pipeline publishes to the stream: a replica made
    /// from the stream takes its model from it.
    func publishBaseline(before first: StreamRecord, on connection: NATSConnection) throws {
        guard let context else { return }
        needsBaseline = false
        let position = StreamPosition(token: max(0, first.position.token - 1), index: 0)
        let model = context.model
        let change = SchemaChange(fromVersion: nil, toVersion: model.versionHash, changes: [], model: model, isDetected: false)
        let record = SchemaRecord(position: position, storeID: context.storeID, timestamp: first.timestamp, change: change)
        // Its own event ID: a schema transaction at that token, if any, is another record.
        try publish(schemaMessage(record, id: "\(storeText)-\(position.token)-b0"), at: position, on: connection)
    }

    private func schemaMessage(_ record: SchemaRecord, id: String) -> NATSMessage {
        var line: [UInt8] = []
        encoder.encodeSchema(record, into: &line)
        if line.last == 0x0A { line.removeLast() }
        var headers = [
            Self.messageIDHeader: id, Self.positionHeader: record.position.description, Self.storeHeader: storeText,
            Self.pipelineHeader: context?.pipeline ?? name, Self.formatHeader: settings.format.rawValue, Self.schemaHeader: "1",
        ]
        if let hash = record.chainHash { headers[Self.chainHeader] = NATSChainPoint.headerValue(token: record.position.token, hash: hash) }
        return NATSMessage(subject: settings.schemaSubject(store: record.storeID), data: line, headers: headers)
    }
}

extension NATSSinkSettings {
    /// The subject of a schema record: the template with `_schema` for `{entity}` (no entity
    /// name starts with `_`), `s` for `{op}` and the store for `{store}`.
    ///
    /// ```swift
    /// NATSSinkSettings(url: "nats://localhost:4222", subject: "cdc.{store}.{entity}.{op}").schemaSubject(store: id)   // "cdc.<id>._schema.s"
    /// ```
    public func schemaSubject(store: UUID) -> String {
        subject.replacingOccurrences(of: "{entity}", with: "_schema").replacingOccurrences(of: "{op}", with: "s")
            .replacingOccurrences(of: "{store}", with: store.lowercasedString)
    }
}
