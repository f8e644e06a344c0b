import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

/// `tributary audit verify STORE`: proof that the history was not edited.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit",
        abstract: "Check that the store's history was not edited after it was written.",
        subcommands: [AuditVerifyCommand.self, AuditCheckpointCommand.self, AuditKeyCommand.self]
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

    @Option(name: .long, help: "A checkpoint file (tributary audit checkpoint): check its signature and that the store still holds its hash.")
    var checkpoint: String?

    @Option(name: .customLong("trusted-key"), help: "With --checkpoint: the base64 public key that must have signed it.")
    var trustedKey: String?

    func validate() throws {
        if trustedKey != nil && checkpoint == nil { throw ValidationError("--trusted-key goes with --checkpoint FILE") }
    }

    func run() async throws {
        let coordinator = try storeOptions.openForHistory()
        let report = try coordinator.verifyHistoryChain()
        try report.requireIntact(location: storeOptions.store)
        let matched = try against.map { try check(against: $0, coordinator) }
        let vouched = try checkpoint.map { try check(checkpoint: $0, coordinator, chain: report) }
        if json {
            var writer = JSONWriter()
            writer.object {
                $0.field("transactions", .integer(Int64(report.transactions)))
                $0.field("changes", .integer(Int64(report.changes)))
                $0.field("oldestToken", .integer(report.oldestToken))
                $0.field("headToken", .integer(report.headToken))
                $0.field("headHash", .string(report.headHash))
                if let matched { $0.field("matchedStreamToken", .integer(matched)) }
                if let vouched { $0.field("matchedCheckpointToken", .integer(vouched)) }
            }
            Console.print(writer.text)
        } else {
            let range = report.transactions == 0 ? "no transactions kept" : "tokens \(report.oldestToken)…\(report.headToken)"
            let stream = matched.map { ", and the stream \(against!) at token \($0)" } ?? ""
            let signed = vouched.map { ", and the signed checkpoint at token \($0)" } ?? ""
            Console.print("ok: \(Plural.counted(report.transactions, "transaction")) (\(Plural.counted(report.changes, "change"))), \(range), chain head \(report.headHash)\(stream)\(signed)")
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
        try coordinator.requireHistoryChain(hash: point.hash, at: point.token, recordedBy: "the stream \(directory)")
        return point.token
    }

    /// Checks the signed checkpoint in `file`; returns the token it vouches for.
    private func check(checkpoint file: String, _ coordinator: PersistentStoreCoordinator, chain: HistoryChainReport) throws -> Int64 {
        let checkpoint: HistoryCheckpoint
        do {
            checkpoint = try JSONDecoder().decode(HistoryCheckpoint.self, from: try Data(contentsOf: URL(fileURLWithPath: file)))
        } catch let error as TributaryError {
            throw error
        } catch let error as DecodingError {
            throw TributaryError(.invalidInput, "not a checkpoint: \(error.shortDescription)", location: file, hint: "give a file tributary audit checkpoint wrote")
        } catch {
            throw TributaryError(.fileNotFound, "cannot read the checkpoint", location: file, hint: "give a file tributary audit checkpoint wrote")
        }
        try coordinator.verify(checkpoint, trustedKey: trustedKey, chain: chain)
        return checkpoint.token
    }
}

/// `tributary audit key FILE`: a new Ed25519 signing key for checkpoints.
struct AuditKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Make a new Ed25519 signing key for checkpoints (the file is readable by you only); print its public key.",
        discussion: "Example: tributary audit key ~/.tributary/audit.key"
    )

    @Argument(help: "Where to write the private key (base64); an existing file is never overwritten.")
    var file: String

    func run() async throws {
        let (privateKey, publicKey) = HistoryCheckpoint.newSigningKey()
        let fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            let exists = errno == EEXIST
            throw TributaryError(exists ? .invalidInput : .io, exists ? "the file exists" : "cannot create the key file (\(String(cString: strerror(errno))))", location: file,
                                 hint: exists ? "give a new path; a key is never overwritten" : "check the directory exists and is writable")
        }
        let text = privateKey.base64EncodedString() + "\n"
        let written = text.withCString { write(fd, $0, strlen($0)) }
        let synced = fsync(fd) == 0
        close(fd)
        guard written == text.utf8.count, synced else {
            unlink(file)
            throw TributaryError(.io, "cannot write the key file", location: file, hint: "check the disk has room")
        }
        Console.print("public key \(publicKey)")
    }
}

/// `tributary audit checkpoint STORE --key FILE [--out FILE]`.
struct AuditCheckpointCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Sign the history's current chain head with an Ed25519 key (after verifying the chain), as JSON.",
        discussion: """
            Example: tributary audit checkpoint blog.sqlite --key audit.key --out checkpoints/2024-05-01.json
            Keep checkpoints away from the store: tributary audit verify STORE --checkpoint FILE then \
            proves that the history through the checkpoint's token was not rewritten since.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "The private key file (tributary audit key makes one).")
    var key: String

    @Option(name: .long, help: "Write the checkpoint to this file instead of standard output.")
    var out: String?

    func run() async throws {
        guard let text = try? String(contentsOfFile: key, encoding: .utf8), let bytes = Data(base64Encoded: text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw TributaryError(.invalidInput, "cannot read a key here", location: key, hint: "make one with tributary audit key FILE")
        }
        let coordinator = try storeOptions.openForHistory()
        let checkpoint = try coordinator.makeHistoryCheckpoint(signingKey: bytes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(checkpoint), as: UTF8.self)
        if let out {
            try DurableFile.write(Data((json + "\n").utf8), to: URL(fileURLWithPath: out))
            Console.print("checkpoint of token \(checkpoint.token) written to \(out)")
        } else {
            Console.print(json)
        }
    }
}
