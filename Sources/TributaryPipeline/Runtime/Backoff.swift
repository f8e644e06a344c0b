import Foundation

/// Capped exponential backoff with jitter: the n-th wait is `initial × 2^(n-1)`, at most
/// `maximum`, scaled by a random factor between ½ and 1 so that retries spread out.
///
/// ```swift
/// let backoff = Backoff(initial: 0.1, maximum: 30)
/// backoff.delay(attempt: 3, random: 1)   // 0.4
/// ```
public struct Backoff: Sendable {
    /// The first wait, in seconds.
    public var initial: TimeInterval
    /// The longest wait, in seconds.
    public var maximum: TimeInterval

    /// A backoff from `initial` up to `maximum` seconds.
    public init(initial: TimeInterval, maximum: TimeInterval) {
        self.initial = initial
        self.maximum = maximum
    }

    /// The wait before retry `attempt` (from 1); `random` in 0...1 gives the jitter.
    public func delay(attempt: Int, random: Double) -> TimeInterval {
        let base = min(maximum, initial * pow(2, Double(max(0, min(attempt - 1, 60)))))
        return base * (0.5 + 0.5 * min(1, max(0, random)))
    }
}
