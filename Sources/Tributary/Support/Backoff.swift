import Foundation

/// Capped exponential backoff, with jitter when asked: the wait before attempt `n` is
/// `initial × 2^(n-1)`, at most `maximum`, scaled by a factor between ½ and 1 from
/// `random` (1, the default, for none) so that retries of many clients spread out.
/// The history watcher, pipelines and sinks all wait with it.
///
/// ```swift
/// let backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(30))
/// backoff.delay(afterFailures: 3)          // 400 ms
/// backoff.delay(attempt: 3, random: 0)     // 200 ms
/// ```
public struct Backoff: Sendable, Equatable {
    /// The wait after the first failure.
    public var initial: Duration
    /// The longest wait.
    public var maximum: Duration

    /// A backoff from `initial` doubling up to `maximum`.
    public init(initial: Duration = .milliseconds(50), maximum: Duration = .seconds(5)) {
        self.initial = initial
        self.maximum = maximum
    }

    /// A backoff from `initial` up to `maximum` seconds.
    public init(initialSeconds: TimeInterval, maximumSeconds: TimeInterval) {
        self.init(initial: .seconds(initialSeconds), maximum: .seconds(maximumSeconds))
    }

    /// The wait before retry `attempt` (from 1); `random` in 0...1 gives the jitter.
    public func delay(attempt: Int, random: Double = 1) -> Duration {
        let doublings = min(max(attempt - 1, 0), 30)
        let base = min(initial * (1 << doublings), maximum)
        return base * (0.5 + 0.5 * min(1, max(0, random)))
    }

    /// The wait after `failures` failures in a row (1 or more), without jitter.
    public func delay(afterFailures failures: Int) -> Duration {
        delay(attempt: failures)
    }

    /// ``delay(attempt:random:)`` in seconds.
    public func seconds(attempt: Int, random: Double = 1) -> TimeInterval {
        let wait = delay(attempt: attempt, random: random)
        return Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
    }
}
