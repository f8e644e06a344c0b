import Foundation

extension DecodingError {
    /// A short account of what is wrong and where (`entities.0.name: expected a string`),
    /// for one-line errors about JSON files instead of the decoder's dump.
    package var shortDescription: String {
        switch self {
        case .keyNotFound(let key, let context):
            return (context.codingPath.map(\.stringValue) + [key.stringValue]).joined(separator: ".") + " is missing"
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            var reason = context.debugDescription
            if let underlying = context.underlyingError as NSError?, let detail = underlying.userInfo[NSDebugDescriptionErrorKey] as? String { reason += " (\(detail))" }
            return path.isEmpty ? reason : "\(path): \(reason)"
        @unknown default:
            return "\(self)"
        }
    }
}
