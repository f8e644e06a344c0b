import Foundation
import Testing

/// `tributary demo` runs the whole story and reports it.
@Suite struct DemoCommandTests {
    @Test func theDemoReportsAnEqualCopyAndMergedImports() throws {
        let dir = Scratch()
        let result = try CLI.run(["demo", "--dir", dir.url.path, "--posts", "1000"])
        #expect(result.status == 0, "\(result.stderr)")
        let report = result.stdout
        #expect(report.contains("replay") && report.contains("equal to the source, row for row"))
        #expect(report.contains("merged   the app's view context merged the importer's saves"))
        #expect(report.range(of: #"notify   commit to watcher handler, \d+ importer commits: p50 [0-9.]+ ms, p99 [0-9.]+ ms"#, options: .regularExpression) != nil, "\(report)")
        #expect(report.contains("verify   manifest, SHA-256 and zstd checksums") && report.contains(": intact"))
        #expect(report.contains("after (") && report.contains("changes pruned"))
        #expect(report.range(of: #"search   search-index pipeline indexed \d+ records; 'edited AND alice' finds [1-9]"#, options: .regularExpression) != nil)
        #expect(report.contains("title: \"Post 999 about tools\"  →  \"Post 999, edited by Alice\""))
        #expect(report.contains("foreign[-1]") && report.contains("→  \"Post 998, fixed in the sqlite3 shell\""), "the shell's write is in the audit trail")
        #expect(FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("copy.sqlite").path))
    }
}
