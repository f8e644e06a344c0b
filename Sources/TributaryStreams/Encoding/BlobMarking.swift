import Tributary

/// Which properties of a model's entities mark a blob apart from text in a record: those of
/// attributes that are not binary. Another program may store a blob in any column (Python's
/// `bytes` in an untyped one, which adoption makes a string attribute), and JSON writes data
/// as a base64 string, as text would be: so such a blob is written as `{"base64":"…"}`
/// (``PersistentHistoryChange/writeValues(_:of:omittingExcludedValues:blobsMarked:to:)``),
/// which replay reads back as a blob. An encoder without a model marks none.
///
/// ```swift
/// var marking = BlobMarking(model)
/// marking.names(of: "kv")   // ["k", "v"]: every attribute of kv but its binary ones
/// ```
package struct BlobMarking: Sendable {
    private var names: [String: Set<String>] = [:]

    /// Marks none.
    package init() {}

    /// Marks the attributes of `model` that are not binary.
    package init(_ model: ManagedObjectModel) {
        for entity in model.entities {
            names[entity.name] = Set(entity.attributes.filter { $0.type != .binary }.map(\.name))
        }
    }

    /// The names of `entity`'s properties whose blobs are marked.
    package func names(of entity: String) -> Set<String> { names[entity] ?? [] }

    /// Whether a blob in `property` of `entity` is marked.
    package func marks(_ entity: String, _ property: String) -> Bool { names[entity]?.contains(property) == true }
}
