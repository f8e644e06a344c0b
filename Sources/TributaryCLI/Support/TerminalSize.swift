import Foundation

/// The terminal standard output is on: its size, and paging through `$PAGER`.
enum TerminalSize {
    /// Columns and rows of the terminal on standard output, or nil when it is not a terminal.
    /// A terminal that reports no size (0) takes `COLUMNS` and `LINES`, else 80 by 24.
    static var current: (columns: Int, rows: Int)? {
        guard Console.isTerminal else { return nil }
        var size = winsize()
        let environment = ProcessInfo.processInfo.environment
        let reported = ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0
        let columns = reported && size.ws_col > 0 ? Int(size.ws_col) : environment["COLUMNS"].flatMap { Int($0) } ?? 80
        let rows = reported && size.ws_row > 0 ? Int(size.ws_row) : environment["LINES"].flatMap { Int($0) } ?? 24
        return (max(columns, 20), max(rows, 2))
    }

    /// Prints `lines`: through `$PAGER` (default `less -FRSX`) when standard output is a terminal
    /// and they do not fit on its screen, else straight out. Never pages a pipe or a file.
    static func printPaged(_ lines: [String]) {
        let environment = ProcessInfo.processInfo.environment
        let pager = environment["PAGER"].map { $0.trimmingCharacters(in: .whitespaces) } ?? "less -FRSX"
        guard let size = current, lines.count >= size.rows, !pager.isEmpty, pager != "cat" else {
            for line in lines { Console.print(line) }
            return
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", pager]
        let input = Pipe()
        process.standardInput = input
        do {
            try process.run()
        } catch {
            for line in lines { Console.print(line) }
            return
        }
        // A pager that quits early closes the pipe: ignore the SIGPIPE that writing would raise.
        signal(SIGPIPE, SIG_IGN)
        let text = lines.joined(separator: "\n") + "\n"
        try? input.fileHandleForWriting.write(contentsOf: Data(text.utf8))
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
