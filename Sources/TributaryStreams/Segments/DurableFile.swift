import Foundation
import Tributary

/// Files that survive a crash: written to a temporary name, fsynced, renamed into place,
/// and the directory fsynced so the rename itself is durable.
///
/// ```swift
/// try DurableFile.write(data, to: directory.appendingPathComponent("manifest.json"))
/// ```
package enum DurableFile {
    /// Replaces `url` with `data` atomically and durably.
    package static func write(_ data: Data, to url: URL) throws {
        let temporary = url.appendingPathExtension("tmp")
        let fd = open(temporary.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw failure("cannot create", temporary) }
        defer { close(fd) }
        try data.withUnsafeBytes { try writeAll(fd, $0, url: temporary) }
        guard fsync(fd) == 0 else { throw failure("cannot fsync", temporary) }
        try rename(temporary, to: url)
    }

    /// Writes every byte of `bytes` to `fd`.
    static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, url: URL) throws {
        var offset = 0
        while offset < bytes.count {
            let n = Foundation.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 {
                if errno == EINTR { continue }
                throw failure("cannot write", url)
            }
            offset += n
        }
    }

    /// Renames `from` to `to` and fsyncs the directory.
    package static func rename(_ from: URL, to: URL) throws {
        guard Foundation.rename(from.path, to.path) == 0 else { throw failure("cannot rename to \(to.lastPathComponent)", from) }
        try syncDirectory(to.deletingLastPathComponent())
    }

    /// Fsyncs a directory, making renames and removals in it durable.
    package static func syncDirectory(_ directory: URL) throws {
        let fd = open(directory.path, O_RDONLY)
        guard fd >= 0 else { throw failure("cannot open", directory) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw failure("cannot fsync", directory) }
    }

    static func failure(_ what: String, _ url: URL) -> TributaryError {
        TributaryError(.io, "\(what) (\(String(cString: strerror(errno))))", location: url.path)
    }
}
