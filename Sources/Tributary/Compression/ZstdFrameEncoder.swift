import CZstd

/// Compresses independent zstd frames with one reused context, each with zstd's content
/// checksum and content size, optionally with a dictionary: the building block of stream
/// segments, where a reader may start at any frame.
///
/// Not Sendable: one owner uses it at a time.
///
/// ```swift
/// let encoder = try ZstdFrameEncoder(level: 3)
/// var file: [UInt8] = []
/// try encoder.compressFrame(Array("{\"a\":1}\n".utf8), appendingTo: &file)
/// ```
public final class ZstdFrameEncoder {
    private let context: OpaquePointer
    private var dictionary: OpaquePointer?
    private var scratch: [UInt8] = []
    /// The ID of the dictionary in use, 0 without one.
    public let dictionaryID: UInt32

    /// An encoder at `level` (zstd's 1…19; 3 is its default), with `dictionary` when given.
    public init(level: Int32 = 3, dictionary: ZstdDictionary? = nil) throws {
        guard let context = ZSTD_createCCtx() else { throw TributaryError(.io, "zstd: out of memory") }
        self.context = context
        self.dictionaryID = dictionary?.id ?? 0
        try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level))
        try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1))
        try Self.check(ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, 1))
        if let dictionary {
            self.dictionary = dictionary.bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, level) }
            guard self.dictionary != nil else { throw TributaryError(.invalidInput, "the zstd dictionary \(dictionary.id) cannot be loaded") }
            try Self.check(ZSTD_CCtx_refCDict(context, self.dictionary))
        }
    }

    deinit {
        ZSTD_freeCCtx(context)
        if let dictionary { ZSTD_freeCDict(dictionary) }
    }

    /// Compresses `input` as one frame and appends it to `output`; returns the frame's size.
    @discardableResult
    public func compressFrame(_ input: [UInt8], appendingTo output: inout [UInt8]) throws -> Int {
        let bound = ZSTD_compressBound(input.count)
        // Compressed into a kept scratch buffer, then only the written bytes appended: growing
        // `output` by the bound each frame zero-filled about 32 KB per 64 records.
        if scratch.count < bound { scratch = [UInt8](repeating: 0, count: bound) }
        let written = scratch.withUnsafeMutableBytes { out in
            input.withUnsafeBytes { source in
                ZSTD_compress2(context, out.baseAddress!, bound, source.baseAddress, source.count)
            }
        }
        if ZSTD_isError(written) != 0 {
            throw TributaryError(.io, "zstd compression failed: \(String(cString: ZSTD_getErrorName(written)))")
        }
        output.append(contentsOf: scratch[0..<written])
        return written
    }

    static func check(_ code: Int) throws {
        if ZSTD_isError(code) != 0 { throw TributaryError(.io, "zstd: \(String(cString: ZSTD_getErrorName(code)))") }
    }
}
