import Foundation
import Tributary

extension StreamExporter {
    /// Refuses `--since` and `--until` for a stream directory: the changes outside the window
    /// would never reach the stream while its consumer moved past them (and be pruned).
    static func checkTimeFilters(_ filter: HistoryFilter, directory: URL) throws {
        guard filter.since == nil, filter.until == nil else {
            throw TributaryError(.invalidInput, "a stream directory holds every change in order, so it cannot be limited to a time window (--since, --until)", location: directory.path,
                                 hint: "print a window as NDJSON with --to -, or replay a whole stream to a point in time with replay --until")
        }
    }

    /// Binds the stream to the export's consumer, saving the binding in the manifest before
    /// the consumer is registered (so a restart finds it): a stream bound to another consumer is
    /// refused, and so is a new stream whose consumer already exists, since that consumer keeps
    /// another stream's position (each export would move the position the other relies on).
    static func bind(_ manifest: inout StreamManifest, to options: ExportOptions, consumerExists: Bool, directory: URL) throws {
        let name = options.consumerName
        var changed = false
        if let bound = manifest.consumer {
            guard bound == name else {
                throw TributaryError(.invalidInput, "the stream is kept by consumer '\(bound)', not '\(name)'", location: directory.path,
                                     hint: "export to it with --consumer \(bound), or to a new directory with your consumer")
            }
        } else {
            let isNew = manifest.segments.isEmpty && manifest.snapshot == nil && manifest.completeThrough == 0
            if isNew, consumerExists {
                throw TributaryError(.invalidInput, "consumer '\(name)' already exists, keeping another stream's or reader's position; a new stream needs its own", location: directory.path,
                                     hint: "give this stream its own consumer with --consumer NAME (or remove '\(name)' first with tributary consumers STORE remove \(name))")
            }
            manifest.consumer = name
            if isNew { manifest.filtered = false }
            changed = true
        }
        if manifest.filtered == false, isFiltered(options) {
            manifest.filtered = true
            changed = true
        }
        if changed { try manifest.save(to: directory) }
    }

    /// Whether the export leaves changes out by entity, author, context name, change type or object.
    static func isFiltered(_ options: ExportOptions) -> Bool {
        let filter = options.filter
        return !filter.entities.isEmpty || !filter.authors.isEmpty || !filter.excludedAuthors.isEmpty || !filter.contextNames.isEmpty || !filter.changeTypes.isEmpty
            || !filter.objectIDs.isEmpty
    }
}
