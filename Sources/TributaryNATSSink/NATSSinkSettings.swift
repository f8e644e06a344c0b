import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// The settings of a `nats` sink (pipeline keys in brackets).
///
/// ```swift
/// let settings = NATSSinkSettings(url: "nats://127.0.0.1:4222", stream: "TRIBUTARY", subject: "tributary.{entity}")
/// ```
public struct NATSSinkSettings: Sendable, Equatable {
    /// The server (`url`: `nats://HOST:PORT`).
    public var url: String
    /// The JetStream stream, created if missing (`stream`, default `TRIBUTARY`).
    public var stream: String
    /// The subject of each record (`subject`): `{entity}`, `{op}` (c, u, d, r) and `{store}`
    /// are replaced by the record's entity, operation letter and source store ID.
    public var subject: String
    /// The stream's retention when the sink creates it (`retention`: limits, interest, workqueue).
    public var retention: NATSStreamConfig.Retention
    /// The stream's replicas (`replicas`).
    public var replicas: Int
    /// The stream's duplicate window in seconds (`duplicate_window`, default 2m).
    public var duplicateWindow: TimeInterval
    /// Publishes in flight before the sink waits for acknowledgments (`max_pending`).
    public var maximumPending: Int
    /// How long to wait for a reply or an acknowledgment, in seconds (`timeout`).
    public var timeout: TimeInterval
    /// The record encoding (`format`).
    public var format: StreamFormat

    /// Settings; only the url is required.
    public init(url: String, stream: String = "TRIBUTARY", subject: String = "tributary.{entity}", retention: NATSStreamConfig.Retention = .limits,
                replicas: Int = 1, duplicateWindow: TimeInterval = 120, maximumPending: Int = 256, timeout: TimeInterval = 5, format: StreamFormat = .native) {
        self.url = url
        self.stream = stream
        self.subject = subject
        self.retention = retention
        self.replicas = replicas
        self.duplicateWindow = duplicateWindow
        self.maximumPending = maximumPending
        self.timeout = timeout
        self.format = format
    }

    /// The placeholders a subject template may hold.
    static let placeholders = ["{entity}", "{op}", "{store}"]

    /// The stream's subject filter: the template with each placeholder as a `*` token.
    ///
    /// ```swift
    /// NATSSinkSettings(url: "nats://localhost:4222", subject: "cdc.{store}.{entity}").streamSubject   // "cdc.*.*"
    /// ```
    public var streamSubject: String {
        var subject = self.subject
        for placeholder in Self.placeholders { subject = subject.replacingOccurrences(of: placeholder, with: "*") }
        return subject
    }

    /// The subject of `record`: the template filled in, each value made a single subject
    /// token (`.`, `*`, `>` and white space become `_`).
    ///
    /// ```swift
    /// settings.subject(for: record)   // "tributary.Post"
    /// ```
    public func subject(for record: StreamRecord) -> String {
        func token(_ text: String) -> String {
            String(text.map { $0 == "." || $0 == "*" || $0 == ">" || $0.isWhitespace ? "_" : $0 })
        }
        var subject = self.subject
        if subject.contains("{entity}") { subject = subject.replacingOccurrences(of: "{entity}", with: token(record.entityName)) }
        if subject.contains("{op}") { subject = subject.replacingOccurrences(of: "{op}", with: record.operation.rawValue) }
        if subject.contains("{store}") { subject = subject.replacingOccurrences(of: "{store}", with: record.storeID.lowercasedString) }
        return subject
    }

    /// Checks the template: non-empty dot-separated tokens, each a placeholder or free of
    /// wildcards and white space; returns the problem, nil when fine.
    func templateProblem() -> String? {
        let tokens = subject.split(separator: ".", omittingEmptySubsequences: false)
        for token in tokens {
            if token.isEmpty { return "the subject '\(subject)' has an empty token" }
            if Self.placeholders.contains(String(token)) { continue }
            if token.contains("{") || token.contains("}") { return "the subject '\(subject)' has an unknown placeholder in '\(token)'" }
            if token.contains(where: { $0 == "*" || $0 == ">" || $0.isWhitespace }) { return "the subject '\(subject)' holds a wildcard or white space" }
        }
        return nil
    }
}
