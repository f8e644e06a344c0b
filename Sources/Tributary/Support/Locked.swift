import Foundation

/// A value behind a lock, with `Mutex`'s `withLock` shape. It wraps a pthread mutex
/// (`NSLock`), which the thread sanitizer understands: `Synchronization.Mutex` waits on futexes
/// from an uninstrumented standard library, so the sanitizer cannot see its ordering and
/// reports races on the values it guards (seen in `make test`'s ContextConcurrencyTests).
///
/// ```swift
/// let names = Locked<[String]>([])
/// names.withLock { $0.append("viewer") }
/// ```
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock.
    func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
