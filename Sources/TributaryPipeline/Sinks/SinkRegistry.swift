import Foundation
import Tributary

/// The sink types a program knows, by their `type:` in a pipeline file. ``standard`` holds the
/// sinks of this module (segments, stdout, fts); a program adds the sink modules it links, one
/// line each, and reads its pipeline files with the result:
///
/// ```swift
/// let sinks = SinkRegistry.standard.registering(HTTPSinkSettings.self)   // import TributaryHTTPSink
/// let pipeline = try PipelineFile(contentsOf: url, sinks: sinks)
/// ```
public struct SinkRegistry: Sendable {
    /// How one type reads its settings.
    struct Entry: Sendable {
        let keys: [String]
        let read: @Sendable (PipelineSettingsNode) throws -> any SinkConfiguration
    }

    private var entries: [String: Entry] = [:]

    /// A registry with no sink types.
    public init() {}

    /// The sinks of this module: `segments`, `stdout` and `fts`.
    public static let standard = SinkRegistry().registering(SegmentsSinkSettings.self, StandardOutputSinkSettings.self, FullTextIndexSinkSettings.self)

    /// Adds (or replaces) the sink type `configuration` declares.
    ///
    /// ```swift
    /// var sinks = SinkRegistry.standard
    /// sinks.register(RedisSinkSettings.self)
    /// ```
    public mutating func register(_ configuration: any SinkConfiguration.Type) {
        entries[configuration.type] = Entry(keys: configuration.keys, read: { try configuration.init(settings: $0) })
    }

    /// This registry with the sink types `configurations` declare added.
    ///
    /// ```swift
    /// let sinks = SinkRegistry.standard.registering(HTTPSinkSettings.self, RedisSinkSettings.self)
    /// ```
    public func registering(_ configurations: any SinkConfiguration.Type...) -> SinkRegistry {
        var registry = self
        for configuration in configurations { registry.register(configuration) }
        return registry
    }

    /// The registered `type:` names, sorted.
    public var types: [String] { entries.keys.sorted() }

    /// How `type` reads its settings, if registered.
    func entry(_ type: String) -> Entry? { entries[type] }
}
