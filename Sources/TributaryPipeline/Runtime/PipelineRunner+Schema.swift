import Foundation
import Tributary
import TributaryStreams

/// Schema records in a pipeline (issue 23): the runner delivers them in their place among
/// the records, after re-checking the transforms against the new model, following
/// `on_schema_change:` for changes that are not additive.
extension PipelineRunner {
    /// The model in force where the pipeline starts reading: at its consumer's token, or at
    /// the oldest history kept for a new consumer; nil when the store keeps no models (a
    /// sink then opens with the store's current model).
    func startingModel(consumer: HistoryConsumer?) throws -> ManagedObjectModel? {
        guard !pipeline.source.snapshot || consumer != nil else { return nil }
        let token = try consumer?.token ?? coordinator.oldestKeptHistoryToken()
        return try? coordinator.model(at: token)
    }

    /// Delivers a read's records to every sink with its schema records in their places.
    func deliverInOrder(_ read: Read, step: inout Step) async throws {
        guard !read.schemas.isEmpty else { return try await deliver(read.records, step: &step) }
        var start = 0
        for (before, schema) in read.schemas {
            if before > start { try await deliver(Array(read.records[start..<before]), step: &step) }
            try await deliverSchema(schema)
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
            try await deliverSchema(record, to: index, at: at)
        }
    }

    /// Delivers `record` to sink `index`, retrying while it is unavailable; a sink that
    /// cannot apply the change stops the pipeline, naming it.
    private func deliverSchema(_ record: SchemaRecord, to index: Int, at: String) async throws {
        let sink = states[index].sink
        var attempt = 0
        while true {
            do {
                try await sink.deliverSchema(record)
                succeeded()
                events(.schemaDelivered(sink: sink.name, token: record.position.token))
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
                                     hint: failure.hint ?? "change the sink's copy by hand, or set on_schema_change: dead_letter to set the change aside; then run again")
            }
        }
    }
}
