import Crypto

/// SHA-256, incremental, as `sha256sum` computes it: the checksum of every segment in a
/// stream's manifest, and the hash that chains history transactions. swift-crypto's
/// (BoringSSL's on Linux, using the CPU's SHA extensions where it has them).
///
/// ```swift
/// var hash = SHA256()
/// hash.update(Array("abc".utf8))
/// print(hash.finalize())   // ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad
/// ```
package struct SHA256: Sendable {
    private var hasher = Crypto.SHA256()

    /// A hash of nothing yet.
    package init() {}

    /// The hex digest of `bytes`.
    package static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize()
    }

    /// Adds `bytes` to the message.
    package mutating func update<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        // Contiguous bytes (arrays, the usual case) are hashed in place.
        if bytes.withContiguousStorageIfAvailable({ hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }) != nil { return }
        Array(bytes).withUnsafeBytes { hasher.update(bufferPointer: $0) }
    }

    /// The digest as 64 lowercase hex digits.
    package mutating func finalize() -> String { Hex.string(finalizeDigest()) }

    /// The 32-byte digest.
    package mutating func finalizeDigest() -> [UInt8] { Array(hasher.finalize()) }
}
