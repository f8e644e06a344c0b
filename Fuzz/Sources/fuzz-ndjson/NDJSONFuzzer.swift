import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-ndjson`: the body is `FuzzTarget.ndjson` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func ndjsonFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.ndjson.run(FuzzInput(data, size))
    return 0
}
