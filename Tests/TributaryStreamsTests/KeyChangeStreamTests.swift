import Foundation
import Testing
import Tributary
import TributaryTestSupport
@testable import TributaryStreams

/// A primary key another program changed reaches a stream as a delete and an insert that
/// name each other (native and CloudEvents `movedTo`/`movedFrom`, Debezium
/// `__debezium.newkey`/`__debezium.oldkey`), and reads back for replay with the link.
@Suite struct KeyChangeStreamTests {
    /// A blog store where the `sqlite3` shell moved tag `swift` to key 900; returns the old key.
    static func movedTag(_ source: PersistentStoreCoordinator, in directory: URL) throws -> Int64 {
        var tags = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"], ["name": "sqlite"]])
        tags.resultType = .objectIDs
        let old = try source.execute(tags).objectIDs[0].primaryKey
        let shell = try TributaryProcess.run([directory.appendingPathComponent("source.sqlite").path],
                                             stdin: ".timeout 5000\nUPDATE Tag SET _pk = 900, color = 'red' WHERE _pk = \(old);",
                                             executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        #expect(shell.status == 0, "\(shell.stderr)")
        return old
    }

    @Test func everyFormatCarriesTheLinkAndReadsItBack() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        let old = try Self.movedTag(source, in: temp.url)
        let model = try StreamFixtures.blogModel()
        for format in StreamFormat.allCases {
            let stream = temp.child("stream-\(format)")
            var options = ExportOptions()
            options.format = format
            options.consumerName = "export-\(format)"
            _ = try StreamExporter(coordinator: source, directory: stream, options: options).exportOnce()
            var lines: [String] = []
            var changes: [ReplayChange] = []
            try #require(try StreamManifest.load(from: stream)).forEachRecord(in: stream) { line, _ in
                guard try SchemaRecord.read(line, format: format) == nil else { return true }
                lines.append(String(decoding: line, as: UTF8.self))
                changes.append(try ReplayChange(line: line, format: format, model: model))
                return true
            }
            let moves = changes.filter { $0.movedFromKey != nil || $0.movedToKey != nil }
            #expect(moves.map { "\($0.operation.name) \($0.primaryKey) \($0.movedFromKey ?? -1) \($0.movedToKey ?? -1)" } == ["delete \(old) -1 900", "insert 900 \(old) -1"],
                    "\(format): \(lines)")
            #expect(moves.last?.values["color"] == "red" && moves.last?.values["name"] == "swift")
            #expect(changes.filter { $0.movedFromKey == nil && $0.movedToKey == nil }.count == 2, "the first inserts carry no link")
            let linked = lines.filter { $0.contains("moved") || $0.contains("__debezium.") }
            switch format {
            case .native, .cloudevents:
                #expect(linked.count == 2 && linked[0].contains(#""movedTo":"tributary://"#) && linked[0].contains("/Tag/p900\""))
                #expect(linked.count == 2 && linked[1].contains(#""movedFrom":"tributary://"#) && linked[1].contains("/Tag/p\(old)\""))
            case .debezium:
                #expect(linked.count == 2 && linked[0].contains(#""__debezium.newkey":{"_pk":900}"#) && linked[1].contains(#""__debezium.oldkey":{"_pk":\#(old)}"#))
            }
        }
    }

    @Test func aReplicaReplayingTheMoveEndsLikeTheSource() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        let old = try Self.movedTag(source, in: temp.url)
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        let replayer = try StreamReplayer(directory: stream)
        let replica = PersistentStoreCoordinator(managedObjectModel: try StreamFixtures.blogModel())
        let description = PersistentStoreDescription(url: temp.child("replica.sqlite"))
        description.persistentHistoryTracking = true
        try replica.addPersistentStore(with: description)
        _ = try replayer.replay(into: replica)
        // The delete comes first, so the insert's unique name is free.
        #expect(try StreamFixtures.dump(replica) == StreamFixtures.dump(source))
        // The replica's own history links the two keys as the source's does.
        let moves = try replica.fetchHistory(.fetchHistory(after: nil)).flatMap(\.changes).filter { $0.movedFrom != nil || $0.movedTo != nil }
        #expect(moves.map { "\($0.changeType) \($0.changedObjectID.primaryKey) \($0.movedFrom?.primaryKey ?? -1) \($0.movedTo?.primaryKey ?? -1)" }
                == ["delete \(old) -1 900", "insert 900 \(old) -1"], "\(moves)")
        #expect(moves.last?.properties.first { $0.name == "name" }?.after == "swift", "the insert carries the row's values")
    }

    /// Two rows that swapped keys: the first move finds its new key taken and falls back to a
    /// delete and an insert; the replica still ends like the source.
    @Test func aReplicaReplayingASwapEndsLikeTheSource() throws {
        let temp = TemporaryDirectory()
        let source = try StreamFixtures.source(in: temp.url)
        var tags = BatchInsertRequest(entityName: "Tag", objects: [["name": "swift"], ["name": "sqlite"]])
        tags.resultType = .objectIDs
        let keys = try source.execute(tags).objectIDs.map(\.primaryKey)
        let shell = try TributaryProcess.run([temp.child("source.sqlite").path], stdin: """
            .timeout 5000
            BEGIN; UPDATE Tag SET _pk = 0 WHERE _pk = \(keys[0]); UPDATE Tag SET _pk = \(keys[0]) WHERE _pk = \(keys[1]); UPDATE Tag SET _pk = \(keys[1]) WHERE _pk = 0; COMMIT;
            """, executable: URL(fileURLWithPath: "/usr/bin/sqlite3"))
        #expect(shell.status == 0, "\(shell.stderr)")
        let stream = temp.child("stream")
        _ = try StreamExporter(coordinator: source, directory: stream, options: ExportOptions()).exportOnce()
        let replica = PersistentStoreCoordinator(managedObjectModel: try StreamFixtures.blogModel())
        let description = PersistentStoreDescription(url: temp.child("replica.sqlite"))
        description.persistentHistoryTracking = true
        try replica.addPersistentStore(with: description)
        _ = try StreamReplayer(directory: stream).replay(into: replica)
        #expect(try StreamFixtures.dump(replica) == StreamFixtures.dump(source))
    }

    @Test func aRecordWithoutTheLinkReadsAsBefore() throws {
        let model = try StreamFixtures.blogModel()
        let line = EncodingTests.encode(.native, [EncodingTests.delete])[0]
        let change = try ReplayChange(line: ArraySlice(line.utf8), format: .native, model: model)
        #expect(change.operation == .delete && change.movedToKey == nil && change.movedFromKey == nil)
        let bad = line.replacingOccurrences(of: #""type":"delete","#, with: #""type":"delete","movedTo":"tributary://x/Post/p1","#)
        #expect(throws: TributaryError.self) { try ReplayChange(line: ArraySlice(bad.utf8), format: .native, model: model) }
    }
}
