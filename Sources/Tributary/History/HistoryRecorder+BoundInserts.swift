import CSQLite
import Foundation

/// Inserts recorded from the values a batch insert binds: the pre-update hook still
/// fires for the row (so the change keeps its place among the statement's other
/// changes, and its key is SQLite's), but its values come from the batch's array
/// instead of being unpacked from SQLite's record and read back column by column,
/// which was two thirds of history's cost in a bulk import. The bytes written are
/// the same as the hook's (a test compares them for every attribute type).
///
/// What the bound values do not give is read from the row as before: columns SQLite
/// computes (derived attributes' defaults), and whole rows whose object already
/// changed in the transaction or that hold a value of an unexpected kind.
extension HistoryRecorder {
    /// The values of the row a batch insert is stepping, indexed like the table's data columns.
    struct BoundInsert {
        var capture = -1
        var values: UnsafeBufferPointer<AttributeValue>?
    }

    /// The capture of `table` when its inserts can be recorded from bound values, else nil
    /// (an adopted table with a declared key records through the hook, which writes the key).
    func boundInsertCapture(table: String) -> Int? {
        guard isEnabled, boundInserts, let index = captures.firstIndex(where: { $0.entity == table }),
              !captures[index].slots.contains(where: { $0.dataIndex < 0 }), captures[index].keySlots.isEmpty else { return nil }
        return index
    }

    /// Runs `step` (one execution of an insert into the table of `capture`) with `values`
    /// (indexed like the table's data columns) as the values of the row it inserts.
    func recordingBoundInsert<T>(capture: Int, values: [AttributeValue], _ step: () throws -> T) rethrows -> T {
        try values.withUnsafeBufferPointer { buffer in
            boundInsert = BoundInsert(capture: capture, values: buffer)
            defer { boundInsert = BoundInsert() }
            return try step()
        }
    }

    /// Encodes an insert from the bound values; false (nothing written) when a value is not
    /// of the kind its attribute stores, for the hook's values to be used instead.
    func encodeBoundInsert(db: OpaquePointer, capture index: Int, key: Int64, values: UnsafeBufferPointer<AttributeValue>) -> Bool {
        let (entityID, slots) = plan(of: index)
        var out = beginRow(op: SQLITE_INSERT, entity: entityID, key: key, propertyCount: slots.count)
        let after = HistoryPayload.Flags.after.rawValue
        for i in slots.indices {
            let slot = slots[i]
            out.reserve(64)
            out.varint(UInt64(slot.name))
            if slot.excluded {
                out.byte(HistoryPayload.Flags.excluded.rawValue)
                continue
            }
            out.byte(after)
            if slot.readsRow {
                Self.writeValue(db, column: Int(slot.column), old: false, type: slot.type, into: &out)
                continue
            }
            guard Self.writeBound(values.baseAddress! + slot.dataIndex, slot: slot, into: &out) else {
                abandonRow(out)
                return false
            }
        }
        endRow(out, capture: index, entity: entityID, key: key)
        return true
    }

    /// Writes a bound value as the hook would read it back from the stored row.
    private static func writeBound(_ value: UnsafePointer<AttributeValue>, slot: PlannedSlot, into out: inout RowWriter) -> Bool {
        typealias Tag = HistoryPayload.ValueTag
        // One switch on the value in place (a tuple of type and value copied it, a retain more per string).
        switch value.pointee {
        case .null:
            out.byte(Tag.null.rawValue)
        case .integer(let key) where slot.isToOne:
            out.byte(Tag.objectID.rawValue)
            out.varint(UInt64(slot.destination))
            out.signed(key)
        case _ where slot.isToOne:
            return false
        case .string(let text) where slot.type == .string:
            let written: Void? = text.utf8.withContiguousStorageIfAvailable { utf8 in
                out.byte(Tag.text.rawValue)
                out.varint(UInt64(utf8.count))
                out.reserve(utf8.count + 24)
                if let base = utf8.baseAddress { out.bytes(base, count: utf8.count) }
            }
            if written == nil {
                // A bridged or otherwise non-contiguous string: through a native copy.
                var native = text
                native.makeContiguousUTF8()
                var copy = AttributeValue.string(native)
                return writeBound(&copy, slot: slot, into: &out)
            }
        case .integer(let i) where slot.type == .integer:
            out.byte(Tag.integer.rawValue)
            out.signed(i)
        case .double(let d) where slot.type == .double:
            writeReal(d, tag: Tag.double, into: &out)
        case .date(let date) where slot.type == .date:
            writeReal(date.timeIntervalSince1970, tag: Tag.date, into: &out)
        case .bool(let b) where slot.type == .bool:
            out.byte(b ? Tag.boolTrue.rawValue : Tag.boolFalse.rawValue)
        case .uuid where slot.type == .uuid, .data where slot.type == .binary:
            writeRare(value.pointee, into: &out)
        default:
            return false
        }
        return true
    }

    /// A REAL as SQLite gives it back: NaN is stored as NULL, and -0.0 (stored as the integer 0) reads as 0.0.
    private static func writeReal(_ d: Double, tag: HistoryPayload.ValueTag, into out: inout RowWriter) {
        if d.isNaN {
            out.byte(HistoryPayload.ValueTag.null.rawValue)
            return
        }
        out.byte(tag.rawValue)
        out.double(d == 0 ? 0 : d)
    }
}
