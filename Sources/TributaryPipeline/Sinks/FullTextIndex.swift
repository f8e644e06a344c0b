import Foundation
import Tributary
import TributaryStreams

/// A SQLite FTS5 full-text index of chosen attributes per entity, with the positions of the
/// pipelines that feed it: one document per object (its attributes' text, one per line),
/// searched with bm25 ranking and `snippet()`. One FTS5 table holds every document, its
/// indexed attributes in columns `f0`… in the order the pipeline lists them and its rowid
/// derived from the object's primary key and entity, so inserting, updating one attribute
/// or deleting a document is one statement. Entity and store are kept once per entity
/// slot, not per document: a hit's URI is made from its rowid.
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
        /// Its first indexed attribute's text (the title, when the pipeline lists it first).
        public var title: String = ""
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
    var slots: [String: Int64] = [:]
    /// Each slot's entity and the store its objects are of.
    var slotEntities: [Int64: (entity: String, store: UUID)] = [:]
    /// Statements kept prepared: inserts by number of attributes, the existence check, the delete.
    private var inserts: [Int: Statement] = [:]
    private var exists: Statement?
    private var delete: Statement?

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
            // A database that is not an index (it has tables, none of them the index's) is
            // refused as it is: its journal mode and tables are left alone.
            let foreign = try connection.scalar("SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table') AND NOT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'tributary_fts')")
            if foreign?.integerValue == 1 { throw Self.otherVersion("it has tables, none of them an index's", path: path) }
            if !create, try connection.scalar("SELECT count(*) FROM sqlite_master")?.integerValue == 0 { throw Self.otherVersion("it is empty", path: path) }
            try connection.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
            if create {
                let fields = (0..<Self.columns).map { "f\($0)" }.joined(separator: ", ")
                try connection.execute("""
                    CREATE VIRTUAL TABLE IF NOT EXISTS tributary_fts USING fts5(\(fields), tokenize = 'unicode61 remove_diacritics 2');
                    CREATE TABLE IF NOT EXISTS tributary_fts_entities(slot INTEGER PRIMARY KEY, entity TEXT NOT NULL UNIQUE, store TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS tributary_index_positions(pipeline TEXT PRIMARY KEY, position TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS tributary_index_chains(pipeline TEXT PRIMARY KEY, token INTEGER NOT NULL, hash TEXT NOT NULL);
                    CREATE TABLE IF NOT EXISTS tributary_fts_fields(pipeline TEXT PRIMARY KEY, configured TEXT NOT NULL, fields TEXT NOT NULL);
                    """)
                // Merge segments eight at a time rather than FTS5's four: a pipeline commits at
                // every checkpoint, and merging less often made indexing 15–20% faster while a
                // query still reads a few segments per level.
                try connection.execute("INSERT INTO tributary_fts(tributary_fts, rank) VALUES ('automerge', 8)")
            }
            // Indexes of earlier versions kept entity and object in every document.
            _ = try connection.scalar("SELECT f0 FROM tributary_fts WHERE 0")
            if try connection.scalar("SELECT count(*) FROM pragma_table_info('tributary_fts') WHERE name = 'object'")?.integerValue != 0 {
                throw Self.otherVersion("it keeps an object column per document", path: path)
            }
            try readSlots()
        } catch let error as SQLiteError {
            throw Self.otherVersion(error.message, path: path)
        }
    }

    private static func otherVersion(_ reason: String, path: String) -> TributaryError {
        TributaryError(.invalidInput, "not a full-text index of this version (\(reason))", location: path,
                       hint: "give the path an fts sink writes; an index made by an older Tributary is rebuilt by deleting it and running the pipeline with a new consumer")
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
                SELECT rowid, bm25(tributary_fts) AS rank, snippet(tributary_fts, -1, '[', ']', '…', 12), f0
                FROM tributary_fts WHERE tributary_fts MATCH ? ORDER BY rank LIMIT ?
                """)
            try statement.bind([.string(query), .integer(Int64(limit))])
            var hits: [Hit] = []
            while try statement.step() {
                let (object, entity) = document(rowid: statement.int64(at: 0))
                hits.append(Hit(object: object, entity: entity, rank: statement.double(at: 1), title: statement.string(at: 3), snippet: statement.string(at: 2)))
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
        let statement = try connection.makeStatement("SELECT rowid, \(fields) FROM tributary_fts")
        var documents: [Document] = []
        while try statement.step() {
            let texts = (0..<Self.columns).compactMap { statement.optionalString(at: 1 + $0) }
            let (object, entity) = document(rowid: statement.int64(at: 0))
            documents.append(Document(object: object, entity: entity, content: texts.joined(separator: "\n")))
        }
        return documents.sorted { $0.object < $1.object }
    }

    /// The position pipeline `pipeline` has indexed through, nil when it has not written.
    public func position(of pipeline: String) throws -> StreamPosition? {
        guard let text = try connection.scalar("SELECT position FROM tributary_index_positions WHERE pipeline = ?", [.string(pipeline)])?.stringValue else { return nil }
        return try StreamPosition(parsing: text)
    }

    /// The newest chain point among the records pipeline `pipeline` has indexed, nil for none.
    public func chainPoint(of pipeline: String) throws -> StreamManifest.ChainPoint? {
        let statement = try connection.makeStatement("SELECT token, hash FROM tributary_index_chains WHERE pipeline = ?")
        try statement.bind([.string(pipeline)])
        guard try statement.step() else { return nil }
        return StreamManifest.ChainPoint(token: statement.int64(at: 0), hash: statement.string(at: 1))
    }

    /// Applies records (skipping those at or before the pipeline's position) and moves the
    /// position, in one transaction: the index and its position never disagree, nor the
    /// newest chain point among the records.
    func apply(_ records: [StreamRecord], through: StreamPosition?, pipeline: String, entities: [String: [String]]) throws -> StreamPosition? {
        // Slots given inside a transaction that rolls back are given again on the next try.
        let kept = (slots, slotEntities)
        do {
            return try write(records, through: through, pipeline: pipeline, entities: entities)
        } catch {
            (slots, slotEntities) = kept
            throw error
        }
    }

    private func write(_ records: [StreamRecord], through: StreamPosition?, pipeline: String, entities: [String: [String]]) throws -> StreamPosition? {
        try connection.transaction {
            let stored = try position(of: pipeline)
            var last = stored
            for record in records where stored.map({ record.position > $0 }) ?? true {
                if let attributes = entities[record.entityName], !attributes.isEmpty { try apply(record, attributes: attributes) }
                last = record.position
            }
            if let through, last.map({ through > $0 }) ?? true { last = through }
            if let last, last != stored { try setPosition(last, of: pipeline) }
            if let point = records.last(where: { $0.chainHash != nil }).flatMap(StreamManifest.ChainPoint.init) {
                try connection.execute("INSERT INTO tributary_index_chains(pipeline, token, hash) VALUES (?, ?, ?) "
                                       + "ON CONFLICT(pipeline) DO UPDATE SET token = excluded.token, hash = excluded.hash WHERE excluded.token > token",
                                       [.string(pipeline), .integer(point.token), .string(point.hash)])
            }
            return last
        }
    }

    /// Stores `position` as pipeline `pipeline`'s (inside the caller's transaction).
    func setPosition(_ position: StreamPosition, of pipeline: String) throws {
        try connection.execute("INSERT INTO tributary_index_positions(pipeline, position) VALUES (?, ?) ON CONFLICT(pipeline) DO UPDATE SET position = excluded.position",
                               [.string(pipeline), .string(position.description)])
    }

    /// Checks that `entities` fit the index: at most ``columns`` attributes each.
    static func validate(_ entities: [String: [String]], sink: String) throws {
        for (entity, attributes) in entities where attributes.count > columns {
            throw TributaryError(.invalidInput, "entity \(entity) lists \(attributes.count) attributes; an index takes at most \(columns)", location: "sink \(sink)",
                                 hint: "index at most \(columns) attributes per entity")
        }
    }

    /// The object URI and entity of the document with `rowid`.
    private func document(rowid: Int64) -> (object: String, entity: String) {
        // A slot a writer gave after this index was opened: read the slots again.
        if slotEntities[rowid & 63] == nil { try? readSlots() }
        guard let (entity, store) = slotEntities[rowid & 63] else { return ("", "") }
        return (ObjectID(storeID: store, entityName: entity, primaryKey: rowid >> 6).uriRepresentation, entity)
    }

    /// Reads each slot's entity and store.
    private func readSlots() throws {
        let statement = try connection.makeStatement("SELECT slot, entity, store FROM tributary_fts_entities")
        while try statement.step() {
            guard let store = UUID(uuidString: statement.string(at: 2)) else { throw Self.otherVersion("slot \(statement.int64(at: 0)) names no store", path: path) }
            slots[statement.string(at: 1)] = statement.int64(at: 0)
            slotEntities[statement.int64(at: 0)] = (statement.string(at: 1), store)
        }
    }

    /// The entity's slot, given one on first use (inside the caller's transaction); each
    /// slot holds the objects of one store.
    private func slot(of id: ObjectID) throws -> Int64 {
        if let slot = slots[id.entityName] {
            if let other = slotEntities[slot]?.store, other != id.storeID {
                throw TributaryError(.invalidInput, "the index holds \(id.entityName) objects of store \(other.lowercasedString), not \(id.storeID.lowercasedString)", location: path,
                                     hint: "give each store's pipeline its own index")
            }
            return slot
        }
        let slot = Int64(slots.count)
        guard slot < 64 else {
            throw TributaryError(.invalidInput, "an index holds at most 64 entities", location: path, hint: "index fewer entities, or use one index per group of entities")
        }
        try connection.execute("INSERT INTO tributary_fts_entities(slot, entity, store) VALUES (?, ?, ?)", [.integer(slot), .string(id.entityName), .string(id.storeID.lowercasedString)])
        slots[id.entityName] = slot
        slotEntities[slot] = (id.entityName, id.storeID)
        return slot
    }

    private func apply(_ record: StreamRecord, attributes: [String]) throws {
        let rowid = record.objectID.primaryKey * 64 + (try slot(of: record.objectID))
        if record.operation == .delete {
            try deleteDocument(rowid)
            return
        }
        var values = [AttributeValue](repeating: .null, count: attributes.count + 1)
        values[0] = .integer(rowid)
        var changed: UInt64 = 0
        record.properties.withUnsafeBufferPointer { properties in
            for property in properties where !property.isMembershipChange && !property.isValueExcluded {
                guard let column = attributes.firstIndex(of: property.name) else { continue }
                changed |= 1 << UInt64(column)
                if let value = property.after, !value.isNull { values[column + 1] = .string(value.stringValue ?? value.description) }
            }
        }
        if record.operation == .update {
            // Only the changed attributes; the other columns keep their text.
            let columns = attributes.indices.filter { changed & (1 << UInt64($0)) != 0 }
            guard !columns.isEmpty else { return }
            try connection.execute("UPDATE tributary_fts SET \(columns.map { "f\($0) = ?" }.joined(separator: ", ")) WHERE rowid = ?",
                                   columns.map { values[$0 + 1] } + [.integer(rowid)])
            if connection.changes > 0 { return }
            // An object the index has not seen (its insert came before the pipeline began):
            // a new document from the values the record carries.
        } else if try isIndexed(rowid) {
            // A document already there (its key reused, its delete filtered out): replace it.
            // Asked first because a plain insert is cheaper: `OR REPLACE` makes FTS5 flush.
            try deleteDocument(rowid)
        }
        let insert = try prepared(&inserts[attributes.count],
                                  "INSERT INTO tributary_fts(rowid, \((0..<attributes.count).map { "f\($0)" }.joined(separator: ", "))) VALUES (?\(String(repeating: ", ?", count: attributes.count)))")
        try insert.bind(values)
        try insert.run()
    }

    private func deleteDocument(_ rowid: Int64) throws {
        let delete = try prepared(&self.delete, "DELETE FROM tributary_fts WHERE rowid = ?")
        try delete.bind([.integer(rowid)])
        try delete.run()
    }

    /// The statement kept in `kept` (prepared from `sql` on first use), reset: the sink's
    /// per-record statements skip the connection's cache, which hashes their text each time.
    private func prepared(_ kept: inout Statement?, _ sql: @autoclosure () -> String) throws -> Statement {
        let statement = try kept ?? connection.makeStatement(sql())
        kept = statement
        statement.reset()
        return statement
    }

    /// Whether the index holds a document with `rowid` (a lookup in the FTS5 content table).
    private func isIndexed(_ rowid: Int64) throws -> Bool {
        let exists = try prepared(&self.exists, "SELECT 1 FROM tributary_fts_content WHERE id = ?")
        // Reset after the answer too: a statement left on a row keeps a read snapshot open.
        defer { exists.reset() }
        try exists.bind([.integer(rowid)])
        return try exists.step()
    }
}
