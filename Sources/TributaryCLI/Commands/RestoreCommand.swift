import ArgumentParser
import Tributary

/// `tributary restore STORE --entity E [--where P] --to TOKEN|DATE [--reason R]`.
struct RestoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Set rows back to how they were at a token or date, as a new transaction recorded in history.",
        discussion: """
            Example: tributary restore blog.sqlite --entity Post --where "title == ''" --to 2024-05-01T12:00:00Z --reason "revert bulk edit"
            Rows that matched then and changed since get their attributes and to-one relationships \
            back; rows deleted since are inserted again (under new object IDs); rows inserted since \
            that match now are deleted. One transaction, author restore: history is never rewritten. \
            Preview with query --as-of.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "The token or ISO 8601 date to go back to.")
    var to: String

    @Option(name: .long, help: "Why, recorded in history with the restoring transaction.")
    var reason: String?

    func run() async throws {
        let coordinator = try storeOptions.open()
        let entity = try coordinator.requireModel().requireEntity(entityOptions.entity)
        let token = try PastPoint.token(to, in: coordinator, option: "--to")
        let result = try coordinator.restore(entityName: entity.name, predicate: try entityOptions.parsedPredicate(), to: token, reason: reason.flatMap { $0.isEmpty ? nil : $0 })
        let parts = [(result.updated, "updated"), (result.reinserted, "inserted again"), (result.deleted, "deleted")].filter { $0.0 > 0 }
        let text = parts.isEmpty ? "nothing to restore: the rows are as they were" : parts.map { "\(Plural.counted($0.0, "\(entity.name) row")) \($0.1)" }.joined(separator: ", ")
        Console.print("restored to \(token): \(text)")
    }
}
