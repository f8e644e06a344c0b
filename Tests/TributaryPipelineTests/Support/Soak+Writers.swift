import Foundation
import Synchronization
import TributaryTestSupport

extension Soak {
    /// The four writers, each with a busy timeout (60 s) so that no BUSY error reaches it:
    /// imports of new posts (every fourth round the previous file again, as updates), the
    /// soak-writer's context saves, batch updates of a tenth of the posts, deletes of some
    /// imported posts.
    func makeWriters() -> [WriterLoop] {
        let store = storePath, directory = dir.url
        let imported = Mutex(0)
        let importer = WriterLoop(name: "import", directory: directory, pause: 100...400) { round in
            let file = directory.appendingPathComponent("import-\(round).ndjson")
            let batch = round.isMultiple(of: 4) && round > 1 ? round - 1 : round
            let lines = (0..<40).map { i in
                #"{"externalID": "imp-\#(batch)-\#(i)", "title": "Imported \#(batch).\#(i) in round \#(round)", "content": "Body \#(i)", "createdAt": "2026-01-01T00:00:00Z"}"#
            }
            try (lines.joined(separator: "\n") + "\n").write(to: file, atomically: true, encoding: .utf8)
            imported.withLock { $0 = max($0, batch) }
            return (["import", store, "--entity", "Post", file.path, "--busy-timeout", "60"], nil)
        }
        let context = WriterLoop(name: "context", directory: directory, pause: 200...500) { _ in
            ([store], TributaryProcess.binary.deletingLastPathComponent().appendingPathComponent("soak-writer"))
        }
        let updater = WriterLoop(name: "update", directory: directory, pause: 200...600) { round in
            (["update", store, "--entity", "Post", "--where", "externalID ENDSWITH '\(round % 10)'", "--set", "content=Updated in round \(round)",
              "--busy-timeout", "60"], nil)
        }
        let deleter = WriterLoop(name: "delete", directory: directory, pause: 300...800) { _ in
            let batch = Int.random(in: 1...max(1, imported.withLock { $0 }))
            return (["delete", store, "--entity", "Post", "--where", "externalID BEGINSWITH 'imp-\(batch)-1'", "--busy-timeout", "60"], nil)
        }
        return [importer, context, updater, deleter]
    }

    /// Every change into PostgreSQL (schema `soak`), in batches of one PostgreSQL transaction with the position.
    static let postgresPipeline = """
        name: soak-postgres
        source: {store: "${TRIBUTARY_STORE}"}
        sinks:
          - type: postgres
            url: ${POSTGRES_URL}
            schema: soak
            batch_size: 500
            on_error: stop
        checkpoint: {records: 2000, seconds: 1s}
        retry: {initial: 50ms, max: 1s}
        """

    /// Posts into Redis hashes.
    static let redisPipeline = """
        name: soak-redis
        source: {store: "${TRIBUTARY_STORE}", entities: [Post]}
        sinks:
          - type: redis
            url: ${REDIS_URL}
            batch_size: 500
            on_error: stop
        checkpoint: {records: 2000, seconds: 1s}
        retry: {initial: 50ms, max: 1s}
        """

    /// Every change into the JetStream stream SOAK.
    static let natsPipeline = """
        name: soak-nats
        source: {store: "${TRIBUTARY_STORE}"}
        sinks:
          - type: nats
            url: ${NATS_URL}
            stream: SOAK
            subject: soak.{entity}.{op}
            timeout: 2s
            batch_size: 500
        checkpoint: {records: 2000, seconds: 1s}
        retry: {initial: 50ms, max: 1s}
        """
}
