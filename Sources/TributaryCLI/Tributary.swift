import ArgumentParser
import Foundation
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
            HistoryCommand.self, TokenCommand.self, PruneCommand.self, ConsumersCommand.self,
            ExportCommand.self, VerifyCommand.self, ReplayCommand.self,
            RunCommand.self, StatusCommand.self, SearchCommand.self,
            DemoCommand.self,
        ]
    )
}
