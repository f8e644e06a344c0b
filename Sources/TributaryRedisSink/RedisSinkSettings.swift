import Foundation
import Tributary
import TributaryPipeline

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
