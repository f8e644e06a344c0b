import Foundation
import Tributary
import TributaryPipeline

/// A `type: postgres` sink in a pipeline file; register it with
/// `sinks.register(PostgresSinkSettings.self)`.
extension PostgresSinkSettings: SinkConfiguration {
    public static let type = "postgres"
    public static let keys = ["url", "password_env", "password_file", "schema", "tables", "create_tables", "timeout"]

    /// Reads a `type: postgres` sink's settings: `url` (default `${POSTGRES_URL}`),
    /// `password_env` or `password_file`, `schema` (default `public`), `tables` (entity →
    /// table), `create_tables` (default true) and `timeout` (default 60s).
    public init(settings node: PipelineSettingsNode) throws {
        let urlNode = node["url"] ?? node.child("url")
        let text = try node["url"]?.string() ?? urlNode.substitute("${POSTGRES_URL}")
        do {
            self.init(endpoint: try PostgresEndpoint(parsing: text))
        } catch let error as TributaryError {
            throw urlNode.fail(error.message, hint: error.hint)
        }
        passwordEnvironment = try node["password_env"]?.string()
        passwordFile = try node["password_file"]?.string()
        if let fileNode = node["password_file"], passwordEnvironment != nil {
            throw fileNode.fail("give password_env or password_file, not both")
        }
        if let n = node["schema"] {
            schema = try n.string()
            guard !schema.isEmpty else { throw n.fail("the schema name is empty", hint: "write schema: public, or leave it out") }
        }
        if let n = node["tables"] {
            guard case .mapping(let names) = n.content else { throw n.fail("tables maps entity names to table names", hint: "write tables: {Post: posts}") }
            for (entity, table) in names {
                let name = try entity.string()
                let value = try table.string()
                guard !value.isEmpty else { throw table.fail("the table name is empty", hint: "write tables: {\(name): TABLE}") }
                tables[name] = value
            }
        }
        if let n = node["create_tables"] {
            switch try n.string().lowercased() {
            case "true", "yes", "on": createTables = true
            case "false", "no", "off": createTables = false
            default: throw n.fail("create_tables must be true or false, not '\(n.text)'")
            }
        }
        if let n = node["timeout"] {
            timeout = try n.duration()
            guard timeout > 0 else { throw n.fail("the timeout must be longer than 0", hint: "write 60s") }
        }
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        PostgresSink(name: sink.name, settings: self, onError: sink.onError, environment: environment)
    }
}
