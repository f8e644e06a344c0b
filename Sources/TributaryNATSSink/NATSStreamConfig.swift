import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// A JetStream stream's configuration, as far as Tributary sets it.
///
/// ```swift
/// let config = NATSStreamConfig(name: "TRIBUTARY", subjects: ["tributary.*"])
/// ```
public struct NATSStreamConfig: Sendable, Equatable {
    /// How the stream retains messages.
    public enum Retention: String, Sendable, CaseIterable {
        /// Until the stream's limits (the default).
        case limits
        /// Until every consumer has acknowledged them.
        case interest
        /// Until one consumer has acknowledged them.
        case workqueue
    }

    /// The stream's name.
    public var name: String
    /// The subjects it stores.
    public var subjects: [String]
    /// Its retention policy.
    public var retention: Retention = .limits
    /// Its replicas.
    public var replicas = 1
    /// The window in which JetStream drops a message whose `Nats-Msg-Id` it has seen, in seconds.
    public var duplicateWindow: TimeInterval = 120

    /// A configuration.
    public init(name: String, subjects: [String], retention: Retention = .limits, replicas: Int = 1, duplicateWindow: TimeInterval = 120) {
        self.name = name
        self.subjects = subjects
        self.retention = retention
        self.replicas = replicas
        self.duplicateWindow = duplicateWindow
    }
}
