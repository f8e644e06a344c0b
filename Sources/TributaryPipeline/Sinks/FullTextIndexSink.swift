import Foundation
import Tributary
import TributaryStreams

/// Keeps a ``FullTextIndex`` up to date: at each checkpoint (and every 20,000 records) it
/// upserts and deletes documents and moves the pipeline's position in the same SQLite
/// transaction, so a record redelivered after a crash is skipped and the index ends exactly
/// as a clean run leaves it.
///
/// ```swift
/// let sink = FullTextIndexSink(name: "fts", path: "out/search.sqlite", entities: ["Post": ["title", "content"]])
/// ```
///
/// An entity listed with ``FullTextIndexSinkSettings/allAttributes`` (`Post: all`) has every
/// string attribute indexed, and those the source's model gains later; a renamed attribute
/// or entity keeps its column or slot under its new name (``deliverSchema(_:)``).
public final class FullTextIndexSink: Sink {
    public let name: String
    private let path: String
    /// The attributes listed in the pipeline file.
    private let configured: [String: [String]]
    /// The attributes indexed: `configured` with `all` read from the model, and the model's
    /// changes since followed.
    private var entities: [String: [String]]
    private var index: FullTextIndex?
    private var pipeline = ""
    private var position: StreamPosition?
    /// The index's newest chain point for the pipeline, as ``open(_:)`` read it.
    public private(set) var durableChainPoint: StreamManifest.ChainPoint?
    /// Records delivered and not yet written: the index is written at checkpoints (or when
    /// this many wait), in one transaction with the position, since FTS5 writes a new segment
    /// per transaction and large transactions index several times faster than small ones.
    private var pending: [StreamRecord] = []
    static let maximumPending = 20_000

    /// A sink indexing, per entity (as records name it after transforms), the listed attributes.
    public init(name: String, path: String, entities: [String: [String]]) {
        self.name = name
        self.path = path
        self.configured = entities
        self.entities = entities
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try FullTextIndex.validate(entities, sink: name)
        let index = try FullTextIndex(path: path)
        self.index = index
        pipeline = context.pipeline
        entities = try index.fields(of: pipeline, configured: configured, model: context.model)
        position = try index.position(of: pipeline)
        durableChainPoint = try index.chainPoint(of: pipeline)
        return position
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        precondition(index != nil, "open the sink before delivering")
        pending += records
        if pending.count >= Self.maximumPending { try write(through: nil) }
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        guard index != nil else { return nil }
        if pending.isEmpty, let current = self.position, current >= position { return current }
        try write(through: position)
        return self.position
    }

    /// Writes the records before the change under the names they have, then follows the
    /// change: renamed entities and attributes keep their slots and columns, and an entity
    /// listed with `all` gains the string attributes the model gained (the position moves
    /// to the schema record with them).
    public func deliverSchema(_ record: SchemaRecord) async throws {
        guard let index else { preconditionFailure("open the sink before delivering") }
        try write(through: nil)
        do {
            entities = try index.follow(record, fields: entities, configured: configured, pipeline: pipeline)
            position = try index.position(of: pipeline)
        } catch let error as SQLiteError {
            throw TributaryError.sinkUnavailable(name, "the index cannot be written: \(error.message)", hint: "check the disk and \(path)")
        }
    }

    /// Writes the pending records and the position (at least `through`) in one transaction.
    private func write(through: StreamPosition?) throws {
        guard let index else { return }
        do {
            position = try index.apply(pending, through: through, pipeline: pipeline, entities: entities)
            pending.removeAll(keepingCapacity: true)
        } catch let error as SQLiteError {
            throw TributaryError.sinkUnavailable(name, "the index cannot be written: \(error.message)", hint: "check the disk and \(path)")
        }
    }

    /// Closes the index; records delivered since the last checkpoint are not written (the
    /// runner checkpoints before closing, and redelivers them after a crash).
    public func close() async throws {
        pending.removeAll()
        index = nil
    }
}
