import Foundation
import Tributary
import TributaryStreams

/// Keeps a ``FullTextIndex`` up to date: each delivery upserts and deletes documents and
/// moves the pipeline's position in the same SQLite transaction, so a record redelivered
/// after a crash is skipped and the index ends exactly as a clean run leaves it.
///
/// ```swift
/// let sink = FullTextIndexSink(name: "fts", path: "out/search.sqlite", entities: ["Post": ["title", "content"]])
/// ```
public final class FullTextIndexSink: Sink {
    public let name: String
    private let path: String
    private let entities: [String: [String]]
    private var index: FullTextIndex?
    private var pipeline = ""
    private var position: StreamPosition?

    /// A sink indexing, per entity (as records name it after transforms), the listed attributes.
    public init(name: String, path: String, entities: [String: [String]]) {
        self.name = name
        self.path = path
        self.entities = entities
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        try FileManager.default.createDirectory(at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
        try FullTextIndex.validate(entities, sink: name)
        let index = try FullTextIndex(path: path)
        self.index = index
        pipeline = context.pipeline
        position = try index.position(of: pipeline)
        return position
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let index else { preconditionFailure("open the sink before delivering") }
        do {
            position = try index.apply(records, through: nil, pipeline: pipeline, entities: entities)
        } catch let error as SQLiteError {
            throw TributaryError.sinkUnavailable(name, "the index cannot be written: \(error.message)", hint: "check the disk and \(path)")
        }
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        guard let index else { return nil }
        if let current = self.position, current >= position { return current }
        self.position = try index.apply([], through: position, pipeline: pipeline, entities: entities)
        return self.position
    }

    public func close() async throws { index = nil }
}
