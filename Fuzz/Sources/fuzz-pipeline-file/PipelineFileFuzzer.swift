import TributaryFuzzTargets

/// libFuzzer's entry point for `fuzz-pipeline-file`: the body is `FuzzTarget.pipelineFile` (Sources/TributaryFuzzTargets),
/// which the normal test suite also runs over this harness's committed seeds.
@_cdecl("LLVMFuzzerTestOneInput")
public func pipelineFileFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.pipelineFile.run(FuzzInput(data, size))
    return 0
}
