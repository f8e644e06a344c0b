/// The root page of a table as of one commit, read from page images of the schema table
/// (`sqlite_master`, a table b-tree rooted at page 1): every leaf cell's record names an
/// object and its root page. The fold uses it for a commit made under a schema this process
/// never saw (another program changed the schema twice between two folds), where the
/// capture log's root page may have been elsewhere than it is now.
enum SchemaRoot {
    /// The root page of table `name`, reading pages with `page`; nil when it is not there or
    /// a page is missing or not a table b-tree page (its cell not read whole on its page
    /// counts as not there).
    static func rootPage(ofTable name: String, page: (UInt32) -> [UInt8]?) -> UInt32? {
        let target = Array(name.utf8)
        guard let first = page(1), first.count > 100 else { return nil }
        let usable = first.count - Int(first[20])   // bytes reserved at the end of each page
        guard usable >= 480 else { return nil }   // SQLite's least
        var pending: [UInt32] = [1]
        var visited: Set<UInt32> = []
        while let number = pending.popLast() {
            guard visited.insert(number).inserted else { continue }   // a damaged tree that points back
            guard visited.count <= 10_000, pending.count <= 100_000, let bytes = number == 1 ? first : page(number), bytes.count >= usable else { return nil }
            let header = number == 1 ? 100 : 0
            guard bytes.count >= header + 12 else { return nil }
            let cells = bytes.bigEndian16(header + 3)
            switch bytes[header] {
            case 0x05:
                guard bytes.count >= header + 12 + 2 * cells else { return nil }
                pending.append(bytes.bigEndian32(header + 8))
                for cell in 0..<cells {
                    let at = bytes.bigEndian16(header + 12 + 2 * cell)
                    guard at + 4 <= bytes.count else { return nil }
                    pending.append(bytes.bigEndian32(at))
                }
            case 0x0D:
                guard bytes.count >= header + 8 + 2 * cells else { return nil }
                for cell in 0..<cells {
                    if let (cellName, root) = entry(bytes, at: bytes.bigEndian16(header + 8 + 2 * cell), usable: usable), cellName.elementsEqual(target) { return root }
                }
            default:
                return nil
            }
        }
        return nil
    }

    /// The name (column 1) and root page (column 3) of the table (column 0 `table`) whose
    /// schema row's cell starts at `offset`; nil when it is another object (an index, a
    /// trigger of the same name) or its record does not have them on this page.
    private static func entry(_ bytes: [UInt8], at offset: Int, usable: Int) -> (name: ArraySlice<UInt8>, root: UInt32)? {
        var offset = offset
        guard let payload = LogMaximum.varint(bytes, &offset), LogMaximum.varint(bytes, &offset) != nil else { return nil }
        let recordStart = offset
        let end = min(usable, recordStart + localSize(Int(clamping: min(payload, UInt64(Int32.max))), usable: usable))
        guard let headerSize = LogMaximum.varint(bytes, &offset), headerSize < 1_000 else { return nil }
        let headerEnd = recordStart + Int(headerSize)
        var types: [UInt64] = []
        while offset < headerEnd, types.count < 4, let type = LogMaximum.varint(bytes, &offset) { types.append(type) }
        guard types.count == 4 else { return nil }
        var value = headerEnd
        var fields: [ArraySlice<UInt8>] = []
        for type in types {
            let size = contentSize(type)
            guard size <= end - value else { return nil }
            fields.append(bytes[value..<(value + size)])
            value += size
        }
        guard types[1] >= 13, types[1] % 2 == 1, fields[0].elementsEqual("table".utf8),
              let root = integer(fields[3], type: types[3]), root > 0, root <= UInt32.max else { return nil }
        return (fields[1], UInt32(root))
    }

    /// The part of a table leaf cell's payload of `payload` bytes kept on its page (the rest
    /// is on overflow pages), as SQLite's file format gives it for `usable` bytes a page.
    private static func localSize(_ payload: Int, usable: Int) -> Int {
        let maxLocal = usable - 35
        guard payload > maxLocal else { return payload }
        let minLocal = (usable - 12) * 32 / 255 - 23
        let kept = minLocal + (payload - minLocal) % (usable - 4)
        return kept <= maxLocal ? kept : minLocal
    }

    /// The bytes a value of serial type `type` takes in a record.
    private static func contentSize(_ type: UInt64) -> Int {
        switch type {
        case 0, 8, 9, 10, 11: 0
        case 1, 2, 3, 4: Int(type)
        case 5: 6
        case 6, 7: 8
        default: Int(min((type - 12) / 2, UInt64(Int32.max)))
        }
    }

    /// The integer of serial type 1 to 6, 8 or 9; nil for another type.
    private static func integer(_ bytes: ArraySlice<UInt8>, type: UInt64) -> Int64? {
        switch type {
        case 8: return 0
        case 9: return 1
        case 1...6:
            var value: Int64 = bytes.first.map { Int64(Int8(bitPattern: $0)) } ?? 0
            for byte in bytes.dropFirst() { value = value << 8 | Int64(byte) }
            return value
        default: return nil
        }
    }
}
