import Foundation
import Tributary

/// Dates as `ISO8601.append(_:to:)` writes them, with the `yyyy-MM-ddT` of the last day
/// written kept (dates of one export are mostly of a few days): hours, minutes, seconds and
/// milliseconds by arithmetic instead of `gmtime_r` each time.
package struct DateTexts {
    private var day = Int64.min
    private var prefix: [UInt8] = []

    /// No day kept yet.
    package init() {}

    /// Appends `date` as `ISO8601.append(_:to:)` does.
    package mutating func append(_ date: Date, to buffer: inout [UInt8]) {
        let seconds = date.timeIntervalSince1970
        // Far dates (and NaN, infinities, which ISO8601 shows as numbers) take the slow path.
        guard seconds.magnitude < 1e11 else { return ISO8601.append(date, to: &buffer) }
        var whole = seconds.rounded(.down)
        var millis = Int(((seconds - whole) * 1000).rounded())
        if millis == 1000 { whole += 1; millis = 0 }
        let w = Int64(whole)
        let d = w >= 0 ? w / 86_400 : (w - 86_399) / 86_400
        guard d == day else {
            let start = buffer.count
            ISO8601.append(date, to: &buffer)
            let count = buffer.count - start
            if (count == 20 || count == 24) && buffer[start + 10] == 0x54 {
                day = d
                prefix = Array(buffer[start..<(start + 11)])
            } else {
                day = .min
            }
            return
        }
        prefix.withUnsafeBufferPointer { buffer.append(contentsOf: $0) }
        let inDay = Int(w - d * 86_400)
        func two(_ v: Int) {
            buffer.append(UInt8(48 + v / 10))
            buffer.append(UInt8(48 + v % 10))
        }
        two(inDay / 3600)
        buffer.append(0x3A)
        two(inDay / 60 % 60)
        buffer.append(0x3A)
        two(inDay % 60)
        if millis != 0 {
            buffer.append(0x2E)
            buffer.append(UInt8(48 + millis / 100))
            two(millis % 100)
        }
        buffer.append(0x5A)
    }
}
