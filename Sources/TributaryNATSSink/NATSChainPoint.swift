import Foundation
import Tributary

/// A chain hash a ``NATSSink`` published: the `Tributary-Chain` header (``NATSSink/chainHeader``)
/// of the message carrying a transaction's last record, `TOKEN:HASH` (the transaction's token
/// and its chain hash in lowercase hex). Once that message is in the stream, every record of
/// the transaction is, so the hash vouches for the store's history through the token: `tributary
/// audit verify STORE --against nats://HOST:PORT/STREAM` reads the newest one back and checks
/// that the store still holds it.
///
/// ```swift
/// let point = try NATSChainPoint.newest(url: "nats://127.0.0.1:4222", stream: "TRIBUTARY", storeID: id, pipeline: nil)
/// ```
package struct NATSChainPoint: Sendable, Equatable {
    /// The transaction's token.
    package var token: Int64
    /// Its chain hash, in lowercase hex.
    package var hash: String
    /// The pipeline that published it.
    package var pipeline: String
    /// The message's stream sequence.
    package var sequence: UInt64

    /// The header's value for transaction `token` with chain hash `hash`.
    package static func headerValue(token: Int64, hash: [UInt8]) -> String { "\(token):\(Hex.string(hash))" }

    /// The point `message` carries when it is one of store `store`'s (lowercase ID) with a
    /// well-formed chain header; nil otherwise.
    package init?(_ message: NATSMessage, store: String) {
        guard message.headers[NATSSink.storeHeader] == store, let value = message.headers[NATSSink.chainHeader],
              let colon = value.firstIndex(of: ":"), let token = Int64(value[..<colon]) else { return nil }
        let hash = value[value.index(after: colon)...].lowercased()
        guard hash.count == 64, Hex.bytes(hash) != nil else { return nil }
        self.init(token: token, hash: hash, pipeline: message.headers[NATSSink.pipelineHeader] ?? "", sequence: message.sequence)
    }

    package init(token: Int64, hash: String, pipeline: String, sequence: UInt64) {
        self.token = token
        self.hash = hash
        self.pipeline = pipeline
        self.sequence = sequence
    }

    /// The newest point of store `storeID` among the newest `limit` messages of `stream` on
    /// the server at `url` (of `pipeline` only, when given); nil when there is none. Throws
    /// `invalidInput` when there is no such stream, `sinkUnavailable` when the server cannot be
    /// reached.
    package static func newest(url: String, stream: String, storeID: UUID, pipeline: String?, reading limit: Int = 100_000) throws -> NATSChainPoint? {
        let connection = try NATSConnection(url: url, sink: "audit")
        guard try connection.streamInfo(stream) != nil else {
            throw TributaryError(.invalidInput, "there is no stream \(stream)", location: url, hint: "name the stream the pipeline's nats sink publishes to, such as nats://HOST:PORT/TRIBUTARY")
        }
        let store = storeID.lowercasedString
        var found: NATSChainPoint?
        try NATSSink.scanBack(connection, stream: stream, reading: limit) { message in
            guard let point = NATSChainPoint(message, store: store), pipeline.map({ $0 == point.pipeline }) ?? true else { return true }
            found = point
            return false
        }
        return found
    }
}
