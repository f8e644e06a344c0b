import Foundation

/// The history payload decoder's entry point for the libFuzzer harness in `Fuzz/`
/// (Fuzz/Sources/fuzz-history-payload). The decoder is internal and `package` access does
/// not cross into the separate Fuzz package, so this narrow SPI exposes it there; it is not
/// part of the product API (`@_spi(Fuzzing) import Tributary` to see it).
@_spi(Fuzzing) public enum HistoryPayloadFuzzing {
    /// Decodes `stored` (a payload as a store's history row holds it) along every path the
    /// readers take: whole (`fetchHistory`), filtered (skipping properties), through the
    /// cursor's lazy views (`enumerateHistoryChanges`) and as the recorder's coalescing reads
    /// changes back. Returns the number of changes; throws what the readers would throw.
    public static func decode(_ stored: [UInt8]) throws -> Int {
        let storeID = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        let token = PersistentHistoryToken(value: 1, storeID: storeID)
        return try stored.withUnsafeBytes { raw in
            let changes = try HistoryPayload.decode(raw, token: token, storeID: storeID)
            _ = try HistoryPayload.decode(raw, token: token, storeID: storeID) { entity, _ in entity.count % 2 == 0 }
            try views(raw, token: token, storeID: storeID)
            let (_, names, start) = try HistoryPayload.open(raw)
            var reader = start
            if !stored.isEmpty {
                for _ in 0..<(try reader.count()) { _ = try HistoryPayload.decodeChange(&reader, names: names) }
            }
            return changes.count
        }
    }

    /// The cursor's path: headers, skipped properties, then each view's properties and a copy.
    private static func views(_ raw: UnsafeRawBufferPointer, token: PersistentHistoryToken, storeID: UUID) throws {
        let (bytes, names, start) = try HistoryPayload.open(raw)
        guard !bytes.isEmpty else { return }
        var reader = start
        for index in 0..<(try reader.count()) {
            let header = try HistoryPayload.changeHeader(&reader, names: names)
            let offset = reader.offset
            try HistoryPayload.skipProperties(&reader, count: header.propertyCount)
            let view = HistoryChangeView(payload: bytes, names: names, propertiesOffset: offset, propertyCount: header.propertyCount, storeID: storeID,
                                         token: token, timestamp: Date(timeIntervalSince1970: 0), author: nil, contextName: nil, reason: nil,
                                         index: index, changeType: header.type, entityName: header.entity, primaryKey: header.key, movedKey: header.movedKey, key: header.keyValues)
            try view.forEachProperty { _, _, _ in }
            try view.forEachStoredProperty { _ in }
            _ = try view.copy()
        }
    }
}
