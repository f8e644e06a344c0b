/// The largest rowid of a table b-tree as of one commit, read from page images: from
/// the root, follow each interior page's right-most child down to the right-most leaf,
/// whose last cell holds the largest key. Applied to the capture log at each commit
/// frame of the write-ahead log, it tells where that transaction's log rows end,
/// without the triggers writing anything more.
enum LogMaximum {
    /// The largest rowid under `root` (0 for an empty table), reading pages with `page`;
    /// nil when a page is missing or is not a table b-tree page (a damaged or moved tree).
    static func largestRowID(root: UInt32, page: (UInt32) -> [UInt8]?) -> Int64? {
        var number = root
        for _ in 0..<40 {
            guard let bytes = page(number) else { return nil }
            let header = number == 1 ? 100 : 0
            guard bytes.count >= header + 12 else { return nil }
            switch bytes[header] {
            case 0x05:
                number = bytes.bigEndian32(header + 8)
            case 0x0D:
                let cells = bytes.bigEndian16(header + 3)
                guard cells > 0 else { return 0 }
                let pointerAt = header + 8 + 2 * (cells - 1)
                guard pointerAt + 2 <= bytes.count else { return nil }
                var offset = bytes.bigEndian16(pointerAt)
                guard varint(bytes, &offset) != nil, let rowID = varint(bytes, &offset) else { return nil }
                return Int64(bitPattern: rowID)
            default:
                return nil
            }
        }
        return nil
    }

    /// SQLite's variable-length integer: up to eight bytes of seven bits, big-endian, then
    /// one byte of eight.
    static func varint(_ bytes: [UInt8], _ offset: inout Int) -> UInt64? {
        var value: UInt64 = 0
        for i in 0..<9 {
            guard offset < bytes.count else { return nil }
            let byte = bytes[offset]
            offset += 1
            if i == 8 { return value << 8 | UInt64(byte) }
            value = value << 7 | UInt64(byte & 0x7F)
            if byte & 0x80 == 0 { return value }
        }
        return value
    }
}
