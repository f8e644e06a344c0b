@_spi(Fuzzing) import Tributary
import FuzzSupport

/// Decodes the input as a stored history payload (a marker byte, then raw or zstd-compressed
/// changes), as a damaged store would hand it to the history readers.
@_cdecl("LLVMFuzzerTestOneInput")
public func historyPayloadFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    _ = try? HistoryPayloadFuzzing.decode(FuzzInput(data, size).array)
    return 0
}
