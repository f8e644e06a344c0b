import Foundation
import Tributary

/// One value of a pipeline file — a scalar, a mapping or a list — with the file, line and key
/// it came from, so that a sink reading its own settings names them in its errors without
/// knowing the file's syntax (sink modules do not parse YAML). Scalars keep their text as
/// written; ``string()`` substitutes `${NAME}` and `${NAME:-default}` from the environment the
/// file was read with. Errors quote the file's text, never a substituted value (which may come
/// from a secret).
///
/// ```swift
/// // In a sink's `SinkConfiguration.init(settings:)`, `settings` being the sink's mapping:
/// let url = try settings.required("url", hint: "add url: nats://HOST:PORT").string()
/// let timeout = try settings["timeout"]?.duration() ?? 5
/// ```
public struct PipelineSettingsNode: Sendable {
    /// What the node holds.
    public enum Content: Sendable {
        /// A single value, as written in the file.
        case scalar(String)
        /// Keys and values, in the file's order.
        case mapping([(key: PipelineSettingsNode, value: PipelineSettingsNode)])
        /// A list.
        case sequence([PipelineSettingsNode])
    }

    /// What the node holds.
    public let content: Content
    /// The file it was read from.
    public let file: String
    /// Its line in the file (1-based), when known.
    public let line: Int?
    /// Its key path in the file, such as `sinks[0].url` (empty for the whole file).
    public let key: String
    /// The environment `${NAME}` is substituted from.
    let environment: [String: String]

    /// A node; `environment` supplies the values of `${NAME}`.
    ///
    /// ```swift
    /// let node = PipelineSettingsNode(.scalar("${DIR}/out"), file: "p.yml", line: 3, key: "sinks[0].directory", environment: ["DIR": "/tmp"])
    /// ```
    public init(_ content: Content, file: String, line: Int?, key: String, environment: [String: String]) {
        self.content = content
        self.file = file
        self.line = line
        self.key = key
        self.environment = environment
    }

    /// The child at `name` of a mapping (nil when absent or when this is not a mapping).
    ///
    /// ```swift
    /// if let node = settings["stream"] { stream = try node.string() }
    /// ```
    public subscript(name: String) -> PipelineSettingsNode? {
        guard case .mapping(let entries) = content else { return nil }
        return entries.first { $0.key.text == name }?.value
    }

    /// The child at `name`, or an error saying that a `type` sink needs it (at this node's line).
    ///
    /// ```swift
    /// let directory = try settings.required("directory", hint: "add directory: ${TRIBUTARY_OUT}/archive").string()
    /// ```
    public func required(_ name: String, hint: String) throws -> PipelineSettingsNode {
        if let value = self[name] { return value }
        let type = self["type"]?.text ?? ""
        throw fail(at: name, type.isEmpty ? "\(name) is required" : "a \(type) sink needs \(name)", hint: hint)
    }

    /// A scalar's text as the file has it (empty for a mapping or list); messages quote this,
    /// never a substituted value.
    public var text: String {
        guard case .scalar(let text) = content else { return "" }
        return text
    }

    /// An error at this node: `invalidPipeline`, located at its file, line and key.
    ///
    /// ```swift
    /// throw node.fail("the url is not a nats:// URL", hint: "write url: nats://HOST:PORT")
    /// ```
    public func fail(_ message: String, hint: String? = nil) -> TributaryError {
        TributaryError(.invalidPipeline, message, location: location(key), hint: hint)
    }

    /// An error about the key `name` under this node (one that is missing, say), at this node's line.
    public func fail(at name: String, _ message: String, hint: String? = nil) -> TributaryError {
        TributaryError(.invalidPipeline, message, location: location(Self.path(key, name)), hint: hint)
    }

    private func location(_ key: String) -> String {
        file + (line.map { ":\($0)" } ?? "") + (key.isEmpty ? "" : ": " + key)
    }

    /// The key path of `name` under `parent`.
    static func path(_ parent: String, _ name: String) -> String { parent.isEmpty ? name : parent + "." + name }

    /// The same node reported under another key (a list's items are named by the list).
    func named(_ key: String) -> PipelineSettingsNode {
        PipelineSettingsNode(content, file: file, line: line, key: key, environment: environment)
    }
}
