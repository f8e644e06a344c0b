/// A piece of SQL with the values bound to its `?` placeholders, in order.
struct SQLFragment: Sendable {
    var sql: String
    var arguments: [AttributeValue]

    init(_ sql: String, _ arguments: [AttributeValue] = []) {
        self.sql = sql
        self.arguments = arguments
    }
}
