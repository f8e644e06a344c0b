import ArgumentParser
import Foundation
import Tributary
import TributaryPipeline

/// `tributary search INDEX QUERY [--limit N] [--json]`.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search a full-text index written by an fts sink, best matches first.",
        discussion: """
            Example: tributary search out/search.sqlite 'swift AND linux' --limit 5
            QUERY is an FTS5 query: words, "phrases", prefix*, AND, OR, NOT. Ranked by bm25;
            snippets show the matches in [brackets]. --json prints one hit a line.
            """
    )

    @Argument(help: "The index file.")
    var index: String

    @Argument(help: "The FTS5 query.")
    var query: String

    @Option(name: .long, help: "The most hits to print.")
    var limit = 10

    @Flag(name: .long, help: "NDJSON: one hit a line.")
    var json = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be positive") }
    }

    func run() async throws {
        let hits = try FullTextIndex(path: index, create: false).search(query, limit: limit)
        for hit in hits {
            if json {
                var w = JSONWriter()
                w.object { o in
                    o.field("object", hit.object)
                    o.field("entity", hit.entity)
                    o.field("rank", .double(hit.rank))
                    o.field("snippet", hit.snippet)
                }
                Console.print(w.text)
            } else {
                Console.print("\(hit.entity) \(hit.object) (\(String(format: "%.3f", hit.rank)))\n  \(hit.snippet.replacingOccurrences(of: "\n", with: " "))")
            }
        }
        if hits.isEmpty, !json { Console.print("no matches") }
    }
}
