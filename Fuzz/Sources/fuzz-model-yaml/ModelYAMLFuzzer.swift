import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-model-yaml`: the body is `FuzzTarget.modelYAML` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func modelYAMLFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.modelYAML.run(FuzzInput(data, size))
    return 0
}
