import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-predicate`: the body is `FuzzTarget.predicate` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func predicateFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.predicate.run(FuzzInput(data, size))
    return 0
}
