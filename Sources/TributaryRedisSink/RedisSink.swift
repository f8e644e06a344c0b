import Foundation
import Tributary
import TributaryPipeline
import TributaryStreams

/// Keeps a Redis cache of the store's objects: each object under a key made from a template
/// (`{entity}:{id}` by default), as a hash of its attribute values (as text) or as a JSON
/// object; inserts replace the object, updates merge the changed values, deletes remove it.
/// A JSON object writes a blob in an attribute that is not binary as `{"base64":"…"}`, apart
/// from text, by the model the sink opened with and then by each schema record's.
/// Records go to the server through ``RedisSinkScript`` (one `EVALSHA` per group of records,
/// many per round trip), which writes an object only when the record's position is newer than
/// the one stored with it, so an older redelivery never overwrites a newer value, and which
/// moves the pipeline's checkpoint key (`tributary:checkpoint:PIPELINE`) in the same atomic
/// call: ``open(_:)`` returns it, so a restarted pipeline resumes right after the last record
/// applied. A delete leaves `KEY:deleted` with its position for ``tombstoneSeconds``.
///
/// Connection failures and server errors worth retrying (`LOADING`, `BUSY`, `OOM`, …) are
/// `sinkUnavailable`; the next attempt reconnects. The password comes from an environment
/// variable or a file and appears in no error. Durability is the server's (`appendonly`).
///
/// ```swift
/// let sink = RedisSink(name: "cache", settings: RedisSinkSettings(url: URL(string: "redis://127.0.0.1:6379")!))
/// ```
public final class RedisSink: Sink {
    public let name: String
    /// The settings.
    ///
    /// ```swift
    /// print(sink.settings.key)   // "{entity}:{id}"
    /// ```
    public let settings: RedisSinkSettings
    /// How long a delete's tombstone keeps an older redelivered insert out: a day. Redelivery
    /// runs forward from the checkpoint, so an expired tombstone cannot leave a stale object.
    ///
    /// ```swift
    /// let ttl = try redis.command(["TTL", "Post:42:deleted"])   // at most RedisSink.tombstoneSeconds
    /// ```
    public static let tombstoneSeconds = 86_400
    /// Records per script call (several calls go in one round trip).
    ///
    /// ```swift
    /// sink.recordsPerCall = 500
    /// ```
    public var recordsPerCall = 200
    private let environment: [String: String]
    private let timeout: TimeInterval
    private var password: String?
    private var connection: RedisConnection?
    private var sha = ""
    private var checkpointKey = "tributary:checkpoint:"
    private var chainKey = "tributary:chain:"
    private var position: StreamPosition?
    private let template: RedisKeyTemplate
    private var json = JSONWriter()
    /// The attributes whose blobs a `json` document marks apart from text (``BlobMarking``).
    private var marking = BlobMarking()
    private var calls: [RedisArguments] = []
    private var ends: [StreamPosition] = []
    private var keys = RedisArguments()
    private var values = RedisArguments()
    private var scratch: [UInt8] = []
    private var dates = DateTexts()

    /// A sink writing to the server of `settings`, the password read from the variable or
    /// file it names (looked up in `environment`); `timeout` bounds the connection and each reply.
    ///
    /// ```swift
    /// let sink = RedisSink(name: "cache", settings: settings, environment: ["REDIS_PASSWORD": "…"])
    /// ```
    public init(name: String, settings: RedisSinkSettings, timeout: TimeInterval = 10, environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.name = name
        self.settings = settings
        self.template = RedisKeyTemplate(settings.key)
        self.timeout = timeout
        self.environment = environment
    }

    /// The checkpoint key of pipeline `pipeline`.
    ///
    /// ```swift
    /// RedisSink.checkpointKey(pipeline: "redis-cache")   // "tributary:checkpoint:redis-cache"
    /// ```
    public static func checkpointKey(pipeline: String) -> String { "tributary:checkpoint:" + pipeline }

    /// The key of pipeline `pipeline`'s chain point (``durableChainPoint``), `TOKEN:HASH`.
    ///
    /// ```swift
    /// RedisSink.chainKey(pipeline: "redis-cache")   // "tributary:chain:redis-cache"
    /// ```
    public static func chainKey(pipeline: String) -> String { "tributary:chain:" + pipeline }

    /// The chain point the chain key held at ``open(_:)``, or the last one a checkpoint wrote.
    /// It is written after the records it vouches for, so it is never ahead of them.
    public private(set) var durableChainPoint: StreamManifest.ChainPoint?
    /// The newest chain point among the records delivered since the last checkpoint.
    private var deliveredChain: StreamManifest.ChainPoint?

    /// The key of `record`'s object by `template`.
    ///
    /// ```swift
    /// RedisSink.key(for: record, template: "{entity}:{id}")   // "Post:42"
    /// ```
    public static func key(for record: StreamRecord, template: String) -> String {
        RedisKeyTemplate(template).key(for: record)
    }

    public func open(_ context: SinkContext) async throws -> StreamPosition? {
        if let variable = settings.passwordEnvironment {
            guard let value = environment[variable], !value.isEmpty else {
                throw TributaryError(.invalidInput, "the environment variable \(variable) named by password_env is not set", location: "sink \(name)",
                                     hint: "export \(variable) with the Redis password")
            }
            password = value
        } else if let file = settings.passwordFile {
            guard let data = FileManager.default.contents(atPath: file) else {
                throw TributaryError(.fileNotFound, "the password_file cannot be read", location: file, hint: "write the Redis password to that file, readable by this user")
            }
            password = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        marking = BlobMarking(context.model)
        checkpointKey = Self.checkpointKey(pipeline: context.pipeline)
        chainKey = Self.chainKey(pipeline: context.pipeline)
        let reply = try connect().command(["GET", checkpointKey])
        switch reply {
        case .null: position = nil
        case .string:
            position = try StreamPosition(parsing: reply.text ?? "")
        default:
            throw TributaryError.sinkRejected(name, "the checkpoint key \(checkpointKey) holds \(reply), not a position", hint: "delete the key to start over")
        }
        durableChainPoint = try readChainPoint(chainKey)
        return position
    }

    /// The chain point at `key`, nil when it holds none.
    private func readChainPoint(_ key: String) throws -> StreamManifest.ChainPoint? {
        let reply = try connect().command(["GET", key])
        if case .null = reply { return nil }
        guard let text = reply.text, let colon = text.firstIndex(of: ":"), let token = Int64(text[..<colon]) else {
            throw TributaryError.sinkRejected(name, "the chain key \(key) holds \(reply), not TOKEN:HASH", hint: "delete the key: the next checkpoint writes it again")
        }
        return StreamManifest.ChainPoint(token: token, hash: String(text[text.index(after: colon)...]))
    }

    /// Writes the newest chain point delivered, once its records are in (after a checkpoint).
    private func saveChainPoint() throws {
        guard let point = deliveredChain else { return }
        let reply = try connect().command(["SET", chainKey, "\(point.token):\(point.hash)"])
        if case .error = reply { throw failure(reply, doing: "SET") }
        durableChainPoint = point
        deliveredChain = nil
    }

    /// The open connection, or a new one (with the script loaded).
    private func connect() throws -> RedisConnection {
        if let connection, connection.isOpen { return connection }
        let connection = try RedisConnection(url: settings.url, password: password, timeout: timeout, sink: name)
        let reply = try connection.command(["SCRIPT", "LOAD", RedisSinkScript.source])
        guard case .string = reply, let sha = reply.text else { throw failure(reply, doing: "SCRIPT LOAD") }
        self.sha = sha
        self.connection = connection
        return connection
    }

    /// Schema records received and ignored: a cache of rows keeps no schema.
    public private(set) var ignoredSchemaRecords = 0

    /// Ignores the schema record (counting it in ``ignoredSchemaRecords``), but for the model
    /// `json` documents mark blobs by.
    public func deliverSchema(_ record: SchemaRecord) async throws {
        marking = BlobMarking(record.change.model)
        ignoredSchemaRecords += 1
    }

    public func deliver(_ records: [StreamRecord]) async throws {
        guard !records.isEmpty else { return }
        calls.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
        let connection = try connect()
        var start = 0
        while start < records.count {
            // Each call is written as soon as it is made: the server runs it while the next is built.
            let end = min(records.count, start + recordsPerCall)
            let call = arguments(records[start..<end], checkpoint: records[end - 1].position)
            connection.append(call, after: ["EVALSHA", sha])
            try connection.flush()
            calls.append(call)
            ends.append(records[end - 1].position)
            start = end
        }
        try readReplies(calls, ends: ends, from: connection)
        position = max(position ?? records[records.count - 1].position, records[records.count - 1].position)
        if let point = records.last(where: { $0.chainHash != nil }).flatMap(StreamManifest.ChainPoint.init) { deliveredChain = point }
    }

    public func checkpoint(through position: StreamPosition) async throws -> StreamPosition? {
        if self.position.map({ $0 < position }) ?? true {
            try run([arguments([], checkpoint: position)], ends: [position])
            self.position = position
        }
        try saveChainPoint()
        return self.position
    }

    public func close() async throws {
        connection?.close()
        connection = nil
    }

    /// Sends the script calls in one round trip and reads their replies.
    private func run(_ calls: [RedisArguments], ends: [StreamPosition]) throws {
        let connection = try connect()
        for call in calls { connection.append(call, after: ["EVALSHA", sha]) }
        try readReplies(calls, ends: ends, from: connection)
    }

    /// Reads the replies of `calls` (sent with `EVALSHA`, each moving the checkpoint to its entry
    /// of `ends`). From the first call the server did not run because it no longer knows the
    /// script (`NOSCRIPT`), the calls go again, in order, with `EVAL`. When a call fails, later
    /// calls may have moved the checkpoint past its records: it is moved back to the last
    /// call applied whole before the error is thrown, so a restart delivers them again.
    private func readReplies(_ calls: [RedisArguments], ends: [StreamPosition], from connection: RedisConnection) throws {
        var failed: (index: Int, error: TributaryError)?
        var firstMissing: Int?
        for index in calls.indices {
            let reply = try connection.reply()
            guard case .error(let message) = reply else { continue }
            if message.hasPrefix("NOSCRIPT") {
                if firstMissing == nil { firstMissing = index }
            } else if failed == nil {
                failed = (index, failure(reply, doing: "EVALSHA"))
            }
        }
        if let start = firstMissing, failed.map({ start < $0.index }) ?? true {
            failed = nil
            for index in start..<calls.count { connection.append(calls[index], after: ["EVAL", RedisSinkScript.source]) }
            for index in start..<calls.count {
                let reply = try connection.reply()
                if case .error = reply, failed == nil { failed = (index, failure(reply, doing: "EVAL")) }
            }
        }
        guard let failed else { return }
        let restore = failed.index > 0 ? ends[failed.index - 1] : position
        _ = try connection.command(restore.map { ["SET", checkpointKey, $0.description] } ?? ["DEL", checkpointKey])
        throw failed.error
    }

    /// The script's arguments after the SHA (the number of keys, the keys, the values) for
    /// `records`, moving the checkpoint to `checkpoint`. Values are written in their text form
    /// (``AttributeValue/description``) straight into the arguments.
    private func arguments(_ records: ArraySlice<StreamRecord>, checkpoint: StreamPosition?) -> RedisArguments {
        keys.removeAll()
        values.removeAll()
        keys.add(checkpointKey)
        values.add(settings.format.rawValue)
        values.add(settings.ttl ?? 0)
        values.add(settings.channel ?? "")
        values.add(Self.tombstoneSeconds)
        if let checkpoint { add(checkpoint) } else { values.add("") }
        records.withUnsafeBufferPointer { records in
            for index in records.indices {
                keys.add(template.key(for: records[index]))
                let operation = records[index].operation
                values.add(operation == .delete ? "d" : operation == .update ? "u" : operation == .read ? "r" : "c")
                add(records[index].position)
                if operation == .delete {
                    if settings.format == .json { values.add("{}") } else { values.add(0); values.add(0) }
                    continue
                }
                let marked = settings.format == .json ? marking.names(of: records[index].modelEntityName) : []
                records[index].properties.withUnsafeBufferPointer { properties in
                    addValues(properties, replace: operation == .create || operation == .read, blobsMarked: marked)
                }
            }
        }
        var call = RedisArguments()
        call.add(keys.count)
        call.append(keys)
        call.append(values)
        return call
    }

    /// A record's values: for `json` one object of the values set (a blob in one of
    /// `blobsMarked` as `{"base64":"…"}`, apart from text), for `hash` the number of fields set
    /// and removed, the names and values set, the names removed.
    private func addValues(_ properties: UnsafeBufferPointer<PropertyChange>, replace: Bool, blobsMarked: Set<String>) {
        switch settings.format {
        case .json:
            json.reset()
            json.object { o in
                for property in properties where !property.isMembershipChange && !property.isValueExcluded {
                    guard let value = property.after else { continue }
                    PersistentHistoryChange.writeField(property.name, value, markingBlob: blobsMarked.contains(property.name), to: &o)
                }
            }
            json.bytes.withUnsafeBufferPointer { values.add($0) }
        case .hash:
            var set = 0, removed = 0
            for i in properties.indices where !properties[i].isMembershipChange && !properties[i].isValueExcluded {
                guard let value = properties[i].after else { continue }
                if value.isNull { if !replace { removed += 1 } } else { set += 1 }
            }
            values.add(set)
            values.add(removed)
            for i in properties.indices where !properties[i].isMembershipChange && !properties[i].isValueExcluded {
                guard let value = properties[i].after, !value.isNull else { continue }
                values.add(properties[i].name)
                add(value)
            }
            guard removed > 0 else { return }
            for i in properties.indices where !properties[i].isMembershipChange && !properties[i].isValueExcluded && properties[i].after?.isNull == true {
                values.add(properties[i].name)
            }
        }
    }

    /// A value's text form, the common kinds written without making a `String`.
    private func add(_ value: AttributeValue) {
        switch value {
        case .string(let text): values.add(text)
        case .integer(let number): values.add(Int(number))
        case .date(let date):
            scratch.removeAll(keepingCapacity: true)
            dates.append(date, to: &scratch)
            scratch.withUnsafeBufferPointer { values.add($0) }
        default: values.add(value.description)
        }
    }

    /// A position as text (`42.3`, `42.r3`), as ``StreamPosition/description`` writes it.
    private func add(_ position: StreamPosition) {
        scratch.removeAll(keepingCapacity: true)
        RedisArguments.appendDigits(Int(position.token), to: &scratch)
        scratch.append(0x2E)
        if position.isSnapshot { scratch.append(0x72) }
        RedisArguments.appendDigits(position.index, to: &scratch)
        scratch.withUnsafeBufferPointer { values.add($0) }
    }

    /// The error for an error reply: worth retrying when the server is loading, busy, out of
    /// memory or a replica; refused for good otherwise.
    private func failure(_ reply: RedisReply, doing what: String) -> TributaryError {
        guard case .error(let message) = reply else {
            return TributaryError.sinkRejected(name, "\(what) answered \(reply)", hint: "check the server's version (Redis 6 or later)")
        }
        let transient = ["LOADING", "BUSY", "OOM", "READONLY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOREPLICAS"]
        if transient.contains(where: { message.hasPrefix($0) }) {
            return TributaryError.sinkUnavailable(name, "Redis at \(connection?.address ?? settings.url.host ?? "") answered \(what) with \(message)",
                                                 hint: "wait for the server, or free memory")
        }
        return TributaryError.sinkRejected(name, "Redis answered \(what) with \(message)", hint: "a key of the template may hold another type; check the key template")
    }
}
