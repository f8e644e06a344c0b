import Foundation
import Testing
@testable import Tributary

/// JSONWriter's string escaping (escapes at the start, middle and end of runs of every length)
/// and date writing read back as what was written.
@Suite struct JSONWriterTests {
    @Test func stringsRoundTripWhereverTheEscapesFall() throws {
        let specials = ["\"", "\\", "\n", "\t", "\r", "\u{01}", "\u{1F}", "é", "€", "😀"]
        for length in [0, 1, 15, 16, 17, 31, 32, 33, 100] {
            for special in specials {
                for position in [0, length / 2, length] {
                    var text = String(repeating: "a", count: length)
                    text.insert(contentsOf: special, at: text.index(text.startIndex, offsetBy: position))
                    var json = JSONWriter()
                    json.object { $0.field("s", text) }
                    #expect(try JSONValue.parse(json.text) == .object(["s": .string(text)]), "\(length) \(position) \(special.debugDescription)")
                }
            }
        }
    }

    @Test func datesAreISO8601() {
        var json = JSONWriter()
        json.array { a in
            a.value(.date(Date(timeIntervalSince1970: 0)))
            a.value(.date(Date(timeIntervalSince1970: 1_714_564_800.25)))
            a.value(.double(3))
        }
        #expect(json.text == #"["1970-01-01T00:00:00Z","2024-05-01T12:00:00.250Z",3.0]"#)
    }

    /// Before the fix, an infinity (another program's REAL) was written as `null`: streams,
    /// `history --json` and sinks lost it, and replay wrote NULL.
    @Test func infinitiesAreStringsJSONParsersReadNotNull() throws {
        var json = JSONWriter()
        json.array { a in
            a.value(.double(.infinity))
            a.value(.double(-.infinity))
            a.value(.double(1.5))
        }
        #expect(json.text == #"["Infinity","-Infinity",1.5]"#)
        #expect(try AttributeValue.parse("Infinity", as: .double) == .double(.infinity) && AttributeValue.parse("-Infinity", as: .double) == .double(-.infinity),
                "replay reads them back into a double attribute")
    }

    /// Before the fix, a date another program stored outside the years ISO 8601 writes was
    /// written as the note terminals show (`"1e+300 s since 1970 (outside 0000-9999)"`), a
    /// string no reader can parse. Now it is its seconds since 1970, a number.
    @Test func datesISO8601CannotWriteAreNumbers() throws {
        var json = JSONWriter()
        json.array { a in
            a.value(.date(Date(timeIntervalSince1970: 1e300)))
            a.value(.date(Date(timeIntervalSince1970: -.infinity)))
            a.value(.date(Date(timeIntervalSince1970: 0)))
        }
        #expect(json.text == #"[1e+300,"-Infinity","1970-01-01T00:00:00Z"]"#)
    }
}
