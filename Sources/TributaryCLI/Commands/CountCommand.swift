import ArgumentParser
import Tributary

/// `tributary count STORE --entity E [--where PRED]`: the number alone.
struct CountCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "count",
        abstract: "Print the number of rows of an entity matching a predicate.",
        discussion: "Example: tributary count blog.sqlite --entity Post --where \"title CONTAINS[c] 'swift'\""
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        let request = FetchRequest(entityName: entityOptions.entity, predicate: try entityOptions.parsedPredicate())
        Console.print(String(try coordinator.count(for: request)))
    }
}
