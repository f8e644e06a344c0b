import Foundation
import Tributary
import Yams

extension PipelineFileReader {
    /// The keys of a `type: postgres` sink.
    static let postgresKeys = ["url", "password_env", "password_file", "schema", "tables", "create_tables"]

    /// Reads a `type: postgres` sink's settings: `url` (default `${POSTGRES_URL}`),
    /// `password_env` or `password_file`, `schema` (default `public`), `tables` (entity →
    /// table) and `create_tables` (default true).
    func readPostgresSink(_ map: Node.Mapping, node: Node, key: String) throws -> PostgresSinkSettings {
        let urlNode = map["url"]
        let text = try urlNode.map { try string($0, key + ".url") } ?? substitute("${POSTGRES_URL}", node: node, key: key + ".url")
        let endpoint: PostgresEndpoint
        do {
            endpoint = try PostgresEndpoint(parsing: text)
        } catch let error as TributaryError {
            throw fail(urlNode ?? node, key + ".url", error.message, hint: error.hint)
        }
        var settings = PostgresSinkSettings(endpoint: endpoint)
        settings.passwordEnvironment = try map["password_env"].map { try string($0, key + ".password_env") }
        settings.passwordFile = try map["password_file"].map { try string($0, key + ".password_file") }
        if settings.passwordEnvironment != nil, settings.passwordFile != nil {
            throw fail(map["password_file"], key + ".password_file", "give password_env or password_file, not both")
        }
        if let n = map["schema"] {
            settings.schema = try string(n, key + ".schema")
            guard !settings.schema.isEmpty else { throw fail(n, key + ".schema", "the schema name is empty", hint: "write schema: public, or leave it out") }
        }
        if let n = map["tables"] {
            guard case .mapping(let names) = n else { throw fail(n, key + ".tables", "tables maps entity names to table names", hint: "write tables: {Post: posts}") }
            for (entity, table) in names {
                let name = try string(entity, key + ".tables")
                let value = try string(table, key + ".tables." + name)
                guard !value.isEmpty else { throw fail(table, key + ".tables." + name, "the table name is empty", hint: "write tables: {\(name): TABLE}") }
                settings.tables[name] = value
            }
        }
        if let n = map["create_tables"] {
            switch try string(n, key + ".create_tables").lowercased() {
            case "true", "yes", "on": settings.createTables = true
            case "false", "no", "off": settings.createTables = false
            default: throw fail(n, key + ".create_tables", "create_tables must be true or false, not '\(n.scalar?.string ?? "")'")
            }
        }
        return settings
    }
}
