import Foundation
import Tributary
import TributaryNATSSink
import TributaryPipeline
import TributaryStreams
import TributaryTestSupport

/// What the soak's checks read back after the run.
extension Soak {
    /// How a sequence of delivered positions compares with history.
    struct Delivery {
        var delivered = 0
        /// Positions seen more than once.
        var duplicates = 0
        /// Positions of history never seen.
        var gaps = 0
        /// Positions seen that history does not have.
        var unknown = 0
        /// Whether positions rise strictly.
        var inOrder = true

        init(seen: [StreamPosition], expected: [StreamPosition]) {
            delivered = seen.count
            let distinct = Set(seen)
            duplicates = seen.count - distinct.count
            gaps = Set(expected).subtracting(distinct).count
            unknown = distinct.subtracting(expected).count
            inOrder = zip(seen, seen.dropFirst()).allSatisfy { $0 < $1 }
        }

        var isExact: Bool { duplicates == 0 && gaps == 0 && unknown == 0 && inOrder }
    }

    /// Every change's position in history, oldest first.
    func historyPositions() throws -> [StreamPosition] { try PipelineFixtures.historyPositions(store) }

    /// Every record's position in the exported stream directory, in stream order.
    func streamPositions() throws -> [StreamPosition] {
        guard let manifest = try StreamManifest.load(from: streamURL) else { return [] }
        var positions: [StreamPosition] = []
        try manifest.forEachRecord(in: streamURL) { _, position in
            positions.append(position)
            return true
        }
        return positions
    }

    /// Every message's position (its Tributary-Position header) in the NATS stream, in stream order.
    func natsPositions() throws -> [StreamPosition] {
        try NATSSinkTests.messages(nats.url, stream: "SOAK").map { try StreamPosition(parsing: $0.headers[NATSSink.positionHeader] ?? "") }
    }

    /// The tail's output against history's transactions (`changes`: change count by token).
    /// Each incarnation must print, in order and with nothing skipped, the transactions after
    /// the consumer position it started from; what an incarnation printed beyond the position
    /// the next one starts from was printed but not committed when it was killed, and is
    /// printed again (at least once delivery: `redelivered`). Everything else is counted as a
    /// duplicate, and transactions never printed as gaps.
    func tailDelivery(changes: [Int64: Int]) throws -> (delivery: Delivery, redelivered: Int, problems: [String]) {
        let tokens = changes.keys.sorted()
        let incarnations = tail.incarnations
        let finalPosition = try store.historyConsumer(named: Self.tailConsumer).token.value
        var committed: [StreamPosition] = [], redelivered = 0, problems: [String] = []
        for (number, incarnation) in incarnations.enumerated() {
            let text = (try? String(contentsOf: incarnation.output, encoding: .utf8)) ?? ""
            var printed: [Int64] = []
            for line in text.split(separator: "\n") where line.hasPrefix("{") {
                guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
                      let token = (object["token"] as? String).flatMap({ try? PersistentHistoryToken(parsing: $0).value }) else {
                    problems.append("tail-\(number): not a transaction: \(line.prefix(200))"); continue
                }
                if let count = object["changeCount"] as? Int, count != changes[token] { problems.append("tail-\(number): token \(token) with \(count) changes, history has \(changes[token] ?? 0)") }
                printed.append(token)
            }
            let expected = Array(tokens.drop { $0 <= incarnation.startPosition }.prefix(printed.count))
            if printed != expected { problems.append("tail-\(number) (from \(incarnation.startPosition)) printed \(printed.prefix(5))…, expected \(expected.prefix(5))…") }
            let next = number + 1 < incarnations.count ? incarnations[number + 1].startPosition : finalPosition
            committed += printed.filter { $0 <= next }.map { StreamPosition(token: $0, index: 0) }
            redelivered += printed.filter { $0 > next }.count
        }
        return (Delivery(seen: committed, expected: tokens.map { StreamPosition(token: $0, index: 0) }), redelivered, problems)
    }

    /// `PRAGMA integrity_check` of the store, through the sqlite3 shell.
    func integrityCheck() throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sqlite3", storePath, "PRAGMA integrity_check"]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let (data, errors) = TributaryProcess.finish(process, out: out, err: err)
        return (String(decoding: data, as: UTF8.self) + String(decoding: errors, as: UTF8.self)).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The rows a replay of the exported stream builds (history's account of the data) and
    /// the store's own rows, both as PostgresMirror renders them, without `updatedAt` (derived
    /// with now(): each store's own time of writing).
    func replayedAndStoreRows() throws -> (replayed: [String], store: [String]) {
        let replayer = try StreamReplayer(directory: streamURL)
        let replica = try replayer.openTarget(at: dir.url.appendingPathComponent("replica.sqlite"))
        _ = try replayer.replay(into: replica)
        let entities = ["Post", "Tag"]
        return (try PostgresMirror.storeRows(replica, entities: entities, omitting: ["updatedAt"]),
                try PostgresMirror.storeRows(store, entities: entities, omitting: ["updatedAt"]))
    }

    /// For each follower and the pipeline: the largest growth of resident memory over an
    /// incarnation that ran at least 20 s (the peak of its second half over the peak of its
    /// first half after a 5 s warm-up, in MB), and the peak of all samples.
    func memory() -> (growth: [String: Double], peakMB: Double, peakOf: String) {
        var growth: [String: Double] = [:], peak = 0, peakOf = ""
        for process in [tail!, export!, pipeline!] {
            for incarnation in process.incarnations {
                let samples = incarnation.samples
                if let top = samples.map(\.kilobytes).max(), top > peak { peak = top; peakOf = process.name }
                guard let last = samples.last, last.seconds >= 20 else { continue }
                let middle = last.seconds / 2
                let first = samples.filter { $0.seconds >= 5 && $0.seconds < middle }.map(\.kilobytes).max() ?? 0
                let second = samples.filter { $0.seconds >= middle }.map(\.kilobytes).max() ?? 0
                growth[process.name] = max(growth[process.name] ?? -.infinity, Double(second - first) / 1_024)
            }
        }
        for writer in writers where writer.tally.peakKilobytes > peak { peak = writer.tally.peakKilobytes; peakOf = writer.name }
        return (growth, Double(peak) / 1_024, peakOf)
    }
}
