import ArgumentParser
import Foundation
import Tributary

/// `tributary history STORE [filters] [--limit N] [--reverse] [--follow] [--oneline | --json | --count]`.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print history transactions and their changes, with values.",
        discussion: """
            Oldest first; --reverse prints the newest first, and --limit N stops after N \
            transactions (with --reverse, the newest N). --oneline prints a line a transaction: \
            token, time, author, context and its changes counted by type. --object URI prints one \
            object's timeline, read through the object index; --follow then keeps printing matching \
            transactions as they commit.
            Example: tributary history blog.sqlite --author importer --entity Post --type update --json
            Example: tributary history blog.sqlite --reverse --limit 20 --oneline
            Example: tributary history blog.sqlite --object tributary://STORE-ID/Post/p42 --follow
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var filters: HistoryFilterOptions

    @Flag(name: .long, help: "Print the number of matching transactions alone.")
    var count = false

    @Flag(name: .long, help: "NDJSON: one transaction a line, with its changes.")
    var json = false

    @Flag(name: .long, help: "One line a transaction: token, time, author, context, changes by type.")
    var oneline = false

    @Option(name: .long, help: "At most this many transactions.")
    var limit: Int?

    @Flag(name: .long, help: "Newest first.")
    var reverse = false

    @Option(name: .customLong("max-changes"), help: "Print at most this many changes of a transaction, then how many more there are.")
    var maxChanges: Int?

    @Flag(name: [.customShort("f"), .long], help: "After the history, keep printing matching transactions as they commit, until SIGINT or SIGTERM.")
    var follow = false

    func validate() throws {
        if let limit, limit < 0 { throw ValidationError("--limit must be 0 or more, not \(limit)") }
        if let maxChanges, maxChanges < 0 { throw ValidationError("--max-changes must be 0 or more, not \(maxChanges)") }
        if json && oneline { throw ValidationError("--json and --oneline exclude each other") }
        if count && (json || oneline || limit != nil || reverse) { throw ValidationError("--count prints a number alone: leave out --json, --oneline, --limit and --reverse") }
        if follow && (count || reverse || limit != nil || filters.through != nil) {
            throw ValidationError("--follow prints from the oldest matching transaction on, without end: leave out --count, --reverse, --limit and --through")
        }
    }

    func run() async throws {
        let coordinator = try storeOptions.openForHistory()
        let filter = try filters.filter(checkedIn: coordinator)
        if count {
            Console.print(String(try coordinator.countHistory(.fetchHistory(withFilter: filter))))
            return
        }
        let head = try coordinator.currentPersistentHistoryToken()
        var bounded = filter
        if follow { bounded.through = head }
        var printed = 0
        let maximum = limit ?? Int.max
        let lines = TransactionJSON(coordinator: coordinator)
        let write: @Sendable ([PersistentHistoryTransaction]) throws -> Void = { [json, oneline, maxChanges] transactions in
            var out = ""
            for transaction in transactions {
                if json {
                    out += try lines.line(transaction) + "\n"
                } else if oneline {
                    out += HistoryFormatter.oneline(transaction) + "\n"
                } else {
                    out += HistoryFormatter.lines(transaction, maxChanges: maxChanges, colour: Console.usesColour).joined(separator: "\n") + "\n"
                }
            }
            Console.print(out, terminator: "")
        }
        if maximum > 0 {
            if reverse {
                try HistoryPages.newestFirst(coordinator, filter: bounded) { transaction in
                    try write([transaction])
                    printed += 1
                    return printed < maximum
                }
            } else {
                var request = PersistentHistoryChangeRequest.fetchHistory(withFilter: bounded)
                request.fetchBatchSize = min(200, maximum)
                do {
                    try coordinator.enumerateHistory(request) { batch in
                        let part = Array(batch.prefix(maximum - printed))
                        try write(part)
                        printed += part.count
                        if printed >= maximum { throw HistoryPages.Enough() }
                    }
                } catch is HistoryPages.Enough {}
            }
        }
        if follow {
            let start = filter.after.map { max($0, head) } ?? head
            let watcher = try HistoryFollowing.watcher(coordinator, filter: filter, after: start)
            try await HistoryFollowing.untilSignalled(watcher, command: "history", write: write)
        } else if printed == 0 && !json {
            Console.print("(0 transactions)")
        }
    }
}
