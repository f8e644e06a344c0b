import ArgumentParser
import Foundation
import Logging
import Tributary
import TributaryStreams

/// The `tributary` command: a store's model, data and history from the shell.
@main
struct TributaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tributary",
        abstract: "Change data capture for SQLite stores: models, batch writes, queries and history.",
        discussion: """
            Shell completion: tributary --generate-completion-script bash > /etc/bash_completion.d/tributary \
            (or zsh, fish; see the README).
            """,
        version: TributaryCommand.version,
        subcommands: [
            InitCommand.self, MigrateCommand.self, AdoptCommand.self, ModelCommand.self, ImportCommand.self, UpdateCommand.self,
            DeleteCommand.self, QueryCommand.self, CountCommand.self,
            HistoryCommand.self, TailCommand.self, TokenCommand.self, PruneCommand.self, ConsumersCommand.self,
            ExportCommand.self, VerifyCommand.self, ReplayCommand.self, AuditCommand.self, RestoreCommand.self, ShowCommand.self,
            RunCommand.self, StatusCommand.self, SearchCommand.self,
            ExplainCommand.self, DemoCommand.self,
        ]
    )

    /// `tributary --version`: the release and the formats it reads and writes.
    static let version = "tributary 0.9.0 (store format \(PersistentStore.formatVersion), stream format \(StreamManifest.currentFormatVersion))"

    /// Logs (`TRIBUTARY_SQL_DEBUG`) go to standard error, keeping standard output for results.
    static func main() async {
        LoggingSystem.bootstrap(ProgressClearingLogHandler.init)
        if let position = firstArgumentNotUTF8() {
            // Swift reads arguments as text, each bad sequence as U+FFFD: a path of such bytes
            // would name another file (adopt said the file was missing; init made another).
            FileHandle.standardError.write(Data("Error: argument \(position) is not valid UTF-8; give paths and names in UTF-8 (rename the file if its name is not)\n".utf8))
            exit(withError: ExitCode.validationFailure)
        }
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            FileHandle.standardError.write(Data((oneLine(fullMessage(for: error)) + "\n").utf8))
            exit(withError: ExitCode.validationFailure)
        }
    }

    /// The position (1 for the first after the command's name) of the first argument whose
    /// bytes are not valid UTF-8, or nil.
    static func firstArgumentNotUTF8() -> Int? {
        for i in 1..<Int(CommandLine.argc) {
            guard let argument = CommandLine.unsafeArgv[i] else { continue }
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(argument).assumingMemoryBound(to: UInt8.self), count: strlen(argument))
            if String(validating: bytes, as: UTF8.self) == nil { return i }
        }
        return nil
    }

    /// A usage error on one line, ArgumentParser's message and where to read more without
    /// the usage lines between: `Error: Unknown option '--bogus'; see 'tributary history --help'`.
    static func oneLine(_ message: String) -> String {
        let lines = message.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = lines.first else { return "Error: bad arguments" }
        let error = first.hasPrefix("Error:") ? first : "Error: \(first)"
        guard let more = lines.last(where: { $0.hasPrefix("See '") }) else { return error }
        return error + "; see " + more.dropFirst(4).replacingOccurrences(of: " for more information.", with: "")
    }
}
