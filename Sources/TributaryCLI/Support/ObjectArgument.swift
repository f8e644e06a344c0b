import Tributary

/// An object ID given on the command line (`--object`, `show URI`): its URI form, as
/// `query --json` prints it.
enum ObjectArgument {
    /// The object ID `text` names; one line when it is not one.
    static func parse(_ text: String, option: String) throws -> ObjectID {
        guard let id = ObjectID(uriRepresentation: text) else {
            throw TributaryError(.invalidInput, "'\(text)' is not an object ID", location: option, hint: "give a URI such as tributary://<store>/Post/p42, as query --json prints it")
        }
        return id
    }

    /// Refuses an object of another store than the coordinator's, and an entity its model lacks.
    static func check(_ ids: [ObjectID], in coordinator: PersistentStoreCoordinator, option: String) throws {
        try coordinator.requireEntities(ids.map(\.entityName), option: option)
        if let store = coordinator.persistentStores.first?.identifier, let other = ids.first(where: { $0.storeID != store }) {
            throw TributaryError(.invalidInput, "\(other) is an object of another store", location: option, hint: "this store's objects begin tributary://\(store.uuidString.lowercased())/")
        }
    }
}
