import Foundation
import Tributary
import TributaryStreams

/// Schema records in a pipeline (issue 23): the runner delivers them in their place among
/// the records, after re-checking the transforms against the new model, following
/// `on_schema_change:` for changes that are not additive. Capture gap records go to every
/// sink in their place too (``Sink/deliverGap(_:)``), and are reported as a warning.
extension PipelineRunner {
    /// A record of a whole transaction without changes, delivered between change records.
    enum Marker: Sendable {
        /// The model changed.
        case schema(SchemaRecord)
        /// Writes by other programs may be missing.
        case gap(CaptureGapRecord)
    }

    /// The model in force where the pipeline starts reading: at its consumer's token, or at
    /// the oldest history kept for a new consumer; nil when the store keeps no models (a
    /// sink then opens with the store's current model).
    func startingModel(consumer: HistoryConsumer?) throws -> ManagedObjectModel? {
        guard !pipeline.source.snapshot || consumer != nil else { return nil }
        let token = try consumer?.token ?? coordinator.oldestKeptHistoryToken()
        return try? coordinator.model(at: token)
    }

    /// Delivers a read's records to every sink with its schema and gap records in their places.
    func deliverInOrder(_ read: Read, step: inout Step) async throws {
        guard !read.markers.isEmpty else { return try await deliver(read.records, step: &step) }
        var start = 0
        for (before, marker) in read.markers {
            if before > start { try await deliver(Array(read.records[start..<before]), step: &step) }
            switch marker {
            case .schema(let schema): try await deliverSchema(schema)
            case .gap(let gap): try await deliverGap(gap)
            }
            start = before
        }
        if start < read.records.count { try await deliver(Array(read.records[start...]), step: &step) }
    }

    /// Hands `record` to the sinks that have not got it, as `on_schema_change:` says.
    func deliverSchema(_ record: SchemaRecord) async throws {
        let change = record.change
        let at = "the model changed at token \(record.position.token) (\(change.changes.joined(separator: "; ")))"
        do {
            try pipeline.checkNames(against: change.model)
        } catch let error as TributaryError {
            throw TributaryError(.pipelineStopped, "\(at): \(error.message)", location: error.location ?? pipeline.path,
                                 hint: "change the pipeline to the new model, then run it again: it resumes at this change")
        }
        let policy: PipelineFile.OnSchemaChange = change.isAdditive ? .apply : pipeline.onSchemaChange
        if policy == .stop {
            throw TributaryError(.pipelineStopped, "\(at): not an additive change, and on_schema_change is stop", location: pipeline.path,
                                 hint: "bring the sinks' copies in line by hand and set on_schema_change: apply (sinks apply what they can) or dead_letter (set it aside), then run again")
        }
        for index in states.indices {
            if let durable = states[index].durable, record.position <= durable { continue }
            if policy == .deadLetter, let letters = states[index].deadLetters {
                try letters.writeSchema(record, sink: states[index].sink.name, reason: "\(at): set aside by on_schema_change: dead_letter")
                continue
            }
            try await deliverWhole(to: index, at: at, hint: "change the sink's copy by hand, or set on_schema_change: dead_letter to set the change aside; then run again") {
                try await $0.deliverSchema(record)
            }
            events(.schemaDelivered(sink: states[index].sink.name, token: record.position.token))
        }
    }

    /// Warns of the capture gap `record` and hands it to the sinks that have not got it.
    func deliverGap(_ record: CaptureGapRecord) async throws {
        events(.warning(record.summary))
        for index in states.indices {
            if let durable = states[index].durable, record.position <= durable { continue }
            try await deliverWhole(to: index, at: record.summary, hint: "mend what the sink names, then run again: the pipeline resumes at the gap") {
                try await $0.deliverGap(record)
            }
        }
    }

    /// Delivers a record of a whole transaction (`at` says which) to sink `index` by
    /// `send`, retrying while it is unavailable; a sink that cannot take it stops the
    /// pipeline, naming it, with `hint` unless the sink gave one.
    private func deliverWhole(to index: Int, at: String, hint: String, _ send: (any Sink) async throws -> Void) async throws {
        let sink = states[index].sink
        var attempt = 0
        while true {
            do {
                try await send(sink)
                succeeded()
                return
            } catch let error as TributaryError where error.code == .sinkUnavailable {
                attempt += 1
                reportFailure(Failure(sink: sink.name, error: error, attempt: attempt, step: .delivery, records: 1))
                try giveUpIfDue(sink.name, error)
                if shouldStop() || (pipeline.retry.maximumAttempts > 0 && attempt >= pipeline.retry.maximumAttempts) { throw error }
                try await sleep(retryBackoff.seconds(attempt: attempt, random: random()))
                if shouldStop() { throw Interrupted() }
            } catch {
                let failure = error as? TributaryError ?? TributaryError.sinkRejected(sink.name, "\(error)")
                if failure.code == .pipelineStopped { throw failure }
                throw TributaryError(.pipelineStopped, "\(at): sink \(sink.name) cannot apply it: \(failure.message)", location: pipeline.path,
                                     hint: failure.hint ?? hint)
            }
        }
    }
}
