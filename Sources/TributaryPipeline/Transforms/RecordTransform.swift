import Foundation
import Tributary
import TributaryStreams

/// One step applied to every record on its way to the sinks, optionally only to some entities.
///
/// ```swift
/// let keep = RecordTransform(.filter(try StorePredicate(format: "title CONTAINS[c] 'swift'")), entities: ["Post"])
/// let record: StreamRecord? = try keep.apply(to: record)   // nil when filtered out
/// ```
public struct RecordTransform: Sendable {
    /// What the transform does.
    public enum Action: Sendable {
        /// Keeps only records whose values match the predicate (deletes are matched on their `before` values).
        case filter(StorePredicate)
        /// Keeps only these properties (`name` or `Entity.name`).
        case include(Set<String>)
        /// Drops these properties (`name` or `Entity.name`).
        case exclude(Set<String>)
        /// Renames entities (to a topic or table name), keyed by the entity's name.
        case rename([String: String])
        /// Replaces these properties' values with the text `[redacted]`.
        case redact(Set<String>)
        /// Replaces these properties' values with the SHA-256 (hex) of the salt and the value's text.
        case hash(Set<String>, salt: String)
    }

    /// The action.
    public var action: Action
    /// The entities it applies to; empty for all.
    public var entities: Set<String>

    /// A transform of `entities` (all when empty).
    public init(_ action: Action, entities: Set<String> = []) {
        self.action = action
        self.entities = entities
    }

    /// The text redacted values are replaced with.
    public static let redactedText = "[redacted]"

    /// The record after the transform, or nil when a filter drops it.
    public func apply(to record: StreamRecord) throws -> StreamRecord? {
        guard entities.isEmpty || entities.contains(record.entityName) else { return record }
        var record = record
        switch action {
        case .filter(let predicate):
            var values: [String: AttributeValue] = [:]
            for property in record.properties where !property.isMembershipChange {
                values[property.name] = (record.operation == .delete ? property.before : property.after) ?? .null
            }
            return try predicate.evaluate(values) ? record : nil
        case .include(let names):
            let entity = record.entityName
            record.properties.removeAll { !Self.matches($0.name, entity, names) }
            record.key = record.key.filter { Self.matches($0.key, entity, names) }
        case .exclude(let names):
            let entity = record.entityName
            record.properties.removeAll { Self.matches($0.name, entity, names) }
            record.key = record.key.filter { !Self.matches($0.key, entity, names) }
        case .rename(let names):
            if let name = names[record.entityName] {
                record.renamedFrom = record.modelEntityName
                func renamed(_ id: ObjectID) -> ObjectID { ObjectID(storeID: id.storeID, entityName: name, primaryKey: id.primaryKey) }
                record.objectID = renamed(record.objectID)
                record.movedFrom = record.movedFrom.map(renamed)
                record.movedTo = record.movedTo.map(renamed)
            }
        case .redact(let names):
            record.properties = record.properties.map { property in
                guard Self.matches(property.name, record.entityName, names), !property.isMembershipChange else { return property }
                var changed = property
                if changed.before.map({ !$0.isNull }) ?? false { changed.before = .string(Self.redactedText) }
                if changed.after.map({ !$0.isNull }) ?? false { changed.after = .string(Self.redactedText) }
                return changed
            }
            for (name, value) in record.key where Self.matches(name, record.entityName, names) && !value.isNull { record.key[name] = .string(Self.redactedText) }
        case .hash(let names, let salt):
            record.properties = record.properties.map { property in
                guard Self.matches(property.name, record.entityName, names), !property.isMembershipChange else { return property }
                var changed = property
                changed.before = changed.before.map { Self.hash($0, salt: salt) }
                changed.after = changed.after.map { Self.hash($0, salt: salt) }
                return changed
            }
            for (name, value) in record.key where Self.matches(name, record.entityName, names) { record.key[name] = Self.hash(value, salt: salt) }
        }
        return record
    }

    private static func matches(_ property: String, _ entity: String, _ names: Set<String>) -> Bool {
        names.contains(property) || names.contains(entity + "." + property)
    }

    private static func hash(_ value: AttributeValue, salt: String) -> AttributeValue {
        if value.isNull { return value }
        var sha = SHA256()
        sha.update(Array((salt + value.description).utf8))
        return .string(sha.finalize())
    }
}
