import Foundation

/// A bounded pool of reader connections, created on demand. A borrower that
/// finds every reader busy waits up to the timeout, then gets a clear error.
// @unchecked Sendable: all mutable state is guarded by `condition`.
final class ReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var idle: [Connection] = []
    private var created = 0
    private var closed = false
    let maximumSize: Int
    let timeout: TimeInterval
    private let factory: @Sendable () throws -> Connection

    init(maximumSize: Int, timeout: TimeInterval, factory: @escaping @Sendable () throws -> Connection) {
        self.maximumSize = max(1, maximumSize)
        self.timeout = timeout
        self.factory = factory
    }

    /// Takes a reader, opening one if the pool is below its size.
    func checkout() throws -> Connection {
        condition.lock()
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if let connection = idle.popLast() {
                condition.unlock()
                return connection
            }
            if created < maximumSize {
                created += 1
                condition.unlock()
                do {
                    return try factory()
                } catch {
                    condition.lock()
                    created -= 1
                    condition.signal()
                    condition.unlock()
                    throw error
                }
            }
            if !condition.wait(until: deadline) {
                condition.unlock()
                throw TributaryError(.readerTimeout, "all \(maximumSize) reader connections stayed busy for \(timeout) s",
                                     hint: "raise connectionPoolMaxSize, or release pinned query generations sooner")
            }
        }
    }

    /// Returns a reader to the pool.
    func checkin(_ connection: Connection) {
        condition.lock()
        if closed {
            created -= 1
        } else {
            idle.append(connection)
        }
        condition.signal()
        condition.unlock()
    }

    /// Closes idle readers, so that the pool opens new ones when asked.
    func discardIdle() {
        condition.lock()
        created -= idle.count
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    /// Closes idle readers; busy ones close when returned.
    func close() {
        condition.lock()
        closed = true
        condition.unlock()
        discardIdle()
    }
}
