import ArgumentParser
import Foundation
import Tributary

/// `tributary prune STORE (--before TOKEN|DATE | --consumed [--max-age DURATION]) [--dry-run]`.
struct PruneCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune",
        abstract: "Delete old history: before a token or date, or what every consumer has read.",
        discussion: "Example: tributary prune blog.sqlite --consumed --max-age 30d"
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "A token (delete through it) or an ISO 8601 date (delete before it).")
    var before: String?

    @Flag(name: .long, help: "Delete only what every registered consumer has committed.")
    var consumed = false

    @Option(name: .customLong("max-age"), help: "With --consumed: also delete anything older than this (30d, 12h, 15m, 90s), expiring consumers that have not read it.")
    var maxAge: String?

    @Option(name: .customLong("idle-timeout"), help: "With --consumed: ignore consumers that have not committed for this long.")
    var idleTimeout: String?

    @Flag(name: .customLong("dry-run"), help: "Say what would be deleted; delete nothing.")
    var dryRun = false

    func validate() throws {
        if maxAge != nil && !consumed {
            throw ValidationError("--max-age without --consumed: --max-age only widens --consumed; add --consumed, or give --before DATE to prune by date alone")
        }
        if idleTimeout != nil && !consumed { throw ValidationError("--idle-timeout without --consumed: add --consumed") }
        guard (before != nil) != consumed else { throw ValidationError("give either --before TOKEN|DATE or --consumed") }
    }

    func run() async throws {
        let coordinator = try storeOptions.open()
        let request: PersistentHistoryChangeRequest
        if let before {
            if let date = ISO8601.date(from: before) {
                request = .deleteHistory(before: date)
            } else {
                request = .deleteHistory(before: try PersistentHistoryToken(parsing: before))
            }
        } else {
            request = .deleteConsumedHistory(maximumAge: try maxAge.map { try DurationText.seconds(parsing: $0, option: "--max-age") })
        }
        let result = try coordinator.deleteHistory(request, idleTimeout: try idleTimeout.map { try DurationText.seconds(parsing: $0, option: "--idle-timeout") }, dryRun: dryRun)
        let verb = dryRun ? "would delete" : "deleted"
        if result.transactions == 0 {
            Console.print("nothing to prune; history is kept after \(try coordinator.oldestKeptHistoryToken())")
        } else {
            let kept = dryRun ? PersistentHistoryToken(value: result.prunedThrough, storeID: coordinator.persistentStores[0].identifier) : try coordinator.oldestKeptHistoryToken()
            Console.print("\(verb) \(result.transactions) transactions (\(result.changes) changes); history \(dryRun ? "would be" : "is") kept after \(kept)")
        }
        if consumed { try reportHoldingBack(coordinator, dryRun: dryRun, keptAfter: result.transactions == 0 ? nil : result.prunedThrough) }
        if !result.expiredConsumers.isEmpty {
            Console.warn("warning: consumers \(result.expiredConsumers.joined(separator: ", ")) had not read the pruned history and are now expired; resynchronise them from a snapshot")
        }
    }

    /// Names the consumers that keep history from being pruned further: those at the oldest
    /// position among the ones not expired, when that position is behind the current token.
    private func reportHoldingBack(_ coordinator: PersistentStoreCoordinator, dryRun: Bool, keptAfter: Int64?) throws {
        let current = try coordinator.currentPersistentHistoryToken()
        let idle = try idleTimeout.map { try DurationText.seconds(parsing: $0, option: "--idle-timeout") }
        let consumers = try coordinator.historyConsumers(idleTimeout: idle).filter { $0.state != .expired }
        guard let lowest = consumers.map(\.token).min(), lowest < current else { return }
        if let keptAfter, lowest.value < keptAfter { return }
        let holders = consumers.filter { $0.token == lowest }
        let names = holders.map { TerminalText.escaped($0.name) }.joined(separator: ", ")
        let behind = holders.first.map { Plural.counted($0.lagTransactions, "transaction") } ?? ""
        Console.print("history after \(lowest) is kept for consumer \(names) (at \(lowest), \(behind) behind); commit, move or remove it to prune further")
    }
}
