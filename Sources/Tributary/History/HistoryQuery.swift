import Foundation

/// A history filter compiled to SQL over the transactions table.
struct HistoryQuery {
    let whereSQL: String
    let arguments: [AttributeValue]

    /// The filter as SQL; `objectIndex` says whether the store keeps the object timeline
    /// index (``ObjectTimelineIndex``), which an object filter then reads.
    init(_ filter: HistoryFilter, storeID: UUID, objectIndex: Bool = false) throws {
        var clauses: [String] = []
        var arguments: [AttributeValue] = []
        if let after = filter.after {
            try after.check(belongsTo: storeID)
            clauses.append("token > ?")
            arguments.append(.integer(after.value))
        }
        if let through = filter.through {
            try through.check(belongsTo: storeID)
            clauses.append("token <= ?")
            arguments.append(.integer(through.value))
        }
        if let since = filter.since {
            clauses.append("timestamp >= ?")
            arguments.append(.double(since.timeIntervalSince1970))
        }
        if let until = filter.until {
            clauses.append("timestamp < ?")
            arguments.append(.double(until.timeIntervalSince1970))
        }
        func list(_ values: [String]) -> String {
            arguments += values.map { .string($0) }
            return Array(repeating: "?", count: values.count).joined(separator: ", ")
        }
        let sources = HistorySchema.sources
        if !filter.authors.isEmpty { clauses.append("sourceID IN (SELECT id FROM \(sources) WHERE author IN (\(list(filter.authors))))") }
        if !filter.excludedAuthors.isEmpty { clauses.append("sourceID NOT IN (SELECT id FROM \(sources) WHERE author IN (\(list(filter.excludedAuthors))))") }
        switch filter.schemaChanges {
        case .include: break
        case .exclude: clauses.append("sourceID NOT IN (SELECT id FROM \(sources) WHERE processID = \(SchemaHistory.source.processID))")
        case .only: clauses.append("sourceID IN (SELECT id FROM \(sources) WHERE processID = \(SchemaHistory.source.processID))")
        }
        if !filter.contextNames.isEmpty { clauses.append("sourceID IN (SELECT id FROM \(sources) WHERE contextName IN (\(list(filter.contextNames))))") }
        var entities = filter.entities
        if !filter.objectIDs.isEmpty {
            let objectEntities = Set(filter.objectIDs.map(\.entityName))
            entities = entities.isEmpty ? Array(objectEntities).sorted() : entities.filter(objectEntities.contains)
            if entities.isEmpty { clauses.append("0") }
            if objectIndex {
                let (sql, objectArguments) = ObjectTimelineIndex.tokenCondition(for: filter.objectIDs)
                clauses.append(sql)
                arguments += objectArguments
            }
        }
        if !entities.isEmpty {
            clauses.append("(" + entities.map { entity -> String in
                arguments.append(.string(",\(entity),"))
                return "instr(entities, ?) > 0"
            }.joined(separator: " OR ") + ")")
        }
        whereSQL = clauses.isEmpty ? "" : " WHERE " + clauses.joined(separator: " AND ")
        self.arguments = arguments
    }
}
