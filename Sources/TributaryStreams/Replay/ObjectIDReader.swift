import Foundation
import Tributary

/// Reads object ID URIs during replay, remembering the store and entity of each URI prefix
/// (`tributary://STORE/Entity/p`), so a record's IDs cost a lookup and an integer parse
/// instead of a UUID parse each.
///
/// ```swift
/// let reader = ObjectIDReader()
/// let id = reader.read("tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1")
/// ```
final class ObjectIDReader {
    private var prefixes: [Substring: (storeID: UUID, entity: String)] = [:]
    private var lastPrefix: [UInt8] = []
    private var last: (storeID: UUID, entity: String)?

    /// The object ID of the URI in `bytes` (UTF-8), nil when it is not one: as ``read(_:)``,
    /// without making a string when the prefix is the previous one's.
    func read(_ bytes: ArraySlice<UInt8>) -> ObjectID? {
        if let slash = bytes.lastIndex(of: 0x2F), let last, bytes.endIndex - slash > 2, bytes.endIndex - slash <= 20, bytes[slash + 1] == 0x70,
           sameBytes(bytes[..<slash], lastPrefix) {
            var key: Int64 = 0
            var digits = true
            for c in bytes[(slash + 2)...] {
                guard c >= 0x30, c <= 0x39 else { digits = false; break }
                key = key * 10 + Int64(c - 0x30)
            }
            if digits { return ObjectID(storeID: last.storeID, entityName: last.entity, primaryKey: key) }
        }
        let uri = String(decoding: bytes, as: UTF8.self)
        guard let id = read(uri) else { return nil }
        if let slash = bytes.lastIndex(of: 0x2F) {
            lastPrefix = Array(bytes[..<slash])
            last = (id.storeID, id.entityName)
        }
        return id
    }

    /// The object ID of `uri`, nil when it is not one.
    func read(_ uri: String) -> ObjectID? {
        guard let slash = uri.utf8.lastIndex(of: 0x2F) else { return nil }
        let keyStart = uri.utf8.index(after: slash)
        guard keyStart < uri.utf8.endIndex, uri.utf8[keyStart] == 0x70, let key = Int64(uri[uri.utf8.index(after: keyStart)...]) else { return nil }
        let prefix = uri[..<slash]
        if let known = prefixes[prefix] { return ObjectID(storeID: known.storeID, entityName: known.entity, primaryKey: key) }
        guard let id = ObjectID(uriRepresentation: uri) else { return nil }
        if prefixes.count < 1_000 { prefixes[prefix] = (id.storeID, id.entityName) }
        return id
    }
}
