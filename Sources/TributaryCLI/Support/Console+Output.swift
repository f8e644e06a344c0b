import Foundation

extension Console {
    /// Writes `text` to standard output at once, without stdio's buffer: each printed line
    /// reaches a pipe or file when it is printed, so a signal or a crash loses none of it.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
