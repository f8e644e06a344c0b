import Foundation
import Tributary
import TributaryStreams
import Yams

extension PipelineFileReader {
    /// Reads a `nats` sink's keys.
    func readNATSSink(_ map: Node.Mapping, node: Node, key: String, format: StreamFormat) throws -> NATSSinkSettings {
        guard let urlNode = map["url"] else { throw fail(node, key + ".url", "a nats sink needs url", hint: "add url: ${NATS_URL}") }
        let url = try string(urlNode, key + ".url")
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "nats", parsed.host != nil else {
            throw fail(urlNode, key + ".url", "the url is not a nats:// URL", hint: "write url: nats://HOST:PORT")
        }
        if parsed.user != nil || parsed.password != nil {
            throw fail(urlNode, key + ".url", "the url holds credentials", hint: "run the server without them on a trusted network; credentials are not written in a pipeline file")
        }
        var settings = NATSSinkSettings(url: url, format: format)
        if let n = map["stream"] {
            settings.stream = try string(n, key + ".stream")
            guard !settings.stream.isEmpty, !settings.stream.contains(where: { $0 == "." || $0 == "*" || $0 == ">" || $0 == "/" || $0 == "\\" || $0.isWhitespace }) else {
                throw fail(n, key + ".stream", "'\(settings.stream)' is not a stream name", hint: "use letters, digits, - and _, such as TRIBUTARY")
            }
        }
        if let n = map["subject"] {
            settings.subject = try string(n, key + ".subject")
            if let problem = settings.templateProblem() {
                throw fail(n, key + ".subject", problem, hint: "write tokens separated by dots, with {entity}, {op} or {store}, such as tributary.{entity}")
            }
        }
        if let n = map["retention"] {
            let text = try string(n, key + ".retention")
            guard let retention = NATSStreamConfig.Retention(rawValue: text) else {
                throw fail(n, key + ".retention", "unknown retention '\(text)'", hint: "use limits, interest or workqueue")
            }
            settings.retention = retention
        }
        if let n = map["replicas"] {
            guard let value = Int(try string(n, key + ".replicas")), (1...5).contains(value) else {
                throw fail(n, key + ".replicas", "replicas must be a whole number from 1 to 5", hint: "write replicas: 1 for a single server")
            }
            settings.replicas = value
        }
        if let n = map["duplicate_window"] {
            settings.duplicateWindow = try duration(n, key + ".duplicate_window")
            guard settings.duplicateWindow > 0 else { throw fail(n, key + ".duplicate_window", "the duplicate window must be longer than 0", hint: "write 2m") }
        }
        if let n = map["max_pending"] {
            guard let value = Int(try string(n, key + ".max_pending")), value >= 1 else {
                throw fail(n, key + ".max_pending", "max_pending must be a whole number of at least 1", hint: "write max_pending: 256")
            }
            settings.maximumPending = value
        }
        if let n = map["timeout"] {
            settings.timeout = try duration(n, key + ".timeout")
            guard settings.timeout > 0 else { throw fail(n, key + ".timeout", "the timeout must be longer than 0", hint: "write 5s") }
        }
        return settings
    }
}
