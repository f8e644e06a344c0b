import Foundation
import Synchronization
import Testing
@testable import Tributary

extension NotificationTests {
    /// `coordinator.remoteChanges`: in one process (named in-memory and file stores), across
    /// processes, from the `sqlite3` shell, under a burst, and releasing what it used.
    @Suite struct RemoteChangeTests {
        /// Two coordinators each see the other's commits, with the new token.
        func seeEachOther(_ description: PersistentStoreDescription) async throws {
            let a = try Fixtures.blogCoordinator(description)
            let b = try Fixtures.blogCoordinator(description)
            let seenByB = await ChangeCollector.start(b)
            let seenByA = await ChangeCollector.start(a)
            let first = try insertPost(a, 1, author: "a")
            #expect(await Wait.until { seenByB.last?.historyToken == first })
            let second = try insertPost(b, 2, author: "b")
            #expect(second > first)
            #expect(await Wait.until { seenByA.last?.historyToken == second })
            #expect(seenByB.last?.storeURL == description.url)
            await seenByA.cancel()
            await seenByB.cancel()
        }

        @Test func coordinatorsOnANamedInMemoryStoreSeeEachOther() async throws {
            try await seeEachOther(notifyingDescription(PersistentStoreDescription.inMemory(named: "notify-\(UUID().uuidString)").url))
        }

        @Test func coordinatorsOnAFileStoreSeeEachOther() async throws {
            let dir = TemporaryDirectory()
            try await seeEachOther(notifyingDescription(dir.file("pair.sqlite")))
        }

        @Test func aCommitByAnotherProcessWakesTheListener() async throws {
            let dir = TemporaryDirectory()
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("x.sqlite")))
            try insertPost(coordinator, 1)
            let seen = await ChangeCollector.start(coordinator)
            let result = try await TributaryBinary.run(TributaryBinary.url, ["update", dir.file("x.sqlite").path, "--entity", "Post", "--all", "--set", "title=Renamed", "--author", "other"])
            #expect(result.status == 0, "\(result.stderr)")
            let token = try coordinator.currentPersistentHistoryToken()
            #expect(token.value == 2)
            #expect(await Wait.until { seen.last?.historyToken == token })
            await seen.cancel()
        }

        @Test func anotherProcessSeesThisOnesSaves() async throws {
            let dir = TemporaryDirectory()
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("peer.sqlite")))
            let peer = try RunningTributary(["tail", dir.file("peer.sqlite").path, "--follow", "--consumer", "peer", "--json"])
            #expect(await Wait.until { (try? coordinator.historyConsumer(named: "peer")) != nil })
            let token = try insertPost(coordinator, 1, author: "here")
            #expect(await Wait.until { peer.text.contains(#""token":"\#(token)""#) }, "the peer printed: \(peer.text)")
            #expect(peer.terminate() == 0)
            #expect(try coordinator.historyConsumer(named: "peer").token == token)
        }

        @Test func aCommitByTheSQLiteShellWakesTheListener() async throws {
            let dir = TemporaryDirectory()
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("s.sqlite")))
            try insertPost(coordinator, 1)
            let before = try coordinator.currentPersistentHistoryToken()
            let seen = await ChangeCollector.start(coordinator)
            let result = try await TributaryBinary.run(URL(fileURLWithPath: "/usr/bin/sqlite3"), [dir.file("s.sqlite").path, "UPDATE Post SET title = 'shell'"])
            #expect(result.status == 0, "\(result.stderr)")
            // The shell records no history: the change carries the same token.
            #expect(await Wait.until { seen.all.count == 1 })
            #expect(seen.last?.historyToken == before)
            await seen.cancel()
        }

        @Test func aBurstCoalescesWithoutLosingTheLastToken() async throws {
            let description = notifyingDescription(PersistentStoreDescription.inMemory(named: "burst-\(UUID().uuidString)").url)
            let writer = try Fixtures.blogCoordinator(description)
            let listener = try Fixtures.blogCoordinator(description)
            // A reader that takes a millisecond per change cannot keep up: what waits coalesces.
            let seen = await ChangeCollector.start(listener, delay: .milliseconds(1))
            let commits = 10_000
            for i in 0..<commits {
                try writer.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": .string("t\(i)")]]))
            }
            let last = try writer.currentPersistentHistoryToken()
            #expect(last.value == Int64(commits))
            #expect(await Wait.until { seen.last?.historyToken == last })
            let tokens = seen.all.compactMap(\.historyToken)
            #expect(tokens.count < commits / 2)
            #expect(tokens == tokens.sorted())
            await seen.cancel()
        }

        @Test func aBurstFromAnotherProcessEndsOnItsLastToken() async throws {
            let dir = TemporaryDirectory()
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("b.sqlite")))
            let seen = await ChangeCollector.start(coordinator)
            let rows = (0..<1_000).map { #"{"externalID": "ext-\#($0)", "title": "Post \#($0)", "createdAt": \#($0)}"# }.joined(separator: "\n")
            let file = dir.file("posts.ndjson")
            try Data(rows.utf8).write(to: file)
            let result = try await TributaryBinary.run(TributaryBinary.url, ["import", dir.file("b.sqlite").path, "--entity", "Post", "--batch-size", "1", file.path])
            #expect(result.status == 0, "\(result.stderr)")
            let last = try coordinator.currentPersistentHistoryToken()
            #expect(last.value == 1_000)
            #expect(await Wait.until { seen.last?.historyToken == last })
            let tokens = seen.all.compactMap(\.historyToken)
            #expect(tokens == tokens.sorted())
            await seen.cancel()
        }

        /// Cancelling the iterating task ends the thread and closes every descriptor.
        /// Counted per store (threads and inotify and pipe descriptors, by the monitor; the
        /// store's files, from /proc): other tests listen to their own stores meanwhile.
        @Test func cancellingReleasesTheThreadAndDescriptors() async throws {
            let dir = TemporaryDirectory()
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(dir.file("r.sqlite")))
            try insertPost(coordinator, 0)
            func files() -> Int { Resources.descriptors { $0.hasPrefix(dir.url.path) } }
            // SQLite keeps the descriptor of a closed connection's database file while another
            // connection of the process holds a lock on it, and reuses it at the next open:
            // listen once before counting, so that the count includes it.
            await ChangeCollector.start(coordinator).cancel()
            #expect(await Wait.until { StoreChangeMonitor.held(by: coordinator) == StoreChangeMonitor.Held() })
            let filesBefore = files()
            let seen = await ChangeCollector.start(coordinator)
            // One thread; inotify and the wake pipe's two ends; its own connection (at least one
            // more file descriptor: SQLite shares those of files the process has open already).
            #expect(StoreChangeMonitor.held(by: coordinator) == StoreChangeMonitor.Held(threads: 1, descriptors: 3))
            #expect(files() >= filesBefore + 1)
            let token = try insertPost(coordinator, 1)
            #expect(await Wait.until { seen.last?.historyToken == token })
            await seen.cancel()
            #expect(await Wait.until { StoreChangeMonitor.held(by: coordinator) == StoreChangeMonitor.Held() && files() == filesBefore },
                    "\(StoreChangeMonitor.held(by: coordinator)), files \(files()) (before \(filesBefore)) \(Resources.list { $0.hasPrefix(dir.url.path) })")
        }

        @Test func aCoordinatorWithoutAStoreGivesAnEmptySequence() async {
            var count = 0
            for await _ in PersistentStoreCoordinator().remoteChanges { count += 1 }
            #expect(count == 0)
        }

        /// Leaving a `for await` loop early stops listening too.
        @Test func breakingOutOfTheLoopStopsListening() async throws {
            let coordinator = try Fixtures.blogCoordinator(notifyingDescription(PersistentStoreDescription.inMemory(named: "break-\(UUID().uuidString)").url))
            let writer = Task {
                for i in 0..<50 { try insertPost(coordinator, i); try await Task.sleep(for: .milliseconds(5)) }
            }
            for await change in coordinator.remoteChanges where change.historyToken != nil { break }
            try await writer.value
            #expect(await Wait.until { StoreChangeMonitor.held(by: coordinator) == StoreChangeMonitor.Held() })
        }
    }
}

/// Threads and descriptors of this process, from /proc.
enum Resources {
    static func threads(named name: String) -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return comm.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }.count
    }

    static func list(_ matching: (String) -> Bool) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }.filter(matching)
    }

    /// Open descriptors whose target matches.
    static func descriptors(_ matching: (String) -> Bool) -> Int {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.filter { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)") else { return false }
            return matching(target)
        }.count
    }
}
