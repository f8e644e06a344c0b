import Tributary

/// CloudEvents 1.0 in structured JSON mode: `specversion`, `id` (the record's event ID),
/// `source` (the store), `type` (`tributary.<entity>.<insert|update|delete|read>`), `subject`
/// (the object), `time` (the commit), `datacontenttype` and `data` (the native record's fields).
///
/// ```swift
/// var encoder = CloudEventsEncoder()
/// encoder.encode(record, into: &bytes)
/// // {"specversion":"1.0","id":"6f9619ff-…-7-0","source":"tributary://6f9619ff-…","type":"tributary.Tag.insert",…}
/// ```
public struct CloudEventsEncoder: RecordEncoder {
    private var json = JSONWriter()
    private var texts = RecordTexts()
    private var marking = BlobMarking()

    /// An encoder.
    public init() {}

    public mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8]) {
        json.reset()
        texts.update(for: record)
        json.object { o in
            o.field("specversion", "1.0")
            o.field("id", record.eventID)
            o.field("source", "tributary://" + texts.store)
            o.field("type", "tributary.\(record.entityName).\(record.operation.name)")
            o.field("subject", texts.uri(record.objectID))
            o.field("time", texts.timestamp)
            o.field("datacontenttype", "application/json")
            o.key("data")
            o.object { d in
                d.field("position", record.position.description)
                RecordBody.writeTransaction(record, texts: texts, to: &d)
                RecordBody.write(record, texts: &texts, marking: marking, to: &d)
            }
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }

    public mutating func use(_ model: ManagedObjectModel) { marking = BlobMarking(model) }

    /// A schema record as the event `tributary.schema`, subject the store, with the native
    /// schema record as `data`; its model is the encoder's from here on (``use(_:)``).
    public mutating func encodeSchema(_ record: SchemaRecord, into buffer: inout [UInt8]) {
        use(record.change.model)
        record.appendCloudEvent(type: "tributary.schema", into: &buffer)
    }
}
