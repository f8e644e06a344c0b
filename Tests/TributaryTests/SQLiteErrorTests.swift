import Foundation
import Testing
@testable import Tributary

/// `SQLiteError` carries its result code as a value (`ResultCode`), extended and primary.
@Suite struct SQLiteErrorTests {
    @Test func aUniqueViolationIsConstraintUniqueWithTheConstraintPrimaryCode() throws {
        let db = try Connection(path: ":memory:", options: ConnectionOptions())
        try db.execute("CREATE TABLE t (k TEXT UNIQUE NOT NULL)")
        try db.execute("INSERT INTO t VALUES ('a')")
        let unique = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES ('a')") }
        #expect(unique?.code == .constraintUnique)
        #expect(unique?.primaryCode == .constraint)
        #expect(unique?.code.description == "constraint failed")
        let notNull = #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (NULL)") }
        #expect(notNull?.code == .constraintNotNull && notNull?.code != .constraintUnique)
        #expect(unique?.description.hasPrefix("SQLite error 2067: UNIQUE constraint failed: t.k") == true, "\(String(describing: unique))")
    }
}
