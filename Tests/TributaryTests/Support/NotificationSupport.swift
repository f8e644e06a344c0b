import Foundation
import Synchronization
import Testing
@testable import Tributary

/// The notification tests run one at a time, so that counting the listening threads
/// and descriptors of the process sees only their own.
@Suite(.serialized) struct NotificationTests {}

/// Collects a coordinator's remote changes in the background; listening has started
/// when ``start(_:)`` returns.
final class ChangeCollector: Sendable {
    private let changes = Mutex<[RemoteChange]>([])
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts collecting; a `delay` makes the collector a slow reader, spending that long on each change.
    static func start(_ coordinator: PersistentStoreCoordinator, delay: Duration? = nil) async -> ChangeCollector {
        let collector = ChangeCollector()
        await withCheckedContinuation { (listening: CheckedContinuation<Void, Never>) in
            collector.task.withLock { $0 = Task {
                var iterator = coordinator.remoteChanges.makeAsyncIterator()
                listening.resume()
                while let change = await iterator.next() {
                    collector.append(change)
                    if let delay { try? await Task.sleep(for: delay) }
                }
            } }
        }
        return collector
    }

    private func append(_ change: RemoteChange) { changes.withLock { $0.append(change) } }

    var all: [RemoteChange] { changes.withLock { $0 } }
    var last: RemoteChange? { changes.withLock { $0.last } }

    /// Stops listening and waits for the collecting task to end.
    func cancel() async {
        let task = self.task.withLock { $0 }
        task?.cancel()
        await task?.value
    }
}

enum Wait {
    /// Polls `condition` until it holds or `timeout` passes; returns whether it held. The
    /// default is long because a full parallel run on two loaded cores once took over 5 s,
    /// and a CI run over 20 s, to carry a change from another process into a context: the
    /// merge's steps wait for the cooperative threads behind hundreds of other tests. Only
    /// a failing test pays the deadline; a held condition returns at once.
    static func until(_ timeout: Duration = .seconds(90), _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return try condition()
    }
}

/// The built `tributary` executable, beside the test bundle.
enum TributaryBinary {
    static var url: URL {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for _ in 0..<4 where !FileManager.default.fileExists(atPath: dir.appendingPathComponent("tributary").path) {
            dir = dir.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("tributary")
    }

    /// Runs an executable to its end; returns its status and standard error. The wait
    /// happens on a thread of its own, not on one of the test run's few cooperative
    /// threads: blocking one there held back the very merge a test then waited for
    /// (a full CI run once spent 100 s on one import and its merge).
    @discardableResult
    static func run(_ executable: URL, _ arguments: [String]) async throws -> (status: Int32, stderr: String) {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try runBlocking(executable, arguments) }) }.start()
        }
    }

    private static func runBlocking(_ executable: URL, _ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let data = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}

/// A description with history and remote change notifications on.
func notifyingDescription(_ url: URL) -> PersistentStoreDescription {
    let description = PersistentStoreDescription(url: url)
    description.persistentHistoryTracking = true
    description.remoteChangeNotificationPost = true
    return description
}

/// Inserts one post as `author`; returns the store's token after the commit.
@discardableResult
func insertPost(_ coordinator: PersistentStoreCoordinator, _ i: Int, author: String? = nil) throws -> PersistentHistoryToken {
    var request = BatchInsertRequest(entityName: "Post", objects: [[
        "externalID": .string("ext-\(i)"), "title": .string("Post \(i)"), "createdAt": .date(Date(timeIntervalSince1970: Double(i))),
    ]])
    request.transaction = TransactionMetadata(author: author)
    try coordinator.execute(request)
    return try coordinator.currentPersistentHistoryToken()
}

/// A `tributary` process left running, its standard output collected as it comes.
final class RunningTributary: Sendable {
    private let process: Process
    private let output = Mutex("")

    init(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = TributaryBinary.url
        process.arguments = arguments
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        let reader = out.fileHandleForReading
        Thread { [self] in
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                append(data)
            }
        }.start()
    }

    private func append(_ data: Data) { output.withLock { $0 += String(decoding: data, as: UTF8.self) } }

    var text: String { output.withLock { $0 } }

    /// Sends SIGTERM and waits; the exit status.
    func terminate() -> Int32 {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        return process.terminationStatus
    }
}

extension StoreChangeMonitor {
    /// What the monitors listening to `coordinator`'s store hold.
    static func held(by coordinator: PersistentStoreCoordinator) -> Held {
        guard let store = coordinator.persistentStores.first else { return Held() }
        return held(databasePath: store.database.path, isInMemory: store.database.isInMemory)
    }
}
