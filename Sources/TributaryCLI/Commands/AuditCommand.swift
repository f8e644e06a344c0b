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

/// `tributary audit verify STORE [--against DIR|postgres://…|nats://HOST:PORT/STREAM [--pipeline NAME] [--schema NAME]] [--checkpoint FILE] [--json]`.
struct AuditVerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Walk the history's hash chain and name the first transaction edited, deleted, inserted or moved.",
        discussion: """
            Examples: tributary audit verify blog.sqlite --against stream/
                      tributary audit verify blog.sqlite --against postgres://app@db:5432/mirror --schema public
                      tributary audit verify blog.sqlite --against nats://127.0.0.1:4222/TRIBUTARY
            Each history transaction carries a SHA-256 hash over the one before it and its own token, \
            metadata and changes. On success this prints the transactions checked and the chain's head \
            hash: keep a copy of it elsewhere, since someone able to write the file could also recompute \
            every hash after an edit. With --against, the hash a copy recorded for the newest transaction \
            it holds whole must still be the store's: proof that the history up to it was not rewritten, \
            nor its newest transactions dropped, after it was copied. The copy is an exported stream's \
            directory (its manifest), a PostgreSQL mirror (each pipeline's row of the store in \
            tributary_checkpoints: chain_token, chain_hash; the password, if asked, from PGPASSWORD), \
            or a NATS JetStream stream (the newest message of the store with a Tributary-Chain header). \
            Exits non-zero, naming the token, at the first difference.
            """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "One JSON object: transactions, changes, oldestToken, headToken, headHash (and matchedStreamToken, matchedReplicaTokens by pipeline, matchedCheckpointToken).")
    var json = false

    @Option(name: .long, help: ArgumentHelp("A copy of this store's history to check the store against: a stream directory, postgres://USER@HOST:PORT/DATABASE or nats://HOST:PORT/STREAM.",
                                            valueName: "dir-or-url"))
    var against: String?

    @Option(name: .long, help: "With --against postgres:// or nats://: only the chain hash this pipeline recorded.")
    var pipeline: String?

    @Option(name: .long, help: "With --against postgres://: the schema of the mirror's tributary_checkpoints.")
    var schema: String = "public"

    @Option(name: .long, help: "A checkpoint file (tributary audit checkpoint): check its signature and that the store still holds its hash.")
    var checkpoint: String?

    @Option(name: .customLong("trusted-key"), help: "With --checkpoint: the base64 public key that must have signed it.")
    var trustedKey: String?

    func validate() throws {
        if trustedKey != nil && checkpoint == nil { throw ValidationError("--trusted-key goes with --checkpoint FILE") }
        let scheme = against.map(AuditTarget.scheme(of:))
        if pipeline != nil && scheme == nil { throw ValidationError("--pipeline goes with --against postgres://… or nats://…") }
        if schema != "public" && scheme != "postgres" { throw ValidationError("--schema goes with --against postgres://…") }
    }

    func run() async throws {
        let coordinator = try storeOptions.openForHistory()
        let report = try coordinator.verifyHistoryChain()
        try report.requireIntact(location: storeOptions.store)
        var matched: [AuditTarget.Point] = []
        if let against { matched = try await check(against: against, coordinator) }
        let vouched = try checkpoint.map { try check(checkpoint: $0, coordinator, chain: report) }
        if json {
            var writer = JSONWriter()
            writer.object {
                $0.field("transactions", .integer(Int64(report.transactions)))
                $0.field("changes", .integer(Int64(report.changes)))
                $0.field("oldestToken", .integer(report.oldestToken))
                $0.field("headToken", .integer(report.headToken))
                $0.field("headHash", .string(report.headHash))
                if let point = matched.first, point.pipeline == nil { $0.field("matchedStreamToken", .integer(point.token)) }
                let replicas = matched.compactMap { point in point.pipeline.map { (pipeline: $0, token: point.token) } }
                if !replicas.isEmpty {
                    $0.key("matchedReplicaTokens")
                    $0.object { object in for replica in replicas { object.field(replica.pipeline, .integer(replica.token)) } }
                }
                if let vouched { $0.field("matchedCheckpointToken", .integer(vouched)) }
            }
            Console.print(writer.text)
        } else {
            let range = report.transactions == 0 ? "no transactions kept" : "tokens \(report.oldestToken)…\(report.headToken)"
            let copies = matched.map { ", and \($0.source) at token \($0.token)" }.joined()
            let signed = vouched.map { ", and the signed checkpoint at token \($0)" } ?? ""
            Console.print("ok: \(Plural.counted(report.transactions, "transaction")) (\(Plural.counted(report.changes, "change"))), \(range), chain head \(report.headHash)\(copies)\(signed)")
        }
    }

    /// Checks that the store holds every chain hash `target` (a stream directory or a
    /// replica's URL: ``AuditTarget``) recorded; returns them.
    private func check(against target: String, _ coordinator: PersistentStoreCoordinator) async throws -> [AuditTarget.Point] {
        let points = try await AuditTarget(parsing: target).points(of: coordinator.persistentStores[0].identifier, pipeline: pipeline, schema: schema)
        for point in points { try coordinator.requireHistoryChain(hash: point.hash, at: point.token, recordedBy: point.source) }
        return points
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
