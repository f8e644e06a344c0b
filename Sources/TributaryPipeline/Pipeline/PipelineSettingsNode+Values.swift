import Foundation
import Tributary
import TributaryStreams

/// Typed values read from a ``PipelineSettingsNode``; each error names the file, line and key.
extension PipelineSettingsNode {
    /// Keys that would put a credential in the file itself.
    static let credentialKeys = ["token", "bearer_token", "password", "secret", "api_key", "apikey", "authorization"]

    /// The entries of a mapping, after checking that every key is one of `allowed` (and none
    /// would hold a credential).
    ///
    /// ```swift
    /// for (key, value) in try node.entries(allowed: ["records", "seconds"]) { … }
    /// ```
    public func entries(allowed: [String]) throws -> [(key: PipelineSettingsNode, value: PipelineSettingsNode)] {
        guard case .mapping(let entries) = content else {
            throw fail("\(key) must be a mapping", hint: "allowed keys: \(allowed.joined(separator: ", "))")
        }
        try checkKeys(allowed: allowed)
        return entries
    }

    /// Refuses keys of this mapping outside `allowed`, and keys that would hold a credential.
    func checkKeys(allowed: [String]) throws {
        guard case .mapping(let entries) = content else { return }
        for (keyNode, _) in entries {
            let name = keyNode.text
            if Self.credentialKeys.contains(name.lowercased()) {
                throw keyNode.fail("credentials are not written in a pipeline file",
                                   hint: "put the secret in an environment variable and name it, e.g. bearer_token_env: WEBHOOK_TOKEN, or bearer_token_file: PATH")
            }
            guard allowed.contains(name) else {
                throw keyNode.fail("unknown key '\(name)'", hint: "allowed keys: \(allowed.joined(separator: ", "))")
            }
        }
    }

    /// The items of a list.
    public func items() throws -> [PipelineSettingsNode] {
        guard case .sequence(let items) = content else { throw fail("\(key) must be a list", hint: "write each item on a line starting with -") }
        return items
    }

    /// A scalar's text with environment variables substituted.
    ///
    /// ```swift
    /// let path = try settings.required("path", hint: "add path: ${TRIBUTARY_OUT}/search.sqlite").string()
    /// ```
    public func string() throws -> String {
        guard case .scalar(let text) = content else { throw fail("\(key) must be a single value, not a list or mapping") }
        return try substitute(text)
    }

    /// A list of scalars, or one scalar as a list of one.
    public func strings() throws -> [String] {
        if case .scalar = content { return [try string()] }
        return try items().map { try $0.named(key).string() }
    }

    /// `true`/`yes`/`on` or `false`/`no`/`off`.
    public func bool() throws -> Bool {
        switch try string().lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail("\(key) must be true or false, not '\(text)'")
        }
    }

    /// A whole number of at least `minimum`.
    public func integer(minimum: Int) throws -> Int {
        guard let value = Int(try string()), value >= minimum else {
            throw fail("\(key) must be a whole number of at least \(minimum), not '\(text)'")
        }
        return value
    }

    /// A whole number of at least 1.
    public func positive() throws -> Int { try integer(minimum: 1) }

    /// Seconds from `250ms`, `5s`, `10m`, `2h`, `7d` or a plain number of seconds.
    ///
    /// ```swift
    /// let timeout = try settings["timeout"]?.duration() ?? 10
    /// ```
    public func duration() throws -> TimeInterval {
        let text = try string().trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 { return value * scale }
        }
        if let value = Double(text), value >= 0 { return value }
        throw fail("'\(self.text)' is not a duration", hint: "write 250ms, 5s, 10m, 2h or 7d")
    }

    /// A record encoding: `native`, `debezium` or `cloudevents`.
    public func streamFormat() throws -> StreamFormat {
        guard let format = StreamFormat(rawValue: try string()) else { throw fail("unknown format '\(text)'", hint: "use native, debezium or cloudevents") }
        return format
    }

    /// `text` with `${NAME}` and `${NAME:-default}` replaced by the environment's values; errors
    /// are reported at this node (a sink's default such as `${REDIS_URL}` is read this way).
    ///
    /// ```swift
    /// let url = try settings["url"]?.string() ?? settings.child("url").substitute("${REDIS_URL}")
    /// ```
    public func substitute(_ text: String) throws -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw fail("'${' without a closing '}'", hint: "write ${NAME} or ${NAME:-default}")
            }
            let inner = rest[start.upperBound..<end]
            let name: Substring, fallback: Substring?
            if let separator = inner.range(of: ":-") {
                name = inner[..<separator.lowerBound]
                fallback = inner[separator.upperBound...]
            } else {
                name = inner
                fallback = nil
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw fail("'${\(inner)}' is not a variable reference", hint: "names are letters, digits and _; write ${NAME} or ${NAME:-default}")
            }
            if let value = environment[String(name)], !value.isEmpty {
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw fail("the environment variable \(name) is not set", hint: "export \(name), or write ${\(name):-default}")
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }

    /// This node reported as its child `name` (a default read in place of a missing key).
    public func child(_ name: String) -> PipelineSettingsNode { named(Self.path(key, name)) }
}
