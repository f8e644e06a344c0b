import Foundation
import Testing
import TributaryFuzzTargets

/// Every committed seed of every fuzz harness (`Fuzz/Corpus/<harness>/`) through the
/// harness's own body (`FuzzTarget`, which `Fuzz/Sources/fuzz-<harness>` calls), so that a
/// regression on a known input fails `make test` without the instrumented build: a trap ends
/// the test process, a hang meets the time limit.
@Suite struct FuzzCorpusTests {
    static let fuzz = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    @Test(.timeLimit(.minutes(2)), arguments: FuzzTarget.allCases)
    func everyCommittedSeedRunsThroughTheHarnessBody(target: FuzzTarget) throws {
        let directory = Self.fuzz.appendingPathComponent("Corpus/\(target.rawValue)")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
        #expect(!files.isEmpty, "Fuzz/Corpus/\(target.rawValue) holds seeds")
        for file in files {
            let bytes = try #require(FileManager.default.contents(atPath: directory.appendingPathComponent(file).path))
            target.run([UInt8](bytes))
        }
    }

    @Test func everyHarnessHasATargetAndASeedCorpus() throws {
        let names = Set(FuzzTarget.allCases.map(\.rawValue))
        let corpora = try FileManager.default.contentsOfDirectory(atPath: Self.fuzz.appendingPathComponent("Corpus").path)
        let harnesses = try FileManager.default.contentsOfDirectory(atPath: Self.fuzz.appendingPathComponent("Sources").path)
        #expect(Set(corpora) == names)
        #expect(Set(harnesses) == Set(names.map { "fuzz-" + $0 }))
    }
}
