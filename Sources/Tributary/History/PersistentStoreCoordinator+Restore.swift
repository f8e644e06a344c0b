import Foundation

/// What ``PersistentStoreCoordinator/restore(entityName:predicate:to:reason:)`` wrote.
public struct RestoreResult: Sendable, Equatable {
    /// Rows whose values were set back.
    public var updated = 0
    /// Rows deleted since the point, inserted again (under new object IDs).
    public var reinserted = 0
    /// Rows inserted since the point that match the predicate now, deleted.
    public var deleted = 0
}

extension PersistentStoreCoordinator {
    /// Sets the rows of `entityName` matching `predicate` back to how they were at `token`,
    /// as one new, normal transaction (author `restore`, with `reason`), recorded in history:
    /// history itself is never rewritten. Rows that matched then and changed since get their
    /// attributes and to-one relationships back; rows deleted since are inserted again, under
    /// new object IDs (or, when a row now holds the same values of a uniqueness constraint,
    /// into that row, so that restoring twice changes nothing the second time); rows
    /// inserted since that match the predicate now are deleted (their delete rules apply).
    /// Derived attributes follow from the values restored.
    ///
    /// ```swift
    /// let yesterday = try coordinator.historyToken(at: Date().addingTimeInterval(-86_400))
    /// try coordinator.restore(entityName: "Post", predicate: StorePredicate(format: "author == 'bob'"), to: yesterday, reason: "revert vandalism")
    /// ```
    @discardableResult
    public func restore(entityName: String, predicate: StorePredicate? = nil, to token: PersistentHistoryToken, reason: String? = nil) throws -> RestoreResult {
        let entity = try requireStore().model.requireEntity(entityName)
        try predicate?.checkEvaluable()
        // Every row as of the token, once: those the predicate matched then are restored.
        let past = try fetch(FetchRequest(entityName: entityName), asOf: token)
        let then = try past.filter { try predicate?.evaluate($0.dictionary) ?? true }
        let existedThen = Set(past.map(\.objectID))
        let now = try fetch(FetchRequest(entityName: entityName))
        let writable = Set(entity.attributes.filter { !$0.isDerived }.map { $0.name } + entity.relationships.filter { !$0.isToMany }.map { $0.name })
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: self)
        context.transactionAuthor = "restore"
        context.transactionReason = reason
        context.writesValuesAsGiven = true
        var result = RestoreResult()
        try context.performAndWait {
            let current = Dictionary(uniqueKeysWithValues: now.map { ($0.objectID, $0) })
            let unique = UniqueRows(now, constraints: entity.uniquenessConstraints)
            var reused: Set<ObjectID> = []
            for row in then {
                if let present = current[row.objectID] ?? unique.match(row) {
                    if present.objectID != row.objectID { reused.insert(present.objectID) }
                    let differing = row.keys.filter { writable.contains($0) && row[$0] != present[$0] }
                    guard !differing.isEmpty else { continue }
                    let object = try context.existingObject(with: present.objectID)
                    for key in differing { try object.setValue(row[key] ?? .null, forKey: key) }
                    result.updated += 1
                } else {
                    let object = try context.insertNewObject(forEntityName: entityName)
                    for key in row.keys where writable.contains(key) && row[key] != .null { try object.setValue(row[key]!, forKey: key) }
                    result.reinserted += 1
                }
            }
            for row in now where !existedThen.contains(row.objectID) && !reused.contains(row.objectID) {
                guard try predicate?.evaluate(row.dictionary) ?? true else { continue }
                context.delete(try context.existingObject(with: row.objectID))
                result.deleted += 1
            }
            guard context.hasChanges else { return }
            try context.save()
        }
        return result
    }
}

/// The current rows by the values of each uniqueness constraint: where a row deleted since
/// the point comes back to when another holds its unique values.
private struct UniqueRows {
    private var byConstraint: [[String]: [[AttributeValue]: FetchedRow]] = [:]

    init(_ rows: [FetchedRow], constraints: [[String]]) {
        for constraint in constraints {
            byConstraint[constraint] = Dictionary(rows.map { row in (constraint.map { row[$0] ?? .null }, row) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// The current row holding `row`'s values of a constraint (NULLs never match).
    func match(_ row: FetchedRow) -> FetchedRow? {
        for (constraint, rows) in byConstraint {
            let values = constraint.map { row[$0] ?? .null }
            if !values.contains(.null), let found = rows[values] { return found }
        }
        return nil
    }
}
