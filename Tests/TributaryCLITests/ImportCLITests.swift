import Foundation
import Testing
import Tributary

/// `tributary import` through the real binary: relationships on re-import, links checked,
/// CRLF files, and failures that leave nothing behind.
@Suite struct ImportCLITests {
    let scratch = Scratch()

    func makeStore() throws -> String { try CLI.makeBlogStore(at: scratch.path("blog.sqlite")) }

    /// The store's ID, read through the library.
    func storeID(_ path: String) throws -> String {
        let coordinator = PersistentStoreCoordinator()
        let description = PersistentStoreDescription(url: URL(fileURLWithPath: path))
        description.isReadOnly = true
        let store = try coordinator.addPersistentStore(with: description)
        defer { coordinator.remove(store) }
        return store.identifier.uuidString.lowercased()
    }

    func expectOneLineError(_ result: CLIResult, contains: String..., sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.status != 0, sourceLocation: sourceLocation)
        #expect(result.stderrLines.count == 1, "stderr was: \(result.stderr)", sourceLocation: sourceLocation)
        for text in contains { #expect(result.stderr.contains(text), "stderr was: \(result.stderr)", sourceLocation: sourceLocation) }
    }

    @Test func reimportChangesTagsAndHistoryShowsIt() throws {
        let store = try makeStore()
        #expect(try CLI.run(["import", store, "--entity", "Tag", "-"], stdin: #"{"name": "swift"}"# + "\n" + #"{"name": "linux"}"# + "\n").status == 0)
        let id = try storeID(store)
        let post = { (tag: Int) in #"{"externalID": "e1", "title": "T", "createdAt": 0, "tags": ["tributary://\#(id)/Tag/p\#(tag)"]}"# + "\n" }
        #expect(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: post(1)).status == 0)
        let again = try CLI.run(["import", store, "--entity", "Post", "--author", "second", "-"], stdin: post(2))
        #expect(again.stdout.contains("(0 inserted, 1 updated)"), "\(again.stdout)\(again.stderr)")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "ANY tags.name == 'linux'"]).stdout == "1\n")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "ANY tags.name == 'swift'"]).stdout == "0\n")
        let history = try CLI.run(["history", store, "--author", "second", "--entity", "Post", "--json"])
        #expect(history.stdout.contains("Tag/p2"), "\(history.stdout)")
        #expect(history.stdout.contains("Tag/p1"), "\(history.stdout)")
    }

    @Test func whatQueryPrintsImportsBack() throws {
        let store = try makeStore()
        #expect(try CLI.run(["import", store, "--entity", "Tag", "-"], stdin: #"{"name": "swift"}"# + "\n").status == 0)
        let id = try storeID(store)
        let post = #"{"externalID": "e1", "title": "T", "createdAt": 0, "tags": ["tributary://\#(id)/Tag/p1"]}"# + "\n"
        #expect(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: post).status == 0)
        let printed = try CLI.run(["query", store, "--entity", "Post", "--json"])
        let again = try CLI.run(["import", store, "--entity", "Post", "-"], stdin: printed.stdout)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("(0 inserted, 1 updated)"))
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "ANY tags.name == 'swift'"]).stdout == "1\n")
    }

    @Test func aLinkToAMissingOrForeignObjectNamesTheLineAndTheID() throws {
        let store = try makeStore()
        let id = try storeID(store)
        let missing = "tributary://\(id)/Tag/p7"
        let text = #"{"externalID": "e1", "title": "T", "createdAt": 0}"# + "\n" + #"{"externalID": "e2", "title": "T", "createdAt": 0, "tags": ["\#(missing)"]}"# + "\n"
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: text), contains: "<stdin>:2", missing, "does not exist")
        let foreign = "tributary://6f9619ff-8b86-d011-b42d-00cf4fc964ff/Tag/p1"
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: #"{"externalID": "e1", "title": "T", "createdAt": 0, "tags": ["\#(foreign)"]}"# + "\n"),
                           contains: "<stdin>:1", foreign, "another store")
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "0\n")
    }

    @Test func crlfFilesImport() throws {
        let store = try makeStore()
        let file = scratch.write("posts.ndjson", #"{"externalID": "e1", "title": "T", "createdAt": "2024-05-01T12:00:00Z"}"# + "\r\n" + #"{"externalID": "e2", "title": "U", "createdAt": 0}"# + "\r\n")
        let result = try CLI.run(["import", store, "--entity", "Post", file])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("imported 2 Post rows (2 inserted, 0 updated)"))
    }

    @Test func badInputNamesTheLine() throws {
        let store = try makeStore()
        let good = #"{"externalID": "e1", "title": "T", "createdAt": 0}"# + "\n"
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: good + #"{"externalID": "e2", "title": "T", "createdAt": 0, "createdAt": 1}"# + "\n"),
                           contains: "<stdin>:2", "the key 'createdAt' appears twice")
        let bytes = Data(good.utf8) + Data(#"{"externalID": "e2", "title": ""#.utf8) + Data([0xFF, 0xFE]) + Data(#"", "createdAt": 0}"#.utf8)
        try bytes.write(to: URL(fileURLWithPath: scratch.path("latin.ndjson")))
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", scratch.path("latin.ndjson")]), contains: "latin.ndjson:2", "invalid UTF-8")
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: good + #"{"externalID": "e2", "title": "T", "createdAt": 1e300}"# + "\n"),
                           contains: "<stdin>:2", "outside the supported range")
        expectOneLineError(try CLI.run(["import", store, "--entity", "Post", "-"], stdin: good + #"{"externalID": "e2", "title": "T", "createdAt": NaN}"# + "\n"),
                           contains: "<stdin>:2", "malformed JSON")
        #expect(try CLI.run(["count", store, "--entity", "Post", "--where", "createdAt == nil"]).stdout == "0\n")
        #expect(try CLI.run(["count", store, "--entity", "Post"]).stdout == "0\n")
    }

    @Test func anEmptyStoreFileStaysEmpty() throws {
        let empty = scratch.write("empty.sqlite", "")
        expectOneLineError(try CLI.run(["import", empty, "--entity", "Post", "-"], stdin: #"{"title": "x"}"# + "\n"), contains: "empty.sqlite", "an empty file, not a store")
        let size = try FileManager.default.attributesOfItem(atPath: empty)[.size] as? Int
        #expect(size == 0)
        #expect(!FileManager.default.fileExists(atPath: empty + "-wal"))
        expectOneLineError(try CLI.run(["import", scratch.path("missing.sqlite"), "--entity", "Post", "-"], stdin: #"{"title": "x"}"# + "\n"), contains: "no store at this path")
        #expect(!FileManager.default.fileExists(atPath: scratch.path("missing.sqlite")))
    }
}
