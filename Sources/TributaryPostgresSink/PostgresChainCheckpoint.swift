import Foundation
import Logging
import PostgresNIO
import Tributary
import TributaryPipeline

/// One pipeline's row of a PostgreSQL mirror's checkpoint table, as far as the history chain
/// is concerned: the token and chain hash (hex) of the newest transaction the
/// ``PostgresSink`` mirrored whole (`chain_token`, `chain_hash`; nil before any). `tributary
/// audit verify STORE --against postgres://…` reads them back and checks that the store still
/// holds each hash.
///
/// ```swift
/// let rows = try await PostgresChainCheckpoint.read(endpoint: endpoint, password: nil, schema: "public", storeID: id, pipeline: nil)
/// ```
package struct PostgresChainCheckpoint: Sendable, Equatable {
    /// The pipeline's name.
    package var pipeline: String
    /// The token of the newest transaction mirrored whole.
    package var token: Int64?
    /// Its chain hash, in lowercase hex.
    package var hash: String?

    /// The rows of store `storeID` (of `pipeline` only, when given) in the checkpoint table of
    /// `schema` on the server at `endpoint`, by pipeline name. Errors are one line saying what
    /// is wrong where: no server, no table, a table without the chain columns.
    package static func read(endpoint: PostgresEndpoint, password: String?, schema: String, storeID: UUID, pipeline: String?,
                             timeout: TimeInterval = 30) async throws -> [PostgresChainCheckpoint] {
        let table = PostgresMirrorSchema.quote(schema) + "." + PostgresMirrorSchema.quote(PostgresMirrorSchema.checkpointTable)
        var binds = PostgresBindings()
        binds.append(storeID)
        binds.append(pipeline)
        let query = PostgresQuery(unsafeSQL: "SELECT pipeline, chain_token, chain_hash FROM \(table) WHERE store_id = $1 AND ($2::text IS NULL OR pipeline = $2) ORDER BY pipeline",
                                  binds: binds)
        let configuration = PostgresConnection.Configuration(host: endpoint.host, port: endpoint.port, username: endpoint.user, password: password,
                                                             database: endpoint.database, tls: .disable)
        do {
            return try await Deadline.run(seconds: timeout, timedOut: {
                TributaryError(.sinkUnavailable, "PostgreSQL did not answer within \(Int(timeout)) s", location: endpoint.description, hint: "check that the server runs")
            }) {
                let logger = Logger(label: "tributary.audit")
                let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
                defer { connection.close().whenComplete { _ in _ = connection } }
                var rows: [PostgresChainCheckpoint] = []
                for try await (name, token, hash) in try await connection.query(query, logger: logger).decode((String, Int64?, String?).self) {
                    rows.append(PostgresChainCheckpoint(pipeline: name, token: token, hash: hash?.lowercased()))
                }
                return rows
            }
        } catch let error as TributaryError {
            throw error
        } catch {
            throw failure(error, endpoint: endpoint, table: "\(schema).\(PostgresMirrorSchema.checkpointTable)")
        }
    }

    /// The one-line error for a failed read.
    private static func failure(_ error: any Error, endpoint: PostgresEndpoint, table: String) -> TributaryError {
        switch (error as? PSQLError)?.serverInfo?[.sqlState] {
        case "42P01", "3F000":
            return TributaryError(.invalidInput, "PostgreSQL has no table \(table)", location: endpoint.description,
                                  hint: "name the schema the postgres sink mirrors into with --schema NAME (default public)")
        case "42703":
            return TributaryError(.invalidInput, "\(table) has no chain columns: the mirror was written by an older Tributary", location: endpoint.description,
                                  hint: "run the pipeline once with this version: it adds chain_token and chain_hash and records the chain")
        default:
            return TributaryError(.sinkUnavailable, "cannot read \(table) from PostgreSQL: \(PostgresSink.describe(error))", location: endpoint.description,
                                  hint: "check that the server runs and the URL's user may read the table; a password comes from PGPASSWORD")
        }
    }
}
