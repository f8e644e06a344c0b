import Foundation
import FuzzSupport
import Tributary
import TributaryStreams

/// Feeds the input to every small text parser: history tokens, stream positions, ISO 8601
/// dates (and prints back what parses), the CLI's durations, replay limits, sort
/// descriptors, derivations, stream formats and attribute values of every type.
@_cdecl("LLVMFuzzerTestOneInput")
public func parsersFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = FuzzInput(data, size).text
    if let token = try? PersistentHistoryToken(parsing: text) { _ = token.description }
    if let position = try? StreamPosition(parsing: text) { _ = position.description }
    if let date = ISO8601.date(from: text) { _ = ISO8601.string(from: date) }
    _ = try? CLIParsers.duration(text)
    _ = try? ReplayLimit(parsing: text)
    _ = try? SortDescriptor(parsing: text)
    _ = try? Derivation(parsing: text)
    _ = try? StreamFormat(parsing: text)
    for type in AttributeType.allCases {
        _ = try? AttributeValue.parse(text, as: type)
    }
    return 0
}
