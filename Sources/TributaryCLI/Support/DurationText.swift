import Foundation
import Tributary

/// Durations on the command line.
enum DurationText {
    /// Parses `30d`, `12h`, `15m`, `90s` or plain seconds.
    static func seconds(parsing text: String, option: String) throws -> TimeInterval {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 604_800]
        if let unit = text.last, let scale = units[unit], let value = Double(text.dropLast()), value >= 0 { return value * scale }
        if let value = Double(text), value >= 0 { return value }
        throw TributaryError(.invalidInput, "'\(text)' is not a duration", location: option, hint: "write 30d, 12h, 15m or 90s")
    }
}
