/// One object a save could not write as it stood: what the context held, what
/// it had read, and what the store holds now.
///
/// ```swift
/// catch let error as MergeConflictError {
///     for conflict in error.conflicts { print(conflict.objectID, conflict.storeValues ?? [:]) }
/// }
/// ```
public struct MergeConflict: Sendable, Equatable {
    /// Why the object conflicts.
    public enum Kind: Sendable, Equatable {
        /// The row changed in the store since the context read it (or it was deleted: ``MergeConflict/storeValues`` is nil).
        case version
        /// A new object's values for `attributes` match an existing row.
        case uniqueConstraint(attributes: [String])
    }

    /// Why.
    public let kind: Kind
    /// The object in the context.
    public let objectID: ObjectID
    /// The object's values in the context.
    public let objectValues: [String: AttributeValue]
    /// The values the context read (nil for a new object).
    public let snapshotValues: [String: AttributeValue]?
    /// The row's values in the store now (nil when the row is gone).
    public let storeValues: [String: AttributeValue]?
    /// The row version the context read, and the store's now (0 when gone).
    public let snapshotVersion: Int64
    public let storeVersion: Int64
    /// The existing row's ID (unique-constraint conflicts).
    public let existingObjectID: ObjectID?
}

/// A save refused under ``MergePolicy/error``: each conflicting object with its
/// values in memory, in the snapshot and in the store. Nothing was written.
public struct MergeConflictError: Error, Sendable, CustomStringConvertible {
    /// The conflicts, in the order the save met them.
    public let conflicts: [MergeConflict]

    /// The error's code, for matching like other Tributary errors.
    public var code: TributaryError.Code { .mergeConflict }

    public var description: String {
        let first = conflicts.first.map { conflict -> String in
            switch conflict.kind {
            case .version:
                return conflict.storeValues == nil
                    ? "\(conflict.objectID) was deleted in the store"
                    : "\(conflict.objectID) changed in the store (version \(conflict.snapshotVersion) read, \(conflict.storeVersion) now)"
            case .uniqueConstraint(let attributes):
                return "a new \(conflict.objectID.entityName) has the same \(attributes.joined(separator: ", ")) as \(conflict.existingObjectID?.description ?? "an existing row")"
            }
        } ?? ""
        let more = conflicts.count > 1 ? " (and \(conflicts.count - 1) more)" : ""
        return "save conflicts: \(first)\(more); nothing was written; set the context's mergePolicy to resolve conflicts, or refresh the objects and try again"
    }
}
