import ArgumentParser
import Tributary
import TributaryStreams

/// `tributary query STORE --entity E …`: rows as a table, or NDJSON with `--json`.
struct QueryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the rows of an entity matching a predicate.",
        discussion: """
            A table for people: on a terminal, columns are narrowed to its width (cut with …), rows \
            are shown one block each (as psql's \\x) when the columns cannot fit or with --vertical, \
            and output longer than the screen goes through $PAGER (less -FRSX when unset; never \
            when piped). --json prints NDJSON: each row's objectID, its attributes and to-one \
            relationships, and its to-many relationships as lists of object IDs.
            Example: tributary query blog.sqlite --entity Post --where "ANY tags.name == 'swift'" --sort createdAt:desc --limit 5 --json
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "Sort key, key:asc or key:desc; repeat for several.")
    var sort: [String] = []

    @Option(name: .long, help: "At most this many rows (0: all).")
    var limit: Int = 0

    @Flag(name: .long, help: "NDJSON: one object a line.")
    var json = false

    @Flag(name: [.customShort("x"), .long], help: "One block a row, a line a property (psql's \\x).")
    var vertical = false

    @Option(name: .customLong("as-of"), help: "The rows as they were at this token or ISO 8601 date, rebuilt from history (attributes and to-one relationships).")
    var asOf: String?

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit must be 0 or more, not \(limit)") }
        if json && vertical { throw ValidationError("--json and --vertical exclude each other") }
    }

    func run() async throws {
        // As of a token: read-write, so that what other programs wrote is in history first.
        let coordinator = try storeOptions.open(readOnly: asOf == nil)
        let entity = try coordinator.requireModel().requireEntity(entityOptions.entity)
        var request = FetchRequest(entityName: entity.name, predicate: try entityOptions.parsedPredicate())
        request.sortDescriptors = try sort.map { try SortDescriptor(parsing: $0) }
        request.fetchLimit = limit
        if let asOf {
            try printPast(coordinator, request: request, entity: entity, at: try PastPoint.token(asOf, in: coordinator, option: "--as-of"))
            return
        }
        if json {
            try printJSON(coordinator, request: request, entity: entity)
            return
        }
        try printTable(try coordinator.fetch(request), entity: entity)
    }

    /// The rows as of `token`: NDJSON or a table, as for the current rows.
    private func printPast(_ coordinator: PersistentStoreCoordinator, request: FetchRequest, entity: EntityDescription, at token: PersistentHistoryToken) throws {
        let rows = try coordinator.fetch(request, asOf: token)
        if json {
            let marking = BlobMarking(try coordinator.requireModel())
            Console.print(rows.map { RowFormatter.ndjson($0, toMany: [], marking: marking) + "\n" }.joined(), terminator: "")
        } else {
            try printTable(rows, entity: entity)
        }
    }

    private func printTable(_ rows: [FetchedRow], entity: EntityDescription) throws {
        let keys = rows.first?.keys ?? entity.attributes.map(\.name) + entity.relationships.filter { !$0.isToMany }.map(\.name)
        let width = TerminalSize.current?.columns
        var lines = vertical ? nil : RowFormatter.table(rows, keys: keys, width: width)
        if lines == nil { lines = RowFormatter.vertical(rows, keys: keys, width: width) }
        TerminalSize.printPaged((lines ?? []) + ["(\(Plural.counted(rows.count, "\(entity.name) row")))"])
    }

    /// NDJSON in batches; to-many relationships are read through a context, a batch at a time.
    private func printJSON(_ coordinator: PersistentStoreCoordinator, request: FetchRequest, entity: EntityDescription) throws {
        let toMany = entity.relationships.filter(\.isToMany).map(\.name)
        let context = toMany.isEmpty ? nil : ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        let marking = BlobMarking(try coordinator.requireModel())
        try coordinator.enumerate(request) { batch in
            var out = ""
            for row in batch {
                var members: [(String, [ObjectID])] = []
                if let context {
                    let object = try context.object(with: row.objectID)
                    for name in toMany { members.append((name, try object.objectIDs(forRelationshipNamed: name))) }
                }
                out += RowFormatter.ndjson(row, toMany: members, marking: marking)
                out += "\n"
            }
            context?.reset()
            Console.print(out, terminator: "")
        }
    }
}
