import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Tributary
import TributaryPipeline
import TributaryStreams

/// POSTs batches of records as JSON to a URL, with an `Idempotency-Key` header naming the
/// batch by its first and last event ID, and each record's event ID as its `id`. A 2xx answer
/// is success; 429, 5xx and connection failures are `sinkUnavailable` (retried with
/// backoff); any other answer is `sinkRejected` with the response, for `on_error`. The bearer
/// token comes from an environment variable or a file, and appears in no error. Requests go
/// through AsyncHTTPClient's shared client (SwiftNIO, keep-alive connections, TLS).
///
/// The body: `{"records": [{"id": "…", "record": {…}}, …]}` with records in the chosen format.
/// A batch delivered again right after a failed attempt is posted as the same bytes.
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
    private var opened = false
    private var eventIDs = EventIDWriter()
    private var body: [UInt8] = []
    /// The batch of the last failed attempt (its idempotency key, size and body): the same
    /// records delivered again (a retry) are posted as the same bytes, since an encoder's state moves on
    /// (Debezium numbers each entity's records in a transaction) and an endpoint may check
    /// that a repeated key comes with the same body.
    private var posted: (key: String, count: Int, body: ByteBuffer)?

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
        encoder.use(context.model)
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
        opened = true
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
        precondition(opened, "open the sink before delivering")
        guard !records.isEmpty else { return }
        let key = Self.idempotencyKey(records)
        if posted.map({ $0.key != key || $0.count != records.count }) ?? true {
            posted = (key, records.count, encode(records))
        }
        try await post(posted!.body, key: key)
        posted = nil
    }

    /// Posts a schema record (the source's model changed) as a batch of one:
    /// `{"records":[{"id":…,"record":<schema record>}]}`, keyed by its event ID.
    public func deliverSchema(_ record: SchemaRecord) async throws {
        precondition(opened, "open the sink before delivering")
        var bytes = Array(#"{"records":[{"id":""#.utf8) + Array(record.eventID.utf8) + Array(#"","record":"#.utf8)
        encoder.encodeSchema(record, into: &bytes)
        if bytes.last == 0x0A { bytes.removeLast() }
        bytes += "}]}".utf8
        try await post(ByteBuffer(bytes: bytes), key: record.eventID)
    }

    /// POSTs `body` with `key` as its idempotency key; throws `sinkUnavailable` for what is
    /// worth retrying (no answer, 429, 5xx) and `sinkRejected` for other refusals.
    private func post(_ body: ByteBuffer, key: String) async throws {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        request.headers.add(name: "Idempotency-Key", value: key)
        if let token { request.headers.add(name: "Authorization", value: "Bearer " + token) }
        request.body = .bytes(body)
        let status: Int, answer: ByteBuffer
        do {
            let response = try await HTTPClient.shared.execute(request, timeout: .milliseconds(Int64(saturating: timeout * 1000)))
            status = Int(response.status.code)
            answer = try await response.body.collect(upTo: 1 << 20)
        } catch {
            throw TributaryError.sinkUnavailable(name, "cannot reach \(Self.describe(url)): \(error)")
        }
        if (200..<300).contains(status) { return }
        let text = String(decoding: answer.readableBytesView.prefix(2_000), as: UTF8.self).replacingOccurrences(of: "\n", with: " ")
        if status == 429 || status >= 500 {
            throw TributaryError.sinkUnavailable(name, "HTTP \(status) from \(Self.describe(url))")
        }
        throw TributaryError.sinkRejected(name, "HTTP \(status) from \(Self.describe(url)): \(text)", hint: "the endpoint refused the batch; see its response")
    }

    /// The body of a batch: `{"records":[{"id":…,"record":…},…]}`.
    private func encode(_ records: [StreamRecord]) -> ByteBuffer {
        body.removeAll(keepingCapacity: true)
        body += #"{"records":["#.utf8
        for (offset, record) in records.enumerated() {
            if offset > 0 { body.append(0x2C) }
            body += #"{"id":""#.utf8
            eventIDs.append(record, to: &body)   // hex digits, dashes and an `r`: nothing to escape
            body += #"","record":"#.utf8
            encoder.encode(record, into: &body)
            if body.last == 0x0A { body.removeLast() }
            body.append(0x7D)
        }
        body += "]}".utf8
        return ByteBuffer(bytes: body)
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? { position }

    public func close() async throws {
        opened = false
        posted = nil
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
