import BlogExampleSupport
import Foundation
import Tributary
import TributaryPipeline

// search-indexer: a pipeline built in code (no YAML file) feeding a SQLite FTS5
// index of posts' titles and tags' names, kept with its position in one
// transaction, and a query loop printing the best hits as the index grows.
//
//   swift run search-indexer --store blog.sqlite --index search.sqlite [--query swift]

await BlogExample.main {
    BlogExample.checkArguments("search-indexer [--store PATH] [--index PATH] [--query TEXT]", options: ["--store", "--index", "--query"])
    let store = BlogExample.argument("--store", default: "blog.sqlite")
    let indexPath = BlogExample.argument("--index", default: "search.sqlite")
    let query = BlogExample.argument("--query", default: "swift")
    let stop = BlogExample.stopOnSignals()
    // Opening the store once makes sure it exists with the blog model.
    _ = try await BlogExample.openStore(store, name: "indexer")
    let pipeline = try PipelineFile(yaml: """
        name: search-indexer
        source:
          store: \(store)
          consumer: search-indexer
          entities: [Post, Tag]
        sinks:
          - type: fts
            path: \(indexPath)
            entities:
              Post: [title, content]
              Tag: [name]
            on_error: stop
        checkpoint:
          records: 500
        """, path: "search-indexer (in code)")
    let runner = try PipelineRunner(pipeline: pipeline)
    var indexed = 0
    var lastHits = ""
    while !stop.requested {
        let step = try await runner.runOnce()
        indexed += step.delivered
        if step.read == 0 {
            let hits = try FullTextIndex(path: indexPath, create: false).search(query, limit: 3)
            let line = hits.map { "\($0.entity): \($0.snippet)" }.joined(separator: " | ")
            if line != lastHits {
                BlogExample.say("indexed \(indexed) records; '\(query)': \(hits.isEmpty ? "no hits" : line)")
                lastHits = line
            }
            await stop.sleep(.milliseconds(250))
        }
    }
    try await runner.finish()
    BlogExample.say("search-indexer stopped after \(indexed) records")
}
