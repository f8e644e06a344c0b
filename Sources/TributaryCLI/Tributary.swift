import ArgumentParser
import Foundation
import Logging
import Tributary

/// The `tributary` command: a store's model, data and history from the shell.
@main
struct TributaryCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tributary",
        abstract: "Change data capture for SQLite stores: models, batch writes, queries and history.",
        subcommands: [
            InitCommand.self, ModelCommand.self, ImportCommand.self, UpdateCommand.self,
            DeleteCommand.self, QueryCommand.self, CountCommand.self,
            HistoryCommand.self, TailCommand.self, TokenCommand.self, PruneCommand.self, ConsumersCommand.self,
            ExportCommand.self, VerifyCommand.self, ReplayCommand.self,
            RunCommand.self, StatusCommand.self, SearchCommand.self,
            ExplainCommand.self, DemoCommand.self,
        ]
    )

    /// Logs (`TRIBUTARY_SQL_DEBUG`) go to standard error, keeping standard output for results.
    static func main() async {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}
