import Foundation
import Tributary
import TributaryPipeline

/// The settings of a `type: postgres` sink: where the server is (a `postgres://` URL without
/// a password), where the password comes from (an environment variable or a file, never the
/// pipeline file), the schema, the table of each entity, and whether the sink creates the
/// mirror tables from the store's model.
///
/// ```swift
/// let settings = PostgresSinkSettings(endpoint: try PostgresEndpoint(parsing: "postgres://app@db:5432/mirror"), passwordEnvironment: "PGPASSWORD")
/// ```
public struct PostgresSinkSettings: Sendable, Equatable {
    /// The server, user and database.
    public var endpoint: PostgresEndpoint
    /// The environment variable holding the password (unset or empty: no password, for a server that trusts the user).
    public var passwordEnvironment: String?
    /// The file holding the password, if the server asks for one.
    public var passwordFile: String?
    /// The schema of the mirror tables and the checkpoint table.
    public var schema: String
    /// The table of each entity (default: the entity's name).
    public var tables: [String: String]
    /// Whether the sink creates missing tables from the store's model.
    public var createTables: Bool
    /// How long to wait for the server to answer a connect, a statement or a commit, in seconds
    /// (`timeout`): past it the call fails as `sinkUnavailable` on a dropped connection and the
    /// pipeline retries, so a server that died or stopped answering never holds the pipeline.
    public var timeout: TimeInterval

    /// Settings; the defaults are schema `public`, tables named after their entities, created when missing, a 60 s timeout.
    public init(endpoint: PostgresEndpoint, passwordEnvironment: String? = nil, passwordFile: String? = nil, schema: String = "public",
                tables: [String: String] = [:], createTables: Bool = true, timeout: TimeInterval = 60) {
        self.endpoint = endpoint
        self.passwordEnvironment = passwordEnvironment
        self.passwordFile = passwordFile
        self.schema = schema
        self.tables = tables
        self.createTables = createTables
        self.timeout = timeout
    }
}

/// A PostgreSQL server address parsed from `postgres://user@host:port/database` (or
/// `postgresql://`); port 5432 and database = user by default. A URL with a password is
/// refused: passwords come from `password_env` or `password_file`.
///
/// ```swift
/// let endpoint = try PostgresEndpoint(parsing: "postgres://tributary@127.0.0.1:5433/postgres")
/// endpoint.port   // 5433
/// ```
public struct PostgresEndpoint: Sendable, Equatable, CustomStringConvertible {
    /// The host name or address.
    public var host: String
    /// The port.
    public var port: Int
    /// The user name.
    public var user: String
    /// The database.
    public var database: String

    /// An endpoint.
    public init(host: String, port: Int = 5432, user: String, database: String? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.database = database ?? user
    }

    /// Parses a `postgres://user@host:port/database` URL; the error says what is wrong and how to write it.
    public init(parsing text: String) throws {
        let example = "write postgres://USER@HOST:PORT/DATABASE, such as postgres://tributary@127.0.0.1:5432/postgres"
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
            throw TributaryError(.invalidInput, "'\(Self.redacted(text))' is not a postgres:// URL", hint: example)
        }
        if components.password != nil {
            throw TributaryError(.invalidInput, "the postgres URL holds a password", hint: "remove it from the URL and name its source with password_env: NAME or password_file: PATH")
        }
        guard let host = components.host, !host.isEmpty else { throw TributaryError(.invalidInput, "the postgres URL has no host", hint: example) }
        guard let user = components.user, !user.isEmpty else { throw TributaryError(.invalidInput, "the postgres URL has no user", hint: example) }
        if let port = components.port, !(1...65_535).contains(port) { throw TributaryError(.invalidInput, "the postgres URL's port \(port) is out of range", hint: example) }
        if components.query != nil || components.fragment != nil {
            throw TributaryError(.invalidInput, "the postgres URL has a query or fragment, which the sink does not read", hint: example)
        }
        let path = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        guard !path.contains("/") else { throw TributaryError(.invalidInput, "the postgres URL's path '\(path)' is not a database name", hint: example) }
        self.init(host: host, port: components.port ?? 5432, user: user, database: path.isEmpty ? nil : path)
    }

    /// `postgres://user@host:port/database`.
    public var description: String { "postgres://\(user)@\(host):\(port)/\(database)" }

    /// The text with anything between `://` and `@` removed, for messages.
    static func redacted(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else { return text }
        return String(text[..<scheme.upperBound]) + "…" + String(text[at...])
    }
}

extension TributaryError.Code {
    /// PostgreSQL holds an older position than it had committed: the server lost committed
    /// transactions, and the records since are gone from the pipeline's reach.
    public static let postgresPositionLost = TributaryError.Code(rawValue: "postgresPositionLost")
}
