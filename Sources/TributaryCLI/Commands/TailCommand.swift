import ArgumentParser
import Foundation
import Tributary

/// `tributary tail STORE [filters] [-n N] [--follow] [--consumer NAME] [--json]`.
struct TailCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tail",
        abstract: "Print the newest history transactions, and with --follow those that commit from now on.",
        discussion: """
            Without --consumer, prints the last N matching transactions. With --consumer NAME, prints \
            what commits after that consumer's position (a new consumer starts at the current token) \
            and commits the consumer as it prints, so that a restarted tail continues where it stopped. \
            With --follow, keeps printing until interrupted (SIGINT or SIGTERM end it with status 0).
            Example: tributary tail blog.sqlite --follow --consumer audit --exclude-author importer
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var filters: HistoryFilterOptions

    @Option(name: [.customShort("n"), .customLong("lines")], help: "How many of the last matching transactions (not lines) to print first, without --consumer.")
    var count = 10

    @Option(name: .customLong("max-changes"), help: "Print at most this many changes of a transaction, then how many more there are.")
    var maxChanges: Int?

    @Flag(name: [.customShort("f"), .long], help: "Keep printing transactions as they commit, until SIGINT or SIGTERM.")
    var follow = false

    @Option(name: .long, help: "Start after this consumer's position and commit it as transactions are printed.")
    var consumer: String?

    @Flag(name: .long, help: "NDJSON: one transaction a line, with its changes.")
    var json = false

    func validate() throws {
        guard count >= 0 else { throw ValidationError("-n must be 0 or more, not \(count)") }
        if let maxChanges, maxChanges < 0 { throw ValidationError("--max-changes must be 0 or more, not \(maxChanges)") }
        if follow && filters.through != nil { throw ValidationError("--through cannot be combined with --follow, which has no end") }
        if consumer != nil && (filters.after != nil || filters.through != nil) {
            throw ValidationError("--consumer starts after the consumer's own position: leave out --after and --through")
        }
    }

    func run() async throws {
        let coordinator = try consumer == nil ? storeOptions.openForHistory() : storeOptions.open()
        let filter = try filters.filter(checkedIn: coordinator)
        let lines = TransactionJSON(coordinator: coordinator)
        var start: PersistentHistoryToken?
        if consumer == nil {
            let head = try coordinator.currentPersistentHistoryToken()
            try printLast(coordinator, filter: filter, through: head, lines: lines)
            guard follow else { return }
            start = filter.after.map { max($0, head) } ?? head
        }
        let watcher = try HistoryFollowing.watcher(coordinator, filter: filter, after: start, consumer: consumer)
        guard follow else {
            var printed = 0
            try await watcher.deliverPending { batch in
                printed += batch.count
                try write(batch, lines: lines)
            }
            if printed == 0 && !json { Console.print("(0 transactions)") }
            return
        }
        try await HistoryFollowing.untilSignalled(watcher, command: "tail") { try write($0, lines: lines) }
    }

    /// Prints the last `count` transactions matching `filter` up to `through`, oldest first,
    /// reading history backwards a page at a time.
    private func printLast(_ coordinator: PersistentStoreCoordinator, filter: HistoryFilter, through head: PersistentHistoryToken, lines: TransactionJSON) throws {
        guard count > 0 else { return }
        var bounded = filter
        bounded.through = filter.through.map { min($0, head) } ?? head
        var last: [PersistentHistoryTransaction] = []
        try HistoryPages.newestFirst(coordinator, filter: bounded) { transaction in
            last.append(transaction)
            return last.count < count
        }
        try write(Array(last.reversed()), lines: lines)
        if last.isEmpty && !follow && !json { Console.print("(0 transactions)") }
    }

    /// Writes transactions straight to standard output (not through a buffer), before
    /// the consumer is committed, so that a killed tail has printed all it committed.
    private func write(_ transactions: [PersistentHistoryTransaction], lines: TransactionJSON) throws {
        guard !transactions.isEmpty else { return }
        var out = ""
        for transaction in transactions {
            out += json ? try lines.line(transaction) + "\n" : HistoryFormatter.lines(transaction, maxChanges: maxChanges, colour: Console.usesColour).joined(separator: "\n") + "\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }
}
