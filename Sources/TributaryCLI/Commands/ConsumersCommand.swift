import ArgumentParser
import Foundation
import Tributary

/// `tributary consumers STORE [list | add NAME [--at POS] | move NAME --to POS | remove NAME | commit NAME TOKEN]`.
struct ConsumersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumers",
        abstract: "List, add, move, remove or commit history consumers (named, durable positions).",
        discussion: """
            add NAME starts the consumer at --at (default current: it reads only what commits from \
            now on; oldest: all kept history; a token; or a date: from the first transaction committed \
            at or after it). move NAME --to POS puts an existing consumer there (back to re-read, or \
            forward to skip); positions beyond the current token or before the oldest kept history \
            are refused. \(ConsumerTable.lagHelp)
            Examples: tributary consumers blog.sqlite add search-index --at oldest
                      tributary consumers blog.sqlite move search-index --to 2024-05-01T00:00:00Z
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "list, add NAME, move NAME, remove NAME or commit NAME TOKEN.")
    var action: [String] = ["list"]

    @Flag(name: .long, help: "NDJSON for list.")
    var json = false

    @Option(name: .long, help: "With add: where the new consumer starts: oldest, current (the default), a token or an ISO 8601 date.")
    var at: String?

    @Option(name: .long, help: "With move: the new position: oldest, current, a token or an ISO 8601 date.")
    var to: String?

    @Option(name: .customLong("warning-lag"), help: "Transactions behind after which a consumer is lagging.")
    var warningLag: Int = 10_000

    @Option(name: .customLong("idle-timeout"), help: "A consumer that has not committed for this long is expired (30d, 12h…).")
    var idleTimeout: String?

    func validate() throws {
        let verb = action.first ?? "list"
        if at != nil && verb != "add" { throw ValidationError("--at goes with add NAME; to move an existing consumer, use move NAME --to POSITION") }
        if to != nil && verb != "move" { throw ValidationError("--to goes with move NAME") }
        if verb == "move" && to == nil { throw ValidationError("move NAME needs --to oldest|current|TOKEN|DATE") }
        guard warningLag >= 0 else { throw ValidationError("--warning-lag must be 0 or more, not \(warningLag)") }
    }

    func run() async throws {
        let verb = action.first ?? "list"
        let arguments = Array(action.dropFirst())
        func expect(_ count: Int, _ usage: String) throws {
            guard arguments.count == count else { throw ValidationError("usage: tributary consumers STORE \(usage)") }
        }
        switch verb {
        case "list":
            try expect(0, "list")
            try list()
        case "add":
            try expect(1, "add NAME [--at oldest|current|TOKEN|DATE]")
            let coordinator = try storeOptions.open()
            let name = arguments[0]
            if let existing = try coordinator.historyConsumers().first(where: { $0.name == name }) {
                guard at == nil else {
                    throw TributaryError(.invalidInput, "consumer \(TerminalText.escaped(name)) exists, at \(existing.token); add does not move it", location: storeOptions.store,
                                         hint: "move it with: tributary consumers STORE move \(name) --to \(at ?? "POSITION")")
                }
                Console.print("consumer \(TerminalText.escaped(name)) exists, at \(existing.token); left as it is (move NAME --to POSITION moves it)")
                return
            }
            let start = try at.map { try ConsumerPosition.token($0, in: coordinator, option: "--at") }
            let consumer = try coordinator.registerHistoryConsumer(name, startingAt: start.map { .token($0) } ?? .current)
            Console.print("consumer \(TerminalText.escaped(consumer.name)) at \(consumer.token) (\(Plural.counted(consumer.lagTransactions, "transaction")) to read)")
        case "move":
            try expect(1, "move NAME --to oldest|current|TOKEN|DATE")
            let coordinator = try storeOptions.open()
            let before = try coordinator.historyConsumer(named: arguments[0])
            let token = try ConsumerPosition.token(to ?? "current", in: coordinator, option: "--to")
            try coordinator.commitHistoryConsumer(before.name, through: token)
            let after = try coordinator.historyConsumer(named: before.name)
            Console.print("consumer \(TerminalText.escaped(after.name)) moved from \(before.token) to \(after.token) (\(Plural.counted(after.lagTransactions, "transaction")) to read)")
        case "remove":
            try expect(1, "remove NAME")
            try storeOptions.open().removeHistoryConsumer(arguments[0])
            Console.print("removed consumer \(TerminalText.escaped(arguments[0]))")
        case "commit":
            try expect(2, "commit NAME TOKEN")
            try storeOptions.open().commitHistoryConsumer(arguments[0], through: try PersistentHistoryToken(parsing: arguments[1]))
            Console.print("consumer \(TerminalText.escaped(arguments[0])) committed through \(arguments[1])")
        default:
            throw ValidationError("unknown action '\(verb)': use list, add NAME, move NAME --to POSITION, remove NAME or commit NAME TOKEN")
        }
    }

    private func list() throws {
        let coordinator = try storeOptions.open(readOnly: true)
        let consumers = try coordinator.historyConsumers(warningLag: warningLag, idleTimeout: try idleTimeout.map { try DurationText.seconds(parsing: $0, option: "--idle-timeout") })
        if json {
            for c in consumers {
                var w = JSONWriter()
                w.object { o in
                    o.field("name", c.name)
                    o.field("token", c.token.description)
                    o.field("state", c.state.rawValue)
                    o.field("lagTransactions", .integer(Int64(c.lagTransactions)))
                    o.field("lagSeconds", .double(c.lagSeconds))
                    o.field("committedAt", .date(c.committedAt))
                }
                Console.print(w.text)
            }
        } else if consumers.isEmpty {
            Console.print("no consumers")
        } else {
            for line in ConsumerTable.lines(consumers) { Console.print(line) }
        }
    }
}
