@_spi(Fuzzing) import Tributary
import Foundation
import TributaryHTTPSink
import TributaryNATSSink
import TributaryPipeline
import TributaryPostgresSink
import TributaryRedisSink
import TributaryStreams

/// The bodies of the libFuzzer harnesses in `Fuzz/` (one `fuzz-<rawValue>` executable each),
/// kept here so that the normal test suite replays every committed seed
/// (`Fuzz/Corpus/<rawValue>/`) through the very same entry points: a regression on a known
/// input shows in `make test` without the instrumented build. Errors the entry points throw
/// are the expected answer to bad input and are ignored; a trap is the failure.
///
/// ```swift
/// @_cdecl("LLVMFuzzerTestOneInput")
/// public func predicateFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
///     FuzzTarget.predicate.run(FuzzInput(data, size))
///     return 0
/// }
/// ```
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `StorePredicate(format:argumentArray:)`, then `explain` for every blog entity, and `evaluate`.
    case predicate
    /// `ManagedObjectModel(yaml:source:)`.
    case modelYAML = "model-yaml"
    /// `NDJSONDecoder.decode(line:place:)` for every blog entity.
    case ndjson
    /// Tokens, stream positions, ISO 8601 dates, the CLI's durations, replay limits, sort
    /// descriptors, derivations, stream formats and attribute values of every type.
    case parsers
    /// A stored history payload through every reader path.
    case historyPayload = "history-payload"
    /// `SegmentFooter.read`, then `SegmentReader` in each stream format.
    case segment
    /// `StreamManifest.load(from:)` of a manifest.json, then `encoded()`.
    case manifest
    /// `PipelineFile(yaml:path:environment:sinks:)` with every sink type registered, so each
    /// one's settings reader is fuzzed.
    case pipelineFile = "pipeline-file"

    /// Every sink type the pipeline-file target reads.
    static let sinks = SinkRegistry.standard.registering(HTTPSinkSettings.self, PostgresSinkSettings.self, NATSSinkSettings.self, RedisSinkSettings.self)

    /// Feeds `input` to this target's entry points.
    public func run(_ input: FuzzInput) {
        switch self {
        case .predicate: Self.predicate(input.text)
        case .modelYAML: _ = try? ManagedObjectModel(yaml: input.text, source: "fuzz.yml")
        case .ndjson: Self.ndjson(input.text)
        case .parsers: Self.parsers(input.text)
        case .historyPayload: _ = try? HistoryPayloadFuzzing.decode(input.array)
        case .segment: Self.segment(input.array)
        case .manifest: Self.manifest(Data(input.bytes))
        case .pipelineFile: _ = try? PipelineFile(yaml: input.text, path: "fuzz.yml", environment: ["TOKEN": "secret", "EMPTY": ""], sinks: Self.sinks)
        }
    }

    /// Feeds `bytes` to this target's entry points (for tests replaying a corpus file).
    public func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { run(FuzzInput($0.baseAddress, $0.count)) }
    }

    /// Parses a predicate format (with a few arguments for `%@`, `%K`, `$VAR`), compiles it to
    /// SQL against every blog entity (through `explain`, so SQLite prepares the SQL too), and
    /// evaluates it in memory over one object's values.
    private static func predicate(_ format: String) {
        let arguments: [AttributeValue] = [.string("title"), .integer(7), .date(Date(timeIntervalSince1970: 0)), .array([.string("a"), .integer(1)])]
        guard let predicate = try? StorePredicate(format: format, argumentArray: arguments) else { return }
        for entity in FuzzStore.model.entities {
            _ = try? FuzzStore.coordinator.explain(FetchRequest(entityName: entity.name, predicate: predicate))
        }
        _ = try? predicate.evaluate(["title": .string("Swift"), "createdAt": .date(Date(timeIntervalSince1970: 1)), "postCount": .integer(3), "content": .null])
    }

    /// Decodes one NDJSON line for every blog entity, through the decoder the importer uses.
    private static func ndjson(_ line: String) {
        for decoder in FuzzStore.decoders {
            _ = try? decoder.decode(line: line, place: "fuzz.ndjson:1")
        }
    }

    /// Every small text parser, printing back what parses.
    private static func parsers(_ text: String) {
        if let token = try? PersistentHistoryToken(parsing: text) { _ = token.description }
        if let position = try? StreamPosition(parsing: text) { _ = position.description }
        if let date = ISO8601.date(from: text) { _ = ISO8601.string(from: date) }
        _ = try? CLIParsers.duration(text)
        _ = try? ReplayLimit(parsing: text)
        _ = try? SortDescriptor(parsing: text)
        _ = try? Derivation(parsing: text)
        _ = try? StreamFormat(parsing: text)
        for type in AttributeType.allCases {
            _ = try? AttributeValue.parse(text, as: type)
        }
    }

    /// Reads `bytes` as a segment file: its footer, then, through `SegmentReader` with a
    /// manifest entry that matches the file (or, when the first byte is odd, one whose SHA-256
    /// does not, to reach the damage locator), every frame and record in each stream format.
    private static func segment(_ bytes: [UInt8]) {
        guard let footer = try? SegmentFooter.read(bytes) else { return }
        let name = "fuzz.seg"
        guard FileManager.default.createFile(atPath: FuzzStore.scratchDirectory.appendingPathComponent(name).path, contents: Data(bytes)) else { return }
        let damaged = bytes.first.map { $0 & 1 == 1 } ?? false
        let entry: [String: Any] = [
            "name": name, "first": "1.0", "last": "1.0", "firstTimestamp": 0.0, "lastTimestamp": 0.0,
            "records": footer.frames.reduce(0) { $0 &+ $1.records }, "frames": footer.frames.count, "bytes": bytes.count,
            "sha256": damaged ? String(repeating: "0", count: 64) : SHA256.hex(bytes), "dictionaryID": 0,
        ]
        guard let json = try? JSONSerialization.data(withJSONObject: entry),
              let segment = try? JSONDecoder().decode(StreamManifest.Segment.self, from: json),
              let decoder = try? ZstdFrameDecoder() else { return }
        for format in StreamFormat.allCases {
            guard let reader = try? SegmentReader(directory: FuzzStore.scratchDirectory, segment: segment, format: format, decoder: decoder) else { continue }
            for frame in footer.frames { _ = reader.frame(containing: frame.first) }
            try? reader.forEachRecord { _, _ in true }
        }
    }

    /// Loads `contents` as a stream directory's manifest.json, and writes back what loads.
    private static func manifest(_ contents: Data) {
        let directory = FuzzStore.scratchDirectory
        guard FileManager.default.createFile(atPath: directory.appendingPathComponent(StreamManifest.fileName).path, contents: contents) else { return }
        guard let manifest = try? StreamManifest.load(from: directory) else { return }
        _ = manifest.last
        _ = try? manifest.encoded()
    }
}
