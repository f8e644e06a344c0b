import Foundation
import Testing

/// Two databases with the same tables, both adopted: a source another program writes, and
/// the replica its export is replayed into, for round trips compared value for value.
///
/// ```swift
/// let pair = try AdoptedPair(scratch, "fk", schema: "CREATE TABLE p (id INTEGER PRIMARY KEY, v);")
/// #expect(try CLI.sqlite3(pair.source, "INSERT INTO p VALUES (1, 42);").status == 0)
/// try pair.replay()
/// let (source, replica) = try pair.rows("SELECT id, quote(v) FROM p;")
/// ```
struct AdoptedPair {
    let source: String
    let replica: String
    let stream: String

    init(_ scratch: Scratch, _ name: String, schema: String) throws {
        source = scratch.path("\(name).db")
        replica = scratch.path("\(name)-replica.db")
        stream = scratch.path("\(name)-stream")
        for db in [source, replica] {
            #expect(try CLI.sqlite3(db, schema).status == 0)
            #expect(try CLI.run(["adopt", db]).status == 0)
        }
    }

    /// Exports the source (with `exportArguments`) and replays the stream into the replica.
    func replay(exportArguments: [String] = []) throws {
        #expect(try CLI.run(["export", source, "--to", stream] + exportArguments).status == 0)
        let replayed = try CLI.run(["replay", stream, "--into", replica, "--resume"])
        #expect(replayed.status == 0, "\(replayed.stderr)")
    }

    /// What `sql` prints on the source and on the replica (through the `sqlite3` shell).
    func rows(_ sql: String) throws -> (source: String, replica: String) {
        (try CLI.sqlite3(source, sql).stdout, try CLI.sqlite3(replica, sql).stdout)
    }
}
