import ArgumentParser
import Foundation
import Tributary

/// The history filters shared by `history`, `tail` and `export`.
struct HistoryFilterOptions: ParsableArguments {
    @Option(name: .long, help: "Only transactions after this token.")
    var after: String?

    @Option(name: .long, help: "Only transactions up to and including this token.")
    var through: String?

    @Option(name: .long, help: "Only transactions at or after this date (ISO 8601).")
    var since: String?

    @Option(name: .long, help: "Only transactions before this date (ISO 8601).")
    var until: String?

    @Option(name: .long, help: "Only this author; repeat for several.")
    var author: [String] = []

    @Option(name: .customLong("exclude-author"), help: "Not this author; repeat for several.")
    var excludeAuthor: [String] = []

    @Option(name: .customLong("context-name"), help: "Only this context name; repeat for several.")
    var contextName: [String] = []

    @Option(name: .long, help: "Only changes of this entity; repeat for several.")
    var entity: [String] = []

    @Option(name: .customLong("type"), help: "Only insert, update or delete; repeat for several.")
    var types: [String] = []

    @Option(name: .long, help: "Only changes of this object (its objectID URI, as query --json prints it): its timeline; repeat for several.")
    var object: [String] = []

    @Option(name: .customLong("schema-changes"), help: "Schema transactions (model changes): include (the default), exclude or only.")
    var schemaChanges: String?

    /// The filter, with tokens, dates and types parsed.
    func filter() throws -> HistoryFilter {
        var filter = HistoryFilter()
        filter.after = try after.map { try PersistentHistoryToken(parsing: $0) }
        filter.through = try through.map { try PersistentHistoryToken(parsing: $0) }
        filter.since = try since.map { try Self.date($0, option: "--since") }
        filter.until = try until.map { try Self.date($0, option: "--until") }
        filter.authors = author
        filter.excludedAuthors = excludeAuthor
        filter.contextNames = contextName
        filter.entities = entity
        filter.objectIDs = try object.map { try ObjectArgument.parse($0, option: "--object") }
        if let schemaChanges {
            guard let value = SchemaChangeFilter(rawValue: schemaChanges.lowercased()) else {
                throw TributaryError(.invalidInput, "unknown value '\(schemaChanges)'", location: "--schema-changes", hint: "use include, exclude or only")
            }
            filter.schemaChanges = value
        }
        filter.changeTypes = try types.map { text in
            guard let type = PersistentHistoryChangeType(rawValue: text.lowercased()) else {
                throw TributaryError(.invalidInput, "unknown change type '\(text)'", location: "--type", hint: "use insert, update or delete")
            }
            return type
        }
        return filter
    }

    /// The filter, with its entity names checked against the store's model (a name the model
    /// lacks could never match, and would look like "no history").
    func filter(checkedIn coordinator: PersistentStoreCoordinator) throws -> HistoryFilter {
        try coordinator.requireEntities(entity, option: "--entity")
        let filter = try filter()
        try ObjectArgument.check(filter.objectIDs, in: coordinator, option: "--object")
        return filter
    }

    static func date(_ text: String, option: String) throws -> Date {
        guard let date = ISO8601.date(from: text) else {
            throw TributaryError(.invalidInput, "'\(text)' is not a date", location: option, hint: "give an ISO 8601 date such as 2024-05-01T12:00:00Z")
        }
        return date
    }
}
