import CZstd

/// Decompresses single zstd frames with one reused context, checking zstd's content
/// checksum, optionally with a dictionary. A frame compressed with a dictionary other than
/// the one given fails with an error naming both IDs rather than zstd's generic one.
///
/// ```swift
/// let decoder = try ZstdFrameDecoder()
/// let text = try decoder.decompressFrame(frameBytes)
/// ```
public final class ZstdFrameDecoder {
    private let context: OpaquePointer
    private var dictionary: OpaquePointer?
    /// The ID of the dictionary given, 0 without one.
    public let dictionaryID: UInt32

    /// A decoder, with `dictionary` when the frames need one.
    public init(dictionary: ZstdDictionary? = nil) throws {
        guard let context = ZSTD_createDCtx() else { throw TributaryError(.io, "zstd: out of memory") }
        self.context = context
        self.dictionaryID = dictionary?.id ?? 0
        if let dictionary {
            self.dictionary = dictionary.bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
            guard self.dictionary != nil else { throw TributaryError(.invalidInput, "the zstd dictionary \(dictionary.id) cannot be loaded") }
        }
    }

    deinit {
        ZSTD_freeDCtx(context)
        if let dictionary { ZSTD_freeDDict(dictionary) }
    }

    /// The content of the one frame in `frame` (a frame written by ``ZstdFrameEncoder``).
    public func decompressFrame(_ frame: ArraySlice<UInt8>) throws -> [UInt8] {
        try frame.withUnsafeBytes { bytes in
            let size = ZSTD_getFrameContentSize(bytes.baseAddress, bytes.count)
            guard size < UInt64.max - 1, size < 1 << 31 else {
                throw TributaryError(.damagedStream, "not a zstd frame with a content size")
            }
            let needed = ZSTD_getDictID_fromFrame(bytes.baseAddress, bytes.count)
            if needed != 0 && needed != dictionaryID {
                throw TributaryError(.damagedStream, dictionaryID == 0 ? "the frame needs zstd dictionary \(needed), and none was given"
                                                                       : "the frame needs zstd dictionary \(needed), not \(dictionaryID)",
                                     hint: "keep dictionary-\(needed).zdict beside the manifest")
            }
            var written = 0
            let output = [UInt8](unsafeUninitializedCapacity: Int(size)) { buffer, count in
                written = ZSTD_decompress_usingDDict(context, buffer.baseAddress, buffer.count, bytes.baseAddress, bytes.count, dictionary)
                count = ZSTD_isError(written) != 0 ? 0 : min(written, buffer.count)
            }
            if ZSTD_isError(written) != 0 {
                throw TributaryError(.damagedStream, "zstd: \(String(cString: ZSTD_getErrorName(written)))")
            }
            guard written == Int(size) else { throw TributaryError(.damagedStream, "the frame holds \(written) bytes, not the \(size) its header says") }
            return output
        }
    }

    /// The size of the frame (compressed or skippable) starting at `bytes`' start,
    /// or an error when it is cut short or not a frame.
    public static func frameSize(_ bytes: ArraySlice<UInt8>) throws -> Int {
        let size = bytes.withUnsafeBytes { ZSTD_findFrameCompressedSize($0.baseAddress, $0.count) }
        if ZSTD_isError(size) != 0 {
            throw TributaryError(.damagedStream, "zstd: \(String(cString: ZSTD_getErrorName(size)))")
        }
        return size
    }

    /// Whether `bytes` start with a skippable frame (magic 0x184D2A50…5F).
    public static func isSkippableFrame(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard bytes.count >= 8 else { return false }
        let i = bytes.startIndex
        let magic = UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16 | UInt32(bytes[i + 3]) << 24
        return magic & 0xFFFF_FFF0 == 0x184D_2A50
    }
}
