import Foundation
import Tributary
import TributaryStreams

/// The fields a pipeline indexes as the source's model changes (issue 23). An entity listed
/// with `all` indexes every string attribute: the ones the model gains are added as fields
/// (after those already indexed, up to ``columns``). A renamed attribute keeps its column
/// under its new name and a renamed entity its slot, so the documents already indexed stay
/// found and are updated in place. The fields in force are kept per pipeline in the index.
extension FullTextIndex {
    /// The fields pipeline `pipeline` indexes: those kept when it last ran with the same
    /// `configured` lists, else `configured` with `all` read from `model`.
    func fields(of pipeline: String, configured: [String: [String]], model: ManagedObjectModel) throws -> [String: [String]] {
        let statement = try connection.makeStatement("SELECT configured, fields FROM tributary_fts_fields WHERE pipeline = ?")
        defer { statement.reset() }
        try statement.bind([.string(pipeline)])
        guard try statement.step(), statement.string(at: 0) == (try Self.text(configured)) else {
            return configured.reduce(into: [:]) { fields, entry in
                fields[entry.key] = Self.indexesAll(entry.value) ? Self.stringAttributes(of: entry.key, in: model, after: []) : entry.value
            }
        }
        guard let fields = try? JSONDecoder().decode([String: [String]].self, from: Data(statement.string(at: 1).utf8)) else {
            throw TributaryError(.invalidInput, "the fields of pipeline \(pipeline) cannot be read", location: path,
                                 hint: "delete the index and run the pipeline with a new consumer to rebuild it")
        }
        return fields
    }

    /// Follows `record`: renames the slots of renamed entities, renames fields, adds the new
    /// string attributes of entities listed with `all`, keeps the fields and moves the
    /// pipeline's position to the record, in one transaction (a crash leaves all or none).
    /// Returns the fields; `fields` itself, writing nothing, when none changed.
    func follow(_ record: SchemaRecord, fields: [String: [String]], configured: [String: [String]], pipeline: String) throws -> [String: [String]] {
        let change = record.change
        var next: [String: [String]] = [:]
        for (entity, attributes) in fields {
            let name = change.renamedEntities[entity] ?? entity
            let properties = change.renamedProperties[name] ?? [:]
            let renamed = attributes.map { properties[$0] ?? $0 }
            let listedAs = configured[entity] ?? configured[name] ?? []
            next[name] = Self.indexesAll(listedAs) ? Self.stringAttributes(of: name, in: change.model, after: renamed) : renamed
        }
        // The index's entities the change renames, whatever the fields (the pipeline file may
        // name the new entity already: it stopped at the rename and was changed).
        let renamedSlots = change.renamedEntities.filter { old, _ in slots[old].flatMap { slotEntities[$0]?.store } == record.storeID }
        guard next != fields || !renamedSlots.isEmpty else { return fields }
        let kept = (slots, slotEntities)
        do {
            try connection.transaction {
                for (old, new) in renamedSlots.sorted(by: { $0.key < $1.key }) { try renameSlot(old, to: new) }
                try connection.execute("INSERT INTO tributary_fts_fields(pipeline, configured, fields) VALUES (?, ?, ?) ON CONFLICT(pipeline) DO UPDATE SET configured = excluded.configured, fields = excluded.fields",
                                       [.string(pipeline), .string(try Self.text(configured)), .string(try Self.text(next))])
                try setPosition(record.position, of: pipeline)
            }
        } catch {
            (slots, slotEntities) = kept
            throw error
        }
        return next
    }

    /// Whether a configured list stands for every string attribute.
    static func indexesAll(_ list: [String]) -> Bool { list == [FullTextIndexSinkSettings.allAttributes] }

    /// `indexed` followed by the entity's other string attributes, in the model's order, up
    /// to ``columns`` in all.
    private static func stringAttributes(of entity: String, in model: ManagedObjectModel, after indexed: [String]) -> [String] {
        let added = (model.entity(named: entity)?.attributes ?? []).filter { $0.type == .string && !indexed.contains($0.name) }.map(\.name)
        return Array((indexed + added).prefix(columns))
    }

    /// Gives entity `old`'s slot to its new name `new`: its documents are `new`'s objects.
    private func renameSlot(_ old: String, to new: String) throws {
        guard let slot = slots[old] else { return }
        guard slots[new] == nil else {
            throw TributaryError(.invalidInput, "entity \(old) was renamed to \(new), which the index already holds", location: path,
                                 hint: "delete the index and run the pipeline with a new consumer to rebuild it")
        }
        try connection.execute("UPDATE tributary_fts_entities SET entity = ? WHERE slot = ?", [.string(new), .integer(slot)])
        slots[old] = nil
        slots[new] = slot
        slotEntities[slot]?.entity = new
    }

    private static func text(_ fields: [String: [String]]) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return String(decoding: try encoder.encode(fields), as: UTF8.self)
    }
}
