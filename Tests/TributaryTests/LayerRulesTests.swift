import Foundation
import Testing

/// The library's layer rules (docs/ARCHITECTURE.md), read from its source: the bottom
/// layers name nothing declared above them, and only they and capture import SQLite's C API.
@Suite struct LayerRulesTests {
    static let library = Fixtures.repositoryRoot.appendingPathComponent("Sources/Tributary")
    /// The folders `SQLite/` and `Compression/` may use: themselves, and the values and
    /// utilities of `Support/` and `Model/` (`TributaryError`, `AttributeValue`).
    static let bottom: Set<String> = ["Support", "Model", "SQLite", "Compression"]

    @Test func theBottomLayersNameNoTypeDeclaredAboveThem() throws {
        let files = try Self.sourceFiles()
        var declaredAbove: [String: String] = [:]   // type name: folder
        for (folder, text) in files where !Self.bottom.contains(folder) {
            for name in Self.declaredTypes(in: text) { declaredAbove[name] = folder }
        }
        #expect(declaredAbove["PersistentStore"] == "Store", "the scan finds the library's types")
        var found: [String] = []
        for (folder, text) in files where ["SQLite", "Compression"].contains(folder) {
            let words = Self.words(inCode: text)
            for name in words.intersection(declaredAbove.keys) { found.append("\(folder)/ names \(name) (\(declaredAbove[name]!)/)") }
        }
        #expect(Set(found).sorted() == [])
    }

    @Test func onlySQLiteCaptureAndTheRecordersHookImportSQLitesCAPI() throws {
        let importers = try FileManager.default.subpathsOfDirectory(atPath: Self.library.path).filter { path in
            guard path.hasSuffix(".swift"), let text = try? String(contentsOf: Self.library.appendingPathComponent(path), encoding: .utf8) else { return false }
            return text.contains("import CSQLite")
        }
        let allowed = importers.filter { $0.hasPrefix("SQLite/") || $0.hasPrefix("Capture/") || $0.hasPrefix("History/HistoryRecorder") }
        #expect(importers.count > 3)
        #expect(importers.sorted() == allowed.sorted())
    }

    /// Each file's folder (first path component) and text.
    static func sourceFiles() throws -> [(String, String)] {
        try FileManager.default.subpathsOfDirectory(atPath: library.path).filter { $0.hasSuffix(".swift") }.map { path in
            (String(path.split(separator: "/")[0]), try String(contentsOf: library.appendingPathComponent(path), encoding: .utf8))
        }
    }

    static func declaredTypes(in text: String) -> [String] {
        let pattern = try! NSRegularExpression(pattern: #"\b(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9]*)"#)
        let code = codeLines(text)
        return pattern.matches(in: code, range: NSRange(code.startIndex..., in: code)).compactMap { Range($0.range(at: 1), in: code).map { String(code[$0]) } }
    }

    /// The identifiers of a file's code (comments and string literals left out roughly:
    /// comment lines and the text after `//`).
    static func words(inCode text: String) -> Set<String> {
        Set(codeLines(text).split { !($0.isLetter || $0.isNumber || $0 == "_") }.map(String.init))
    }

    static func codeLines(_ text: String) -> String {
        text.split(separator: "\n").map { line in
            let trimmed = line.drop { $0 == " " }
            if trimmed.hasPrefix("//") { return "" }
            return line.range(of: " // ").map { String(line[..<$0.lowerBound]) } ?? String(line)
        }.joined(separator: "\n")
    }
}
