import Foundation
import Tributary
import TributaryPipeline

/// A `type: redis` sink in a pipeline file; register it with
/// `sinks.register(RedisSinkSettings.self)`.
extension RedisSinkSettings: SinkConfiguration {
    public static let type = "redis"
    public static let keys = ["url", "password_env", "password_file", "key", "format", "channel", "ttl"]

    /// Reads the settings of a redis sink: `url` (default `${REDIS_URL}`), `password_env` or
    /// `password_file`, `key`, `format`, `channel` and `ttl`.
    public init(settings node: PipelineSettingsNode) throws {
        let urlNode = node["url"] ?? node.child("url")
        let text = try node["url"]?.string() ?? urlNode.substitute("${REDIS_URL}")
        guard let url = URL(string: text), url.scheme?.lowercased() == "redis", url.host != nil else {
            throw urlNode.fail("the url is not a redis:// URL", hint: "write url: redis://host:6379 or redis://host:6379/2 (database 2)")
        }
        if url.user != nil || url.password != nil {
            throw urlNode.fail("the url holds credentials", hint: "credentials come from the environment: use password_env: NAME or password_file: PATH")
        }
        let db = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard db.isEmpty || (Int(db).map { $0 >= 0 } ?? false) else {
            throw urlNode.fail("'\(db)' is not a database number", hint: "write redis://host:6379/0")
        }
        self.init(url: url)
        passwordEnvironment = try node["password_env"]?.string()
        passwordFile = try node["password_file"]?.string()
        if let fileNode = node["password_file"], passwordEnvironment != nil {
            throw fileNode.fail("give password_env or password_file, not both")
        }
        if let n = node["key"] {
            let template = try n.string()
            var rest = template
            for placeholder in Self.placeholders { rest = rest.replacingOccurrences(of: placeholder, with: "") }
            guard template.contains("{id}"), !rest.contains("{"), !rest.contains("}") else {
                throw n.fail("the key template '\(n.text)' needs {id} and may hold only {entity}, {id} and {store}",
                             hint: "write key: \"{entity}:{id}\" or \"cache:{store}:{entity}:{id}\"")
            }
            key = template
        }
        if let n = node["format"] {
            guard let format = Format(rawValue: try n.string()) else { throw n.fail("unknown format '\(n.text)'", hint: "use hash or json") }
            self.format = format
        }
        if let n = node["channel"] {
            let channel = try n.string()
            self.channel = channel.isEmpty ? nil : channel
        }
        if let n = node["ttl"] { ttl = try Self.seconds(n) }
    }

    /// A time to live in whole seconds: `30s`, `10m`, `2h`, `7d` or a number of seconds.
    private static func seconds(_ node: PipelineSettingsNode) throws -> Int {
        let text = try node.string().trimmingCharacters(in: .whitespaces)
        let units: [(String, Int)] = [("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)]
        var seconds = Int(text)
        for (suffix, scale) in units where seconds == nil && text.hasSuffix(suffix) {
            seconds = Int(text.dropLast(suffix.count)).map { $0 * scale }
        }
        guard let seconds, seconds > 0 else {
            throw node.fail("'\(node.text)' is not a whole number of seconds", hint: "write 30s, 10m, 2h or 7d")
        }
        return seconds
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        RedisSink(name: sink.name, settings: self, environment: environment)
    }
}
