import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// A durable pull consumer's subscription.
///
/// ```swift
/// let subscription = try connection.pullSubscribe(stream: "TRIBUTARY", subject: "tributary.*", durable: "replica", maximumAckPending: 500, ackWait: 3)
/// let messages = try subscription.fetch(batch: 500, timeout: 1)
/// ```
public final class NATSPullSubscription {
    private var subscription: OpaquePointer?
    private let owner: NATSConnection

    private let stream: String
    private let consumer: String

    init(subscription: OpaquePointer?, owner: NATSConnection, stream: String, consumer: String) {
        self.subscription = subscription
        self.owner = owner
        self.stream = stream
        self.consumer = consumer
    }

    deinit { natsSubscription_Destroy(subscription) }

    /// Fetches at most `batch` messages, waiting at most `timeout` seconds for the first; an
    /// empty array when none came.
    ///
    /// ```swift
    /// let messages = try subscription.fetch(batch: 100, timeout: 1)
    /// ```
    public func fetch(batch: Int, timeout: TimeInterval) throws -> [NATSReceivedMessage] {
        var list = natsMsgList()
        let status = natsSubscription_Fetch(&list, subscription, Int32(batch), Int64(saturating: timeout * 1000), nil)
        if status == NATS_TIMEOUT { return [] }
        try owner.check(status, "cannot fetch from the consumer")
        var messages: [NATSReceivedMessage] = []
        for i in 0..<Int(list.Count) {
            messages.append(NATSReceivedMessage(handle: list.Msgs[i], owner: owner))
            list.Msgs[i] = nil
        }
        natsMsgList_Destroy(&list)
        return messages
    }

    /// The consumer's pending and unacknowledged counts.
    ///
    /// ```swift
    /// let drained = try subscription.state().pending == 0
    /// ```
    public func state() throws -> NATSConsumerState { try owner.consumerState(stream: stream, consumer: consumer) }
}
