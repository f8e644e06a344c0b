import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// A `type: nats` sink in a pipeline file; register it with
/// `sinks.register(NATSSinkSettings.self)`.
extension NATSSinkSettings: SinkConfiguration {
    public static let type = "nats"
    public static let keys = ["url", "stream", "subject", "retention", "replicas", "duplicate_window", "max_pending", "timeout", "format"]

    /// Reads a `nats` sink's keys.
    public init(settings node: PipelineSettingsNode) throws {
        let format = try node["format"]?.streamFormat() ?? .native
        let urlNode = try node.required("url", hint: "add url: ${NATS_URL}")
        let url = try urlNode.string()
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "nats", parsed.host != nil else {
            throw urlNode.fail("the url is not a nats:// URL", hint: "write url: nats://HOST:PORT")
        }
        if parsed.user != nil || parsed.password != nil {
            throw urlNode.fail("the url holds credentials", hint: "run the server without them on a trusted network; credentials are not written in a pipeline file")
        }
        self.init(url: url, format: format)
        if let n = node["stream"] {
            stream = try n.string()
            guard !stream.isEmpty, !stream.contains(where: { $0 == "." || $0 == "*" || $0 == ">" || $0 == "/" || $0 == "\\" || $0.isWhitespace }) else {
                throw n.fail("'\(stream)' is not a stream name", hint: "use letters, digits, - and _, such as TRIBUTARY")
            }
        }
        if let n = node["subject"] {
            subject = try n.string()
            if let problem = templateProblem() {
                throw n.fail(problem, hint: "write tokens separated by dots, with {entity}, {op} or {store}, such as tributary.{entity}")
            }
        }
        if let n = node["retention"] {
            let text = try n.string()
            guard let retention = NATSStreamConfig.Retention(rawValue: text) else {
                throw n.fail("unknown retention '\(text)'", hint: "use limits, interest or workqueue")
            }
            self.retention = retention
        }
        if let n = node["replicas"] {
            guard let value = Int(try n.string()), (1...5).contains(value) else {
                throw n.fail("replicas must be a whole number from 1 to 5", hint: "write replicas: 1 for a single server")
            }
            replicas = value
        }
        if let n = node["duplicate_window"] {
            duplicateWindow = try n.duration()
            guard duplicateWindow > 0 else { throw n.fail("the duplicate window must be longer than 0", hint: "write 2m") }
        }
        if let n = node["max_pending"] {
            guard let value = Int(try n.string()), value >= 1 else {
                throw n.fail("max_pending must be a whole number of at least 1", hint: "write max_pending: 256")
            }
            maximumPending = value
        }
        if let n = node["timeout"] {
            timeout = try n.duration()
            guard timeout > 0 else { throw n.fail("the timeout must be longer than 0", hint: "write 5s") }
        }
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        NATSSink(name: sink.name, settings: self)
    }
}
