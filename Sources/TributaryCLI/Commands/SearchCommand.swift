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
            QUERY is an FTS5 query: words, "phrases", prefix*, AND, OR, NOT. Best match first: each \
            hit shows its place, entity, key, title (the first indexed attribute), its relevance as a \
            share of the best hit's score and the score (bm25, negated: higher is better), then a \
            snippet with the matches in [brackets] and the object ID. --json prints one hit a line \
            (score, relevance, and bm25's own rank, lower is better).
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
        // bm25 is lower for better matches; the score people read is its negation (higher is
        // better), and beside it how it compares with the best hit's, which reads the same
        // whatever the size of the index.
        let best = hits.first.map { -$0.rank } ?? 0
        for (number, hit) in hits.enumerated() {
            let score = -hit.rank
            let relevance = best > 0 ? max(0, min(1, score / best)) : 1
            if json {
                var w = JSONWriter()
                w.object { o in
                    o.field("object", hit.object)
                    o.field("entity", hit.entity)
                    o.field("title", hit.title)
                    o.field("score", .double(score))
                    o.field("relevance", .double(relevance))
                    o.field("rank", .double(hit.rank))
                    o.field("snippet", hit.snippet)
                }
                Console.print(w.text)
            } else {
                let key = hit.object.split(separator: "/").last.map(String.init) ?? hit.object
                let title = TerminalText.escaped(hit.title.count > 60 ? String(hit.title.prefix(59)) + "…" : hit.title)
                Console.print("\(number + 1). \(hit.entity) \(key)  \"\(title)\"  relevance \(Int((relevance * 100).rounded()))% (score \(String(format: "%.3g", score)))")
                Console.print("   \(TerminalText.escaped(hit.snippet))")
                Console.print("   \(hit.object)")
            }
        }
        if hits.isEmpty, !json { Console.print("no matches") }
    }
}
