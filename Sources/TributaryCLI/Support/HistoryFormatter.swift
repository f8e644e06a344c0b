import Tributary

/// Prints history transactions for people: a header line per transaction and a line per change,
/// updates with their before and after values side by side.
enum HistoryFormatter {
    static func lines(_ transaction: PersistentHistoryTransaction) -> [String] {
        var header = "\(transaction.token)  \(ISO8601.string(from: transaction.timestamp))"
        header += "  author=\(transaction.author ?? "-")  context=\(transaction.contextName ?? "-")  \(transaction.processName)[\(transaction.processID)]"
        header += "  \(transaction.changeCount) \(transaction.changeCount == 1 ? "change" : "changes")"
        var lines = [header]
        for change in transaction.changes {
            let object = "\(change.entityName)/p\(change.changedObjectID.primaryKey)"
            switch change.changeType {
            case .insert:
                let values = change.properties.filter { !$0.isMembershipChange && !$0.isValueExcluded }.map { "\($0.name)=\(show($0.after))" }
                lines.append("  + insert \(object)  \(values.joined(separator: "  "))")
            case .update:
                lines.append("  ~ update \(object)")
                for property in change.properties {
                    if property.isMembershipChange {
                        let added = property.added.map { "+\($0.entityName)/p\($0.primaryKey)" }
                        let removed = property.removed.map { "-\($0.entityName)/p\($0.primaryKey)" }
                        lines.append("      \(property.name): \((added + removed).joined(separator: " "))")
                    } else if property.isValueExcluded {
                        lines.append("      \(property.name): (changed; value not recorded)")
                    } else {
                        lines.append("      \(property.name): \(show(property.before))  →  \(show(property.after))")
                    }
                }
            case .delete:
                let values = change.properties.filter { !$0.isMembershipChange && !$0.isValueExcluded }.map { "\($0.name)=\(show($0.before))" }
                lines.append("  - delete \(object)  \(values.joined(separator: "  "))")
            }
        }
        return lines
    }

    static func show(_ value: AttributeValue?) -> String {
        guard let value else { return "-" }
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"\(s.count > 60 ? String(s.prefix(59)) + "…" : s)\""
        case .objectID(let id): return "\(id.entityName)/p\(id.primaryKey)"
        case .data(let d): return "<\(d.count) bytes>"
        default: return value.description
        }
    }
}
