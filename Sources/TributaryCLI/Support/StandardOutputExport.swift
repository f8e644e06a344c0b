import Foundation
import Tributary
import TributaryStreams

/// `export --to -`: the records as uncompressed NDJSON on standard output, for piping.
/// The snapshot (with `--snapshot`) comes first, then the history the filters select,
/// schema records (model changes) in their place;
/// with `--consumer`, the export starts after the consumer and commits it once written.
struct StandardOutputExport {
    let coordinator: PersistentStoreCoordinator
    let options: ExportOptions
    let commitConsumer: Bool

    func run(follow: Bool) async throws {
        var encoder = options.format.makeEncoder(clock: options.clock)
        var buffer: [UInt8] = []
        func drain(force: Bool) {
            guard force || buffer.count >= 1 << 16 else { return }
            FileHandle.standardOutput.write(Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
        guard let storeID = coordinator.persistentStores.first?.identifier else { throw TributaryError(.noStore, "the coordinator has no store") }
        let follower = try HistoryFollower(coordinator: coordinator, consumerName: commitConsumer ? options.consumerName : nil, filter: options.filter)
        var after = options.filter.after?.value ?? 0
        if commitConsumer { after = max(after, try follower.start(at: .oldest).value) }
        // The model each record was made under, for what the encoder writes by it.
        var spans = ModelSpans(coordinator: coordinator)
        func encode(_ record: StreamRecord) throws {
            if let model = try spans.model(at: record.position.token) { encoder.use(model) }
            encoder.encode(record, into: &buffer)
        }
        if options.snapshot {
            var token = Int64(0)
            var index = 0
            let now = options.clock()
            try coordinator.enumerateSnapshot(entities: options.filter.entities, begin: { token = $0.value }) { object in
                let position = StreamPosition(token: token, index: index, isSnapshot: true)
                try encode(StreamRecord(snapshot: object, position: position, timestamp: now, excluding: options.excludedProperties))
                index += 1
                drain(force: false)
            }
            after = token
        }
        var waiter = CommitWaiter(coordinator)   // listening before the first read
        while true {
            var head = try follower.head(after: after)
            if let through = options.filter.through { head = min(head, through) }
            _ = try follower.readChanges(after: after, through: head, schema: { event in
                encoder.encodeSchema(SchemaRecord(event, storeID: storeID), into: &buffer)
                drain(force: false)
            }, gaps: { event in
                encoder.encodeGap(CaptureGapRecord(event, storeID: storeID), into: &buffer)
                drain(force: false)
            }) { view in
                try encode(try StreamRecord(view, excluding: options.excludedProperties))
                drain(force: false)
            }
            drain(force: true)
            try follower.commit(through: max(after, head.value))   // never back, when --through is behind the consumer
            guard follow, options.filter.through == nil else { return }
            after = head.value
            do {
                _ = try await waiter.waitForCommit(after: head)
            } catch is CancellationError {
                return   // SIGINT or SIGTERM: everything read was written and committed
            }
        }
    }
}
