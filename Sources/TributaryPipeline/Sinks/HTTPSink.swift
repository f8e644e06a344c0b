import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tributary
import TributaryStreams

/// POSTs batches of records as JSON to a URL, with an `Idempotency-Key` header naming the
/// batch by its first and last event ID, and each record's event ID as its `id`. A 2xx answer
/// is success; 429, 5xx and connection failures are `sinkUnavailable` (retried with
/// backoff); any other answer is `sinkRejected` with the response, for `on_error`. The bearer
/// token comes from an environment variable or a file, and appears in no error.
///
/// The body: `{"records": [{"id": "…", "record": {…}}, …]}` with records in the chosen format.
///
/// ```swift
/// let sink = HTTPSink(name: "webhook", url: URL(string: "https://example.com/hook")!, bearerTokenEnvironment: "WEBHOOK_TOKEN")
/// ```
public final class HTTPSink: Sink {
    public let name: String
    private let url: URL
    private let bearerTokenEnvironment: String?
    private let bearerTokenFile: String?
    private let timeout: TimeInterval
    private let environment: [String: String]
    private var encoder: any RecordEncoder
    private var token: String?
    private var session: URLSession?
    private var line: [UInt8] = []

    /// A sink posting to `url`, `format` records, the bearer token read from the environment
    /// variable or file named (never from the pipeline file).
    public init(name: String, url: URL, bearerTokenEnvironment: String? = nil, bearerTokenFile: String? = nil, timeout: TimeInterval = 10,
                format: StreamFormat = .native, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.name = name
        self.url = url
        self.bearerTokenEnvironment = bearerTokenEnvironment
        self.bearerTokenFile = bearerTokenFile
        self.timeout = timeout
        self.environment = environment
        self.encoder = format.makeEncoder()
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        if let variable = bearerTokenEnvironment {
            guard let value = environment[variable], !value.isEmpty else {
                throw TributaryError(.invalidInput, "the environment variable \(variable) named by bearer_token_env is not set", location: "sink \(name)",
                                     hint: "export \(variable) with the endpoint's token")
            }
            token = value
        } else if let file = bearerTokenFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw TributaryError(.fileNotFound, "the bearer_token_file cannot be read", location: file, hint: "write the token to that file, readable by this user")
            }
            token = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 1
        session = URLSession(configuration: configuration)
        return nil
    }

    /// The batch's idempotency key: its event ID when it holds one record, else `first..last`.
    ///
    /// ```swift
    /// HTTPSink.idempotencyKey(records)   // "0b6f…-42-0..0b6f…-42-99"
    /// ```
    public static func idempotencyKey(_ records: [StreamRecord]) -> String {
        guard let first = records.first, let last = records.last else { return "" }
        return records.count == 1 ? first.eventID : first.eventID + ".." + last.eventID
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard let session else { preconditionFailure("open the sink before delivering") }
        guard !records.isEmpty else { return }
        var body: [UInt8] = Array(#"{"records":["#.utf8)
        for (offset, record) in records.enumerated() {
            line.removeAll(keepingCapacity: true)
            encoder.encode(record, into: &line)
            if line.last == 0x0A { line.removeLast() }
            if offset > 0 { body.append(0x2C) }
            body += #"{"id":""#.utf8
            body += record.eventID.utf8
            body += #"","record":"#.utf8
            body += line
            body.append(0x7D)
        }
        body += "]}".utf8
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(Self.idempotencyKey(records), forHTTPHeaderField: "Idempotency-Key")
        if let token { request.setValue("Bearer " + token, forHTTPHeaderField: "Authorization") }
        let data: Data, response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw TributaryError.sinkUnavailable(name, "cannot reach \(Self.describe(url)): \((error as NSError).localizedDescription)")
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if (200..<300).contains(status) { return }
        let text = String(decoding: data.prefix(2_000), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        if status == 429 || status >= 500 {
            throw TributaryError.sinkUnavailable(name, "HTTP \(status) from \(Self.describe(url))")
        }
        throw TributaryError.sinkRejected(name, "HTTP \(status) from \(Self.describe(url)): \(text)", hint: "the endpoint refused the batch; see its response")
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }

    public func close() async throws {
        session?.finishTasksAndInvalidate()
        session = nil
    }

    /// The URL without its query (which may hold a key).
    static func describe(_ url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        components?.query = nil
        components?.user = nil
        components?.password = nil
        return components?.string ?? url.host ?? "the endpoint"
    }
}
