import ArgumentParser
import Foundation
import Tributary

/// `tributary migrate STORE --model NEW.yml [--dry-run]`: migrates a store beyond additions.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Migrate a store to a new model: renames (renamedFrom:), removals and type conversions, in one transaction.",
        discussion: """
            What opening a store does not: entities, attributes and relationships renamed with \
            renamedFrom: keep their rows and values; those the new model lacks are dropped; types \
            SQLite can convert (integer to double, string to integer when every value is a number, …) \
            are converted. One change a line; a change that cannot be made is refused with one line \
            naming it (and the row at fault), and the store stays as it was. Run it while no other \
            program has the store open. An adopted database is never changed.
            Example: tributary migrate blog.sqlite --model model-v2.yml --dry-run --verbose
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "The new YAML model file.")
    var model: String

    @Flag(name: .long, help: "Show what would change, checking every value, and write nothing.")
    var dryRun = false

    @Flag(name: .long, help: "With --dry-run: also print the SQL the migration runs.")
    var verbose = false

    @Flag(name: .long, help: "One JSON object: store, dryRun, changes (and sql with --verbose).")
    var json = false

    func validate() throws {
        if verbose && !dryRun {
            throw TributaryError(.invalidInput, "--verbose prints the SQL of a dry run", hint: "run tributary migrate \(storeOptions.store) --model \(model) --dry-run --verbose")
        }
    }

    func run() async throws {
        let model = try ManagedObjectModel(yamlFile: URL(fileURLWithPath: self.model))
        let plan = try PersistentStoreCoordinator(managedObjectModel: model)
            .migrationPlan(at: storeOptions.url, dryRun: dryRun, busyTimeout: storeOptions.busyTimeout)
        let statements = verbose ? plan.statements : []
        if json {
            var writer = JSONWriter()
            writer.object { o in
                o.field("store", storeOptions.store)
                o.field("dryRun", .bool(dryRun))
                o.field("changes", .array(plan.changes.map { .string($0) }))
                if verbose { o.field("sql", .array(statements.map { .string($0) })) }
            }
            Console.print(writer.text)
            return
        }
        guard !plan.changes.isEmpty else {
            Console.print("nothing to migrate: \(storeOptions.store) has this model")
            return
        }
        for change in plan.changes { Console.print("\(dryRun ? "would migrate" : "migrated"): \(change)") }
        for line in statements { Console.print("  \(line)") }
        let count = Plural.counted(plan.changes.count, "change")
        Console.print(dryRun ? "dry run: \(count), nothing written to \(storeOptions.store)" : "migrated \(storeOptions.store): \(count)")
    }
}
