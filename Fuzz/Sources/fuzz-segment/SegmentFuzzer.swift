import Foundation
import FuzzSupport
import Tributary
import TributaryStreams

/// Reads the input as a segment file: its footer (frame index and seek table), then, through
/// `SegmentReader` with a manifest entry that matches the file (or, when the first byte is
/// odd, one whose SHA-256 does not, to reach the damage locator), every frame and record in
/// each stream format.
@_cdecl("LLVMFuzzerTestOneInput")
public func segmentFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = FuzzInput(data, size).array
    guard let footer = try? SegmentFooter.read(bytes) else { return 0 }
    let name = "fuzz.seg"
    guard FileManager.default.createFile(atPath: FuzzStore.scratchDirectory.appendingPathComponent(name).path, contents: Data(bytes)) else { return 0 }
    let damaged = bytes.first.map { $0 & 1 == 1 } ?? false
    let entry: [String: Any] = [
        "name": name, "first": "1.0", "last": "1.0", "firstTimestamp": 0.0, "lastTimestamp": 0.0,
        "records": footer.frames.reduce(0) { $0 &+ $1.records }, "frames": footer.frames.count, "bytes": bytes.count,
        "sha256": damaged ? String(repeating: "0", count: 64) : SHA256.hex(bytes), "dictionaryID": 0,
    ]
    guard let json = try? JSONSerialization.data(withJSONObject: entry),
          let segment = try? JSONDecoder().decode(StreamManifest.Segment.self, from: json),
          let decoder = try? ZstdFrameDecoder() else { return 0 }
    for format in StreamFormat.allCases {
        guard let reader = try? SegmentReader(directory: FuzzStore.scratchDirectory, segment: segment, format: format, decoder: decoder) else { continue }
        for frame in footer.frames { _ = reader.frame(containing: frame.first) }
        try? reader.forEachRecord { _, _ in true }
    }
    return 0
}
