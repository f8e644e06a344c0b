import Foundation
import Tributary

/// A stream directory written through `SegmentWriter` and `StreamManifest`, as
/// `tributary export` writes it, for the segments sink and the dead letters: lines go into
/// the open segment, ``commit(completeThrough:chain:)`` closes it and saves the manifest, and the
/// manifest's last position is the durable position (later appends at or before it are skipped).
///
/// ```swift
/// let directory = try SegmentDirectory(url: dir, storeID: id, format: .native, model: model)
/// try directory.append(line, position: record.position, timestamp: record.timestamp)
/// let durable = try directory.commit(completeThrough: record.position.token)
/// ```
public final class SegmentDirectory {
    /// The directory.
    public let url: URL
    /// The manifest as last saved.
    public private(set) var manifest: StreamManifest
    private let encoder: ZstdFrameEncoder
    private let recordsPerSegment: Int
    private var writer: SegmentWriter?
    private var pendingLast: StreamPosition?
    /// Model versions of the schema records in the open segment, listed with it.
    private var pendingModels: [StreamManifest.ModelVersion] = []
    /// The version of `model.json`, the first model version of a new stream.
    private let startVersion: String?

    /// Opens or creates the directory: checks its store and format, removes leftovers of a
    /// crash (the temporary segment and segments the manifest does not list), writes the model.
    public init(url: URL, storeID: UUID, format: StreamFormat, model: ManagedObjectModel?, recordsPerSegment: Int = 100_000) throws {
        self.url = url
        self.recordsPerSegment = recordsPerSegment
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        let manifest = try StreamManifest.load(from: url) ?? StreamManifest(storeID: storeID, format: format)
        guard manifest.storeID == storeID, manifest.format == format else {
            throw TributaryError(.invalidInput, "the stream in \(url.path) is of store \(manifest.storeID.uuidString.lowercased()) in the \(manifest.format.rawValue) format",
                                 hint: "give each store and format its own directory")
        }
        self.manifest = manifest
        try StreamExporter.removeLeftovers(in: url, manifest: manifest)
        let modelURL = url.appendingPathComponent(StreamManifest.modelFileName)
        if let model, !FileManager.default.fileExists(atPath: modelURL.path) { try DurableFile.write(model.canonicalJSON(), to: modelURL) }
        startVersion = FileManager.default.contents(atPath: modelURL.path).flatMap { try? ManagedObjectModel.fromJSON($0) }?.versionHash
        encoder = try ZstdFrameEncoder()
    }

    /// The position of the last durable record.
    public var durablePosition: StreamPosition? { manifest.last }

    /// The last position appended or durable.
    public var lastPosition: StreamPosition? { pendingLast ?? manifest.last }

    /// Appends one line (ending in `\n`), unless its position is already in the stream.
    public func append(_ line: [UInt8], position: StreamPosition, timestamp: Date) throws {
        if let last = lastPosition, position <= last { return }
        if writer == nil { writer = try SegmentWriter(directory: url, encoder: encoder) }
        try writer!.append(line, position: position, timestamp: timestamp)
        pendingLast = position
        if writer!.records >= recordsPerSegment { _ = try commit(completeThrough: nil) }
    }

    /// Appends a schema record's line (ending in `\n`), listed in the manifest's model
    /// versions with its segment, unless its position is already in the stream.
    public func appendSchema(_ line: [UInt8], record: SchemaRecord) throws {
        if let last = lastPosition, record.position <= last { return }
        pendingModels.append(StreamManifest.ModelVersion(position: record.position, version: record.change.toVersion))
        try append(line, position: record.position, timestamp: record.timestamp)
    }

    /// Closes the open segment (fsync, rename), lists it in the manifest and saves the
    /// manifest; notes that every transaction through `completeThrough` is complete, and
    /// `chain` as the newest chain point the stream holds (a transaction it holds whole).
    @discardableResult
    public func commit(completeThrough: Int64?, chain: StreamManifest.ChainPoint? = nil) throws -> StreamPosition? {
        if let writer {
            let entry = try writer.finish(previous: manifest.last)
            self.writer = nil
            if manifest.segments.isEmpty, manifest.models == nil, let startVersion {
                manifest.models = [StreamManifest.ModelVersion(position: entry.first, version: startVersion)]
            }
            manifest.segments.append(entry)
            if !pendingModels.isEmpty, manifest.models != nil { manifest.models! += pendingModels }
            pendingModels = []
        }
        pendingLast = nil
        if let completeThrough { manifest.completeThrough = max(manifest.completeThrough, completeThrough) }
        if let chain, manifest.chain.map({ chain.token > $0.token }) ?? true { manifest.chain = chain }
        try manifest.save(to: url)
        return manifest.last
    }
}
