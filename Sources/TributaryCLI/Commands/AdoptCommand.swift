import ArgumentParser
import Foundation
import Tributary

/// `tributary adopt DB`: makes an existing SQLite database a store in place, or undoes it.
struct AdoptCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "adopt",
        abstract: "Make an existing SQLite database a store in place, capturing every program's writes (--undo removes it again).",
        discussion: """
            The database's tables become entities and stay as they are: Tributary adds only its \
            own _tributary_* tables and triggers. A foreign key to another table's INTEGER PRIMARY \
            KEY becomes a to-one relationship. Run it again to pick up tables made since.
            Example: tributary adopt app.db --exclude 'cache_*'
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "A table (or GLOB pattern) to adopt; repeat it; all tables when none is given.")
    var include: [String] = []

    @Option(name: .long, help: "A table (or GLOB pattern) to leave out; repeat it.")
    var exclude: [String] = []

    @Flag(name: .long, help: "Remove every table and trigger adopt added, with the history; the user's tables stay as they are.")
    var undo = false

    func validate() throws {
        if undo, !include.isEmpty || !exclude.isEmpty {
            throw TributaryError(.invalidInput, "--undo takes no --include or --exclude", hint: "run tributary adopt \(storeOptions.store) --undo")
        }
    }

    func run() async throws {
        if undo {
            let removed = try PersistentStoreCoordinator.undoAdoption(at: storeOptions.url, busyTimeout: storeOptions.busyTimeout)
            Console.print("undone \(storeOptions.store): removed \(removed.count) Tributary tables and triggers; the database's own tables are as they were")
            return
        }
        let report = try PersistentStoreCoordinator.adoptDatabase(at: storeOptions.url, options: DatabaseAdoption(include: include, exclude: exclude),
                                                                  busyTimeout: storeOptions.busyTimeout)
        for table in report.tables {
            let new = report.wasAdopted && report.newTables.contains(table.name) ? " (new)" : ""
            let relationships = table.relationships.isEmpty ? "" : ", " + Plural.counted(table.relationships.count, "relationship")
            Console.print("  \(table.name)\(new): key \(table.key), \(Plural.counted(table.attributes.count, "attribute"))\(relationships)")
            for note in table.notes { Console.print("    note: \(note)") }
        }
        for (name, reason) in report.skipped.sorted(by: { $0.key < $1.key }) { Console.print("  \(name): left out, \(reason)") }
        let verb = report.wasAdopted ? "adopted again" : "adopted"
        Console.print("\(verb) \(storeOptions.store): store \(report.storeID), \(Plural.counted(report.tables.count, "table")), history on; writes by every program are recorded")
    }
}
