import BlogExampleSupport
import Foundation
import Tributary

// audit-tail: `tributary tail --follow` as a library user writes it. A history
// watcher with a named consumer (it survives restarts: a restarted tail goes on
// after the last transaction it printed), filtered to other writers' posts,
// printing each update's values before and after.
//
//   swift run audit-tail --store blog.sqlite [--consumer audit-tail] [--author importer]

await BlogExample.main {
    BlogExample.checkArguments("audit-tail [--store PATH] [--consumer NAME] [--author NAME]", options: ["--store", "--consumer", "--author"])
    let store = BlogExample.argument("--store", default: "blog.sqlite")
    let author = BlogExample.argument("--author", default: "")
    let container = try await BlogExample.openStore(store, name: "audit")
    let stop = BlogExample.stopOnSignals()
    var configuration = HistoryWatcher.Configuration(consumerName: BlogExample.argument("--consumer", default: "audit-tail"))
    configuration.filter.entities = ["Post"]
    if !author.isEmpty { configuration.filter.authors = [author] }
    let watcher = try HistoryWatcher(coordinator: container.persistentStoreCoordinator, configuration: configuration)
    BlogExample.say("tailing from \(watcher.checkpoint)")
    let tail = Task.detached {
        await watcher.run { batch in
            for transaction in batch {
                var inserted = 0
                for change in transaction.changes {
                    switch change.changeType {
                    case .insert:
                        inserted += 1
                    case .update:
                        let values = change.updatedProperties.filter { !$0.isMembershipChange && $0.name != "updatedAt" }
                            .map { "\($0.name): \($0.before ?? .null) → \($0.after ?? .null)" }
                        if !values.isEmpty { BlogExample.say("  \(transaction.token) update \(change.changedObjectID.entityName)/p\(change.changedObjectID.primaryKey) " + values.joined(separator: "; ")) }
                    case .delete:
                        BlogExample.say("  \(transaction.token) delete \(change.changedObjectID.entityName)/p\(change.changedObjectID.primaryKey)")
                    }
                }
                BlogExample.say("\(transaction.token) \(transaction.author ?? "-") \(transaction.changes.count) changes (\(inserted) inserts)")
            }
        }
    }
    while !stop.requested { await stop.sleep(.seconds(1)) }
    tail.cancel()
    await tail.value
    BlogExample.say("audit-tail stopped at \(watcher.checkpoint)")
}
