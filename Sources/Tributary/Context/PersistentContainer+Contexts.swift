extension PersistentContainer {
    /// A new context on a private queue of its own, for work off the interface.
    ///
    /// ```swift
    /// let context = container.newBackgroundContext()
    /// context.transactionAuthor = "importer"
    /// ```
    public func newBackgroundContext() -> ManagedObjectContext {
        ManagedObjectContext(concurrencyType: .privateQueue, coordinator: persistentStoreCoordinator)
    }

    /// Runs `body` with a new background context on its queue.
    ///
    /// ```swift
    /// try await container.performBackgroundTask { context in
    ///     let tag = try context.insertNewObject(forEntityName: "Tag")
    ///     tag["name"] = "swift"
    ///     try context.save()
    /// }
    /// ```
    public func performBackgroundTask<T: Sendable>(_ body: @escaping @Sendable (ManagedObjectContext) throws -> T) async throws -> T {
        let context = newBackgroundContext()
        return try await context.perform { try body(context) }
    }
}
