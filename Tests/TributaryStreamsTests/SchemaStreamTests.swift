import Foundation
import TributaryTestSupport
import Testing
import Tributary
@testable import TributaryStreams

/// Streams carry the source's model changes (issue 23): a schema record in its place, the
/// manifest's model versions, verify checking each record against the model at its
/// position, and replay migrating the target there.
@Suite struct SchemaStreamTests {
    /// A source exported before and after an additive migration (`Post.views`), one stream.
    struct Migrated {
        let temp = TemporaryDirectory()
        var stream: URL { temp.child("stream") }
        /// The source, opened with the grown model.
        var source: PersistentStoreCoordinator!
        /// The last token before the migration, and the rows then.
        var before: PersistentHistoryToken!
        var rowsBefore: [String] = []
        /// The migration's schema transaction.
        var schemaToken: PersistentHistoryToken!
    }

    /// The blog model with `Post.views` (integer, default 0) added.
    static func grownModel() throws -> ManagedObjectModel {
        var entities = try StreamFixtures.blogModel().entities
        let post = try #require(entities.firstIndex { $0.name == "Post" })
        entities[post].attributes.append(AttributeDescription(name: "views", type: .integer, defaultValue: .integer(0)))
        return try ManagedObjectModel(entities: entities)
    }

    static func open(_ url: URL, _ model: ManagedObjectModel) throws -> PersistentStoreCoordinator {
        let description = PersistentStoreDescription(url: url)
        description.persistentHistoryTracking = true
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(with: description)
        return coordinator
    }

    static func export(_ source: PersistentStoreCoordinator, to stream: URL, format: StreamFormat) throws {
        var options = ExportOptions()
        options.format = format
        options.maximumSegmentRecords = 20
        options.recordsPerFrame = 4
        _ = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
    }

    /// Workload, export, migration (reopening with the grown model), writes using `views`, export again.
    static func migrated(format: StreamFormat = .native) throws -> Migrated {
        var m = Migrated()
        let url = m.temp.child("source.sqlite")
        let first = try open(url, StreamFixtures.blogModel())
        try StreamFixtures.workload(first, posts: 10, rounds: 2)
        try export(first, to: m.stream, format: format)
        m.before = try first.currentPersistentHistoryToken()
        m.rowsBefore = try StreamFixtures.dump(first)
        first.persistentStores.forEach(first.remove)

        let source = try open(url, grownModel())
        m.schemaToken = try #require(try source.schemaChanges(after: m.before).first?.token)
        try StreamFixtures.workload(source, posts: 6, rounds: 1, prefix: "b-")
        var views = BatchUpdateRequest(entityName: "Post", propertiesToUpdate: ["views": .integer(7)])
        views.predicate = try StorePredicate(format: "title == %@", "Edited 0")
        try source.execute(views)
        try source.execute(BatchInsertRequest(entityName: "Post", objects: [[
            "externalID": "viewed", "title": "Viewed", "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_500)), "views": .integer(42),
        ]]))
        try export(source, to: m.stream, format: format)
        m.source = source
        return m
    }

    @Test func theStreamHoldsTheSchemaRecordInPlaceAndTheManifestListsTheModels() throws {
        let m = try Self.migrated()
        let manifest = try #require(try StreamManifest.load(from: m.stream))
        let original = try StreamFixtures.blogModel(), grown = try Self.grownModel()
        let schemaPosition = StreamPosition(token: m.schemaToken.value, index: 0)
        #expect(manifest.models == [.init(position: StreamPosition(token: 0, index: 0), version: original.versionHash),
                                    .init(position: schemaPosition, version: grown.versionHash)])
        // model.json is the model the stream starts with, not the source's model now.
        let start = try ManagedObjectModel.fromJSON(Data(contentsOf: m.stream.appendingPathComponent(StreamManifest.modelFileName)))
        #expect(start == original)

        var schemas: [SchemaRecord] = []
        var positions: [StreamPosition] = []
        try manifest.forEachRecord(in: m.stream) { line, position in
            positions.append(position)
            if let schema = try SchemaRecord.read(line, format: .native) { schemas.append(schema) }
            return true
        }
        #expect(schemas.map(\.position) == [schemaPosition])
        #expect(schemas.first?.change.model == grown && schemas.first?.change.changes == ["added Post.views"])
        #expect(positions.contains { $0.token == m.before.value } && positions.contains { $0.token == m.schemaToken.value + 1 })
        // The schema transaction is whole in the stream: no gap before or after it.
        let summary = try StreamVerifier(directory: m.stream).verify()
        #expect(summary.schemaRecords == 1 && summary.records == positions.count)
    }

    @Test func aStreamOfOneChangeTypeStillCarriesTheSchemaRecord() throws {
        let m = try Self.migrated()
        let inserts = m.temp.child("inserts")
        var options = ExportOptions()
        options.filter.changeTypes = [.insert]
        options.consumerName = "inserts"
        _ = try StreamExporter(coordinator: m.source, directory: inserts, options: options).exportOnce()
        let manifest = try #require(try StreamManifest.load(from: inserts))
        var schemas: [StreamPosition] = []
        try manifest.forEachRecord(in: inserts) { line, position in
            if try SchemaRecord.read(line, format: .native) != nil { schemas.append(position) }
            return true
        }
        #expect(schemas == [StreamPosition(token: m.schemaToken.value, index: 0)], "without it, the inserts after the migration have no model to be read with")
        #expect(try StreamVerifier(directory: inserts).verify().schemaRecords == 1)
    }

    @Test func replayBeforeAndAfterTheMigrationEqualsTheSourceThen() throws {
        let m = try Self.migrated()
        let replayer = try StreamReplayer(directory: m.stream)
        #expect(replayer.model == (try StreamFixtures.blogModel()))

        let before = try replayer.openTarget(at: m.temp.child("before.sqlite"))
        let summaryBefore = try replayer.replay(into: before, until: .token(m.before))
        #expect(summaryBefore.last?.token == m.before.value)
        #expect(try StreamFixtures.dump(before) == m.rowsBefore)
        #expect(before.managedObjectModel == (try StreamFixtures.blogModel()))

        let after = try replayer.openTarget(at: m.temp.child("after.sqlite"))
        _ = try replayer.replay(into: after)
        let rows = try StreamFixtures.dump(after)
        #expect(rows == (try StreamFixtures.dump(m.source)))
        #expect(rows.contains { $0.contains("views=integer(42)") || $0.contains("views=42") })
        #expect(after.managedObjectModel == m.source.managedObjectModel)
        #expect(after.managedObjectModel?.versionHash == (try Self.grownModel()).versionHash)

        // At the schema transaction itself: the grown model, the rows of before (views 0).
        let at = try replayer.openTarget(at: m.temp.child("at.sqlite"))
        _ = try replayer.replay(into: at, until: .token(m.schemaToken))
        #expect(at.managedObjectModel?.entity(named: "Post")?.attribute(named: "views") != nil)
        #expect(try StreamFixtures.dump(at).count == m.rowsBefore.count)

        // Resuming the replay that stopped before the migration migrates it and reaches the end.
        _ = try replayer.replay(into: before, resume: true)
        #expect(try StreamFixtures.dump(before) == rows)
        #expect(before.managedObjectModel == m.source.managedObjectModel)
    }

    /// The blog model with `Post.content` renamed to `body` (`renamedFrom: content`).
    static func renamedModel() throws -> ManagedObjectModel {
        var entities = try StreamFixtures.blogModel().entities
        let post = try #require(entities.firstIndex { $0.name == "Post" })
        let content = try #require(entities[post].attributes.firstIndex { $0.name == "content" })
        entities[post].attributes[content].name = "body"
        entities[post].attributes[content].renamingIdentifier = "content"
        return try ManagedObjectModel(entities: entities)
    }

    @Test func aRenameThroughAnExplicitMigrationIsCarriedToAReplica() throws {
        let temp = TemporaryDirectory()
        let url = temp.child("source.sqlite"), stream = temp.child("stream")
        let first = try Self.open(url, StreamFixtures.blogModel())
        try StreamFixtures.workload(first, posts: 6, rounds: 1)
        try Self.export(first, to: stream, format: .native)
        first.persistentStores.forEach(first.remove)
        let changes = try PersistentStoreCoordinator(managedObjectModel: try Self.renamedModel()).migrateStore(at: url)
        #expect(changes == ["renamed Post.content to Post.body"])
        let source = try Self.open(url, try Self.renamedModel())
        try source.execute(BatchInsertRequest(entityName: "Post", objects: [[
            "externalID": "renamed", "title": "After", "body": "new body", "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_600)),
        ]]))
        try Self.export(source, to: stream, format: .native)

        let replayer = try StreamReplayer(directory: stream)
        let replica = try replayer.openTarget(at: temp.child("replica.sqlite"))
        _ = try replayer.replay(into: replica)
        #expect(replica.managedObjectModel?.entity(named: "Post")?.attribute(named: "body") != nil)
        #expect(replica.managedObjectModel?.entity(named: "Post")?.attribute(named: "content") == nil)
        let rows = try StreamFixtures.dump(replica)
        #expect(rows == (try StreamFixtures.dump(source)))
        #expect(rows.contains { $0.contains("new body") } && rows.filter { $0.contains("body=") }.count > 1, "\(rows.prefix(3))")
    }

    @Test func aTargetMigratedByAnEarlierReplayOpensWithItsOwnModel() throws {
        let m = try Self.migrated()
        let replayer = try StreamReplayer(directory: m.stream)
        let url = m.temp.child("copy.sqlite")
        let first = try replayer.openTarget(at: url)
        _ = try replayer.replay(into: first, until: .token(m.schemaToken))
        first.persistentStores.forEach(first.remove)
        let again = try replayer.openTarget(at: url)
        _ = try replayer.replay(into: again, resume: true)
        #expect(try StreamFixtures.dump(again) == (try StreamFixtures.dump(m.source)))
    }

    @Test(arguments: [StreamFormat.debezium, .cloudevents])
    func otherFormatsCarrySchemaRecordsThatVerifyAndReplayRead(format: StreamFormat) throws {
        let m = try Self.migrated(format: format)
        let summary = try StreamVerifier(directory: m.stream).verify()
        #expect(summary.schemaRecords == 1)
        let replayer = try StreamReplayer(directory: m.stream)
        let copy = try replayer.openTarget(at: m.temp.child("copy.sqlite"))
        _ = try replayer.replay(into: copy)
        #expect(try StreamFixtures.dump(copy) == (try StreamFixtures.dump(m.source)))
        #expect(copy.managedObjectModel == m.source.managedObjectModel)
    }

    @Test func verifyNamesARecordThatDoesNotFitTheModelAtItsPosition() throws {
        let m = try Self.migrated()
        // Unedited, it passes.
        _ = try StreamVerifier(directory: m.stream).verify()
        // A record before the migration that sets views, which the model there lacks.
        let edited = try #require(try Self.edit(m.stream) { line, position in
            guard position.token < m.schemaToken.value, line.contains(#""type":"insert""#), line.contains(#""entity":"Post""#) else { return nil }
            return line.replacingOccurrences(of: #""title":"#, with: #""views":1,"title":"#)
        })
        let error = try #require(throws: TributaryError.self) { try StreamVerifier(directory: m.stream).verify() }
        #expect(error.code == .damagedStream)
        #expect(error.message.contains("record at \(edited)") && error.message.contains("'views'") && error.message.contains("Post"), "\(error.message)")
        // Replay, which does not read the models in its check, still refuses the record.
        let replayer = try StreamReplayer(directory: m.stream)
        #expect(throws: TributaryError.self) { _ = try replayer.replay(into: try replayer.openTarget(at: m.temp.child("copy.sqlite"))) }
    }

    @Test func verifyNotesAValueOfTheWrongTypeAfterTheMigration() throws {
        let m = try Self.migrated()
        #expect(try StreamVerifier(directory: m.stream).verify().valueMismatches == 0)
        let edited = try #require(try Self.edit(m.stream) { line, position in
            guard position.token > m.schemaToken.value, line.contains(#""views":42"#) else { return nil }
            return line.replacingOccurrences(of: #""views":42"#, with: #""views":"many""#)
        })
        // What the store held (another program's text in an integer column) is noted, not damage.
        let summary = try StreamVerifier(directory: m.stream).verify()
        #expect(summary.valueMismatches == 1)
        let first = try #require(summary.firstValueMismatch)
        #expect(first.contains("record at \(edited)") && first.contains("'views' as the text \"many\"") && first.contains("integer"), "\(first)")
        // Replay writes it as given: the replica holds the text, as the source would have.
        let replayer = try StreamReplayer(directory: m.stream)
        let copy = try replayer.openTarget(at: m.temp.child("copy.sqlite"))
        _ = try replayer.replay(into: copy)
        var request = FetchRequest(entityName: "Post")
        request.predicate = try StorePredicate(format: "externalID == %@", "viewed")
        let viewed = try #require(try copy.fetch(request).first)
        #expect(viewed["views"] == .string("many"))
    }

    @Test func verifyFindsASchemaRecordTheManifestDoesNotList() throws {
        let m = try Self.migrated()
        var manifest = try #require(try StreamManifest.load(from: m.stream))
        manifest.models = Array(manifest.models!.prefix(1))
        try manifest.save(to: m.stream)
        let error = try #require(throws: TributaryError.self) { try StreamVerifier(directory: m.stream).verify() }
        #expect(error.message.contains("the manifest lists model changes []"), "\(error.message)")
    }

    @Test func manifestsWithoutModelsStillLoad() throws {
        let m = try Self.migrated()
        let url = m.stream.appendingPathComponent(StreamManifest.fileName)
        var json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        json["models"] = nil
        try JSONSerialization.data(withJSONObject: json).write(to: url)
        let manifest = try #require(try StreamManifest.load(from: m.stream))
        #expect(manifest.models == nil)
        #expect(try StreamVerifier(directory: m.stream).verify().schemaRecords == 1)
    }

    /// Rewrites the first record `change` returns a new line for (recompressing its segment
    /// and updating the manifest); returns its position.
    static func edit(_ stream: URL, _ change: (String, StreamPosition) -> String?) throws -> StreamPosition? {
        var manifest = try #require(try StreamManifest.load(from: stream))
        for (i, segment) in manifest.segments.enumerated() {
            var lines: [(String, StreamPosition)] = []
            var edited: StreamPosition?
            try SegmentReader(directory: stream, segment: segment, format: manifest.format, decoder: try ZstdFrameDecoder()).forEachRecord { line, position in
                var text = String(decoding: line, as: UTF8.self)
                if edited == nil, let new = change(text, position) {
                    text = new
                    edited = position
                }
                lines.append((text, position))
                return true
            }
            guard let edited else { continue }
            let writer = try SegmentWriter(directory: stream, encoder: try ZstdFrameEncoder(), recordsPerFrame: 4)
            for (text, position) in lines { try writer.append(Array((text + "\n").utf8), position: position, timestamp: segment.firstTimestamp) }
            var entry = try writer.finish(previous: segment.previous)
            entry.firstTimestamp = segment.firstTimestamp
            entry.lastTimestamp = segment.lastTimestamp
            manifest.segments[i] = entry
            try manifest.save(to: stream)
            return edited
        }
        return nil
    }
}
