import CSQLite
import Foundation

private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A prepared statement with typed binding and column access.
package final class Statement {
    let handle: OpaquePointer
    let sql: String
    unowned let connection: Connection
    let columnCount: Int

    init(connection: Connection, sql: String) throws {
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else {
            throw connection.error(rc, sql: sql)
        }
        self.handle = stmt
        self.sql = sql
        self.connection = connection
        self.columnCount = Int(sqlite3_column_count(stmt))
    }

    deinit { sqlite3_finalize(handle) }

    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Resets for another run, keeping the bindings (every one is bound again).
    @inline(__always)
    func rewind() {
        sqlite3_reset(handle)
    }

    // MARK: Binding

    package func bind(_ arguments: [AttributeValue]) throws {
        for (index, value) in arguments.enumerated() {
            try bind(value, at: Int32(index + 1))
        }
    }

    func bind(_ value: AttributeValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .string(let s): rc = bindText(s, at: index)
        case .integer(let i): rc = sqlite3_bind_int64(handle, index, i)
        case .double(let d): rc = sqlite3_bind_double(handle, index, d)
        case .bool(let b): rc = sqlite3_bind_int64(handle, index, b ? 1 : 0)
        case .date(let d): rc = sqlite3_bind_double(handle, index, d.timeIntervalSince1970)
        case .uuid(let u): rc = bindText(u.uuidString.lowercased(), at: index)
        case .data(let data):
            rc = data.withUnsafeBytes { buffer in
                sqlite3_bind_blob64(handle, index, buffer.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(buffer.count), SQLITE_TRANSIENT)
            }
        case .objectID(let id): rc = sqlite3_bind_int64(handle, index, id.primaryKey)
        case .array:
            throw TributaryError(.typeMismatch, "an array cannot be bound as one SQL value", location: sql)
        }
        if rc != SQLITE_OK { throw connection.error(rc, sql: sql) }
    }

    private func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            sqlite3_bind_text(handle, index, UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self), Int32(buffer.count), SQLITE_TRANSIENT)
        }
    }

    // MARK: Stepping

    /// Steps once: `true` when a row is available, `false` when done.
    @inline(__always)
    package func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        let error = connection.error(rc, sql: sql)
        sqlite3_reset(handle)
        throw error
    }

    /// Steps to completion, ignoring rows.
    package func run() throws {
        while try step() {}
    }

    // MARK: Columns

    package func isNull(at index: Int) -> Bool { sqlite3_column_type(handle, Int32(index)) == SQLITE_NULL }

    /// How SQLite stores a column's value in the current row.
    package enum StorageClass { case integer, real, text, blob, null }

    /// The storage class of the column's value in the current row.
    package func storageClass(at index: Int) -> StorageClass { column(at: index).storageClass }

    /// The column's value in the current row, in place: its class and contents read after one
    /// call into the statement (each `sqlite3_column_*` call is one). Valid until the next step.
    @inline(__always)
    package func column(at index: Int) -> StoredValue { StoredValue(value: sqlite3_column_value(handle, Int32(index))) }

    package func int64(at index: Int) -> Int64 { sqlite3_column_int64(handle, Int32(index)) }
    package func double(at index: Int) -> Double { sqlite3_column_double(handle, Int32(index)) }

    package func string(at index: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as text, or nil when it is NULL: one call to SQLite instead of two.
    @inline(__always)
    package func optionalString(at index: Int) -> String? {
        guard let text = sqlite3_column_text(handle, Int32(index)) else { return nil }
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// Calls `body` with the column's bytes in place (valid only during the call).
    func withBytes<T>(at index: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        let bytes = sqlite3_column_blob(handle, Int32(index))
        return try body(UnsafeRawBufferPointer(start: bytes, count: bytes == nil ? 0 : count))
    }

    func data(at index: Int) -> Data {
        let count = Int(sqlite3_column_bytes(handle, Int32(index)))
        guard count > 0, let bytes = sqlite3_column_blob(handle, Int32(index)) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// The column as SQLite stores it (integer, double, text, blob or null).
    package func value(at index: Int) -> AttributeValue { column(at: index).attributeValue }
}
