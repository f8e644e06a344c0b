import Tributary

extension PipelineFile {
    /// Refuses entity and attribute names that the source store's model does not have, in
    /// `source.entities`, in transforms (`entities:` and the attributes of `filter:`) and in
    /// full-text index sinks (`entities:` and their fields), naming the key and what the model
    /// has: a filter that can never match would otherwise pass silently.
    ///
    /// ```swift
    /// try pipeline.checkNames(against: coordinator.managedObjectModel!)
    /// ```
    public func checkNames(against model: ManagedObjectModel) throws {
        let entityList = model.entities.map(\.name).joined(separator: ", ")
        // Entity names as records carry them: the model's, and what rename transforms make of them.
        var known = Set(model.entities.map(\.name))
        var renamedFrom: [String: String] = [:]
        func unknownEntity(_ name: String, _ key: String) -> TributaryError {
            TributaryError(.invalidPipeline, "unknown entity '\(name)'", location: "\(path): \(key)", hint: "the model has \(entityList)")
        }
        func entity(_ name: String) -> EntityDescription? { model.entity(named: renamedFrom[name] ?? name) }
        for name in source.filter.entities where model.entity(named: name) == nil { throw unknownEntity(name, "source.entities") }
        for (index, transform) in transforms.enumerated() {
            let key = "transforms[\(index)]"
            for name in transform.entities.sorted() where !known.contains(name) { throw unknownEntity(name, key + ".entities") }
            switch transform.action {
            case .rename(let names):
                for (from, to) in names.sorted(by: { $0.key < $1.key }) {
                    guard known.contains(from) else { throw unknownEntity(from, key + ".rename") }
                    renamedFrom[to] = renamedFrom[from] ?? from
                    known.insert(to)
                }
            case .filter(let predicate):
                let scope = !transform.entities.isEmpty ? transform.entities.compactMap(entity)
                    : !source.filter.entities.isEmpty ? source.filter.entities.compactMap { model.entity(named: $0) } : model.entities
                for name in predicate.attributeNames().sorted() where !scope.contains(where: { $0.propertyNames.contains(name) }) {
                    let names = Set(scope.flatMap(\.propertyNames)).sorted().joined(separator: ", ")
                    throw TributaryError(.invalidPipeline, "unknown attribute '\(name)' in the filter", location: "\(path): \(key).filter",
                                         hint: "\(scope.map(\.name).joined(separator: ", ")) \(scope.count == 1 ? "has" : "have") \(names)")
                }
            default: break
            }
        }
        for (index, sink) in sinks.enumerated() {
            guard let entities = (sink.configuration as? FullTextIndexSinkSettings)?.entities else { continue }
            let key = "sinks[\(index)].entities"
            for (name, fields) in entities.sorted(by: { $0.key < $1.key }) {
                guard known.contains(name), let description = entity(name) else { throw unknownEntity(name, key) }
                for field in fields where field != FullTextIndexSinkSettings.allAttributes && description.attribute(named: field) == nil {
                    throw TributaryError(.invalidPipeline, "\(name) has no attribute '\(field)'", location: "\(path): \(key).\(name)",
                                         hint: "\(name) has \(description.attributes.map(\.name).joined(separator: ", "))")
                }
            }
        }
    }
}

extension StorePredicate {
    /// The first component of every key path the predicate compares.
    func attributeNames() -> Set<String> {
        switch self {
        case .constant: return []
        case .not(let inner): return inner.attributeNames()
        case .and(let parts), .or(let parts): return parts.reduce(into: []) { $0.formUnion($1.attributeNames()) }
        case .comparison(let comparison):
            return Set([comparison.left, comparison.right].flatMap { $0.keyPathHeads() })
        }
    }
}

extension StorePredicateExpression {
    fileprivate func keyPathHeads() -> [String] {
        switch self {
        case .keyPath(let path): return path.first.map { [$0] } ?? []
        case .constant: return []
        case .aggregate(let items): return items.flatMap { $0.keyPathHeads() }
        case .subqueryCount(let subquery): return subquery.collection.first.map { [$0] } ?? []
        }
    }
}
