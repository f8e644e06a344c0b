import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// A message read from or written to JetStream, as plain Swift values.
///
/// ```swift
/// let message = NATSMessage(subject: "tributary.Post", data: Array("{}".utf8), headers: ["Nats-Msg-Id": "id-1"])
/// ```
public struct NATSMessage: Sendable, Equatable {
    /// The subject.
    public var subject: String
    /// The payload.
    public var data: [UInt8]
    /// The headers (one value per key).
    public var headers: [String: String]
    /// The stream sequence (0 for a message not read from a stream).
    public var sequence: UInt64

    /// A message.
    public init(subject: String, data: [UInt8], headers: [String: String] = [:], sequence: UInt64 = 0) {
        self.subject = subject
        self.data = data
        self.headers = headers
        self.sequence = sequence
    }
}
