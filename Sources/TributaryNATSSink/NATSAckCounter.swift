import CNats
import Foundation
import Synchronization
import Tributary
import TributaryPipeline

/// Counts the acknowledgments of asynchronous publishes, which nats.c reports on its own
/// threads (so the counts are atomics).
final class NATSAckCounter: Sendable {
    let acknowledged = Atomic<Int>(0)
    let duplicates = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let lastError = Mutex<String?>(nil)
}
