import Foundation

extension PersistentStoreCoordinator {
    /// Migrates the store at `url` to `model` (by default the coordinator's), beyond what
    /// opening does (Core Data's lightweight migration, with renaming identifiers): renames
    /// entities, attributes and relationships named by `renamedFrom`
    /// (``AttributeDescription/renamingIdentifier``), keeping rows, values and object IDs;
    /// removes what the new model no longer has; converts types SQLite can convert when every
    /// stored value converts (integer to double or string, numeric strings to integer or
    /// double, whole doubles to integer, bool and integer, date and double, uuid and string);
    /// makes attributes required, changes defaults, constraints and indexes; adds what is new. Returns what
    /// it did, one line a change (`renamed Post.body to Post.content`, `removed Post.legacy`,
    /// `changed Post.views from integer to double`), empty when there was nothing to migrate.
    ///
    /// It runs in one SQLite transaction: a change that cannot be made (a value that does not
    /// convert, named by its object ID; a new required attribute without a default) throws one
    /// ``TributaryError`` and leaves the store as it was. With `dryRun`, it runs every step and
    /// check in a transaction it rolls back: the store's file is not written. Run it while no
    /// other program has the store open. An adopted database is refused: Tributary never
    /// changes its tables.
    ///
    /// ```swift
    /// let v2 = try ManagedObjectModel(yamlFile: URL(fileURLWithPath: "model-v2.yml"))
    /// let coordinator = PersistentStoreCoordinator(managedObjectModel: v2)
    /// print(try coordinator.migrateStore(at: url, dryRun: true))   // the plan
    /// try coordinator.migrateStore(at: url)
    /// try coordinator.addPersistentStore(with: PersistentStoreDescription(url: url))
    /// ```
    ///
    /// - Parameters:
    ///   - url: The store file; a missing or empty file is refused (a migration never creates a store).
    ///   - model: The model to migrate to; the coordinator's when nil.
    ///   - dryRun: Plan and check only, writing nothing.
    ///   - busyTimeout: How long to wait for another connection's write lock.
    /// - Returns: The changes, one line each; empty when the store has the model already.
    /// - Throws: ``TributaryError`` with ``TributaryError/Code/incompatibleModel`` for a change
    ///   no migration can make, ``TributaryError/Code/typeMismatch`` or
    ///   ``TributaryError/Code/missingValue`` for the first row that stops one, and the errors
    ///   of opening a store.
    @discardableResult
    public func migrateStore(at url: URL, to model: ManagedObjectModel? = nil, dryRun: Bool = false, busyTimeout: TimeInterval = 5) throws -> [String] {
        try migrationPlan(at: url, to: model, dryRun: dryRun, busyTimeout: busyTimeout).changes
    }

    /// ``migrateStore(at:to:dryRun:busyTimeout:)``, also giving the SQL of a dry run (empty
    /// for a real one) for `tributary migrate --dry-run --verbose`.
    package func migrationPlan(at url: URL, to model: ManagedObjectModel? = nil, dryRun: Bool, busyTimeout: TimeInterval = 5) throws -> (changes: [String], statements: [String]) {
        guard let model = model ?? givenModel else {
            throw TributaryError(.invalidInput, "no model to migrate to", hint: "pass the new model, or make the coordinator with it")
        }
        let path = try Self.existingStorePath(url, busyTimeout: busyTimeout)
        if persistentStores.contains(where: { $0.url.standardizedFileURL.path == path }) {
            throw TributaryError(.invalidInput, "the coordinator has this store open", location: path, hint: "remove it from the coordinator, migrate, then add it again")
        }
        guard dryRun else {
            let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
            description.busyTimeout = busyTimeout
            description.allowsExplicitMigration = true
            let store = try PersistentStore.open(description, model: model)
            defer { store.close() }
            return (store.migrationChanges, [])
        }
        do {
            let db = try Connection(path: path, options: ConnectionOptions(create: false, busyTimeout: busyTimeout))
            if Connection.canDisableMainTriggersOnly { try db.disableMainTriggers() }
            let migration = try StoreMetadata.rehearse(on: db, to: model, place: path)
            return (migration?.changes ?? [], migration?.statements ?? [])
        } catch let error as SQLiteError {
            throw StoreDatabase.translate(error, path: path, timeout: busyTimeout)
        } catch let error as TributaryError where error.location == nil {
            throw error.located(path)
        }
    }

    /// The path of the store file at `url`, refusing one that is missing or empty (a
    /// migration never creates a store).
    private static func existingStorePath(_ url: URL, busyTimeout: TimeInterval) throws -> String {
        guard case .file(let path) = PersistentStoreDescription(url: url).kind else {
            throw TributaryError(.invalidInput, "an in-memory store cannot be migrated by path", location: url.path,
                                 hint: "open it with PersistentStoreDescription.allowsExplicitMigration set instead")
        }
        try ConnectionOptions.checkBusyTimeout(busyTimeout, place: path)
        if let problem = StoreDatabase.fileProblem(path) { throw problem }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        guard let size else {
            throw TributaryError(.fileNotFound, "no store at this path", location: path, hint: "check the path; create a store with tributary init STORE --model MODEL.yml")
        }
        guard size > 0 else {
            throw TributaryError(.notAStore, "an empty file, not a store", location: path, hint: "create the store with tributary init \(path) --model MODEL.yml")
        }
        return path
    }
}
