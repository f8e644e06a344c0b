import Foundation
import Tributary

/// How a ``StreamExporter`` writes a stream.
///
/// ```swift
/// var options = ExportOptions()
/// options.format = .debezium
/// options.snapshot = true
/// options.filter.entities = ["Post"]
/// ```
public struct ExportOptions: Sendable {
    /// The record encoding.
    public var format: StreamFormat = .native
    /// The history consumer that keeps the export's position in the store.
    public var consumerName = "export"
    /// Start a new stream with a consistent snapshot of the current rows (op `r`).
    public var snapshot = false
    /// Train a zstd dictionary from the first records and compress every segment with it.
    public var dictionary = false
    /// Which history to export (entities, authors, context names, change types); its
    /// `after` and `through` are set by the exporter.
    public var filter = HistoryFilter()
    /// Properties left out of every record: `name` (any entity) or `Entity.name`.
    public var excludedProperties: Set<String> = []
    /// Records per zstd frame: a reader can start at any frame.
    public var recordsPerFrame = 64
    /// A segment is closed after this many records…
    public var maximumSegmentRecords = 100_000
    /// …or this many compressed bytes…
    public var maximumSegmentBytes = 64 << 20
    /// …or when its first record is this old (seconds).
    public var maximumSegmentAge: TimeInterval = 600
    /// zstd's compression level.
    public var compressionLevel: Int32 = 3
    /// Bytes of records to train a dictionary from (zstd's guidance: 100 times the dictionary).
    public var dictionarySampleBytes = 10 << 20
    /// The largest dictionary trained.
    public var dictionaryCapacity = 100_000
    /// The time stamped on Debezium records as `ts_ms`.
    public var clock: @Sendable () -> Date = { Date() }

    /// The default options: native records, 64 per frame, segments of at most 100,000
    /// records, 64 MB or 10 minutes, consumer `export`.
    public init() {}
}

/// What one export pass did.
public struct ExportSummary: Sendable, Equatable {
    /// Records written.
    public var records = 0
    /// Snapshot objects among them.
    public var snapshotObjects = 0
    /// Schema records among them (changes of the model).
    public var schemaRecords = 0
    /// Capture gap records among them (writes by other programs that may be missing).
    public var captureGaps = 0
    /// Segments completed.
    public var segments = 0
    /// The consumer's position after the pass.
    public var committedThrough: Int64 = 0

    /// An empty summary.
    public init() {}
}
