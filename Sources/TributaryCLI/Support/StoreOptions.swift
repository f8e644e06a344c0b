import ArgumentParser
import Foundation
import Synchronization
import Tributary

/// The store argument shared by the subcommands.
struct StoreOptions: ParsableArguments {
    @Argument(help: "Path of the store file.")
    var store: String

    @Option(name: .long, help: "Seconds to wait for another writer's lock.")
    var busyTimeout: Double = 5

    /// The store's URL.
    var url: URL { URL(fileURLWithPath: store) }

    /// An empty path would name the current directory: refused with one line (no usage text).
    func validate() throws {
        guard !store.isEmpty else { throw TributaryError(.fileNotFound, "the store's path is empty", hint: "give the path of a store file, such as blog.sqlite") }
    }

    /// Opens the store with the model cached in it.
    /// Opens the store to read its history: read-write when this user may write the file
    /// and its directory, so that writes other programs made (the sqlite3 shell, Python)
    /// are folded into history as it is read; read-only otherwise, where they appear once
    /// a read-write Tributary process has folded them.
    func openForHistory() throws -> PersistentStoreCoordinator {
        let directory = url.deletingLastPathComponent().path
        let writable = access(url.path, W_OK) == 0 && access(directory.isEmpty ? "." : directory, W_OK) == 0
        return try open(readOnly: !writable)
    }

    func open(readOnly: Bool = false) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: url)
        description.isReadOnly = readOnly
        description.busyTimeout = busyTimeout
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }
}

/// Entity and predicate options shared by query, count, update and delete.
struct EntityOptions: ParsableArguments {
    @Option(name: .long, help: "The entity.")
    var entity: String

    @Option(name: .customLong("where"), help: "An NSPredicate-style filter, such as \"title BEGINSWITH[c] 'swift'\".")
    var predicate: String?

    /// The parsed predicate, if any.
    func parsedPredicate() throws -> StorePredicate? {
        try predicate.map { try StorePredicate(format: $0) }
    }
}

/// Writes to standard output and standard error.
enum Console {
    /// Whether standard output is a terminal.
    static var isTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Whether to colour what goes to standard output: on a terminal, unless `NO_COLOR` is
    /// set (no-color.org) or `TERM` is `dumb`.
    static var usesColour: Bool {
        let environment = ProcessInfo.processInfo.environment
        return isTerminal && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }
    /// Whether standard error is a terminal (progress goes there).
    static var isErrorTerminal: Bool { isatty(STDERR_FILENO) == 1 }

    /// Whether a progress line is on the terminal now (so a line written meanwhile clears it first).
    private static let progressShown = Mutex(false)

    static func print(_ line: String) {
        clearProgress()
        write(line, then: "\n")
    }

    static func progress(_ text: String) {
        guard isErrorTerminal else { return }
        progressShown.withLock { shown in
            shown = true
            FileHandle.standardError.write(Data("\r\u{1B}[K\(text)".utf8))
        }
    }

    static func warn(_ line: String) {
        clearProgress()
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    static func endProgress() {
        guard isErrorTerminal else { return }
        progressShown.withLock { shown in
            shown = false
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }

    /// Clears the progress line if one is shown, so the next line starts at the left edge
    /// (the progress line is drawn again at its next update).
    static func clearProgress() {
        progressShown.withLock { shown in
            guard shown else { return }
            shown = false
            FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        }
    }
}
