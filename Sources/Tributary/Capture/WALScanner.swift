/// Reads a write-ahead log's frames as SQLite's readers do: with the wal-index's header
/// (``IndexHeader``), every frame up to its last committed frame counts; without one, as
/// SQLite's recovery does, a frame counts when its salts match the header's and its
/// checksum continues the chain, up to the last commit frame of that chain. (SQLite 3.40
/// can leave a transaction's frames with zero salts and checksums, when it rolled a
/// savepoint back after its pages spilled into the log: its readers trust the wal-index, and
/// so must this, or such a transaction and every one after it in the log are lost to it.)
/// At each commit frame it asks for the capture log's largest `seq` as of that commit
/// (``LogMaximum``), which is where one transaction's log rows end.
///
/// It keeps what it has read of the current generation (the salts, the frame and
/// checksum it reached, and where each page's newest copy is), so each fold reads only
/// the frames added since the last.
struct WALScanner {
    /// Reads `count` bytes at `offset` of the log (nil past its end or on error).
    typealias Read = (_ offset: Int64, _ count: Int) -> [UInt8]?

    struct Commit: Equatable {
        /// The commit frame's number, from 1.
        let frame: Int
        /// The capture log's largest `seq` once this transaction committed.
        let maxSeq: Int64
        /// False when a commit before it (since the one before it that was read) could not
        /// be read: its rows then end here, with the unread one's, and where they part is unknown.
        var exact = true
    }

    /// What the wal-index (the `-shm` file) says of the log, read under the write lock.
    struct IndexHeader: Equatable {
        /// The last committed frame (`mxFrame`).
        let lastFrame: Int
        /// The salts of the generation those frames belong to.
        let salt1: UInt32
        let salt2: UInt32

        /// The header in `bytes` (SQLite's `WalIndexHdr`), nil when it is not one.
        init?(_ bytes: [UInt8]) {
            guard bytes.count >= 48, bytes[12] == 1 else { return nil }
            let version = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt32.self) }
            guard version == 3_007_000 else { return nil }
            lastFrame = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 16, as: UInt32.self) })
            (salt1, salt2) = (bytes.bigEndian32(32), bytes.bigEndian32(36))
        }

        init(lastFrame: Int, salt1: UInt32, salt2: UInt32) {
            self.lastFrame = lastFrame
            self.salt1 = salt1
            self.salt2 = salt2
        }
    }

    private(set) var salt1: UInt32 = 0
    private(set) var salt2: UInt32 = 0
    private(set) var pageSize = 0
    /// The last commit frame read, and the checksum after it.
    private(set) var frame = 0
    private var checksum: (UInt32, UInt32) = (0, 0)
    private var bigEndianChecksum = false
    /// Each page's newest frame up to ``frame``.
    private(set) var pages: [UInt32: Int] = [:]
    private var started = false

    /// The log's salts, or nil when it has no valid header (no log, or an empty one).
    static func salts(_ read: Read) -> (UInt32, UInt32)? {
        guard let header = read(0, 32), Self.validHeader(header) != nil else { return nil }
        return (header.bigEndian32(16), header.bigEndian32(20))
    }

    /// Reads on from where the last call stopped (from frame 1 in a new generation), and
    /// returns each commit read, with the log's largest `seq` at it from `maximum`; a commit
    /// for which `maximum` is nil is left out, and the next one this call returns is not
    /// ``Commit/exact``. With `index`, reads the frames it says are committed, and none
    /// when it is of another generation (one starting, with no frame yet).
    mutating func scan(_ read: @escaping Read, index: IndexHeader? = nil, maximum: (_ page: (UInt32) -> [UInt8]?) -> Int64?) -> [Commit] {
        guard let header = read(0, 32), let start = Self.validHeader(header) else { return [] }
        let salts = (header.bigEndian32(16), header.bigEndian32(20))
        if !started || salts != (salt1, salt2) {
            self = WALScanner()
            started = true
            (salt1, salt2) = salts
            pageSize = Int(header.bigEndian32(8) == 1 ? 65_536 : header.bigEndian32(8))
            bigEndianChecksum = header.bigEndian32(0) & 1 == 1
            checksum = start
        }
        if let index, (index.salt1, index.salt2) != salts || index.lastFrame < frame { return [] }
        var commits: [Commit] = []
        // Whether a commit since the last one returned could not be read (`maximum` nil). Not
        // carried from call to call: run on the writer, a call reads the log up to its last
        // commit, which the caller can read (it sees that commit's schema).
        var skipped = false
        var pending: [UInt32: Int] = [:]
        var running = checksum
        var next = frame + 1
        let frameSize = 24 + pageSize
        while next <= index?.lastFrame ?? .max, let bytes = read(32 + Int64(next - 1) * Int64(frameSize), frameSize), bytes.count == frameSize {
            if index == nil {
                guard bytes.bigEndian32(8) == salt1, bytes.bigEndian32(12) == salt2 else { break }
                running = Self.checksum(bytes[0..<8], running, bigEndian: bigEndianChecksum)
                running = Self.checksum(bytes[24...], running, bigEndian: bigEndianChecksum)
                guard running == (bytes.bigEndian32(16), bytes.bigEndian32(20)) else { break }
            } else {
                running = (bytes.bigEndian32(16), bytes.bigEndian32(20))   // as written: zero where SQLite left it so
            }
            pending[bytes.bigEndian32(0)] = next
            if bytes.bigEndian32(4) != 0 {
                pages.merge(pending) { _, new in new }
                pending = [:]
                frame = next
                checksum = running
                func page(_ number: UInt32) -> [UInt8]? {
                    guard let f = pages[number] else { return nil }
                    return read(32 + Int64(f - 1) * Int64(frameSize) + 24, frameSize - 24)
                }
                if let max = maximum(page) {
                    commits.append(Commit(frame: next, maxSeq: max, exact: !skipped))
                    skipped = false
                } else {
                    skipped = true
                }
            }
            next += 1
        }
        return commits
    }

    /// The header's checksum when the header is valid.
    private static func validHeader(_ header: [UInt8]) -> (UInt32, UInt32)? {
        let magic = header.bigEndian32(0)
        guard magic == 0x377F_0682 || magic == 0x377F_0683 else { return nil }
        let sum = checksum(header[0..<24], (0, 0), bigEndian: magic & 1 == 1)
        guard sum == (header.bigEndian32(24), header.bigEndian32(28)) else { return nil }
        let size = header.bigEndian32(8)
        guard size == 1 || (size >= 512 && size <= 32_768 && size & (size - 1) == 0) else { return nil }
        return sum
    }

    /// SQLite's WAL checksum (Fletcher-like, over pairs of 32-bit words) continued from `start`.
    static func checksum(_ bytes: ArraySlice<UInt8>, _ start: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        var (s1, s2) = start
        var i = 0
        while i + 8 <= bytes.count {
            let x0 = bigEndian ? bytes.bigEndian32(i) : bytes.littleEndian32(i)
            let x1 = bigEndian ? bytes.bigEndian32(i + 4) : bytes.littleEndian32(i + 4)
            s1 = s1 &+ x0 &+ s2
            s2 = s2 &+ x1 &+ s1
            i += 8
        }
        return (s1, s2)
    }
}

/// Integers in byte buffers, at offsets from the buffer's start.
extension Collection where Element == UInt8, Index == Int {
    func bigEndian32(_ at: Int) -> UInt32 {
        let i = startIndex + at
        return UInt32(self[i]) << 24 | UInt32(self[i + 1]) << 16 | UInt32(self[i + 2]) << 8 | UInt32(self[i + 3])
    }

    func littleEndian32(_ at: Int) -> UInt32 {
        let i = startIndex + at
        return UInt32(self[i]) | UInt32(self[i + 1]) << 8 | UInt32(self[i + 2]) << 16 | UInt32(self[i + 3]) << 24
    }

    func bigEndian16(_ at: Int) -> Int {
        Int(self[startIndex + at]) << 8 | Int(self[startIndex + at + 1])
    }
}
