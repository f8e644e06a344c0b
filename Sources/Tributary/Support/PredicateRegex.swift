import Foundation

/// The regular expressions of `MATCHES` (ICU syntax, as `NSPredicate`'s): the whole text
/// must match. Bounded: a pattern has at most ``maximumPatternLength`` characters, and text
/// longer than ``maximumTextLength`` UTF-16 units is an error rather than a long search.
/// Compiled patterns are cached (a few dozen, the most recent).
enum PredicateRegex {
    static let maximumPatternLength = 512
    static let maximumTextLength = 1_000_000
    private static let cacheSize = 64

    // @unchecked Sendable: NSRegularExpression is immutable once made and safe to share between threads.
    private struct Compiled: @unchecked Sendable { let regex: NSRegularExpression }
    private static let cache = Locked<[String: Compiled]>([:])

    /// The compiled pattern, or an error saying why it cannot be used.
    static func compile(_ pattern: String, caseInsensitive: Bool) throws -> NSRegularExpression {
        let key = (caseInsensitive ? "i:" : "s:") + pattern
        if let cached = cache.withLock({ $0[key] }) { return cached.regex }
        guard pattern.count <= maximumPatternLength else {
            throw TributaryError(.invalidPredicate, "a MATCHES pattern of \(pattern.count) characters is longer than \(maximumPatternLength)", location: "predicate near 'MATCHES'",
                                 hint: "use a shorter pattern, or BEGINSWITH, CONTAINS or LIKE")
        }
        let regex: NSRegularExpression
        do {
            regex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: caseInsensitive ? [.caseInsensitive] : [])
        } catch {
            throw TributaryError(.invalidPredicate, "'\(pattern)' is not a valid regular expression", location: "predicate near 'MATCHES'", hint: "write an ICU regular expression, such as '[A-Z]{2}[0-9]+'")
        }
        cache.withLock { cache in
            if cache.count >= cacheSize { cache.removeAll(keepingCapacity: true) }
            cache[key] = Compiled(regex: regex)
        }
        return regex
    }

    /// Whether all of `text` matches `pattern`.
    static func matches(_ text: String, _ pattern: String, caseInsensitive: Bool) throws -> Bool {
        let regex = try compile(pattern, caseInsensitive: caseInsensitive)
        let length = text.utf16.count
        guard length <= maximumTextLength else {
            throw TributaryError(.invalidPredicate, "MATCHES on a text of \(length) UTF-16 units, more than \(maximumTextLength)", location: "predicate near 'MATCHES'",
                                 hint: "narrow the fetch first, or use CONTAINS")
        }
        return regex.firstMatch(in: text, options: [], range: NSRange(location: 0, length: length)) != nil
    }
}
