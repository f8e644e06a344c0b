import Foundation

extension BlogExample {
    /// Checks the command line before an example does anything: `--help` (or `-h`) prints
    /// `usage` and exits 0; an option not in `options`, or one without its value, prints one
    /// line naming it (and the closest known option) and exits 2.
    ///
    /// ```swift
    /// BlogExample.checkArguments("blog-viewer [--store PATH]", options: ["--store"])
    /// ```
    public static func checkArguments(_ usage: String, options: [String], arguments: [String] = Array(CommandLine.arguments.dropFirst())) {
        if arguments.contains("--help") || arguments.contains("-h") {
            say("usage: \(usage)")
            exit(0)
        }
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            guard options.contains(argument) else {
                let near = options.min { distance($0, argument) < distance($1, argument) }
                let hint = near.map { distance($0, argument) <= 3 ? "; did you mean \($0)?" : "" } ?? ""
                fail("\(argument.hasPrefix("-") ? "unknown option" : "unexpected argument") '\(argument)'\(hint) (usage: \(usage))")
            }
            guard index + 1 < arguments.count, !arguments[index + 1].hasPrefix("--") else {
                fail("\(argument) needs a value (usage: \(usage))")
            }
            index += 2
        }
    }

    private static func fail(_ line: String) -> Never {
        FileHandle.standardError.write(Data("error: \(line)\n".utf8))
        exit(2)
    }

    /// Levenshtein distance, for suggesting the option meant.
    private static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        var row = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var previous = row[0]
            row[0] = i
            for j in 1...max(b.count, 1) where !b.isEmpty {
                let current = row[j]
                row[j] = min(row[j] + 1, row[j - 1] + 1, previous + (a[i - 1] == b[j - 1] ? 0 : 1))
                previous = current
            }
        }
        return row[b.count]
    }
}
