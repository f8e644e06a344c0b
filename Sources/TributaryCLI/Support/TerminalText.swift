/// Text from the store (consumer names, authors, context names, values) made safe to print:
/// control characters, line breaks and bidirectional controls are shown escaped, so a name
/// cannot move the cursor, clear the screen, forge a line of output or reorder what a line
/// shows (a right-to-left override can make an audit line read other than it is).
enum TerminalText {
    /// `text` with every control character written as `\n`, `\r`, `\t`, `\e` or `\u{…}`.
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{1B}": out += "\\e"
            case _ where isControl(scalar): out += "\\u{\(String(scalar.value, radix: 16))}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// `\` is kept as it is; C0 and C1 controls, DEL, line or paragraph separators, and the
    /// bidirectional marks, embeddings, overrides and isolates are escaped.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x2028, 0x2029: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
