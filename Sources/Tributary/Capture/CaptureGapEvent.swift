import Foundation

/// A capture gap as a follower of history meets it
/// (``PersistentStoreCoordinator/enumerateHistoryChanges(_:schema:gaps:_:)``): the history
/// transaction without changes, process "capture gap", that Tributary records when writes by
/// other programs to an adopted database may not have been captured (capture triggers dropped
/// or altered, a table or unique index made outside the model). No copy of the data can
/// repair it; a consumer learns of it in its place among the changes.
///
/// ```swift
/// try coordinator.enumerateHistoryChanges(request, schema: nil, gaps: { gap in
///     audit.warn("token \(gap.token): \(gap.description)")
/// }) { change in … }
/// ```
public struct CaptureGapEvent: Sendable, Equatable {
    /// The process ID of a capture gap transaction.
    public static let processID: Int32 = -3
    /// The process name of a capture gap transaction.
    public static let processName = "capture gap"

    /// The gap transaction's token.
    public let token: PersistentHistoryToken
    /// When Tributary found the gap (the writes it names happened before).
    public let timestamp: Date
    /// Which writes may be missing, since which token, and why (the transaction's context name).
    public let description: String
    /// The entities whose writes may be missing (empty when the gap is about tables outside the model).
    public let entities: [String]
    /// The transaction's chain hash, nil when the history is not chained.
    public let chainHash: [UInt8]?

    /// An event.
    public init(token: PersistentHistoryToken, timestamp: Date, description: String, entities: [String] = [], chainHash: [UInt8]? = nil) {
        self.token = token
        self.timestamp = timestamp
        self.description = description
        self.entities = entities
        self.chainHash = chainHash
    }

    /// Whether a history transaction of process `processID` named `processName` is a capture gap.
    static func isGap(processID: Int64, processName: String) -> Bool {
        processID == Int64(Self.processID) && processName == Self.processName
    }

    /// The entities stored with the transaction `token` (`,A,B,`).
    static func entities(at token: Int64, on db: Connection) throws -> [String] {
        let text = try db.scalar("SELECT entities FROM \(HistorySchema.transactions) WHERE token = \(token)")?.stringValue ?? ""
        return text.split(separator: ",").map(String.init)
    }
}
