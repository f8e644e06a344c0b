import ArgumentParser
import Tributary

/// `--all` and `--dry-run`, shared by `update` and `delete`: a batch write names its rows
/// (`--where`) or says it means every row (`--all`), never both, and can be counted first.
struct BatchScopeOptions: ParsableArguments {
    @Flag(name: .long, help: "Every row of the entity (instead of --where).")
    var all = false

    @Flag(name: .customLong("dry-run"), help: "Count the rows that would change; write nothing.")
    var dryRun = false

    /// Refuses a write that names no rows, or names them twice.
    func validate(predicate: String?, verb: String) throws {
        if predicate == nil && !all {
            throw ValidationError("give --where PREDICATE, or --all to \(verb) every row")
        }
        if predicate != nil && all {
            throw ValidationError("--all and --where exclude each other: --all \(verb)s every row, --where only the rows matching it")
        }
    }

    /// The number of rows of `entity` matching `predicate` (all when nil).
    static func count(_ coordinator: PersistentStoreCoordinator, entity: String, predicate: StorePredicate?) throws -> Int {
        try coordinator.count(for: FetchRequest(entityName: entity, predicate: predicate))
    }
}
