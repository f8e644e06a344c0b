import Crypto
import Foundation

/// A signed statement that a store's history, through a token, has a given chain hash
/// (``PersistentStoreCoordinator/verifyHistoryChain()``): kept away from the store, it proves
/// later that the history up to that token was not rewritten, even by someone able to
/// recompute every hash. Signed with Ed25519.
///
/// ```swift
/// let key = Curve25519.Signing.PrivateKey().rawRepresentation   // keep it secret
/// let checkpoint = try coordinator.makeHistoryCheckpoint(signingKey: key)
/// try coordinator.verify(checkpoint)   // throws historyTampered once history through it was edited
/// ```
public struct HistoryCheckpoint: Sendable, Codable, Equatable {
    /// The store's ID.
    public var storeID: UUID
    /// The token value of the newest transaction the checkpoint vouches for.
    public var token: Int64
    /// Its chain hash, 64 hex digits.
    public var hash: String
    /// When the checkpoint was made, ISO 8601.
    public var createdAt: String
    /// The Ed25519 public key that signed it, base64.
    public var publicKey: String
    /// The signature over ``signedText``, base64.
    public var signature: String

    /// What is signed: a line naming the format, then the store ID, token, hash and time.
    public var signedText: String {
        "tributary history checkpoint 1\n\(storeID.uuidString.lowercased())\n\(token)\n\(hash)\n\(createdAt)\n"
    }

    /// A checkpoint of `hash` at `token`, signed with the 32-byte Ed25519 private key `signingKey`.
    public static func sign(storeID: UUID, token: Int64, hash: String, createdAt: Date = Date(), signingKey: Data) throws -> HistoryCheckpoint {
        let key: Curve25519.Signing.PrivateKey
        do {
            key = try Curve25519.Signing.PrivateKey(rawRepresentation: signingKey)
        } catch {
            throw TributaryError(.invalidInput, "the signing key is not an Ed25519 private key (\(signingKey.count) bytes; 32 expected)",
                                 hint: "make one with tributary audit key FILE")
        }
        var checkpoint = HistoryCheckpoint(storeID: storeID, token: token, hash: hash, createdAt: ISO8601.string(from: createdAt),
                                           publicKey: key.publicKey.rawRepresentation.base64EncodedString(), signature: "")
        checkpoint.signature = try key.signature(for: Data(checkpoint.signedText.utf8)).base64EncodedString()
        return checkpoint
    }

    /// Whether the signature is the holder of ``publicKey``'s over ``signedText``, and, given
    /// `trusted` (a base64 public key), that this is the key that signed.
    public func hasValidSignature(trusting trusted: String? = nil) -> Bool {
        if let trusted, trusted != publicKey { return false }
        guard let keyBytes = Data(base64Encoded: publicKey), let signatureBytes = Data(base64Encoded: signature),
              let key = try? Curve25519.Signing.PublicKey(rawRepresentation: keyBytes) else { return false }
        return key.isValidSignature(signatureBytes, for: Data(signedText.utf8))
    }

    /// A new Ed25519 signing key: the 32 private bytes to keep secret, and the base64 public
    /// key to give whoever verifies.
    public static func newSigningKey() -> (privateKey: Data, publicKey: String) {
        let key = Curve25519.Signing.PrivateKey()
        return (key.rawRepresentation, key.publicKey.rawRepresentation.base64EncodedString())
    }
}
