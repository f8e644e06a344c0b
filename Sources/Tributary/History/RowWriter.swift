import Foundation

/// A scratch buffer the history recorder encodes one row into before appending
/// it to the transaction's payload: plain stores through a pointer, with room
/// made once per value instead of an `Array` uniqueness and capacity check per byte.
///
/// Its memory grows on demand (`reserve`) and is reused row after row; the owner
/// keeps one (a copy whose `reserve` grew it must be given back, as the old
/// pointer is gone) and frees it when done. Every write must follow a `reserve`
/// large enough for it. The bytes are
/// those of ``ByteWriter`` (same varints and doubles).
///
/// ```swift
/// var row = RowWriter()
/// row.reserve(16)
/// row.varint(300)
/// row.double(1.5)
/// body.bytes.append(contentsOf: row.written)   // 2 + 8 bytes
/// row.deallocate()
/// ```
struct RowWriter {
    private var base: UnsafeMutablePointer<UInt8>?
    private var capacity = 0
    private(set) var count = 0

    /// The bytes written since the last `removeAll`.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    mutating func removeAll() { count = 0 }

    /// Makes room for `n` more bytes.
    @inline(__always)
    mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(to: count + n) }
    }

    private mutating func grow(to needed: Int) {
        let newCapacity = max(needed, capacity * 2, 256)
        guard let grown = realloc(base, newCapacity) else { fatalError("out of memory growing a history row to \(newCapacity) bytes") }
        base = grown.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    func deallocate() { free(base) }

    @inline(__always)
    mutating func byte(_ b: UInt8) {
        base.unsafelyUnwrapped[count] = b
        count += 1
    }

    @inline(__always)
    mutating func varint(_ value: UInt64) {
        let p = base.unsafelyUnwrapped
        var v = value
        while v >= 0x80 {
            p[count] = UInt8(truncatingIfNeeded: v) | 0x80
            count += 1
            v >>= 7
        }
        p[count] = UInt8(truncatingIfNeeded: v)
        count += 1
    }

    @inline(__always)
    mutating func signed(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }

    @inline(__always)
    mutating func double(_ d: Double) {
        var bits = d.bitPattern.littleEndian
        withUnsafeBytes(of: &bits) { UnsafeMutableRawPointer(base.unsafelyUnwrapped + count).copyMemory(from: $0.baseAddress!, byteCount: 8) }
        count += 8
    }

    /// Copies `n` bytes (room for them reserved).
    @inline(__always)
    mutating func bytes(_ source: UnsafeRawPointer, count n: Int) {
        UnsafeMutableRawPointer(base.unsafelyUnwrapped + count).copyMemory(from: source, byteCount: n)
        count += n
    }
}
