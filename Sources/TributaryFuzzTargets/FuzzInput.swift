import Foundation

/// The bytes libFuzzer hands a harness, in the forms the entry points take.
public struct FuzzInput {
    /// The raw bytes.
    public let bytes: UnsafeBufferPointer<UInt8>

    /// The `size` bytes at `data`, as `LLVMFuzzerTestOneInput` receives them.
    public init(_ data: UnsafePointer<UInt8>?, _ size: Int) {
        bytes = UnsafeBufferPointer(start: size > 0 ? data : nil, count: size)
    }

    /// The bytes as text (invalid UTF-8 repaired, as `String(decoding:)` does for files).
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// A copy of the bytes.
    public var array: [UInt8] { Array(bytes) }
}
