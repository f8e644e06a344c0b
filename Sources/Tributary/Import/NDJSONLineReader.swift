import Foundation

/// Reads NDJSON lines from a file descriptor (or bytes in memory) in chunks into one
/// reusable buffer, and hands out each line in place: no `String` per line, and memory
/// bounded by the longest line, not the file. A line ends at `\n`; a `\r` before it
/// (CRLF files) is dropped. Lines holding only spaces or tabs are skipped, but counted.
///
/// ```swift
/// var reader = NDJSONLineReader(fileDescriptor: fd)
/// while let line = try reader.nextLine() { print(line.number, line.bytes.count) }
/// ```
struct NDJSONLineReader: ~Copyable {
    /// One line: its bytes (valid until the next call) and its 1-based number in the input.
    struct Line {
        let bytes: UnsafeBufferPointer<UInt8>
        let number: Int
    }

    private enum Source {
        case descriptor(Int32)
        case memory(Data, offset: Int)
    }

    static let chunkSize = 1 << 20

    private var source: Source
    private var buffer: UnsafeMutableBufferPointer<UInt8>
    /// Where the unread bytes of `buffer` start and end.
    private var start = 0
    private var end = 0
    private var atEnd = false
    private var lineNumber = 0
    /// Bytes read from the source so far.
    private(set) var bytesRead = 0

    /// A reader of `fileDescriptor` (not closed by the reader).
    init(fileDescriptor: Int32) {
        source = .descriptor(fileDescriptor)
        buffer = .allocate(capacity: Self.chunkSize)
    }

    /// A reader of bytes in memory.
    init(data: Data) {
        source = .memory(data, offset: 0)
        buffer = .allocate(capacity: Self.chunkSize)
    }

    deinit { buffer.deallocate() }

    /// The next line that is not blank, or nil at the end of the input.
    mutating func nextLine() throws -> Line? {
        while true {
            guard let (lineStart, lineEnd) = try nextRawLine() else { return nil }
            lineNumber += 1
            var last = lineEnd
            if last > lineStart, buffer[last - 1] == 0x0D { last -= 1 }
            var first = lineStart
            while first < last, buffer[first] == 0x20 || buffer[first] == 0x09 { first += 1 }
            while last > first, buffer[last - 1] == 0x20 || buffer[last - 1] == 0x09 { last -= 1 }
            if first == last { continue }
            return Line(bytes: UnsafeBufferPointer(rebasing: buffer[first..<last]), number: lineNumber)
        }
    }

    /// The bounds in `buffer` of the next line without its `\n`, reading more as needed.
    private mutating func nextRawLine() throws -> (Int, Int)? {
        var scanned = start
        while true {
            if scanned < end, let newline = find(from: scanned) {
                let line = (start, newline)
                start = newline + 1
                return line
            }
            scanned = end
            if atEnd {
                guard start < end else { return nil }
                let line = (start, end)
                start = end
                return line
            }
            // Make room: move the partial line to the front, or grow for a line longer than the buffer.
            if start > 0 {
                let pending = end - start
                if pending > 0 { memmove(buffer.baseAddress!, buffer.baseAddress! + start, pending) }
                scanned -= start
                start = 0
                end = pending
            }
            if end == buffer.count {
                let larger = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: buffer.count * 2)
                _ = larger.initialize(fromContentsOf: buffer)
                buffer.deallocate()
                buffer = larger
            }
            let count = try fill(UnsafeMutableBufferPointer(rebasing: buffer[end...]))
            if count == 0 { atEnd = true }
            end += count
            bytesRead += count
        }
    }

    private func find(from index: Int) -> Int? {
        let base = buffer.baseAddress!
        guard let found = memchr(base + index, 0x0A, end - index) else { return nil }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    private mutating func fill(_ target: UnsafeMutableBufferPointer<UInt8>) throws -> Int {
        switch source {
        case .descriptor(let fd):
            while true {
                let count = read(fd, target.baseAddress, target.count)
                if count >= 0 { return count }
                if errno == EINTR { continue }
                throw TributaryError(.io, "cannot read the input: \(String(cString: strerror(errno)))", hint: "check that the file is readable")
            }
        case .memory(let data, let offset):
            let count = min(target.count, data.count - offset)
            if count > 0 {
                data.withUnsafeBytes { bytes in
                    UnsafeMutableRawBufferPointer(target).copyBytes(from: bytes[(bytes.startIndex + offset)..<(bytes.startIndex + offset + count)])
                }
            }
            source = .memory(data, offset: offset + count)
            return count
        }
    }
}
