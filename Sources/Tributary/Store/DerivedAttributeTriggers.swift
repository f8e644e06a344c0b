/// The SQLite triggers that keep derived attributes right. Every derived
/// attribute gets an `AFTER INSERT` trigger on its own table (unless its column
/// default already gives the value), one overruling writers that set it, and
/// `AFTER UPDATE` or `AFTER INSERT/DELETE` triggers on the tables it reads (its
/// own row, a to-one destination, a join table or the destination of a to-many),
/// each running one
/// `UPDATE` that recomputes the value for the rows concerned, guarded by
/// `IS NOT` so that an unchanged value writes nothing (and records no history).
///
/// Triggers run in the statement's transaction, so whatever writes the data
/// (batch requests, context saves, another process through Tributary) updates
/// the derived values with it; the history recorder's pre-update hook sees those
/// writes too. SQLite's `recursive_triggers` is off, so a trigger's own `UPDATE`
/// cannot fire it again; `now()` fires only on updates of stored columns, which
/// the other triggers never write. Cycles are refused by the model's validation.
struct DerivedAttributeTriggers {
    static let namePrefix = "_tributary_derived_"

    let schema: StoreSchema
    /// `Entity.attribute` of the derived columns that have a `DEFAULT` (see ``columnDefault(_:canBeNonConstant:)``).
    var defaulted: Set<String> = []

    /// Replaces the store's derived-attribute triggers with those of `schema`
    /// (after its tables and columns exist). With `temporary`, the triggers are TEMP
    /// triggers of `db` alone: the store's writer runs no stored trigger
    /// (``Connection/disableMainTriggers()``), so it keeps its own copies.
    static func install(on db: Connection, schema: StoreSchema, temporary: Bool = false) throws {
        try uninstall(on: db, temporary: temporary)
        var triggers = DerivedAttributeTriggers(schema: schema)
        for entity in schema.model.entities where entity.attributes.contains(where: \.isDerived) {
            let columns = try db.makeStatement("SELECT name FROM pragma_table_info(?) WHERE dflt_value IS NOT NULL")
            try columns.bind([.string(entity.name)])
            while try columns.step() { triggers.defaulted.insert("\(entity.name).\(columns.string(at: 0))") }
        }
        for sql in triggers.createStatements() {
            try db.execute(temporary ? "CREATE TEMP TRIGGER" + sql.dropFirst("CREATE TRIGGER".count) : sql)
        }
    }

    /// Drops the store's derived-attribute triggers (before a migration renames or drops
    /// what they name; ``install(on:schema:temporary:)`` makes them again after).
    static func uninstall(on db: Connection, temporary: Bool = false) throws {
        var existing: [String] = []
        let master = temporary ? "sqlite_temp_master" : "sqlite_master"
        let names = try db.makeStatement("SELECT name FROM \(master) WHERE type = 'trigger' AND substr(name, 1, \(namePrefix.count)) = ?")
        try names.bind([.string(namePrefix)])
        while try names.step() { existing.append(names.string(at: 0)) }
        for name in existing { try db.execute("DROP TRIGGER \(temporary ? "temp." : "")\(quote(name))") }
    }

    /// The seconds since 1970 of SQLite's current time (fixed within one statement step).
    static let nowSQL = "((julianday('now') - 2440587.5) * 86400.0)"

    /// The column's `DEFAULT` clause: the value a new row starts with, so that an
    /// insert needs no second write (and history no merge) for `@count`, `@sum` and
    /// `now()`. `ALTER TABLE ADD COLUMN` takes constant defaults only, so a migrated
    /// `now()` column has none and its insert trigger sets it.
    static func columnDefault(_ attribute: AttributeDescription, canBeNonConstant: Bool) -> String {
        switch attribute.derivation {
        case .aggregate(.count, _, _), .aggregate(.sum, _, _): return " DEFAULT 0"
        case .now where canBeNonConstant: return " DEFAULT (\(nowSQL))"
        default: return ""
        }
    }

    /// Every trigger of the model, as `CREATE TRIGGER` statements.
    func createStatements() -> [String] {
        schema.model.entities.flatMap { entity in
            entity.attributes.filter(\.isDerived).flatMap { triggers(for: $0, of: entity).map(\.sql) }
        }
    }

    /// An `UPDATE` computing `attribute` for every row of `entity` (for migrations).
    func backfillStatement(for attribute: AttributeDescription, of entity: EntityDescription) -> String {
        recompute(attribute, of: entity, where: "1")
    }

    // MARK: Expressions

    /// The SQL value of `attribute` for a row of `entity`: by default the one named by
    /// the table's own name (in an `UPDATE`), or `NEW` (in a trigger's `WHEN`).
    func valueSQL(_ attribute: AttributeDescription, of entity: EntityDescription, row: String? = nil) -> String {
        let row = row ?? quote(entity.name)
        let table = schema.tables[entity.name]!
        switch attribute.derivation! {
        case .now:
            return Self.nowSQL
        case .copy(let path):
            return copySQL(path, table: table, row: row)
        case .transform(let transform, let path):
            let function = transform == .lowercase ? SQLFunctions.lowercase : SQLFunctions.canonical
            return "\(function)(\(copySQL(path, table: table, row: row)))"
        case .aggregate(let aggregate, let relationship, let attributeName):
            let destination = quote(table.entity.relationship(named: relationship)!.destinationEntity)
            let value = attributeName.map { "s.\(quote($0))" }
            let function: String
            switch aggregate {
            case .count: function = "count(*)"
            case .sum: function = "coalesce(sum(\(value!)), 0)"
            case .min: function = "min(\(value!))"
            case .max: function = "max(\(value!))"
            }
            switch table.storage[relationship]! {
            case .joinTable(let join, let sourceColumn, let destinationColumn):
                let from = value == nil ? "\(quote(join)) AS j" : "\(quote(join)) AS j JOIN \(destination) AS s ON s.\"_pk\" = j.\(quote(destinationColumn))"
                return "(SELECT \(function) FROM \(from) WHERE j.\(quote(sourceColumn)) = \(row).\"_pk\")"
            case .foreignKeyOnDestination(let column):
                return "(SELECT \(function) FROM \(destination) AS s WHERE s.\(quote(column)) = \(row).\"_pk\")"
            case .foreignKeyHere:
                preconditionFailure("validated: aggregates are over to-many relationships")
            }
        }
    }

    private func copySQL(_ path: [String], table: StoreSchema.Table, row: String) -> String {
        if path.count == 1 { return "\(row).\(quote(path[0]))" }
        let destination = quote(table.entity.relationship(named: path[0])!.destinationEntity)
        switch table.storage[path[0]]! {
        case .foreignKeyHere(let column):
            return "(SELECT s.\(quote(path[1])) FROM \(destination) AS s WHERE s.\"_pk\" = \(row).\(quote(column)))"
        case .foreignKeyOnDestination(let column):
            return "(SELECT s.\(quote(path[1])) FROM \(destination) AS s WHERE s.\(quote(column)) = \(row).\"_pk\")"
        case .joinTable:
            preconditionFailure("validated: copies go through to-one relationships")
        }
    }

    /// An `UPDATE` recomputing `attribute` for the rows of `entity` matching `condition`.
    private func recompute(_ attribute: AttributeDescription, of entity: EntityDescription, where condition: String) -> String {
        let column = quote(attribute.name)
        let value = valueSQL(attribute, of: entity)
        let guardSQL = attribute.derivation == .now ? "" : " AND \(quote(entity.name)).\(column) IS NOT \(value)"
        return "UPDATE \(quote(entity.name)) SET \(column) = \(value) WHERE \(condition)\(guardSQL)"
    }

    // MARK: Triggers

    struct Trigger {
        let name: String
        let sql: String
        /// The table it is on, and whether it fires on updates.
        let table: String
        let onUpdate: Bool
    }

    /// The tables with an `UPDATE` trigger: an upsert (`INSERT … ON CONFLICT DO UPDATE`)
    /// into one of them costs about a third more per row even when nothing conflicts,
    /// as SQLite codes the trigger into every insert (measured with SQLite 3.40).
    func tablesWithUpdateTriggers() -> Set<String> {
        Set(schema.model.entities.flatMap { entity in
            entity.attributes.filter(\.isDerived).flatMap { triggers(for: $0, of: entity).filter(\.onUpdate).map(\.table) }
        })
    }

    /// The triggers of one derived attribute.
    func triggers(for attribute: AttributeDescription, of entity: EntityDescription) -> [Trigger] {
        let table = schema.tables[entity.name]!
        let own = quote(entity.name)
        let key = "\(own).\"_pk\""
        let column = quote(attribute.name)
        // On insert, only when the column's default has not already given the value; on an
        // update of the column itself, only when a writer set it (a save writing every
        // column, the sqlite3 shell), which is overruled at once: the triggers' own
        // writes pass this check.
        let differs = "NEW.\(column) IS NOT \(valueSQL(attribute, of: entity, row: "NEW"))"
        let overruleEvent = "UPDATE OF \(column) ON \(own) FOR EACH ROW WHEN \(differs)"
        // (event, table the trigger is on or "" when the event names it, which rows to recompute)
        var events: [(event: String, on: String, condition: String)] = [(overruleEvent, "", "\(key) = NEW.\"_pk\"")]
        // A column default of `now()` is right for a new row: no insert trigger, whose run
        // for every row would cost more than the insert. An aggregate's default (0) is not
        // always: a writer that links rows before inserting their target (a replica
        // replaying a snapshot with the source's keys) needs the insert trigger to count
        // links already there; it writes only when they exist.
        let defaultIsRight: Bool
        switch attribute.derivation! {
        case .now: defaultIsRight = defaulted.contains("\(entity.name).\(attribute.name)")
        default: defaultIsRight = false
        }
        if !defaultIsRight { events.append(("INSERT ON \(own) FOR EACH ROW WHEN \(differs)", "", "\(key) = NEW.\"_pk\"")) }
        func columns(_ names: [String]) -> String { names.map(quote).joined(separator: ", ") }
        switch attribute.derivation! {
        case .now:
            let stored = table.attributes.filter { !$0.isDerived }.map(\.name) + table.foreignKeys.map(\.name)
            if !stored.isEmpty { events.append(("UPDATE OF \(columns(stored))", entity.name, "\(key) = NEW.\"_pk\"")) }
        case .copy(let path), .transform(_, let path):
            if path.count == 1 {
                events.append(("UPDATE OF \(quote(path[0]))", entity.name, "\(key) = NEW.\"_pk\""))
                break
            }
            let destination = table.entity.relationship(named: path[0])!.destinationEntity
            switch table.storage[path[0]]! {
            case .foreignKeyHere(let column):
                let link = "\(own).\(quote(column))"
                events.append(("UPDATE OF \(quote(column))", entity.name, "\(key) = NEW.\"_pk\""))
                events.append(("UPDATE OF \(quote(path[1]))", destination, "\(link) = NEW.\"_pk\""))
                events.append(("DELETE", destination, "\(link) = OLD.\"_pk\""))
            case .foreignKeyOnDestination(let column):
                let link = quote(column)
                events.append(("INSERT", destination, "\(key) = NEW.\(link)"))
                events.append(("UPDATE OF \(columns([column, path[1]]))", destination, "\(key) IN (OLD.\(link), NEW.\(link))"))
                events.append(("DELETE", destination, "\(key) = OLD.\(link)"))
            case .joinTable:
                preconditionFailure("validated: copies go through to-one relationships")
            }
        case .aggregate(_, let relationship, let attributeName):
            let destination = table.entity.relationship(named: relationship)!.destinationEntity
            switch table.storage[relationship]! {
            case .joinTable(let join, let sourceColumn, let destinationColumn):
                let source = quote(sourceColumn)
                events.append(("INSERT", join, "\(key) = NEW.\(source)"))
                events.append(("DELETE", join, "\(key) = OLD.\(source)"))
                events.append(("UPDATE", join, "\(key) IN (OLD.\(source), NEW.\(source))"))
                if let attributeName {
                    events.append(("UPDATE OF \(quote(attributeName))", destination,
                                   "\(key) IN (SELECT j.\(source) FROM \(quote(join)) AS j WHERE j.\(quote(destinationColumn)) = NEW.\"_pk\")"))
                }
            case .foreignKeyOnDestination(let column):
                let link = quote(column)
                events.append(("INSERT", destination, "\(key) = NEW.\(link)"))
                events.append(("DELETE", destination, "\(key) = OLD.\(link)"))
                events.append(("UPDATE OF \(columns([column] + (attributeName.map { [$0] } ?? [])))", destination, "\(key) IN (OLD.\(link), NEW.\(link))"))
            case .foreignKeyHere:
                preconditionFailure("validated: aggregates are over to-many relationships")
            }
        }
        return events.enumerated().map { index, event in
            let name = "\(Self.namePrefix)\(entity.name)_\(attribute.name)_\(index)"
            let body = recompute(attribute, of: entity, where: event.condition)
            let on = event.on.isEmpty ? "" : " ON \(quote(event.on)) FOR EACH ROW"
            return Trigger(name: name, sql: "CREATE TRIGGER \(quote(name)) AFTER \(event.event)\(on) BEGIN \(body); END",
                           table: event.on.isEmpty ? entity.name : event.on, onUpdate: event.event.hasPrefix("UPDATE"))
        }
    }
}
