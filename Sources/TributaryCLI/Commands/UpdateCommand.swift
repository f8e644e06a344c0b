import ArgumentParser
import Tributary

/// `tributary update STORE --entity E (--where PRED | --all) --set key=value… [--set-null key…] [--dry-run]`: a batch update.
struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Set values on every row matching a predicate (a batch update).",
        discussion: """
            Give --where PREDICATE, or --all to update every row. --set key=value stores the text \
            as the attribute's type (--set title= stores an empty string); --set-null key stores NULL. \
            --dry-run counts the rows that would change and writes nothing.
            Example: tributary update blog.sqlite --entity Tag --where "name == 'swift'" --set color=orange --set-null note
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions
    @OptionGroup var scope: BatchScopeOptions

    @OptionGroup var writeMetadata: WriteMetadataOptions

    @Option(name: .customLong("set"), help: "key=value to set; repeat for several.")
    var assignments: [String] = []

    @Option(name: .customLong("set-null"), help: "An attribute or to-one relationship to set to NULL; repeat for several.")
    var nulls: [String] = []

    func validate() throws {
        guard !assignments.isEmpty || !nulls.isEmpty else { throw ValidationError("give at least one --set key=value or --set-null key") }
        for assignment in assignments where !assignment.contains("=") {
            throw ValidationError("--set \(assignment) is not key=value (for NULL, use --set-null \(assignment))")
        }
        try scope.validate(predicate: entityOptions.predicate, verb: "update")
    }

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: scope.dryRun)
        let entity = try coordinator.requireModel().requireEntity(entityOptions.entity)
        let values = try self.values(for: entity)
        let predicate = try entityOptions.parsedPredicate()
        if scope.dryRun {
            let count = try BatchScopeOptions.count(coordinator, entity: entity.name, predicate: predicate)
            Console.print("would update \(Plural.counted(count, "\(entity.name) row")) (dry run; nothing written)")
            return
        }
        var request = BatchUpdateRequest(entityName: entity.name, predicate: predicate, propertiesToUpdate: values)
        request.transaction = writeMetadata.metadata(context: "update")
        let result = try coordinator.execute(request)
        Console.print("updated \(Plural.counted(result.count, "\(entity.name) row"))")
    }

    /// The values of `--set` and `--set-null`, parsed as the entity's types.
    private func values(for entity: EntityDescription) throws -> [String: AttributeValue] {
        func unknown(_ key: String, _ option: String) -> TributaryError {
            TributaryError(.unknownProperty, "\(entity.name) has no attribute '\(key)'", location: option, hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
        }
        var values: [String: AttributeValue] = [:]
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = parts[0]
            let text = parts.count > 1 ? parts[1] : ""
            if let attribute = entity.attribute(named: key) {
                do {
                    values[key] = text.isEmpty && attribute.isOptional && attribute.type != .string ? .null : try AttributeValue.parse(text, as: attribute.type)
                } catch let error as TributaryError {
                    throw TributaryError(error.code, "--set \(key): \(error.message)", hint: error.hint)
                }
            } else if entity.relationship(named: key) != nil {
                values[key] = text.isEmpty ? .null : .string(text)
            } else {
                throw unknown(key, "--set \(assignment)")
            }
        }
        for key in nulls {
            guard entity.attribute(named: key) != nil || entity.relationship(named: key) != nil else { throw unknown(key, "--set-null \(key)") }
            if values[key] != nil { throw TributaryError(.invalidInput, "\(key) is given by both --set and --set-null", location: "--set-null \(key)", hint: "give one of them") }
            values[key] = .null
        }
        return values
    }
}
