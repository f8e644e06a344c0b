import Foundation
import Tributary

extension PipelineRunner {
    /// The backoff between steps while the source store stays locked: short, since each
    /// attempt already waited the store's busy timeout.
    static let storeBusyBackoff = Backoff(initial: .milliseconds(100), maximum: .seconds(2))

    /// After a step found the source store locked past its busy timeout (another writer held
    /// it longer): reports it (``Event/storeBusy(error:attempt:)``, a warning) and waits
    /// before the next step. A lock is another writer's business, not the pipeline's end;
    /// but with ``giveUpAfter`` set (`run --once`), a store locked longer than that ends it.
    func storeStayedLocked(_ error: TributaryError, attempt: Int, since: Date) async throws {
        if let giveUpAfter, now().timeIntervalSince(since) >= giveUpAfter { throw error }
        events(.storeBusy(error: error, attempt: attempt))
        try await sleep(Self.storeBusyBackoff.seconds(attempt: attempt, random: random()))
    }
}
