/// How far the capture log has been folded into history (`_tributary_capture_state`):
/// the last log row folded, and the write-ahead log generation (its salts) and commit
/// frame read up to then.
struct CaptureState {
    var salts: (UInt32, UInt32)?
    var walFrame: Int
    var foldedSeq: Int64

    static func read(on db: Connection) throws -> CaptureState {
        let statement = try db.cachedStatement("SELECT walSalt1, walSalt2, walFrame, foldedSeq FROM \(CaptureLog.state) WHERE id = 1")
        defer { statement.reset() }
        guard try statement.step() else { return CaptureState(salts: nil, walFrame: 0, foldedSeq: 0) }
        let salts = statement.isNull(at: 0) ? nil : (UInt32(truncatingIfNeeded: statement.int64(at: 0)), UInt32(truncatingIfNeeded: statement.int64(at: 1)))
        return CaptureState(salts: salts, walFrame: Int(statement.int64(at: 2)), foldedSeq: statement.int64(at: 3))
    }

    func write(on db: Connection) throws {
        try db.execute("UPDATE \(CaptureLog.state) SET walSalt1 = ?, walSalt2 = ?, walFrame = ?, foldedSeq = ? WHERE id = 1", [
            salts.map { .integer(Int64($0.0)) } ?? .null, salts.map { .integer(Int64($0.1)) } ?? .null,
            .integer(Int64(walFrame)), .integer(foldedSeq),
        ])
    }
}
