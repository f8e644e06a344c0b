import Foundation
import Testing
import Tributary

/// The one backoff the watcher, pipelines and sinks wait with.
@Suite struct BackoffTests {
    @Test func doublesFromTheInitialWaitUpToTheMaximum() {
        let backoff = Backoff(initial: .milliseconds(100), maximum: .seconds(1))
        #expect((1...6).map { backoff.delay(afterFailures: $0) } == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        #expect(backoff.delay(afterFailures: 0) == .milliseconds(100))
        #expect(backoff.delay(afterFailures: 10_000) == .seconds(1))
    }

    @Test func jitterScalesTheWaitBetweenHalfAndAll() {
        let backoff = Backoff(initialSeconds: 0.1, maximumSeconds: 30)
        #expect(backoff.delay(attempt: 3, random: 0) == .milliseconds(200))
        #expect(backoff.delay(attempt: 3, random: 1) == .milliseconds(400))
        #expect(backoff.delay(attempt: 3, random: 7) == .milliseconds(400), "random is clamped to 0...1")
        #expect(abs(backoff.seconds(attempt: 3, random: 0.5) - 0.3) < 1e-9)
    }
}
