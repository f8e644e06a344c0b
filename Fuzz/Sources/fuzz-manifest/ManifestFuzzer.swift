import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-manifest`: the body is `FuzzTarget.manifest` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func manifestFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.manifest.run(FuzzInput(data, size))
    return 0
}
