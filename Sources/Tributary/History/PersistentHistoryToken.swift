import Foundation

/// A position in a store's history (Core Data's `NSPersistentHistoryToken`).
///
/// Tokens are comparable within a store, print as a short string such as
/// `1042-6f9619ff` (the transaction number, then the first eight hex digits of
/// the store's ID) and are rejected by any other store.
///
/// ```swift
/// let token = try coordinator.currentPersistentHistoryToken()
/// let text = token.description                  // "1042-6f9619ff"
/// let again = try PersistentHistoryToken(parsing: text)
/// ```
public struct PersistentHistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The transaction number: every history transaction gets the next one.
    public let value: Int64
    /// The first 32 bits of the store's ID.
    public let storeKey: UInt32

    /// A token of `value` in the store `storeID`.
    public init(value: Int64, storeID: UUID) {
        self.value = value
        self.storeKey = Self.key(of: storeID)
    }

    init(value: Int64, storeKey: UInt32) {
        self.value = value
        self.storeKey = storeKey
    }

    static func key(of storeID: UUID) -> UInt32 {
        let u = storeID.uuid
        return UInt32(u.0) << 24 | UInt32(u.1) << 16 | UInt32(u.2) << 8 | UInt32(u.3)
    }

    /// Parses the printed form; an error says what a token looks like.
    public init(parsing text: String) throws {
        let parts = text.split(separator: "-")
        guard parts.count == 2, let value = Int64(parts[0]), value >= 0, parts[1].count == 8, let key = UInt32(parts[1], radix: 16) else {
            throw TributaryError(.invalidInput, "'\(text)' is not a history token", hint: "tokens look like 1042-6f9619ff; tributary token STORE prints the current one")
        }
        self.init(value: value, storeKey: key)
    }

    public var description: String {
        let hex = String(storeKey, radix: 16)
        return "\(value)-" + String(repeating: "0", count: 8 - hex.count) + hex
    }

    /// Tokens of different stores do not compare; order them by value within a store.
    public static func < (lhs: PersistentHistoryToken, rhs: PersistentHistoryToken) -> Bool {
        lhs.value < rhs.value
    }

    public init(from decoder: Decoder) throws {
        try self.init(parsing: decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Throws unless the token belongs to the store `storeID`.
    func check(belongsTo storeID: UUID) throws {
        guard storeKey == Self.key(of: storeID) else {
            throw TributaryError(.invalidInput, "token \(description) belongs to another store", hint: "use a token of store \(storeID.uuidString.lowercased().prefix(8)); tributary token STORE prints the current one")
        }
    }
}
