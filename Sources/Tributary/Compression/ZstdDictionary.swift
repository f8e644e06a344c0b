import CZstd

/// A zstd dictionary: trained from sample records, it lets small frames compress
/// as well as large ones (zstd's guidance: about 100 KB, from about 100 times as
/// much sample data).
///
/// ```swift
/// let dictionary = try ZstdDictionary.train(samples: records, capacity: 100_000)
/// let encoder = try ZstdFrameEncoder(dictionary: dictionary)
/// ```
public struct ZstdDictionary: Sendable, Equatable {
    /// The dictionary's content, as stored in a `.zdict` file.
    public let bytes: [UInt8]
    /// The ID zstd writes into each frame compressed with it.
    public let id: UInt32

    /// A dictionary read back from its bytes; an error when they are not one.
    public init(bytes: [UInt8]) throws {
        let id = bytes.withUnsafeBytes { ZDICT_getDictID($0.baseAddress, $0.count) }
        guard id != 0 else { throw TributaryError(.damagedStream, "not a zstd dictionary", hint: "the .zdict file beside the manifest is damaged; restore it") }
        self.bytes = bytes
        self.id = id
    }

    /// Trains a dictionary of at most `capacity` bytes from `samples` (each one record or frame's content).
    public static func train(samples: [[UInt8]], capacity: Int = 100_000) throws -> ZstdDictionary {
        let joined = samples.flatMap { $0 }
        let sizes = samples.map { $0.count }
        var buffer = [UInt8](repeating: 0, count: capacity)
        let written = buffer.withUnsafeMutableBytes { out in
            joined.withUnsafeBytes { input in
                sizes.withUnsafeBufferPointer { sizes in
                    ZDICT_trainFromBuffer(out.baseAddress, out.count, input.baseAddress, sizes.baseAddress, UInt32(sizes.count))
                }
            }
        }
        if ZDICT_isError(written) != 0 {
            throw TributaryError(.invalidInput, "zstd could not train a dictionary: \(String(cString: ZDICT_getErrorName(written)))",
                                 hint: "train from more records (about 100 times the dictionary's size), or export without --dictionary")
        }
        return try ZstdDictionary(bytes: Array(buffer[..<written]))
    }
}
