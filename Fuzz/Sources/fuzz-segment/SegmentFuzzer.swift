import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-segment`: the body is `FuzzTarget.segment` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func segmentFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.segment.run(FuzzInput(data, size))
    return 0
}
