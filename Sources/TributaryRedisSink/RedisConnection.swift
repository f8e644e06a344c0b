import CHiredis
import Foundation
import Tributary
import TributaryPipeline

/// A Redis reply, converted from hiredis's `redisReply` (the C object is freed at once).
///
/// ```swift
/// if case .error(let message) = reply, message.hasPrefix("NOSCRIPT") { … }
/// ```
public enum RedisReply: Sendable, Equatable {
    /// A bulk string, as bytes.
    case string([UInt8])
    /// A status line such as `OK`.
    case status(String)
    /// An integer.
    case integer(Int64)
    /// No value (a missing key).
    case null
    /// An array of replies.
    indirect case array([RedisReply])
    /// An error reply such as `NOSCRIPT No matching script` or `WRONGTYPE …`.
    case error(String)

    /// The reply as text (bulk strings and status lines), nil otherwise.
    ///
    /// ```swift
    /// let value = try connection.command(["GET", "k"]).text
    /// ```
    public var text: String? {
        switch self {
        case .string(let bytes): return String(decoding: bytes, as: UTF8.self)
        case .status(let text): return text
        default: return nil
        }
    }
}

/// One blocking connection to a Redis server through hiredis: connect with a timeout
/// (`AUTH` and `SELECT` as the URL and password ask), pipelined commands (`append(_:)`
/// queues, ``reply()`` reads the replies in order), and ``command(_:)`` for one round trip.
/// A failed socket makes the connection unusable: it throws `sinkUnavailable` (naming
/// `sink`) and the owner makes a new one. Not Sendable: one owner uses it.
///
/// ```swift
/// let redis = try RedisConnection(url: URL(string: "redis://127.0.0.1:6379/0")!, password: nil, sink: "redis")
/// redis.append(["SET", "k", "v"])
/// redis.append(["GET", "k"])
/// _ = try redis.reply(); let value = try redis.reply().text   // "v"
/// ```
public final class RedisConnection {
    /// The sink named in errors.
    public let sink: String
    /// `host:port` (no credentials), for errors.
    public let address: String
    private var context: UnsafeMutablePointer<redisContext>?

    /// Connects to `url` (`redis://host:port[/db]`), waiting at most `timeout` for the connection
    /// and for each reply; sends `AUTH password` when given and `SELECT db` when the URL names one.
    ///
    /// ```swift
    /// let redis = try RedisConnection(url: URL(string: "redis://127.0.0.1:6379/2")!, password: secret, timeout: 5, sink: "cache")
    /// ```
    public init(url: URL, password: String?, timeout: TimeInterval = 10, sink: String) throws {
        self.sink = sink
        let host = url.host ?? "127.0.0.1"
        let port = url.port ?? 6379
        address = "\(host):\(port)"
        // Whole microseconds, held within range (a timeout read from a file may be huge).
        let micros = Int64(saturating: (max(0, timeout) * 1_000_000).rounded())
        let interval = timeval(tv_sec: Int(micros / 1_000_000), tv_usec: Int(micros % 1_000_000))
        guard let context = redisConnectWithTimeout(host, Int32(port), interval) else {
            throw TributaryError.sinkUnavailable(sink, "cannot allocate a Redis connection to \(address)")
        }
        self.context = context
        if context.pointee.err != 0 {
            let message = Self.message(context)
            redisFree(context)
            self.context = nil
            throw TributaryError.sinkUnavailable(sink, "cannot connect to Redis at \(address): \(message)", hint: "start Redis or fix the url")
        }
        redisSetTimeout(context, interval)
        if let password {
            if case .error(let message) = try command(["AUTH", password]) {
                close()
                throw TributaryError(.invalidInput, "Redis at \(address) refused the password: \(message)", location: "sink \(sink)",
                                     hint: "check the password named by password_env or password_file")
            }
        }
        let db = url.path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        if !db.isEmpty, db != "0" {
            if case .error(let message) = try command(["SELECT", db]) {
                close()
                throw TributaryError(.invalidInput, "Redis at \(address) cannot select database \(db): \(message)", location: "sink \(sink)",
                                     hint: "name a database number the server has, such as redis://host:6379/0")
            }
        }
    }

    deinit { close() }

    /// Whether the connection can still be used (false after a socket failure or ``close()``).
    ///
    /// ```swift
    /// if !redis.isOpen { redis = try RedisConnection(url: url, password: nil, sink: "cache") }
    /// ```
    public var isOpen: Bool { context != nil }

    /// Closes the connection (also done when it is released).
    ///
    /// ```swift
    /// redis.close()
    /// ```
    public func close() {
        if let context { redisFree(context) }
        context = nil
    }

    /// Queues a command in the output buffer, without a round trip; ``reply()`` reads its reply.
    ///
    /// ```swift
    /// for key in keys { redis.append(["HGETALL", key]) }
    /// let hashes = try keys.map { _ in try redis.reply() }
    /// ```
    public func append(_ arguments: [String]) {
        append(arguments.map { Array($0.utf8) })
    }

    /// Queues a command given as byte strings (values may hold any bytes).
    ///
    /// ```swift
    /// redis.append([Array("SET".utf8), Array("k".utf8), [0, 1, 2]])
    /// ```
    public func append(_ arguments: [[UInt8]]) {
        guard let context else { return }
        let count = arguments.count
        let pointers = UnsafeMutablePointer<UnsafePointer<CChar>?>.allocate(capacity: count)
        let lengths = UnsafeMutablePointer<Int>.allocate(capacity: count)
        let storage = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, arguments.reduce(0) { $0 + $1.count }))
        defer { pointers.deallocate(); lengths.deallocate(); storage.deallocate() }
        var offset = 0
        for (index, argument) in arguments.enumerated() {
            argument.withUnsafeBufferPointer { buffer in
                if let base = buffer.baseAddress { (storage + offset).update(from: base, count: buffer.count) }
            }
            pointers[index] = UnsafeRawPointer(storage + offset).assumingMemoryBound(to: CChar.self)
            lengths[index] = argument.count
            offset += argument.count
        }
        _ = redisAppendCommandArgv(context, Int32(count), pointers, lengths)
    }

    /// Queues a command made of `prefix` (the command's name and first arguments) followed by
    /// `arguments`, already in protocol form: one copy into hiredis's output buffer.
    ///
    /// ```swift
    /// redis.append(arguments, after: ["EVALSHA", sha])
    /// ```
    public func append(_ arguments: RedisArguments, after prefix: [String]) {
        guard let context else { return }
        var command: [UInt8] = [0x2A]
        RedisArguments.appendDigits(prefix.count + arguments.count, to: &command)
        command += [0x0D, 0x0A]
        var head = RedisArguments()
        for argument in prefix { head.add(argument) }
        command += head.bytes
        command.reserveCapacity(command.count + arguments.bytes.count)
        command += arguments.bytes
        command.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { _ = redisAppendFormattedCommand(context, $0.baseAddress, $0.count) }
        }
    }

    /// Writes the queued commands to the socket now, without reading replies, so the server
    /// works on them while the caller prepares the next ones; throws `sinkUnavailable` and
    /// closes the connection when the socket fails.
    ///
    /// ```swift
    /// redis.append(call, after: ["EVALSHA", sha])
    /// try redis.flush()
    /// ```
    public func flush() throws {
        guard let context else { throw TributaryError.sinkUnavailable(sink, "the connection to Redis at \(address) is closed") }
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == REDIS_OK else {
                let message = Self.message(context)
                close()
                throw TributaryError.sinkUnavailable(sink, "lost the connection to Redis at \(address): \(message)", hint: "check that Redis is running")
            }
        }
    }

    /// Reads the next reply of the queued commands (writing them first); throws
    /// `sinkUnavailable` and closes the connection when the socket fails or the reply takes
    /// longer than the timeout. Error replies are values (``RedisReply/error(_:)``), not throws.
    ///
    /// ```swift
    /// redis.append(["INCR", "n"])
    /// let n = try redis.reply()   // .integer(1)
    /// ```
    public func reply() throws -> RedisReply {
        guard let context else { throw TributaryError.sinkUnavailable(sink, "the connection to Redis at \(address) is closed") }
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else {
            let message = Self.message(context)
            close()
            throw TributaryError.sinkUnavailable(sink, "lost the connection to Redis at \(address): \(message)", hint: "check that Redis is running")
        }
        defer { freeReplyObject(raw) }
        return Self.convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    /// Sends one command and reads its reply.
    ///
    /// ```swift
    /// let value = try redis.command(["GET", "Post:1"]).text
    /// ```
    public func command(_ arguments: [String]) throws -> RedisReply {
        append(arguments)
        return try reply()
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        func bytes() -> [UInt8] {
            guard let str = r.str else { return [] }
            return Array(UnsafeRawBufferPointer(start: str, count: r.len))
        }
        switch r.type {
        case REDIS_REPLY_STRING: return .string(bytes())
        case REDIS_REPLY_STATUS: return .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR: return .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER: return .integer(Int64(r.integer))
        case REDIS_REPLY_ARRAY:
            var items: [RedisReply] = []
            for index in 0..<r.elements {
                if let element = r.element[index] { items.append(convert(element)) }
            }
            return .array(items)
        default: return .null
        }
    }

    private static func message(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { buffer in
            let text = String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
            return text.isEmpty ? "error \(context.pointee.err)" : text
        }
    }
}
