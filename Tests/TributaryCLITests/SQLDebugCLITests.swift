import Foundation
import Testing

/// `TRIBUTARY_SQL_DEBUG` in the command line: statements on standard error, results unchanged.
@Suite struct SQLDebugCLITests {
    let scratch = Scratch()

    @Test func theEnvironmentVariableLogsStatementsToStandardError() throws {
        let store = scratch.path("blog.sqlite")
        #expect(try CLI.run(["init", store, "--model", CLI.blogModel]).status == 0)
        let file = scratch.write("tags.ndjson", #"{"name": "swift"}"# + "\n")
        let plain = try CLI.run(["import", store, "--entity", "Tag", file])
        #expect(plain.status == 0, "\(plain.stderr)")
        #expect(plain.stderr.isEmpty)

        let statements = try CLI.run(["update", store, "--entity", "Tag", "--where", "name == 'swift'", "--set", "color=red"], environment: ["TRIBUTARY_SQL_DEBUG": "1"])
        #expect(statements.status == 0, "\(statements.stderr)")
        #expect(!statements.stdout.contains("tributary.sql"))
        let update = try #require(statements.stderrLines.first { $0.contains(#"] UPDATE "Tag""#) })
        #expect(update.contains("tributary.sql"))
        #expect(update.contains("duration_ms="))
        #expect(update.contains(#""color" = ?"#))
        #expect(statements.stderrLines.contains { $0.hasSuffix("] BEGIN IMMEDIATE") })
        #expect(statements.stderrLines.contains { $0.hasSuffix("] COMMIT") })

        let values = try CLI.run(["count", store, "--entity", "Tag", "--where", "color == 'red'"], environment: ["TRIBUTARY_SQL_DEBUG": "2"])
        #expect(values.stdout == "1\n")
        #expect(values.stderrLines.contains { $0.contains(#"SELECT count(*) FROM "Tag" t0 WHERE t0."color" = 'red'"#) })
    }
}
