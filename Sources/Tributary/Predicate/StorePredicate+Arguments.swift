import Foundation

extension StorePredicate {
    /// Parses a format string whose arguments are plain Swift values: `String`, `Int`,
    /// `Int16`, `Int32`, `Int64`, `Double`, `Float`, `Bool`, `Date`, `UUID`, `Data`,
    /// ``ObjectID``, arrays and optionals of them (as `NSPredicate(format:)` takes them).
    ///
    /// ```swift
    /// let name = "swift", cutoff = Date()
    /// let p = try StorePredicate(format: "name == %@ AND createdAt > %@", name, cutoff)
    /// let q = try StorePredicate(format: "self IN %@", quakeIDs)          // [ObjectID]
    /// let r = try StorePredicate(format: "magnitude >= %@", 4.5)
    /// ```
    public init(format: String, _ arguments: any AttributeValueConvertible...) throws {
        try self.init(format: format, argumentArray: arguments.map(\.attributeValue))
    }
}
