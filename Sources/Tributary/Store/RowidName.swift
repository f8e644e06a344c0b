/// The names by which SQL reaches a table's rowid, when no column of the table has taken them.
package enum RowidName {
    /// `rowid`, `_rowid_` and `oid`, in the order adoption picks the one naming a table's key.
    package static let all = ["rowid", "_rowid_", "oid"]

    /// Whether `name` is one of them (compared without case, as SQLite compares names): a
    /// key so named is the rowid itself, not a column of the table.
    package static func contains(_ name: String) -> Bool {
        all.contains(name.lowercased())
    }
}
