import Foundation

extension Console {
    /// Writes `text` to standard output at once, without stdio's buffer: each printed line
    /// reaches a pipe or file when it is printed, so a signal or a crash loses none of it.
    /// The text's own UTF-8 bytes are written (no copy of a large batch).
    static func write(_ text: String, then ending: String) {
        // A short line goes out in one write; a long batch without being copied to append its end.
        if text.utf8.count < 1 << 16 {
            write(text + ending)
        } else {
            write(text)
            write(ending)
        }
    }

    static func write(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(STDOUT_FILENO, base + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return
                }
                offset += written
            }
        }
    }
}
