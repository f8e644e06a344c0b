import ArgumentParser
import Tributary

/// `tributary query STORE --entity E …`: rows as a table, or NDJSON with `--json`.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the rows of an entity matching a predicate.",
        discussion: "Example: tributary query blog.sqlite --entity Post --where \"ANY tags.name == 'swift'\" --sort createdAt:desc --limit 5 --json"
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "Sort key, key:asc or key:desc; repeat for several.")
    var sort: [String] = []

    @Option(name: .long, help: "At most this many rows.")
    var limit: Int = 0

    @Flag(name: .long, help: "NDJSON: one object a line.")
    var json = false

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        var request = FetchRequest(entityName: entityOptions.entity, predicate: try entityOptions.parsedPredicate())
        request.sortDescriptors = try sort.map { try SortDescriptor(parsing: $0) }
        request.fetchLimit = max(0, limit)
        if json {
            try coordinator.enumerate(request) { batch in
                var out = ""
                for row in batch {
                    out += RowFormatter.ndjson(row)
                    out += "\n"
                }
                Console.print(out, terminator: "")
            }
        } else {
            let rows = try coordinator.fetch(request)
            let keys = rows.first?.keys ?? []
            for line in RowFormatter.table(rows, keys: keys) { Console.print(line) }
            Console.print("(\(rows.count) \(rows.count == 1 ? "row" : "rows"))")
        }
    }
}
