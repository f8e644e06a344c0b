import Foundation
import Tributary
import TributaryStreams

extension NATSReplicator {
    /// The model a new replica is made with: that of the first message of `store` (of the
    /// first store seen when nil) in `stream`, when it is a schema message, as a ``NATSSink``
    /// publishes before a pipeline's first change; nil when the stream starts otherwise (it
    /// was published by an older Tributary, or its first messages were removed).
    ///
    /// ```swift
    /// let model = try NATSReplicator.startingModel(connection, stream: "TRIBUTARY", store: nil)
    /// ```
    static func startingModel(_ connection: NATSConnection, stream: String, store: String?) throws -> ManagedObjectModel? {
        guard let info = try connection.streamInfo(stream), info.lastSequence > 0 else { return nil }
        var sequence = max(1, info.firstSequence)
        while sequence <= info.lastSequence {
            defer { sequence += 1 }
            guard let message = try connection.message(stream: stream, sequence: sequence), let from = message.headers[NATSSink.storeHeader] else { continue }
            if let store, from.lowercased() != store { continue }
            guard message.headers[NATSSink.schemaHeader] == "1" else { return nil }
            let format = try StreamFormat(parsing: message.headers[NATSSink.formatHeader] ?? StreamFormat.native.rawValue)
            return try SchemaRecord.read(message.data[...], format: format)?.change.model
        }
        return nil
    }
}
