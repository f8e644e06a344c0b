import Foundation
import Tributary

/// The consumers' table, the same in `status` and `consumers list`: lag in transactions,
/// and in seconds as how long the oldest unread transaction has waited.
enum ConsumerTable {
    static let header = "name                 token            state     lag (transactions)  lag (s)   last commit"

    /// The header and one line a consumer; names are escaped for the terminal.
    static func lines(_ consumers: [HistoryConsumer]) -> [String] {
        [header] + consumers.map { c in
            let name = TerminalText.escaped(c.name)
            return [
                name.padded(to: 20),
                c.token.description.padded(to: 16),
                c.state.rawValue.padded(to: 9),
                String(c.lagTransactions).padded(to: 19),
                String(format: "%.1f", c.lagSeconds).padded(to: 9),
                ISO8601.string(from: c.committedAt),
            ].joined(separator: " ")
        }
    }

    /// What the two columns mean, for help texts.
    static let lagHelp = "Lag is counted in transactions not yet read, and in seconds as how long the oldest of them has waited (so one stuck transaction raises it)."
}
