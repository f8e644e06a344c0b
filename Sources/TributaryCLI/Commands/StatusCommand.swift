import ArgumentParser
import Foundation
import Tributary
import TributaryPipeline

/// `tributary status STORE [--json]`.
struct StatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show each history consumer's position, state and lag, the pipelines run on the store, and the history kept.",
        discussion: """
            Example: tributary status blog.sqlite --json
            \(ConsumerTable.lagHelp) Each pipeline that tributary run ran on the store is shown as \
            running, retrying (with the sink's last error), stopped or failed (with the error); one \
            whose process has ended without stopping it (killed) is stopped. --json prints one \
            object: consumers (with lagChanges too), pipelines, oldestKeptToken, currentToken, history.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "One JSON object.")
    var json = false

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        let consumers = try coordinator.historyConsumers()
        let lags = try consumers.map { try coordinator.historySize(after: $0.token).changes }
        let oldest = try coordinator.oldestKeptHistoryToken()
        let current = try coordinator.currentPersistentHistoryToken()
        let size = try coordinator.historySize()
        let pipelines = try PipelineStatus.all(in: coordinator)
        if json {
            var w = JSONWriter()
            w.object { o in
                o.key("consumers")
                o.array { a in
                    for (consumer, lag) in zip(consumers, lags) {
                        a.object { c in
                            c.field("name", consumer.name)
                            c.field("token", consumer.token.description)
                            c.field("state", consumer.state.rawValue)
                            c.field("lagChanges", .integer(Int64(lag)))
                            c.field("lagTransactions", .integer(Int64(consumer.lagTransactions)))
                            c.field("lagSeconds", .double(consumer.lagSeconds))
                            c.field("committedAt", ISO8601.string(from: consumer.committedAt))
                        }
                    }
                }
                o.key("pipelines")
                o.array { a in
                    for pipeline in pipelines { a.object { PipelineStatusLines.write(pipeline, to: &$0) } }
                }
                o.field("oldestKeptToken", oldest.description)
                o.field("currentToken", current.description)
                o.key("history")
                o.object { h in
                    h.field("transactions", .integer(Int64(size.transactions)))
                    h.field("changes", .integer(Int64(size.changes)))
                    h.field("payloadBytes", .integer(Int64(size.payloadBytes)))
                }
            }
            Console.print(w.text)
            return
        }
        Console.print("history: \(Plural.counted(size.transactions, "transaction")), \(Plural.counted(size.changes, "change")), \(Plural.counted(size.payloadBytes, "payload byte")); oldest kept \(oldest), current \(current)")
        if consumers.isEmpty {
            Console.print("no consumers")
        } else {
            for line in ConsumerTable.lines(consumers) { Console.print(line) }
        }
        for pipeline in pipelines { Console.print(PipelineStatusLines.line(pipeline)) }
    }
}
