import Foundation
import Tributary

/// Checks a stream directory: the manifest against the segments (names from their ranges,
/// record and frame counts, ranges following one another with no gap or overlap, sizes,
/// SHA-256, zstd's checksum of every frame, positions rising record by record), the
/// dictionary the segments need, and every record against the model in force at its
/// position. Capture gap records are sound and listed in the summary
/// (``Summary/captureGaps``): the stream says where the source's capture may have missed
/// writes, and the reader should hear of it. The first damage found is thrown as `damagedStream`,
/// naming the segment and the byte offset or record number.
///
/// ```swift
/// let summary = try StreamVerifier(directory: URL(fileURLWithPath: "stream")).verify()
/// print(summary.segments, summary.records)
/// ```
public struct StreamVerifier {
    /// The stream directory.
    public let directory: URL

    /// What a sound stream holds.
    public struct Summary: Sendable, Equatable {
        /// The manifest.
        public var manifest: StreamManifest
        /// Segments checked.
        public var segments = 0
        /// Records checked.
        public var records = 0
        /// Bytes of segments.
        public var bytes = 0
        /// Bytes of records once decompressed.
        public var decompressedBytes = 0
        /// The first and last position.
        public var first: StreamPosition?
        /// The last position.
        public var last: StreamPosition?
        /// Schema records (model changes) among the records, when models were checked.
        public var schemaRecords = 0
        /// Values of another class than their attribute's type in the model at their position
        /// (as the store held them: another program wrote them, or a date's seconds out of
        /// range); replay writes them as given.
        public var valueMismatches = 0
        /// The first of them, with its segment and position.
        public var firstValueMismatch: String?
        /// The capture gap records met: where writes by other programs to the source may be
        /// missing (a sound stream carries them; a reader should hear of them).
        public var captureGaps: [CaptureGapRecord] = []
    }

    /// A verifier of the stream in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The manifest, checked on its own: present, readable, segments in order with no gap or overlap.
    public func checkedManifest() throws -> StreamManifest {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw TributaryError(.invalidInput, "this is a file, not a stream directory", location: directory.path, hint: "give the directory tributary export --to wrote")
        }
        guard let manifest = try StreamManifest.load(from: directory) else {
            throw TributaryError(.damagedStream, "no manifest.json", location: directory.path, hint: "this is not a stream directory (tributary export STORE --to DIR writes one)")
        }
        let place = directory.appendingPathComponent(StreamManifest.fileName).path
        var previous: StreamPosition?
        for (i, segment) in manifest.segments.enumerated() {
            let where_ = "segment \(segment.name)"
            guard segment.previous == previous else {
                let expected = previous.map { "after \($0)" } ?? "at the start"
                throw TributaryError(.damagedStream, "segment \(i + 1) of the manifest follows \(segment.previous.map(\.description) ?? "nothing"), not the previous segment's last position (\(expected)): a gap or an overlap", location: where_,
                                     hint: "a segment is missing from the manifest, or it was edited by hand; restore it")
            }
            guard segment.first <= segment.last, previous.map({ segment.first > $0 }) ?? true else {
                throw TributaryError(.damagedStream, "range \(segment.first)…\(segment.last) does not follow \(previous?.description ?? "the start")", location: where_, hint: "the manifest was edited by hand; restore it")
            }
            guard segment.name == SegmentWriter.name(first: segment.first, last: segment.last) else {
                throw TributaryError(.damagedStream, "the name does not match the range \(segment.first)…\(segment.last) the manifest gives", location: where_, hint: "the manifest was edited by hand; restore it")
            }
            guard segment.records > 0, segment.frames > 0 else {
                throw TributaryError(.damagedStream, "the manifest gives \(segment.records) records in \(segment.frames) frames", location: where_, hint: "the manifest was edited by hand; restore it")
            }
            if segment.dictionaryID != 0, manifest.dictionary == nil {
                throw TributaryError(.damagedStream, "the segment needs zstd dictionary \(segment.dictionaryID), and the manifest names none", location: where_)
            }
            previous = segment.last
        }
        if let snapshot = manifest.snapshot, let first = manifest.segments.first?.first, !first.isSnapshot || first.token != snapshot.token {
            throw TributaryError(.damagedStream, "the manifest says the stream starts with a snapshot at token \(snapshot.token), and its first record is \(first)", location: place)
        }
        if let snapshot = manifest.snapshot, !snapshot.complete {
            let written = manifest.segments.reduce(0) { $0 + $1.records }
            throw TributaryError(.damagedStream, "the snapshot at token \(snapshot.token) is incomplete (\(written) records written): its export was cut short", location: place,
                                 hint: "run the export again: it starts the stream over with a new snapshot")
        }
        return manifest
    }

    /// Checks everything; returns a summary of a sound stream. With `checkingModels` (the
    /// default), each record is read and checked against the model in force at its position
    /// (`model.json`, then each schema record's), and the schema records against the
    /// manifest's model versions; replay, which reads each record anyway, leaves that out.
    ///
    /// ```swift
    /// let summary = try StreamVerifier(directory: streamURL).verify()
    /// print(summary.schemaRecords, "model changes")
    /// ```
    public func verify(checkingModels: Bool = true, progress: (Summary) -> Void = { _ in }) throws -> Summary {
        let manifest = try checkedManifest()
        let dictionary = try StreamExporter.loadDictionary(directory: directory, manifest: manifest)
        if let dictionary, manifest.dictionary != "dictionary-\(dictionary.id).zdict" {
            throw TributaryError(.damagedStream, "the dictionary file \(manifest.dictionary!) holds dictionary \(dictionary.id)", location: directory.path, hint: "restore the dictionary")
        }
        let decoder = try ZstdFrameDecoder(dictionary: dictionary)
        var summary = Summary(manifest: manifest)
        var gaps = GapCheck(manifest: manifest)
        var models = checkingModels ? try ModelConformance(directory: directory, format: manifest.format) : nil
        for segment in manifest.segments {
            let reader = try SegmentReader(directory: directory, segment: segment, format: manifest.format, decoder: decoder)
            var count = 0
            var last: StreamPosition?
            try reader.forEachRecord { line, position in
                if count == 0, position != segment.first {
                    throw TributaryError(.damagedStream, "record 1 is at \(position), the manifest says \(segment.first)", location: "segment \(segment.name)")
                }
                try gaps.check(position, segment: segment)
                if let gap = try Self.captureGap(line, format: manifest.format, position: position, segment: segment) {
                    summary.captureGaps.append(gap)
                } else {
                    try models?.check(line, position: position, segment: segment)
                }
                count += 1
                last = position
                summary.decompressedBytes += line.count + 1
                return true
            }
            guard count == segment.records, last == segment.last else {
                throw TributaryError(.damagedStream, "the segment holds \(count) records ending at \(last?.description ?? "nothing"), the manifest says \(segment.records) ending at \(segment.last)", location: "segment \(segment.name)")
            }
            summary.segments += 1
            summary.records += count
            summary.bytes += segment.bytes
            summary.first = summary.first ?? segment.first
            summary.last = segment.last
            summary.schemaRecords = models?.versions.count ?? summary.schemaRecords
            summary.valueMismatches = models?.valueMismatches ?? 0
            summary.firstValueMismatch = models?.firstValueMismatch
            progress(summary)
        }
        try models?.checkListed(in: manifest, place: directory.appendingPathComponent(StreamManifest.fileName).path)
        return summary
    }

    /// The capture gap record `line` holds at `position`, checked to say that position.
    private static func captureGap(_ line: ArraySlice<UInt8>, format: StreamFormat, position: StreamPosition, segment: StreamManifest.Segment) throws -> CaptureGapRecord? {
        let place = "segment \(segment.name)"
        let gap: CaptureGapRecord?
        do {
            gap = try CaptureGapRecord.read(line, format: format, at: position)
        } catch let error as TributaryError {
            throw error.located(place)
        }
        guard let gap, gap.position != position else { return gap }
        throw TributaryError(.damagedStream, "the capture gap record at \(position) says it is at \(gap.position)", location: place, hint: "the stream was edited; restore it from a copy")
    }
}
