import Foundation

/// One step of a model migration, run in order inside the migration's one transaction:
/// a statement, or a check whose first row stops the migration (and so rolls back every
/// step before it).
struct MigrationStep {
    /// What stops a migration when its query finds a row: the query returns the row's key
    /// and the value at fault.
    struct Check {
        /// The entity's name in the store now, for the row's object ID.
        let entity: String
        let code: TributaryError.Code
        /// What cannot be done (`cannot change Post.views from string to integer`).
        let message: String
        let hint: String
    }

    /// The statement; for a check, the query.
    let sql: String
    var arguments: [AttributeValue] = []
    var check: Check?
    /// What a constraint failure of the statement means (a unique index over values the
    /// migration changed, or a constraint new to them).
    var refusal: TributaryError?

    init(_ sql: String, _ arguments: [AttributeValue] = [], refusal: TributaryError? = nil) {
        self.sql = sql
        self.arguments = arguments
        self.refusal = refusal
    }

    /// A check: `sql` selects `(key, value)` of the first row that stops the migration.
    init(checking sql: String, _ check: Check) {
        self.sql = sql
        self.check = check
    }

    /// Runs the step; a check that finds a row throws, naming the row by its object ID in
    /// the store `storeID`.
    func run(on db: Connection, storeID: UUID) throws {
        guard let check else {
            do {
                try db.execute(sql, arguments)
            } catch let error as SQLiteError where error.primaryCode == .constraint && refusal != nil {
                throw refusal!
            }
            return
        }
        let statement = try db.makeStatement(sql)
        try statement.bind(arguments)
        guard try statement.step() else { return }
        let id = ObjectID(storeID: storeID, entityName: check.entity, primaryKey: statement.int64(at: 0))
        throw TributaryError(check.code, "\(check.message): \(id.uriRepresentation) holds \(Self.text(statement.value(at: 1)))", hint: check.hint)
    }

    /// A stored value as the error shows it: text in quotes, NULL as `null`.
    private static func text(_ value: AttributeValue) -> String {
        switch value {
        case .null: return "null"
        case .string(let s): return "\"\(s.count > 60 ? s.prefix(60) + "…" : Substring(s))\""
        case .data(let d): return "\(d.count) bytes"
        default: return value.description
        }
    }
}
