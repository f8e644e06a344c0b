/// Adds and removes to-many links of rows a ``BatchUpdateRequest`` updated
/// (``BatchUpdateRequest/addedLinks`` and ``BatchUpdateRequest/removedLinks``),
/// inside the writer's transaction. Adding a link already there, or removing one
/// that is not, does nothing, so replicas can apply membership changes twice.
struct LinkEditor {
    private struct Edit {
        let relationship: RelationshipDescription
        let storage: StoreSchema.Storage
        let added: [Int64]
        let removed: [Int64]
        /// Where the destination's rows are written, the condition that such a row is the
        /// object whose key is bound, and its version bump (none on an adopted table).
        let destinationTable: String
        let isTarget: String
        let versionBump: String
    }

    private let edits: [Edit]

    init(table: StoreSchema.Table, added: [String: [ObjectID]], removed: [String: [ObjectID]]) throws {
        var edits: [Edit] = []
        for name in Set(added.keys).union(removed.keys).sorted() {
            guard let relationship = table.entity.relationship(named: name), relationship.isToMany, let storage = table.storage[name] else {
                throw TributaryError(.unknownProperty, "'\(name)' is not a to-many relationship of \(table.name)", location: table.name,
                                     hint: "links are added to and removed from to-many relationships; set to-one relationships as values")
            }
            func keys(_ ids: [ObjectID]?) throws -> [Int64] {
                try (ids ?? []).map { id in
                    guard id.entityName == relationship.destinationEntity else {
                        throw TributaryError(.typeMismatch, "'\(name)' of \(table.name) points to \(relationship.destinationEntity), and \(id) is not one", location: table.name)
                    }
                    return id.primaryKey
                }
            }
            edits.append(Edit(relationship: relationship, storage: storage, added: try keys(added[name]), removed: try keys(removed[name]),
                              destinationTable: table.destinationTable(name, relationship.destinationEntity), isTarget: table.destinationObjectKey(name, "= ?"),
                              versionBump: table.destinationVersionBump(name)))
        }
        self.edits = edits
    }

    var isEmpty: Bool { edits.isEmpty }

    /// Applies every edit to each row of `keys`.
    func apply(to keys: [Int64], on db: Connection) throws {
        for edit in edits {
            for key in keys {
                switch edit.storage {
                case .joinTable(let joinTable, let sourceColumn, let destinationColumn):
                    let columns = "\(quote(sourceColumn)), \(quote(destinationColumn))"
                    for target in edit.removed {
                        try db.execute("DELETE FROM \(quote(joinTable)) WHERE \(quote(sourceColumn)) = ? AND \(quote(destinationColumn)) = ?", [.integer(key), .integer(target)])
                    }
                    for target in edit.added {
                        try db.execute("INSERT OR IGNORE INTO \(quote(joinTable)) (\(columns)) VALUES (?, ?)", [.integer(key), .integer(target)])
                    }
                case .foreignKeyOnDestination(let column):
                    let (destination, isTarget, bump) = (edit.destinationTable, edit.isTarget, edit.versionBump)
                    for target in edit.removed {
                        try db.execute("UPDATE \(destination) SET \(quote(column)) = NULL\(bump) WHERE \(isTarget) AND \(quote(column)) = ?", [.integer(target), .integer(key)])
                    }
                    for target in edit.added {
                        try db.execute("UPDATE \(destination) SET \(quote(column)) = ?\(bump) WHERE \(isTarget) AND \(quote(column)) IS NOT ?", [.integer(key), .integer(target), .integer(key)])
                    }
                case .foreignKeyHere:
                    break
                }
            }
        }
    }
}
