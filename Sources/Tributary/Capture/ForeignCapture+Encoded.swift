import Foundation

extension ForeignCapture {
    /// One folded group as the fold keeps it until the walk ends: its history payload,
    /// encoded (nil when the group changed nothing), and its values that were no keys.
    struct Encoded {
        struct Row {
            let payload: [UInt8]
            let count: Int
            let entities: [String]
            let objects: ObjectTimelineIndex.Entries?

            /// The history row, stamped now (as the transactions are written, oldest first).
            func from(_ source: HistorySource) -> HistoryRecorder.HistoryRow {
                HistoryRecorder.HistoryRow(payload: payload, count: count, entities: entities, source: source, objects: objects)
            }
        }

        let row: Row?
        let nonKeys: [ForeignFold.NonKey]

        /// `indexed`: whether the store keeps the object timeline index.
        init(_ folded: ForeignFold.Folded, indexed: Bool) throws {
            nonKeys = folded.nonKeys
            let changes = folded.changes
            guard !changes.isEmpty else { row = nil; return }
            var body = ByteWriter()
            var names = NameTable()
            var entities: [String] = []
            var objects: ObjectTimelineIndex.Entries? = indexed ? ObjectTimelineIndex.Entries() : nil
            for change in changes {
                HistoryPayload.encodeChange(change, into: &body, names: &names)
                if !entities.contains(change.entity) { entities.append(change.entity) }
                objects?.add(entityName: change.entity, key: change.primaryKey)
            }
            row = Row(payload: try HistoryPayload.finish(body: body.bytes, count: changes.count, names: names),
                      count: changes.count, entities: entities, objects: objects)
        }
    }
}
