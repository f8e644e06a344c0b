import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// The replay's JSON parser agrees with `JSONValue.parse` and rejects bad text.
@Suite struct RecordJSONParserTests {
    @Test(arguments: [
        #"{"a":1,"b":-2.5,"c":[true,false,null],"d":{"e":"f"}}"#,
        #"{"s":"quote \" backslash \\ slash \/ tab \t newline \n unicode \u00e9 \u20ac emoji \ud83d\ude00 raw é"}"#,
        #"[0.1, -0, 9223372036854775807, 12345678901234567890, 3]"#,
        #"  { "spaced" : [ ] , "empty" : { } }  "#,
        #""just a string""#,
    ])
    func agreesWithJSONValue(_ text: String) throws {
        #expect(try RecordJSONParser.parse(ArraySlice(text.utf8)) == JSONValue.parse(text))
    }

    @Test func exponentsAreDoubles() throws {
        #expect(try RecordJSONParser.parse(ArraySlice("[1e3,2E-1]".utf8)) == .array([.double(1000), .double(0.2)]))
    }

    @Test(arguments: [#"{"a":1"#, #"{"a" 1}"#, #"[1,]"#, #"tru"#, #"{"a":"\x"}"#, #"{} {}"#, #""unterminated"#, ""])
    func rejectsBadText(_ text: String) {
        #expect(throws: TributaryError.self) { try RecordJSONParser.parse(ArraySlice(text.utf8)) }
    }
}
