import Foundation

extension PersistentStore {
    /// Runs `body` in a write transaction on the store's writer, for the package's other
    /// modules that keep a small table of their own in the store (the pipelines' status,
    /// `_tributary_pipeline_state`). Tables that are not entities' are not recorded in history.
    package func writeOwnTable<T>(_ body: (Connection) throws -> T) throws -> T {
        try write(TransactionMetadata(), body)
    }

    /// Runs `body` in a read transaction on one of the store's readers (see ``writeOwnTable(_:)``).
    package func readOwnTable<T>(_ body: (Connection) throws -> T) throws -> T {
        try database.read(body)
    }
}
