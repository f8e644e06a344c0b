import Foundation

/// Other programs wrote to a store with capture since its history last folded their writes:
/// their log rows name the columns as they are now, so an explicit migration that reshapes
/// tables waits until they are folded (``PersistentStore/open(_:model:)`` folds and tries again).
struct ForeignWritesPending: Error {}

extension StoreMetadata {
    /// Applies `migration` in the caller's write transaction: its steps, the derived-attribute
    /// triggers and backfills, and the new model. When the steps reshape tables, the triggers
    /// that name their columns (derived attributes, capture of other programs' writes) are
    /// dropped first, as SQLite will not drop or rename a column a trigger uses, and installed
    /// again for the new model after. Any failure throws, and the caller's transaction rolls
    /// back every step.
    static func apply(_ migration: ModelMigration, on db: Connection, storeID: UUID, waitsForCapture: Bool = true) throws {
        let schema = StoreSchema(model: migration.model)
        let captured = try migration.reshapesTables && hasCapture(on: db)
        if migration.reshapesTables {
            let (canDrop, version) = Connection.canDropColumns
            guard canDrop else {
                throw TributaryError(.incompatibleModel, "this migration needs SQLite 3.35 or newer (ALTER TABLE DROP COLUMN); this is SQLite \(version)", hint: "migrate the store on a system with a newer SQLite")
            }
            if try captured && waitsForCapture && hasUnfoldedWrites(on: db) { throw ForeignWritesPending() }
            try DerivedAttributeTriggers.uninstall(on: db)
            if captured { try CaptureInstaller.uninstall(on: db) }
        }
        for step in migration.steps { try step.run(on: db, storeID: storeID) }
        try DerivedAttributeTriggers.install(on: db, schema: schema)
        for sql in migration.backfills { try db.execute(sql) }
        if captured {
            try CaptureLog.create(on: db, schema: schema)
            _ = try CaptureInstaller.install(on: db, schema: schema)
        }
        try write(on: db, ["model": String(decoding: migration.model.canonicalJSON(), as: UTF8.self), "modelHash": migration.model.versionHash])
    }

    /// Plans the explicit migration of the store on `db` to `model` and runs it in a
    /// transaction it rolls back: what would change and the SQL, or nil when nothing would.
    /// Every check runs, so a value that does not convert fails here as it would for real.
    static func rehearse(on db: Connection, to model: ManagedObjectModel, place: String) throws -> ModelMigration? {
        do {
            let _: Void = try db.transaction {
                let (identifier, cached) = try readStored(on: db, place: place)
                guard model != cached else { throw Rehearsal(migration: nil) }
                let migration = try plan(from: cached, to: model, place: place, explicit: true)
                guard migration.model != cached else { throw Rehearsal(migration: nil) }
                try apply(migration, on: db, storeID: identifier, waitsForCapture: false)
                throw Rehearsal(migration: migration)
            }
            return nil
        } catch let rehearsal as Rehearsal {
            return rehearsal.migration
        }
    }

    /// Rolls a rehearsal back, carrying its result out.
    private struct Rehearsal: Error {
        let migration: ModelMigration?
    }

    private static func hasCapture(on db: Connection) throws -> Bool {
        try db.hasTable(CaptureLog.tables)
    }

    /// Whether the capture log holds rows not folded into history yet.
    static func hasUnfoldedWrites(on db: Connection) throws -> Bool {
        // A log another program dropped: opening the store makes it again and says so.
        try CaptureLog.hasUnfoldedRowsIfLogged(on: db) ?? true
    }
}
