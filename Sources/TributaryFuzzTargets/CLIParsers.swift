import Foundation

/// The CLI's own parsers, compiled here from the CLI's sources (DurationText.swift is a
/// symbolic link to Sources/TributaryCLI/Support/DurationText.swift: an executable target's
/// code cannot be imported by a library).
enum CLIParsers {
    /// `DurationText.seconds(parsing:option:)`, as `--max-age` and `--segment-age` use it.
    static func duration(_ text: String) throws -> TimeInterval {
        try DurationText.seconds(parsing: text, option: "--max-age")
    }
}
