import Foundation
import Tributary

/// One record of a stream read back for replay: what to do to which object, with values
/// converted to the model's types where the stream spells them so, and as the source held
/// them otherwise (42 in a string attribute, 'nan' in a double one), for replay to write as given.
///
/// ```swift
/// let change = try ReplayChange(line: line, format: .native, model: model)
/// print(change.operation, change.entityName, change.primaryKey)
/// ```
public struct ReplayChange: Sendable {
    /// What happened.
    public var operation: StreamOperation
    /// The entity.
    public var entityName: String
    /// The object's primary key in the source (kept in the replica).
    public var primaryKey: Int64
    /// The transaction's token value.
    public var token: Int64
    /// The commit time.
    public var timestamp: Date?
    /// Attribute and to-one values after the change (inserts, reads, updates).
    public var values: [String: AttributeValue] {
        get {
            guard let layout else { return storedValues }
            var values: [String: AttributeValue] = [:]
            for (c, name) in layout.names.enumerated() where given & (1 << UInt64(c)) != 0 { values[name] = row[c] }
            return values
        }
        set {
            storedValues = newValue
            layout = nil
            row = []
            given = 0
        }
    }
    /// The values when they are not in column form.
    var storedValues: [String: AttributeValue] = [:]
    /// The column form of an insert's or read's attribute values (the fast path of native
    /// records): `row` holds one value per attribute of `layout`, `given` which are set.
    private(set) var layout: ReplayLayout?
    private(set) var row: [AttributeValue] = []
    private(set) var given: UInt64 = 0
    /// To-many links added, by relationship.
    public var added: [String: [ObjectID]] = [:]
    /// To-many links removed, by relationship.
    public var removed: [String: [ObjectID]] = [:]
    /// For an insert continuing an object another program moved to a new primary key, the
    /// object's key before (`StreamRecord.movedFrom`; the entity is the same); nil otherwise.
    ///
    /// ```swift
    /// if let old = change.movedFromKey { print("\(change.entityName) \(old) is now \(change.primaryKey)") }
    /// ```
    public var movedFromKey: Int64?
    /// For a delete of an object another program moved to a new primary key, the object's key
    /// after (`StreamRecord.movedTo`); nil otherwise.
    public var movedToKey: Int64?
    /// The row's key as its table declares it, when that is not the object's key
    /// (`StreamRecord.key`, as `PersistentHistoryChange.key`: an adopted table's text or
    /// composite key): its values after an insert or a snapshot read, before an update or a
    /// delete, read for the model's attribute types as values are; empty for every other entity. Read
    /// from the record's `key` in every format (Debezium's beside the envelope).
    ///
    /// ```swift
    /// // a record of CREATE TABLE users(email TEXT PRIMARY KEY, name TEXT), adopted:
    /// change.key            // ["email": .string("ann@example.com")]
    /// change.primaryKey     // the rowid
    /// ```
    public var key: [String: AttributeValue] = [:]

    /// Parses a record line of `format`, reading values for `model`'s attribute types.
    public init(line: ArraySlice<UInt8>, format: StreamFormat, model: ManagedObjectModel) throws {
        try self.init(line: line, format: format, model: model, ids: ObjectIDReader(), native: NativeRecordReader())
    }

    /// A change in column form (see ``NativeRecordReader``).
    init(operation: StreamOperation, primaryKey: Int64, token: Int64, timestamp: Date?, layout: ReplayLayout, row: [AttributeValue], given: UInt64) {
        self.operation = operation
        entityName = layout.entityName
        self.primaryKey = primaryKey
        self.token = token
        self.timestamp = timestamp
        self.layout = layout
        self.row = row
        self.given = given
    }

    /// Parses a record, reading object IDs through `ids` (which remembers URI prefixes across
    /// records); native inserts and reads go through `native`'s fast path when given.
    init(line: ArraySlice<UInt8>, format: StreamFormat, model: ManagedObjectModel, ids: ObjectIDReader, native: NativeRecordReader? = nil) throws {
        if format == .native, let native, let change = native.change(line, model: model, ids: ids) {
            self = change
            return
        }
        guard case .object(let top) = try RecordJSONParser.parse(line) else { throw Self.bad("a record is not a JSON object") }
        switch format {
        case .native: try self.init(native: top, model: model, ids: ids)
        case .cloudevents:
            guard case .object(let data)? = top["data"] else { throw Self.bad("a CloudEvents record has no data object") }
            try self.init(native: data, model: model, ids: ids)
        case .debezium: try self.init(debezium: top, model: model, ids: ids)
        }
    }

    private init(native record: [String: JSONValue], model: ManagedObjectModel, ids: ObjectIDReader) throws {
        guard case .string(let type)? = record["type"], case .string(let uri)? = record["objectID"], let id = ids.read(uri),
              case .string(let tokenText)? = record["token"] else { throw Self.bad("a record lacks type, objectID or token") }
        let entity = try model.requireEntity(id.entityName)
        guard let operation = StreamOperation.allCases.first(where: { $0.name == type }) else { throw Self.bad("unknown record type '\(type)'") }
        self.operation = operation
        entityName = entity.name
        primaryKey = id.primaryKey
        guard let dash = tokenText.utf8.firstIndex(of: 0x2D), let value = Int64(tokenText[..<dash]) else { throw Self.bad("'\(tokenText)' is not a token") }
        token = value
        if case .string(let time)? = record["timestamp"] { timestamp = ISO8601.date(from: time) }
        movedFromKey = try Self.movedKey(record["movedFrom"], of: entity.name, ids: ids)
        movedToKey = try Self.movedKey(record["movedTo"], of: entity.name, ids: ids)
        key = try Self.declaredKey(record["key"], of: entity)
        switch operation {
        case .create, .read:
            if case .object(let after)? = record["after"] {
                for (name, value) in after { try set(name, value, entity: entity, ids: ids) }
            }
            if case .object(let links)? = record["relationships"] {
                for (name, value) in links { try link(name, value, ids: ids) }
            }
        case .update:
            if case .object(let changed)? = record["updatedProperties"] {
                for (name, change) in changed {
                    guard case .object(let fields) = change else { continue }
                    if fields["added"] != nil || fields["removed"] != nil {
                        try link(name, change, ids: ids)
                    } else if let after = fields["after"], fields["excluded"] == nil {
                        try set(name, after, entity: entity, ids: ids)
                    }
                }
            }
        case .delete:
            break
        }
    }

    private init(debezium record: [String: JSONValue], model: ManagedObjectModel, ids: ObjectIDReader) throws {
        guard case .string(let op)? = record["op"], let operation = StreamOperation(rawValue: op), case .object(let source)? = record["source"],
              case .string(let table)? = source["table"], case .string(let tokenText)? = source["token"] else {
            throw Self.bad("a Debezium record lacks op, source.table or source.token")
        }
        let entity = try model.requireEntity(table)
        self.operation = operation
        entityName = entity.name
        token = try PersistentHistoryToken(parsing: tokenText).value
        if case .integer(let ms)? = source["ts_ms"] { timestamp = Date(timeIntervalSince1970: Double(ms) / 1000) }
        let row: [String: JSONValue]
        switch (operation, record["before"], record["after"]) {
        case (.delete, .object(let before)?, _): row = before
        case (_, _, .object(let after)?): row = after
        default: throw Self.bad("a Debezium record has no row")
        }
        guard case .integer(let key)? = row["_pk"] else { throw Self.bad("a Debezium row has no _pk") }
        primaryKey = key
        movedFromKey = try Self.debeziumKey(record["__debezium.oldkey"])
        movedToKey = try Self.debeziumKey(record["__debezium.newkey"])
        self.key = try Self.declaredKey(record["key"], of: entity)
        guard operation != .delete else { return }
        for (name, value) in row where name != "_pk" {
            if let relationship = entity.relationship(named: name), relationship.isToMany {
                if case .array = value { try link(name, .object(["added": value]), ids: ids) } else { try link(name, value, ids: ids) }
            } else {
                try set(name, value, entity: entity, ids: ids)
            }
        }
    }

    private mutating func set(_ name: String, _ value: JSONValue, entity: EntityDescription, ids: ObjectIDReader) throws {
        if let attribute = entity.attribute(named: name) {
            do {
                storedValues[name] = try Self.convert(value, to: attribute.type, name: name)
            } catch let error as TributaryError {
                throw TributaryError(error.code, "\(entity.name)/p\(primaryKey): \(error.message)", hint: error.hint)
            }
        } else if let relationship = entity.relationship(named: name), !relationship.isToMany {
            switch value {
            case .null: storedValues[name] = .null
            case .string(let uri):
                guard let id = ids.read(uri) else { throw Self.bad("'\(name)' is not an object ID: \(uri)") }
                storedValues[name] = .objectID(id)
            default: throw Self.bad("'\(name)' is not an object ID")
            }
        } else {
            throw TributaryError(.unknownProperty, "the record sets '\(name)', which \(entity.name) does not have", hint: Self.modelHint)
        }
    }

    private mutating func link(_ name: String, _ value: JSONValue, ids: ObjectIDReader) throws {
        guard case .object(let fields) = value else { throw Self.bad("links of '\(name)' are not an object") }
        func list(_ value: JSONValue?) throws -> [ObjectID] {
            guard case .array(let items)? = value else { return [] }
            return try items.map { item in
                guard case .string(let uri) = item, let id = ids.read(uri) else { throw Self.bad("a link of '\(name)' is not an object ID") }
                return id
            }
        }
        let add = try list(fields["added"]), remove = try list(fields["removed"])
        if !add.isEmpty { added[name, default: []] += add }
        if !remove.isEmpty { removed[name, default: []] += remove }
    }

    /// A JSON value read for an attribute of `type`: by the stream's spelling of that type
    /// where it is written so, else as the source held it (another program may store any
    /// class in any column: 42 in an untyped one, 'nan' in a `REAL` one, a date's seconds
    /// outside the years ISO 8601 writes), for replay to write as given (``ReplayApplier``;
    /// ``isAsStored(_:for:)`` tells them apart).
    static func convert(_ value: JSONValue, to type: AttributeType, name: String) throws -> AttributeValue {
        switch value {
        case .null: return .null
        case .string(let text): return Self.value(ofText: text, as: type)
        case .integer(let i): return Self.number(.integer(i), as: type)
        case .double(let d): return Self.number(.double(d), as: type)
        case .bool(let b):
            guard let converted = AttributeValue.bool(b).coerced(to: type) else { break }
            return converted
        case .object(let fields):
            // A blob in an attribute that is not binary, marked apart from text (``BlobMarking``).
            guard fields.count == 1, case .string(let text)? = fields["base64"], let bytes = Data(base64Encoded: text) else { break }
            return .data(bytes)
        case .array: break
        }
        throw TributaryError(.typeMismatch, "'\(name)' holds \(value), which a \(type.rawValue) attribute does not store",
                             hint: "a stream holds JSON arrays for links, objects for links and marked blobs ({\"base64\":…}), and true or false for booleans; the stream was edited")
    }

    /// A JSON number read for an attribute of `type`: converted where that loses nothing (a
    /// date's seconds within the years Tributary stores), else as given.
    static func number(_ value: AttributeValue, as type: AttributeType) -> AttributeValue {
        switch value.coerced(to: type) {
        case .date(let date)? where !ISO8601.isSupported(date): return value
        case let converted?: return converted
        case nil: return value
        }
    }

    /// A JSON string read for an attribute of `type`, as streams write that type: dates in
    /// ISO 8601, UUIDs, data in base64, a double's infinity (a date's too) as `"Infinity"` or
    /// `"-Infinity"` (``JSONWriter``). Any other string is text the source held (another
    /// program wrote `'nan'`, `'0x1p3'` or `'yes'` into a number, boolean or date column),
    /// kept as that text: a lenient parse replayed it as another value (NaN as NULL, 8.0,
    /// true). The one ambiguity is the text `'Infinity'` in a number, boolean or date
    /// attribute, read as the infinity streams spell so (and an infinity in any other
    /// attribute, read as that text).
    static func value(ofText text: String, as type: AttributeType) -> AttributeValue {
        switch (type, text) {
        case (.string, _): return .string(text)
        case (.double, "Infinity"), (.integer, "Infinity"), (.bool, "Infinity"), (.date, "Infinity"): return .double(.infinity)
        case (.double, "-Infinity"), (.integer, "-Infinity"), (.bool, "-Infinity"), (.date, "-Infinity"): return .double(-.infinity)
        case (.integer, _), (.double, _), (.bool, _): return .string(text)
        case (.date, _): return ISO8601.date(from: text).map { .date($0) } ?? .string(text)
        default: return (try? AttributeValue.parse(text, as: type)) ?? .string(text)
        }
    }

    /// Whether `value`, read for an attribute of `type`, is kept as the source stored it: not
    /// of the attribute's own kind (`tributary verify` counts them).
    static func isAsStored(_ value: AttributeValue, for type: AttributeType) -> Bool {
        switch (value, type) {
        case (.null, _), (.string, .string), (.integer, .integer), (.double, .double), (.bool, .bool), (.uuid, .uuid), (.data, .binary): return false
        case (.date(let date), .date): return !ISO8601.isSupported(date)
        default: return true
        }
    }

    /// The key of a native `movedFrom` or `movedTo` (an object ID of the same entity); nil when absent.
    private static func movedKey(_ value: JSONValue?, of entity: String, ids: ObjectIDReader) throws -> Int64? {
        guard let value, value != .null else { return nil }
        guard case .string(let uri) = value, let id = ids.read(uri), id.entityName == entity else {
            throw bad("a record's movedFrom or movedTo is not an object ID of its entity")
        }
        return id.primaryKey
    }

    /// The key of a Debezium `__debezium.oldkey` or `__debezium.newkey` (`{"_pk": 7}`); nil when absent.
    private static func debeziumKey(_ value: JSONValue?) throws -> Int64? {
        guard let value, value != .null else { return nil }
        guard case .object(let fields) = value, case .integer(let key)? = fields["_pk"] else {
            throw bad("a Debezium record's __debezium.oldkey or __debezium.newkey has no _pk")
        }
        return key
    }

    /// The hint of a record naming a property its entity does not have.
    static let modelHint = "replay with the stream's own model, or give --model with the source's model"

    static func bad(_ message: String) -> TributaryError {
        TributaryError(.damagedStream, message, hint: "the stream was not written by tributary export, or was edited")
    }
}
