import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-history-payload`: the body is `FuzzTarget.historyPayload` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func historyPayloadFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.historyPayload.run(FuzzInput(data, size))
    return 0
}
