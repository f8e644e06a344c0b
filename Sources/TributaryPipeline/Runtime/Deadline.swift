import Foundation

/// Bounds an await that a library might never resume: ``run(seconds:timedOut:_:)`` returns
/// the operation's result, or throws `timedOut()` once `seconds` have passed, without
/// waiting for the operation (which is cancelled and left to end on its own; its result is
/// dropped). A sink wraps each call into a client library with it (postgres-nio drops a
/// query written to a connection that closed at that moment, and its await then never
/// returns), so a server that dies or stops answering fails the call and the runtime retries.
///
/// The operation must not touch state of its caller: it may still run after the deadline.
///
/// ```swift
/// let rows = try await Deadline.run(seconds: 30, timedOut: { TributaryError.sinkUnavailable("db", "no answer in 30 s") }) {
///     try await connection.query("SELECT 1", logger: logger).collect()
/// }
/// ```
package enum Deadline {
    /// `operation`'s result, or `timedOut()` thrown after `seconds` (see the type's documentation).
    package static func run<T: Sendable>(seconds: TimeInterval, timedOut: @escaping @Sendable () -> any Error,
                                         _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        let race = Race<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
                race.add(Task {
                    do { race.finish(.success(try await operation())) } catch { race.finish(.failure(error)) }
                })
                race.add(Task {
                    try? await Task.sleep(nanoseconds: UInt64(max(0, min(seconds, 86_400)) * 1_000_000_000))
                    if !Task.isCancelled { race.finish(.failure(timedOut())) }
                })
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }
}

/// The first of an operation, its timer and the caller's cancellation to finish resumes the
/// caller, once; then both tasks are cancelled.
private final class Race<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?
    private var early: Result<T, any Error>?
    private var finished = false
    private var tasks: [Task<Void, Never>] = []

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let result: Result<T, any Error>? = lock.withLock {
            // Cancelled before the continuation existed: resume it at once.
            if let early { self.early = nil; return early }
            self.continuation = continuation
            return nil
        }
        if let result { continuation.resume(with: result) }
    }

    func add(_ task: Task<Void, Never>) {
        let done = lock.withLock {
            if !finished { tasks.append(task) }
            return finished
        }
        if done { task.cancel() }
    }

    func finish(_ result: Result<T, any Error>) {
        let (continuation, tasks): (CheckedContinuation<T, any Error>?, [Task<Void, Never>]) = lock.withLock {
            guard !finished else { return (nil, []) }
            finished = true
            let taken = (self.continuation, self.tasks)
            if self.continuation == nil { early = result }
            self.continuation = nil
            self.tasks = []
            return taken
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: result)
    }
}
