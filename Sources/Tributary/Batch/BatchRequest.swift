/// What a batch request reports (Core Data's `resultType` of batch requests).
public enum BatchResultType: Sendable, Equatable {
    /// Success only.
    case statusOnly
    /// The number of rows written.
    case count
    /// The object IDs of the rows written.
    case objectIDs
}

/// The outcome of a batch request.
///
/// ```swift
/// let result = try coordinator.execute(request)
/// print(result.count, result.inserted, result.updated)
/// ```
public struct BatchResult: Sendable, Equatable {
    /// Rows written (inserted, updated or deleted, including cascades for deletes).
    public var count: Int
    /// Rows newly inserted (batch insert).
    public var inserted: Int
    /// Existing rows updated (batch insert matching a unique constraint, or batch update).
    public var updated: Int
    /// Rows deleted, cascades included (batch delete).
    public var deleted: Int
    /// Rows a batch insert gave that were neither inserted nor updated: a trigger of an
    /// adopted database's own skipped them (`RAISE(IGNORE)`). Not in ``count``.
    public var ignored: Int
    /// The IDs of the rows written, when the result type asked for them.
    public var objectIDs: [ObjectID]

    /// A result from its parts (for tests and for code that wraps batch requests).
    ///
    /// ```swift
    /// let result = BatchResult(count: 2, inserted: 2, objectIDs: ids)
    /// ```
    public init(count: Int = 0, inserted: Int = 0, updated: Int = 0, deleted: Int = 0, ignored: Int = 0, objectIDs: [ObjectID] = []) {
        self.count = count
        self.inserted = inserted
        self.updated = updated
        self.deleted = deleted
        self.ignored = ignored
        self.objectIDs = objectIDs
    }

    /// Adds the counts and IDs of `part`, one run of a request done in parts.
    mutating func add(_ part: BatchResult) {
        count += part.count
        inserted += part.inserted
        updated += part.updated
        deleted += part.deleted
        ignored += part.ignored
        objectIDs += part.objectIDs
    }
}

/// Inserts many rows in one transaction without loading objects
/// (Core Data's `NSBatchInsertRequest`). Missing values take their defaults;
/// a row matching an existing one on a unique constraint updates it with the
/// values given and leaves its relationships alone.
///
/// ```swift
/// let request = BatchInsertRequest(entityName: "Post", objects: [
///     ["externalID": "p-1", "title": "Hello", "createdAt": .date(Date())],
/// ])
/// let result = try coordinator.execute(request)
/// ```
public struct BatchInsertRequest: Sendable {
    /// The entity inserted into.
    public var entityName: String
    /// One dictionary per row, keyed by attribute or relationship name.
    public var objects: [[String: AttributeValue]]
    /// For the columnar form: the attribute and to-one relationship names, in the order of each row's values.
    public var columns: [String] = []
    /// For the columnar form: one array of values per row, in the order of ``columns``.
    public var rows: [[AttributeValue]] = []
    /// What the result reports.
    public var resultType: BatchResultType = .count
    /// The author and context name recorded with this write's history.
    public var transaction = TransactionMetadata()
    /// For replicas (stream replay): the primary key of each object, parallel to ``objects`` (or to ``rows`` in the columnar form).
    /// When given, each row gets that key and a row already holding it is updated in place,
    /// so the replica keeps the source's object IDs and applying the same insert twice is harmless.
    ///
    /// ```swift
    /// var request = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"]])
    /// request.primaryKeys = [42]   // the row is Tag/p42, as in the source store
    /// ```
    public var primaryKeys: [Int64] = []
    /// Whether a text, number or blob of another class than its attribute's (which no
    /// conversion keeps) is written as given, for SQLite to store by the column's affinity,
    /// instead of refused: replay writes what another program stored in the source (42 in an
    /// untyped column, 'nan' in a `REAL` one) so. History records what the row then holds.
    package var writesValuesAsGiven = false

    /// A batch insert of `objects` into `entityName`.
    public init(entityName: String, objects: [[String: AttributeValue]]) {
        self.entityName = entityName
        self.objects = objects
    }

    /// A columnar batch insert: the same upsert semantics, without a dictionary per row,
    /// for loaders that already have their values in column order (the fastest path).
    ///
    /// ```swift
    /// let request = BatchInsertRequest(entityName: "Tag", columns: ["name", "color"],
    ///                                  rows: [["swift", "orange"], ["sqlite", "blue"]])
    /// ```
    public init(entityName: String, columns: [String], rows: [[AttributeValue]]) {
        self.entityName = entityName
        self.objects = []
        self.columns = columns
        self.rows = rows
    }
}

/// Sets values on every row matching a predicate, without loading objects
/// (Core Data's `NSBatchUpdateRequest`).
///
/// ```swift
/// var request = BatchUpdateRequest(entityName: "Tag", predicate: try StorePredicate(format: "color == nil"))
/// request.propertiesToUpdate = ["color": "gray"]
/// try coordinator.execute(request)
/// ```
public struct BatchUpdateRequest: Sendable {
    /// The entity updated.
    public var entityName: String
    /// Which rows; all when nil.
    public var predicate: StorePredicate?
    /// New values by attribute or to-one relationship name.
    public var propertiesToUpdate: [String: AttributeValue]
    /// What the result reports.
    public var resultType: BatchResultType = .count
    /// The author and context name recorded with this write's history.
    public var transaction = TransactionMetadata()
    /// Only these objects (and the predicate, if any); every row when empty.
    ///
    /// ```swift
    /// var request = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": "red"])
    /// request.objectIDs = [tagID]
    /// ```
    public var objectIDs: [ObjectID] = []
    /// As ``BatchInsertRequest/writesValuesAsGiven``: values of another class than their
    /// attributes' are written as given, not refused (replay).
    package var writesValuesAsGiven = false
    /// Objects to add to a to-many relationship of every updated row, by relationship name
    /// (for replicas applying membership changes; nothing happens for links already there).
    ///
    /// ```swift
    /// var request = BatchUpdateRequest(entityName: "Post")
    /// request.objectIDs = [postID]
    /// request.addedLinks = ["tags": [tagID]]
    /// ```
    public var addedLinks: [String: [ObjectID]] = [:]
    /// Objects to remove from a to-many relationship of every updated row, by relationship name.
    public var removedLinks: [String: [ObjectID]] = [:]

    /// A batch update of the rows of `entityName` matching `predicate`.
    public init(entityName: String, predicate: StorePredicate? = nil, propertiesToUpdate: [String: AttributeValue] = [:]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Deletes every row matching a predicate without loading objects, applying
/// the model's delete rules (Core Data's `NSBatchDeleteRequest`, which does not;
/// Tributary does, so cascades and denies hold on every write path).
///
/// ```swift
/// let request = BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "createdAt < %@", .date(cutoff)))
/// let result = try coordinator.execute(request)   // result.deleted counts cascades too
/// ```
public struct BatchDeleteRequest: Sendable {
    /// The entity deleted from.
    public var entityName: String
    /// Which rows; all when nil.
    public var predicate: StorePredicate?
    /// What the result reports.
    public var resultType: BatchResultType = .count
    /// The author and context name recorded with this write's history.
    public var transaction = TransactionMetadata()
    /// Only these objects (and the predicate, if any); every row when never set. Once
    /// set to a non-empty list, emptying it deletes nothing rather than every row.
    /// Objects already gone are skipped, so deleting twice is harmless.
    ///
    /// ```swift
    /// var request = BatchDeleteRequest(entityName: "Tag")
    /// request.objectIDs = [tagID]
    /// ```
    public var objectIDs: [ObjectID] = [] {
        didSet { deletesOnlyObjectIDs = deletesOnlyObjectIDs || !objectIDs.isEmpty }
    }
    /// Made with ``init(objectIDs:)``: an empty list deletes nothing (Core Data's behaviour), never every row.
    var deletesOnlyObjectIDs = false
    /// Deletes only the rows themselves (and their many-to-many links), applying no delete
    /// rule: replay's, whose stream records every row a rule deleted or cleared as a change of
    /// its own, and whose source may have applied none (another program's delete with SQLite's
    /// foreign keys off, the default, leaves the child rows as they are).
    package var deletesAsRecorded = false

    /// A batch delete of the rows of `entityName` matching `predicate`.
    public init(entityName: String, predicate: StorePredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// A batch delete of these objects, which must all be of one entity (Core Data's
    /// `NSBatchDeleteRequest(objectIDs:)`); an empty list deletes nothing.
    ///
    /// ```swift
    /// let result = try context.execute(BatchDeleteRequest(objectIDs: staleIDs))
    /// ```
    public init(objectIDs: [ObjectID]) {
        self.entityName = objectIDs.first?.entityName ?? ""
        self.predicate = nil
        self.objectIDs = objectIDs
        self.deletesOnlyObjectIDs = true
    }
}
