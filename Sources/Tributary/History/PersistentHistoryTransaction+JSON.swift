import Foundation

extension PersistentHistoryTransaction {
    /// The NDJSON record of the transaction, as `tributary history --json` prints it:
    /// `token`, `timestamp`, `author`, `contextName`, `reason`, `processID`, `processName`, `changes`,
    /// and for a schema transaction `schemaChange` (`fromVersion`, `toVersion`, `changes`, `detected`;
    /// `tributary model STORE --at TOKEN` prints the model itself).
    ///
    /// ```swift
    /// print(transaction.jsonLine)
    /// ```
    public var jsonLine: String { jsonLine(blobsMarked: { _ in [] }) }

    /// ``jsonLine``, with a blob in a property `blobsMarked` names for its entity written as
    /// `{"base64":"…"}` (``PersistentHistoryChange/writeValues(_:of:omittingExcludedValues:blobsMarked:to:)``).
    package func jsonLine(blobsMarked: (String) -> Set<String>) -> String {
        var json = JSONWriter()
        json.object { o in
            o.field("token", token.description)
            o.field("timestamp", .date(timestamp))
            o.field("author", author.map { .string($0) } ?? .null)
            o.field("contextName", contextName.map { .string($0) } ?? .null)
            o.field("reason", reason.map { .string($0) } ?? .null)
            o.field("processID", .integer(Int64(processID)))
            o.field("processName", processName)
            o.field("storeID", storeID.uuidString.lowercased())
            o.field("changeCount", .integer(Int64(changeCount)))
            o.key("changes")
            o.array { a in
                for change in changes { change.writeJSON(to: &a, includeTransaction: false, blobsMarked: blobsMarked(change.entityName)) }
            }
            if let schemaChange {
                o.key("schemaChange")
                o.object { s in
                    s.field("fromVersion", schemaChange.fromVersion.map { .string($0) } ?? .null)
                    s.field("toVersion", schemaChange.toVersion)
                    s.field("changes", .array(schemaChange.changes.map { .string($0) }))
                    s.field("detected", .bool(schemaChange.isDetected))
                }
            }
        }
        return json.text
    }
}

extension PersistentHistoryChange {
    /// Writes the change as a JSON object: `entity`, `objectID`, `type`, `movedFrom` (an insert
    /// continuing a moved object, ``movedFrom``) or `movedTo` (a delete of one, ``movedTo``)
    /// when set, `key` (the table's declared key, ``key``) when there is one, then `after`
    /// (insert), `updatedProperties` with `before` and `after` (update) or `before` (delete).
    ///
    /// ```swift
    /// // {"entity":"counters","objectID":"tributary://…/counters/p7","type":"insert","movedFrom":"tributary://…/counters/p1","after":{…}}
    /// ```
    /// A blob in a property `blobsMarked` names is written as `{"base64":"…"}` (``writeValues(_:of:omittingExcludedValues:blobsMarked:to:)``).
    public func writeJSON(to json: inout JSONWriter, includeTransaction: Bool, blobsMarked: Set<String> = []) {
        json.object { o in
            if includeTransaction {
                o.field("token", token.description)
                o.field("index", .integer(Int64(index)))
            }
            o.field("entity", entityName)
            o.field("objectID", .objectID(changedObjectID))
            o.field("type", changeType.rawValue)
            Self.writeMove(movedFrom: movedFrom, movedTo: movedTo, to: &o)
            Self.writeKey(key, blobsMarked: blobsMarked, to: &o)
            Self.writeValues(properties, of: changeType, omittingExcludedValues: false, blobsMarked: blobsMarked, to: &o)
        }
    }

    /// Writes `"movedFrom"` and `"movedTo"` (object ID URIs) into the open object `o` when set,
    /// as `history --json` and the change-stream encodings do.
    ///
    /// ```swift
    /// json.object { o in PersistentHistoryChange.writeMove(movedFrom: change.movedFrom, movedTo: change.movedTo, to: &o) }
    /// ```
    public static func writeMove(movedFrom: ObjectID?, movedTo: ObjectID?, to o: inout JSONWriter) {
        if let movedFrom { o.field("movedFrom", .objectID(movedFrom)) }
        if let movedTo { o.field("movedTo", .objectID(movedTo)) }
    }

    /// Writes `"key"`, the row's declared key (``key``) as an object of its values by attribute
    /// name (in name order), into the open object `o` when it is not empty, as `history --json`
    /// and the change-stream encodings do.
    ///
    /// ```swift
    /// json.object { o in PersistentHistoryChange.writeKey(change.key, to: &o) }   // "key":{"email":"ann@example.com"}
    /// ```
    public static func writeKey(_ key: [String: AttributeValue], blobsMarked: Set<String> = [], to o: inout JSONWriter) {
        guard !key.isEmpty else { return }
        o.key("key")
        o.object { values in
            for (name, value) in key.sorted(by: { $0.key < $1.key }) { writeField(name, value, markingBlob: blobsMarked.contains(name), to: &values) }
        }
    }

    /// Writes a change's values into the open object `o`, as `history --json` and the
    /// change-stream encodings do: `after` and `relationships` (insert), `updatedProperties`
    /// with `before` and `after` (update) or `before` (delete), and the names of properties
    /// whose values history leaves out as `excluded` (except for updates, which mark them
    /// in place). `omittingExcludedValues` leaves those out of `after` instead of writing null.
    ///
    /// A blob in a property `blobsMarked` names (an attribute that is not binary, where another
    /// program stored one: an untyped or `TEXT` column) is written as `{"base64":"…"}`, apart
    /// from text, which replay reads back as a blob; a binary attribute's bytes are a base64 string.
    ///
    /// ```swift
    /// json.object { o in PersistentHistoryChange.writeValues(change.properties, of: .update, omittingExcludedValues: false, to: &o) }
    /// ```
    public static func writeValues(_ properties: [PropertyChange], of changeType: PersistentHistoryChangeType, omittingExcludedValues: Bool,
                                   blobsMarked: Set<String> = [], to o: inout JSONWriter) {
        func field(_ o: inout JSONWriter, _ name: String, _ value: AttributeValue?, of property: PropertyChange) {
            guard case .data? = value, blobsMarked.contains(property.name) else { return o.field(name, value ?? .null) }
            writeField(name, value!, markingBlob: true, to: &o)
        }
        switch changeType {
        case .insert:
            o.key("after")
            o.object { values in
                for property in properties where !property.isMembershipChange && !(omittingExcludedValues && property.isValueExcluded) {
                    field(&values, property.name, property.after, of: property)
                }
            }
            if properties.contains(where: \.isMembershipChange) {
                o.key("relationships")
                o.object { r in for property in properties where property.isMembershipChange { writeMembership(property, to: &r) } }
            }
        case .update:
            o.key("updatedProperties")
            o.object { values in
                for property in properties {
                    if property.isMembershipChange {
                        writeMembership(property, to: &values)
                    } else {
                        values.key(property.name)
                        values.object { v in
                            if property.isValueExcluded {
                                v.field("excluded", .bool(true))
                            } else {
                                field(&v, "before", property.before, of: property)
                                field(&v, "after", property.after, of: property)
                            }
                        }
                    }
                }
            }
        case .delete:
            o.key("before")
            o.object { values in
                for property in properties where !property.isMembershipChange && !property.isValueExcluded { field(&values, property.name, property.before, of: property) }
            }
        }
        if changeType != .update, properties.contains(where: \.isValueExcluded) {
            o.key("excluded")
            o.value(.array(properties.filter(\.isValueExcluded).map { .string($0.name) }))
        }
    }

    /// Writes `"name": value` into the open object `o`; a blob when `markingBlob` (an attribute
    /// that is not binary) as `{"base64":"…"}`, which replay reads back as a blob, where JSON
    /// writes data as a base64 string, as for a binary attribute.
    ///
    /// ```swift
    /// json.object { o in PersistentHistoryChange.writeField("v", .data(Data([1, 2])), markingBlob: true, to: &o) }   // "v":{"base64":"AQI="}
    /// ```
    package static func writeField(_ name: String, _ value: AttributeValue, markingBlob: Bool, to o: inout JSONWriter) {
        guard markingBlob, case .data(let bytes) = value else {
            o.field(name, value)
            return
        }
        o.key(name)
        writeMarkedBlob(bytes, to: &o)
    }

    /// Writes a blob in an attribute that is not binary as the value `{"base64":"…"}`: the one
    /// spelling every JSON form uses for it, and replay reads.
    package static func writeMarkedBlob(_ bytes: Data, to json: inout JSONWriter) {
        json.object { $0.field("base64", .string(bytes.base64EncodedString())) }
    }

    /// Writes a to-many membership change as `"name": {"added": […], "removed": […]}`.
    ///
    /// ```swift
    /// json.object { o in PersistentHistoryChange.writeMembership(property, to: &o) }
    /// ```
    public static func writeMembership(_ property: PropertyChange, to json: inout JSONWriter) {
        json.key(property.name)
        json.object { m in
            m.field("added", .array(property.added.map { .objectID($0) }))
            m.field("removed", .array(property.removed.map { .objectID($0) }))
        }
    }
}
