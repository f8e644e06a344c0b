import Tributary

extension PersistentStoreCoordinator {
    /// The open store's model.
    func requireModel() throws -> ManagedObjectModel {
        guard let model = managedObjectModel else {
            throw TributaryError(.invalidInput, "no store is open", hint: "give the path of a store made by tributary init")
        }
        return model
    }

    /// Refuses entity names the model does not have, naming the option and the model's entities,
    /// so that a filter that can never match is not taken for "nothing happened".
    func requireEntities(_ names: [String], option: String) throws {
        let model = try requireModel()
        for name in names {
            do {
                _ = try model.requireEntity(name)
            } catch let error as TributaryError {
                throw error.located(option)
            }
        }
    }

    /// Refuses `--exclude` items (`name` or `Entity.name`) that name no property of the model.
    func requireProperties(_ items: [String], option: String) throws {
        let model = try requireModel()
        for item in items {
            let parts = item.split(separator: ".", maxSplits: 1).map(String.init)
            if parts.count == 2 {
                let entity = try model.requireEntity(parts[0])
                guard entity.propertyNames.contains(parts[1]) else {
                    throw TributaryError(.unknownProperty, "\(entity.name) has no property '\(parts[1])'", location: "\(option) \(item)", hint: "\(entity.name) has \(entity.propertyNames.joined(separator: ", "))")
                }
            } else if !model.entities.contains(where: { $0.propertyNames.contains(item) }) {
                let names = Set(model.entities.flatMap(\.propertyNames)).sorted()
                throw TributaryError(.unknownProperty, "no entity has a property '\(item)'", location: "\(option) \(item)", hint: "the model's properties are \(names.joined(separator: ", "))")
            }
        }
    }
}
