import Tributary

/// The source's model over spans of tokens, for what is written by it (``BlobMarking``): the
/// model in force at a token, looked up once for the tokens up to the next model change (or
/// the newest token), so that records written without the schema records before them (an
/// export filtered by author or time, `history --json`) are still written by the model they
/// were made under.
///
/// ```swift
/// var spans = ModelSpans(coordinator: coordinator)
/// if let model = spans.model(at: record.position.token) { encoder.use(model) }
/// ```
package struct ModelSpans {
    private let coordinator: PersistentStoreCoordinator
    private var tokens: Range<Int64> = 0..<0

    package init(coordinator: PersistentStoreCoordinator) {
        self.coordinator = coordinator
    }

    /// The model in force at `token` (the store's model where history keeps none) when
    /// `token` is outside the span of the last one returned; nil inside it. Throws what
    /// reading history throws.
    package mutating func model(at token: Int64) throws -> ManagedObjectModel? {
        guard !tokens.contains(token), let store = coordinator.persistentStores.first else { return nil }
        let at = PersistentHistoryToken(value: token, storeID: store.identifier)
        let end = try coordinator.schemaChanges(after: at).first?.token.value ?? coordinator.currentPersistentHistoryToken().value + 1
        let model: ManagedObjectModel
        do {
            model = try coordinator.model(at: at)
        } catch let error as TributaryError where error.code == .historyNotTracked {
            model = store.model
        }
        tokens = token..<max(end, token + 1)
        return model
    }
}
