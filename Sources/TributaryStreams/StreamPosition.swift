import Tributary

/// The place of one record in a change stream: the history token of its transaction and
/// the index of the change in it. Snapshot records (op `r`) sit after every change of the
/// snapshot's token and before the next token. Printed as `42.3` (a change) or `42.r3`
/// (the fourth object of a snapshot taken at token 42); comparable and parseable.
///
/// ```swift
/// let position = try StreamPosition(parsing: "42.3")
/// position < StreamPosition(token: 43, index: 0)   // true
/// ```
public struct StreamPosition: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The transaction's token value.
    public var token: Int64
    /// The index of the change in its transaction, or of the object in the snapshot.
    public var index: Int
    /// Whether the record is a snapshot read rather than a change.
    public var isSnapshot: Bool

    /// A position.
    public init(token: Int64, index: Int, isSnapshot: Bool = false) {
        self.token = token
        self.index = index
        self.isSnapshot = isSnapshot
    }

    /// Parses `42.3` or `42.r3`.
    public init(parsing text: String) throws {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        let snapshot = parts.count == 2 && parts[1].hasPrefix("r")
        guard parts.count == 2, let token = Int64(parts[0]), token >= 0,
              let index = Int(snapshot ? parts[1].dropFirst() : parts[1]), index >= 0 else {
            throw TributaryError(.invalidInput, "'\(text)' is not a stream position", hint: "positions look like 42.3 (token 42, change 3) or 42.r3 (snapshot object 3)")
        }
        self.init(token: token, index: index, isSnapshot: snapshot)
    }

    public var description: String { isSnapshot ? "\(token).r\(index)" : "\(token).\(index)" }

    /// The newest token all of whose records come at or before this position: its own for
    /// a snapshot record (a snapshot sits after every change of its token), the one before
    /// for a change (its transaction may have changes after it). Once everything through
    /// this position is delivered, a consumer may be committed through it.
    public var completeToken: Int64 { HistoryFollower.completeToken(token, isSnapshot: isSnapshot) }

    /// The form used in segment names: fixed width, so names sort as positions do.
    public var fileNameComponent: String {
        let token = String(self.token)
        let index = String(self.index)
        return String(repeating: "0", count: max(0, 12 - token.count)) + token + (isSnapshot ? "r" : "c")
            + String(repeating: "0", count: max(0, 7 - index.count)) + index
    }

    public static func < (lhs: StreamPosition, rhs: StreamPosition) -> Bool {
        if lhs.token != rhs.token { return lhs.token < rhs.token }
        if lhs.isSnapshot != rhs.isSnapshot { return !lhs.isSnapshot }
        return lhs.index < rhs.index
    }

    public init(from decoder: Decoder) throws {
        try self.init(parsing: decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
