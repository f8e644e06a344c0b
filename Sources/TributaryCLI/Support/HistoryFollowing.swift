import Foundation
import Synchronization
import Tributary

/// Following history from the command line (`tail --follow`, `history --follow`): a
/// watcher run until SIGINT or SIGTERM, which end it with status 0.
enum HistoryFollowing {
    /// Runs `watcher`, handing each batch to `write`, until a signal; a consumer that is gone
    /// or expired, history that stopped being tracked or went back (an older copy of the
    /// store put in its place), or a model another process changed (`adopt` again, a
    /// migration: only opening the store again reads it) ends it with that error; other
    /// failures are reported as warnings naming `command` and retried.
    static func untilSignalled(_ watcher: HistoryWatcher, command: String, write: @escaping @Sendable ([PersistentHistoryTransaction]) throws -> Void) async throws {
        let fatal = Mutex<(any Error)?>(nil)
        try await Interruption.cancellingOnSignals {
            await watcher.run(reporting: { event in
                guard case .failed(let failure) = event else { return }
                if let error = failure.error as? TributaryError, [.historyExpired, .unknownConsumer, .historyNotTracked, .incompatibleModel, .historyTampered].contains(error.code) {
                    fatal.withLock { $0 = error }
                    withUnsafeCurrentTask { $0?.cancel() }
                } else {
                    Console.warn("\(command): \(failure.error) (attempt \(failure.attempt), retrying in \(failure.retryIn))")
                }
            }) { batch in try write(batch) }
        }
        if let error = fatal.withLock({ $0 }) { throw error }
    }

    /// A watcher of `filter` from `token` on, in batches of 200.
    static func watcher(_ coordinator: PersistentStoreCoordinator, filter: HistoryFilter, after token: PersistentHistoryToken?, consumer: String? = nil) throws -> HistoryWatcher {
        var configuration = HistoryWatcher.Configuration(consumerName: consumer)
        configuration.filter = filter
        configuration.batchSize = 200
        configuration.startToken = token
        return try HistoryWatcher(coordinator: coordinator, configuration: configuration)
    }
}
