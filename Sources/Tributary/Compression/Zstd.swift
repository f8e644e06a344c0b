import CZstd
import Foundation

/// One-shot zstd compression of small payloads (history transactions).
enum Zstd {
    /// `data` compressed as one zstd frame with its content size.
    static func compress(_ data: [UInt8], level: Int32 = 3) throws -> [UInt8] {
        let bound = ZSTD_compressBound(data.count)
        var output = [UInt8](repeating: 0, count: bound)
        let written = output.withUnsafeMutableBytes { out in
            data.withUnsafeBytes { input in
                ZSTD_compress(out.baseAddress, bound, input.baseAddress, input.count, level)
            }
        }
        if ZSTD_isError(written) != 0 {
            throw TributaryError(.io, "zstd compression failed: \(String(cString: ZSTD_getErrorName(written)))")
        }
        output.removeSubrange(written...)
        return output
    }

    /// The content of one zstd frame whose size is recorded in its header.
    static func decompress(_ frame: UnsafeRawBufferPointer) throws -> [UInt8] {
        let size = ZSTD_getFrameContentSize(frame.baseAddress, frame.count)
        // ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.
        guard size < UInt64.max - 1, size < 1 << 32 else {
            throw TributaryError(.io, "a compressed history record is damaged (no content size)", hint: "the store may be damaged; restore it from a copy")
        }
        var written = 0
        let output = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
            written = ZSTD_decompress(buffer.baseAddress, buffer.count, frame.baseAddress, frame.count)
            count = ZSTD_isError(written) != 0 ? 0 : min(written, buffer.count)
        }
        if ZSTD_isError(written) != 0 || written != Int(size) {
            throw TributaryError(.io, "a compressed history record is damaged", hint: "the store may be damaged; restore it from a copy")
        }
        return output
    }
}
