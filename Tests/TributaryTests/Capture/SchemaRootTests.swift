import Testing
@testable import Tributary

/// ``SchemaRoot`` reads `sqlite_master` from page images another program wrote: whatever
/// they hold, it gives a table's root page or nil, never a trap or an endless walk.
@Suite struct SchemaRootTests {
    /// Page 1 of 4096 bytes: a leaf (0x0D) or interior (0x05) b-tree page after the file header, with `cells` at their offsets.
    static func firstPage(type: UInt8, cells: [[UInt8]], rightChild: UInt32 = 0) -> [UInt8] {
        var page = [UInt8](repeating: 0, count: 4096)
        page[100] = type
        page[103] = UInt8(cells.count >> 8)
        page[104] = UInt8(cells.count & 0xFF)
        let pointers = type == 0x05 ? 112 : 108
        if type == 0x05 { page.replaceSubrange(108..<112, with: bigEndian(rightChild)) }
        var content = 4096
        for (i, cell) in cells.enumerated() {
            content -= cell.count
            page.replaceSubrange(content..<(content + cell.count), with: cell)
            page[pointers + 2 * i] = UInt8(content >> 8)
            page[pointers + 2 * i + 1] = UInt8(content & 0xFF)
        }
        return page
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }

    /// A leaf cell of a schema row: `type`, `name`, `name`, `root`, `"x"` (names under 50 bytes).
    static func schemaRow(_ type: String, _ name: String, root: UInt8, rowid: UInt8) -> [UInt8] {
        let texts = [Array(type.utf8), Array(name.utf8), Array(name.utf8)]
        let header: [UInt8] = [6] + texts.map { UInt8(13 + 2 * $0.count) } + [1, 15]
        let payload = header + texts.joined() + [root, UInt8(ascii: "x")]
        return [UInt8(payload.count), rowid] + payload
    }

    @Test func findsTheTableNotATriggerOfTheSameName() {
        let page = Self.firstPage(type: 0x0D, cells: [Self.schemaRow("trigger", "log", root: 0, rowid: 1), Self.schemaRow("table", "other", root: 2, rowid: 2),
                                                      Self.schemaRow("table", "log", root: 7, rowid: 3)])
        #expect(SchemaRoot.rootPage(ofTable: "log", page: { $0 == 1 ? page : nil }) == 7)
        #expect(SchemaRoot.rootPage(ofTable: "missing", page: { $0 == 1 ? page : nil }) == nil)
    }

    /// A record whose first serial type is a nine-byte varint (2^64 - 1): the size it gives
    /// overflowed the offset and trapped.
    @Test func aHugeSerialTypeIsNotRead() {
        let record: [UInt8] = [0x0D] + [UInt8](repeating: 0xFF, count: 9) + [1, 1, 1]
        let page = Self.firstPage(type: 0x0D, cells: [[UInt8(record.count), 1] + record])
        #expect(SchemaRoot.rootPage(ofTable: "log", page: { $0 == 1 ? page : nil }) == nil)
    }

    /// An interior page whose children are itself: the walk ends.
    @Test func aTreeThatPointsBackEnds() {
        let cells = (0..<500).map { _ in Self.bigEndian(1) + [0x01] }
        let page = Self.firstPage(type: 0x05, cells: cells, rightChild: 1)
        #expect(SchemaRoot.rootPage(ofTable: "log", page: { $0 == 1 ? page : nil }) == nil)
    }

    @Test func garbagePagesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var page = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &generator) }
            page[100] = [0x05, 0x0D][Int.random(in: 0...1)]
            page[20] = 0
            _ = SchemaRoot.rootPage(ofTable: "log", page: { $0 % 3 == 0 ? nil : page })
        }
    }
}
