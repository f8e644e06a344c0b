import Foundation
import Tributary
import TributaryStreams

/// A SQLite FTS5 full-text index of chosen attributes per entity, with the positions of the
/// pipelines that feed it: one document per object (its attributes' text, one per line),
/// searched with bm25 ranking and `snippet()`. One FTS5 table holds every document, its
/// indexed attributes in columns `f0`… in the order the pipeline lists them and its rowid
/// derived from the object's primary key and entity, so inserting, updating one attribute
/// or deleting a document is one statement.
///
/// ```swift
/// let index = try FullTextIndex(path: "out/search.sqlite")
/// for hit in try index.search("swift AND linux", limit: 5) { print(hit.object, hit.snippet) }
/// ```
public final class FullTextIndex {
    /// One search result.
    public struct Hit: Sendable, Equatable, Codable {
        /// The object's URI.
        public var object: String
        /// Its entity (as the pipeline named it).
        public var entity: String
        /// bm25 rank: lower is better.
        public var rank: Double
        /// The matching text with the matches in `[` `]`.
        public var snippet: String
    }

    /// One indexed document.
    public struct Document: Sendable, Equatable {
        /// The object's URI.
        public var object: String
        /// Its entity.
        public var entity: String
        /// Its indexed text.
        public var content: String
    }

    /// The index file's path.
    public let path: String
    let connection: Connection
    /// The attribute columns of the FTS5 table: an entity's indexed attributes fill
    /// `f0`, `f1`, … in the order the pipeline lists them.
    static let columns = 8
    /// Each entity's slot: a document's rowid is `primaryKey × 64 + slot`, so one row per
    /// object needs no lookup table.
    private var slots: [String: Int64] = [:]

    /// Opens (creating when `create`) the index at `path`.
    ///
    /// ```swift
    /// let index = try FullTextIndex(path: "out/search.sqlite", create: false)
    /// ```
    public init(path: String, create: Bool = true) throws {
        self.path = path
        guard create || FileManager.default.fileExists(atPath: path) else {
            throw TributaryError(.fileNotFound, "no index", location: path, hint: "run a pipeline with an fts sink, such as pipelines/search-index.yml")
        }
        var options = ConnectionOptions()
        options.create = create
        do {
            connection = try Connection(path: path, options: options)
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            if create {
                let fields = (0..<Self.columns).map { "f\($0)" }.joined(separator: ", ")
                try connection.execute("""
                    CREATE VIRTUAL TABLE IF NOT EXISTS tributary_fts USING fts5(entity UNINDEXED, object UNINDEXED, \(fields), tokenize = 'unicode61 remove_diacritics 2');
                    CREATE TABLE IF NOT EXISTS tributary_fts_entities(slot INTEGER PRIMARY KEY, entity TEXT NOT NULL UNIQUE);
                    CREATE TABLE IF NOT EXISTS tributary_index_positions(pipeline TEXT PRIMARY KEY, position TEXT NOT NULL);
                    """)
            }
            _ = try connection.scalar("SELECT count(*) FROM tributary_fts_entities")
            let statement = try connection.makeStatement("SELECT slot, entity FROM tributary_fts_entities")
            while try statement.step() { slots[statement.string(at: 1)] = statement.int64(at: 0) }
        } catch let error as SQLiteError {
            throw TributaryError(.invalidInput, "not a full-text index of this version (\(error.message))", location: path,
                                 hint: "give the path an fts sink writes; an index made by an older Tributary is rebuilt by deleting it and running the pipeline with a new consumer")
        }
    }

    /// Searches with an FTS5 query (`swift linux`, `"exact phrase"`, `swi*`, `swift OR
    /// linux`), best match first.
    ///
    /// ```swift
    /// let hits = try index.search("swift NOT linux")
    /// ```
    public func search(_ query: String, limit: Int = 10) throws -> [Hit] {
        do {
            let statement = try connection.makeStatement("""
                SELECT object, entity, bm25(tributary_fts) AS rank, snippet(tributary_fts, -1, '[', ']', '…', 12)
                FROM tributary_fts WHERE tributary_fts MATCH ? ORDER BY rank LIMIT ?
                """)
            try statement.bind([.string(query), .integer(Int64(limit))])
            var hits: [Hit] = []
            while try statement.step() {
                hits.append(Hit(object: statement.string(at: 0), entity: statement.string(at: 1), rank: statement.double(at: 2), snippet: statement.string(at: 3)))
            }
            return hits
        } catch let error as SQLiteError {
            throw TributaryError(.invalidInput, "the query cannot be run: \(error.message)", location: path,
                                 hint: "FTS5 queries look like: swift linux, \"exact phrase\", swi*, swift OR linux, swift NOT linux")
        }
    }

    /// Every document, ordered by object URI (for comparisons and tests).
    ///
    /// ```swift
    /// let documents = try index.documents()
    /// ```
    public func documents() throws -> [Document] {
        let fields = (0..<Self.columns).map { "f\($0)" }.joined(separator: ", ")
        let statement = try connection.makeStatement("SELECT object, entity, \(fields) FROM tributary_fts ORDER BY object")
        var documents: [Document] = []
        while try statement.step() {
            let texts = (0..<Self.columns).compactMap { statement.optionalString(at: 2 + $0) }
            documents.append(Document(object: statement.string(at: 0), entity: statement.string(at: 1), content: texts.joined(separator: "\n")))
        }
        return documents
    }

    /// The position pipeline `pipeline` has indexed through, nil when it has not written.
    public func position(of pipeline: String) throws -> StreamPosition? {
        guard let text = try connection.scalar("SELECT position FROM tributary_index_positions WHERE pipeline = ?", [.string(pipeline)])?.stringValue else { return nil }
        return try StreamPosition(parsing: text)
    }

    /// Applies records (skipping those at or before the pipeline's position) and moves the
    /// position, in one transaction: the index and its position never disagree.
    func apply(_ records: [StreamRecord], through: StreamPosition?, pipeline: String, entities: [String: [String]]) throws -> StreamPosition? {
        try connection.transaction {
            let stored = try position(of: pipeline)
            var last = stored
            for record in records where stored.map({ record.position > $0 }) ?? true {
                if let attributes = entities[record.entityName] { try apply(record, attributes: attributes) }
                last = record.position
            }
            if let through, last.map({ through > $0 }) ?? true { last = through }
            if let last, last != stored {
                try connection.execute("INSERT INTO tributary_index_positions(pipeline, position) VALUES (?, ?) ON CONFLICT(pipeline) DO UPDATE SET position = excluded.position",
                                       [.string(pipeline), .string(last.description)])
            }
            return last
        }
    }

    /// Checks that `entities` fit the index: at most ``columns`` attributes each.
    static func validate(_ entities: [String: [String]], sink: String) throws {
        for (entity, attributes) in entities where attributes.count > columns {
            throw TributaryError(.invalidInput, "entity \(entity) lists \(attributes.count) attributes; an index takes at most \(columns)", location: "sink \(sink)",
                                 hint: "index at most \(columns) attributes per entity")
        }
    }

    /// The entity's slot, given one on first use (inside the caller's transaction).
    private func slot(of entity: String) throws -> Int64 {
        if let slot = slots[entity] { return slot }
        let slot = Int64(slots.count)
        guard slot < 64 else {
            throw TributaryError(.invalidInput, "an index holds at most 64 entities", location: path, hint: "index fewer entities, or use one index per group of entities")
        }
        try connection.execute("INSERT INTO tributary_fts_entities(slot, entity) VALUES (?, ?)", [.integer(slot), .string(entity)])
        slots[entity] = slot
        return slot
    }

    private func apply(_ record: StreamRecord, attributes: [String]) throws {
        let rowid = record.objectID.primaryKey * 64 + (try slot(of: record.entityName))
        if record.operation == .delete {
            try connection.execute("DELETE FROM tributary_fts WHERE rowid = ?", [.integer(rowid)])
            return
        }
        var values = [AttributeValue](repeating: .null, count: attributes.count)
        var changed = [Bool](repeating: false, count: attributes.count)
        for property in record.properties where !property.isMembershipChange && !property.isValueExcluded {
            guard let column = attributes.firstIndex(of: property.name) else { continue }
            changed[column] = true
            if let value = property.after, !value.isNull { values[column] = .string(value.stringValue ?? value.description) }
        }
        if record.operation == .update {
            // Only the changed attributes; the other columns keep their text.
            let columns = changed.indices.filter { changed[$0] }
            guard !columns.isEmpty else { return }
            try connection.execute("UPDATE tributary_fts SET \(columns.map { "f\($0) = ?" }.joined(separator: ", ")) WHERE rowid = ?",
                                   columns.map { values[$0] } + [.integer(rowid)])
            if connection.changes > 0 { return }
            // An object the index has not seen (its insert came before the pipeline began):
            // a new document from the values the record carries.
        }
        let fields = attributes.indices.map { "f\($0)" }.joined(separator: ", ")
        let marks = Array(repeating: "?", count: attributes.count).joined(separator: ", ")
        try connection.execute("INSERT OR REPLACE INTO tributary_fts(rowid, entity, object, \(fields)) VALUES (?, ?, ?, \(marks))",
                               [.integer(rowid), .string(record.entityName), .string(record.objectID.uriRepresentation)] + values)
    }
}
