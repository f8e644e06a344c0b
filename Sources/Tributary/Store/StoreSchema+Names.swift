extension StoreSchema {
    /// Every table and index name the schema gives SQLite, with what it is for.
    func objectNames() -> [(name: String, what: String)] {
        var names: [(name: String, what: String)] = []
        for entity in model.entities {
            names.append((entity.name, "the table of entity \(entity.name)"))
            for relationship in tables[entity.name]?.foreignKeys ?? [] {
                names.append(("\(entity.name)_fk_\(relationship.name)", "the index of \(entity.name).\(relationship.name)"))
            }
            for constraint in entity.uniquenessConstraints {
                names.append(("\(entity.name)_unique_\(constraint.joined(separator: "_"))", "the unique index of \(entity.name) on \(constraint.joined(separator: ", "))"))
            }
            for index in entity.indexes {
                names.append(("\(entity.name)_index_\(index.joined(separator: "_"))", "the index of \(entity.name) on \(index.joined(separator: ", "))"))
            }
            for relationship in entity.relationships {
                guard case .joinTable(let table, "src", _) = tables[entity.name]?.storage[relationship.name], table == "_\(entity.name)_\(relationship.name)" else { continue }
                names.append((table, "the join table of \(entity.name).\(relationship.name)"))
                names.append((table + "_dst", "the index of the join table of \(entity.name).\(relationship.name)"))
            }
        }
        return names
    }

    /// Refuses a model whose tables or indexes SQLite would refuse: a name used twice
    /// (ignoring case, as SQLite does), or one SQLite or Tributary keeps for itself
    /// (`sqlite_…`, `_tributary_…`). Checked before any store is created with the model.
    func checkObjectNames() throws {
        var seen: [String: String] = [:]
        for (name, what) in objectNames() {
            let key = name.lowercased()
            if key.hasPrefix("sqlite_") || key.hasPrefix("_tributary_") {
                throw TributaryError(.invalidModel, "'\(name)', \(what), is a name \(key.hasPrefix("sqlite_") ? "SQLite" : "Tributary") keeps for itself", location: "model",
                                     hint: "rename the entity or property so no name starts with sqlite_ or _tributary_")
            }
            if let other = seen[key] {
                throw TributaryError(.invalidModel, "'\(name)' would name both \(other) and \(what)", location: "model", hint: "rename one of the entities, properties or constraints")
            }
            seen[key] = what
        }
    }
}
