import CSQLite
import Foundation

/// The read transactions that keep other programs' commits in the write-ahead log until
/// they are folded (``ForeignCapture``): while one is open on a snapshot, no checkpoint
/// copies the frames after it and the log cannot restart over them.
///
/// One process per store holds pins, the one with an exclusive `flock` on the store's
/// `-notify` sidecar: pins held by every Tributary process would keep the log from ever
/// restarting (each restart needs all of them dropped at once, and an idle process's pin
/// never moves), so it would grow without bound. When the holder exits, the lock is freed
/// and another process takes the part at its next maintenance.
///
/// Used under the writer's lock only.
final class CapturePins {
    private let connections: [Connection]
    private let sidecar: String
    private var lockDescriptor: Int32 = -1
    private var active: Int?
    private var releasing: Int?
    /// When the pin last moved.
    private(set) var lastMove = Date.distantPast

    init(path: String, busyTimeout: TimeInterval) throws {
        let options = ConnectionOptions(readOnly: false, create: false, busyTimeout: busyTimeout)
        connections = try (0..<2).map { _ in try Connection(path: path, options: options) }
        sidecar = RemoteChangePoster.sidecarPath(of: path)
        // Both open their files now, not at their first use, so the process's descriptors
        // stay the same from here on.
        for connection in connections { _ = try connection.scalar("SELECT count(*) FROM sqlite_master") }
    }

    deinit {
        if lockDescriptor >= 0 { close(lockDescriptor) }
    }

    /// Whether this process holds the store's pins.
    var isHolder: Bool { lockDescriptor >= 0 }
    /// Whether a pin is held now.
    var isPinned: Bool { active != nil }

    /// Takes the holder's part when no other process has it; true when this process holds it.
    func claim() -> Bool {
        guard !isHolder else { return true }
        let descriptor = open(sidecar, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return false }
        guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
            close(descriptor)
            return false
        }
        lockDescriptor = descriptor
        return true
    }

    /// Takes a read transaction on the spare connection, on the snapshot `db`'s
    /// transaction started from, and marks the old one for ``releaseOld()``.
    func move() throws {
        let next = active.map { ($0 + 1) % connections.count } ?? 0
        if connections[next].isInTransaction { try connections[next].execute("COMMIT") }
        try connections[next].execute("BEGIN")
        _ = try connections[next].scalar("SELECT count(*) FROM sqlite_master")
        releasing = active
        active = next
        lastMove = Date()
    }

    /// Ends the read transaction ``move()`` replaced.
    func releaseOld() {
        if let releasing, releasing != active, connections[releasing].isInTransaction { try? connections[releasing].execute("COMMIT") }
        releasing = nil
    }

    /// Ends every read transaction (so that a checkpoint can copy the whole log).
    func drop() {
        for connection in connections where connection.isInTransaction { try? connection.execute("COMMIT") }
        (active, releasing) = (nil, nil)
    }

    /// Runs a passive checkpoint (never waits) on a connection holding no snapshot.
    func checkpoint() throws {
        _ = try connections[0].scalar("PRAGMA wal_checkpoint(PASSIVE)")
    }
}
