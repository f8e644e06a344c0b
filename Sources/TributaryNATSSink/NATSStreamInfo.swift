import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// A stream's configuration and state.
///
/// ```swift
/// if let info = try connection.streamInfo("TRIBUTARY") { print(info.messages, info.lastSequence) }
/// ```
public struct NATSStreamInfo: Sendable, Equatable {
    /// Its configuration.
    public var config: NATSStreamConfig
    /// Messages held.
    public var messages: UInt64
    /// The first sequence held.
    public var firstSequence: UInt64
    /// The last sequence stored.
    public var lastSequence: UInt64
}
