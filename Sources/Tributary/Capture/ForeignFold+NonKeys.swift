import Foundation

extension ForeignFold {
    /// A value another program wrote into a to-one relationship's column that is no key of
    /// the destination (SQLite lets an INTEGER column hold text, `''` or `'x'`): history
    /// records the to-one as nil, since an object ID cannot carry it, and a `capture gap`
    /// transaction right after the change says what the row holds instead.
    struct NonKey {
        let entity: String
        let primaryKey: Int64
        let column: String
        let value: AttributeValue
        let destination: String

        /// The object ID a to-one's column value names: an integer is the destination's key;
        /// anything else is no key, and nil (NULL too).
        static func object(_ value: AttributeValue, in relationship: RelationshipDescription) -> AttributeValue {
            guard case .integer(let key) = value else { return .null }
            return .objectID(ObjectID(storeID: HistoryRecorder.placeholderStore, entityName: relationship.destinationEntity, primaryKey: key))
        }

        /// `notes/p3 owner_id = 'x'`.
        var text: String { "\(entity)/p\(primaryKey) \(column) = \(Self.literal(value))" }

        /// The value as SQL writes it, cut at 40 characters.
        static func literal(_ value: AttributeValue) -> String {
            let text: String
            switch value {
            case .string(let string): text = "'" + string.replacingOccurrences(of: "'", with: "''") + "'"
            case .data(let data): text = "X'" + Hex.string(data) + "'"
            case .double(let double): text = "\(double)"
            default: text = "\(value)"
            }
            return text.count > 40 ? String(text.prefix(39)) + "…" : text
        }

        /// Records, after the transaction whose changes hold them, a `capture gap` saying
        /// which rows' to-ones history records as nil and what their columns hold instead.
        static func recordGap(_ nonKeys: [NonKey], on db: Connection) throws {
            let listed = nonKeys.prefix(10).map(\.text).joined(separator: "; ") + (nonKeys.count > 10 ? "; and \(nonKeys.count - 10) more" : "")
            let destinations = Array(Set(nonKeys.map(\.destination))).sorted().joined(separator: ", ")
            let line = "another program wrote values that are not keys of \(destinations) into relationship columns, "
                + "recorded as nil (a replica holds NULL there): \(listed)"
            var entities: [String] = []
            for nonKey in nonKeys where !entities.contains(nonKey.entity) { entities.append(nonKey.entity) }
            try CaptureCheck.recordGap(entities, line, on: db)
        }
    }
}
