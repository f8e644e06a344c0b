import Foundation

/// Which entity each item of a schema change is about, read by the item's exact form (its
/// verb, then the entity's name), so that names holding spaces (an adopted table `Order
/// Details`) are never mistaken for one another (`Details`).
extension SchemaChange {
    /// The entity the change item `text` is about, among `names` (the entities of the model
    /// after the change, or before for a removal): for `added Order Details.notes`,
    /// `changed the key of Order Details to id` or `renamed entity Orders to Order Details`,
    /// `Order Details`; nil when it names none of them.
    ///
    /// ```swift
    /// SchemaChange.entity(of: "added Order Details.notes", among: ["Details", "Order Details"])   // "Order Details"
    /// ```
    package static func entity(of text: String, among names: [String]) -> String? {
        guard let (subject, exact) = subject(of: text) else { return nil }
        if exact { return names.contains(subject) ? subject : nil }
        return names.filter { name in
            subject == name || [".", "(", " "].contains { subject.hasPrefix(name + $0) }
        }.max { $0.count < $1.count }
    }

    /// The entities of the model after the change that its items are about (one added whole
    /// among them).
    ///
    /// ```swift
    /// let altered = change.namedEntities   // ["Post"] for ["added Post.views"]
    /// ```
    package var namedEntities: Set<String> {
        let names = model.entities.map(\.name)
        return Set(changes.compactMap { Self.entity(of: $0, among: names) })
    }

    /// The text after an item's verb, starting with the entity's name, and whether it is
    /// that name alone (a whole entity added, removed or renamed).
    private static func subject(of text: String) -> (String, exact: Bool)? {
        if text.hasPrefix("renamed ") {
            guard let to = text.range(of: " to ", options: .backwards) else { return nil }
            return (String(text[to.upperBound...]), text.hasPrefix("renamed entity "))
        }
        guard let verb = verbs.first(where: { text.hasPrefix($0) }) else { return nil }
        return (String(text.dropFirst(verb.count)), verb.hasSuffix("entity "))
    }

    /// The verbs of change items, longest first (so `added entity ` before `added `).
    private static let verbs = [
        "changed the unique constraints of ", "changed the declared key of ", "removed the declared key of ", "changed the delete rule of ",
        "changed the default of ", "changed the key of ", "removed entity ", "removed unique ", "removed index ", "added entity ",
        "added unique ", "added index ", "recomputed ", "removed ", "changed ", "added ", "made ",
    ]
}
