/// Counts with their noun in the right number: "1 Post row", "3 Post rows", "1 segment".
enum Plural {
    /// `count` and `noun`, with an s unless `count` is 1 (or `plural` when given).
    static func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
        "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
    }
}
