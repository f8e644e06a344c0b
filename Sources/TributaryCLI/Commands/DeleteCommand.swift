import ArgumentParser
import Tributary

/// `tributary delete STORE --entity E --where PRED`: a batch delete with delete rules.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete every row matching a predicate, applying delete rules (a batch delete).",
        discussion: "Example: tributary delete blog.sqlite --entity Post --where \"createdAt < '2024-01-01T00:00:00Z'\""
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "The author recorded in history for this write.")
    var author: String?

    @Flag(name: .long, help: "Delete every row when no --where is given.")
    var all = false

    func validate() throws {
        guard entityOptions.predicate != nil || all else {
            throw ValidationError("give --where PREDICATE, or --all to delete every row")
        }
    }

    func run() async throws {
        let coordinator = try storeOptions.open()
        var request = BatchDeleteRequest(entityName: entityOptions.entity, predicate: try entityOptions.parsedPredicate())
        request.transaction = TransactionMetadata(author: author, contextName: "delete")
        let result = try coordinator.execute(request)
        let cascaded = result.deleted - result.count
        Console.print("deleted \(result.count) \(entityOptions.entity) rows" + (cascaded > 0 ? " and \(cascaded) related rows by cascade" : ""))
    }
}
