import BlogExampleSupport
import Foundation
import Tributary

// blog-viewer: a second process with a view context pinned to a query generation.
// It merges the importer's saves through the history watcher (the context's
// automaticallyMergesChangesFromParent on a store posting remote change
// notifications) and prints the post counts per tag whenever they change. Every
// line is read in one generation, so it never shows half of an import: the sum
// of the counts always matches the posts' tags.
//
//   swift run blog-viewer --store blog.sqlite

await BlogExample.main {
    BlogExample.checkArguments("blog-viewer [--store PATH]", options: ["--store"])
    let store = BlogExample.argument("--store", default: "blog.sqlite")
    let container = try await BlogExample.openStore(store, name: "viewer")
    let stop = BlogExample.stopOnSignals()
    let context = container.newBackgroundContext()
    context.name = "viewer"
    try context.setQueryGenerationFrom(.current)
    context.automaticallyMergesChangesFromParent = true
    let tags = try FetchedResultsController(fetchRequest: FetchRequest(entityName: "Tag", sortDescriptors: [SortDescriptor("name")]), managedObjectContext: context)
    try tags.performFetch()

    /// One consistent line: counts per tag and the number of tag links, read in the context's generation.
    func line() throws -> String {
        try context.performAndWait {
            let objects = tags.fetchedObjects
            let counts = try objects.map { tag -> (String, Int) in
                (try tag.value(forKey: "name", as: String.self), try tag.value(forKey: "postCount", as: Int.self))
            }
            let posts = try context.count(for: FetchRequest(entityName: "Post"))
            let links = try objects.reduce(0) { $0 + (try $1.objectIDs(forRelationshipNamed: "posts").count) }
            let consistent = links == counts.reduce(0) { $0 + $1.1 }
            return "posts=\(posts) " + counts.map { "\($0.0)=\($0.1)" }.joined(separator: " ") + (consistent ? " consistent" : " INCONSISTENT")
        }
    }

    BlogExample.say(try line())
    // Each merge of the importer's saves that changes the tags prints one line.
    let changes = tags.changes()
    let printing = Task {
        var last = ""
        for await _ in changes {
            guard let now = try? line(), now != last else { continue }
            BlogExample.say(now)
            last = now
        }
    }
    while !stop.requested { await stop.sleep(.seconds(1)) }
    printing.cancel()
    BlogExample.say("viewer stopped")
}
