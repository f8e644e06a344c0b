import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// A message fetched through a pull consumer, acknowledged explicitly.
///
/// ```swift
/// for message in try subscription.fetch(batch: 100, timeout: 1) { print(message.message.subject) }
/// ```
public final class NATSReceivedMessage {
    private var handle: OpaquePointer?
    private let owner: NATSConnection
    /// The message.
    public let message: NATSMessage

    init(handle: OpaquePointer?, owner: NATSConnection) {
        self.handle = handle
        self.owner = owner
        var sequence: UInt64 = 0
        var meta: UnsafeMutablePointer<jsMsgMetaData>?
        if natsMsg_GetMetaData(&meta, handle) == NATS_OK, let meta {
            sequence = meta.pointee.Sequence.Stream
            jsMsgMetaData_Destroy(meta)
        }
        message = NATSConnection.message(handle, sequence: sequence)
    }

    deinit { natsMsg_Destroy(handle) }

    /// Acknowledges this message; with `wait`, waits for the server to confirm (which
    /// confirms the acknowledgments sent before it on the connection too).
    ///
    /// ```swift
    /// try received.acknowledge()
    /// ```
    public func acknowledge(wait: Bool = true) throws {
        if wait {
            var code = jsErrCode(0)
            try owner.check(natsMsg_AckSync(handle, nil, &code), "cannot acknowledge message \(message.sequence)", code: code)
        } else {
            try owner.check(natsMsg_Ack(handle, nil), "cannot acknowledge message \(message.sequence)")
        }
    }
}
