import Foundation
import Tributary
import TributaryStreams

/// `export --to -`: the records as uncompressed NDJSON on standard output, for piping.
/// The snapshot (with `--snapshot`) comes first, then the history the filters select;
/// with `--consumer`, the export starts after the consumer and commits it once written.
struct StandardOutputExport {
    let coordinator: PersistentStoreCoordinator
    let options: ExportOptions
    let commitConsumer: Bool

    func run(follow: Bool) async throws {
        var encoder = options.format.makeEncoder(clock: options.clock)
        let storeID = coordinator.persistentStores[0].identifier
        var buffer: [UInt8] = []
        func drain(force: Bool) {
            guard force || buffer.count >= 1 << 16 else { return }
            FileHandle.standardOutput.write(Data(buffer))
            buffer.removeAll(keepingCapacity: true)
        }
        func keep(_ properties: [PropertyChange], entity: String) -> [PropertyChange] {
            options.excludedProperties.isEmpty ? properties
                : properties.filter { !options.excludedProperties.contains($0.name) && !options.excludedProperties.contains("\(entity).\($0.name)") }
        }
        var filter = options.filter
        if commitConsumer {
            let consumer = try (try? coordinator.historyConsumer(named: options.consumerName)) ?? coordinator.registerHistoryConsumer(options.consumerName, startingAt: .oldest)
            filter.after = max(filter.after ?? consumer.token, consumer.token)
        }
        if options.snapshot {
            var token = Int64(0)
            var index = 0
            let now = options.clock()
            try coordinator.enumerateSnapshot(entities: options.filter.entities, begin: { token = $0.value }) { object in
                let record = StreamRecord(position: StreamPosition(token: token, index: index, isSnapshot: true), storeID: storeID, timestamp: now, author: nil, contextName: nil,
                                          operation: .read, objectID: object.objectID, properties: keep(object.properties, entity: object.objectID.entityName))
                index += 1
                encoder.encode(record, into: &buffer)
                drain(force: false)
            }
            filter.after = PersistentHistoryToken(value: token, storeID: storeID)
        }
        while true {
            let current = try coordinator.currentPersistentHistoryToken()
            var pass = filter
            if let through = filter.through { pass.through = min(through, current) } else { pass.through = current }
            if pass.after.map({ $0 < pass.through! }) ?? true {
                try coordinator.enumerateHistoryChanges(.fetchHistory(withFilter: pass)) { view in
                    let change = try view.copy()
                    let record = StreamRecord(position: StreamPosition(token: view.token.value, index: view.index), storeID: storeID, timestamp: view.timestamp,
                                              author: view.author, contextName: view.contextName, operation: StreamOperation(view.changeType),
                                              objectID: change.changedObjectID, properties: keep(change.properties, entity: view.entityName))
                    encoder.encode(record, into: &buffer)
                    drain(force: false)
                }
            }
            drain(force: true)
            if commitConsumer, current.value > 0 { try coordinator.commitHistoryConsumer(options.consumerName, through: current) }
            guard follow, filter.through == nil else { return }
            filter.after = current
            do {
                _ = try await StreamExporter.waitForNextCommit(coordinator, after: current)
            } catch is CancellationError {
                return   // SIGINT or SIGTERM: everything read was written and committed
            }
        }
    }
}
