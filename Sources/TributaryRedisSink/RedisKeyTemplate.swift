import Tributary
import TributaryPipeline
import TributaryStreams

/// A key template (`{entity}:{id}`, with `{store}` too) split once into its parts, so each
/// record's key is a few appends rather than a search and replace per placeholder.
///
/// ```swift
/// RedisKeyTemplate("cache:{entity}:{id}").key(for: record)   // "cache:Post:42"
/// ```
struct RedisKeyTemplate: Sendable {
    enum Part: Sendable, Equatable {
        case text(String)
        case entity
        case id
        case store
    }

    let parts: [Part]

    /// Splits `template` at its placeholders (anything else is text).
    init(_ template: String) {
        var parts: [Part] = []
        var rest = Substring(template)
        let names: [(String, Part)] = [("{entity}", .entity), ("{id}", .id), ("{store}", .store)]
        while !rest.isEmpty {
            var next: (Range<Substring.Index>, Part)?
            for (name, part) in names {
                if let range = rest.range(of: name), next == nil || range.lowerBound < next!.0.lowerBound { next = (range, part) }
            }
            guard let (range, part) = next else {
                parts.append(.text(String(rest)))
                break
            }
            if range.lowerBound > rest.startIndex { parts.append(.text(String(rest[..<range.lowerBound]))) }
            parts.append(part)
            rest = rest[range.upperBound...]
        }
        self.parts = parts
    }

    /// The key of `record`'s object.
    func key(for record: StreamRecord) -> String {
        var key = ""
        for part in parts {
            switch part {
            case .text(let text): key += text
            case .entity: key += record.entityName
            case .id: key += String(record.objectID.primaryKey)
            case .store: key += record.storeID.lowercasedString
            }
        }
        return key
    }
}
