import Foundation
import Tributary

/// Exports a store's history to a stream directory through a history consumer, never losing
/// or repeating a change across crashes: segments and the manifest naming them are durable
/// before the consumer is committed, a restart resumes after the manifest's last position,
/// and a leftover temporary or unlisted segment is removed on start.
///
/// ```swift
/// let exporter = try StreamExporter(coordinator: coordinator, directory: URL(fileURLWithPath: "stream"), options: ExportOptions())
/// let summary = try exporter.exportOnce()
/// print(summary.records, exporter.warnings)
/// ```
public final class StreamExporter {
    /// The coordinator of the source store.
    public let coordinator: PersistentStoreCoordinator
    /// The stream directory.
    public let directory: URL
    /// The options.
    public let options: ExportOptions
    /// Things the caller should tell the user (history already pruned, dictionary not trained).
    public private(set) var warnings: [String] = []
    /// The manifest as last saved.
    public internal(set) var manifest: StreamManifest

    let storeID: UUID
    /// Reads the history after the stream's position and commits the consumer.
    private let follower: HistoryFollower
    // Unchecked exclusivity on the properties each record touches: the exporter is used by one
    // thread at a time, and the runtime's checks on them were a few percent of an export.
    @exclusivity(unchecked) private var recordEncoder: any RecordEncoder
    /// The native encoder when the format is native: history inserts go through it in place.
    @exclusivity(unchecked) private var native: NativeEncoder?
    /// The model in force over the tokens exported (``useModel(at:)``).
    @exclusivity(unchecked) private var modelSpans: ModelSpans
    private var frameEncoder: ZstdFrameEncoder
    @exclusivity(unchecked) private var writer: SegmentWriter?
    private var committed: Int64 = 0
    @exclusivity(unchecked) private var line: [UInt8] = []
    private var samples: [(line: [UInt8], position: StreamPosition, timestamp: Date)] = []
    private var sampleBytes = 0
    @exclusivity(unchecked) private var training: Bool
    /// Model versions of schema records written to the open segment, listed in the manifest with it.
    var pendingModels: [StreamManifest.ModelVersion] = []

    /// Opens (or creates) the stream directory for `coordinator`'s store: checks that an
    /// existing stream is of this store and format, removes a leftover temporary segment and
    /// segment files the manifest does not list, writes the model beside the manifest, and
    /// registers the consumer (at the oldest kept history when new).
    public init(coordinator: PersistentStoreCoordinator, directory: URL, options: ExportOptions) throws {
        self.coordinator = coordinator
        self.directory = directory
        self.options = options
        guard let store = coordinator.persistentStores.first else {
            throw TributaryError(.noStore, "the coordinator has no store", hint: "add a store before exporting")
        }
        storeID = store.identifier
        // A store without history fails here, before anything is written.
        _ = try coordinator.currentPersistentHistoryToken()
        follower = HistoryFollower(coordinator: coordinator, storeID: storeID, consumerName: options.consumerName, filter: options.filter)
        try Self.checkTimeFilters(options.filter, directory: directory)
        try DirectoryPreparer.create(directory, what: "stream directory")
        var manifest = try StreamManifest.load(from: directory) ?? StreamManifest(storeID: storeID, format: options.format)
        guard manifest.storeID == storeID else {
            throw TributaryError(.invalidInput, "the stream in \(directory.path) is of store \(manifest.storeID.uuidString.lowercased()), not \(storeID.uuidString.lowercased())",
                                 hint: "export each store to its own directory")
        }
        guard manifest.format == options.format else {
            throw TributaryError(.invalidInput, "the stream in \(directory.path) is in the \(manifest.format.rawValue) format, not \(options.format.rawValue)",
                                 hint: "use --format \(manifest.format.rawValue), or export to a new directory")
        }
        // A snapshot cut short cannot be continued (the rows have moved on): start the stream over.
        if let snapshot = manifest.snapshot, !snapshot.complete {
            for segment in manifest.segments { try? FileManager.default.removeItem(at: directory.appendingPathComponent(segment.name)) }
            manifest.segments = []
            manifest.snapshot = nil
            manifest.completeThrough = 0
            try manifest.save(to: directory)
        }
        let existing = try? coordinator.historyConsumer(named: options.consumerName)
        try Self.bind(&manifest, to: options, consumerExists: existing != nil, directory: directory)
        self.manifest = manifest
        try Self.removeLeftovers(in: directory, manifest: manifest)
        let dictionary = try Self.loadDictionary(directory: directory, manifest: manifest)
        frameEncoder = try ZstdFrameEncoder(level: options.compressionLevel, dictionary: dictionary)
        recordEncoder = options.format.makeEncoder(clock: options.clock)
        native = options.format == .native ? NativeEncoder() : nil
        modelSpans = ModelSpans(coordinator: coordinator)
        training = options.dictionary && dictionary == nil && manifest.segments.isEmpty
        let consumer = try existing ?? coordinator.registerHistoryConsumer(options.consumerName, startingAt: .oldest)
        committed = consumer.token.value
        try writeStartingModel(store: store, startToken: committed)
        if existing == nil, manifest.segments.isEmpty, !options.snapshot, consumer.token.value > 0 {
            warnings.append("history through token \(consumer.token) was already pruned, so the stream starts after it; export with --snapshot to include the rows it changed")
        }
    }

    /// The dictionary a stream uses, read from beside its manifest.
    static func loadDictionary(directory: URL, manifest: StreamManifest) throws -> ZstdDictionary? {
        guard let name = manifest.dictionary else { return nil }
        guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
            throw TributaryError(.damagedStream, "the zstd dictionary \(name) is missing", location: directory.path, hint: "the manifest names it; restore it from a copy")
        }
        return try ZstdDictionary(bytes: [UInt8](data))
    }

    /// Removes the temporary segment and segment files the manifest does not list (written
    /// before a crash, before the manifest named them: their records are exported again).
    package static func removeLeftovers(in directory: URL, manifest: StreamManifest) throws {
        let listed = Set(manifest.segments.map(\.name))
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            let leftover = name == SegmentWriter.temporaryName || name.hasSuffix(".tmp") || (name.hasSuffix(SegmentWriter.fileExtension) && !listed.contains(name))
            if leftover { try FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
        }
    }

    /// Exports what the store has now: the snapshot first if asked for and the stream is new,
    /// then the history after the stream's last position, closing segments as they fill and
    /// committing the consumer after each. Returns what was written.
    public func exportOnce(progress: (ExportSummary) -> Void = { _ in }) throws -> ExportSummary {
        var summary = ExportSummary()
        if options.snapshot, manifest.segments.isEmpty, manifest.snapshot == nil {
            try exportSnapshot(&summary, progress: progress)
        }
        // A stream continues from what it holds, even if its consumer was moved past that
        // (history it needs that was pruned since fails the read, never leaves a silent gap),
        // and only from the history it was exported from (not a copy the store was replaced by).
        var after = manifest.completeThrough
        if manifest.segments.isEmpty, manifest.snapshot == nil, manifest.completeThrough == 0 { after = committed }
        if let last = manifest.last { after = max(after, last.completeToken) }
        let current = try follower.head(after: after)
        if let chain = manifest.chain { try follower.requireHistory(hash: chain.hash, at: chain.token, recordedBy: "the stream in \(directory.path)") }
        let resumeAfter = manifest.last.flatMap { $0.isSnapshot ? nil : (token: $0.token, index: $0.index) }
        let inPlace = native != nil && options.excludedProperties.isEmpty
        _ = try follower.readChanges(after: after, through: current, resumingAfter: resumeAfter, schema: { event in
            try self.emitSchema(SchemaRecord(event, storeID: self.storeID), summary: &summary)
        }, gaps: { event in
            try self.emitGap(CaptureGapRecord(event, storeID: self.storeID), summary: &summary)
        }) { view in
            let position = StreamPosition(token: view.token.value, index: view.index)
            let complete = HistoryFollower.completeToken(view.token.value, isSnapshot: false)
            // Inserts (most of a bulk load) are encoded straight from the history payload.
            line.removeAll(keepingCapacity: true)
            try useModel(at: position.token)
            if inPlace, try native!.encodeInsert(view, position: position, storeID: storeID, into: &line) {
                try emitLine(position: position, timestamp: view.timestamp, completeThrough: complete, summary: &summary)
            } else {
                try emit(try StreamRecord(view, excluding: options.excludedProperties), completeThrough: complete, summary: &summary)
            }
            if summary.records % 10_000 == 0 { progress(summary) }
        }
        try finishPass(completeThrough: current.value, summary: &summary)
        summary.committedThrough = committed
        progress(summary)
        return summary
    }

    private func exportSnapshot(_ summary: inout ExportSummary, progress: (ExportSummary) -> Void) throws {
        let now = options.clock()
        var index = 0
        try coordinator.enumerateSnapshot(entities: options.filter.entities, begin: { token in
            manifest.snapshot = StreamManifest.Snapshot(token: token.value, complete: false, objects: 0)
            startModels(at: StreamPosition(token: token.value, index: 0, isSnapshot: true))
        }) { object in
            let record = StreamRecord(snapshot: object, position: StreamPosition(token: manifest.snapshot!.token, index: index, isSnapshot: true), timestamp: now,
                                      excluding: options.excludedProperties)
            index += 1
            summary.snapshotObjects += 1
            try emit(record, completeThrough: nil, summary: &summary)
            if index % 10_000 == 0 { progress(summary) }
        }
        manifest.snapshot!.objects = index
        manifest.snapshot!.complete = true
        try finishPass(completeThrough: manifest.snapshot!.token, summary: &summary)
    }

    /// Gives the encoders the model in force at `token` when it may differ from the one they
    /// have (``ModelSpans``), for what they write by it (``BlobMarking``).
    private func useModel(at token: Int64) throws {
        guard let model = try modelSpans.model(at: token) else { return }
        recordEncoder.use(model)
        native?.use(model)
    }

    /// Encodes and writes one record; `completeThrough` is the newest token whose changes are
    /// all written once this record is (nil inside a snapshot, which commits nothing until whole).
    private func emit(_ record: StreamRecord, completeThrough: Int64?, summary: inout ExportSummary) throws {
        line.removeAll(keepingCapacity: true)
        try useModel(at: record.position.token)
        if native != nil { native!.encode(record, into: &line) } else { recordEncoder.encode(record, into: &line) }
        try emitLine(position: record.position, timestamp: record.timestamp, completeThrough: completeThrough, summary: &summary)
    }

    /// Encodes and writes a schema record: the whole of its transaction, so the stream holds
    /// its token complete once it is written.
    private func emitSchema(_ record: SchemaRecord, summary: inout ExportSummary) throws {
        line.removeAll(keepingCapacity: true)
        recordEncoder.encodeSchema(record, into: &line)
        pendingModels.append(StreamManifest.ModelVersion(position: record.position, version: record.change.toVersion))
        summary.schemaRecords += 1
        try emitLine(position: record.position, timestamp: record.timestamp, completeThrough: record.position.token, summary: &summary)
    }

    /// Encodes and writes a capture gap record (the whole of its transaction, as a schema
    /// record is), and warns of it: writes by other programs before it may be missing.
    private func emitGap(_ record: CaptureGapRecord, summary: inout ExportSummary) throws {
        line.removeAll(keepingCapacity: true)
        recordEncoder.encodeGap(record, into: &line)
        summary.captureGaps += 1
        warnings.append("the stream carries a \(record.summary)")
        try emitLine(position: record.position, timestamp: record.timestamp, completeThrough: record.position.token, summary: &summary)
    }

    /// Writes the record encoded in `line` (or keeps it as a dictionary sample while training).
    private func emitLine(position: StreamPosition, timestamp: Date, completeThrough: Int64?, summary: inout ExportSummary) throws {
        summary.records += 1
        if training {
            samples.append((line, position, timestamp))
            sampleBytes += line.count
            if sampleBytes >= options.dictionarySampleBytes { try trainDictionary(summary: &summary) }
            return
        }
        try write(line, position: position, timestamp: timestamp, completeThrough: completeThrough, summary: &summary)
    }

    private func write(_ line: [UInt8], position: StreamPosition, timestamp: Date, completeThrough: Int64?, summary: inout ExportSummary) throws {
        if writer == nil { writer = try SegmentWriter(directory: directory, encoder: frameEncoder, recordsPerFrame: options.recordsPerFrame) }
        let writer = writer!
        try writer.append(line, position: position, timestamp: timestamp)
        // The clock is read every 64 records (each pass closes its segment anyway).
        let old = writer.records % 64 == 0 && (writer.openedAt.map { Date().timeIntervalSince($0) >= options.maximumSegmentAge } ?? false)
        if writer.records >= options.maximumSegmentRecords || writer.approximateBytes >= options.maximumSegmentBytes || old {
            try closeSegment(completeThrough: completeThrough, summary: &summary)
        }
    }

    /// Trains the dictionary from the records held back, saves it, and writes them.
    private func trainDictionary(summary: inout ExportSummary) throws {
        training = false
        let held = samples
        samples = []
        sampleBytes = 0
        do {
            let capacity = min(options.dictionaryCapacity, max(1024, held.reduce(0) { $0 + $1.line.count } / 100))
            let dictionary = try ZstdDictionary.train(samples: held.map(\.line), capacity: capacity)
            let name = "dictionary-\(dictionary.id).zdict"
            try DurableFile.write(Data(dictionary.bytes), to: directory.appendingPathComponent(name))
            manifest.dictionary = name
            try manifest.save(to: directory)
            frameEncoder = try ZstdFrameEncoder(level: options.compressionLevel, dictionary: dictionary)
        } catch let error as TributaryError {
            warnings.append("no dictionary: \(error.message); the stream is compressed without one")
        }
        for sample in held {
            try write(sample.line, position: sample.position, timestamp: sample.timestamp, completeThrough: nil, summary: &summary)
        }
    }

    private func finishPass(completeThrough: Int64, summary: inout ExportSummary) throws {
        if training, !samples.isEmpty { try trainDictionary(summary: &summary) }
        if writer != nil {
            try closeSegment(completeThrough: completeThrough, summary: &summary)
            return
        }
        manifest.completeThrough = max(manifest.completeThrough, completeThrough)
        try noteChain()
        try manifest.save(to: directory)
        try commit(through: manifest.completeThrough)
    }

    /// Records the source's chain hash at what the stream now holds whole.
    private func noteChain() throws {
        guard manifest.chain?.token != manifest.completeThrough else { return }
        manifest.chain = try coordinator.historyChainPoint(through: manifest.completeThrough).map { .init(token: $0.token, hash: Hex.string($0.hash)) }
    }

    /// Makes the open segment durable, lists it in the manifest, saves the manifest, then commits the consumer.
    private func closeSegment(completeThrough: Int64?, summary: inout ExportSummary) throws {
        guard let writer else { return }
        let entry = try writer.finish(previous: manifest.last)
        self.writer = nil
        manifest.segments.append(entry)
        listModels(through: entry.last)
        if let completeThrough { manifest.completeThrough = max(manifest.completeThrough, completeThrough) }
        try noteChain()
        try manifest.save(to: directory)
        summary.segments += 1
        if manifest.snapshot?.complete != false { try commit(through: manifest.completeThrough) }
    }

    private func commit(through token: Int64) throws {
        guard token > committed else { return }
        try follower.commit(through: token)
        committed = token
    }

    /// Waits until the store has a commit after `token`, and returns the new current token.
    /// It sleeps on `PersistentStoreCoordinator/remoteChanges` (inotify and in-process
    /// wakes, with their slow safety poll), so any writer's commit wakes it.
    ///
    /// ```swift
    /// var token = try coordinator.currentPersistentHistoryToken()
    /// while true { _ = try exporter.exportOnce(); token = try await StreamExporter.waitForNextCommit(coordinator, after: token) }
    /// ```
    public static func waitForNextCommit(_ coordinator: PersistentStoreCoordinator, after token: PersistentHistoryToken) async throws -> PersistentHistoryToken {
        var waiter = CommitWaiter(coordinator)
        return try await waiter.waitForCommit(after: token)
    }
}
