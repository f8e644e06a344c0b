import Foundation
import FuzzSupport
import TributaryStreams

/// Loads the input as a stream directory's manifest.json, and writes back what loads.
@_cdecl("LLVMFuzzerTestOneInput")
public func manifestFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let directory = FuzzStore.scratchDirectory
    guard FileManager.default.createFile(atPath: directory.appendingPathComponent(StreamManifest.fileName).path, contents: Data(FuzzInput(data, size).bytes)) else { return 0 }
    guard let manifest = try? StreamManifest.load(from: directory) else { return 0 }
    _ = manifest.last
    _ = try? manifest.encoded()
    return 0
}
