import FuzzSupport
import Tributary

/// Decodes the input as one NDJSON line for every entity of the blog model, through the
/// public decoder the importer uses. (If the decoder's entry point changes, adapt only the
/// `decode` call: the harness feeds it one line's bytes.)
@_cdecl("LLVMFuzzerTestOneInput")
public func ndjsonFuzzer(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let line = FuzzInput(data, size).text
    for decoder in decoders {
        _ = try? decoder.decode(line: line, place: "fuzz.ndjson:1")
    }
    return 0
}

private let decoders: [NDJSONDecoder] = FuzzStore.model.entities.compactMap { try? NDJSONDecoder(entity: $0.name, store: FuzzStore.store) }
