/// How many terminal columns text takes: East Asian wide and fullwidth characters and
/// emoji take two, combining marks and zero-width characters none, the rest one (as
/// `wcwidth` and terminals count them). Tables align by it, so a column of Chinese or emoji
/// lines up with a column of Latin text.
extension Character {
    var displayWidth: Int {
        let scalars = unicodeScalars
        guard let first = scalars.first else { return 0 }
        if scalars.contains(where: { $0.properties.isEmojiPresentation }) || (scalars.contains("\u{FE0F}") && first.properties.isEmoji) { return 2 }
        if Self.isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .format where first != "\u{AD}": return 0   // a soft hyphen shows, as wcwidth counts it
        case .nonspacingMark, .enclosingMark: return 0
        default: return 1
        }
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks: Hangul Jamo (and extended A), angle
    /// brackets, CJK radicals to Yi, Hangul syllables, CJK compatibility, vertical and small
    /// forms, fullwidth forms, Tangut, kana supplements and the supplementary ideographic planes.
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2329...0x232A, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
             0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F,
             0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x17000...0x18AFF, 0x1B000...0x1B16F, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            true
        default: false
        }
    }
}

extension String {
    /// The terminal columns the text takes (``Character/displayWidth``).
    var displayWidth: Int { reduce(0) { $0 + $1.displayWidth } }

    /// The text with spaces after it up to `width` columns (never cut). Foundation's
    /// `padding(toLength:)` counts UTF-16 units, and cuts text holding emoji.
    func padded(to width: Int) -> String {
        self + String(repeating: " ", count: max(0, width - displayWidth))
    }

    /// The longest start of the text that takes at most `columns` columns.
    func prefix(columns: Int) -> String {
        var taken = 0
        var text = ""
        for character in self {
            taken += character.displayWidth
            if taken > columns { break }
            text.append(character)
        }
        return text
    }
}
