import ArgumentParser
import Foundation
import Tributary

/// `tributary consumers STORE [list | add NAME | remove NAME | commit NAME TOKEN]`.
struct ConsumersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "consumers",
        abstract: "List, add, remove or commit history consumers (named, durable positions).",
        discussion: "Example: tributary consumers blog.sqlite add search-index"
    )

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "list, add NAME, remove NAME or commit NAME TOKEN.")
    var action: [String] = ["list"]

    @Flag(name: .long, help: "NDJSON for list.")
    var json = false

    @Option(name: .customLong("warning-lag"), help: "Transactions behind after which a consumer is lagging.")
    var warningLag: Int = 10_000

    @Option(name: .customLong("idle-timeout"), help: "A consumer that has not committed for this long is expired (30d, 12h…).")
    var idleTimeout: String?

    func run() async throws {
        let verb = action.first ?? "list"
        let arguments = Array(action.dropFirst())
        func expect(_ count: Int, _ usage: String) throws {
            guard arguments.count == count else { throw ValidationError("usage: tributary consumers STORE \(usage)") }
        }
        switch verb {
        case "list":
            try expect(0, "list")
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
                Console.print("name                 token            state     lag (transactions)  lag (s)   last commit")
                for c in consumers {
                    let name = c.name.padding(toLength: 20, withPad: " ", startingAt: 0)
                    let token = c.token.description.padding(toLength: 16, withPad: " ", startingAt: 0)
                    let state = c.state.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                    let lag = String(c.lagTransactions).padding(toLength: 19, withPad: " ", startingAt: 0)
                    let seconds = String(format: "%.1f", c.lagSeconds).padding(toLength: 9, withPad: " ", startingAt: 0)
                    Console.print("\(name) \(token) \(state) \(lag) \(seconds) \(ISO8601.string(from: c.committedAt))")
                }
            }
        case "add":
            try expect(1, "add NAME")
            let consumer = try storeOptions.open().registerHistoryConsumer(arguments[0])
            Console.print("consumer \(consumer.name) at \(consumer.token)")
        case "remove":
            try expect(1, "remove NAME")
            try storeOptions.open().removeHistoryConsumer(arguments[0])
            Console.print("removed consumer \(arguments[0])")
        case "commit":
            try expect(2, "commit NAME TOKEN")
            try storeOptions.open().commitHistoryConsumer(arguments[0], through: try PersistentHistoryToken(parsing: arguments[1]))
            Console.print("consumer \(arguments[0]) committed through \(arguments[1])")
        default:
            throw ValidationError("unknown action '\(verb)': use list, add NAME, remove NAME or commit NAME TOKEN")
        }
    }
}
