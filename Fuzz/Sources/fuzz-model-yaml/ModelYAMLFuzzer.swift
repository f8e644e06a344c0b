import FuzzSupport
import Tributary

/// Reads the input as a model YAML file.
@_cdecl("LLVMFuzzerTestOneInput")
public func modelYAMLFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = try? ManagedObjectModel(yaml: FuzzInput(data, size).text, source: "fuzz.yml")
    return 0
}
