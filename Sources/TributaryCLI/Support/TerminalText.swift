/// Text from the store (consumer names, authors, context names) made safe to print:
/// control characters and line breaks are shown escaped, so a name cannot move the
/// cursor, clear the screen or forge a line of output.
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

    /// `\` is kept as it is; C0 and C1 controls, DEL, and line or paragraph separators are escaped.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}
