import Dispatch
import Foundation

/// Compresses a large history transaction's body in chunks on another thread while
/// the writer is still writing it, so that at commit only the last chunk is left to
/// compress on the writer's thread (compression was a fifth of history's cost in bulk
/// imports). Each chunk becomes an independent zstd frame; concatenated frames
/// decompress to the concatenated chunks (``Zstd/decompress(_:)``).
///
/// One writer uses it: `submit` chunks in order during a transaction, then `frames()`
/// at commit or `discard()` on rollback.
///
/// ```swift
/// let chunks = HistoryChunkCompressor()
/// chunks.submit(body[0..<65_536])
/// let frames = try chunks.frames()   // one frame, compressed meanwhile
/// ```
final class HistoryChunkCompressor: @unchecked Sendable {
    /// Body bytes a chunk holds: large enough to compress nearly as well as the whole body,
    /// small enough that the last one, compressed at commit, is short.
    static let chunkSize = 64 * 1024

    private let queue = DispatchQueue(label: "tributary.history.compression")
    /// The frames made so far, in order, or the first failure. Written on `queue`.
    private let results = Locked<(frames: [[UInt8]], failure: Error?)>(([], nil))
    /// Chunk buffers compressed and given back, for the next chunks: a new buffer each
    /// time cost a page fault per 4 KB on the writer's thread.
    private let spare = Locked<[[UInt8]]>([])
    /// Whether anything was submitted since the last `frames()` or `discard()` (writer's thread only).
    private(set) var isActive = false

    /// Compresses a copy of `bytes` as the next frame, on the compression thread.
    func submit(_ bytes: ArraySlice<UInt8>) {
        isActive = true
        var chunk = spare.withLock { $0.popLast() } ?? []
        chunk.removeAll(keepingCapacity: true)
        chunk.append(contentsOf: bytes)
        queue.async { [results, spare, chunk] in
            do {
                let frame = try Zstd.compress(chunk, level: HistoryPayload.compressionLevel)
                results.withLock { $0.frames.append(frame) }
            } catch {
                results.withLock { if $0.failure == nil { $0.failure = error } }
            }
            spare.withLock { if $0.count < 4 { $0.append(chunk) } }
        }
    }

    /// Waits for the chunks submitted and returns their frames, in order; empties the compressor.
    func frames() throws -> [[UInt8]] {
        queue.sync {}
        isActive = false
        let (frames, failure) = results.withLock { state in
            defer { state = ([], nil) }
            return state
        }
        if let failure { throw failure }
        return frames
    }

    /// Waits for the chunks submitted and drops their frames.
    func discard() {
        guard isActive else { return }
        _ = try? frames()
    }
}
