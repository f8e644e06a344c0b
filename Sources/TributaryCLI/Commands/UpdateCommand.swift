import ArgumentParser
import Tributary

/// `tributary update STORE --entity E --where PRED --set key=value…`: a batch update.
struct UpdateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "update",
        abstract: "Set values on every row matching a predicate (a batch update).",
        discussion: "Example: tributary update blog.sqlite --entity Tag --where \"name == 'swift'\" --set color=orange"
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var entityOptions: EntityOptions

    @Option(name: .long, help: "The author recorded in history for this write.")
    var author: String?

    @Option(name: .customLong("set"), help: "key=value to set; repeat for several.")
    var assignments: [String] = []

    func validate() throws {
        guard !assignments.isEmpty else { throw ValidationError("give at least one --set key=value") }
        for assignment in assignments where !assignment.contains("=") {
            throw ValidationError("--set \(assignment) is not key=value")
        }
    }

    func run() async throws {
        let coordinator = try storeOptions.open()
        let entity = try coordinator.managedObjectModel!.requireEntity(entityOptions.entity)
        var values: [String: AttributeValue] = [:]
        for assignment in assignments {
            let parts = assignment.split(separator: "=", maxSplits: 1).map(String.init)
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
                throw TributaryError(.unknownProperty, "\(entity.name) has no attribute '\(key)'", location: "--set \(assignment)", hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
            }
        }
        var request = BatchUpdateRequest(entityName: entity.name, predicate: try entityOptions.parsedPredicate(), propertiesToUpdate: values)
        request.transaction = TransactionMetadata(author: author, contextName: "update")
        let result = try coordinator.execute(request)
        Console.print("updated \(result.count) \(entity.name) rows")
    }
}
