import CZstd
import Foundation

/// One-shot zstd compression of small payloads (history transactions), on contexts kept in
/// a pool: making a context for every call (what `ZSTD_compress` does) cost more than half of
/// the history's overhead in single-row transactions.
enum Zstd {
    /// Contexts not in use, as addresses (a context is used by one thread at a time).
    private static let compressors = Locked<[UInt]>([])
    private static let decompressors = Locked<[UInt]>([])
    /// Contexts kept beyond this are freed.
    private static let pooled = 8

    /// The bytes of `data` compressed as one zstd frame with its content size.
    static func compress(_ data: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        try data.withUnsafeBytes { try compress($0, level: level) }
    }

    /// The bytes `data` points to compressed as one zstd frame with its content size.
    static func compress(_ data: UnsafeRawBufferPointer, level: Int32 = 3) throws -> [UInt8] {
        let context = try take(compressors) { ZSTD_createCCtx() }
        defer { give(context, to: compressors) { _ = ZSTD_freeCCtx($0) } }
        let bound = ZSTD_compressBound(data.count)
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, count in
            written = ZSTD_compressCCtx(context, out.baseAddress, bound, data.baseAddress, data.count, level)
            count = ZSTD_isError(written) != 0 ? 0 : written
        }
        if ZSTD_isError(written) != 0 {
            throw TributaryError(.io, "zstd compression failed: \(String(cString: ZSTD_getErrorName(written)))")
        }
        return output
    }

    /// The content of one or more concatenated zstd frames, each with its size recorded in its header.
    static func decompress(_ frames: UnsafeRawBufferPointer) throws -> [UInt8] {
        let damaged = TributaryError(.io, "a compressed history record is damaged", hint: "the store may be damaged; restore it from a copy")
        // The total size, frame by frame (ZSTD_findDecompressedSize is not in the stable API).
        var size: UInt64 = 0
        var offset = 0
        while offset < frames.count {
            let start = frames.baseAddress! + offset
            let frameSize = ZSTD_getFrameContentSize(start, frames.count - offset)
            let compressed = ZSTD_findFrameCompressedSize(start, frames.count - offset)
            // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values; a
            // record's frames are far smaller than 4 GiB, and their sum is checked below.
            guard frameSize < 1 << 32, ZSTD_isError(compressed) == 0, compressed > 0 else { throw damaged }
            size += frameSize
            offset += compressed
        }
        guard size < 1 << 32 else { throw damaged }
        let context = try take(decompressors) { ZSTD_createDCtx() }
        defer { give(context, to: decompressors) { _ = ZSTD_freeDCtx($0) } }
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
            written = ZSTD_decompressDCtx(context, buffer.baseAddress, buffer.count, frames.baseAddress, frames.count)
            count = ZSTD_isError(written) != 0 ? 0 : min(written, buffer.count)
        }
        if ZSTD_isError(written) != 0 || written != Int(size) { throw damaged }
        return output
    }

    private static func take(_ pool: Locked<[UInt]>, make: () -> OpaquePointer?) throws -> OpaquePointer {
        if let address = pool.withLock({ $0.popLast() }), let context = OpaquePointer(bitPattern: address) { return context }
        guard let context = make() else { throw TributaryError(.io, "zstd: out of memory") }
        return context
    }

    private static func give(_ context: OpaquePointer, to pool: Locked<[UInt]>, free: (OpaquePointer) -> Void) {
        let kept = pool.withLock { contexts -> Bool in
            guard contexts.count < pooled else { return false }
            contexts.append(UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(context))))
            return true
        }
        if !kept { free(context) }
    }
}
