import ArgumentParser
import Tributary

/// `tributary delete STORE --entity E (--where PRED | --all) [--dry-run]`: a batch delete with delete rules.
struct DeleteCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "delete",
        abstract: "Delete every row matching a predicate, applying delete rules (a batch delete).",
        discussion: """
            Give --where PREDICATE, or --all to delete every row. --dry-run counts the rows that \
            match and writes nothing (rows a cascade rule would also delete are not counted).
            Example: tributary delete blog.sqlite --entity Post --where "createdAt < '2024-01-01T00:00:00Z'"
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions
    @OptionGroup var scope: BatchScopeOptions

    @OptionGroup var writeMetadata: WriteMetadataOptions

    func validate() throws {
        try scope.validate(predicate: entityOptions.predicate, verb: "delete")
    }

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: scope.dryRun)
        let entity = try coordinator.requireModel().requireEntity(entityOptions.entity)
        let predicate = try entityOptions.parsedPredicate()
        if scope.dryRun {
            let count = try BatchScopeOptions.count(coordinator, entity: entity.name, predicate: predicate)
            Console.print("would delete \(Plural.counted(count, "\(entity.name) row")) (dry run; nothing written)")
            return
        }
        var request = BatchDeleteRequest(entityName: entity.name, predicate: predicate)
        request.transaction = writeMetadata.metadata(context: "delete")
        let result = try coordinator.execute(request)
        let cascaded = result.deleted - result.count
        Console.print("deleted \(Plural.counted(result.count, "\(entity.name) row"))" + (cascaded > 0 ? " and \(Plural.counted(cascaded, "related row")) by cascade" : ""))
    }
}
