import Foundation
import Synchronization
import Tributary

/// What the blog examples share: the model, opening the store, arguments, and stopping on a signal.
///
/// ```swift
/// let container = try await BlogExample.openStore(BlogExample.argument("--store", default: "blog.sqlite"))
/// let stop = BlogExample.stopOnSignals()
/// while !stop.requested { … }
/// ```
public enum BlogExample {
    /// `examples/blog/model.yml`.
    public static var modelURL: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("blog/model.yml")
    }

    /// The blog store at `path` (created when missing), with history and remote change notifications on.
    public static func openStore(_ path: String, name: String) async throws -> PersistentContainer {
        let container = PersistentContainer(name: name, managedObjectModel: try ManagedObjectModel(yamlFile: modelURL))
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.persistentHistoryTracking = true
        description.remoteChangeNotificationPost = true
        container.persistentStoreDescriptions = [description]
        try await container.loadPersistentStores()
        return container
    }

    /// The value after `name` on the command line, or `fallback`.
    public static func argument(_ name: String, default fallback: String) -> String {
        let arguments = CommandLine.arguments
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return fallback }
        return arguments[index + 1]
    }

    /// Prints a line at once (examples run with their output in files).
    public static func say(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Runs `body`, printing one line and exiting 1 when it throws.
    public static func main(_ body: () async throws -> Void) async {
        do {
            try await body()
        } catch {
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }

    /// A flag set by SIGINT or SIGTERM, so the example finishes its step and exits cleanly.
    public static func stopOnSignals() -> StopRequest {
        let request = StopRequest()
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { request.request() }
            source.resume()
            request.keep(source)
        }
        return request
    }
}

/// Whether a stop was asked for (SIGINT or SIGTERM).
public final class StopRequest: Sendable {
    private let state = Mutex<(requested: Bool, sources: [any DispatchSourceSignal])>((false, []))

    /// Whether a signal came.
    public var requested: Bool { state.withLock { $0.requested } }

    func request() { state.withLock { $0.requested = true } }
    func keep(_ source: any DispatchSourceSignal) { state.withLock { $0.sources.append(source) } }

    /// Sleeps up to `duration`, returning early when a stop is requested.
    public func sleep(_ duration: Duration) async {
        let deadline = ContinuousClock.now + duration
        while !requested && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
    }
}
