/// The renames a schema change lists, for copies of the data that follow them by name (a
/// database mirror renames its table and columns, a full-text index its fields).
extension SchemaChange {
    /// Entities renamed, old name → new name (from the change's `renamed entity A to B`).
    ///
    /// ```swift
    /// if let new = change.renamedEntities["Note"] { print("Note is now", new) }
    /// ```
    public var renamedEntities: [String: String] { renames.entities }

    /// Properties renamed, by the entity's new name: old property name → new one (from the
    /// change's `renamed E.a to E.b`).
    ///
    /// ```swift
    /// let titles = change.renamedProperties["Post"] ?? [:]   // ["title": "headline"]
    /// ```
    public var renamedProperties: [String: [String: String]] { renames.properties }

    private var renames: (entities: [String: String], properties: [String: [String: String]]) {
        var entities: [String: String] = [:]
        var properties: [String: [String: String]] = [:]
        for change in changes where change.hasPrefix("renamed ") {
            let words = change.dropFirst("renamed ".count).components(separatedBy: " to ")
            guard words.count == 2 else { continue }
            if words[0].hasPrefix("entity ") {
                entities[String(words[0].dropFirst("entity ".count))] = words[1]
                continue
            }
            let from = words[0].split(separator: ".", maxSplits: 1), to = words[1].split(separator: ".", maxSplits: 1)
            guard from.count == 2, to.count == 2 else { continue }
            properties[String(to[0]), default: [:]][String(from[1])] = String(to[1])
        }
        return (entities, properties)
    }
}
