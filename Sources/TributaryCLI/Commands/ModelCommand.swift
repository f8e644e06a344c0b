import ArgumentParser
import Foundation
import Tributary

/// `tributary model STORE`: prints the model cached in a store.
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Print the model cached in a store, as YAML (or JSON with --json).",
        discussion: "Example: tributary model blog.sqlite > model.yml"
    )

    @OptionGroup var storeOptions: StoreOptions

    @Flag(name: .long, help: "Print the canonical JSON form instead of YAML.")
    var json = false

    func run() async throws {
        let coordinator = try storeOptions.open(readOnly: true)
        guard let model = coordinator.managedObjectModel else { return }
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
