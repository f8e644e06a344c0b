import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// The one wrapper of nats.c (JetStream): a connection and its JetStream context, used by one
/// owner at a time (not Sendable). Calls block for at most the connection's timeout. Failures
/// reaching the server (refused, timeouts, no responders) are `sinkUnavailable`; errors the
/// server returns for a request are `sinkRejected`. nats.c's own threads only touch the
/// acknowledgment counter.
///
/// ```swift
/// let connection = try NATSConnection(url: "nats://127.0.0.1:4222", sink: "nats")
/// try connection.publish(NATSMessage(subject: "tributary.Post", data: Array("{}".utf8)))
/// ```
public final class NATSConnection {
    private var connection: OpaquePointer?
    private var context: OpaquePointer?
    private let counter = NATSAckCounter()
    /// The name errors carry (the sink's or the command's).
    public let sink: String
    /// The URL, for errors.
    public let url: String
    /// Milliseconds to wait for a reply.
    private let timeout: Int64
    /// The most asynchronous publishes in flight.
    public let maximumPending: Int
    /// Whether an asynchronous publish was made since the pending ones were last abandoned:
    /// nats.c 3.4 makes its table of pending publishes at the first one, and reading the
    /// table before that dereferences a null pointer.
    private var publishedAsync = false

    /// Connects to `url` (`nats://HOST:PORT`). With `reconnects` (the default) it reconnects
    /// by itself after the server returns; without, a lost connection stays closed
    /// (``isConnected`` false) and nothing published on it can reach a later one, which is what
    /// a publisher that must keep its messages in order needs (see ``NATSSink``). `timeout`
    /// bounds each request and each acknowledgment, in seconds.
    public init(url: String, sink: String, timeout: TimeInterval = 5, maximumPending: Int = 256, reconnects: Bool = true) throws {
        self.sink = sink
        self.url = url
        self.timeout = Int64(saturating: max(0.05, timeout) * 1000)
        self.maximumPending = max(1, maximumPending)
        var options: OpaquePointer?
        try check(natsOptions_Create(&options), "cannot configure the NATS client")
        defer { natsOptions_Destroy(options) }
        _ = natsOptions_SetURL(options, url)
        _ = natsOptions_SetTimeout(options, self.timeout)
        _ = natsOptions_SetAllowReconnect(options, reconnects)
        if reconnects {
            _ = natsOptions_SetMaxReconnect(options, -1)
            _ = natsOptions_SetReconnectWait(options, 100)
        }
        _ = natsOptions_SetPingInterval(options, 2_000)
        var status = natsConnection_Connect(&connection, options)
        guard status == NATS_OK else {
            throw TributaryError.sinkUnavailable(sink, "cannot connect to \(url): \(Self.text(status))", hint: "start the NATS server (with JetStream, -js) or fix the url")
        }
        var jsOptions = jsOptions()
        jsOptions_Init(&jsOptions)
        jsOptions.Wait = self.timeout
        jsOptions.PublishAsync.MaxPending = Int64(self.maximumPending)
        jsOptions.PublishAsync.StallWait = self.timeout
        jsOptions.PublishAsync.AckHandler = { _, message, ack, failure, closure in
            guard let closure else { natsMsg_Destroy(message); return }
            let counter = Unmanaged<NATSAckCounter>.fromOpaque(closure).takeUnretainedValue()
            if let ack {
                counter.acknowledged.add(1, ordering: .relaxed)
                if ack.pointee.Duplicate { counter.duplicates.add(1, ordering: .relaxed) }
            } else if let failure {
                counter.failed.add(1, ordering: .relaxed)
                let text = failure.pointee.ErrText.map { String(cString: $0) } ?? NATSConnection.text(failure.pointee.Err)
                counter.lastError.withLock { $0 = text }
            }
            natsMsg_Destroy(message)
        }
        jsOptions.PublishAsync.AckHandlerClosure = Unmanaged.passUnretained(counter).toOpaque()
        status = natsConnection_JetStream(&context, connection, &jsOptions)
        guard status == NATS_OK else {
            natsConnection_Destroy(connection)
            throw TributaryError.sinkUnavailable(sink, "cannot open JetStream on \(url): \(Self.text(status))")
        }
    }

    deinit {
        if let context { jsCtx_Destroy(context) }
        if let connection {
            natsConnection_Close(connection)
            natsConnection_Destroy(connection)
        }
    }

    /// Whether the connection is up (not reconnecting or closed).
    ///
    /// ```swift
    /// guard connection.isConnected else { throw TributaryError.sinkUnavailable("nats", "down") }
    /// ```
    public var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    // MARK: Streams

    /// The stream named `name`, nil when there is none.
    ///
    /// ```swift
    /// let info = try connection.streamInfo("TRIBUTARY")
    /// ```
    public func streamInfo(_ name: String) throws -> NATSStreamInfo? {
        var info: UnsafeMutablePointer<jsStreamInfo>?
        var code = jsErrCode(0)
        let status = js_GetStreamInfo(&info, context, name, nil, &code)
        if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return nil }
        try check(status, "cannot read stream \(name)", code: code)
        defer { jsStreamInfo_Destroy(info) }
        guard let info else { return nil }
        return Self.info(info)
    }

    /// Creates the stream.
    ///
    /// ```swift
    /// try connection.addStream(NATSStreamConfig(name: "TRIBUTARY", subjects: ["tributary.*"]))
    /// ```
    public func addStream(_ config: NATSStreamConfig) throws {
        try withConfig(config) { cConfig in
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(0)
            try check(js_AddStream(&info, context, &cConfig, nil, &code), "cannot create stream \(config.name)", code: code)
            jsStreamInfo_Destroy(info)
        }
    }

    /// Changes the stream's configuration.
    ///
    /// ```swift
    /// try connection.updateStream(NATSStreamConfig(name: "TRIBUTARY", subjects: ["tributary.*"], duplicateWindow: 60))
    /// ```
    public func updateStream(_ config: NATSStreamConfig) throws {
        try withConfig(config) { cConfig in
            var info: UnsafeMutablePointer<jsStreamInfo>?
            var code = jsErrCode(0)
            try check(js_UpdateStream(&info, context, &cConfig, nil, &code), "cannot update stream \(config.name)", code: code)
            jsStreamInfo_Destroy(info)
        }
    }

    /// Deletes the stream (tests and benchmarks start over with it).
    ///
    /// ```swift
    /// try connection.deleteStream("TRIBUTARY")
    /// ```
    public func deleteStream(_ name: String) throws {
        var code = jsErrCode(0)
        let status = js_DeleteStream(context, name, nil, &code)
        if status == NATS_NOT_FOUND || code == JSStreamNotFoundErr { return }
        try check(status, "cannot delete stream \(name)", code: code)
    }

    /// The message with sequence `sequence`, nil when it was deleted or never stored.
    ///
    /// ```swift
    /// let message = try connection.message(stream: "TRIBUTARY", sequence: 1)
    /// ```
    public func message(stream: String, sequence: UInt64) throws -> NATSMessage? {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetMsg(&message, context, stream, sequence, nil, &code)
        if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
        try check(status, "cannot read message \(sequence) of stream \(stream)", code: code)
        defer { natsMsg_Destroy(message) }
        return Self.message(message, sequence: sequence)
    }

    /// The last message on `subject` in the stream, nil when there is none.
    ///
    /// ```swift
    /// let last = try connection.lastMessage(stream: "TRIBUTARY", subject: "tributary.Post")
    /// ```
    public func lastMessage(stream: String, subject: String) throws -> NATSMessage? {
        var message: OpaquePointer?
        var code = jsErrCode(0)
        let status = js_GetLastMsg(&message, context, stream, subject, nil, &code)
        if status == NATS_NOT_FOUND || code == JSNoMessageFoundErr { return nil }
        try check(status, "cannot read the last message on \(subject) in stream \(stream)", code: code)
        defer { natsMsg_Destroy(message) }
        return Self.message(message, sequence: 0)
    }

    // MARK: Publishing

    /// Publishes and waits for the acknowledgment; returns whether the stream called it a duplicate.
    ///
    /// ```swift
    /// let duplicate = try connection.publish(NATSMessage(subject: "tributary.Post", data: [], headers: ["Nats-Msg-Id": "id-1"]))
    /// ```
    @discardableResult
    public func publish(_ message: NATSMessage) throws -> Bool {
        let cMessage = try makeMessage(message)
        defer { natsMsg_Destroy(cMessage) }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = timeout
        var ack: UnsafeMutablePointer<jsPubAck>?
        var code = jsErrCode(0)
        try check(js_PublishMsg(&ack, context, cMessage, &options, &code), "cannot publish to \(message.subject)", code: code)
        defer { jsPubAck_Destroy(ack) }
        return ack?.pointee.Duplicate ?? false
    }

    /// Publishes without waiting: waits only while ``maximumPending`` publishes are in flight.
    /// The acknowledgments are counted (see ``acknowledgments``).
    ///
    /// ```swift
    /// try connection.publishAsync(message)
    /// _ = connection.waitForAcknowledgments()
    /// ```
    public func publishAsync(_ message: NATSMessage) throws {
        var cMessage: OpaquePointer? = try makeMessage(message)
        defer { natsMsg_Destroy(cMessage) }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = timeout
        publishedAsync = true
        try check(js_PublishMsgAsync(context, &cMessage, &options), "cannot publish to \(message.subject)")
    }

    /// Acknowledgments counted so far: successes (duplicates among them) and failures, with the last failure's text.
    ///
    /// ```swift
    /// if connection.acknowledgments.failed > 0 { print(connection.acknowledgments.lastError ?? "") }
    /// ```
    public var acknowledgments: (acknowledged: Int, duplicates: Int, failed: Int, lastError: String?) {
        (counter.acknowledged.load(ordering: .relaxed), counter.duplicates.load(ordering: .relaxed), counter.failed.load(ordering: .relaxed),
         counter.lastError.withLock { $0 })
    }

    /// Waits until every asynchronous publish has its acknowledgment, at most `timeout`
    /// seconds; returns false when some are still missing.
    ///
    /// ```swift
    /// let complete = connection.waitForAcknowledgments(timeout: 5)
    /// ```
    public func waitForAcknowledgments(timeout seconds: TimeInterval? = nil) -> Bool {
        guard publishedAsync else { return true }
        var options = jsPubOptions()
        jsPubOptions_Init(&options)
        options.MaxWait = seconds.map { Int64(saturating: max(0.001, $0) * 1000) } ?? timeout
        return js_PublishAsyncComplete(context, &options) == NATS_OK
    }

    /// Forgets the asynchronous publishes still waiting for an acknowledgment (their
    /// acknowledgments, if they come, are ignored); returns how many there were.
    ///
    /// ```swift
    /// connection.abandonPending()
    /// ```
    @discardableResult
    public func abandonPending() -> Int {
        guard publishedAsync else { return 0 }
        var list = natsMsgList()
        guard js_PublishAsyncGetPendingList(&list, context) == NATS_OK else { return 0 }
        let count = Int(list.Count)
        natsMsgList_Destroy(&list)
        return count
    }

    // MARK: Pull consumers

    /// Subscribes through durable pull consumer `durable` of `stream` (created if missing) to
    /// `subject`, each message acknowledged explicitly, at most `maximumAckPending` delivered
    /// and not acknowledged, redelivered after `ackWait` seconds. A new consumer starts at
    /// `startSequence` (the stream's start when nil).
    ///
    /// ```swift
    /// let subscription = try connection.pullSubscribe(stream: "TRIBUTARY", subject: "tributary.*", durable: "replica", maximumAckPending: 500, ackWait: 2)
    /// ```
    public func pullSubscribe(stream: String, subject: String, durable: String, maximumAckPending: Int, ackWait: TimeInterval,
                              startSequence: UInt64? = nil) throws -> NATSPullSubscription {
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var subscription: OpaquePointer?
        var code = jsErrCode(0)
        let status = stream.withCString { streamName in
            options.Stream = streamName
            options.Config.AckPolicy = js_AckExplicit
            options.Config.MaxAckPending = Int64(maximumAckPending)
            options.Config.AckWait = Int64(saturating: ackWait * 1_000_000_000)
            options.Config.DeliverPolicy = startSequence == nil ? js_DeliverAll : js_DeliverByStartSequence
            options.Config.OptStartSeq = startSequence ?? 0
            return js_PullSubscribe(&subscription, context, subject, durable, nil, &options, &code)
        }
        try check(status, "cannot subscribe to stream \(stream) as consumer \(durable)", code: code)
        return NATSPullSubscription(subscription: subscription, owner: self, stream: stream, consumer: durable)
    }

    /// Deletes consumer `consumer` of `stream` if it exists.
    ///
    /// ```swift
    /// try connection.deleteConsumer(stream: "TRIBUTARY", consumer: "replica")
    /// ```
    public func deleteConsumer(stream: String, consumer: String) throws {
        var code = jsErrCode(0)
        let status = js_DeleteConsumer(context, stream, consumer, nil, &code)
        if status == NATS_NOT_FOUND || code == JSConsumerNotFoundErr { return }
        try check(status, "cannot delete consumer \(consumer) of stream \(stream)", code: code)
    }

    /// Consumer `consumer` of `stream`: its pending and unacknowledged counts.
    ///
    /// ```swift
    /// let state = try connection.consumerState(stream: "TRIBUTARY", consumer: "replica")
    /// ```
    public func consumerState(stream: String, consumer: String) throws -> NATSConsumerState {
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var code = jsErrCode(0)
        try check(js_GetConsumerInfo(&info, context, stream, consumer, nil, &code), "cannot read the state of consumer \(consumer)", code: code)
        defer { jsConsumerInfo_Destroy(info) }
        return NATSConsumerState(pending: info?.pointee.NumPending ?? 0, ackPending: info?.pointee.NumAckPending ?? 0)
    }

    // MARK: Helpers

    func check(_ status: natsStatus, _ what: String, code: jsErrCode = jsErrCode(0)) throws {
        guard status != NATS_OK else { return }
        var detail = Self.text(status)
        var last = NATS_OK
        if let text = nats_GetLastError(&last), last == status { detail = String(cString: text) }
        switch status {
        case NATS_TIMEOUT, NATS_NO_SERVER, NATS_CONNECTION_CLOSED, NATS_CONNECTION_DISCONNECTED, NATS_IO_ERROR, NATS_NO_RESPONDERS, NATS_STALE_CONNECTION,
             NATS_SYS_ERROR, NATS_NOT_YET_CONNECTED:
            throw TributaryError.sinkUnavailable(sink, "\(what): \(detail)", hint: "check that the NATS server at \(url) runs with JetStream (-js)")
        default:
            let suffix = code.rawValue != 0 ? " (JetStream error \(code.rawValue))" : ""
            throw TributaryError.sinkRejected(sink, "\(what): \(detail)\(suffix)", hint: "check the stream's configuration on \(url)")
        }
    }

    static func text(_ status: natsStatus) -> String { natsStatus_GetText(status).map { String(cString: $0) } ?? "status \(status.rawValue)" }

    private func makeMessage(_ message: NATSMessage) throws -> OpaquePointer? {
        var cMessage: OpaquePointer?
        let status = message.data.withUnsafeBufferPointer { buffer in
            natsMsg_Create(&cMessage, message.subject, nil, buffer.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }, Int32(buffer.count))
        }
        try check(status, "cannot make a message for \(message.subject)")
        for (key, value) in message.headers {
            let status = natsMsgHeader_Set(cMessage, key, value)
            if status != NATS_OK {
                natsMsg_Destroy(cMessage)
                try check(status, "cannot set header \(key)")
            }
        }
        return cMessage
    }

    static func message(_ message: OpaquePointer?, sequence: UInt64) -> NATSMessage {
        let subject = natsMsg_GetSubject(message).map { String(cString: $0) } ?? ""
        let length = Int(natsMsg_GetDataLength(message))
        var data: [UInt8] = []
        if length > 0, let bytes = natsMsg_GetData(message) {
            data = Array(UnsafeRawBufferPointer(start: bytes, count: length))
        }
        var headers: [String: String] = [:]
        var keys: UnsafeMutablePointer<UnsafePointer<CChar>?>?
        var count: Int32 = 0
        if natsMsgHeader_Keys(message, &keys, &count) == NATS_OK, let keys {
            for i in 0..<Int(count) {
                guard let key = keys[i] else { continue }
                var value: UnsafePointer<CChar>?
                if natsMsgHeader_Get(message, key, &value) == NATS_OK, let value { headers[String(cString: key)] = String(cString: value) }
            }
            free(keys)
        }
        let stored = sequence != 0 ? sequence : natsMsg_GetSequence(message)
        return NATSMessage(subject: subject, data: data, headers: headers, sequence: stored)
    }

    private static func info(_ info: UnsafeMutablePointer<jsStreamInfo>) -> NATSStreamInfo {
        var config = NATSStreamConfig(name: "", subjects: [])
        if let c = info.pointee.Config {
            config.name = c.pointee.Name.map { String(cString: $0) } ?? ""
            if let subjects = c.pointee.Subjects {
                config.subjects = (0..<Int(c.pointee.SubjectsLen)).compactMap { subjects[$0].map { String(cString: $0) } }
            }
            switch c.pointee.Retention {
            case js_InterestPolicy: config.retention = .interest
            case js_WorkQueuePolicy: config.retention = .workqueue
            default: config.retention = .limits
            }
            config.replicas = Int(c.pointee.Replicas)
            config.duplicateWindow = TimeInterval(c.pointee.Duplicates) / 1_000_000_000
        }
        let state = info.pointee.State
        return NATSStreamInfo(config: config, messages: state.Msgs, firstSequence: state.FirstSeq, lastSequence: state.LastSeq)
    }

    private func withConfig(_ config: NATSStreamConfig, _ body: (inout jsStreamConfig) throws -> Void) throws {
        var cConfig = jsStreamConfig()
        jsStreamConfig_Init(&cConfig)
        let name = strdup(config.name)
        var subjects: [UnsafePointer<CChar>?] = config.subjects.map { UnsafePointer(strdup($0)) }
        defer {
            free(name)
            for subject in subjects { free(UnsafeMutablePointer(mutating: subject)) }
        }
        cConfig.Name = UnsafePointer(name)
        cConfig.SubjectsLen = Int32(subjects.count)
        cConfig.Replicas = Int64(config.replicas)
        cConfig.Duplicates = Int64(saturating: config.duplicateWindow * 1_000_000_000)
        switch config.retention {
        case .limits: cConfig.Retention = js_LimitsPolicy
        case .interest: cConfig.Retention = js_InterestPolicy
        case .workqueue: cConfig.Retention = js_WorkQueuePolicy
        }
        try subjects.withUnsafeMutableBufferPointer { buffer in
            cConfig.Subjects = buffer.baseAddress
            try body(&cConfig)
        }
    }
}
