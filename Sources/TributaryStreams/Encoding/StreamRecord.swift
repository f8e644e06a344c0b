import Foundation
import Tributary

/// What a record does to its object: Debezium's `op` letters.
public enum StreamOperation: String, Sendable, Codable, CaseIterable {
    /// An insert (`c`).
    case create = "c"
    /// An update (`u`).
    case update = "u"
    /// A delete (`d`).
    case delete = "d"
    /// A snapshot read (`r`): the object as it was when the snapshot was taken.
    case read = "r"

    /// The name used by the native and CloudEvents encodings.
    public var name: String {
        switch self {
        case .create: return "insert"
        case .update: return "update"
        case .delete: return "delete"
        case .read: return "read"
        }
    }

    /// The operation of a history change type.
    public init(_ type: PersistentHistoryChangeType) {
        switch type {
        case .insert: self = .create
        case .update: self = .update
        case .delete: self = .delete
        }
    }
}

/// One change (or snapshot object) on its way into a stream, with its transaction's
/// token, time, author, context name and reason.
///
/// ```swift
/// let record = StreamRecord(change: change, transaction: transaction)
/// var bytes: [UInt8] = []
/// NativeEncoder().encode(record, into: &bytes)
/// ```
public struct StreamRecord: Sendable, Equatable {
    /// Where the record sits in the stream.
    public var position: StreamPosition
    /// The source store's ID.
    public var storeID: UUID
    /// When the transaction committed (the snapshot's time for reads).
    public var timestamp: Date
    /// The transaction's author.
    public var author: String?
    /// The transaction's context name.
    public var contextName: String?
    /// Why the transaction was made (`TransactionMetadata.reason`), when its writer said.
    public var reason: String?
    /// What happened.
    public var operation: StreamOperation
    /// The object.
    public var objectID: ObjectID
    /// The properties: `after` for inserts and reads, `before` and `after` for updates,
    /// `before` for deletes; to-many membership changes as `added`/`removed`.
    public var properties: [PropertyChange]
    /// For an insert continuing an object another program moved to a new primary key, the
    /// object's ID before (`PersistentHistoryChange.movedFrom`); nil otherwise. Native and
    /// CloudEvents records carry it as `movedFrom`, Debezium's as `__debezium.oldkey`.
    ///
    /// ```swift
    /// if let old = record.movedFrom { print("\(old.uriRepresentation) is now \(record.objectID.uriRepresentation)") }
    /// ```
    public var movedFrom: ObjectID?
    /// For a delete of an object another program moved to a new primary key, the object's ID
    /// after (`PersistentHistoryChange.movedTo`); nil otherwise. Native and CloudEvents records
    /// carry it as `movedTo`, Debezium's as `__debezium.newkey`.
    public var movedTo: ObjectID?
    /// The row's key as its table declares it, when that is not the object's key
    /// (`PersistentHistoryChange.key`: an adopted table's text or composite key): its values
    /// after an insert, before an update or a delete; empty for every other entity. Native and
    /// CloudEvents records carry it as `key`, Debezium's as `key` beside the envelope's fields
    /// (the message key Debezium gives a table keyed by those columns). Properties left out of
    /// the stream are left out of it too.
    ///
    /// ```swift
    /// if let email = record.key["email"] { print("\(record.operation.name) of \(email)") }
    /// ```
    public var key: [String: AttributeValue] = [:]
    /// The chain hash of the record's transaction (`HistoryChangeView.chainHash`), on the
    /// record that completes its transaction in a pipeline's delivery and nil on the others: a
    /// hash at token T vouches for the history through T, so a sink records it only once every
    /// record of T it receives is delivered. In memory only: no stream format encodes it (the
    /// NATS sink sends it as a header, the PostgreSQL sink in its checkpoint row, an exported
    /// stream in its manifest).
    public var chainHash: [UInt8]?
    /// The entity's name in the source's model, when a pipeline's `rename` transform gave the
    /// record another; nil otherwise. Encoders mark blobs (``BlobMarking``) by the model's name.
    package var renamedFrom: String?

    /// A record.
    public init(position: StreamPosition, storeID: UUID, timestamp: Date, author: String?, contextName: String?,
                operation: StreamOperation, objectID: ObjectID, properties: [PropertyChange], reason: String? = nil) {
        self.position = position
        self.reason = reason
        self.storeID = storeID
        self.timestamp = timestamp
        self.author = author
        self.contextName = contextName
        self.operation = operation
        self.objectID = objectID
        self.properties = properties
    }

    /// The record of a history change.
    public init(change: PersistentHistoryChange, timestamp: Date, author: String?, contextName: String?, reason: String? = nil) {
        self.init(position: StreamPosition(token: change.token.value, index: change.index), storeID: change.changedObjectID.storeID,
                  timestamp: timestamp, author: author, contextName: contextName,
                  operation: StreamOperation(change.changeType), objectID: change.changedObjectID, properties: change.properties, reason: reason)
        movedFrom = change.movedFrom
        movedTo = change.movedTo
        key = change.key
    }

    /// The record of the history change `view` reads in place, without the properties
    /// `excluded` names (`name` for every entity, `Entity.name` for one).
    ///
    /// ```swift
    /// try coordinator.enumerateHistoryChanges(request) { view in records.append(try StreamRecord(view)) }
    /// ```
    public init(_ view: HistoryChangeView, excluding excluded: Set<String> = []) throws {
        let change = try view.copy()
        self.init(position: StreamPosition(token: view.token.value, index: view.index), storeID: change.changedObjectID.storeID, timestamp: view.timestamp,
                  author: view.author, contextName: view.contextName, operation: StreamOperation(view.changeType), objectID: change.changedObjectID,
                  properties: Self.keeping(change.properties, of: view.entityName, excluding: excluded), reason: view.reason)
        movedFrom = change.movedFrom
        movedTo = change.movedTo
        key = Self.keeping(change.key, of: view.entityName, excluding: excluded)
    }

    /// The record (op `r`) of a snapshot object at `position`, read at `timestamp`: its
    /// properties and its declared ``key`` as an insert's record carries them.
    ///
    /// ```swift
    /// try coordinator.enumerateSnapshot(begin: { token = $0 }) { object in
    ///     records.append(StreamRecord(snapshot: object, position: StreamPosition(token: token.value, index: records.count, isSnapshot: true), timestamp: now))
    /// }
    /// ```
    public init(snapshot object: SnapshotObject, position: StreamPosition, timestamp: Date, excluding excluded: Set<String> = []) {
        self.init(position: position, storeID: object.objectID.storeID, timestamp: timestamp, author: nil, contextName: nil, operation: .read,
                  objectID: object.objectID, properties: Self.keeping(object.properties, of: object.objectID.entityName, excluding: excluded))
        key = Self.keeping(object.key, of: object.objectID.entityName, excluding: excluded)
    }

    private static func keeping(_ properties: [PropertyChange], of entity: String, excluding excluded: Set<String>) -> [PropertyChange] {
        excluded.isEmpty ? properties : properties.filter { !isExcluded($0.name, of: entity, excluded) }
    }

    private static func keeping(_ key: [String: AttributeValue], of entity: String, excluding excluded: Set<String>) -> [String: AttributeValue] {
        excluded.isEmpty ? key : key.filter { !isExcluded($0.key, of: entity, excluded) }
    }

    private static func isExcluded(_ name: String, of entity: String, _ excluded: Set<String>) -> Bool {
        excluded.contains(name) || excluded.contains("\(entity).\(name)")
    }

    /// The token, printed as history prints it.
    public var token: PersistentHistoryToken { PersistentHistoryToken(value: position.token, storeID: storeID) }

    /// The deterministic event ID: store ID, token and index (`r` before the index for
    /// snapshot reads). The CloudEvents `id`, and the idempotence key of every sink.
    /// Written by ``EventIDWriter``, which sinks use to append it as bytes.
    public var eventID: String {
        var writer = EventIDWriter()
        var bytes: [UInt8] = []
        writer.append(self, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The entity's name.
    public var entityName: String { objectID.entityName }

    /// The entity's name in the source's model: ``entityName`` unless a transform renamed it.
    package var modelEntityName: String { renamedFrom ?? entityName }
}
