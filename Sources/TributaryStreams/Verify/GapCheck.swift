import Tributary

/// Finds positions a stream skipped. History tokens are consecutive and a transaction's
/// changes are numbered from 0, so in a stream that is not filtered each record is the
/// next change of its transaction or the first change of the next one, and the first
/// change after a snapshot is the first of the transaction after the snapshot's token.
/// A filtered stream, or one whose manifest does not say (written before this check),
/// is not checked.
struct GapCheck {
    private let enabled: Bool
    private var previous: StreamPosition?

    init(manifest: StreamManifest) {
        enabled = manifest.filtered == false
    }

    mutating func check(_ position: StreamPosition, segment: StreamManifest.Segment) throws {
        defer { previous = position }
        guard enabled, !position.isSnapshot, let previous else { return }
        let expected: Bool
        if previous.isSnapshot {
            expected = position.token == previous.token + 1 && position.index == 0
        } else if position.token == previous.token {
            expected = position.index == previous.index + 1
        } else {
            expected = position.token == previous.token + 1 && position.index == 0
        }
        guard expected else {
            throw TributaryError(.damagedStream, "the stream skips from \(previous) to \(position): changes between them are missing", location: "segment \(segment.name)",
                                 hint: "another export moved this stream's consumer, or history was pruned before it was exported; start a new stream with --snapshot")
        }
    }
}
