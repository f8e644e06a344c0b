import ArgumentParser
import Tributary

/// `tributary token STORE`: the current history token.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Print the store's current history token.",
        discussion: "Example: tributary history blog.sqlite --after $(tributary token blog.sqlite)"
    )

    @OptionGroup var storeOptions: StoreOptions

    func run() async throws {
        let coordinator = try storeOptions.openForHistory()
        Console.print(try coordinator.currentPersistentHistoryToken().description)
    }
}
