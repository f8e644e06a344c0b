import ArgumentParser
import Tributary
import TributaryStreams

/// `tributary show STORE URI [--as-of TOKEN|DATE] [--json]`: one object.
struct ShowCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "show",
        abstract: "Print one object by its object ID (as query --json prints it), now or as it was at a token or date.",
        discussion: """
            Example: tributary show blog.sqlite tributary://…/Post/p42 --as-of 2024-05-01T12:00:00Z
            A line a property (to-many relationships as lists of object IDs, now only). Its timeline: \\
            tributary history STORE --object URI.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The object's ID, such as tributary://<store>/Post/p42.")
    var object: String

    @Option(name: .customLong("as-of"), help: "The object as it was at this token or ISO 8601 date, rebuilt from history.")
    var asOf: String?

    @Flag(name: .long, help: "One JSON object.")
    var json = false

    func run() async throws {
        // As of a token: read-write, so that what other programs wrote is in history first.
        let coordinator = try storeOptions.open(readOnly: asOf == nil)
        let id = try ObjectArgument.parse(object, option: "URI")
        try ObjectArgument.check([id], in: coordinator, option: "URI")
        let entity = try coordinator.requireModel().requireEntity(id.entityName)
        let token = try asOf.map { try PastPoint.token($0, in: coordinator, option: "--as-of") }
        let rows = try token.map { try coordinator.fetch(FetchRequest(entityName: entity.name), asOf: $0).filter { $0.objectID == id } }
            ?? coordinator.fetch(FetchRequest(entityName: entity.name, predicate: try StorePredicate(format: "SELF == %@", AttributeValue.objectID(id))))
        guard let row = rows.first else {
            throw TributaryError(.objectNotFound, "no \(id)" + (token.map { " as of \($0)" } ?? ""), location: storeOptions.store,
                                 hint: "tributary history \(storeOptions.store) --object \(id) shows its timeline")
        }
        var members: [(String, [ObjectID])] = []
        if token == nil, entity.relationships.contains(where: \.isToMany) {
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let object = try context.object(with: id)
            for relationship in entity.relationships where relationship.isToMany {
                members.append((relationship.name, try object.objectIDs(forRelationshipNamed: relationship.name)))
            }
        }
        if json {
            Console.print(RowFormatter.ndjson(row, toMany: members, marking: BlobMarking(try coordinator.requireModel())))
        } else {
            let lines = RowFormatter.vertical([row], keys: row.keys, width: TerminalSize.current?.columns)
            Console.print((lines + members.map { "\($0.0): \($0.1.map(\.description).joined(separator: " "))" }).joined(separator: "\n"))
        }
    }
}
