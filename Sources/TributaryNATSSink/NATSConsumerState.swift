import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// What a durable consumer has left.
///
/// ```swift
/// let state = try subscription.state()
/// if state.pending == 0 && state.ackPending == 0 { print("drained") }
/// ```
public struct NATSConsumerState: Sendable, Equatable {
    /// Messages not yet delivered.
    public var pending: UInt64
    /// Messages delivered and not yet acknowledged.
    public var ackPending: Int64
}
