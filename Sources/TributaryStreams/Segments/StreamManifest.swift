import Foundation
import Tributary

/// The table of contents of a stream directory (`manifest.json`): the store, the encoding,
/// the snapshot if the stream starts with one, and every segment in order with its range,
/// size and SHA-256. Replaced atomically after each segment is durable.
///
/// ```swift
/// let manifest = try StreamManifest.load(from: directory)
/// for segment in manifest?.segments ?? [] { print(segment.name, segment.records) }
/// ```
public struct StreamManifest: Sendable, Codable, Equatable {
    /// The manifest's format version.
    public static let currentFormatVersion = 1
    /// The manifest's file name in a stream directory.
    public static let fileName = "manifest.json"
    /// The file name of the source's model beside the manifest.
    public static let modelFileName = "model.json"

    /// A snapshot the stream starts with.
    public struct Snapshot: Sendable, Codable, Equatable {
        /// The history token the snapshot's rows are the state at.
        public var token: Int64
        /// Whether every object of the snapshot is in the stream.
        public var complete: Bool
        /// The number of objects.
        public var objects: Int
    }

    /// One segment file.
    public struct Segment: Sendable, Codable, Equatable {
        /// The file name, from its first and last position.
        public var name: String
        /// The position of its first record.
        public var first: StreamPosition
        /// The position of its last record.
        public var last: StreamPosition
        /// The last position of the segment before (nil for the first): a reader checks
        /// that segments follow one another with no gap.
        public var previous: StreamPosition?
        /// Commit time of the first record.
        public var firstTimestamp: Date
        /// Commit time of the last record.
        public var lastTimestamp: Date
        /// Number of records.
        public var records: Int
        /// Number of zstd frames holding records.
        public var frames: Int
        /// Size of the file in bytes.
        public var bytes: Int
        /// SHA-256 of the file, as `sha256sum` prints it.
        public var sha256: String
        /// The zstd dictionary the frames need, 0 for none.
        public var dictionaryID: UInt32
    }

    /// A point of the source's history chain (`PersistentStoreCoordinator.verifyHistoryChain()`).
    public struct ChainPoint: Sendable, Codable, Equatable {
        /// The transaction's token value.
        public var token: Int64
        /// Its chain hash, 64 hex digits.
        public var hash: String

        /// The point of transaction `token`, whose chain hash is `hash` (hex).
        public init(token: Int64, hash: String) {
            self.token = token
            self.hash = hash
        }

        /// The point of the record's transaction when the record carries its chain hash (it
        /// ends the transaction), nil otherwise.
        public init?(_ record: StreamRecord) {
            guard let hash = record.chainHash else { return nil }
            self.init(token: record.position.token, hash: Hex.string(hash))
        }
    }

    /// A model version of the stream: the model in force from ``position`` on (until the
    /// next entry). The first entry is the model the stream starts with (`model.json`),
    /// at the position the stream starts after; each other one is a schema record's.
    public struct ModelVersion: Sendable, Codable, Equatable {
        /// Where the model comes into force: a schema record's position, or the stream's start.
        public var position: StreamPosition
        /// The model's `ManagedObjectModel.versionHash`.
        public var version: String

        /// An entry.
        public init(position: StreamPosition, version: String) {
            self.position = position
            self.version = version
        }
    }

    /// The manifest's format version.
    public var formatVersion = StreamManifest.currentFormatVersion
    /// The source store's ID.
    public var storeID: UUID
    /// The record encoding.
    public var format: StreamFormat
    /// The snapshot the stream starts with, if any.
    public var snapshot: Snapshot?
    /// The file name of the zstd dictionary, if the stream uses one.
    public var dictionary: String?
    /// Every transaction through this token has all its (matching) changes in the stream.
    public var completeThrough: Int64
    /// The segments, in order.
    public var segments: [Segment]
    /// The history consumer that keeps this stream's position in the store: a stream is bound
    /// to one, and an export with another is refused (nil in streams written before 0.x).
    public var consumer: String?
    /// Whether the stream holds only some changes (entities, authors, context names or change
    /// types chosen): nil when unknown. In a stream that is not filtered every transaction
    /// follows the one before (tokens are consecutive), so a verifier can tell a gap.
    public var filtered: Bool?
    /// The source's history chain hash at the newest transaction through ``completeThrough``
    /// (nil when its history is not chained): `tributary audit verify STORE --against DIR`
    /// checks that the store still has it, so its history was not rewritten after the export.
    public var chain: ChainPoint?
    /// The model versions by position, the first being the model the stream starts with
    /// (nil in streams written before schema records): a schema record in the stream is
    /// listed here once the segment holding it is.
    public var models: [ModelVersion]?

    /// An empty manifest.
    public init(storeID: UUID, format: StreamFormat, completeThrough: Int64 = 0) {
        self.storeID = storeID
        self.format = format
        self.completeThrough = completeThrough
        self.segments = []
    }

    /// The position of the last record in the stream.
    public var last: StreamPosition? { segments.last?.last }

    /// The manifest in `directory`, nil when there is none; an error naming the fault when it cannot be read.
    public static func load(from directory: URL) throws -> StreamManifest? {
        let url = directory.appendingPathComponent(fileName)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let text = try decoder.singleValueContainer().decode(String.self)
            guard let date = ISO8601.date(from: text) else {
                throw TributaryError(.damagedStream, "'\(text)' is not a date", location: url.path)
            }
            return date
        }
        let manifest: StreamManifest
        do {
            manifest = try decoder.decode(StreamManifest.self, from: data)
        } catch let error as TributaryError {
            throw TributaryError(.damagedStream, "the manifest cannot be read: \(error.message)", location: url.path, hint: "restore manifest.json; it must not be edited by hand")
        } catch {
            throw TributaryError(.damagedStream, "the manifest cannot be read (\((error as? DecodingError)?.shortDescription ?? "\(error)"))", location: url.path, hint: "restore manifest.json; it must not be edited by hand")
        }
        guard manifest.formatVersion <= currentFormatVersion else {
            throw TributaryError(.newerFormat, "the stream was written by a newer Tributary (manifest format \(manifest.formatVersion))", location: url.path, hint: "upgrade tributary")
        }
        return manifest
    }

    /// The manifest as JSON text (keys sorted, one segment a line).
    public func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var container = encoder.singleValueContainer()
            try container.encode(ISO8601.string(from: date))
        }
        return try encoder.encode(self)
    }

    private enum CodingKeys: String, CodingKey {
        case formatVersion, storeID, format, snapshot, dictionary, completeThrough, segments, consumer, filtered, chain, models
    }

    /// Encodes the manifest with the store ID in lowercase, as the CLI prints it (a UUID's own
    /// encoding is uppercase); reading accepts either case, so older manifests still load.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(formatVersion, forKey: .formatVersion)
        try container.encode(storeID.lowercasedString, forKey: .storeID)
        try container.encode(format, forKey: .format)
        try container.encodeIfPresent(snapshot, forKey: .snapshot)
        try container.encodeIfPresent(dictionary, forKey: .dictionary)
        try container.encode(completeThrough, forKey: .completeThrough)
        try container.encode(segments, forKey: .segments)
        try container.encodeIfPresent(consumer, forKey: .consumer)
        try container.encodeIfPresent(filtered, forKey: .filtered)
        try container.encodeIfPresent(chain, forKey: .chain)
        try container.encodeIfPresent(models, forKey: .models)
    }

    /// Writes the manifest to `directory` atomically: a temporary file, fsync, rename, fsync of the directory.
    public func save(to directory: URL) throws {
        try DurableFile.write(try encoded(), to: directory.appendingPathComponent(Self.fileName))
    }
}
