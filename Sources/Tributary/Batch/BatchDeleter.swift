/// Deletes rows by primary key and applies the model's delete rules:
/// nullify clears the other side, cascade deletes it (recursively), deny
/// fails the whole transaction while related rows exist.
struct BatchDeleter {
    let schema: StoreSchema
    /// Rows deleted so far, by entity.
    private(set) var deleted: [String: Set<Int64>] = [:]
    /// Rows the caller deletes in the same transaction, which deny rules need not protect.
    var planned: [String: Set<Int64>] = [:]
    /// False to delete the rows and their many-to-many links only: no deny, cascade or
    /// nullify (``BatchDeleteRequest/deletesAsRecorded``).
    var appliesRules = true

    init(schema: StoreSchema) {
        self.schema = schema
    }

    var deletedCount: Int { deleted.values.reduce(0) { $0 + $1.count } }

    /// Deletes `keys` of `entity` and everything its cascade rules reach.
    mutating func delete(_ keys: [Int64], of entity: String, on db: Connection) throws {
        let table = try schema.table(entity)
        var already = deleted[entity, default: []]
        let fresh = keys.filter { already.insert($0).inserted }
        deleted[entity] = already
        guard !fresh.isEmpty else { return }
        for chunk in stride(from: 0, to: fresh.count, by: 10_000).map({ Array(fresh[$0..<min($0 + 10_000, fresh.count)]) }) {
            try deleteChunk(chunk, table: table, on: db)
        }
    }

    private mutating func deleteChunk(_ keys: [Int64], table: StoreSchema.Table, on db: Connection) throws {
        let list = AttributeValue.keyList(keys)
        let inList = "IN (SELECT value FROM json_each(?))"
        for relationship in table.entity.relationships {
            if !appliesRules {
                // As recorded: the join rows go with the row; children keep their link (a
                // nullify the source made comes as their own update).
                if case .joinTable(let joinTable, let sourceColumn, _) = table.storage[relationship.name]! {
                    try db.execute("DELETE FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) \(inList)", [list])
                }
                continue
            }
            let destination = quote(relationship.destinationEntity)
            // The related rows, as primary keys of the destination.
            let relatedSQL: String
            switch table.storage[relationship.name]! {
            case .foreignKeyHere(let column):
                relatedSQL = "SELECT \(quote(column)) FROM \(quote(table.name)) WHERE \(table.key) \(inList) AND \(quote(column)) IS NOT NULL"
            case .foreignKeyOnDestination(let column):
                relatedSQL = "SELECT \(table.destinationKey(relationship.name)) FROM \(destination) WHERE \(quote(column)) \(inList)"
            case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
                relatedSQL = "SELECT \(quote(destinationColumn)) FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) \(inList)"
            }
            switch relationship.deleteRule {
            case .deny:
                let pending = deleted[relationship.destinationEntity, default: []].union(planned[relationship.destinationEntity, default: []])
                let statement = try db.cachedStatement(relatedSQL)
                try statement.bind([list])
                while try statement.step() {
                    if !pending.contains(statement.int64(at: 0)) {
                        statement.reset()
                        throw TributaryError(.deleteDenied, "cannot delete \(table.name): its '\(relationship.name)' still has \(relationship.destinationEntity) objects and the rule is deny", location: table.name,
                                             hint: "delete or move the related \(relationship.destinationEntity) objects first")
                    }
                }
            case .cascade:
                var related: [Int64] = []
                let statement = try db.cachedStatement(relatedSQL)
                try statement.bind([list])
                while try statement.step() { related.append(statement.int64(at: 0)) }
                try delete(related, of: relationship.destinationEntity, on: db)
            case .nullify:
                break
            }
            // Clear the links that point at the deleted rows.
            switch table.storage[relationship.name]! {
            case .foreignKeyHere:
                break
            case .foreignKeyOnDestination(let column):
                try db.execute("UPDATE \(table.destinationTable(relationship.name, relationship.destinationEntity)) SET \(quote(column)) = NULL\(table.destinationVersionBump(relationship.name)) WHERE \(quote(column)) \(inList)", [list])
            case .joinTable(let joinTable, let sourceColumn, _):
                try db.execute("DELETE FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) \(inList)", [list])
            }
        }
        try db.execute("DELETE FROM \(table.writtenTable) WHERE \(table.objectKey(inList))", [list])
    }
}
