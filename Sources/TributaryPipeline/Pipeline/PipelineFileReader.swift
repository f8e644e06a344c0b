import Foundation
import Tributary
import TributaryStreams
import Yams

/// Walks a pipeline YAML document, keeping line numbers and key paths for errors, and
/// substituting `${NAME}` / `${NAME:-default}` in scalar values. Errors quote the file's text,
/// never a substituted value (which may come from a secret).
struct PipelineFileReader {
    let path: String
    let environment: [String: String]

    static let topKeys = ["name", "source", "transforms", "sinks", "checkpoint", "retry", "prune", "metrics"]
    static let sourceKeys = ["store", "consumer", "entities", "authors", "exclude_authors", "contexts", "change_types", "snapshot"]
    static let transformActions = ["filter", "include", "exclude", "rename", "redact", "hash"]
    static let transformKeys = transformActions + ["entities", "salt_env"]
    static let sinkCommonKeys = ["type", "name", "on_error", "dead_letter", "batch_size"]
    static let sinkTypeKeys: [String: [String]] = [
        "segments": ["directory", "format", "segment_records"],
        "stdout": ["format"],
        "fts": ["path", "entities"],
        "http": ["url", "bearer_token_env", "bearer_token_file", "timeout", "format"],
        "redis": redisKeys,
        "nats": NATSSinkSettings.keys,
        "postgres": postgresKeys,
    ]
    static let checkpointKeys = ["records", "seconds"]
    static let retryKeys = ["initial", "max", "max_attempts"]
    static let pruneKeys = ["consumed", "max_age"]
    /// Keys that would put a credential in the file itself.
    static let credentialKeys = ["token", "bearer_token", "password", "secret", "api_key", "apikey", "authorization"]

    func fail(_ node: Node?, _ key: String, _ message: String, hint: String? = nil) -> TributaryError {
        let line = node?.mark.map { ":\($0.line)" } ?? ""
        return TributaryError(.invalidPipeline, message, location: path + line + (key.isEmpty ? "" : ": " + key), hint: hint)
    }

    func read(_ yaml: String) throws -> PipelineFile {
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
        guard let root, case .mapping(let top) = root else {
            throw fail(root, "", "a pipeline file is a mapping", hint: "allowed keys: \(Self.topKeys.joined(separator: ", "))")
        }
        try checkKeys(top, allowed: Self.topKeys, at: "")
        let defaultName = URL(fileURLWithPath: path).deletingPathExtension().lastPathComponent
        let name = try top["name"].map { try string($0, "name") } ?? defaultName
        guard let sourceNode = top["source"] else { throw fail(root, "source", "the pipeline has no source", hint: "add source: {store: PATH}") }
        let source = try readSource(sourceNode, pipelineName: name)
        var transforms: [RecordTransform] = []
        if let node = top["transforms"] {
            for (index, item) in try sequence(node, "transforms").enumerated() { transforms.append(try readTransform(item, key: "transforms[\(index)]")) }
        }
        guard let sinksNode = top["sinks"] else { throw fail(root, "sinks", "the pipeline has no sinks", hint: "add sinks: with at least one sink, such as - type: stdout") }
        let sinkNodes = try sequence(sinksNode, "sinks")
        guard !sinkNodes.isEmpty else { throw fail(sinksNode, "sinks", "the pipeline has no sinks", hint: "add at least one sink, such as - type: stdout") }
        var sinks: [PipelineFile.SinkSettings] = []
        for (index, item) in sinkNodes.enumerated() {
            let sink = try readSink(item, key: "sinks[\(index)]", index: index)
            if sinks.contains(where: { $0.name == sink.name }) {
                throw fail(item, "sinks[\(index)].name", "two sinks are named '\(sink.name)'", hint: "give each sink its own name:")
            }
            sinks.append(sink)
        }
        var pipeline = PipelineFile(path: path, name: name, source: source, transforms: transforms, sinks: sinks)
        if let node = top["checkpoint"] {
            let map = try mapping(node, "checkpoint", allowed: Self.checkpointKeys)
            if let n = map["records"] { pipeline.checkpoint.records = try positive(n, "checkpoint.records") }
            if let n = map["seconds"] { pipeline.checkpoint.seconds = try duration(n, "checkpoint.seconds") }
        }
        if let node = top["retry"] {
            let map = try mapping(node, "retry", allowed: Self.retryKeys)
            if let n = map["initial"] { pipeline.retry.initial = try duration(n, "retry.initial") }
            if let n = map["max"] { pipeline.retry.maximum = try duration(n, "retry.max") }
            if let n = map["max_attempts"] { pipeline.retry.maximumAttempts = try integer(n, "retry.max_attempts", minimum: 0) }
        }
        if let node = top["prune"] {
            let map = try mapping(node, "prune", allowed: Self.pruneKeys)
            let consumed = try map["consumed"].map { try bool($0, "prune.consumed") } ?? true
            if consumed { pipeline.prune = PipelineFile.PrunePolicy(maximumAge: try map["max_age"].map { try duration($0, "prune.max_age") }) }
        }
        if let node = top["metrics"] {
            let address = try string(node, "metrics").trimmingCharacters(in: .whitespaces)
            if !address.isEmpty {
                let parts = address.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count <= 2, UInt16(parts.last ?? "") != nil, parts.count == 1 || !parts[0].isEmpty else {
                    throw fail(node, "metrics", "'\(raw(node))' is not a metrics address", hint: "write HOST:PORT or PORT (loopback), such as 127.0.0.1:9464")
                }
                pipeline.metricsAddress = parts.count == 1 ? "127.0.0.1:" + address : address
            }
        }
        return pipeline
    }

    // MARK: Sections

    private func readSource(_ node: Node, pipelineName: String) throws -> PipelineFile.Source {
        let map = try mapping(node, "source", allowed: Self.sourceKeys)
        guard let storeNode = map["store"] else { throw fail(node, "source.store", "the source has no store", hint: "add store: ${TRIBUTARY_STORE}") }
        var source = PipelineFile.Source(store: try storePath(storeNode), consumer: try map["consumer"].map { try string($0, "source.consumer") } ?? pipelineName)
        if let n = map["entities"] { source.filter.entities = try strings(n, "source.entities") }
        if let n = map["authors"] { source.filter.authors = try strings(n, "source.authors") }
        if let n = map["exclude_authors"] { source.filter.excludedAuthors = try strings(n, "source.exclude_authors") }
        if let n = map["contexts"] { source.filter.contextNames = try strings(n, "source.contexts") }
        if let n = map["change_types"] {
            source.filter.changeTypes = try strings(n, "source.change_types").map { text in
                guard let type = PersistentHistoryChangeType(rawValue: text) else {
                    throw fail(n, "source.change_types", "unknown change type '\(text)'", hint: "use insert, update or delete")
                }
                return type
            }
        }
        if let n = map["snapshot"] { source.snapshot = try bool(n, "source.snapshot") }
        return source
    }

    /// The store's path: a relative path written in the file is resolved from the file's
    /// directory; one that comes from the environment (`${TRIBUTARY_STORE}`) from the working
    /// directory, as the shell that set it would.
    private func storePath(_ node: Node) throws -> String {
        let text = try string(node, "source.store")
        guard !text.hasPrefix("/"), !raw(node).contains("${") else { return text }
        return URL(fileURLWithPath: path).deletingLastPathComponent().appendingPathComponent(text).standardizedFileURL.path
    }

    private func readTransform(_ node: Node, key: String) throws -> RecordTransform {
        let map = try mapping(node, key, allowed: Self.transformKeys)
        let actions = Self.transformActions.filter { map[$0] != nil }
        guard actions.count == 1, let action = actions.first, let value = map[action] else {
            throw fail(node, key, actions.isEmpty ? "a transform needs an action" : "a transform has one action, not \(actions.joined(separator: " and "))",
                       hint: "use one of \(Self.transformActions.joined(separator: ", ")), with optional entities:")
        }
        let entities = Set(try map["entities"].map { try strings($0, key + ".entities") } ?? [])
        if map["salt_env"] != nil, action != "hash" { throw fail(map["salt_env"], key + ".salt_env", "salt_env goes with hash", hint: "remove it or use hash:") }
        let actionKey = key + "." + action
        switch action {
        case "filter":
            let format = try string(value, actionKey)
            do {
                let predicate = try StorePredicate(format: format)
                try predicate.checkEvaluable()
                return RecordTransform(.filter(predicate), entities: entities)
            } catch let error as TributaryError {
                throw fail(value, actionKey, "the predicate cannot be used: \(error.message)", hint: error.hint)
            }
        case "include": return RecordTransform(.include(Set(try strings(value, actionKey))), entities: entities)
        case "exclude": return RecordTransform(.exclude(Set(try strings(value, actionKey))), entities: entities)
        case "rename":
            guard case .mapping(let names) = value else { throw fail(value, actionKey, "rename maps entity names to new names", hint: "write rename: {Post: posts}") }
            var renames: [String: String] = [:]
            for (from, to) in names { renames[try string(from, actionKey)] = try string(to, actionKey + "." + (from.scalar?.string ?? "")) }
            return RecordTransform(.rename(renames), entities: entities)
        case "redact": return RecordTransform(.redact(Set(try strings(value, actionKey))), entities: entities)
        default:
            var salt = ""
            if let saltNode = map["salt_env"] {
                let variable = try string(saltNode, key + ".salt_env")
                guard let value = environment[variable] else {
                    throw fail(saltNode, key + ".salt_env", "the environment variable \(variable) is not set", hint: "export \(variable) before running the pipeline")
                }
                salt = value
            }
            return RecordTransform(.hash(Set(try strings(value, actionKey)), salt: salt), entities: entities)
        }
    }

    private func readSink(_ node: Node, key: String, index: Int) throws -> PipelineFile.SinkSettings {
        guard case .mapping(let map) = node else { throw fail(node, key, "a sink is a mapping", hint: "write - type: stdout") }
        guard let typeNode = map["type"] else {
            throw fail(node, key + ".type", "the sink has no type", hint: "use type: \(Self.sinkTypeKeys.keys.sorted().joined(separator: ", "))")
        }
        let type = try string(typeNode, key + ".type")
        guard let typeKeys = Self.sinkTypeKeys[type] else {
            throw fail(typeNode, key + ".type", "unknown sink type '\(raw(typeNode))'", hint: "use \(Self.sinkTypeKeys.keys.sorted().joined(separator: ", "))")
        }
        try checkKeys(map, allowed: Self.sinkCommonKeys + typeKeys, at: key)
        func required(_ name: String, hint: String) throws -> Node {
            guard let value = map[name] else { throw fail(node, key + "." + name, "a \(type) sink needs \(name)", hint: hint) }
            return value
        }
        func format() throws -> StreamFormat {
            guard let n = map["format"] else { return .native }
            let text = try string(n, key + ".format")
            guard let format = StreamFormat(rawValue: text) else { throw fail(n, key + ".format", "unknown format '\(raw(n))'", hint: "use native, debezium or cloudevents") }
            return format
        }
        let kind: PipelineFile.SinkSettings.Kind
        switch type {
        case "segments":
            kind = .segments(directory: try string(try required("directory", hint: "add directory: ${TRIBUTARY_OUT}/archive"), key + ".directory"), format: try format(),
                             segmentRecords: try map["segment_records"].map { try positive($0, key + ".segment_records") } ?? 100_000)
        case "stdout":
            kind = .stdout(format: try format())
        case "fts":
            let entitiesNode = try required("entities", hint: "add entities: {Post: [title, content]}")
            guard case .mapping(let entityMap) = entitiesNode, entityMap.count > 0 else {
                throw fail(entitiesNode, key + ".entities", "entities maps each entity to the attributes to index", hint: "write entities: {Post: [title, content]}")
            }
            var entities: [String: [String]] = [:]
            for (entity, attributes) in entityMap {
                let name = try string(entity, key + ".entities")
                let list = try strings(attributes, key + ".entities." + name)
                guard !list.isEmpty else { throw fail(attributes, key + ".entities." + name, "no attributes to index", hint: "list at least one attribute") }
                entities[name] = list
            }
            kind = .fullTextIndex(path: try string(try required("path", hint: "add path: ${TRIBUTARY_OUT}/search.sqlite"), key + ".path"), entities: entities)
        case "redis":
            kind = .redis(try readRedisSink(map, node: node, key: key))
        case "nats":
            kind = .nats(try readNATSSink(map, node: node, key: key, format: try format()))
        case "postgres":
            kind = .postgres(try readPostgresSink(map, node: node, key: key))
        default:
            let urlNode = try required("url", hint: "add url: https://example.com/hook")
            let text = try string(urlNode, key + ".url")
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
                throw fail(urlNode, key + ".url", "the url is not an http or https URL", hint: "write url: https://host/path")
            }
            if url.user != nil || url.password != nil {
                throw fail(urlNode, key + ".url", "the url holds credentials", hint: "credentials come from the environment: use bearer_token_env: NAME")
            }
            let tokenEnv = try map["bearer_token_env"].map { try string($0, key + ".bearer_token_env") }
            let tokenFile = try map["bearer_token_file"].map { try string($0, key + ".bearer_token_file") }
            if tokenEnv != nil, tokenFile != nil {
                throw fail(map["bearer_token_file"], key + ".bearer_token_file", "give bearer_token_env or bearer_token_file, not both")
            }
            kind = .http(url: url, bearerTokenEnvironment: tokenEnv, bearerTokenFile: tokenFile,
                         timeout: try map["timeout"].map { try duration($0, key + ".timeout") } ?? 10, format: try format())
        }
        var onError = PipelineFile.OnError.retry
        if let n = map["on_error"] {
            let text = try string(n, key + ".on_error")
            guard let value = PipelineFile.OnError(rawValue: text) else {
                throw fail(n, key + ".on_error", "unknown on_error '\(raw(n))'", hint: "use retry, dead_letter or stop")
            }
            onError = value
        }
        let deadLetter = try map["dead_letter"].map { try string($0, key + ".dead_letter") }
        if onError == .deadLetter, deadLetter == nil {
            throw fail(node, key + ".dead_letter", "on_error: dead_letter needs a dead_letter directory", hint: "add dead_letter: ${TRIBUTARY_OUT}/dead-letters")
        }
        let name = try map["name"].map { try string($0, key + ".name") } ?? (index == 0 ? type : "\(type)-\(index)")
        return PipelineFile.SinkSettings(name: name, kind: kind, onError: onError, deadLetterDirectory: deadLetter,
                                         batchSize: try map["batch_size"].map { try positive($0, key + ".batch_size") } ?? 100)
    }

    // MARK: Values

    /// A scalar's text as the file has it (errors quote this, never a substituted value).
    private func raw(_ node: Node) -> String { node.scalar?.string ?? "" }

    private func checkKeys(_ map: Node.Mapping, allowed: [String], at key: String) throws {
        for (keyNode, _) in map {
            let name = keyNode.scalar?.string ?? ""
            let path = key.isEmpty ? name : key + "." + name
            if Self.credentialKeys.contains(name.lowercased()) {
                throw fail(keyNode, path, "credentials are not written in a pipeline file",
                           hint: "put the secret in an environment variable and name it, e.g. bearer_token_env: WEBHOOK_TOKEN, or bearer_token_file: PATH")
            }
            guard allowed.contains(name) else {
                throw fail(keyNode, path, "unknown key '\(name)'", hint: "allowed keys: \(allowed.joined(separator: ", "))")
            }
        }
    }

    private func mapping(_ node: Node, _ key: String, allowed: [String]) throws -> Node.Mapping {
        guard case .mapping(let map) = node else { throw fail(node, key, "\(key) must be a mapping", hint: "allowed keys: \(allowed.joined(separator: ", "))") }
        try checkKeys(map, allowed: allowed, at: key)
        return map
    }

    private func sequence(_ node: Node, _ key: String) throws -> [Node] {
        guard case .sequence(let items) = node else { throw fail(node, key, "\(key) must be a list", hint: "write each item on a line starting with -") }
        return Array(items)
    }

    /// A scalar's text with environment variables substituted.
    func string(_ node: Node, _ key: String) throws -> String {
        guard case .scalar(let scalar) = node else { throw fail(node, key, "\(key) must be a single value, not a list or mapping") }
        return try substitute(scalar.string, node: node, key: key)
    }

    private func strings(_ node: Node, _ key: String) throws -> [String] {
        if case .scalar = node { return [try string(node, key)] }
        return try sequence(node, key).map { try string($0, key) }
    }

    private func bool(_ node: Node, _ key: String) throws -> Bool {
        switch try string(node, key).lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(node, key, "\(key) must be true or false, not '\(node.scalar?.string ?? "")'")
        }
    }

    private func integer(_ node: Node, _ key: String, minimum: Int) throws -> Int {
        guard let value = Int(try string(node, key)), value >= minimum else {
            throw fail(node, key, "\(key) must be a whole number of at least \(minimum), not '\(node.scalar?.string ?? "")'")
        }
        return value
    }

    private func positive(_ node: Node, _ key: String) throws -> Int { try integer(node, key, minimum: 1) }

    /// Seconds from `250ms`, `5s`, `10m`, `2h`, `7d` or a plain number of seconds.
    func duration(_ node: Node, _ key: String) throws -> TimeInterval {
        let text = try string(node, key).trimmingCharacters(in: .whitespaces)
        let units: [(String, Double)] = [("ms", 0.001), ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            if let value = Double(text.dropLast(suffix.count)), value >= 0 { return value * scale }
        }
        if let value = Double(text), value >= 0 { return value }
        throw fail(node, key, "'\(node.scalar?.string ?? "")' is not a duration", hint: "write 250ms, 5s, 10m, 2h or 7d")
    }

    /// Replaces `${NAME}` and `${NAME:-default}` with the environment's values.
    func substitute(_ text: String, node: Node, key: String) throws -> String {
        guard text.contains("${") else { return text }
        var result = ""
        var rest = Substring(text)
        while let start = rest.range(of: "${") {
            result += rest[..<start.lowerBound]
            guard let end = rest[start.upperBound...].firstIndex(of: "}") else {
                throw fail(node, key, "'${' without a closing '}'", hint: "write ${NAME} or ${NAME:-default}")
            }
            let inner = rest[start.upperBound..<end]
            let name: Substring, fallback: Substring?
            if let separator = inner.range(of: ":-") {
                name = inner[..<separator.lowerBound]
                fallback = inner[separator.upperBound...]
            } else {
                name = inner
                fallback = nil
            }
            guard !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else {
                throw fail(node, key, "'${\(inner)}' is not a variable reference", hint: "names are letters, digits and _; write ${NAME} or ${NAME:-default}")
            }
            if let value = environment[String(name)], !value.isEmpty {
                result += value
            } else if let fallback {
                result += fallback
            } else {
                throw fail(node, key, "the environment variable \(name) is not set", hint: "export \(name), or write ${\(name):-default}")
            }
            rest = rest[rest.index(after: end)...]
        }
        return result + rest
    }
}
