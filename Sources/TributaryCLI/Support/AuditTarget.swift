import Foundation
import Tributary
import TributaryNATSSink
import TributaryPostgresSink
import TributaryStreams

/// What `audit verify STORE --against TARGET` checks the store against, and the chain hashes
/// the target recorded: an exported stream's directory (the chain point of its manifest), a
/// PostgreSQL mirror (`postgres://USER@HOST:PORT/DATABASE`: the chain point of each pipeline's
/// row of the store in `tributary_checkpoints`), or a NATS JetStream stream
/// (`nats://HOST:PORT/STREAM`: the newest message of the store carrying `Tributary-Chain`).
///
/// ```swift
/// let target = try AuditTarget(parsing: "nats://127.0.0.1:4222/TRIBUTARY")
/// for point in try await target.points(of: storeID, pipeline: nil, schema: "public") {
///     try coordinator.requireHistoryChain(hash: point.hash, at: point.token, recordedBy: point.source)
/// }
/// ```
enum AuditTarget {
    case stream(directory: String)
    case postgres(PostgresEndpoint)
    case nats(server: String, stream: String)

    /// A chain hash a target recorded, with how errors and the report name who recorded it.
    struct Point: Equatable {
        var token: Int64
        /// Lowercase hex.
        var hash: String
        /// "the stream DIR", "the PostgreSQL mirror URL (pipeline NAME)", …
        var source: String
        /// The pipeline that recorded it (replicas only).
        var pipeline: String?
    }

    /// A directory, or a `postgres://` or `nats://` URL.
    init(parsing text: String) throws {
        switch Self.scheme(of: text) {
        case "postgres": self = .postgres(try PostgresEndpoint(parsing: text))
        case "nats": self = try Self.nats(text)
        default: self = .stream(directory: text)
        }
    }

    /// The kind of replica `text` names: `postgres` (for `postgres://` and `postgresql://`),
    /// `nats`, or nil for a stream directory.
    static func scheme(of text: String) -> String? {
        let lowered = text.lowercased()
        if lowered.hasPrefix("postgres://") || lowered.hasPrefix("postgresql://") { return "postgres" }
        return lowered.hasPrefix("nats://") ? "nats" : nil
    }

    private static func nats(_ text: String) throws -> AuditTarget {
        let components = URLComponents(string: text)
        let path = components?.path.split(separator: "/", omittingEmptySubsequences: false).dropFirst() ?? []
        guard let components, let host = components.host, !host.isEmpty, let port = components.port, path.count == 1, let stream = path.first, !stream.isEmpty,
              components.query == nil, components.user == nil else {
            throw TributaryError(.invalidInput, "'\(text)' is not nats://HOST:PORT/STREAM", location: "--against",
                                 hint: "name the server and the stream the pipeline's nats sink publishes to, such as nats://127.0.0.1:4222/TRIBUTARY")
        }
        return .nats(server: "nats://\(host):\(port)", stream: String(stream))
    }

    /// The chain points the target recorded for store `storeID`: the stream's one, each
    /// pipeline's of the PostgreSQL mirror that recorded one yet (only `pipeline`'s when given;
    /// schema `schema`), the newest in the NATS stream (of `pipeline` when given). Throws when
    /// there is none.
    func points(of storeID: UUID, pipeline: String?, schema: String) async throws -> [Point] {
        switch self {
        case .stream(let directory): return [try Self.streamPoint(directory, storeID: storeID)]
        case .postgres(let endpoint): return try await Self.postgresPoints(endpoint, storeID: storeID, pipeline: pipeline, schema: schema)
        case .nats(let server, let stream): return [try Self.natsPoint(server, stream: stream, storeID: storeID, pipeline: pipeline)]
        }
    }

    private static func streamPoint(_ directory: String, storeID: UUID) throws -> Point {
        guard let manifest = try StreamManifest.load(from: URL(fileURLWithPath: directory)) else {
            throw TributaryError(.fileNotFound, "no stream here (no \(StreamManifest.fileName))", location: directory,
                                 hint: "give the directory tributary export wrote, or a postgres:// or nats://HOST:PORT/STREAM replica")
        }
        guard manifest.storeID == storeID else {
            throw TributaryError(.invalidInput, "the stream was exported from store \(manifest.storeID.lowercasedString), not this one (\(storeID.lowercasedString))", location: directory,
                                 hint: "give a stream exported from this store")
        }
        guard let point = manifest.chain else {
            throw TributaryError(.invalidInput, "the stream records no chain hash (exported before history was chained, or from a store without the chain)", location: directory,
                                 hint: "export again from this store; the next export records it")
        }
        return Point(token: point.token, hash: point.hash, source: "the stream \(directory)")
    }

    private static func postgresPoints(_ endpoint: PostgresEndpoint, storeID: UUID, pipeline: String?, schema: String) async throws -> [Point] {
        let password = ProcessInfo.processInfo.environment["PGPASSWORD"].flatMap { $0.isEmpty ? nil : $0 }
        let rows = try await PostgresChainCheckpoint.read(endpoint: endpoint, password: password, schema: schema, storeID: storeID, pipeline: pipeline)
        let points = rows.compactMap { row in
            row.token.flatMap { token in row.hash.map { Point(token: token, hash: $0, source: "the PostgreSQL mirror \(endpoint) (pipeline \(row.pipeline))", pipeline: row.pipeline) } }
        }
        guard points.isEmpty else { return points }
        let whose = pipeline.map { "pipeline \($0) of store \(storeID.lowercasedString)" } ?? "store \(storeID.lowercasedString)"
        throw TributaryError(.invalidInput, rows.isEmpty ? "\(schema).tributary_checkpoints has no row of \(whose)" : "\(schema).tributary_checkpoints records no chain hash of \(whose) yet",
                             location: endpoint.description,
                             hint: rows.isEmpty ? "give the mirror a postgres sink writes from this store (and its schema with --schema NAME)"
                                 : "run the pipeline with this version: its next batch that completes a transaction records the hash")
    }

    private static func natsPoint(_ server: String, stream: String, storeID: UUID, pipeline: String?) throws -> Point {
        guard let point = try NATSChainPoint.newest(url: server, stream: stream, storeID: storeID, pipeline: pipeline) else {
            let whose = pipeline.map { "pipeline \($0) of store \(storeID.lowercasedString)" } ?? "store \(storeID.lowercasedString)"
            throw TributaryError(.invalidInput, "stream \(stream) holds no message of \(whose) with a \(NATSSink.chainHeader) header among its newest", location: server,
                                 hint: "run the pipeline with this version (the message of each transaction's last record carries it), or name the stream it publishes to")
        }
        return Point(token: point.token, hash: point.hash, source: "the NATS stream \(stream) at \(server) (pipeline \(point.pipeline))", pipeline: point.pipeline)
    }
}
