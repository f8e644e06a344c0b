import ArgumentParser
import Foundation
import Tributary

/// `tributary import STORE --entity E [FILE|-]`: NDJSON into one entity through batch inserts.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import NDJSON objects into an entity, in one transaction, one batch insert per batch.",
        discussion: """
        Each line is one JSON object keyed by attribute names. Dates are ISO 8601 strings in UTC \
        (or seconds since 1970), UUIDs strings, binary data base64, relationships object ID URIs (a list for to-many) of existing objects of this store. \
        The input is streamed into one transaction: a bad line rejects the whole import and nothing is written. \
        --dry-run checks every line and counts what would be inserted and updated, then rolls back. \
        On a terminal, a progress line shows rows, rate and time left (from the file's size).
        Example: tributary import blog.sqlite --entity Post posts.ndjson
        """
    )

    @OptionGroup var storeOptions: StoreOptions

    @Option(name: .long, help: "The entity to import into.")
    var entity: String

    @OptionGroup var writeMetadata: WriteMetadataOptions

    @Option(name: .long, help: "Rows per batch insert.")
    var batchSize: Int = 1000

    @Flag(name: .customLong("dry-run"), help: "Check every line and count what would be inserted and updated; write nothing.")
    var dryRun = false

    @Argument(help: "The NDJSON file, or - for standard input.")
    var file: String = "-"

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be at least 1") }
    }

    func run() async throws {
        let coordinator = try storeOptions.open()
        var importer = NDJSONImporter(coordinator: coordinator, entityName: entity, batchSize: batchSize, transaction: writeMetadata.metadata(context: "import"))
        importer.dryRun = dryRun
        let line = ProgressLine(verb: dryRun ? "checked" : "imported", noun: "row")
        let progress: (ImportProgress) -> Void = { progress in
            line.update(progress.rows, fraction: progress.totalBytes.map { $0 > 0 ? Double(progress.bytesRead) / Double($0) : 1 })
        }
        let result: BatchResult
        if file == "-" {
            result = try importer.importFileHandle(FileHandle.standardInput, displayName: "<stdin>", progress: progress)
        } else {
            result = try importer.importFile(at: URL(fileURLWithPath: file), displayName: file, progress: progress)
        }
        line.finish()
        let ignored = result.ignored > 0 ? ", \(result.ignored) skipped by the database's own triggers" : ""
        let counts = "(\(result.inserted) inserted, \(result.updated) updated\(ignored))"
        if dryRun {
            Console.print("would import \(Plural.counted(result.count, "\(entity) row")) \(counts) (dry run; nothing written)")
        } else {
            Console.print("imported \(Plural.counted(result.count, "\(entity) row")) \(counts)\(line.rateText(result.count))")
        }
    }
}
