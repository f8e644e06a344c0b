import ArgumentParser
import Foundation
import Tributary

/// `tributary model STORE`: prints the model cached in a store.
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print the model cached in a store, as YAML (or JSON with --json); with --at, the model in force then.",
        discussion: "Examples: tributary model blog.sqlite > model.yml; tributary model blog.sqlite --at 120"
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "Print the canonical JSON form instead of YAML.")
    var json = false

    @Option(name: .long, help: "Print the model in force just after this token or date (ISO 8601), from the store's schema history.")
    var at: String?

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        guard var model = coordinator.managedObjectModel else { return }
        if let at { model = try coordinator.model(at: try PastPoint.token(at, in: coordinator, option: "--at")) }
        if json {
            Console.print(String(decoding: model.canonicalJSON(), as: UTF8.self))
        } else {
            Console.print(model.yamlText, terminator: "")
        }
    }
}

extension Console {
    static func print(_ text: String, terminator: String) {
        write(text, then: terminator)
    }
}
