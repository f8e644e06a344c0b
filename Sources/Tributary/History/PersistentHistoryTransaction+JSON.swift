extension PersistentHistoryTransaction {
    /// The NDJSON record of the transaction, as `tributary history --json` prints it:
    /// `token`, `timestamp`, `author`, `contextName`, `processID`, `processName`, `changes`.
    ///
    /// ```swift
    /// print(transaction.jsonLine)
    /// ```
    public var jsonLine: String {
        var json = JSONWriter()
        json.object { o in
            o.field("token", token.description)
            o.field("timestamp", .date(timestamp))
            o.field("author", author.map { .string($0) } ?? .null)
            o.field("contextName", contextName.map { .string($0) } ?? .null)
            o.field("processID", .integer(Int64(processID)))
            o.field("processName", processName)
            o.field("storeID", storeID.uuidString.lowercased())
            o.field("changeCount", .integer(Int64(changeCount)))
            o.key("changes")
            o.array { a in
                for change in changes { change.writeJSON(to: &a, includeTransaction: false) }
            }
        }
        return json.text
    }
}

extension PersistentHistoryChange {
    /// Writes the change as a JSON object: `entity`, `objectID`, `type`, then `after`
    /// (insert), `updatedProperties` with `before` and `after` (update) or `before` (delete).
    public func writeJSON(to json: inout JSONWriter, includeTransaction: Bool) {
        json.object { o in
            if includeTransaction {
                o.field("token", token.description)
                o.field("index", .integer(Int64(index)))
            }
            o.field("entity", entityName)
            o.field("objectID", .objectID(changedObjectID))
            o.field("type", changeType.rawValue)
            switch changeType {
            case .insert:
                o.key("after")
                o.object { values in
                    for property in properties where !property.isMembershipChange { values.field(property.name, property.after ?? .null) }
                }
                let memberships = properties.filter(\.isMembershipChange)
                if !memberships.isEmpty {
                    o.key("relationships")
                    o.object { r in for property in memberships { Self.writeMembership(property, to: &r) } }
                }
            case .update:
                o.key("updatedProperties")
                o.object { values in
                    for property in properties {
                        if property.isMembershipChange {
                            Self.writeMembership(property, to: &values)
                        } else {
                            values.key(property.name)
                            values.object { v in
                                if property.isValueExcluded {
                                    v.field("excluded", .bool(true))
                                } else {
                                    v.field("before", property.before ?? .null)
                                    v.field("after", property.after ?? .null)
                                }
                            }
                        }
                    }
                }
            case .delete:
                o.key("before")
                o.object { values in
                    for property in properties where !property.isMembershipChange && !property.isValueExcluded { values.field(property.name, property.before ?? .null) }
                }
            }
            let excluded = properties.filter(\.isValueExcluded).map(\.name)
            if !excluded.isEmpty, changeType != .update {
                o.key("excluded")
                o.value(.array(excluded.map { .string($0) }))
            }
        }
    }

    private static func writeMembership(_ property: PropertyChange, to json: inout JSONWriter) {
        json.key(property.name)
        json.object { m in
            m.field("added", .array(property.added.map { .objectID($0) }))
            m.field("removed", .array(property.removed.map { .objectID($0) }))
        }
    }
}
