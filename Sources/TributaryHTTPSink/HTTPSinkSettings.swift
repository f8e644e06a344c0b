import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// The settings of a `type: http` sink: JSON batches POSTed to `url`, the bearer token read
/// from an environment variable or a file (never the pipeline file). Register it with
/// `sinks.register(HTTPSinkSettings.self)`.
///
/// ```yaml
/// - type: http
///   url: ${WEBHOOK_URL}
///   bearer_token_env: WEBHOOK_TOKEN   # or bearer_token_file: /run/secrets/webhook
///   timeout: 10s
///   format: cloudevents
/// ```
public struct HTTPSinkSettings: SinkConfiguration, Equatable {
    public static let type = "http"
    public static let keys = ["url", "bearer_token_env", "bearer_token_file", "timeout", "format"]

    /// The endpoint (`url`: http or https, without credentials).
    public var url: URL
    /// The environment variable holding the bearer token (`bearer_token_env`).
    public var bearerTokenEnvironment: String?
    /// The file holding the bearer token (`bearer_token_file`).
    public var bearerTokenFile: String?
    /// Seconds to wait for an answer (`timeout`, default 10s).
    public var timeout: TimeInterval
    /// The record encoding (`format`).
    public var format: StreamFormat

    /// Settings.
    ///
    /// ```swift
    /// let settings = HTTPSinkSettings(url: URL(string: "https://example.com/hook")!, bearerTokenEnvironment: "WEBHOOK_TOKEN")
    /// ```
    public init(url: URL, bearerTokenEnvironment: String? = nil, bearerTokenFile: String? = nil, timeout: TimeInterval = 10, format: StreamFormat = .native) {
        self.url = url
        self.bearerTokenEnvironment = bearerTokenEnvironment
        self.bearerTokenFile = bearerTokenFile
        self.timeout = timeout
        self.format = format
    }

    /// Reads an `http` sink's keys.
    public init(settings node: PipelineSettingsNode) throws {
        let urlNode = try node.required("url", hint: "add url: https://example.com/hook")
        let text = try urlNode.string()
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
            throw urlNode.fail("the url is not an http or https URL", hint: "write url: https://host/path")
        }
        if url.user != nil || url.password != nil {
            throw urlNode.fail("the url holds credentials", hint: "credentials come from the environment: use bearer_token_env: NAME")
        }
        let tokenEnvironment = try node["bearer_token_env"]?.string()
        let tokenFile = try node["bearer_token_file"]?.string()
        if let fileNode = node["bearer_token_file"], tokenEnvironment != nil {
            throw fileNode.fail("give bearer_token_env or bearer_token_file, not both")
        }
        self.init(url: url, bearerTokenEnvironment: tokenEnvironment, bearerTokenFile: tokenFile,
                  timeout: try node["timeout"]?.duration() ?? 10, format: try node["format"]?.streamFormat() ?? .native)
    }

    public func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink {
        HTTPSink(name: sink.name, url: url, bearerTokenEnvironment: bearerTokenEnvironment, bearerTokenFile: bearerTokenFile, timeout: timeout,
                 format: format, environment: environment)
    }
}
