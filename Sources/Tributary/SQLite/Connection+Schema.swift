extension Connection {
    /// Whether the main database has an ordinary table named `name`.
    package func hasTable(_ name: String) throws -> Bool {
        try scalar("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.string(name)])?.integerValue ?? 0 > 0
    }
}
