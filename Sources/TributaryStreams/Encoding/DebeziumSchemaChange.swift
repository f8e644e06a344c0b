import Foundation
import Tributary

/// A schema record as Debezium's schema change event: `source`, `ts_ms`, `databaseName`
/// (the store), `schemaName` (null), `ddl` (what changed, in words: Tributary changes
/// models, not SQL text) and `tableChanges`, one per entity created, altered or dropped,
/// with its key and columns as Debezium describes them (`name`, `jdbcType`, `typeName`,
/// `position`, `optional`; the key is the declared key's columns when the table declares one
/// other than its object key, as the change events' `key` names the row). Tributary's own
/// fields (`position`, `toVersion`, `model`…) follow, so a replica can rebuild the model from
/// the event alone.
enum DebeziumSchemaChange {
    /// The fields every Debezium `source` block of Tributary's starts with (connector, the
    /// commit time, whether a snapshot read, the store as `db`), then `rest`: a change
    /// event's table and position, a schema change event's token.
    static func writeSource(to s: inout JSONWriter, timestamp: Date, snapshot: Bool, store: String, _ rest: (inout JSONWriter) -> Void) {
        s.field("version", "tributary-1")
        s.field("connector", "tributary")
        s.field("name", "tributary")
        s.field("ts_ms", .integer(RecordBody.milliseconds(timestamp)))
        s.field("snapshot", snapshot ? "true" : "false")
        s.field("db", store)
        rest(&s)
    }

    /// Writes the `source` block of a record of a whole transaction (a schema change, a
    /// capture gap): its commit time and token, then `ts_ms`, the export time.
    static func writeTransactionSource(to o: inout JSONWriter, timestamp: Date, token: PersistentHistoryToken, store: String, exportTime: Date) {
        o.key("source")
        o.object { s in writeSource(to: &s, timestamp: timestamp, snapshot: false, store: store) { s in s.field("token", token.description) } }
        o.field("ts_ms", .integer(RecordBody.milliseconds(exportTime)))
    }

    static func write(_ record: SchemaRecord, exportTime: Date, to o: inout JSONWriter) {
        let store = record.storeID.uuidString.lowercased()
        writeTransactionSource(to: &o, timestamp: record.timestamp, token: record.token, store: store, exportTime: exportTime)
        o.field("databaseName", store)
        o.field("schemaName", .null)
        o.field("ddl", record.change.changes.joined(separator: "; "))
        o.key("tableChanges")
        o.array { a in
            for (type, name) in tableChanges(record.change) {
                a.object { t in
                    t.field("type", type)
                    t.field("id", "\"\(store)\".\"\(name)\"")
                    t.key("table")
                    if let entity = record.change.model.entity(named: name), type != "DROP" { writeTable(entity, to: &t) } else { t.value(.null) }
                }
            }
        }
        record.writeBody(to: &o)
    }

    /// The entities the change touches: CREATE for added ones, DROP for removed ones, ALTER
    /// for the others an item of the change is about (`Post.views`, `index Post(title)`,
    /// `Post`; by the item's exact form, so `Details` is not `Order Details`).
    static func tableChanges(_ change: SchemaChange) -> [(String, String)] {
        var result: [(String, String)] = []
        let named = change.namedEntities
        for entity in change.model.entities {
            if change.changes.contains("added entity \(entity.name)") { result.append(("CREATE", entity.name)); continue }
            if named.contains(entity.name) { result.append(("ALTER", entity.name)) }
        }
        for text in change.changes where text.hasPrefix("removed entity ") { result.append(("DROP", String(text.dropFirst("removed entity ".count)))) }
        return result
    }

    private static func writeTable(_ entity: EntityDescription, to t: inout JSONWriter) {
        let key = entity.tableKey ?? "_pk"
        t.object { table in
            table.field("defaultCharsetName", .null)
            table.field("primaryKeyColumnNames", .array(primaryKeyColumns(entity).map { .string($0) }))
            table.key("columns")
            table.array { columns in
                var position = 1
                func column(_ name: String, _ type: AttributeType, optional: Bool) {
                    columns.object { c in
                        c.field("name", name)
                        c.field("jdbcType", .integer(jdbcType(type)))
                        c.field("typeName", type.rawValue.uppercased())
                        c.field("position", .integer(Int64(position)))
                        c.field("optional", .bool(optional))
                    }
                    position += 1
                }
                column(key, .integer, optional: false)
                for attribute in entity.attributes { column(attribute.name, attribute.type, optional: attribute.isOptional) }
                for relationship in entity.relationships where !relationship.isToMany { column(relationship.name, .integer, optional: relationship.isOptional) }
            }
        }
    }

    /// The columns Debezium names as the table's primary key: the declared key's attributes in
    /// key order for a table that declares one other than its object key
    /// (``EntityDescription/declaredKey``, whose values are each change event's `key`), else
    /// the object's key column (the table's key, or `_pk`).
    static func primaryKeyColumns(_ entity: EntityDescription) -> [String] {
        entity.declaredKey.isEmpty ? [entity.tableKey ?? "_pk"] : entity.declaredKey
    }

    /// `java.sql.Types` of an attribute type, as Debezium reports columns.
    static func jdbcType(_ type: AttributeType) -> Int64 {
        switch type {
        case .string, .uuid: return 12      // VARCHAR
        case .integer: return -5            // BIGINT
        case .double: return 8              // DOUBLE
        case .bool: return 16               // BOOLEAN
        case .date: return 93               // TIMESTAMP
        case .binary: return -3             // VARBINARY
        }
    }
}

extension DebeziumEncoder {
    /// A schema record as Debezium's schema change event (`DebeziumSchemaChange`: source, ddl, tableChanges, then the native fields).
    public mutating func encodeSchema(_ record: SchemaRecord, into buffer: inout [UInt8]) {
        var json = JSONWriter()
        json.object { o in DebeziumSchemaChange.write(record, exportTime: exportTime(), to: &o) }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }
}
