/// The tables and columns of an adopted database that another program renamed, as SQLite's
/// own rewrite of the capture triggers tells them (it moves a table's triggers with it and
/// renames a column in every trigger that names it), read before the triggers are made again.
/// A schema change then says `renamed entity u to u2` and `renamed t.b to t.bb`, as a
/// migration's does, rather than a table or column removed and another added: a sink that
/// applies schema changes (the PostgreSQL mirror) renames them instead of dropping their data.
struct ForeignRenames {
    /// Old table name → new.
    private(set) var tables: [String: String] = [:]
    /// By old table name: old column name → new.
    private(set) var columns: [String: [String: String]] = [:]

    /// The renames the capture triggers of `schema`'s tables show now.
    static func read(on db: Connection, schema: StoreSchema) throws -> ForeignRenames {
        try read(try CaptureInstaller.recorded(on: db, schema: schema), on: db)
    }

    /// The renames the capture triggers of `tables` (as recorded) show now.
    static func read(_ tables: [CapturedTable], on db: Connection) throws -> ForeignRenames {
        var renames = ForeignRenames()
        for table in tables where table.kind == .entity {
            if let now = try CaptureInstaller.currentName(of: table, on: db), now != table.name { renames.tables[table.name] = now }
            let columns = try CaptureInstaller.renamedColumns(of: table, on: db)
            if !columns.isEmpty { renames.columns[table.name] = columns }
        }
        return renames
    }

    /// What changed from `current` to `model`, the renames said as such; nil when there are
    /// none to say (the changes are then worked out as usual).
    func changes(from current: ManagedObjectModel, to model: ManagedObjectModel) -> [String]? {
        guard !tables.isEmpty || !columns.isEmpty,
              let named = try? ManagedObjectModel(entities: model.entities.map(renamedFrom)),
              let renames = try? ModelRenames(from: current, to: named), !renames.isEmpty,
              let before = try? renames.applied(to: current) else { return nil }
        return renames.changes + ModelDifference(from: before, to: model).changes
    }

    /// `entity` with the names another program renamed it and its columns from as their `renamedFrom`.
    private func renamedFrom(_ entity: EntityDescription) -> EntityDescription {
        var entity = entity
        let old = tables.first { $0.value == entity.name }?.key ?? entity.name
        if old != entity.name { entity.renamingIdentifier = old }
        for (from, to) in columns[old] ?? [:] {
            if let j = entity.attributes.firstIndex(where: { $0.name == to }) { entity.attributes[j].renamingIdentifier = from }
            if let j = entity.relationships.firstIndex(where: { $0.name == to }) { entity.relationships[j].renamingIdentifier = from }
        }
        return entity
    }
}
