/// Checks the model adoption inferred table by table, so that a table whose entity the
/// model would refuse is refused on its own, with its reason and the `--exclude` that
/// leaves it out, like any table adoption cannot take, rather than failing the whole
/// adoption with the model's first complaint.
enum InferredModelCheck {
    /// Each table whose entity (with its relationships) makes the model invalid, with why;
    /// none when the model is valid. Throws the model's error when no table can be blamed.
    static func problems(of entities: [EntityDescription]) throws -> [(table: String, why: String)] {
        guard let whole = failure(entities) else { return [] }
        let blamed: [(table: String, why: String)] = entities.compactMap { entity in
            let near = neighbourhood(of: entity, in: entities)
            guard let error = failure(near), blames(error, entity.name, among: near) else { return nil }
            return (entity.name, "'\(entity.name)' would be an entity the model refuses: \(error.message)\(error.location.map { " (\($0))" } ?? "")")
        }
        guard !blamed.isEmpty else { throw whole }
        return blamed
    }

    /// The model's error for `entities`, or nil when they make a valid model.
    private static func failure(_ entities: [EntityDescription]) -> TributaryError? {
        do {
            _ = try ManagedObjectModel(entities: entities)
            return nil
        } catch let error as TributaryError {
            return error
        } catch {
            return TributaryError(.invalidModel, "\(error)")
        }
    }

    /// `entity` first, then the entities its relationships lead to, each with only the
    /// relationships among them: a model of its own, valid when `entity`'s part is.
    private static func neighbourhood(of entity: EntityDescription, in entities: [EntityDescription]) -> [EntityDescription] {
        let names = Set([entity.name] + entity.relationships.map(\.destinationEntity))
        return ([entity] + entities.filter { $0.name != entity.name && names.contains($0.name) }).map { member in
            var member = member
            member.relationships = member.relationships.filter { names.contains($0.destinationEntity) }
            return member
        }
    }

    /// Whether `error` is about `name`: its place names that entity or one of its properties,
    /// or no other entity of `near` (a problem of the whole, such as SQL object names).
    private static func blames(_ error: TributaryError, _ name: String, among near: [EntityDescription]) -> Bool {
        func names(_ entity: String) -> Bool {
            guard let place = error.location else { return false }
            return place == "entity \(entity)" || place.hasPrefix("\(entity).")
        }
        return names(name) || !near.contains { $0.name != name && names($0.name) }
    }
}
