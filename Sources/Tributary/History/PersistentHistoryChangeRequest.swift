import Foundation

/// Which history a request covers. Every filter is optional and they combine;
/// author, context name and token range are answered by SQL on indexed columns.
///
/// ```swift
/// var filter = HistoryFilter()
/// filter.after = token
/// filter.excludedAuthors = ["viewer"]
/// filter.entities = ["Post"]
/// ```
public struct HistoryFilter: Sendable, Equatable {
    /// Only transactions after this token.
    public var after: PersistentHistoryToken?
    /// Only transactions up to and including this token.
    public var through: PersistentHistoryToken?
    /// Only transactions committed at or after this date.
    public var since: Date?
    /// Only transactions committed before this date.
    public var until: Date?
    /// Only these authors (empty: any).
    public var authors: [String] = []
    /// Not these authors.
    public var excludedAuthors: [String] = []
    /// Only these context names (empty: any).
    public var contextNames: [String] = []
    /// Only changes of these entities (empty: any).
    public var entities: [String] = []
    /// Only these change types (empty: any).
    public var changeTypes: [PersistentHistoryChangeType] = []
    /// Only changes of these objects (empty: any).
    public var objectIDs: [ObjectID] = []
    /// Whether schema transactions (``PersistentHistoryTransaction/schemaChange``) are
    /// returned: with the others (the default), not at all, or alone. A filter on entities
    /// keeps the schema transactions that changed one of them, and a filter on change types
    /// keeps them all (the changes it returns are read with their model: a stream of inserts
    /// needs the schema records as much as a stream of everything); a filter on objects
    /// leaves them out.
    public var schemaChanges: SchemaChangeFilter = .include

    /// No filter: all kept history.
    public init() {}

    /// Whether schema transactions that pass the SQL filter are kept: a filter on objects
    /// looks for those objects' changes, which they do not have.
    var keepsSchemaTransactions: Bool { objectIDs.isEmpty }

    /// Whether the filter looks inside transactions (entities, types, objects).
    var filtersChanges: Bool { !entities.isEmpty || !changeTypes.isEmpty || !objectIDs.isEmpty }

    func accepts(entity: String, type: PersistentHistoryChangeType) -> Bool {
        (entities.isEmpty || entities.contains(entity)) && (changeTypes.isEmpty || changeTypes.contains(type))
    }
}

/// What a history request returns.
public enum HistoryResultType: Sendable, Equatable {
    /// Transactions with their changes.
    case transactionsAndChanges
    /// Transactions without decoding their changes.
    case transactionsOnly
    /// Changes only.
    case changesOnly
    /// The number of matching transactions.
    case count
    /// The IDs of the objects changed.
    case objectIDs
    /// Nothing but success (for deletes).
    case statusOnly
}

/// A request for history, or to delete it (Core Data's `NSPersistentHistoryChangeRequest`).
///
/// ```swift
/// let request = PersistentHistoryChangeRequest.fetchHistory(after: lastToken)
/// let transactions = try coordinator.fetchHistory(request)
///
/// var filtered = PersistentHistoryChangeRequest.fetchHistory(withFilter: filter)
/// filtered.fetchBatchSize = 500
/// try coordinator.enumerateHistory(filtered) { batch in … }
/// ```
public struct PersistentHistoryChangeRequest: Sendable, Equatable {
    /// What to delete, for a delete request.
    public enum DeleteTarget: Sendable, Equatable {
        /// Everything up to and including this token.
        case token(PersistentHistoryToken)
        /// Everything committed before this date.
        case date(Date)
        /// What every registered consumer has committed; with a maximum age, also
        /// anything older, which expires consumers that have not read it.
        case consumed(maximumAge: TimeInterval?)
    }

    /// Which history.
    public var filter = HistoryFilter()
    /// What to return.
    public var resultType: HistoryResultType = .transactionsAndChanges
    /// Transactions per batch when enumerating; 0 means 500.
    public var fetchBatchSize = 0
    /// Set for delete requests.
    public var deleteTarget: DeleteTarget?

    /// A request with a filter.
    public init(filter: HistoryFilter = HistoryFilter()) {
        self.filter = filter
    }

    /// All history after `token` (all kept history when nil).
    public static func fetchHistory(after token: PersistentHistoryToken?) -> PersistentHistoryChangeRequest {
        var filter = HistoryFilter()
        filter.after = token
        return PersistentHistoryChangeRequest(filter: filter)
    }

    /// All history committed at or after `date`.
    public static func fetchHistory(after date: Date) -> PersistentHistoryChangeRequest {
        var filter = HistoryFilter()
        filter.since = date
        return PersistentHistoryChangeRequest(filter: filter)
    }

    /// All history after `transaction`.
    public static func fetchHistory(after transaction: PersistentHistoryTransaction) -> PersistentHistoryChangeRequest {
        fetchHistory(after: transaction.token)
    }

    /// History matching `filter`.
    public static func fetchHistory(withFilter filter: HistoryFilter) -> PersistentHistoryChangeRequest {
        PersistentHistoryChangeRequest(filter: filter)
    }

    /// Deletes history up to and including `token`.
    public static func deleteHistory(before token: PersistentHistoryToken) -> PersistentHistoryChangeRequest {
        var request = PersistentHistoryChangeRequest()
        request.deleteTarget = .token(token)
        request.resultType = .statusOnly
        return request
    }

    /// Deletes history committed before `date`.
    public static func deleteHistory(before date: Date) -> PersistentHistoryChangeRequest {
        var request = PersistentHistoryChangeRequest()
        request.deleteTarget = .date(date)
        request.resultType = .statusOnly
        return request
    }

    /// Deletes history up to and including `transaction`.
    public static func deleteHistory(before transaction: PersistentHistoryTransaction) -> PersistentHistoryChangeRequest {
        deleteHistory(before: transaction.token)
    }

    /// Deletes what every consumer has committed (Tributary's safe pruning).
    public static func deleteConsumedHistory(maximumAge: TimeInterval? = nil) -> PersistentHistoryChangeRequest {
        var request = PersistentHistoryChangeRequest()
        request.deleteTarget = .consumed(maximumAge: maximumAge)
        request.resultType = .statusOnly
        return request
    }
}
