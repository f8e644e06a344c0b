import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

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
            Example: tributary audit verify blog.sqlite --against stream/
            Each history transaction carries a SHA-256 hash over the one before it and its own token, \
            metadata and changes. On success this prints the transactions checked and the chain's head \
            hash: keep a copy of it elsewhere, since someone able to write the file could also recompute \
            every hash after an edit. With --against, the hash an exported stream recorded for the \
            newest transaction it holds must still be the store's: proof that the history up to it \
            was not rewritten, nor its newest transactions dropped, after the export. Exits non-zero, \
            naming the token, at the first difference.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "One JSON object: transactions, changes, oldestToken, headToken, headHash.")
    var json = false

    @Option(name: .long, help: "A stream directory exported from this store: check the store against the chain hash it recorded.")
    var against: String?

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
        let matched = try against.map { try check(against: $0, coordinator) }
        if json {
            var writer = JSONWriter()
            writer.object {
                $0.field("transactions", .integer(Int64(report.transactions)))
                $0.field("changes", .integer(Int64(report.changes)))
                $0.field("oldestToken", .integer(report.oldestToken))
                $0.field("headToken", .integer(report.headToken))
                $0.field("headHash", .string(report.headHash))
                if let matched { $0.field("matchedStreamToken", .integer(matched)) }
            }
            Console.print(writer.text)
        } else {
            let range = report.transactions == 0 ? "no transactions kept" : "tokens \(report.oldestToken)…\(report.headToken)"
            let stream = matched.map { ", and the stream \(against!) at token \($0)" } ?? ""
            Console.print("ok: \(Plural.counted(report.transactions, "transaction")) (\(Plural.counted(report.changes, "change"))), \(range), chain head \(report.headHash)\(stream)")
        }
    }

    /// Checks that the store holds the chain hash the stream in `directory` recorded;
    /// returns the token it was recorded for.
    private func check(against directory: String, _ coordinator: PersistentStoreCoordinator) throws -> Int64 {
        guard let manifest = try StreamManifest.load(from: URL(fileURLWithPath: directory)) else {
            throw TributaryError(.fileNotFound, "no stream here (no \(StreamManifest.fileName))", location: directory, hint: "give the directory tributary export wrote")
        }
        let store = coordinator.persistentStores[0].identifier
        guard manifest.storeID == store else {
            throw TributaryError(.invalidInput, "the stream was exported from store \(manifest.storeID.lowercasedString), not this one (\(store.lowercasedString))", location: directory,
                                 hint: "give a stream exported from \(storeOptions.store)")
        }
        guard let point = manifest.chain else {
            throw TributaryError(.invalidInput, "the stream records no chain hash (exported before history was chained, or from a store without the chain)", location: directory,
                                 hint: "export again from this store; the next export records it")
        }
        guard let held = try coordinator.historyChainHash(at: point.token) else {
            let oldest = try coordinator.oldestKeptHistoryToken().value
            if point.token < oldest {
                throw TributaryError(.invalidInput, "the stream's chain hash is for token \(point.token), which this store has pruned (it keeps history after \(oldest))", location: directory,
                                     hint: "check against a newer export; exporting more often than pruning keeps a point to compare")
            }
            throw TributaryError(.historyTampered, "the store's history was edited: token \(point.token), which the stream \(directory) holds, is missing from it",
                                 location: storeOptions.store, hint: "its newest transactions were dropped after the export; restore the store from a copy")
        }
        guard Hex.string(held) == point.hash else {
            throw TributaryError(.historyTampered, "the store's history was edited: through token \(point.token) it differs from the stream \(directory), exported before",
                                 location: storeOptions.store, hint: "it was rewritten after the export; replay the stream to rebuild it, or restore the store from a copy")
        }
        return point.token
    }
}
