import Foundation

/// ISO 8601 dates in UTC, the form Tributary reads and writes in NDJSON.
///
/// ```swift
/// ISO8601.string(from: Date(timeIntervalSince1970: 0))   // "1970-01-01T00:00:00Z"
/// ISO8601.date(from: "2024-05-01T12:00:00.250Z")           // a Date
/// ```
public enum ISO8601 {
    /// The dates Tributary stores, in seconds since 1970: 0000-01-01T00:00:00Z through
    /// 9999-12-31T23:59:59.999Z, the years ISO 8601's four digits can write (and this type
    /// reads back). Writes refuse a date outside it (NaN and infinities too); a reader meeting
    /// one that another program stored shows it as ``unsupportedText(_:)``.
    public static let supportedSeconds: ClosedRange<Double> = -62_167_219_200 ... 253_402_300_799.999

    /// Whether `date` is in ``supportedSeconds``.
    ///
    /// ```swift
    /// ISO8601.isSupported(Date(timeIntervalSince1970: 1e300))   // false
    /// ```
    public static func isSupported(_ date: Date) -> Bool { supportedSeconds.contains(date.timeIntervalSince1970) }

    /// How a date outside ``supportedSeconds`` is shown: its number of seconds with a note,
    /// such as `1e+300 s since 1970 (outside 0000-9999)`.
    public static func unsupportedText(_ seconds: Double) -> String {
        "\(seconds) s since 1970 (outside 0000-9999)"
    }

    /// The error a write of an unsupported date gets: what, and the range to keep to.
    static func unsupportedDateError(_ seconds: Double, attribute: String, place: String) -> TributaryError {
        TributaryError(.typeMismatch, "'\(attribute)' of \(place) is \(unsupportedText(seconds)), not a date Tributary stores", location: place,
                       hint: "give a date from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z (seconds since 1970 from -62167219200 to 253402300799)")
    }

    /// Formats a date as `yyyy-MM-ddTHH:mm:ss[.SSS]Z`; fractional seconds only when present.
    /// A date outside ``supportedSeconds`` is written as ``unsupportedText(_:)``.
    public static func string(from date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        append(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the date as ``string(from:)`` formats it, as UTF-8, to `bytes` (JSON writers
    /// use it to write dates without building a `String`).
    ///
    /// ```swift
    /// var bytes: [UInt8] = []
    /// ISO8601.append(Date(timeIntervalSince1970: 0), to: &bytes)   // "1970-01-01T00:00:00Z"
    /// ```
    public static func append(_ date: Date, to bytes: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        guard supportedSeconds.contains(seconds) else {
            // Written by another program (Tributary refuses such dates): shown, never trapped on.
            bytes += unsupportedText(seconds).utf8
            return
        }
        var whole = seconds.rounded(.down)
        var millis = Int(((seconds - whole) * 1000).rounded())
        if millis == 1000 { whole += 1; millis = 0 }
        var time = time_t(whole)
        var parts = tm()
        gmtime_r(&time, &parts)
        // Digits by hand: String(format:) is slow on Linux, and this is on the export hot path.
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var v = value
            if v < 0 { bytes.append(0x2D); v = -v }
            if v >= divisor * 10 { bytes += Array(String(v).utf8); return }
            while divisor > 0 { bytes.append(UInt8(48 + (v / divisor) % 10)); divisor /= 10 }
        }
        digits(Int(parts.tm_year) + 1900, 4); bytes.append(0x2D)
        digits(Int(parts.tm_mon) + 1, 2); bytes.append(0x2D)
        digits(Int(parts.tm_mday), 2); bytes.append(0x54)
        digits(Int(parts.tm_hour), 2); bytes.append(0x3A)
        digits(Int(parts.tm_min), 2); bytes.append(0x3A)
        digits(Int(parts.tm_sec), 2)
        if millis != 0 { bytes.append(0x2E); digits(millis, 3) }
        bytes.append(0x5A)
    }

    /// Parses `yyyy-MM-dd`, `yyyy-MM-ddTHH:mm[:ss[.fff]]` followed by `Z` or `±HH:MM`; nil otherwise.
    public static func date(from text: String) -> Date? {
        var text = text
        return text.withUTF8 { date(utf8: $0) }
    }

    /// ``date(from:)`` for UTF-8 bytes (the NDJSON importer parses dates where they lie).
    static func date(utf8 chars: UnsafeBufferPointer<UInt8>) -> Date? {
        var i = 0
        func number(_ count: Int) -> Int? {
            guard i + count <= chars.count else { return nil }
            var value = 0
            for k in 0..<count {
                let c = chars[i + k]
                guard c >= 48, c <= 57 else { return nil }
                value = value * 10 + Int(c - 48)
            }
            i += count
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < chars.count, chars[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2) else { return nil }
        guard (1...12).contains(month), (1...31).contains(day) else { return nil }
        var hour = 0, minute = 0, second = 0
        var fraction = 0.0
        var offset = 0
        if i < chars.count {
            guard expect(84) || expect(32) || expect(116) else { return nil }
            guard let h = number(2), expect(58), let m = number(2) else { return nil }
            hour = h; minute = m
            if expect(58) {
                guard let s = number(2) else { return nil }
                second = s
                if expect(46) {
                    var scale = 0.1
                    var digits = 0
                    while i < chars.count, chars[i] >= 48, chars[i] <= 57 {
                        fraction += Double(chars[i] - 48) * scale
                        scale /= 10
                        i += 1
                        digits += 1
                    }
                    guard digits > 0 else { return nil }
                }
            }
            guard hour < 24, minute < 60, second < 61 else { return nil }
            if expect(90) || expect(122) {
                // UTC
            } else if i < chars.count, chars[i] == 43 || chars[i] == 45 {
                let sign = chars[i] == 43 ? 1 : -1
                i += 1
                guard let oh = number(2) else { return nil }
                _ = expect(58)
                guard let om = number(2) else { return nil }
                offset = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
        }
        guard i == chars.count else { return nil }
        let epoch = daysFromCivil(year: year, month: month, day: day) * 86_400 + hour * 3600 + minute * 60 + second
        return Date(timeIntervalSince1970: Double(epoch - offset) + fraction)
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date (as `timegm` counts them, days
    /// past the month's end running on into the next month), without `tm` or the C library.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
