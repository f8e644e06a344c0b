import CSQLite
import Foundation

extension Connection {
    /// Waits for another connection's write lock in short steps: SQLite's own busy timeout
    /// sleeps 1 to 100 ms between tries, so a writer that commits back to back (another
    /// program importing) takes the lock again before a waiter wakes. Here the first 100 ms
    /// are tried every 50 µs, then every millisecond, up to the connection's busy timeout.
    func waitForLocksInShortSteps() {
        let limit = Int(min(options.busyTimeout, ConnectionOptions.maximumBusyTimeout) * 1000)
        sqlite3_busy_handler(handle, { context, count in
            let limit = Int(bitPattern: context)
            let quick = 2_000
            let elapsed = count < quick ? Int(count) / 20 : 100 + Int(count) - quick
            guard elapsed < limit else { return 0 }
            usleep(count < quick ? 50 : 1_000)
            return 1
        }, UnsafeMutableRawPointer(bitPattern: limit))
    }
}
