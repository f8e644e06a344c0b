import Foundation

/// A parsed predicate: a typed tree built once from an NSPredicate-style
/// format string and compiled to SQL with bound parameters.
///
/// ```swift
/// let p = try StorePredicate(format: "title BEGINSWITH[c] %@ AND createdAt > %@",
///                       "swift", .date(cutoff))
/// let q = try StorePredicate(format: "ANY tags.name == 'swift'")
/// ```
///
/// A key path's part that is not a plain word (a name another program gave an adopted
/// table: `unit price`, `select`) goes in backticks, and prints back so; `#` before a
/// one-part key path spelled like a keyword does the same (`#in == 1`), and `%K` takes a
/// key path as an argument:
///
/// ```swift
/// let r = try StorePredicate(format: "`unit price` > 2 AND %K != nil", "_note")
/// ```
public indirect enum StorePredicate: Sendable, Equatable {
    /// `TRUEPREDICATE` or `FALSEPREDICATE`.
    case constant(Bool)
    /// `NOT p`, `!p`.
    case not(StorePredicate)
    /// `a AND b AND …`, `&&`.
    case and([StorePredicate])
    /// `a OR b OR …`, `||`.
    case or([StorePredicate])
    /// A comparison such as `title == "x"`.
    case comparison(Comparison)
}

/// One comparison of a predicate: `left op right`, with an optional
/// `ANY`/`ALL`/`NONE` modifier and `[c]`/`[d]` options.
public struct Comparison: Sendable, Equatable {
    /// The left expression, usually a key path.
    public var left: StorePredicateExpression
    /// The operator.
    public var op: ComparisonOperator
    /// The right expression, usually a constant.
    public var right: StorePredicateExpression
    /// `ANY`, `ALL` or `NONE` before a to-many key path; `.direct` otherwise.
    public var modifier: ComparisonModifier
    /// `[c]` case-insensitive, `[d]` diacritic-insensitive.
    public var options: ComparisonOptions

    /// A comparison from its parts.
    public init(left: StorePredicateExpression, op: ComparisonOperator, right: StorePredicateExpression,
                modifier: ComparisonModifier = .direct, options: ComparisonOptions = []) {
        self.left = left
        self.op = op
        self.right = right
        self.modifier = modifier
        self.options = options
    }
}

/// An operand of a comparison.
public indirect enum StorePredicateExpression: Sendable, Equatable {
    /// A key path such as `title` or `author.name`, split at the dots.
    case keyPath([String])
    /// A literal or an argument: a string, number, bool, nil, date, UUID…
    case constant(AttributeValue)
    /// `{a, b, c}`: a list of expressions, the right side of `IN` or `BETWEEN`.
    case aggregate([StorePredicateExpression])
    /// `SUBQUERY(collection, $x, predicate).@count`: how many members of a to-many
    /// relationship match a predicate (see ``Subquery``).
    case subqueryCount(Subquery)
}

/// `SUBQUERY(collection, $x, predicate)`: the members of the to-many relationship
/// `collection` for which `predicate` holds, `$x` standing for each member. Key paths in
/// the predicate start with the variable (`$x.name`), or with a variable of an enclosing
/// subquery; a key path without one reads the member too, as `NSPredicate` evaluates it.
/// Compared through its `@count`, as Core Data's SQL store allows:
///
/// ```swift
/// // Posts with at least two tags whose names start with "s".
/// let p = try StorePredicate(format: "SUBQUERY(tags, $t, $t.name BEGINSWITH 's').@count >= 2")
/// // Nested: tags used by a post that has a PNG attachment.
/// let q = try StorePredicate(format: """
///     SUBQUERY(posts, $p, SUBQUERY($p.attachments, $a, $a.mimeType == 'image/png').@count > 0).@count > 0
///     """)
/// ```
public struct Subquery: Sendable, Equatable {
    /// The to-many relationship iterated (`tags`, or `$p.tags` inside another subquery).
    public var collection: [String]
    /// The variable's name, without its `$`.
    public var variable: String
    /// The condition each member must meet.
    public var predicate: StorePredicate

    /// A subquery from its parts.
    public init(collection: [String], variable: String, predicate: StorePredicate) {
        self.collection = collection
        self.variable = variable
        self.predicate = predicate
    }
}

/// The operator of a ``Comparison``.
public enum ComparisonOperator: String, Sendable, Equatable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    case contains = "CONTAINS"
    case like = "LIKE"
    /// An ICU regular expression that the whole text matches, as `NSPredicate`'s; bounded: patterns
    /// of at most 512 characters, and a text over 1,000,000 UTF-16 units is an error.
    case matches = "MATCHES"
    case `in` = "IN"
    case between = "BETWEEN"
}

/// `ANY`, `ALL`, `NONE` or none of them.
public enum ComparisonModifier: String, Sendable, Equatable {
    case direct
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// The `[c]`, `[d]` and `[cd]` options of a string comparison.
public struct ComparisonOptions: OptionSet, Sendable, Equatable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// `[c]`
    public static let caseInsensitive = ComparisonOptions(rawValue: 1)
    /// `[d]`
    public static let diacriticInsensitive = ComparisonOptions(rawValue: 2)
}
