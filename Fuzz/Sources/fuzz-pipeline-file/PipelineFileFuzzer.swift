import FuzzSupport
import TributaryPipeline

/// Reads the input as a pipeline file, with one environment variable for `${NAME}`.
@_cdecl("LLVMFuzzerTestOneInput")
public func pipelineFileFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = try? PipelineFile(yaml: FuzzInput(data, size).text, path: "fuzz.yml", environment: ["TOKEN": "secret", "EMPTY": ""])
    return 0
}
