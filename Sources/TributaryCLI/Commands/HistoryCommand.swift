import ArgumentParser
import Tributary

/// `tributary history STORE [filters] [--count] [--json]`.
struct HistoryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "Print history transactions and their changes, with values.",
        discussion: "Example: tributary history blog.sqlite --author importer --entity Post --type update --json"
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var filters: HistoryFilterOptions

    @Flag(name: .long, help: "Print the number of matching transactions alone.")
    var count = false

    @Flag(name: .long, help: "NDJSON: one transaction a line, with its changes.")
    var json = false

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        var request = PersistentHistoryChangeRequest.fetchHistory(withFilter: try filters.filter())
        if count {
            Console.print(String(try coordinator.countHistory(request)))
            return
        }
        request.fetchBatchSize = 200
        try coordinator.enumerateHistory(request) { batch in
            var out = ""
            for transaction in batch {
                if json {
                    out += transaction.jsonLine + "\n"
                } else {
                    out += HistoryFormatter.lines(transaction).joined(separator: "\n") + "\n"
                }
            }
            Console.print(out, terminator: "")
        }
    }
}
