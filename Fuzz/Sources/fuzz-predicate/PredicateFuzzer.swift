import Foundation
import FuzzSupport
import Tributary

/// Parses the input as a predicate format (with a few arguments for `%@`, `%K`, `$VAR`),
/// compiles it to SQL against every entity of the blog model (through `explain`, so SQLite
/// prepares the SQL too), and evaluates it in memory over one object's values.
@_cdecl("LLVMFuzzerTestOneInput")
public func predicateFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let format = FuzzInput(data, size).text
    let arguments: [AttributeValue] = [.string("title"), .integer(7), .date(Date(timeIntervalSince1970: 0)), .array([.string("a"), .integer(1)])]
    guard let predicate = try? StorePredicate(format: format, argumentArray: arguments) else { return 0 }
    for entity in FuzzStore.model.entities {
        _ = try? FuzzStore.coordinator.explain(FetchRequest(entityName: entity.name, predicate: predicate))
    }
    _ = try? predicate.evaluate(["title": .string("Swift"), "createdAt": .date(Date(timeIntervalSince1970: 1)), "postCount": .integer(3), "content": .null])
    return 0
}
