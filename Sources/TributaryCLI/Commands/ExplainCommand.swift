import ArgumentParser
import Tributary

/// `tributary explain STORE --entity E [--where PRED] [--sort KEY:asc|desc]…`: the SQL a
/// fetch compiles to and SQLite's query plan, so a missing index shows as a table scan.
struct ExplainCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Print the SQL a query compiles to and SQLite's plan for it.",
        discussion: """
        A step 'SCAN t0' reads the whole table: add an index (indexes: [[key]] in the model) for the \
        attribute compared. 'SEARCH t0 USING INDEX …' uses one.
        Example: tributary explain blog.sqlite --entity Post --where "createdAt > '2024-01-01T00:00:00Z'" --sort createdAt:desc
        """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "Sort key, key:asc or key:desc; repeat for several.")
    var sort: [String] = []

    @Option(name: .long, help: "At most this many rows.")
    var limit: Int = 0

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        var request = FetchRequest(entityName: entityOptions.entity, predicate: try entityOptions.parsedPredicate())
        request.sortDescriptors = try sort.map { try SortDescriptor(parsing: $0) }
        request.fetchLimit = max(0, limit)
        let explanation = try coordinator.explain(request)
        Console.print("SQL: \(explanation.sql)")
        let arguments = explanation.arguments.map { value -> String in
            if case .string(let text) = value { return "'\(text.replacingOccurrences(of: "'", with: "''"))'" }
            return value.description
        }
        Console.print("Arguments: \(arguments.isEmpty ? "(none)" : arguments.joined(separator: ", "))")
        Console.print(explanation.queryPlanText)
    }
}
