import Foundation

/// One measurement, printed as one JSON line:
/// `{"name": …, "value": …, "unit": …, "goal": ">= 0.8", "met": true, …details}`.
struct Measurement {
    let name: String
    let value: Double
    let unit: String
    let goal: String
    var details: [(String, Any)] = []

    /// Whether `value` meets `goal` (">= x" or "<= x").
    var met: Bool {
        let parts = goal.split(separator: " ")
        guard parts.count == 2, let bound = Double(parts[1]) else { return false }
        return parts[0] == ">=" ? value >= bound : value <= bound
    }

    var jsonLine: String {
        func render(_ value: Any) -> String {
            switch value {
            case let d as Double: return d.isFinite ? String(format: "%.4g", d) : "null"
            case let i as Int: return String(i)
            case let b as Bool: return b ? "true" : "false"
            case let s as String:
                let data = try! JSONSerialization.data(withJSONObject: [s], options: [.fragmentsAllowed])
                return String(decoding: data, as: UTF8.self).dropFirst().dropLast().description
            default: return "\"\(value)\""
            }
        }
        var fields: [(String, Any)] = [("name", name), ("value", value), ("unit", unit), ("goal", goal), ("met", met)]
        fields += details
        return "{" + fields.map { "\"\($0.0)\": \(render($0.1))" }.joined(separator: ", ") + "}"
    }
}
