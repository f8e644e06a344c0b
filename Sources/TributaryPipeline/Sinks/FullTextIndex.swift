import Foundation
import Tributary
import TributaryStreams

/// A SQLite FTS5 full-text index of chosen attributes per entity, with the positions of the
/// pipelines that feed it: one document per object (its attributes' text, one per line),
/// searched with bm25 ranking and `snippet()`.
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

    /// Opens (creating when `create`) the index at `path`.
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
                try connection.execute("""
                    CREATE TABLE IF NOT EXISTS tributary_index_documents(docid INTEGER PRIMARY KEY, object TEXT NOT NULL UNIQUE, entity TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS tributary_index_values(docid INTEGER NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (docid, name)) WITHOUT ROWID;
                    CREATE VIRTUAL TABLE IF NOT EXISTS tributary_index_fts USING fts5(content, tokenize = 'unicode61 remove_diacritics 2');
                    CREATE TABLE IF NOT EXISTS tributary_index_positions(pipeline TEXT PRIMARY KEY, position TEXT NOT NULL);
                    """)
            }
            _ = try connection.scalar("SELECT count(*) FROM tributary_index_documents")
        } catch let error as SQLiteError {
            throw TributaryError(.invalidInput, "not a full-text index (\(error.message))", location: path, hint: "give the path an fts sink writes")
        }
    }

    /// Searches with an FTS5 query (`swift linux`, `"exact phrase"`, `swi*`, `a OR b`, `NOT c`), best first.
    ///
    /// ```swift
    /// let hits = try index.search("swift*", limit: 10)
    /// ```
    public func search(_ query: String, limit: Int = 10) throws -> [Hit] {
        do {
            let statement = try connection.makeStatement("""
                SELECT d.object, d.entity, bm25(tributary_index_fts) AS rank, snippet(tributary_index_fts, 0, '[', ']', '…', 12)
                FROM tributary_index_fts JOIN tributary_index_documents d ON d.docid = tributary_index_fts.rowid
                WHERE tributary_index_fts MATCH ? ORDER BY rank LIMIT ?
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

    /// Every document, by object URI (for tests and comparisons).
    public func documents() throws -> [Document] {
        let statement = try connection.makeStatement("""
            SELECT d.object, d.entity, f.content FROM tributary_index_documents d JOIN tributary_index_fts f ON f.rowid = d.docid ORDER BY d.object
            """)
        var documents: [Document] = []
        while try statement.step() { documents.append(Document(object: statement.string(at: 0), entity: statement.string(at: 1), content: statement.string(at: 2))) }
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

    private func apply(_ record: StreamRecord, attributes: [String]) throws {
        let object = record.objectID.uriRepresentation
        let existing = try connection.scalar("SELECT docid FROM tributary_index_documents WHERE object = ?", [.string(object)])?.integerValue
        if record.operation == .delete {
            guard let docid = existing else { return }
            try connection.execute("DELETE FROM tributary_index_fts WHERE rowid = ?", [.integer(docid)])
            try connection.execute("DELETE FROM tributary_index_values WHERE docid = ?", [.integer(docid)])
            try connection.execute("DELETE FROM tributary_index_documents WHERE docid = ?", [.integer(docid)])
            return
        }
        guard let docid = existing else {
            // A new document: its text comes from the record alone.
            try connection.execute("INSERT INTO tributary_index_documents(object, entity) VALUES (?, ?)", [.string(object), .string(record.entityName)])
            let docid = try connection.scalar("SELECT last_insert_rowid()")?.integerValue ?? 0
            var texts: [String: String] = [:]
            for property in record.properties where attributes.contains(property.name) && !property.isMembershipChange && !property.isValueExcluded {
                guard let value = property.after, !value.isNull else { continue }
                let text = value.stringValue ?? value.description
                texts[property.name] = text
                try connection.execute("INSERT INTO tributary_index_values(docid, name, value) VALUES (?, ?, ?)", [.integer(docid), .string(property.name), .string(text)])
            }
            try connection.execute("INSERT INTO tributary_index_fts(rowid, content) VALUES (?, ?)", [.integer(docid), .string(attributes.compactMap { texts[$0] }.joined(separator: "\n"))])
            return
        }
        for property in record.properties where attributes.contains(property.name) && !property.isMembershipChange && !property.isValueExcluded {
            let value = property.after ?? .null
            if value.isNull {
                try connection.execute("DELETE FROM tributary_index_values WHERE docid = ? AND name = ?", [.integer(docid), .string(property.name)])
            } else {
                try connection.execute("INSERT INTO tributary_index_values(docid, name, value) VALUES (?, ?, ?) ON CONFLICT(docid, name) DO UPDATE SET value = excluded.value",
                                       [.integer(docid), .string(property.name), .string(value.stringValue ?? value.description)])
            }
        }
        var texts: [String: String] = [:]
        let statement = try connection.cachedStatement("SELECT name, value FROM tributary_index_values WHERE docid = ?")
        try statement.bind([.integer(docid)])
        while try statement.step() { texts[statement.string(at: 0)] = statement.string(at: 1) }
        statement.reset()
        let content = attributes.compactMap { texts[$0] }.joined(separator: "\n")
        try connection.execute("DELETE FROM tributary_index_fts WHERE rowid = ?", [.integer(docid)])
        try connection.execute("INSERT INTO tributary_index_fts(rowid, content) VALUES (?, ?)", [.integer(docid), .string(content)])
    }
}
