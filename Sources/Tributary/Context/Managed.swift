/// A typed property of a ``ManagedObject`` subclass, read and written through
/// the object's context, so application code reads `post.title` with the type
/// checker's help and no macro.
///
/// ```swift
/// final class Post: ManagedObject, EntityNamed, @unchecked Sendable {
///     static let entityName = "Post"
///     @Managed("title") var title: String
///     @Managed("content") var content: String?
///     @Managed("createdAt") var createdAt: Date
///     @Managed("tags") var tags: [ObjectID]
/// }
///
/// let post = try context.insert(Post.self)
/// post.title = "Hello"
/// ```
///
/// Subclasses restate `@unchecked Sendable`: their state lives in the object's
/// context, under its lock, like ``ManagedObject``'s own.
///
/// Reading a value of the wrong type, or of a fault whose row is gone without
/// ``ManagedObjectContext/shouldDeleteInaccessibleFaults``, stops the program
/// (as Core Data's accessors do): use ``ManagedObject/value(forKey:as:)`` where an
/// error is wanted instead.
@propertyWrapper
public struct Managed<Value: AttributeValueConvertible>: Sendable {
    /// The attribute or relationship name.
    public let key: String

    /// A property backed by the attribute or relationship `key`.
    public init(_ key: String) {
        self.key = key
    }

    @available(*, unavailable, message: "@Managed is only for properties of ManagedObject subclasses")
    public var wrappedValue: Value {
        get { fatalError("unavailable") }
        // swiftlint:disable:next unused_setter_value
        set { fatalError("unavailable") }
    }

    /// Reads and writes through the enclosing object.
    public static subscript<Object: ManagedObject>(
        _enclosingInstance object: Object,
        wrapped wrappedKeyPath: ReferenceWritableKeyPath<Object, Value>,
        storage storageKeyPath: ReferenceWritableKeyPath<Object, Managed<Value>>
    ) -> Value {
        get {
            let key = object[keyPath: storageKeyPath].key
            do {
                return try object.value(forKey: key, as: Value.self)
            } catch {
                preconditionFailure("Tributary: \(error)")
            }
        }
        set {
            let key = object[keyPath: storageKeyPath].key
            object[key] = newValue.attributeValue
        }
    }
}

/// A ``ManagedObject`` subclass that names its entity, for the typed context
/// methods (``ManagedObjectContext/insert(_:)``, ``ManagedObjectContext/fetch(_:predicate:sortDescriptors:)``).
///
/// ```swift
/// final class Tag: ManagedObject, EntityNamed, @unchecked Sendable {
///     static let entityName = "Tag"
///     @Managed("name") var name: String
/// }
/// ```
public protocol EntityNamed: ManagedObject {
    /// The entity this class stands for.
    static var entityName: String { get }
}
