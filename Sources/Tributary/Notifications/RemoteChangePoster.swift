import Foundation
import Glibc
import Synchronization

/// Posts a store's commits: to the monitors of this process through the hub, and to
/// other processes by touching the store's `-notify` sidecar file, which their
/// monitors watch with inotify.
final class RemoteChangePoster: Sendable {
    /// The sidecar file other processes watch: `STORE-notify`.
    static func sidecarPath(of databasePath: String) -> String { databasePath + "-notify" }

    private let key: String
    private let sidecar: String?
    /// The sidecar's open descriptor (-1 before the first post or when it cannot be opened),
    /// and whether the poster is closed.
    private let descriptor = Locked<(fd: Int32, closed: Bool)>((-1, false))

    init(databasePath: String, isInMemory: Bool) {
        key = RemoteChangeHub.key(databasePath: databasePath, isInMemory: isInMemory)
        sidecar = isInMemory ? nil : Self.sidecarPath(of: databasePath)
    }

    /// Called after each commit, with the history token it recorded (in the writer lock, so
    /// commits are posted in order).
    func didCommit(token: Int64?) {
        RemoteChangeHub.shared.post(key: key, token: token)
        guard let sidecar else { return }
        descriptor.withLock { state in
            guard !state.closed else { return }
            if state.fd < 0 {
                state.fd = open(sidecar, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
                guard state.fd >= 0 else { state.closed = true; return }  // unwritable directory: in-process posts only
            }
            var byte: UInt8 = 0x2A
            _ = pwrite(state.fd, &byte, 1, 0)
        }
    }

    func close() {
        descriptor.withLock { state in
            if state.fd >= 0 { _ = Glibc.close(state.fd) }
            state = (-1, true)
        }
    }
}

/// The poster's part in each write transaction: once it commits, the store's listeners are told.
extension RemoteChangePoster: WriteParticipant {
    func writeDidCommit(on db: Connection, written: Int64?) {
        didCommit(token: written)
    }
}
