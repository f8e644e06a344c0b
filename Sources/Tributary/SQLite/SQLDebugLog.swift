import Foundation
import Logging

/// Logging of every SQL statement a store's connections run, with its duration
/// (Core Data's `-com.apple.CoreData.SQLDebug`). Off unless the environment
/// variable `TRIBUTARY_SQL_DEBUG` is `1` (statements with `?` placeholders) or
/// `2` (statements with their bound values), or a description asks for it.
/// Records go through swift-log at level `debug`, under the label `tributary.sql`.
///
/// ```swift
/// let description = PersistentStoreDescription(url: URL(fileURLWithPath: "blog.sqlite"))
/// description.sqlDebug = SQLDebugLog(level: .values)   // or: TRIBUTARY_SQL_DEBUG=2
/// ```
/// ```
/// TRIBUTARY_SQL_DEBUG=1 tributary count blog.sqlite --entity Post
/// … debug tributary.sql : duration_ms=0.021 store=blog.sqlite [Tributary] [0.021 ms] SELECT count(*) FROM "Post" t0
/// ```
public struct SQLDebugLog: Sendable, Equatable {
    /// How much is logged.
    public enum Level: Int, Sendable, Comparable {
        /// Nothing.
        case off = 0
        /// Each statement's SQL (with `?` for parameters) and duration.
        case statements = 1
        /// Each statement with its bound values in place, and its duration.
        case values = 2

        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The environment variable read by ``fromEnvironment(_:)``.
    public static let environmentVariable = "TRIBUTARY_SQL_DEBUG"
    /// The label of the default logger.
    public static let label = "tributary.sql"
    /// Longest statement text logged; longer ones are cut (large bound blobs).
    static let maximumLength = 4_000

    /// How much is logged.
    public var level: Level
    /// Where the records go.
    public var logger: Logger

    /// Logging at `level` through `logger` (by default, one labelled `tributary.sql`).
    public init(level: Level, logger: Logger = Logger(label: SQLDebugLog.label)) {
        self.level = level
        self.logger = logger
    }

    /// The level set by `TRIBUTARY_SQL_DEBUG` (`0`, `1` or `2`; off when unset or not a number).
    ///
    /// ```swift
    /// let log = SQLDebugLog.fromEnvironment()   // .statements when TRIBUTARY_SQL_DEBUG=1
    /// ```
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> SQLDebugLog {
        let value = environment[environmentVariable].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) } ?? 0
        return SQLDebugLog(level: Level(rawValue: min(max(value, 0), 2)) ?? .off)
    }

    /// Equal when they log the same level to loggers of the same label.
    public static func == (lhs: SQLDebugLog, rhs: SQLDebugLog) -> Bool {
        lhs.level == rhs.level && lhs.logger.label == rhs.logger.label
    }
}

/// Receives SQLite's profile callbacks for one connection and logs them.
// @unchecked Sendable: used only by its connection's owner, like the connection itself.
final class SQLTracer: @unchecked Sendable {
    let level: SQLDebugLog.Level
    var logger: Logger

    init(_ log: SQLDebugLog, path: String) {
        level = log.level
        logger = log.logger
        logger.logLevel = min(logger.logLevel, .debug)
        logger[metadataKey: "store"] = "\(path)"
    }

    /// When each running statement started (several can be stepping at once).
    private var starts: [UnsafeRawPointer: ContinuousClock.Instant] = [:]

    /// A statement began running (SQLite reports trigger programs too: the first start counts).
    func started(_ statement: UnsafeRawPointer) {
        if starts[statement] == nil { starts[statement] = .now }
    }

    /// A statement finished: logs it with the time since it started.
    func finished(_ statement: UnsafeRawPointer, sql: String) {
        let elapsed = starts.removeValue(forKey: statement).map { ContinuousClock.now - $0 } ?? .zero
        let (seconds, attoseconds) = elapsed.components
        let milliseconds = String(format: "%.3f", Double(seconds) * 1_000 + Double(attoseconds) / 1e15)
        let text = sql.count > SQLDebugLog.maximumLength ? String(sql.prefix(SQLDebugLog.maximumLength)) + "…" : sql
        logger.debug("[\(milliseconds) ms] \(text)", metadata: ["duration_ms": "\(milliseconds)"])
    }
}
