import ArgumentParser
import Tributary

/// `tributary audit verify STORE`: proof that the history was not edited.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check that the store's history was not edited after it was written.",
        subcommands: [AuditVerifyCommand.self]
    )
}

/// `tributary audit verify STORE [--json]`.
struct AuditVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Walk the history's hash chain and name the first transaction edited, deleted, inserted or moved.",
        discussion: """
            Example: tributary audit verify blog.sqlite
            Each history transaction carries a SHA-256 hash over the one before it and its own token, \
            metadata and changes. On success this prints the transactions checked and the chain's head \
            hash: keep a copy of it elsewhere, since someone able to write the file could also recompute \
            every hash after an edit. Exits non-zero, naming the token, at the first difference.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "One JSON object: transactions, changes, oldestToken, headToken, headHash.")
    var json = false

    func run() async throws {
        let coordinator = try storeOptions.openForHistory()
        let report = try coordinator.verifyHistoryChain()
        if let problem = report.problem {
            throw TributaryError(.historyTampered, "the history was edited: \(problem)", location: storeOptions.store,
                                 hint: "compare it with an exported stream or a replica, and restore the store from a copy taken before token \(problem.token)")
        }
        guard report.isChained else {
            throw TributaryError(.invalidInput, "the store's history is not chained (it was made with historyHashChain off)", location: storeOptions.store,
                                 hint: "nothing to verify; new stores chain their history by default")
        }
        if json {
            var writer = JSONWriter()
            writer.object {
                $0.field("transactions", .integer(Int64(report.transactions)))
                $0.field("changes", .integer(Int64(report.changes)))
                $0.field("oldestToken", .integer(report.oldestToken))
                $0.field("headToken", .integer(report.headToken))
                $0.field("headHash", .string(report.headHash))
            }
            Console.print(writer.text)
        } else {
            let range = report.transactions == 0 ? "no transactions kept" : "tokens \(report.oldestToken)…\(report.headToken)"
            Console.print("ok: \(Plural.counted(report.transactions, "transaction")) (\(Plural.counted(report.changes, "change"))), \(range), chain head \(report.headHash)")
        }
    }
}
