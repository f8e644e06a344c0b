import Foundation
import TributaryStreams

/// The settings of a `type: segments` sink: compressed segments and a manifest in `directory`,
/// as `tributary export` writes them.
///
/// ```swift
/// let settings = SegmentsSinkSettings(directory: "/var/lib/tributary/archive", format: .native)
/// ```
public struct SegmentsSinkSettings: SinkConfiguration, Equatable {
    public static let type = "segments"
    public static let keys = ["directory", "format", "segment_records"]

    /// The directory of the segments and manifest (`directory`).
    public var directory: String
    /// The record encoding (`format`).
    public var format: StreamFormat
    /// Records per segment (`segment_records`).
    public var segmentRecords: Int

    /// Settings; 100,000 records per segment by default.
    public init(directory: String, format: StreamFormat = .native, segmentRecords: Int = 100_000) {
        self.directory = directory
        self.format = format
        self.segmentRecords = segmentRecords
    }

    public init(settings: PipelineSettingsNode) throws {
        self.init(directory: try settings.required("directory", hint: "add directory: ${TRIBUTARY_OUT}/archive").string(),
                  format: try settings["format"]?.streamFormat() ?? .native,
                  segmentRecords: try settings["segment_records"]?.positive() ?? 100_000)
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        SegmentsSink(name: sink.name, directory: URL(fileURLWithPath: directory), format: format, recordsPerSegment: segmentRecords)
    }
}
