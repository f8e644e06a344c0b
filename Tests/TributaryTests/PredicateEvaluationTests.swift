import Foundation
import Testing
import Tributary

/// In-memory evaluation of predicates over an object's values.
@Suite struct PredicateEvaluationTests {
    let values: [String: AttributeValue] = [
        "title": .string("Swift on Linux"), "views": .integer(12), "score": .double(2.5), "draft": .bool(false),
        "createdAt": .date(Date(timeIntervalSince1970: 1_700_000_000)), "note": .null, "city": .string("Zürich"),
    ]

    func check(_ format: String, _ arguments: AttributeValue..., expected: Bool, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let predicate = try StorePredicate(format: format, argumentArray: arguments)
        #expect(try predicate.evaluate(values) == expected, "\(format)", sourceLocation: sourceLocation)
    }

    @Test func comparisons() throws {
        try check("title == 'Swift on Linux'", expected: true)
        try check("title == 'swift on linux'", expected: false)
        try check("title ==[c] 'swift on linux'", expected: true)
        try check("title != 'x'", expected: true)
        try check("views > 10", expected: true)
        try check("views >= 12 AND views <= 12", expected: true)
        try check("views < 12", expected: false)
        try check("score > 2", expected: true)
        try check("views > 2.5", expected: true)
        try check("createdAt > %@", .date(Date(timeIntervalSince1970: 1_600_000_000)), expected: true)
        try check("draft == FALSE", expected: true)
        try check("note == nil", expected: true)
        try check("missing == nil", expected: true)
        try check("missing > 3", expected: false)
        try check("title == 3", expected: false)
    }

    @Test func stringOperatorsAndOptions() throws {
        try check("title BEGINSWITH 'Swift'", expected: true)
        try check("title BEGINSWITH 'swift'", expected: false)
        try check("title BEGINSWITH[c] 'swift'", expected: true)
        try check("title ENDSWITH 'Linux'", expected: true)
        try check("title CONTAINS[c] 'ON LIN'", expected: true)
        try check("city ==[cd] 'zurich'", expected: true)
        try check("city == 'Zurich'", expected: false)
    }

    @Test func inBetweenAndLogic() throws {
        try check("views IN {1, 12, 30}", expected: true)
        try check("title IN {'a', 'b'}", expected: false)
        try check("views BETWEEN {10, 20}", expected: true)
        try check("NOT (views > 100)", expected: true)
        try check("views > 100 OR title CONTAINS 'Swift'", expected: true)
        try check("views > 100 AND title CONTAINS 'Swift'", expected: false)
        try check("TRUEPREDICATE", expected: true)
    }

    @Test func unsupportedPartsAreNamed() throws {
        for format in ["ANY tags.name == 'x'", "author.name == 'x'", "title LIKE 'S*'"] {
            let predicate = try StorePredicate(format: format)
            #expect(throws: TributaryError.self) { try predicate.checkEvaluable() }
            do {
                _ = try predicate.evaluate(values)
                Issue.record("evaluated \(format)")
            } catch let error as TributaryError {
                #expect(error.code == .invalidPredicate)
                #expect(error.message.contains("cannot be evaluated on a record's values"))
            }
        }
    }
}
