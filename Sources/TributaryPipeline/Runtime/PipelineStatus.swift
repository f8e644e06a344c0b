import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Where a pipeline of a `tributary run` process stands: running, retrying a sink that
/// fails (with its last error), stopped, or failed. The runner's process keeps one per
/// pipeline in the source store (``PipelineStatusBoard``), with its process ID and a
/// heartbeat, so another process (`tributary status`) can read it, and can tell a pipeline
/// whose process is gone as stopped.
///
/// ```swift
/// for status in try PipelineStatus.all(in: coordinator) {
///     print(status.pipeline, status.effectiveState(), status.lastError ?? "")
/// }
/// ```
public struct PipelineStatus: Sendable, Equatable {
    /// What the pipeline does.
    public enum State: String, Sendable {
        /// Delivering, or waiting for new commits.
        case running
        /// A sink fails and the pipeline retries it (``PipelineStatus/lastError`` says why).
        case retrying
        /// It was stopped (a signal, `--once` caught up), or its process is gone.
        case stopped
        /// It stopped on an error (``PipelineStatus/lastError``).
        case failed

        /// Whether a health check should fail: a pipeline retrying or failed.
        public var isFailing: Bool { self == .retrying || self == .failed }
    }

    /// The pipeline's name.
    public var pipeline: String
    /// Its history consumer.
    public var consumer: String
    /// Its state as its process last wrote it.
    public var state: State
    /// The last error, while retrying or once failed.
    public var lastError: String?
    /// The process running it.
    public var process: Int32
    /// The host that process runs on.
    public var host: String
    /// When the state began.
    public var since: Date
    /// When the process last wrote (every ``PipelineStatusBoard/heartbeatInterval`` while it runs).
    public var heartbeat: Date

    /// A status of this process, at `now`.
    public init(pipeline: String, consumer: String, state: State, lastError: String? = nil, now: Date = Date()) {
        self.pipeline = pipeline
        self.consumer = consumer
        self.state = state
        self.lastError = lastError
        self.process = getpid()
        self.host = Self.hostName
        self.since = now
        self.heartbeat = now
    }

    /// The state to show: the one written, except that a pipeline written as running or
    /// retrying whose process has ended is stopped. On this host, the process ID tells; a
    /// process on another host is taken as gone when its heartbeat is older than `staleAfter`.
    public func effectiveState(now: Date = Date(), staleAfter: TimeInterval = 60) -> State {
        guard state == .running || state == .retrying else { return state }
        return isProcessAlive(now: now, staleAfter: staleAfter) ? state : .stopped
    }

    /// Whether the process that wrote this status still runs (see ``effectiveState(now:staleAfter:)``).
    public func isProcessAlive(now: Date = Date(), staleAfter: TimeInterval = 60) -> Bool {
        if host == Self.hostName {
            return process == getpid() || kill(process, 0) == 0 || errno == EPERM
        }
        return now.timeIntervalSince(heartbeat) < staleAfter
    }

    /// This machine's host name.
    static let hostName: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()
}
