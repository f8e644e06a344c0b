import Foundation
import Testing
import Tributary
import TributaryPipeline
import TributaryTestSupport

/// A stop request ends a wait for commits at once, by cancelling it rather than by a poll.
@Suite struct StopSignalTests {
    @Test func aStopRequestEndsAWaitForCommitsAtOnceAndACommitEndsItToo() async throws {
        let dir = TemporaryDirectory()
        let store = try PipelineFixtures.store(at: dir.url.appendingPathComponent("s.sqlite"))
        let token = try store.currentPersistentHistoryToken()
        let stop = StopSignal()
        async let waited: Void = PipelineService.waitForNewCommits([store], after: [token], stop: stop)
        try await Task.sleep(for: .milliseconds(300))
        stop.request()
        try await waited   // no commit came: only the stop ends it (a time bound fails under the loaded parallel suite)
        // Requested before the wait: it does not start.
        try await PipelineService.waitForNewCommits([store], after: [token], stop: stop)

        let other = StopSignal()
        async let woken: Void = PipelineService.waitForNewCommits([store], after: [token], stop: other)
        try PipelineFixtures.insertPosts(store, count: 1)
        try await woken
        #expect(!other.isRequested)
    }

    @Test func cancellingOnRequestGivesTheResultOrNilWhenStopped() async throws {
        let stop = StopSignal()
        #expect(try await stop.cancellingOnRequest { 7 } == 7)
        let task = Task { try await stop.cancellingOnRequest { try await Task.sleep(for: .seconds(60)); return 1 } }
        try await Task.sleep(for: .milliseconds(50))
        stop.request()
        #expect(try await task.value == nil)
        #expect(try await stop.cancellingOnRequest { 8 } == nil, "a stop requested before: the body does not run")
    }
}
