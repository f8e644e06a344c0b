import Foundation
import Synchronization
import Testing
@testable import Tributary

extension NotificationTests {
    /// Issue 19, bugs 2 and 3: with history and remote change posting on, one save reaches an
    /// auto-merging main-queue context exactly once, whoever wrote it, and every merge and
    /// fetched results controller delivery runs on the main queue.
    @Suite struct MergeOnceTests {
        /// Counts a controller's delegate calls and whether each ran on the main queue.
        final class Counter: FetchedResultsControllerDelegate {
            let state = Mutex<(calls: Int, offQueue: Int)>((0, 0))
            func controller(_ controller: FetchedResultsController, didChange change: FetchedResultsChange) {
                let onMain = Thread.isMainThread || DispatchQueue.getSpecific(key: ManagedObjectContext.mainQueueKey) == true
                state.withLock { $0.calls += 1; if !onMain { $0.offQueue += 1 } }
            }
            var calls: Int { state.withLock { $0.calls } }
            var offQueue: Int { state.withLock { $0.offQueue } }
        }

        enum Writer: CaseIterable { case siblingContext, otherCoordinator, otherProcess }

        /// A store with two posts, a main-queue view context that merges automatically, and a
        /// controller over posts by title; `write` changes post 0's title; then the counts.
        private func run(_ writer: Writer) async throws {
            let dir = TemporaryDirectory()
            let url = dir.file("merge.sqlite")
            let mine = try Fixtures.blogCoordinator(notifyingDescription(url))
            let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
            let view = ManagedObjectContext(concurrencyType: .mainQueue, coordinator: mine)
            let merges = Mutex<(all: Int, offQueue: Int)>((0, 0))
            view.withLock {
                view.changeObservers[UUID()] = { [weak view] _ in
                    let onQueue = view?.isOnQueue ?? false
                    merges.withLock { $0.all += 1; if !onQueue { $0.offQueue += 1 } }
                }
            }
            let controller = try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Post", sortDescriptors: [SortDescriptor("title")]), managedObjectContext: view)
            let counter = Counter()
            controller.delegate = counter
            try controller.performFetch()
            view.automaticallyMergesChangesFromParent = true
            let streamed = Mutex(0)
            let stream = controller.changes()
            let reader = Task { for await _ in stream { streamed.withLock { $0 += 1 } } }
            defer { reader.cancel() }

            switch writer {
            case .siblingContext:
                let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: mine)
                try await background.perform {
                    try background.object(with: posts[0])["title"] = "Z from a sibling"
                    try background.save()
                }
            case .otherCoordinator:
                let theirs = try Fixtures.blogCoordinator(notifyingDescription(url))
                let background = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: theirs)
                try await background.perform {
                    try background.object(with: posts[0])["title"] = "Z from another coordinator"
                    try background.save()
                }
            case .otherProcess:
                let result = try await TributaryBinary.run(TributaryBinary.url, ["update", url.path, "--entity", "Post", "--where", "title == 'Post 0'", "--set", "title=Z from another process"])
                #expect(result.status == 0, "\(result.stderr)")
            }
            #expect(await Wait.until { counter.calls >= 1 && streamed.withLock { $0 } >= 1 }, "\(writer): no delivery")
            try await Task.sleep(for: .milliseconds(400))   // room for a second delivery, if there were one
            #expect(counter.calls == 1, "\(writer): \(counter.calls) delegate calls")
            #expect(streamed.withLock { $0 } == 1, "\(writer): \(streamed.withLock { $0 }) changes() deliveries")
            #expect(merges.withLock { $0.all } == 1, "\(writer): \(merges.withLock { $0.all }) merges")
            #expect(counter.offQueue == 0, "\(writer): delegate called off the main queue")
            #expect(merges.withLock { $0.offQueue } == 0, "\(writer): merged off the main queue")
            #expect(controller.fetchedObjectIDs.last == posts[0])
            withExtendedLifetime(view) {}
        }

        @Test(arguments: Writer.allCases) func oneSaveIsMergedOnceOnTheContextsQueue(_ writer: Writer) async throws {
            try await run(writer)
        }

        @Test func aCommitThatFailsIsUnmarked() throws {
            let commits = LocalCommits()
            let follower = commits.follow()
            commits.mark(5)
            commits.unmark(5)
            #expect(!commits.contains(5))
            commits.mark(6)
            commits.passed(follower, through: 6)
            #expect(!commits.contains(6))   // passed by every follower: forgotten
        }

        @Test func aMergeOfAnObjectIDNotificationWorks() throws {
            let description = PersistentStoreDescription.inMemory()
            description.persistentHistoryTracking = true
            let coordinator = try Fixtures.blogCoordinator(description)
            let (_, posts) = try Fixtures.seedBlog(coordinator, posts: 2)
            let token = try coordinator.currentPersistentHistoryToken()
            let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
            let post = try context.existingObject(with: posts[1])
            try coordinator.execute(BatchDeleteRequest(entityName: "Post", predicate: try StorePredicate(format: "title == 'Post 1'")))
            for transaction in try coordinator.fetchHistory(.fetchHistory(after: token)) {
                ManagedObjectContext.mergeChanges(fromRemoteContextSave: transaction.objectIDNotification, into: [context])
            }
            #expect(post.isDeleted)
        }
    }
}

extension NotificationTests.MergeOnceTests {
    /// A watcher's read that fails (no free reader) is retried without waiting for another change.
    @Test func aFailedRemoteReadIsRetried() async throws {
        let dir = TemporaryDirectory()
        let url = dir.file("busy.sqlite")
        let description = notifyingDescription(url)
        description.connectionPoolMaxSize = 1
        description.busyTimeout = 0.2
        let mine = try Fixtures.blogCoordinator(description)
        let (_, posts) = try Fixtures.seedBlog(mine, posts: 2)
        let viewer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: mine)
        viewer.automaticallyMergesChangesFromParent = true
        let post = try viewer.existingObject(with: posts[0])
        let pinned = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: mine)
        try pinned.setQueryGenerationFrom(.current)
        _ = try pinned.count(for: FetchRequest(entityName: "Post"))   // holds the only reader
        let theirs = try Fixtures.blogCoordinator(notifyingDescription(url))
        let writer = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: theirs)
        try writer.object(with: posts[0])["title"] = "After the retry"
        try writer.save()
        try await Task.sleep(for: .milliseconds(600))   // the watcher's read times out meanwhile
        pinned.reset()                                    // frees the reader; no further commit
        #expect(await Wait.until(.seconds(20)) { post["title"] == "After the retry" })
        withExtendedLifetime((viewer, pinned)) {}
    }
}
