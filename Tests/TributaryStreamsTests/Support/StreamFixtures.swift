import Foundation
import Tributary
import TributaryStreams

/// Stores, workloads and comparisons the stream tests share.
enum StreamFixtures {
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    static func blogModel() throws -> ManagedObjectModel {
        try ManagedObjectModel(yamlFile: repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
    }

    /// A new blog store with history in `directory`.
    static func source(in directory: URL, name: String = "source.sqlite") throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: directory.appendingPathComponent(name))
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try blogModel())
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    static func objectID(_ coordinator: PersistentStoreCoordinator, _ entity: String, _ key: Int64) -> ObjectID {
        coordinator.persistentStores[0].objectID(entity: entity, primaryKey: key)
    }

    /// Tags, posts linked to tags, attachments; then `rounds` of updates, link changes and deletes.
    /// Returns the token after each step.
    @discardableResult
    static func workload(_ coordinator: PersistentStoreCoordinator, posts: Int = 12, rounds: Int = 3, prefix: String = "") throws -> [PersistentHistoryToken] {
        var tokens: [PersistentHistoryToken] = []
        var tags = BatchInsertRequest(entityName: "Tag", objects: ["swift", "sqlite", "linux"].map { ["name": .string(prefix + $0)] })
        tags.resultType = .objectIDs
        let tagIDs = try coordinator.execute(tags).objectIDs
        tokens.append(try coordinator.currentPersistentHistoryToken())
        var postRequest = BatchInsertRequest(entityName: "Post", objects: (0..<posts).map { i in
            ["externalID": .string("\(prefix)ext-\(i)"), "title": .string("Post \(i)"), "content": i % 2 == 0 ? .string("Body \(i)\n\"quoted\"") : .null,
             "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_000 + Double(i))), "tags": .array([.objectID(tagIDs[i % tagIDs.count])])]
        })
        postRequest.resultType = .objectIDs
        let postIDs = try coordinator.execute(postRequest).objectIDs
        tokens.append(try coordinator.currentPersistentHistoryToken())
        try coordinator.execute(BatchInsertRequest(entityName: "Attachment", objects: postIDs.prefix(4).enumerated().map { i, post in
            ["fileName": .string("\(prefix)file\(i).png"), "post": .objectID(post)]
        }))
        tokens.append(try coordinator.currentPersistentHistoryToken())
        for round in 0..<rounds {
            var update = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["title": .string("Edited \(round)")])
            update.objectIDs = [postIDs[round % postIDs.count], postIDs[(round + 3) % postIDs.count]]
            update.transaction = TransactionMetadata(author: "editor")
            try coordinator.execute(update)
            tokens.append(try coordinator.currentPersistentHistoryToken())
            var links = BatchUpdateRequest(entityName: "Post")
            links.objectIDs = [postIDs[round % postIDs.count]]
            links.addedLinks = ["tags": [tagIDs[(round + 1) % tagIDs.count]]]
            links.removedLinks = ["tags": [tagIDs[round % tagIDs.count]]]
            try coordinator.execute(links)
            tokens.append(try coordinator.currentPersistentHistoryToken())
            var color = BatchUpdateRequest(entityName: "Tag", propertiesToUpdate: ["color": .string("color-\(round)")])
            color.objectIDs = [tagIDs[round % tagIDs.count]]
            try coordinator.execute(color)
            tokens.append(try coordinator.currentPersistentHistoryToken())
            var delete = BatchDeleteRequest(entityName: "Post")
            delete.objectIDs = [postIDs[postIDs.count - 1 - round]]
            try coordinator.execute(delete)
            tokens.append(try coordinator.currentPersistentHistoryToken())
        }
        // Delete rules: a post with an attachment (cascade).
        var cascade = BatchDeleteRequest(entityName: "Post")
        cascade.objectIDs = [postIDs[1]]
        try coordinator.execute(cascade)
        tokens.append(try coordinator.currentPersistentHistoryToken())
        return tokens
    }

    /// Every row and many-to-many link, store IDs left out, in a stable order.
    static func dump(_ coordinator: PersistentStoreCoordinator) throws -> [String] {
        var lines: [String] = []
        func text(_ value: AttributeValue?) -> String {
            switch value {
            case .objectID(let id)?: return "\(id.entityName)/p\(id.primaryKey)"
            case let value?: return "\(value)"
            case nil: return "-"
            }
        }
        // Attributes derived with now() hold each store's own time of writing: left out.
        guard let model = coordinator.managedObjectModel else { return [] }
        var local: Set<String> = []
        for entity in model.entities {
            for attribute in entity.attributes where attribute.derivation == .now { local.insert("\(entity.name).\(attribute.name)") }
        }
        try coordinator.enumerateSnapshot(begin: { _ in }) { object in
            let values = object.properties.filter { !local.contains("\(object.objectID.entityName).\($0.name)") }.map { property in
                property.isMembershipChange ? "\(property.name)=[\(property.added.map { "\($0.entityName)/p\($0.primaryKey)" }.sorted().joined(separator: ","))]"
                    : "\(property.name)=\(property.isValueExcluded ? "excluded" : text(property.after))"
            }
            lines.append("\(object.objectID.entityName)/p\(object.objectID.primaryKey) " + values.joined(separator: " "))
        }
        return lines.sorted()
    }
}

/// A temporary directory removed when released.
final class TemporaryDirectory: Sendable {
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("tributary-streams-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    func child(_ name: String) -> URL { url.appendingPathComponent(name) }
    deinit { try? FileManager.default.removeItem(at: url) }
}
