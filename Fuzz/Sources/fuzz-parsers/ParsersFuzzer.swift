import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-parsers`: the body is `FuzzTarget.parsers` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func parsersFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.parsers.run(FuzzInput(data, size))
    return 0
}
