import Foundation
import PostgresNIO
import Tributary
import TributaryPipeline
import TributaryStreams

extension PostgresSink {
    /// Brings the mirror's tables to the schema record's model
    /// (``PostgresMirrorSchema/migrationStatements(to:change:)``) in one PostgreSQL
    /// transaction with the position, made durable at once: a change is applied once, and
    /// a crash before the commit applies it again (every statement is safe to run twice
    /// but renames, which a crash after the commit never repeats: the position moved with them).
    public func deliverSchema(_ record: SchemaRecord) async throws {
        guard let schema else { preconditionFailure("open the sink before delivering") }
        let next = PostgresMirrorSchema(model: record.change.model, schema: settings.schema, tables: settings.tables)
        if let applied, record.position <= applied {
            self.schema = next
            return
        }
        let statements = try schema.migrationStatements(to: next, change: record.change)
        let connection = try await ready()
        let chain = record.chainHash.map { (token: record.position.token, hash: Hex.string($0)) }
        do {
            try await run("BEGIN", on: connection)
            for statement in statements { try await run(PostgresQuery(unsafeSQL: statement), on: connection) }
            try await run(checkpointQuery(record.position, entity: nil, chain: chain), on: connection)
            try await run("COMMIT", on: connection)
        } catch let error as PSQLError where error.code == .server {
            _ = try? await run("ROLLBACK", on: connection)
            if Self.isRejection(error) {
                throw TributaryError.sinkRejected(name, "PostgreSQL refused the model change at token \(record.position.token): \(Self.describe(error))",
                                                  hint: "change the mirror's tables by hand to the new model, then run again")
            }
            throw lost(error)
        } catch {
            throw lost(error)
        }
        applied = record.position
        appliedEntity = nil
        self.schema = next
        try await commitDurably(on: try await ready())
    }
}
