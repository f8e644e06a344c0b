import ArgumentParser
import Foundation
import Tributary
import TributaryStreams

/// `tributary export STORE --to DIR|- [--format F] [--consumer NAME] [--snapshot] [--follow] [--dictionary] [filters]`.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export history as a change stream: zstd segments and a manifest, or NDJSON on standard output.",
        discussion: """
            Example: tributary export blog.sqlite --to stream/ --format debezium --snapshot
            A directory export resumes after a crash without losing or repeating a change; its consumer \
            (--consumer, default export) is committed once the records are durable, so prune --consumed \
            frees what was exported. --to - prints uncompressed NDJSON.
            """
    )

    @OptionGroup var storeOptions: StoreOptions
    @OptionGroup var filters: HistoryFilterOptions

    @Option(name: .long, help: "A stream directory, or - for NDJSON on standard output.")
    var to: String

    @Option(name: .long, help: "native, debezium or cloudevents.")
    var format = "native"

    @Option(name: .long, help: "The history consumer keeping the export's position (directory exports).")
    var consumer: String?

    @Flag(name: .long, help: "Start a new stream with a consistent snapshot of the current rows (op r).")
    var snapshot = false

    @Flag(name: .long, help: "Keep exporting as commits arrive.")
    var follow = false

    @Flag(name: .long, help: "Train a zstd dictionary from the first records and use it for every segment.")
    var dictionary = false

    @Option(name: .customLong("exclude"), help: "Leave a property out of every record: name or Entity.name; repeat for several.")
    var excluded: [String] = []

    @Option(name: .customLong("segment-records"), help: "Close a segment after this many records.")
    var segmentRecords = 100_000

    @Option(name: .customLong("segment-bytes"), help: "Close a segment after this many compressed bytes.")
    var segmentBytes = 64 << 20

    @Option(name: .customLong("segment-age"), help: "Close a segment when its first record is this old (30s, 10m, 1h).")
    var segmentAge = "10m"

    @Option(name: .customLong("frame-records"), help: "Records per zstd frame (a reader can start at any frame).")
    var frameRecords = 64

    @Option(name: .long, help: "zstd compression level (1-19).")
    var level: Int32 = 3

    func validate() throws {
        guard segmentRecords > 0, segmentBytes > 0, frameRecords > 0 else { throw ValidationError("--segment-records, --segment-bytes and --frame-records must be positive") }
        guard (1...19).contains(level) else { throw ValidationError("--level must be between 1 and 19") }
        if to != "-", filters.after != nil || filters.through != nil {
            throw ValidationError("a directory export continues from its consumer; --after and --through go with --to -")
        }
        if to == "-", dictionary { throw ValidationError("--dictionary goes with a directory export; --to - prints uncompressed NDJSON") }
    }

    func run() async throws {
        let coordinator = try storeOptions.open()
        var options = ExportOptions()
        options.format = try StreamFormat(parsing: format)
        options.snapshot = snapshot
        options.dictionary = dictionary
        options.filter = try filters.filter(checkedIn: coordinator)
        try coordinator.requireProperties(excluded, option: "--exclude")
        options.excludedProperties = Set(excluded)
        options.maximumSegmentRecords = segmentRecords
        options.maximumSegmentBytes = segmentBytes
        options.maximumSegmentAge = try DurationText.seconds(parsing: segmentAge, option: "--segment-age")
        options.recordsPerFrame = frameRecords
        options.compressionLevel = level
        if let consumer { options.consumerName = consumer }
        if to == "-" {
            let export = StandardOutputExport(coordinator: coordinator, options: options, commitConsumer: consumer != nil)
            let follow = self.follow
            try await Interruption.cancellingOnSignals { try await export.run(follow: follow) }
            return
        }
        if snapshot { try Self.refuseSnapshotOfExistingStream(URL(fileURLWithPath: to)) }
        let directory = to
        let follow = self.follow
        let settled = options
        try await Interruption.cancellingOnSignals {
            try await Self.exportToDirectory(coordinator, options: settled, directory: directory, follow: follow)
        }
    }

    /// Exports into a stream directory, once or (with `follow`) until the task is cancelled,
    /// then prints the summary.
    static func exportToDirectory(_ coordinator: PersistentStoreCoordinator, options: ExportOptions, directory: String, follow: Bool) async throws {
        let exporter = try StreamExporter(coordinator: coordinator, directory: URL(fileURLWithPath: directory), options: options)
        var warned = 0
        func warn() {
            for warning in exporter.warnings.dropFirst(warned) { Console.warn("warning: \(warning)") }
            warned = exporter.warnings.count
        }
        warn()
        var total = ExportSummary()
        let progressLine = ProgressLine(verb: "exported", noun: "record")
        repeat {
            let before = try coordinator.currentPersistentHistoryToken()
            let summary = try exporter.exportOnce { progress in
                progressLine.update(total.records + progress.records)
            }
            progressLine.finish()
            warn()   // capture gaps the pass carried
            total.records += summary.records
            total.snapshotObjects += summary.snapshotObjects
            total.segments += summary.segments
            total.committedThrough = summary.committedThrough
            if follow {
                if summary.records > 0 { Console.print("exported \(Plural.counted(summary.records, "record")) through token \(summary.committedThrough)") }
                do {
                    _ = try await StreamExporter.waitForNextCommit(coordinator, after: before)
                } catch is CancellationError {
                    break
                }
            }
        } while follow
        let snapshotText = total.snapshotObjects > 0 ? " (\(Plural.counted(total.snapshotObjects, "snapshot object")))" : ""
        Console.print("exported \(Plural.counted(total.records, "record"))\(snapshotText) in \(Plural.counted(total.segments, "segment")) to \(directory); consumer \(TerminalText.escaped(options.consumerName)) at token \(total.committedThrough)\(progressLine.rateText(total.records))")
    }

    /// `--snapshot` starts a stream: on one that already holds records (other than a snapshot
    /// cut short, which the exporter starts over) it would be silently ignored.
    static func refuseSnapshotOfExistingStream(_ directory: URL) throws {
        guard let manifest = try? StreamManifest.load(from: directory), let last = manifest.last else { return }
        if let snapshot = manifest.snapshot, !snapshot.complete { return }
        throw TributaryError(.invalidInput, "the stream already holds \(Plural.counted(manifest.segments.count, "segment")) (through \(last)); --snapshot starts a new stream",
                             location: directory.path, hint: "leave out --snapshot to continue this stream, or export with --snapshot into a new directory")
    }
}
