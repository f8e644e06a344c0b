import ArgumentParser
import Foundation
import Tributary

/// `tributary demo`: the whole story on local files — an importer and an app merging
/// its changes through the watcher, the audit trail, export, verify, replay into a
/// copy, pruning — and a report.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run an importer beside an app that merges its changes, tail the audit trail (with a sqlite3 shell's write), export, verify and replay the history, index it for search, prune, and report.",
        discussion: "Example: tributary demo --dir /tmp/tributary-demo"
    )

    @Option(name: .long, help: "Directory for the demo's files (a new temporary one by default).")
    var dir: String?

    @Option(name: .long, help: "Posts to import.")
    var posts: Int = 5000

    func validate() throws {
        guard posts >= 100 else { throw ValidationError("--posts must be at least 100") }
    }

    func run() async throws {
        let directory = dir.map { URL(fileURLWithPath: $0) } ?? FileManager.default.temporaryDirectory.appendingPathComponent("tributary-demo-\(UUID().uuidString.prefix(8))")
        try DirectoryPreparer.create(directory, what: "demo directory")
        var story = DemoStory(directory: directory, posts: posts)
        try story.clean()
        let clock = ContinuousClock()
        let start = clock.now
        Console.print("store: \(story.storeURL.path) (history and remote change notifications on)")

        let (app, latencies) = try await story.importWhileWatching()
        let transactions = try app.countHistory(.fetchHistory(after: nil))
        var changes = 0
        try app.enumerateHistoryChanges(.fetchHistory(after: nil)) { _ in changes += 1 }
        story.add("notify", "commit to watcher handler, \(latencies.count) importer commits: "
                  + String(format: "p50 %.2f ms, p99 %.2f ms", DemoStory.percentile(latencies, 0.5), DemoStory.percentile(latencies, 0.99)))

        let tail = try story.editAndTail(app)
        Console.print("audit trail (tributary tail --author alice):")
        for line in tail { Console.print("  " + line) }
        Console.print("audit trail (a write by the sqlite3 shell, which does not use Tributary):")
        for line in try story.shellEdit(app) { Console.print("  " + line) }
        let captured = "\(transactions) transactions and \(changes) changes captured during the import"
        story.add("history", captured)

        let equal = try story.exportVerifyReplay(app)
        let hit = try await story.searchIndex(app)
        try story.prune(app)

        Console.print("report:")
        for (name, value) in story.report { Console.print("  \(name.padded(to: 8)) \(value)") }
        Console.print("done in \(DemoStory.format(clock.now - start)); files in \(directory.path)")
        if !equal || hit == nil { throw ExitCode(1) }
    }
}
