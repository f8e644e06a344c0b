import Foundation
import Synchronization
import Tributary

// soak-writer: the soak test's context writer (Tests/TributaryPipelineTests/SoakTests.swift).
// Saves a context in a loop, each save one transaction: two new posts linked to tags, a title
// edited on one of its earlier posts (merged over the batch updates that touch the same rows)
// and one of them deleted; until SIGTERM (exit 0) or SIGKILL. Any error prints one line and
// exits 1, so the soak sees it (a BUSY error among them).
//
//   soak-writer STORE

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: soak-writer STORE\n".utf8))
    exit(2)
}
let stop = StopFlag.onSIGTERM()

do {
    let coordinator = PersistentStoreCoordinator()
    let description = PersistentStoreDescription(url: URL(fileURLWithPath: arguments[1]))
    description.busyTimeout = 60
    try coordinator.addPersistentStore(with: description)
    let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
    context.name = "soak"
    context.transactionAuthor = "soak-writer"
    context.mergePolicy = .mergeByPropertyObjectTrump
    let prefix = "ctx-\(getpid())-"
    var round = 0
    while !stop.isSet {
        round += 1
        try context.performAndWait {
            var tags = try context.fetch(FetchRequest(entityName: "Tag", sortDescriptors: [SortDescriptor("name")]))
            if tags.count < 5 {
                let tag = try context.insertNewObject(forEntityName: "Tag")
                try tag.setValue(.string("tag-\(tags.count)"), forKey: "name")
                tags.append(tag)
            }
            for index in 0..<2 {
                let post = try context.insertNewObject(forEntityName: "Post")
                try post.setValue(.string("\(prefix)\(round)-\(index)"), forKey: "externalID")
                try post.setValue(.string("Context post \(round).\(index)"), forKey: "title")
                // Whole seconds: a stream keeps dates to the millisecond (README), and the soak compares a replica with the store.
                try post.setValue(.date(Date(timeIntervalSince1970: 1_767_225_600 + Double(round))), forKey: "createdAt")
                try post.add(tags[(round + index) % tags.count], toRelationship: "tags")
            }
            var mine = FetchRequest(entityName: "Post", predicate: try StorePredicate(format: "externalID BEGINSWITH %@", argumentArray: [.string(prefix)]),
                                    sortDescriptors: [SortDescriptor("externalID")])
            mine.fetchLimit = 4
            let earlier = try context.fetch(mine)
            if let edited = earlier.first { try edited.setValue(.string("Edited in round \(round)"), forKey: "title") }
            if earlier.count > 2 { context.delete(earlier[1]) }
            try context.save()
            context.reset()
        }
        usleep(useconds_t(Int.random(in: 30_000...120_000)))
    }
} catch {
    FileHandle.standardError.write(Data("soak-writer: \(error)\n".utf8))
    exit(1)
}

/// Set by SIGTERM. The handler runs on a dispatch queue, so it is made here, outside the
/// main actor that top-level code belongs to.
final class StopFlag: Sendable {
    private let state = Mutex<(set: Bool, source: (any DispatchSourceSignal)?)>((false, nil))

    var isSet: Bool { state.withLock { $0.set } }

    static func onSIGTERM() -> StopFlag {
        let flag = StopFlag()
        signal(SIGTERM, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
        source.setEventHandler { flag.state.withLock { $0.set = true } }
        source.resume()
        flag.state.withLock { $0.source = source }
        return flag
    }
}
