import Foundation
import Tributary

/// Debezium's change-event envelope (the `payload`, as with `schemas.enable=false`):
/// `before` and `after` rows (with the primary key as `_pk`; an update's rows hold the
/// properties it changed), `source` (connector `tributary`, store, entity as `table`, token,
/// `ts_ms` = commit time, `snapshot`), `op` (c, u, d, r), `ts_ms` = export time (so
/// `ts_ms - source.ts_ms` is the lag), and `transaction` (`id`, `total_order`,
/// `data_collection_order`; null for snapshot reads, as in Debezium). A primary key another
/// program changed is, as in Debezium, a delete of the old key and a create of the new one,
/// linked as Debezium links them in message headers: the delete carries
/// `"__debezium.newkey":{"_pk":7}`, the create `"__debezium.oldkey":{"_pk":1}` (this
/// encoding has no headers, so they are fields of the envelope; there is no tombstone).
/// A table that declares a key other than its object key (an adopted table's text or
/// composite key, ``StreamRecord/key``) keys its rows by rowid as `_pk`, and each record adds
/// `"key":{"email":"ann@example.com"}`: the message key Debezium would give the row, by the
/// declared key's values before an update or a delete and after an insert.
///
/// ```swift
/// var encoder = DebeziumEncoder(clock: { Date() })
/// encoder.encode(record, into: &bytes)
/// // {"before":null,"after":{"_pk":1,"name":"swift"},"source":{…},"op":"c","ts_ms":…,"transaction":{…}}
/// ```
public struct DebeziumEncoder: RecordEncoder {
    private let clock: @Sendable () -> Date
    private var transactionToken: Int64 = -1
    private var perEntity: [String: Int] = [:]
    private var json = JSONWriter()
    private var texts = RecordTexts()

    /// An encoder stamping records with `clock`'s time.
    public init(clock: @escaping @Sendable () -> Date = { Date() }) {
        self.clock = clock
    }

    /// The export time records carry as `ts_ms`.
    func exportTime() -> Date { clock() }

    public mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8]) {
        if record.position.token != transactionToken || record.position.isSnapshot {
            transactionToken = record.position.token
            perEntity.removeAll(keepingCapacity: true)
        }
        let entityOrder = (perEntity[record.entityName] ?? 0) + 1
        perEntity[record.entityName] = entityOrder
        let key = record.objectID.primaryKey
        let properties = record.properties
        json.reset()
        texts.update(for: record)
        json.object { o in
            o.key("before")
            if record.operation == .update || record.operation == .delete {
                o.object { row in
                    row.field("_pk", .integer(key))
                    for property in properties where !property.isMembershipChange && !property.isValueExcluded { row.field(property.name, property.before ?? .null) }
                }
            } else {
                o.value(.null)
            }
            o.key("after")
            if record.operation == .delete {
                o.value(.null)
            } else {
                o.object { row in
                    row.field("_pk", .integer(key))
                    for property in properties where !property.isValueExcluded {
                        if property.isMembershipChange {
                            if record.operation == .update {
                                PersistentHistoryChange.writeMembership(property, to: &row)
                            } else {
                                row.field(property.name, .array(property.added.map { .objectID($0) }))
                            }
                        } else {
                            row.field(property.name, property.after ?? .null)
                        }
                    }
                }
            }
            o.key("source")
            o.object { s in
                DebeziumSchemaChange.writeSource(to: &s, timestamp: record.timestamp, snapshot: record.operation == .read, store: texts.store) { s in
                    s.field("table", record.entityName)
                    s.field("token", texts.token)
                    s.field("index", .integer(Int64(record.position.index)))
                    s.field("author", record.author.map { .string($0) } ?? .null)
                    s.field("contextName", record.contextName.map { .string($0) } ?? .null)
                    if let reason = record.reason { s.field("reason", reason) }
                }
            }
            o.field("op", record.operation.rawValue)
            o.field("ts_ms", .integer(RecordBody.milliseconds(clock())))
            o.key("transaction")
            if record.operation == .read {
                o.value(.null)
            } else {
                o.object { t in
                    t.field("id", texts.token)
                    t.field("total_order", .integer(Int64(record.position.index + 1)))
                    t.field("data_collection_order", .integer(Int64(entityOrder)))
                }
            }
            Self.writeKeyLink("__debezium.oldkey", record.movedFrom, to: &o)
            Self.writeKeyLink("__debezium.newkey", record.movedTo, to: &o)
            PersistentHistoryChange.writeKey(record.key, to: &o)
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }

    /// The key of the other side of a key change, as Debezium's header of that name holds it.
    private static func writeKeyLink(_ name: String, _ id: ObjectID?, to o: inout JSONWriter) {
        guard let id else { return }
        o.key(name)
        o.object { key in key.field("_pk", .integer(id.primaryKey)) }
    }
}
