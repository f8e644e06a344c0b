import Foundation
import Logging
import PostgresNIO
import Tributary
import TributaryPipeline
import TributaryStreams

/// Mirrors a store into PostgreSQL through postgres-nio: one table per entity (see
/// ``PostgresMirrorSchema``), made from the store's model unless `create_tables: false`.
/// Each delivered batch runs in ONE PostgreSQL transaction: its records folded into
/// multi-row upserts (`INSERT … ON CONFLICT ("_pk") DO UPDATE` of the columns the records
/// carry; updates apply only their `after` values; snapshot reads are upserts too) and
/// deletes, together with the pipeline's position in `tributary_checkpoints` and, when the
/// batch completes a transaction, that transaction's token and chain hash (`chain_token`,
/// `chain_hash`: what `tributary audit verify STORE --against postgres://…` checks the store
/// against; an older table gets the columns added). ``open(_:)``
/// returns that position, and a batch is skipped up to it, so a redelivery after a crash
/// applies nothing twice.
///
/// Durability: batches commit without waiting for the server's WAL flush (`synchronous_commit
/// off`, PostgreSQL's asynchronous commit: a server crash may lose the last ones, never half
/// of one), and ``checkpoint(through:)`` commits the position with the flush, which makes every
/// earlier commit durable too (the WAL is flushed in order). So the runtime commits its
/// consumer only past what the server holds durably, as the sink protocol asks, and a batch
/// costs no flush of its own (the flush was a tenth to a quarter of a batch's time). The sink
/// keeps the records committed since the last flush, and every new connection is made safe
/// before use: records the server no longer holds (lost with its machine) are applied again,
/// then the position is flushed (a commit whose answer was lost may have landed).
///
/// Failures: a lost or refused connection, and server errors other than bad data, are
/// `sinkUnavailable` (the runtime retries with backoff; the sink reconnects and reads its
/// position again, since a commit whose answer was lost may have landed). When PostgreSQL
/// rejects a batch's data (SQLSTATE classes 22 data exception, 23 integrity constraint, 42
/// undefined table or column, wrong type), the sink applies the batch again record by
/// record, each in its own transaction with its position, so the good records land:
/// with `on_error: dead_letter` it skips the refused records and throws `sinkRejected`
/// naming them (the runtime writes the batch to the dead letters); with `retry` or `stop`
/// it stops at the first refused record (those before it land) and throws `sinkRejected`.
///
/// ```swift
/// let settings = PostgresSinkSettings(endpoint: try PostgresEndpoint(parsing: "postgres://tributary@127.0.0.1:5432/postgres"))
/// let sink = PostgresSink(name: "postgres", settings: settings)
/// let position = try await sink.open(SinkContext(pipeline: "mirror", storeID: store.identifier, model: store.model))
/// ```
public final class PostgresSink: Sink {
    public let name: String
    /// The settings.
    public let settings: PostgresSinkSettings
    private let onError: PipelineFile.OnError
    private let environment: [String: String]
    private let logger: Logger
    private var password: String?
    private var context: SinkContext?
    var schema: PostgresMirrorSchema?
    private var connection: PostgresConnection?
    private var nextConnectionID = 1
    /// The position of the last batch committed (read back from the checkpoint table on every
    /// new connection); it may be ahead of `durable`.
    var applied: StreamPosition?
    /// The entity of the record at that position (for snapshots, which replace each entity's rows).
    var appliedEntity: String?
    /// The chain point of the checkpoint table's row, as the last connection read it.
    public private(set) var durableChainPoint: StreamManifest.ChainPoint?
    /// The position the server holds durably (flushed), as far as this sink knows.
    private var durable: StreamPosition?
    /// Records committed since the last flush, in order: applied again if the server lost them.
    private var undurable: [StreamRecord] = []
    /// Set by every new connection: ``ready()`` recovers before the connection is used.
    private var needsRecovery = false
    /// Records kept unflushed before a batch flushes on its own (checkpoints usually come first).
    static let maximumUndurable = 100_000

    /// A sink with `settings`, following `onError` for rejected records, reading the password
    /// from `environment` or the file the settings name.
    public init(name: String, settings: PostgresSinkSettings, onError: PipelineFile.OnError = .retry,
                environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.name = name
        self.settings = settings
        self.onError = onError
        self.environment = environment
        var logger = Logger(label: "tributary.postgres")
        logger.logLevel = .error
        self.logger = logger
    }

    deinit {
        // A sink dropped without close(): close its connection, keeping it alive until closed.
        if let connection { connection.close().whenComplete { _ in _ = connection } }
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        password = try readPassword()
        self.context = context
        schema = PostgresMirrorSchema(model: context.model, schema: settings.schema, tables: settings.tables)
        // The first connection is made safe like any reconnect: what a previous run committed
        // may not be flushed yet, so it is flushed before the sink says it is held.
        _ = try await ready()
        return applied
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let schema else { preconditionFailure("open the sink before delivering") }
        let connection = try await ready()
        let pending = records.filter { applied == nil || $0.position > applied! }
        guard let last = pending.last else { return }
        do {
            let batch = try PostgresBatch(pending, schema: schema, clearing: clearing(pending))
            try await apply(batch.statements, through: last.position, entity: last.entityName, chain: Self.chainPoint(pending), on: connection)
            applied = last.position
            appliedEntity = last.entityName
            undurable += pending
        } catch let error as PSQLError where Self.isRejection(error) {
            try await applyOneByOne(pending, schema: schema)
        }
        if undurable.count >= Self.maximumUndurable { try await commitDurably(on: try await ready()) }
    }

    /// The connection, made safe after every new connection (see ``recover(on:)``).
    func ready() async throws -> PostgresConnection {
        var connection = try await connected()
        while needsRecovery {
            needsRecovery = false
            do {
                try await recover(on: connection)
            } catch {
                needsRecovery = true
                throw error
            }
            // Recovery may itself have lost the connection and made another.
            connection = try await connected()
        }
        return connection
    }

    /// After a new connection found the server's position (now `applied`): applies again the
    /// records committed since the last flush that the server no longer holds (lost with its
    /// machine), then flushes, so that whatever the server holds, including a commit whose
    /// answer was lost, is durable before anything else is applied or reported. Records are
    /// dropped from `undurable` only by that flush.
    private func recover(on connection: PostgresConnection) async throws {
        guard let schema else { preconditionFailure("open the sink first") }
        let lost = undurable.filter { applied == nil || $0.position > applied! }
        if let last = lost.last {
            do {
                let batch = try PostgresBatch(lost, schema: schema, clearing: clearing(lost))
                try await apply(batch.statements, through: last.position, entity: last.entityName, chain: Self.chainPoint(lost), on: connection)
            } catch let error as PSQLError where Self.isRejection(error) {
                // Not the current batch's fault: retried, never dead-lettered in its place.
                throw TributaryError.sinkUnavailable(name, "PostgreSQL refused records it had committed before and lost (\(Self.describe(error)))",
                                                     hint: "the mirror's tables changed while the server was down; fix them, and the pipeline retries")
            }
            applied = last.position
            appliedEntity = last.entityName
        }
        try await commitDurably(on: connection)
    }

    /// Commits the position with the WAL flush, making every earlier commit durable.
    func commitDurably(on connection: PostgresConnection) async throws {
        guard let position = applied, durable != position else { return }
        do {
            try await run("BEGIN", on: connection)
            try await run("SET LOCAL synchronous_commit TO on", on: connection)
            try await run(checkpointQuery(position, entity: appliedEntity, chain: nil), on: connection)
            try await run("COMMIT", on: connection)
        } catch {
            throw lost(error)
        }
        durable = position
        undurable.removeAll { $0.position <= position }
    }

    /// Applies the records one at a time after a batch was rejected, so the good ones land;
    /// throws `sinkRejected` naming the refused ones (see the type's documentation).
    private func applyOneByOne(_ records: [StreamRecord], schema: PostgresMirrorSchema) async throws {
        var refused: [(record: StreamRecord, reason: String)] = []
        for record in records {
            let connection = try await ready()
            do {
                let statements = try PostgresBatch([record], schema: schema, clearing: clearing([record])).statements
                try await apply(statements, through: record.position, entity: record.entityName, chain: Self.chainPoint([record]), on: connection)
                applied = record.position
                appliedEntity = record.entityName
                undurable.append(record)
                continue
            } catch let error as PSQLError where Self.isRejection(error) {
                refused.append((record, Self.describe(error)))
            }
            guard onError == .deadLetter else { break }
            // Skip it: the runtime writes the batch to the dead letters and moves on.
            try await apply([], through: record.position, entity: record.entityName, chain: nil, on: connection)
            applied = record.position
            appliedEntity = record.entityName
        }
        // A rare path: made durable at once.
        try await commitDurably(on: try await ready())
        guard let first = refused.first else { return }
        let more = refused.count > 1 ? " (and \(refused.count - 1) more: \(refused.dropFirst().map(\.record.eventID).joined(separator: ", ")))" : ""
        throw TributaryError.sinkRejected(name, "PostgreSQL refused record \(first.record.eventID) (\(first.record.operation.name) \(first.record.objectID)): \(first.reason)\(more)",
                                          hint: onError == .deadLetter ? "the other records of the batch were applied; fix the refused ones from the dead letters"
                                              : "the records before it were applied; fix the table or the data, or use on_error: dead_letter to skip refused records")
    }

    /// The entities whose rows `records` start over (see ``PostgresBatch/entitiesToClear(_:after:)``).
    private func clearing(_ records: [StreamRecord]) -> [String] {
        PostgresBatch.entitiesToClear(records, after: applied.map { ($0, appliedEntity) })
    }

    /// Runs `statements` and the checkpoint update (with `chain`, when they complete a
    /// transaction) in one transaction.
    private func apply(_ statements: [PostgresQuery], through position: StreamPosition, entity: String?, chain: ChainPoint?, on connection: PostgresConnection) async throws {
        do {
            if statements.count == 1 {
                // One statement, the batch's in a data-modifying WITH (run to completion whether
                // read or not) before the position's update: one round trip, in the implicit
                // transaction of a single statement. The update returns no rows, so an error of
                // either part ends the query itself (the rows of a SELECT would come later).
                try await run(withPosition(statements[0], position, entity: entity, chain: chain), on: connection)
                return
            }
            try await run("BEGIN", on: connection)
            for statement in statements { try await run(statement, on: connection) }
            try await run(checkpointQuery(position, entity: entity, chain: chain), on: connection)
            try await run("COMMIT", on: connection)
        } catch let error as PSQLError where error.code == .server {
            _ = try? await run("ROLLBACK", on: connection)
            if Self.isRejection(error) { throw error }
            throw lost(error)
        } catch {
            throw lost(error)
        }
    }

    /// `statement` and the position's update as one statement.
    private func withPosition(_ statement: PostgresQuery, _ position: StreamPosition, entity: String?, chain: ChainPoint?) -> PostgresQuery {
        var binds = statement.binds
        let sql = checkpointSQL(position, entity: entity, chain: chain, into: &binds)
        return PostgresQuery(unsafeSQL: "WITH applied AS (\(statement.sql)) \(sql)", binds: binds)
    }

    func checkpointQuery(_ position: StreamPosition, entity: String?, chain: ChainPoint?) -> PostgresQuery {
        var binds = PostgresBindings(capacity: 8)
        let sql = checkpointSQL(position, entity: entity, chain: chain, into: &binds)
        return PostgresQuery(unsafeSQL: sql, binds: binds)
    }

    /// The token and chain hash (hex) of the newest transaction a batch completes.
    typealias ChainPoint = (token: Int64, hash: String)

    /// The chain point of the last of `records` that completes its transaction (carries a
    /// chain hash), nil when none does.
    static func chainPoint(_ records: [StreamRecord]) -> ChainPoint? {
        guard let last = records.last(where: { $0.chainHash != nil }), let hash = last.chainHash else { return nil }
        return (last.position.token, Hex.string(hash))
    }

    /// The position's upsert, its parameters appended to `binds` (numbered after those already
    /// there). Without `chain` the row keeps the chain point it holds.
    private func checkpointSQL(_ position: StreamPosition, entity: String?, chain: ChainPoint?, into binds: inout PostgresBindings) -> String {
        guard let schema, let context else { preconditionFailure("open the sink first") }
        let first = binds.count + 1
        binds.append(context.pipeline)
        binds.append(context.storeID)
        binds.append(position.token)
        binds.append(Int32(clamping: position.index))
        binds.append(position.isSnapshot)
        binds.append(entity)
        binds.append(chain?.token)
        binds.append(chain?.hash)
        let values = (first..<first + 8).map { "$\($0)" }.joined(separator: ", ")
        return "INSERT INTO \(schema.qualified(PostgresMirrorSchema.checkpointTable)) AS c (pipeline, store_id, token, \"index\", snapshot, entity, chain_token, chain_hash, updated_at) "
            + "VALUES (\(values), now()) ON CONFLICT (pipeline) DO UPDATE SET store_id = EXCLUDED.store_id, token = EXCLUDED.token, "
            + "\"index\" = EXCLUDED.\"index\", snapshot = EXCLUDED.snapshot, entity = EXCLUDED.entity, updated_at = EXCLUDED.updated_at, "
            + "chain_token = coalesce(EXCLUDED.chain_token, c.chain_token), chain_hash = coalesce(EXCLUDED.chain_hash, c.chain_hash)"
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        let connection = try await ready()
        if applied.map({ $0 < position }) ?? true {
            // Records up to `position` were read and filtered out: remember that too. Within the
            // same snapshot the entity stays, so the snapshot's next record does not start its table over.
            appliedEntity = applied.map { $0.isSnapshot && position.isSnapshot && $0.token == position.token } == true ? appliedEntity : nil
            applied = position
        }
        try await commitDurably(on: connection)
        return applied
    }

    public func close() async throws {
        if let connection { await closeWithin(connection) }
        connection = nil
    }

    // MARK: Connection

    /// The open connection, or a new one (then the tables are made if asked, and the position read again).
    private func connected() async throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        guard let schema, let context else { preconditionFailure("open the sink first") }
        connection = nil
        let configuration = PostgresConnection.Configuration(host: settings.endpoint.host, port: settings.endpoint.port, username: settings.endpoint.user,
                                                             password: password, database: settings.endpoint.database, tls: .disable)
        let made: PostgresConnection
        do {
            let id = nextConnectionID, logger = logger
            made = try await bounded { try await PostgresConnection.connect(configuration: configuration, id: id, logger: logger) }
            nextConnectionID += 1
        } catch {
            throw Self.failure(error, sink: name, endpoint: settings.endpoint)
        }
        do {
            for statement in settings.createTables ? schema.createStatements() : [schema.checkpointTableStatement(), schema.checkpointChainColumnsStatement()] {
                try await run(PostgresQuery(unsafeSQL: statement), on: made)
            }
            // Batches commit without waiting for the WAL flush; commitDurably waits (see the type's documentation).
            try await run("SET synchronous_commit TO off", on: made)
            var binds = PostgresBindings()
            binds.append(context.pipeline)
            let query = PostgresQuery(unsafeSQL: "SELECT store_id, token, \"index\", snapshot, entity, chain_token, chain_hash FROM \(schema.qualified(PostgresMirrorSchema.checkpointTable)) WHERE pipeline = $1",
                                      binds: binds)
            let logger = logger
            let rows = try await bounded {
                var rows: [(UUID, Int64, Int32, Bool, String?, Int64?, String?)] = []
                for try await row in try await made.query(query, logger: logger).decode((UUID, Int64, Int32, Bool, String?, Int64?, String?).self) { rows.append(row) }
                return rows
            }
            var position: StreamPosition?, entity: String?
            for (storeID, token, index, snapshot, lastEntity, chainToken, chainHash) in rows {
                guard storeID == context.storeID else {
                    throw TributaryError(.invalidInput, "the PostgreSQL schema '\(settings.schema)' mirrors store \(storeID.lowercasedString) for pipeline '\(context.pipeline)', not store \(context.storeID.lowercasedString)",
                                         location: "sink \(name)", hint: "give the pipeline another name or the sink another schema:, or drop the row of \(PostgresMirrorSchema.checkpointTable)")
                }
                position = StreamPosition(token: token, index: Int(index), isSnapshot: snapshot)
                entity = lastEntity
                durableChainPoint = chainToken.flatMap { token in chainHash.map { StreamManifest.ChainPoint(token: token, hash: $0.lowercased()) } }
            }
            if let known = durable, position.map({ $0 < known }) ?? true {
                throw TributaryError(.postgresPositionLost, "PostgreSQL holds position \(position?.description ?? "none") for pipeline '\(context.pipeline)', behind \(known) that it had committed",
                                     location: "sink \(name)", hint: "the server lost committed transactions (fsync or synchronous_commit off, then a crash); "
                                         + "start the mirror over: drop its tables and its row of \(PostgresMirrorSchema.checkpointTable), and run the pipeline with a new consumer and snapshot: true")
            }
            applied = position
            appliedEntity = entity
        } catch let error as TributaryError {
            await closeWithin(made)
            throw error
        } catch {
            await closeWithin(made)
            throw Self.failure(error, sink: name, endpoint: settings.endpoint)
        }
        connection = made
        needsRecovery = true
        return made
    }

    /// Runs `query` on `connection` within the settings' timeout (see ``bounded(_:)``).
    func run(_ query: PostgresQuery, on connection: PostgresConnection) async throws {
        let logger = logger
        try await bounded { _ = try await connection.query(query, logger: logger) }
    }

    /// `operation` (a call into postgres-nio), or `sinkUnavailable` after the settings' timeout:
    /// postgres-nio never answers a query written to a connection that closed at that moment
    /// (the server killed), so no call into it is awaited without a deadline.
    private func bounded<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let (name, endpoint, seconds) = (name, settings.endpoint, settings.timeout)
        return try await Deadline.run(seconds: seconds, timedOut: {
            TributaryError.sinkUnavailable(name, "PostgreSQL at \(endpoint) did not answer within \(seconds) s",
                                           hint: "the pipeline retries on a new connection; check that the server runs, or raise the sink's timeout:")
        }, operation)
    }

    /// Closes `connection`, waiting at most the settings' timeout (a connection to a dead server may never say it closed).
    private func closeWithin(_ connection: PostgresConnection) async {
        _ = try? await bounded { try await connection.close() }
    }

    /// Drops the connection after a failure worth retrying, and says so.
    func lost(_ error: any Error) -> TributaryError {
        if let connection { connection.close().whenComplete { _ in _ = connection } }
        connection = nil
        return Self.failure(error, sink: name, endpoint: settings.endpoint)
    }

    private func readPassword() throws -> String? {
        if let variable = settings.passwordEnvironment {
            // Unset is no password (a server trusting local users); a server asking for one says so on connect.
            guard let value = environment[variable], !value.isEmpty else { return nil }
            return value
        }
        if let file = settings.passwordFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw TributaryError(.fileNotFound, "the password_file cannot be read", location: file, hint: "write the password to that file, readable by this user")
            }
            return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return nil
    }

    // MARK: Errors

    /// Whether PostgreSQL refused the data itself (retrying cannot help): SQLSTATE classes 22, 23, 42 and 44.
    static func isRejection(_ error: PSQLError) -> Bool {
        guard error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return ["22", "23", "42", "44"].contains(String(state.prefix(2)))
    }

    /// A server error's SQLSTATE, message and detail, or what went wrong with the connection (never a password or a query's values).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if error.code == .server, let info = error.serverInfo {
                var text = "\(info[.message] ?? "error") (SQLSTATE \(info[.sqlState] ?? "?"))"
                if let detail = info[.detail] { text += ": " + detail }
                return text
            }
            if let underlying = error.underlying { return "\(error.code): \(underlying)" }
            return "\(error.code)"
        }
        return "\(error)"
    }

    /// The error the runtime sees: rejected data, or an unavailable server (retried).
    static func failure(_ error: any Error, sink: String, endpoint: PostgresEndpoint) -> TributaryError {
        if let error = error as? TributaryError { return error }
        if let error = error as? PSQLError, isRejection(error) {
            return TributaryError.sinkRejected(sink, "PostgreSQL refused the batch: \(describe(error))")
        }
        if let error = error as? PSQLError, error.code == .authMechanismRequiresPassword || error.code == .server && error.serverInfo?[.sqlState]?.hasPrefix("28") == true {
            return TributaryError.sinkUnavailable(sink, "PostgreSQL at \(endpoint) refused the login: \(describe(error))",
                                                  hint: "check the user in url: and set the password in the variable named by password_env (or the file named by password_file)")
        }
        return TributaryError.sinkUnavailable(sink, "cannot use PostgreSQL at \(endpoint): \(describe(error))", hint: "the pipeline retries; check that the server runs")
    }
}
