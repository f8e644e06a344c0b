import Foundation
import Tributary
import TributaryStreams
import Yams

/// Reads a pipeline YAML document: parses it into ``PipelineSettingsNode``s (which keep line
/// numbers and key paths for errors, and substitute `${NAME}` / `${NAME:-default}` in scalar
/// values), then walks the sections; each sink's own keys are read by its type's
/// ``SinkConfiguration`` from the registry. Errors quote the file's text, never a substituted
/// value (which may come from a secret).
struct PipelineFileReader {
    let path: String
    let environment: [String: String]
    let sinks: SinkRegistry

    static let topKeys = ["name", "source", "transforms", "sinks", "checkpoint", "retry", "prune", "metrics", "on_schema_change"]
    static let sourceKeys = ["store", "consumer", "entities", "authors", "exclude_authors", "contexts", "change_types", "snapshot"]
    static let transformActions = ["filter", "include", "exclude", "rename", "redact", "hash"]
    static let transformKeys = transformActions + ["entities", "salt_env"]
    static let sinkCommonKeys = ["type", "name", "on_error", "dead_letter", "batch_size"]
    static let checkpointKeys = ["records", "seconds"]
    static let retryKeys = ["initial", "max", "max_attempts"]
    static let pruneKeys = ["consumed", "max_age"]

    func read(_ yaml: String) throws -> PipelineFile {
        let root = try parse(yaml)
        guard case .mapping = root.content else {
            throw root.fail("a pipeline file is a mapping", hint: "allowed keys: \(Self.topKeys.joined(separator: ", "))")
        }
        try root.checkKeys(allowed: Self.topKeys)
        let defaultName = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let name = try root["name"]?.string() ?? defaultName
        guard let sourceNode = root["source"] else { throw root.fail(at: "source", "the pipeline has no source", hint: "add source: {store: PATH}") }
        let source = try readSource(sourceNode, pipelineName: name)
        let transforms = try root["transforms"]?.items().map(readTransform) ?? []
        guard let sinksNode = root["sinks"] else { throw root.fail(at: "sinks", "the pipeline has no sinks", hint: "add sinks: with at least one sink, such as - type: stdout") }
        let sinkNodes = try sinksNode.items()
        guard !sinkNodes.isEmpty else { throw sinksNode.fail("the pipeline has no sinks", hint: "add at least one sink, such as - type: stdout") }
        var sinks: [PipelineFile.SinkSettings] = []
        for (index, item) in sinkNodes.enumerated() {
            let sink = try readSink(item, index: index)
            if sinks.contains(where: { $0.name == sink.name }) {
                throw item.fail(at: "name", "two sinks are named '\(sink.name)'", hint: "give each sink its own name:")
            }
            sinks.append(sink)
        }
        var pipeline = PipelineFile(path: path, name: name, source: source, transforms: transforms, sinks: sinks)
        try readPolicies(root, into: &pipeline)
        return pipeline
    }

    /// The document as settings nodes; a syntax error names its line.
    private func parse(_ yaml: String) throws -> PipelineSettingsNode {
        let root: Node?
        do {
            root = try Yams.compose(yaml: yaml)
        } catch let error as YamlError {
            var line = ""
            switch error {
            case .scanner(_, _, let mark, _), .parser(_, _, let mark, _), .composer(_, _, let mark, _): line = ":\(mark.line)"
            default: break
            }
            let text = "\(error)".split(separator: "\n").first.map(String.init) ?? "\(error)"
            throw TributaryError(.invalidPipeline, "not valid YAML: \(text)", location: path + line, hint: "fix the YAML syntax")
        }
        guard let root else { return PipelineSettingsNode(.scalar(""), file: path, line: nil, key: "", environment: environment) }
        return settingsNode(root, key: "")
    }

    /// `node` and its children as settings nodes, each with its line and key path.
    private func settingsNode(_ node: Node, key: String) -> PipelineSettingsNode {
        let content: PipelineSettingsNode.Content
        switch node {
        case .scalar(let scalar):
            content = .scalar(scalar.string)
        case .mapping(let mapping):
            content = .mapping(mapping.map { keyNode, value in
                let childKey = PipelineSettingsNode.path(key, keyNode.scalar?.string ?? "")
                return (settingsNode(keyNode, key: childKey), settingsNode(value, key: childKey))
            })
        case .sequence(let sequence):
            content = .sequence(sequence.enumerated().map { settingsNode($1, key: "\(key)[\($0)]") })
        case .alias(let alias):
            content = .scalar("*" + alias.anchor.rawValue)
        }
        return PipelineSettingsNode(content, file: path, line: node.mark?.line, key: key, environment: environment)
    }

    // MARK: Sections

    private func readSource(_ node: PipelineSettingsNode, pipelineName: String) throws -> PipelineFile.Source {
        _ = try node.entries(allowed: Self.sourceKeys)
        guard let storeNode = node["store"] else { throw node.fail(at: "store", "the source has no store", hint: "add store: ${TRIBUTARY_STORE}") }
        var source = PipelineFile.Source(store: try storePath(storeNode), consumer: try node["consumer"]?.string() ?? pipelineName)
        if let n = node["entities"] { source.filter.entities = try n.strings() }
        if let n = node["authors"] { source.filter.authors = try n.strings() }
        if let n = node["exclude_authors"] { source.filter.excludedAuthors = try n.strings() }
        if let n = node["contexts"] { source.filter.contextNames = try n.strings() }
        if let n = node["change_types"] {
            source.filter.changeTypes = try n.strings().map { text in
                guard let type = PersistentHistoryChangeType(rawValue: text) else {
                    throw n.fail("unknown change type '\(text)'", hint: "use insert, update or delete")
                }
                return type
            }
        }
        if let n = node["snapshot"] { source.snapshot = try n.bool() }
        return source
    }

    /// The store's path: a relative path written in the file is resolved from the file's
    /// directory; one that comes from the environment (`${TRIBUTARY_STORE}`) from the working
    /// directory, as the shell that set it would.
    private func storePath(_ node: PipelineSettingsNode) throws -> String {
        let text = try node.string()
        guard !text.hasPrefix("/"), !node.text.contains("${") else { return text }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(text).standardizedFileURL.path
    }

    private func readTransform(_ node: PipelineSettingsNode) throws -> RecordTransform {
        _ = try node.entries(allowed: Self.transformKeys)
        let actions = Self.transformActions.filter { node[$0] != nil }
        guard actions.count == 1, let action = actions.first, let value = node[action] else {
            throw node.fail(actions.isEmpty ? "a transform needs an action" : "a transform has one action, not \(actions.joined(separator: " and "))",
                            hint: "use one of \(Self.transformActions.joined(separator: ", ")), with optional entities:")
        }
        let entities = Set(try node["entities"]?.strings() ?? [])
        if let saltNode = node["salt_env"], action != "hash" { throw saltNode.fail("salt_env goes with hash", hint: "remove it or use hash:") }
        switch action {
        case "filter":
            let format = try value.string()
            do {
                let predicate = try StorePredicate(format: format)
                try predicate.checkEvaluable()
                return RecordTransform(.filter(predicate), entities: entities)
            } catch let error as TributaryError {
                throw value.fail("the predicate cannot be used: \(error.message)", hint: error.hint)
            }
        case "include": return RecordTransform(.include(Set(try value.strings())), entities: entities)
        case "exclude": return RecordTransform(.exclude(Set(try value.strings())), entities: entities)
        case "rename":
            guard case .mapping(let names) = value.content else { throw value.fail("rename maps entity names to new names", hint: "write rename: {Post: posts}") }
            var renames: [String: String] = [:]
            for (from, to) in names { renames[try from.named(value.key).string()] = try to.string() }
            return RecordTransform(.rename(renames), entities: entities)
        case "redact": return RecordTransform(.redact(Set(try value.strings())), entities: entities)
        default:
            var salt = ""
            if let saltNode = node["salt_env"] {
                let variable = try saltNode.string()
                guard let value = environment[variable] else {
                    throw saltNode.fail("the environment variable \(variable) is not set", hint: "export \(variable) before running the pipeline")
                }
                salt = value
            }
            return RecordTransform(.hash(Set(try value.strings()), salt: salt), entities: entities)
        }
    }

    private func readSink(_ node: PipelineSettingsNode, index: Int) throws -> PipelineFile.SinkSettings {
        guard case .mapping = node.content else { throw node.fail("a sink is a mapping", hint: "write - type: stdout") }
        guard let typeNode = node["type"] else {
            throw node.fail(at: "type", "the sink has no type", hint: "use type: \(sinks.types.joined(separator: ", "))")
        }
        let type = try typeNode.string()
        guard let entry = sinks.entry(type) else {
            throw typeNode.fail("unknown sink type '\(typeNode.text)'", hint: "the sink types registered are \(sinks.types.joined(separator: ", "))")
        }
        try node.checkKeys(allowed: Self.sinkCommonKeys + entry.keys)
        let configuration = try entry.read(node)
        var onError = PipelineFile.OnError.retry
        if let n = node["on_error"] {
            guard let value = PipelineFile.OnError(rawValue: try n.string()) else {
                throw n.fail("unknown on_error '\(n.text)'", hint: "use retry, dead_letter or stop")
            }
            onError = value
        }
        let deadLetter = try node["dead_letter"]?.string()
        if onError == .deadLetter, deadLetter == nil {
            throw node.fail(at: "dead_letter", "on_error: dead_letter needs a dead_letter directory", hint: "add dead_letter: ${TRIBUTARY_OUT}/dead-letters")
        }
        let name = try node["name"]?.string() ?? (index == 0 ? type : "\(type)-\(index)")
        return PipelineFile.SinkSettings(name: name, type: type, configuration: configuration, onError: onError, deadLetterDirectory: deadLetter,
                                         batchSize: try node["batch_size"]?.positive() ?? 100)
    }

    /// The checkpoint, retry and prune policies and the metrics address.
    private func readPolicies(_ root: PipelineSettingsNode, into pipeline: inout PipelineFile) throws {
        if let node = root["checkpoint"] {
            _ = try node.entries(allowed: Self.checkpointKeys)
            if let n = node["records"] { pipeline.checkpoint.records = try n.positive() }
            if let n = node["seconds"] { pipeline.checkpoint.seconds = try n.duration() }
        }
        if let node = root["retry"] {
            _ = try node.entries(allowed: Self.retryKeys)
            if let n = node["initial"] { pipeline.retry.initial = try n.duration() }
            if let n = node["max"] { pipeline.retry.maximum = try n.duration() }
            if let n = node["max_attempts"] { pipeline.retry.maximumAttempts = try n.integer(minimum: 0) }
        }
        if let node = root["prune"] {
            _ = try node.entries(allowed: Self.pruneKeys)
            let consumed = try node["consumed"]?.bool() ?? true
            if consumed { pipeline.prune = PipelineFile.PrunePolicy(maximumAge: try node["max_age"]?.duration()) }
        }
        if let node = root["on_schema_change"] {
            guard let value = PipelineFile.OnSchemaChange(rawValue: try node.string()) else {
                throw node.fail("unknown on_schema_change '\(node.text)'", hint: "use stop, dead_letter or apply")
            }
            if value == .deadLetter, let sink = pipeline.sinks.first(where: { $0.deadLetterDirectory == nil }) {
                throw node.fail("on_schema_change: dead_letter needs a dead_letter directory on every sink; sink \(sink.name) has none",
                                hint: "add dead_letter: ${TRIBUTARY_OUT}/dead-letters to it")
            }
            pipeline.onSchemaChange = value
        }
        if let node = root["metrics"] {
            let address = try node.string().trimmingCharacters(in: .whitespaces)
            if !address.isEmpty {
                let parts = address.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count <= 2, UInt16(parts.last ?? "") != nil, parts.count == 1 || !parts[0].isEmpty else {
                    throw node.fail("'\(node.text)' is not a metrics address", hint: "write HOST:PORT or PORT (loopback), such as 127.0.0.1:9464")
                }
                pipeline.metricsAddress = parts.count == 1 ? "127.0.0.1:" + address : address
            }
        }
    }
}
