import Tributary

/// Tributary's own record: the `history --json` change flattened to one line, with the
/// transaction's fields, the store's ID and the record's position.
///
/// ```swift
/// var bytes: [UInt8] = []
/// var encoder = NativeEncoder()
/// encoder.encode(record, into: &bytes)
/// // {"position":"7.0","storeID":"…","token":"7-6f9619ff","index":0,"timestamp":"…","author":null,
/// //  "contextName":null,"entity":"Tag","objectID":"tributary://…/Tag/p1","type":"insert","after":{…}}
/// ```
public struct NativeEncoder: RecordEncoder {
    private var json = JSONWriter()
    private var texts = RecordTexts()

    /// An encoder.
    public init() {}

    public mutating func encode(_ record: StreamRecord, into buffer: inout [UInt8]) {
        json.reset()
        texts.update(for: record)
        json.object { o in
            o.field("position", record.position.description)
            o.field("storeID", texts.store)
            RecordBody.writeTransaction(record, texts: texts, to: &o)
            RecordBody.write(record, texts: &texts, to: &o)
        }
        buffer.append(contentsOf: json.bytes)
        buffer.append(0x0A)
    }
}
