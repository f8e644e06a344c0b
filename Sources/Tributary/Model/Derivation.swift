/// How a derived attribute's value follows from other values of the store
/// (Core Data's `derivationExpression`), parsed from its text form:
///
/// | text | meaning |
/// |---|---|
/// | `title` | a copy of another attribute of the same object |
/// | `author.name` | a copy through a to-one relationship |
/// | `lowercase:(title)` or `lowercase(title)` | the source lowercased (full Unicode) |
/// | `canonical:(title)` or `canonical(title)` | the source case- and diacritic-folded, in NFC (for search) |
/// | `posts.@count` | how many objects a to-many relationship holds |
/// | `posts.@sum.words`, `@min`, `@max` | an aggregate of an attribute over a to-many relationship |
/// | `now()` | the time of the last insert or update of the object's stored values |
///
/// ```swift
/// let derivation = try Derivation(parsing: "posts.@count")
/// print(derivation)   // posts.@count
/// ```
public enum Derivation: Sendable, Hashable, Codable, CustomStringConvertible {
    /// A string transform applied to a copied value.
    public enum Transform: String, Sendable, Hashable, CaseIterable {
        /// Unicode lowercase (Swift's `lowercased()`).
        case lowercase
        /// Lowercase without diacritics, in Unicode canonical composition (NFC).
        case canonical
    }

    /// An aggregate over a to-many relationship.
    public enum Aggregate: String, Sendable, Hashable, CaseIterable {
        /// The number of related objects (0 when none).
        case count
        /// The sum of an attribute (0 when none).
        case sum
        /// The least value of an attribute (nil when none).
        case min
        /// The greatest value of an attribute (nil when none).
        case max
    }

    /// A copy of the value at `path`: one attribute name, or a to-one relationship and an attribute of its destination.
    case copy(path: [String])
    /// A transform of the string at `path`.
    case transform(Transform, path: [String])
    /// An aggregate over the to-many `relationship`, of `attribute` (nil for `@count`).
    case aggregate(Aggregate, relationship: String, attribute: String?)
    /// The current time, set on insert and on every update of the object's stored values.
    case now

    /// Parses the text form; a malformed expression throws ``TributaryError/Code/invalidModel``.
    public init(parsing text: String) throws {
        let source = text.trimmingCharacters(in: .whitespaces)
        func fail(_ message: String) -> TributaryError {
            TributaryError(.invalidModel, "derivation '\(text)': \(message)",
                           hint: "write attribute, relationship.attribute, lowercase:(path), canonical:(path), relationship.@count, relationship.@sum.attribute (@min, @max) or now()")
        }
        func names(_ pathText: Substring) throws -> [String] {
            let parts = pathText.split(separator: ".", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard !parts.isEmpty, parts.allSatisfy(ManagedObjectModel.isValidName) else { throw fail("'\(pathText)' is not a key path") }
            return parts
        }
        if source.replacingOccurrences(of: " ", with: "") == "now()" {
            self = .now
            return
        }
        if let open = source.firstIndex(of: "("), source.hasSuffix(")") {
            var name = source[..<open].trimmingCharacters(in: .whitespaces)
            if name.hasSuffix(":") { name.removeLast() }
            guard let transform = Transform(rawValue: name) else { throw fail("unknown function '\(name)'") }
            let inner = source[source.index(after: open)..<source.index(before: source.endIndex)]
            self = .transform(transform, path: try names(inner))
            return
        }
        if let at = source.range(of: ".@") {
            let relationship = try names(source[..<at.lowerBound])
            guard relationship.count == 1 else { throw fail("an aggregate applies to one to-many relationship of the entity") }
            let rest = source[at.upperBound...].split(separator: ".", maxSplits: 1)
            guard let opText = rest.first, let aggregate = Aggregate(rawValue: String(opText)) else {
                throw fail("unknown aggregate '@\(rest.first ?? "")'; use @count, @sum, @min or @max")
            }
            let attribute = rest.count > 1 ? try names(rest[1]) : nil
            if let attribute, attribute.count != 1 { throw fail("an aggregate reads one attribute of the related objects") }
            if aggregate == .count && attribute != nil { throw fail("@count takes no attribute") }
            if aggregate != .count && attribute == nil { throw fail("@\(aggregate.rawValue) needs an attribute, as in \(relationship[0]).@\(aggregate.rawValue).attribute") }
            self = .aggregate(aggregate, relationship: relationship[0], attribute: attribute?[0])
            return
        }
        self = .copy(path: try names(source[...]))
    }

    /// The canonical text form, which ``init(parsing:)`` reads back.
    public var description: String {
        switch self {
        case .copy(let path): return path.joined(separator: ".")
        case .transform(let transform, let path): return "\(transform.rawValue):(\(path.joined(separator: ".")))"
        case .aggregate(let aggregate, let relationship, let attribute):
            return "\(relationship).@\(aggregate.rawValue)" + (attribute.map { ".\($0)" } ?? "")
        case .now: return "now()"
        }
    }

    public init(from decoder: Decoder) throws {
        self = try Derivation(parsing: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
