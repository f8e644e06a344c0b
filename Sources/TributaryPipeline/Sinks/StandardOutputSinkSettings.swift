import Foundation
import TributaryStreams

/// The settings of a `type: stdout` sink: records as NDJSON on standard output.
///
/// ```swift
/// let settings = StandardOutputSinkSettings(format: .debezium)
/// ```
public struct StandardOutputSinkSettings: SinkConfiguration, Equatable {
    public static let type = "stdout"
    public static let keys = ["format"]

    /// The record encoding (`format`).
    public var format: StreamFormat

    /// Settings.
    public init(format: StreamFormat = .native) { self.format = format }

    public init(settings: PipelineSettingsNode) throws {
        self.init(format: try settings["format"]?.streamFormat() ?? .native)
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        StandardOutputSink(name: sink.name, format: format)
    }
}
