/// The ``ManagedObject`` subclass an entity's objects are made as, kept beside the model's
/// value but not part of it: two models that differ only in their classes are equal and
/// have the same version hash, and the store caches no class.
// @unchecked Sendable: it holds one class metatype, which is immutable.
struct EntityClass: Hashable, @unchecked Sendable {
    let type: ManagedObject.Type?

    static func == (lhs: EntityClass, rhs: EntityClass) -> Bool { true }
    func hash(into hasher: inout Hasher) {}
}
