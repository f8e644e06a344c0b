import BlogExampleSupport
import Foundation
import Tributary

// blog-importer: imports posts in batches as author "importer", beside the app.
// A batch insert upserts on Post.externalID (unique), so re-imported posts are
// updated, not duplicated (reference talk 003). Runs until SIGINT/SIGTERM, or
// for --rounds rounds; each round is one transaction.
//
//   swift run blog-importer --store blog.sqlite [--feed posts.ndjson] [--batch 200] [--interval-ms 500] [--rounds N]

await BlogExample.main {
    BlogExample.checkArguments("blog-importer [--store PATH] [--batch N] [--interval-ms MS] [--rounds N (0: until stopped)] [--feed FILE]", options: ["--store", "--batch", "--interval-ms", "--rounds", "--feed"])
    let store = BlogExample.argument("--store", default: "blog.sqlite")
    let batch = Int(BlogExample.argument("--batch", default: "200")) ?? 200
    let interval = Int(BlogExample.argument("--interval-ms", default: "500")) ?? 500
    let rounds = Int(BlogExample.argument("--rounds", default: "0")) ?? 0
    let feed = BlogExample.argument("--feed", default: "")
    let container = try await BlogExample.openStore(store, name: "importer")
    let coordinator = container.persistentStoreCoordinator
    let stop = BlogExample.stopOnSignals()
    let importer = TransactionMetadata(author: "importer", contextName: "feed")

    if !feed.isEmpty {
        // A given NDJSON feed, imported whole (checked first, then written batch by batch).
        let result = try NDJSONImporter(coordinator: coordinator, entityName: "Post", batchSize: batch, transaction: importer).importFile(at: URL(fileURLWithPath: feed))
        BlogExample.say("imported \(feed): \(result.inserted) new, \(result.updated) updated")
        return
    }
    let tagNames = ["swift", "sqlite", "linux", "coredata", "history"]
    var tagRequest = BatchInsertRequest(entityName: "Tag", objects: tagNames.map { ["name": .string($0)] })
    tagRequest.resultType = .objectIDs
    tagRequest.transaction = importer
    let tags = try coordinator.execute(tagRequest).objectIDs
    var round = 0
    var next = try coordinator.count(for: FetchRequest(entityName: "Post"))
    while !stop.requested && (rounds == 0 || round < rounds) {
        round += 1
        // New posts, and the previous round's posts again (re-imported: updated in place).
        let fresh = (next..<next + batch).map { i -> [String: AttributeValue] in
            ["externalID": .string("post-\(i)"), "title": .string("Post \(i)"), "createdAt": .date(Date()),
             "tags": .array([.objectID(tags[i % tags.count]), .objectID(tags[(i / 3) % tags.count])])]
        }
        let again = (max(0, next - batch / 4)..<next).map { i -> [String: AttributeValue] in
            ["externalID": .string("post-\(i)"), "title": .string("Post \(i) (re-imported in round \(round))"), "createdAt": .date(Date())]
        }
        var request = BatchInsertRequest(entityName: "Post", objects: fresh + again)
        request.transaction = importer
        let result = try coordinator.execute(request)
        next += batch
        let token = try coordinator.currentPersistentHistoryToken()
        BlogExample.say("round \(round): \(result.inserted) new, \(result.updated) updated (re-imported), token \(token)")
        await stop.sleep(.milliseconds(interval))
    }
    BlogExample.say("importer stopped after \(round) rounds")
}
