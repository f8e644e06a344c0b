import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

/// `tributary replay DIR --into STORE [--until TOKEN|DATE] [--model FILE] [--resume]`.
struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Rebuild a store from a change stream, up to a token or a date.",
        discussion: "Example: tributary replay stream/ --into copy.sqlite --until 2024-05-01T12:00:00Z"
    )

    @Argument(help: "The stream directory.")
    var directory: String

    @Option(name: .long, help: "The store to rebuild (created if missing).")
    var into: String

    @Option(name: .long, help: "Stop after this token, or after the last transaction at or before this ISO 8601 date.")
    var until: String?

    @Option(name: .long, help: "A model file (YAML) to use instead of the model kept in the stream.")
    var model: String?

    @Flag(name: .long, help: "Continue into a store that is not empty (after the position an earlier replay saved).")
    var resume = false

    func run() async throws {
        let limit = try until.map { try ReplayLimit(parsing: $0) }
        let givenModel = try model.map { try ManagedObjectModel(yamlFile: URL(fileURLWithPath: $0)) }
        let replayer = try StreamReplayer(directory: URL(fileURLWithPath: directory), model: givenModel)
        // Verify before touching the target, so a damaged stream creates no store.
        _ = try StreamVerifier(directory: URL(fileURLWithPath: directory)).verify()
        let target = try replayer.openTarget(at: URL(fileURLWithPath: into))
        let summary = try replayer.replay(into: target, until: limit, resume: resume, verified: true) { progress in
            Console.progress("replayed \(progress.records) records")
        }
        Console.endProgress()
        Console.print("replayed \(summary.records) records into \(into)\(summary.last.map { " through \($0)" } ?? "")")
    }
}
