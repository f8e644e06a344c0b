import Foundation
import Tributary

/// Where a replay stops.
public enum ReplayLimit: Sendable, Equatable {
    /// Through the transaction with this token.
    case token(PersistentHistoryToken)
    /// Through the last transaction committed at or before this time.
    case date(Date)

    /// Parses a token (`1042-6f9619ff`) or an ISO 8601 date.
    ///
    /// ```swift
    /// let limit = try ReplayLimit(parsing: "2024-05-01T12:00:00Z")
    /// ```
    public init(parsing text: String) throws {
        if let token = try? PersistentHistoryToken(parsing: text) {
            self = .token(token)
        } else if let date = ISO8601.date(from: text) {
            self = .date(date)
        } else {
            throw TributaryError(.invalidInput, "'\(text)' is neither a history token nor a date", location: "--until", hint: "give a token such as 1042-6f9619ff or a date such as 2024-05-01T12:00:00Z")
        }
    }
}

/// Rebuilds a store from a stream directory (snapshot, then changes), up to a point in time,
/// through batch requests that keep the source's primary keys: replaying twice gives the same
/// store. The stream is verified first; a damaged stream or one with a gap is refused with
/// the error ``StreamVerifier`` gives, and so is a target that is not empty, unless resuming.
///
/// ```swift
/// let replayer = try StreamReplayer(directory: streamURL)
/// let target = try replayer.openTarget(at: URL(fileURLWithPath: "copy.sqlite"))
/// let summary = try replayer.replay(into: target, until: .token(token))
/// ```
public struct StreamReplayer {
    /// The stream directory.
    public let directory: URL
    /// The model a new target is made with: the one the stream starts with (`model.json`)
    /// unless another was given; the stream's schema records migrate the target from it.
    public let model: ManagedObjectModel
    /// Records applied per batch request (and per position saved when resuming).
    public var batchSize = 1_000

    /// What a replay did.
    public struct Summary: Sendable, Equatable {
        /// Records applied.
        public var records = 0
        /// The last position applied.
        public var last: StreamPosition?
        /// Capture gap records passed over (counted in ``records``): writes the source may have
        /// missed, which the replica cannot have either.
        public var captureGaps: [CaptureGapRecord] = []
    }

    /// A replayer of the stream in `directory`, with the model kept beside its manifest unless `model` is given.
    public init(directory: URL, model: ManagedObjectModel? = nil) throws {
        self.directory = directory
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) else {
            throw TributaryError(.fileNotFound, "no stream directory at this path", location: directory.path, hint: "give the directory tributary export --to wrote")
        }
        guard isDirectory.boolValue else {
            throw TributaryError(.invalidInput, "this is a file, not a stream directory", location: directory.path, hint: "give the directory tributary export --to wrote")
        }
        if let model {
            self.model = model
        } else {
            let url = directory.appendingPathComponent(StreamManifest.modelFileName)
            guard let data = FileManager.default.contents(atPath: url.path) else {
                throw TributaryError(.damagedStream, "the stream has no model (\(StreamManifest.modelFileName))", location: directory.path, hint: "give the source's model with --model FILE")
            }
            do {
                self.model = try ManagedObjectModel.fromJSON(data)
            } catch let error as TributaryError where error.code == .invalidModel {
                throw TributaryError(.damagedStream, "\(StreamManifest.modelFileName) is damaged (\(error.message))", location: url.path, hint: "restore it from the source, or give the source's model with --model FILE")
            }
        }
    }

    /// Opens (creating if needed) the store at `url` with the replayer's model; an existing
    /// store an earlier replay migrated past it (a schema record of the stream) keeps its own.
    public func openTarget(at url: URL) throws -> PersistentStoreCoordinator {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: model)
        do {
            try coordinator.addPersistentStore(with: Self.targetDescription(url))
        } catch let error as TributaryError where error.code == .incompatibleModel && FileManager.default.fileExists(atPath: url.path) {
            let own = PersistentStoreCoordinator()
            try own.addPersistentStore(with: Self.targetDescription(url))
            return own
        }
        return coordinator
    }

    /// How a replay opens its target: without running the target's own triggers. The stream
    /// carries what the source's triggers wrote to captured tables already; run again, they
    /// wrote it twice, under other keys (`PersistentStoreDescription.runsDatabaseTriggers`).
    public static func targetDescription(_ url: URL) -> PersistentStoreDescription {
        let description = PersistentStoreDescription(url: url)
        description.runsDatabaseTriggers = false
        return description
    }

    /// The file beside a target store that keeps the last position replayed into it.
    public static func positionFile(for store: URL) -> URL {
        store.deletingLastPathComponent().appendingPathComponent(store.lastPathComponent + ".replay-position")
    }

    /// Replays the stream into `target` through `limit` (the whole stream when nil). A target
    /// with rows is refused unless `resume`, which continues after the position saved by an
    /// earlier replay (or from the start: applying a record twice changes nothing).
    /// `verified` skips the check when the caller has just verified the stream.
    public func replay(into target: PersistentStoreCoordinator, until limit: ReplayLimit? = nil, resume: Bool = false, verified: Bool = false,
                       progress: (Summary) -> Void = { _ in }) throws -> Summary {
        let verifier = StreamVerifier(directory: directory)
        if !verified { _ = try verifier.verify(checkingModels: false) }
        let manifest = try verifier.checkedManifest()
        guard let store = target.persistentStores.first else { throw TributaryError(.noStore, "the target coordinator has no store") }
        let model = store.model
        let positionURL = Self.positionFile(for: store.url)
        var resumeAfter: StreamPosition?
        if resume {
            if let data = FileManager.default.contents(atPath: positionURL.path) {
                resumeAfter = try? StreamPosition(parsing: String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
            }
        } else {
            for entity in model.entities where try target.count(for: FetchRequest(entityName: entity.name)) > 0 {
                throw TributaryError(.invalidInput, "the target store is not empty (\(entity.name) has rows)", location: store.url.path,
                                     hint: "replay into a new store, or add --resume to continue an earlier replay into it")
            }
        }
        if case .token(let token)? = limit {
            guard token.storeKey == PersistentHistoryToken(value: 0, storeID: manifest.storeID).storeKey else {
                throw TributaryError(.invalidInput, "token \(token) belongs to another store than the stream's", location: "--until")
            }
            if let snapshot = manifest.snapshot, token.value < snapshot.token {
                throw TributaryError(.invalidInput, "the stream starts with a snapshot at token \(snapshot.token), after \(token)", location: "--until",
                                     hint: "replay to a token at or after \(snapshot.token)")
            }
        }
        let dictionary = try StreamExporter.loadDictionary(directory: directory, manifest: manifest)
        let decoder = try ZstdFrameDecoder(dictionary: dictionary)
        var applier = ReplayApplier(coordinator: target, model: model, batchSize: batchSize)
        var summary = Summary()
        var stopped = false
        let ids = ObjectIDReader()
        var native = NativeRecordReader()
        var lastSave = ContinuousClock.now
        for segment in manifest.segments where !stopped {
            if let resumeAfter, segment.last <= resumeAfter { continue }
            let reader = try SegmentReader(directory: directory, segment: segment, format: manifest.format, decoder: decoder)
            let start = resumeAfter.map { reader.frame(containing: $0) } ?? 0
            try reader.forEachRecord(fromFrame: start) { line, position in
                if let resumeAfter, position <= resumeAfter { return true }
                if SchemaRecord.mayBeAt(position), let schema = try SchemaRecord.read(line, format: manifest.format) {
                    stopped = Self.isPast(limit, position: position, timestamp: schema.timestamp)
                    if stopped { return false }
                    try applier.migrate(to: schema, at: position)
                    native = NativeRecordReader()   // its layouts are the old model's
                    summary.records += 1
                    summary.last = position
                    return true
                }
                if let gap = try CaptureGapRecord.read(line, format: manifest.format, at: position) {
                    stopped = Self.isPast(limit, position: position, timestamp: gap.timestamp)
                    if stopped { return false }
                    summary.captureGaps.append(gap)
                    summary.records += 1
                    summary.last = position
                    return true
                }
                let change = try ReplayChange(line: line, format: manifest.format, model: applier.model, ids: ids, native: native)
                stopped = Self.isPast(limit, position: position, timestamp: change.timestamp)
                if stopped { return false }
                // The saved position only shortens a resumed replay (applying a record twice is
                // harmless), so it is saved at most once a second rather than after every batch.
                if try applier.add(change, position: position), lastSave.duration(to: .now) >= .seconds(1) {
                    try savePosition(applier.appliedThrough, to: positionURL)
                    lastSave = .now
                }
                summary.records += 1
                summary.last = position
                if summary.records % 10_000 == 0 { progress(summary) }
                return true
            }
        }
        try applier.flush()
        try savePosition(applier.appliedThrough, to: positionURL)
        progress(summary)
        return summary
    }

    /// Whether a record at `position`, committed at `timestamp`, comes after `limit` (a
    /// snapshot record never does: the snapshot is the stream's start).
    static func isPast(_ limit: ReplayLimit?, position: StreamPosition, timestamp: Date?) -> Bool {
        guard !position.isSnapshot else { return false }
        switch limit {
        case .token(let token)?: return position.token > token.value
        case .date(let date)?: return (timestamp ?? .distantPast) > date
        case nil: return false
        }
    }

    private func savePosition(_ position: StreamPosition?, to url: URL) throws {
        guard let position else { return }
        try DurableFile.write(Data(position.description.utf8), to: url)
    }
}
