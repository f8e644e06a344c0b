import Foundation
import Tributary

extension StreamManifest {
    /// Calls `body` with every record (its JSON line without the newline) and position of the
    /// stream in `directory` that this manifest lists, segment by segment in stream order,
    /// each segment checked as ``SegmentReader`` checks it; `body` returns false to stop.
    ///
    /// ```swift
    /// var positions: [StreamPosition] = []
    /// try manifest.forEachRecord(in: directory) { _, position in positions.append(position); return true }
    /// ```
    public func forEachRecord(in directory: URL, _ body: (ArraySlice<UInt8>, StreamPosition) throws -> Bool) throws {
        let decoder = try ZstdFrameDecoder()
        var going = true
        for segment in segments where going {
            try SegmentReader(directory: directory, segment: segment, format: format, decoder: decoder).forEachRecord { line, position in
                going = try body(line, position)
                return going
            }
        }
    }
}
