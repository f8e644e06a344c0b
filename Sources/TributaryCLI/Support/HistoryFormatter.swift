import Tributary

/// Prints history transactions for people: a header line per transaction and a line per change,
/// updates with their before and after values side by side.
enum HistoryFormatter {
    /// The transaction's header and its changes; with `maxChanges`, only that many changes
    /// and a line saying how many more there are. With `colour`, an update's values before
    /// show red and after green (ANSI), so changed values stand out.
    static func lines(_ transaction: PersistentHistoryTransaction, maxChanges: Int? = nil, colour: Bool = false) -> [String] {
        let (old, new) = colour ? (Self.painted(31), Self.painted(32)) : ({ $0 }, { $0 })
        var header = "\(transaction.token)  \(ISO8601.string(from: transaction.timestamp))"
        header += "  author=\(escaped(transaction.author))  context=\(escaped(transaction.contextName))  \(TerminalText.escaped(transaction.processName))[\(transaction.processID)]"
        header += "  \(Plural.counted(transaction.changeCount, "change"))"
        if let reason = transaction.reason, !reason.isEmpty { header += "  reason=\(TerminalText.escaped(reason))" }
        var lines = [header]
        if let schema = transaction.schemaChange {
            lines += schema.changes.map { "  # schema \(TerminalText.escaped($0))" }
            lines.append("  # model \(schema.fromVersion ?? "unknown") → \(schema.toVersion)\(schema.isDetected ? " (made by another program, seen here)" : "")")
        }
        let shown = maxChanges.map { min($0, transaction.changes.count) } ?? transaction.changes.count
        for change in transaction.changes.prefix(shown) {
            let object = "\(change.entityName)/p\(change.changedObjectID.primaryKey)"
            switch change.changeType {
            case .insert:
                let values = change.properties.filter { !$0.isMembershipChange && !$0.isValueExcluded }.map { "\($0.name)=\(show($0.after))" }
                lines.append("  + insert \(object)\(moved("from", change.movedFrom))  \(values.joined(separator: "  "))\(unrecorded(change))")
            case .update:
                lines.append("  ~ update \(object)\(declaredKey(change.key))")
                for property in change.properties {
                    if property.isMembershipChange {
                        let added = property.added.map { "+\($0.entityName)/p\($0.primaryKey)" }
                        let removed = property.removed.map { "-\($0.entityName)/p\($0.primaryKey)" }
                        lines.append("      \(property.name): \((added + removed).joined(separator: " "))")
                    } else if property.isValueExcluded {
                        lines.append("      \(property.name): (changed; value not recorded)")
                    } else {
                        lines.append("      \(property.name): \(old(show(property.before)))  →  \(new(show(property.after)))")
                    }
                }
            case .delete:
                let values = change.properties.filter { !$0.isMembershipChange && !$0.isValueExcluded }.map { "\($0.name)=\(show($0.before))" }
                lines.append("  - delete \(object)\(moved("to", change.movedTo))  \(values.joined(separator: "  "))\(unrecorded(change))")
            }
        }
        if shown < transaction.changes.count {
            lines.append("  … and \(Plural.counted(transaction.changes.count - shown, "more change"))")
        }
        return lines
    }

    /// `  (values not recorded: name, score)`: the properties of an insert or delete whose values
    /// history does not have (another program's write folded after its table's capture
    /// triggers were gone), empty when it has them all.
    private static func unrecorded(_ change: PersistentHistoryChange) -> String {
        let names = change.properties.filter { !$0.isMembershipChange && $0.isValueExcluded }.map(\.name)
        return names.isEmpty ? "" : "  (values not recorded: \(names.joined(separator: ", ")))"
    }

    /// `  [email "ann@example.com"]`: the row's declared key an update names it by (its insert
    /// and delete lines show every value, the key's among them), empty when it has none.
    private static func declaredKey(_ key: [String: AttributeValue]) -> String {
        key.isEmpty ? "" : "  [" + key.sorted { $0.key < $1.key }.map { "\($0.key) \(show($0.value))" }.joined(separator: "  ") + "]"
    }

    /// ` (moved from Entity/p1)`: where a key change took the object (`direction` "from" or
    /// "to"), empty when none did.
    private static func moved(_ direction: String, _ id: ObjectID?) -> String {
        id.map { " (moved \(direction) \($0.entityName)/p\($0.primaryKey))" } ?? ""
    }

    /// One line: token, time, author, context and the changes counted by type, then the key
    /// changes among them (`1042-6f9619ff  2024-05-01T12:00:00Z  importer  import  3 inserts, 1 update`;
    /// `…  1 insert, 1 delete, 1 key change`).
    static func oneline(_ transaction: PersistentHistoryTransaction) -> String {
        var counts: [PersistentHistoryChangeType: Int] = [:]
        for change in transaction.changes { counts[change.changeType, default: 0] += 1 }
        let types: [(PersistentHistoryChangeType, String)] = [(.insert, "insert"), (.update, "update"), (.delete, "delete")]
        var parts = types.compactMap { type, noun in counts[type].map { Plural.counted($0, noun) } }
        let moves = transaction.changes.filter { $0.movedFrom != nil }.count
        if moves > 0 { parts.append(Plural.counted(moves, "key change")) }
        let text = transaction.schemaChange.map { "schema: " + TerminalText.escaped($0.changes.joined(separator: "; ")) } ?? (parts.isEmpty ? "no changes" : parts.joined(separator: ", "))
        let reason = transaction.reason.flatMap { $0.isEmpty ? nil : "  (\(TerminalText.escaped($0)))" } ?? ""
        return "\(transaction.token)  \(ISO8601.string(from: transaction.timestamp))  \(escaped(transaction.author))  \(escaped(transaction.contextName))  \(text)\(reason)"
    }

    /// Text in an ANSI colour (31 red, 32 green).
    private static func painted(_ code: Int) -> (String) -> String {
        { "\u{1B}[\(code)m\($0)\u{1B}[0m" }
    }

    /// A name from history, escaped for the terminal, or `-` when there is none.
    static func escaped(_ name: String?) -> String {
        name.map(TerminalText.escaped) ?? "-"
    }

    static func show(_ value: AttributeValue?) -> String {
        guard let value else { return "-" }
        switch value {
        case .null: return "nil"
        case .string(let s): return "\"\(TerminalText.escaped(s.count > 60 ? String(s.prefix(59)) + "…" : s))\""
        case .objectID(let id): return "\(id.entityName)/p\(id.primaryKey)"
        case .data(let d): return "<\(d.count) bytes>"
        default: return value.description
        }
    }
}
