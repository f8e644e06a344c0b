import Foundation
import Glibc

/// Listens for commits to one store on a thread of its own, and reports each change it
/// sees. The thread sleeps in `poll(2)` on two descriptors:
///
/// - a pipe that posters in this process (``RemoteChangeHub``) and ``stop()`` write to
///   (a poster in this process whose commit recorded history also reports the change
///   itself, at once, without waiting for the thread);
/// - for a file store, an inotify descriptor watching the database file, its `-wal` file
///   and the `-notify` sidecar that Tributary posters in other processes touch after
///   each commit; a commit by any other program (the `sqlite3` shell) writes the WAL.
///
/// On a wake it reads `PRAGMA data_version` (which changes whenever another connection
/// commits) and the newest history token on a connection of its own, and reports a
/// change only when one of them moved, so file events that are not commits cost one
/// query. Changes are reported in token order: one older than the newest reported is
/// dropped, unless the thread saw the token go back (the store replaced by an older copy).
/// A commit may be reported twice (by its poster and by the thread), never not at all. A WAL write can wake it a moment before the writer publishes its commit in the
/// shared-memory index; when a file event shows nothing new it looks again after 1, 4, 16,
/// 64 and 256 ms. Without any event it still looks every 5 s, as a safety net.
final class StoreChangeMonitor: Sendable {
    /// What to watch.
    struct Target: Sendable, Hashable {
        var databasePath: String
        var isInMemory: Bool
        var storeURL: URL
        var storeID: UUID
        var isHistoryTracked: Bool
        var busyTimeout: TimeInterval
    }

    /// The safety poll, in milliseconds.
    static let safetyPollMilliseconds: Int32 = 5_000
    /// Rechecks after a file event that showed no commit yet, in milliseconds.
    static let settleMilliseconds: [Int32] = [1, 4, 16, 64, 256]
    /// What the monitors of one store hold: listening threads alive, descriptors open
    /// (SQLite's aside). Kept per store so that a test counts its own store's monitors
    /// while other tests listen to theirs.
    struct Held: Equatable {
        var threads = 0
        var descriptors = 0
    }
    private static let held = Locked<[String: Held]>([:])

    /// What the monitors of the store at `databasePath` hold now (for tests).
    static func held(databasePath: String, isInMemory: Bool) -> Held {
        let key = RemoteChangeHub.key(databasePath: databasePath, isInMemory: isInMemory)
        return held.withLock { $0[key] ?? Held() }
    }

    /// Counts threads and descriptors taken (positive) or given back (negative) for `key`.
    static func count(_ key: String, threads: Int = 0, descriptors: Int = 0) {
        held.withLock { held in
            var entry = held[key] ?? Held()
            entry.threads += threads
            entry.descriptors += descriptors
            held[key] = entry == Held() ? nil : entry
        }
    }

    let key: String
    private let target: Target
    /// The wake pipe: the thread reads `wakeFD`, posters write `wakeWriteFD`.
    private let wakeFD: Int32
    private let wakeWriteFD: Int32
    private let state = Locked<(stopped: Bool, wakeClosed: Bool)>((false, false))
    private let deliver: @Sendable (RemoteChange) -> Void
    /// The newest token reported; reporting happens under this lock, so that changes
    /// from the thread and from posters leave in token order.
    private let newestReported = Locked<Int64?>(nil)
    private let finish: @Sendable () -> Void

    /// Starts listening; returns once the thread has taken its baseline, so that every
    /// commit after this call is reported. `finish` is called when the thread ends.
    init(target: Target, deliver: @escaping @Sendable (RemoteChange) -> Void, finish: @escaping @Sendable () -> Void) {
        self.target = target
        self.key = RemoteChangeHub.key(databasePath: target.databasePath, isInMemory: target.isInMemory)
        self.deliver = deliver
        self.finish = finish
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for fd in ends {
                _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
                _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            }
            Self.count(key, descriptors: 2)
        }
        wakeFD = ends[0]
        wakeWriteFD = ends[1]
        RemoteChangeHub.shared.register(self)
        let ready = DispatchSemaphore(value: 0)
        Self.count(key, threads: 1)
        let thread = Thread { [self] in
            self.run(ready: ready)
            Self.count(self.key, threads: -1)
        }
        thread.start()
        ready.wait()
    }

    /// A commit by a poster of this process: reports it at once when it recorded
    /// history (the thread could only add a hop), and wakes the thread.
    func posted(token: Int64?) {
        if let token, target.isHistoryTracked {
            report(token: token)
            // An in-memory store has no file events: the thread would only say it again.
            if target.isInMemory { return }
        }
        wake()
    }

    /// Reports a change unless a newer one was reported already, or, with `wentBack`
    /// (the thread read the store's newest token lower than it read it before: an older
    /// copy of the file took its place), from `token` on again, so that followers wake and
    /// find their position gone rather than wait for it.
    private func report(token: Int64?, wentBack: Bool = false) {
        newestReported.withLock { newest in
            if let token {
                if let newest, token < newest, !wentBack { return }
                newest = token
            }
            deliver(RemoteChange(storeURL: target.storeURL, historyToken: token.map { PersistentHistoryToken(value: $0, storeID: target.storeID) }))
        }
    }

    /// Wakes the thread to look for a commit.
    func wake() {
        state.withLock { state in
            guard !state.wakeClosed else { return }
            signalPipe()
        }
    }

    /// Writes a byte to the wake pipe (a full pipe already wakes the thread).
    private func signalPipe() {
        var byte: UInt8 = 1
        _ = write(wakeWriteFD, &byte, 1)
    }

    /// Stops listening: the thread ends and closes every descriptor it holds.
    func stop() {
        state.withLock { state in
            state.stopped = true
            guard !state.wakeClosed else { return }
            signalPipe()
        }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    // MARK: The thread

    /// The name listening threads show in /proc and debuggers (15 bytes at most).
    static let threadName = "tributary-notif"

    private func run(ready: DispatchSemaphore) {
        // Glibc's pthread_setname_np is not visible to Swift; the kernel's file does the same.
        let comm = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        if comm >= 0 {
            _ = Self.threadName.withCString { write(comm, $0, strlen($0)) }
            _ = Glibc.close(comm)
        }
        var files: FileWatch?
        defer {
            files?.close()
            RemoteChangeHub.shared.unregister(self)
            state.withLock { state in
                state.stopped = true
                if !state.wakeClosed, wakeFD >= 0 {
                    _ = Glibc.close(wakeFD)
                    _ = Glibc.close(wakeWriteFD)
                    Self.count(key, descriptors: -2)
                }
                state.wakeClosed = true
            }
            finish()
        }
        let connection: Connection
        do {
            connection = try Connection(path: target.databasePath, options: ConnectionOptions(readOnly: false, create: false, busyTimeout: target.busyTimeout, isURI: target.isInMemory))
            try connection.execute("PRAGMA query_only = 1")
        } catch {
            ready.signal()
            return
        }
        // Reading first makes SQLite create the -wal file, so that it can be watched.
        var last = snapshot(connection) ?? Snapshot()
        if !target.isInMemory { files = FileWatch(databasePath: target.databasePath, key: key) }
        ready.signal()
        guard wakeFD >= 0 else { return }

        var settle: Int?
        while !isStopped {
            var fds = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            if let files { fds.append(pollfd(fd: files.descriptor, events: Int16(POLLIN), revents: 0)) }
            let timeout = settle.map { Self.settleMilliseconds[$0] } ?? Self.safetyPollMilliseconds
            if poll(&fds, nfds_t(fds.count), timeout) < 0 {
                if errno == EINTR { continue }
                break  // the descriptors are unusable: end as if stopped
            }
            if isStopped { break }
            let posted = drainPipe()
            let touched = files?.drain() ?? false
            guard let now = snapshot(connection) else {
                // The store could not be read just now: look again, backing off to 256 ms.
                settle = min((settle ?? -1) + 1, Self.settleMilliseconds.count - 1)
                continue
            }
            if now != last || (posted && target.isInMemory) {
                let wentBack = (now.token ?? 0) < (last.token ?? 0)
                last = now
                settle = nil
                report(token: now.token, wentBack: wentBack)
            } else if touched {
                settle = 0
            } else if let step = settle {
                settle = step + 1 < Self.settleMilliseconds.count ? step + 1 : nil
            }
        }
    }

    /// Empties the wake pipe; true when a poster (or stop) wrote to it.
    private func drainPipe() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 256)
        var any = false
        while read(wakeFD, &buffer, buffer.count) > 0 { any = true }
        return any
    }

    /// What identifies the store's state: SQLite's data version and the newest history token.
    private struct Snapshot: Equatable {
        var dataVersion: Int64?
        var token: Int64?
    }

    /// Both in one statement: one read transaction per wake. Nil when the store cannot
    /// be read (a lock held through recovery).
    private func snapshot(_ connection: Connection) -> Snapshot? {
        let sql = target.isHistoryTracked
            ? "SELECT (SELECT data_version FROM pragma_data_version()), (\(HistorySchema.newestTokenSQL))"
            : "SELECT (SELECT data_version FROM pragma_data_version()), NULL"
        guard let statement = try? connection.cachedStatement(sql) else { return nil }
        defer { statement.reset() }
        guard (try? statement.step()) == true else { return nil }
        return Snapshot(dataVersion: statement.int64(at: 0), token: target.isHistoryTracked ? statement.int64(at: 1) : nil)
    }
}

/// An inotify descriptor watching a store's files for writes.
private struct FileWatch {
    let descriptor: Int32
    let paths: [String]
    /// The monitor's store key, for its count of descriptors.
    let key: String

    init?(databasePath: String, key: String) {
        let fd = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard fd >= 0 else { return nil }
        StoreChangeMonitor.count(key, descriptors: 1)
        self.key = key
        descriptor = fd
        let sidecar = RemoteChangePoster.sidecarPath(of: databasePath)
        // Create the sidecar if missing (an unwritable directory leaves the WAL watch alone).
        let made = open(sidecar, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        if made >= 0 { _ = Glibc.close(made) }
        paths = [databasePath, databasePath + "-wal", sidecar]
        addWatches()
    }

    /// Adds (or renews) the watches; a file that is missing is skipped until the next call.
    func addWatches() {
        for path in paths {
            _ = inotify_add_watch(descriptor, path, UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE))
        }
    }

    /// Reads every pending event; true when there was one. Renews the watches when a
    /// watched file went away (a WAL deleted and made again).
    func drain() -> Bool {
        var any = false
        var lost = false
        let size = 4096
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
        defer { buffer.deallocate() }
        while true {
            let count = read(descriptor, buffer, size)
            guard count > 0 else { break }
            any = true
            var offset = 0
            while offset + 16 <= count {
                let mask = buffer.load(fromByteOffset: offset + 4, as: UInt32.self)
                let length = buffer.load(fromByteOffset: offset + 12, as: UInt32.self)
                if mask & UInt32(IN_IGNORED) != 0 { lost = true }
                offset += 16 + Int(length)
            }
        }
        if lost { addWatches() }
        return any
    }

    func close() {
        _ = Glibc.close(descriptor)
        StoreChangeMonitor.count(key, descriptors: -1)
    }
}
