import Foundation
import Tributary

/// Checks each record of a stream against the model in force at its position: the stream's
/// starting model (`model.json`), then each schema record's from its position on. A record
/// fits when its entity is in the model and every property it names is an attribute or
/// relationship of that entity; a value that does not convert to its attribute's type (as
/// replay converts it) is counted, not damage: the store may have held it so. The schema records met must be the model versions the manifest lists.
/// A stream without `model.json` (written before it was kept) is not checked.
struct ModelConformance {
    private(set) var model: ManagedObjectModel?
    private let format: StreamFormat
    private let ids = ObjectIDReader()
    private var native = NativeRecordReader()
    /// The schema records met, as the manifest lists them.
    private(set) var versions: [StreamManifest.ModelVersion] = []
    /// The version of the model the stream starts with.
    private var startVersion: String?

    init(directory: URL, format: StreamFormat) throws {
        self.format = format
        let url = directory.appendingPathComponent(StreamManifest.modelFileName)
        guard let data = FileManager.default.contents(atPath: url.path) else { return }
        do {
            model = try ManagedObjectModel.fromJSON(data)
            startVersion = model?.versionHash
        } catch let error as TributaryError {
            throw TributaryError(.damagedStream, "\(StreamManifest.modelFileName) is damaged (\(error.message))", location: url.path, hint: "restore it from the source (tributary model STORE --json)")
        }
    }

    /// Checks the record `line` at `position` of `segment`; a schema record makes its model the one in force.
    mutating func check(_ line: ArraySlice<UInt8>, position: StreamPosition, segment: StreamManifest.Segment) throws {
        let place = "segment \(segment.name)"
        if let schema = try Self.schema(line, format: format, place: place) {
            guard schema.position == position else {
                throw TributaryError(.damagedStream, "the schema record at \(position) says it is at \(schema.position)", location: place, hint: "the stream was edited; restore it from a copy")
            }
            guard schema.change.model.versionHash == schema.change.toVersion else {
                throw TributaryError(.damagedStream, "the schema record at \(position) holds a model of version \(schema.change.model.versionHash), not \(schema.change.toVersion) as it says",
                                     location: place, hint: "the stream was edited; restore it from a copy")
            }
            model = schema.change.model
            native = NativeRecordReader()
            versions.append(StreamManifest.ModelVersion(position: position, version: schema.change.toVersion))
            return
        }
        guard let model else { return }
        do {
            let change = try ReplayChange(line: line, format: format, model: model, ids: ids, native: native)
            let entity = try model.requireEntity(change.entityName)
            for name in Set(change.added.keys).union(change.removed.keys) where entity.relationship(named: name) == nil {
                throw TributaryError(.unknownProperty, "the record links '\(name)', which \(entity.name) does not have")
            }
            countValuesAsStored(change, of: entity, at: position, place: place)
        } catch let error as TributaryError {
            guard try Self.isChangeRecord(line, format: format) else { return }   // a dead letter, say: not a change
            let what = "the record at \(position) does not fit the model in force there (version \(model.versionHash)): \(error.message)"
            throw TributaryError(.damagedStream, what, location: place,
                                 hint: "the record names what the model at its position lacks: the stream was edited, or a model change is missing from it")
        }
    }

    /// Values of another class than their attribute's type, as the store held them (another
    /// program wrote them), and the first of them: noted, not damage (replay writes them as given).
    private(set) var valueMismatches = 0
    private(set) var firstValueMismatch: String?

    private mutating func countValuesAsStored(_ change: ReplayChange, of entity: EntityDescription, at position: StreamPosition, place: String) {
        // An update's or a delete's key is the row's before the change: counted with its insert.
        let keyed = change.operation == .create || change.operation == .read
        let values = keyed ? change.values.merging(change.key, uniquingKeysWith: { a, _ in a }) : change.values
        for attribute in entity.attributes {
            guard let value = values[attribute.name], ReplayChange.isAsStored(value, for: attribute.type) else { continue }
            let (name, type) = (attribute.name, attribute.type)
            valueMismatches += 1
            firstValueMismatch = firstValueMismatch ?? "\(place): the record at \(position) has '\(name)' \(Self.describe(value)), in a \(type.rawValue) attribute"
        }
    }

    private static func describe(_ value: AttributeValue) -> String {
        switch value {
        case .string(let text): return "as the text \"\(text.prefix(40))\""
        case .integer(let number): return "as the integer \(number)"
        case .double(let number): return "as the real \(number)"
        case .data(let bytes): return "as a blob of \(bytes.count) bytes"
        default: return "as \(value)"
        }
    }

    /// Whether `line` is a change record (a dead letter's line, holding one, is not).
    private static func isChangeRecord(_ line: ArraySlice<UInt8>, format: StreamFormat) throws -> Bool {
        guard case .object(let top) = try RecordJSONParser.parse(line) else { return false }
        switch format {
        case .native: return top["type"] != nil
        case .cloudevents: return top["data"] != nil && top["type"] != nil
        case .debezium: return top["op"] != nil
        }
    }

    private static func schema(_ line: ArraySlice<UInt8>, format: StreamFormat, place: String) throws -> SchemaRecord? {
        do {
            return try SchemaRecord.read(line, format: format)
        } catch let error as TributaryError {
            throw error.located(place)
        }
    }

    /// Checks that the schema records met are the model versions `manifest` lists (after its
    /// first, the model the stream starts with, which must be `model.json`'s).
    func checkListed(in manifest: StreamManifest, place: String) throws {
        guard let listed = manifest.models, let start = listed.first else { return }
        if let startVersion, start.version != startVersion {
            throw TributaryError(.damagedStream, "the manifest says the stream starts with model version \(start.version), and \(StreamManifest.modelFileName) is version \(startVersion)",
                                 location: place, hint: "restore \(StreamManifest.modelFileName) or the manifest from a copy")
        }
        guard Array(listed.dropFirst()) == versions else {
            let said = listed.dropFirst().map { "\($0.position) \($0.version)" }.joined(separator: ", ")
            let found = versions.map { "\($0.position) \($0.version)" }.joined(separator: ", ")
            throw TributaryError(.damagedStream, "the manifest lists model changes [\(said)], the segments hold [\(found)]", location: place,
                                 hint: "a schema record or the manifest was edited; restore it from a copy")
        }
    }
}
