import Foundation
import Tributary

/// Appends records' event IDs (``StreamRecord/eventID``, which this defines) as UTF-8 without making a `String`
/// for each: the store ID's text is kept from record to record, and the token and index are
/// written as digits. Sinks that put every record's ID into a request body use it.
///
/// ```swift
/// var ids = EventIDWriter()
/// var bytes: [UInt8] = []
/// ids.append(record, to: &bytes)   // the bytes of record.eventID, e.g. "6f96…-42-0"
/// ```
public struct EventIDWriter: Sendable {
    private var storeID: UUID?
    private var storeText: [UInt8] = []

    /// A writer.
    public init() {}

    /// Appends `record`'s event ID: store ID, token and index (`r` before the index for a snapshot read).
    public mutating func append(_ record: StreamRecord, to buffer: inout [UInt8]) {
        if record.storeID != storeID {
            storeID = record.storeID
            storeText = Array(record.storeID.lowercasedString.utf8)
        }
        buffer.append(contentsOf: storeText)
        buffer.append(0x2D)
        NativeEncoder.appendDigits(record.position.token, to: &buffer)
        buffer.append(0x2D)
        if record.position.isSnapshot { buffer.append(0x72) }
        NativeEncoder.appendDigits(Int64(record.position.index), to: &buffer)
    }
}
