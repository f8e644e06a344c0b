import Foundation

/// The settings of a `type: fts` sink: a SQLite FTS5 index at `path` of chosen attributes per entity.
///
/// ```swift
/// let settings = FullTextIndexSinkSettings(path: "search.sqlite", entities: ["Post": ["title", "content"]])
/// ```
public struct FullTextIndexSinkSettings: SinkConfiguration, Equatable {
    public static let type = "fts"
    public static let keys = ["path", "entities"]

    /// The index database (`path`).
    public var path: String
    /// The attributes indexed, by entity name as records carry it (`entities`); a list of
    /// ``allAttributes`` alone (`Post: all` in the file) indexes every string attribute of
    /// the entity, up to eight, and those the model gains later.
    public var entities: [String: [String]]

    /// The field list that stands for every string attribute of an entity (`all` in the file).
    public static let allAttributes = "*"

    /// Settings.
    public init(path: String, entities: [String: [String]]) {
        self.path = path
        self.entities = entities
    }

    public init(settings: PipelineSettingsNode) throws {
        let entitiesNode = try settings.required("entities", hint: "add entities: {Post: [title, content]}")
        guard case .mapping(let entityMap) = entitiesNode.content, !entityMap.isEmpty else {
            throw entitiesNode.fail("entities maps each entity to the attributes to index", hint: "write entities: {Post: [title, content]} or {Post: all}")
        }
        var entities: [String: [String]] = [:]
        for (entity, attributes) in entityMap {
            let name = try entity.string()
            if case .scalar = attributes.content, attributes.text == "all" {
                entities[name] = [Self.allAttributes]
                continue
            }
            let list = try attributes.strings()
            guard !list.isEmpty else { throw attributes.fail("no attributes to index", hint: "list at least one attribute") }
            entities[name] = list
        }
        self.init(path: try settings.required("path", hint: "add path: ${TRIBUTARY_OUT}/search.sqlite").string(), entities: entities)
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        FullTextIndexSink(name: sink.name, path: path, entities: entities)
    }
}
