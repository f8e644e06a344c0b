import Foundation

/// A change of a store's model, recorded in its history as a transaction of its own (a
/// *schema transaction*): an additive migration on open, an explicit `tributary migrate`,
/// an adoption run again, or a change another program made to an adopted database's
/// tables (``isDetected``), recorded when Tributary first saw it.
///
/// ```swift
/// for transaction in try coordinator.fetchHistory(.fetchHistory(after: token)) {
///     if let schema = transaction.schemaChange { print(schema.changes, schema.model.entities.map(\.name)) }
/// }
/// ```
public struct SchemaChange: Sendable, Equatable {
    /// The ``ManagedObjectModel/versionHash`` of the model before (nil when not known).
    public let fromVersion: String?
    /// The ``ManagedObjectModel/versionHash`` of the model after.
    public let toVersion: String
    /// What changed, one item a change: `added Post.views`, `added entity Comment`.
    public let changes: [String]
    /// The whole model in force from this transaction on.
    public let model: ManagedObjectModel
    /// Whether another program made the change and Tributary detected it at this
    /// transaction (the change itself happened between the transaction before and this one).
    public let isDetected: Bool

    /// A schema change.
    public init(fromVersion: String?, toVersion: String, changes: [String], model: ManagedObjectModel, isDetected: Bool) {
        self.fromVersion = fromVersion
        self.toVersion = toVersion
        self.changes = changes
        self.model = model
        self.isDetected = isDetected
    }

    /// Whether the change only adds (entities, attributes, relationships, indexes, derived
    /// values recomputed): what a copy of the data can follow without losing anything.
    public var isAdditive: Bool {
        changes.allSatisfy { $0.hasPrefix("added ") || $0.hasPrefix("recomputed ") }
    }

    /// One line for people: the changes, and the versions.
    public var summary: String {
        let versions = "model \(fromVersion ?? "unknown") → \(toVersion)"
        return (changes.isEmpty ? "" : changes.joined(separator: "; ") + " ") + "(\(versions)\(isDetected ? ", made by another program" : ""))"
    }
}

/// Which schema transactions a history request returns.
public enum SchemaChangeFilter: String, Sendable, Equatable, CaseIterable {
    /// Schema transactions with the others (the default).
    case include
    /// No schema transactions.
    case exclude
    /// Schema transactions only.
    case only
}

/// A schema transaction as a follower of history meets it
/// (``PersistentStoreCoordinator/enumerateHistoryChanges(_:schema:gaps:_:)``): its token,
/// time and chain hash, and the change.
public struct SchemaChangeEvent: Sendable, Equatable {
    /// The schema transaction's token.
    public let token: PersistentHistoryToken
    /// When it committed (for a detected change: when Tributary saw it).
    public let timestamp: Date
    /// What changed, and the model after.
    public let change: SchemaChange
    /// The transaction's chain hash, nil when the history is not chained.
    public let chainHash: [UInt8]?

    /// An event.
    public init(token: PersistentHistoryToken, timestamp: Date, change: SchemaChange, chainHash: [UInt8]? = nil) {
        self.token = token
        self.timestamp = timestamp
        self.change = change
        self.chainHash = chainHash
    }
}
