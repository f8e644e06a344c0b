import Foundation
import Tributary
import Yams

/// The settings of a `type: redis` sink in a pipeline file:
///
/// ```yaml
/// - type: redis
///   url: ${REDIS_URL}            # redis://host:port[/db] (the default)
///   password_env: REDIS_PASSWORD # or password_file: /run/secrets/redis (never the password itself)
///   key: "{entity}:{id}"         # also {store}
///   format: hash                 # or json
///   channel: cache-invalidations # optional: PUBLISH channel KEY for each change applied
///   ttl: 1h                      # optional expiry of each object key
/// ```
///
/// ```swift
/// let settings = RedisSinkSettings(url: URL(string: "redis://127.0.0.1:6379")!)
/// ```
public struct RedisSinkSettings: Sendable, Equatable {
    /// How an object is stored under its key.
    public enum Format: String, Sendable, CaseIterable {
        /// A hash: one field per attribute (values as text), plus `_position`.
        case hash
        /// A JSON object in a string key, with a `_position` member.
        case json
    }

    /// The server: `redis://host:port[/db]`, without credentials.
    ///
    /// ```swift
    /// settings.url = URL(string: "redis://127.0.0.1:6379/1")!
    /// ```
    public var url: URL
    /// The environment variable holding the password (sent with `AUTH`).
    public var passwordEnvironment: String?
    /// The file holding the password.
    public var passwordFile: String?
    /// The key template: `{entity}`, `{id}` (the primary key) and `{store}` (the store's ID).
    public var key: String
    /// How objects are stored.
    public var format: Format
    /// The channel to publish each changed key on, if any.
    public var channel: String?
    /// Seconds before an object key expires (refreshed on every write); nil for never.
    public var ttl: Int?

    /// Settings with the defaults of the pipeline file.
    ///
    /// ```swift
    /// let settings = RedisSinkSettings(url: URL(string: "redis://127.0.0.1:6379")!, format: .json, channel: "changes", ttl: 3_600)
    /// ```
    public init(url: URL, passwordEnvironment: String? = nil, passwordFile: String? = nil, key: String = "{entity}:{id}", format: Format = .hash,
                channel: String? = nil, ttl: Int? = nil) {
        self.url = url
        self.passwordEnvironment = passwordEnvironment
        self.passwordFile = passwordFile
        self.key = key
        self.format = format
        self.channel = channel
        self.ttl = ttl
    }

    /// The placeholders a key template may hold.
    static let placeholders = ["{entity}", "{id}", "{store}"]
}

extension PipelineFileReader {
    /// The keys of a `type: redis` sink, besides the common ones.
    static let redisKeys = ["url", "password_env", "password_file", "key", "format", "channel", "ttl"]

    /// Reads the settings of the redis sink `map` at `key`.
    func readRedisSink(_ map: Node.Mapping, node: Node, key: String) throws -> RedisSinkSettings {
        let urlNode = map["url"] ?? node
        let text = try map["url"].map { try string($0, key + ".url") } ?? substitute("${REDIS_URL}", node: node, key: key + ".url")
        guard let url = URL(string: text), url.scheme?.lowercased() == "redis", url.host != nil else {
            throw fail(urlNode, key + ".url", "the url is not a redis:// URL", hint: "write url: redis://host:6379 or redis://host:6379/2 (database 2)")
        }
        if url.user != nil || url.password != nil {
            throw fail(urlNode, key + ".url", "the url holds credentials", hint: "credentials come from the environment: use password_env: NAME or password_file: PATH")
        }
        let db = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        guard db.isEmpty || (Int(db).map { $0 >= 0 } ?? false) else {
            throw fail(urlNode, key + ".url", "'\(db)' is not a database number", hint: "write redis://host:6379/0")
        }
        var settings = RedisSinkSettings(url: url)
        settings.passwordEnvironment = try map["password_env"].map { try string($0, key + ".password_env") }
        settings.passwordFile = try map["password_file"].map { try string($0, key + ".password_file") }
        if settings.passwordEnvironment != nil, settings.passwordFile != nil {
            throw fail(map["password_file"], key + ".password_file", "give password_env or password_file, not both")
        }
        if let n = map["key"] {
            let template = try string(n, key + ".key")
            var rest = template
            for placeholder in RedisSinkSettings.placeholders { rest = rest.replacingOccurrences(of: placeholder, with: "") }
            guard template.contains("{id}"), !rest.contains("{"), !rest.contains("}") else {
                throw fail(n, key + ".key", "the key template '\(n.scalar?.string ?? "")' needs {id} and may hold only {entity}, {id} and {store}",
                           hint: "write key: \"{entity}:{id}\" or \"cache:{store}:{entity}:{id}\"")
            }
            settings.key = template
        }
        if let n = map["format"] {
            guard let format = RedisSinkSettings.Format(rawValue: try string(n, key + ".format")) else {
                throw fail(n, key + ".format", "unknown format '\(n.scalar?.string ?? "")'", hint: "use hash or json")
            }
            settings.format = format
        }
        if let n = map["channel"] {
            let channel = try string(n, key + ".channel")
            settings.channel = channel.isEmpty ? nil : channel
        }
        if let n = map["ttl"] {
            let text = try string(n, key + ".ttl").trimmingCharacters(in: .whitespaces)
            let units: [(String, Int)] = [("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400)]
            var seconds = Int(text)
            for (suffix, scale) in units where seconds == nil && text.hasSuffix(suffix) {
                seconds = Int(text.dropLast(suffix.count)).map { $0 * scale }
            }
            guard let seconds, seconds > 0 else {
                throw fail(n, key + ".ttl", "'\(n.scalar?.string ?? "")' is not a whole number of seconds", hint: "write 30s, 10m, 2h or 7d")
            }
            settings.ttl = seconds
        }
        return settings
    }
}
