import Foundation
import Testing
@testable import Tributary

/// The NSPredicate-style format parser and printer of ``StorePredicate``:
/// tokens, grammar, placeholders, normalisation, round trips and errors.
@Suite struct PredicateParserTests {
    /// Foundation also has a `StorePredicateExpression`, so name ours explicitly.
    private typealias Expression = Tributary.StorePredicateExpression

    // MARK: Helpers

    private func parse(_ format: String, _ arguments: AttributeValue...) throws -> StorePredicate {
        try StorePredicate(format: format, argumentArray: arguments)
    }

    private func key(_ path: String) -> Expression {
        .keyPath(path.split(separator: ".").map(String.init))
    }

    private func value(_ value: AttributeValue) -> Expression { .constant(value) }

    private func cmp(_ left: Expression, _ op: ComparisonOperator, _ right: Expression,
                     _ modifier: ComparisonModifier = .direct, _ options: ComparisonOptions = []) -> StorePredicate {
        .comparison(Comparison(left: left, op: op, right: right, modifier: modifier, options: options))
    }

    /// Expects an `.invalidPredicate` error whose location names `token` at `offset` and which has a hint.
    @discardableResult
    private func failure(_ format: String, _ arguments: [AttributeValue] = [], offset: Int, token: String,
                         sourceLocation: SourceLocation = #_sourceLocation) -> TributaryError? {
        let error = #expect(throws: TributaryError.self, "\(format) should not parse", sourceLocation: sourceLocation) {
            try StorePredicate(format: format, argumentArray: arguments)
        }
        guard let error else { return nil }
        let location = error.location ?? ""
        #expect(error.code == .invalidPredicate, sourceLocation: sourceLocation)
        #expect(location.contains("predicate \"\(format)\""), "\(location)", sourceLocation: sourceLocation)
        #expect(location.contains("at offset \(offset)"), "\(location)", sourceLocation: sourceLocation)
        #expect(location.contains(token), "\(location)", sourceLocation: sourceLocation)
        #expect(error.hint?.isEmpty == false, "\(error)", sourceLocation: sourceLocation)
        return error
    }

    private static let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
    private static let objectID = ObjectID(storeID: uuid, entityName: "Post", primaryKey: 42)

    // MARK: Operators, options, modifiers

    @Test(arguments: [
        ("==", ComparisonOperator.equal), ("=", .equal), ("!=", .notEqual), ("<>", .notEqual),
        ("<", .less), ("<=", .lessOrEqual), ("=<", .lessOrEqual), (">", .greater), (">=", .greaterOrEqual),
        ("=>", .greaterOrEqual), ("BEGINSWITH", .beginsWith), ("beginswith", .beginsWith), ("ENDSWITH", .endsWith),
        ("CONTAINS", .contains), ("Contains", .contains), ("LIKE", .like), ("like", .like),
    ])
    func everyOperator(_ text: String, _ op: ComparisonOperator) throws {
        #expect(try parse("title \(text) 'x'") == cmp(key("title"), op, value("x")))
    }

    @Test func operatorsWithoutSpaces() throws {
        #expect(try parse("a==1") == cmp(key("a"), .equal, value(1)))
        #expect(try parse("a=1") == cmp(key("a"), .equal, value(1)))
        #expect(try parse("a<>1") == cmp(key("a"), .notEqual, value(1)))
        #expect(try parse("a!=-1") == cmp(key("a"), .notEqual, value(-1)))
        #expect(try parse("a<-1") == cmp(key("a"), .less, value(-1)))
        #expect(try parse("a=<1") == cmp(key("a"), .lessOrEqual, value(1)))
        #expect(try parse("a=>1") == cmp(key("a"), .greaterOrEqual, value(1)))
        #expect(try parse("\ta\n==\r\n1 ") == cmp(key("a"), .equal, value(1)))
    }

    @Test func inAndBetween() throws {
        #expect(try parse("tag IN {'a', \"b\", 3}") == cmp(key("tag"), .in, .aggregate([value("a"), value("b"), value(3)])))
        #expect(try parse("tag in {}") == cmp(key("tag"), .in, .aggregate([])))
        #expect(try parse("tag IN %@", ["a", "b"]) == cmp(key("tag"), .in, value(.array(["a", "b"]))))
        #expect(try parse("age BETWEEN {18, 65}") == cmp(key("age"), .between, .aggregate([value(18), value(65)])))
        #expect(try parse("age between %@", [1.5, 2]) == cmp(key("age"), .between, value(.array([1.5, 2]))))
        #expect(try parse("tag IN {%@, %@}", "a", 2) == cmp(key("tag"), .in, .aggregate([value("a"), value(2)])))
        // A constant on the left of IN or CONTAINS is kept as written.
        #expect(try parse("'x' IN tags.name") == cmp(value("x"), .in, key("tags.name")))
        #expect(try parse("'swift programming' CONTAINS title") == cmp(value("swift programming"), .contains, key("title")))
    }

    @Test func options() throws {
        #expect(try parse("title BEGINSWITH[c] 'x'") == cmp(key("title"), .beginsWith, value("x"), .direct, .caseInsensitive))
        #expect(try parse("title ENDSWITH[d] 'x'") == cmp(key("title"), .endsWith, value("x"), .direct, .diacriticInsensitive))
        #expect(try parse("title CONTAINS[cd] 'x'") == cmp(key("title"), .contains, value("x"), .direct, [.caseInsensitive, .diacriticInsensitive]))
        #expect(try parse("title LIKE[DC] 'x*'") == cmp(key("title"), .like, value("x*"), .direct, [.caseInsensitive, .diacriticInsensitive]))
        #expect(try parse("title ==[c] 'x'") == cmp(key("title"), .equal, value("x"), .direct, .caseInsensitive))
        #expect(try parse("title IN[c] {'x'}") == cmp(key("title"), .in, .aggregate([value("x")]), .direct, .caseInsensitive))
    }

    @Test func modifiers() throws {
        #expect(try parse("ANY tags.name == 'swift'") == cmp(key("tags.name"), .equal, value("swift"), .any))
        #expect(try parse("SOME tags.name == 'swift'") == cmp(key("tags.name"), .equal, value("swift"), .any))
        #expect(try parse("any tags.name == 'swift'") == cmp(key("tags.name"), .equal, value("swift"), .any))
        #expect(try parse("ALL scores >= 3") == cmp(key("scores"), .greaterOrEqual, value(3), .all))
        #expect(try parse("NONE tags.name BEGINSWITH[c] 'ob'") == cmp(key("tags.name"), .beginsWith, value("ob"), .none, .caseInsensitive))
    }

    // MARK: Logic

    @Test func precedence() throws {
        let a = cmp(key("a"), .equal, value(1)), b = cmp(key("b"), .equal, value(2)), c = cmp(key("c"), .equal, value(3))
        #expect(try parse("a == 1 OR b == 2 AND c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("a == 1 AND b == 2 OR c == 3") == .or([.and([a, b]), c]))
        #expect(try parse("a == 1 || b == 2 && c == 3") == .or([a, .and([b, c])]))
        #expect(try parse("(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
        #expect(try parse("((a == 1))") == a)
        #expect(try parse("NOT a == 1 AND b == 2") == .and([.not(a), b]))
        #expect(try parse("NOT (a == 1 AND b == 2)") == .not(.and([a, b])))
        #expect(try parse("a == 1 and not b == 2 or c == 3") == .or([.and([a, .not(b)]), c]))
    }

    @Test func notForms() throws {
        let a = cmp(key("a"), .equal, value(1))
        #expect(try parse("NOT a == 1") == .not(a))
        #expect(try parse("!a == 1") == .not(a))
        #expect(try parse("!(a == 1)") == .not(a))
        #expect(try parse("NOT NOT a == 1") == .not(.not(a)))
        #expect(try parse("NOT TRUEPREDICATE") == .not(.constant(true)))
    }

    @Test func flattening() throws {
        let parts = (1...4).map { cmp(key("k\($0)"), .equal, value(.integer(Int64($0)))) }
        #expect(try parse("k1 == 1 AND k2 == 2 AND (k3 == 3 AND k4 == 4)") == .and(parts))
        #expect(try parse("(k1 == 1 AND k2 == 2) AND k3 == 3 AND k4 == 4") == .and(parts))
        #expect(try parse("k1 == 1 OR (k2 == 2 OR k3 == 3) OR k4 == 4") == .or(parts))
        // Different connectives are not merged.
        #expect(try parse("(k1 == 1 OR k2 == 2) AND (k3 == 3 OR k4 == 4)") == .and([.or(Array(parts[0..<2])), .or(Array(parts[2...]))]))
    }

    @Test func constantPredicates() throws {
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("falsepredicate") == .constant(false))
        #expect(try parse("TRUEPREDICATE AND a == 1") == .and([.constant(true), cmp(key("a"), .equal, value(1))]))
    }

    // MARK: Literals and key paths

    @Test func stringLiterals() throws {
        #expect(try parse("t == 'single'") == cmp(key("t"), .equal, value("single")))
        #expect(try parse("t == \"double\"") == cmp(key("t"), .equal, value("double")))
        #expect(try parse("t == \"it's\"") == cmp(key("t"), .equal, value("it's")))
        #expect(try parse("t == 'say \"hi\"'") == cmp(key("t"), .equal, value("say \"hi\"")))
        #expect(try parse(#"t == 'a\nb\tc\\d\'e\"f'"#) == cmp(key("t"), .equal, value("a\nb\tc\\d'e\"f")))
        #expect(try parse(#"t == "q\"q""#) == cmp(key("t"), .equal, value("q\"q")))
        #expect(try parse("t == ''") == cmp(key("t"), .equal, value("")))
        #expect(try parse("t == 'AND == OR'") == cmp(key("t"), .equal, value("AND == OR")))
        #expect(try parse("t == 'café 🚀'") == cmp(key("t"), .equal, value("café 🚀")))
    }

    @Test func numberAndKeywordLiterals() throws {
        #expect(try parse("n == 42") == cmp(key("n"), .equal, value(.integer(42))))
        #expect(try parse("n == -42") == cmp(key("n"), .equal, value(.integer(-42))))
        #expect(try parse("n == 9223372036854775807") == cmp(key("n"), .equal, value(.integer(.max))))
        #expect(try parse("n == -9223372036854775808") == cmp(key("n"), .equal, value(.integer(.min))))
        #expect(try parse("n == 3.25") == cmp(key("n"), .equal, value(.double(3.25))))
        #expect(try parse("n == -0.5") == cmp(key("n"), .equal, value(.double(-0.5))))
        #expect(try parse("n == 1e3") == cmp(key("n"), .equal, value(.double(1000))))
        #expect(try parse("n == 2.5E-3") == cmp(key("n"), .equal, value(.double(0.0025))))
        for (word, expected) in [("TRUE", AttributeValue.bool(true)), ("yes", .bool(true)), ("FALSE", .bool(false)), ("No", .bool(false)), ("NIL", .null), ("null", .null)] {
            #expect(try parse("b == \(word)") == cmp(key("b"), .equal, value(expected)), "\(word)")
        }
    }

    @Test func keyPaths() throws {
        #expect(try parse("author.name == 'x'") == cmp(.keyPath(["author", "name"]), .equal, value("x")))
        #expect(try parse("a.b.c_d == 1") == cmp(.keyPath(["a", "b", "c_d"]), .equal, value(1)))
        #expect(try parse("_private == 1") == cmp(.keyPath(["_private"]), .equal, value(1)))
        #expect(try parse("$var == 1") == cmp(.keyPath(["$var"]), .equal, value(1)))
        #expect(try parse("tags.@count > 2") == cmp(.keyPath(["tags", "@count"]), .greater, value(2)))
        #expect(try parse("名前 == 'x'") == cmp(.keyPath(["名前"]), .equal, value("x")))
        // Reserved words become key paths with a leading #.
        #expect(try parse("#size == 1") == cmp(.keyPath(["size"]), .equal, value(1)))
        #expect(try parse("#IN == 1") == cmp(.keyPath(["IN"]), .equal, value(1)))
        #expect(try parse("#any.name == 1") == cmp(.keyPath(["any", "name"]), .equal, value(1)))
        #expect(try parse("#true == 1") == cmp(.keyPath(["true"]), .equal, value(1)))
        // Reserved words inside a dotted path need no escape.
        #expect(try parse("post.in == 1") == cmp(.keyPath(["post", "in"]), .equal, value(1)))
        #expect(try parse("a == b") == cmp(key("a"), .equal, key("b")))
    }

    /// Attributes named like the value forms (`data`, `uuid`, `objectID`, `cast`) are key paths unless followed by `(`.
    @Test func keyPathsNamedLikeValueForms() throws {
        #expect(try parse("data == nil") == cmp(key("data"), .equal, value(.null)))
        #expect(try parse("uuid == %@", .uuid(Self.uuid)) == cmp(key("uuid"), .equal, value(.uuid(Self.uuid))))
        #expect(try parse("objectID == %@", .objectID(Self.objectID)) == cmp(key("objectID"), .equal, value(.objectID(Self.objectID))))
        #expect(try parse("cast != 'x'") == cmp(key("cast"), .notEqual, value("x")))
        #expect(try parse("'x' IN data") == cmp(value("x"), .in, key("data")))
    }

    @Test func valueForms() throws {
        #expect(try parse("d == CAST(0, \"NSDate\")") == cmp(key("d"), .equal, value(.date(Date(timeIntervalSinceReferenceDate: 0)))))  // Apple's epoch: 2001-01-01
        #expect(try parse("d > cast(-12.5, 'NSDate')") == cmp(key("d"), .greater, value(.date(Date(timeIntervalSinceReferenceDate: -12.5)))))
        #expect(try parse("u == UUID('\(Self.uuid.uuidString.lowercased())')") == cmp(key("u"), .equal, value(.uuid(Self.uuid))))
        #expect(try parse("o == OBJECTID(\"\(Self.objectID.uriRepresentation)\")") == cmp(key("o"), .equal, value(.objectID(Self.objectID))))
        #expect(try parse("b == DATA('AAEC/w==')") == cmp(key("b"), .equal, value(.data(Data([0, 1, 2, 255])))))
        #expect(try parse("x IN ARRAY(1, 'a', ARRAY())") == cmp(key("x"), .in, value(.array([1, "a", .array([])]))))
    }

    // MARK: Placeholders

    @Test func placeholders() throws {
        #expect(try parse("title == %@", "x") == cmp(key("title"), .equal, value("x")))
        #expect(try parse("%K == %@", "author.name", "x") == cmp(key("author.name"), .equal, value("x")))
        #expect(try parse("%K BEGINSWITH[c] %@", "title", "sw") == cmp(key("title"), .beginsWith, value("sw"), .direct, .caseInsensitive))
        for spec in ["%d", "%i", "%ld", "%lld"] {
            #expect(try parse("age > \(spec)", 18) == cmp(key("age"), .greater, value(18)), "\(spec)")
        }
        for spec in ["%f", "%lf"] {
            #expect(try parse("score < \(spec)", 2.5) == cmp(key("score"), .less, value(2.5)), "\(spec)")
            #expect(try parse("score < \(spec)", 2) == cmp(key("score"), .less, value(.double(2))), "\(spec) widens an integer")
        }
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(try parse("d >= %@", .date(date)) == cmp(key("d"), .greaterOrEqual, value(.date(date))))
        #expect(try parse("x == %@", .null) == cmp(key("x"), .equal, value(.null)))
        #expect(try parse("b == %@", true) == cmp(key("b"), .equal, value(true)))
    }

    @Test func placeholdersConsumeArgumentsInOrder() throws {
        let p = try parse("%K == %@ AND (b < %d OR c BETWEEN %@) AND NOT %K IN %@",
                          "a", "one", 2, [3, 4], "e", ["f"])
        #expect(p == .and([
            cmp(key("a"), .equal, value("one")),
            .or([cmp(key("b"), .less, value(2)), cmp(key("c"), .between, value([3, 4]))]),
            .not(cmp(key("e"), .in, value(["f"]))),
        ]))
        #expect(try StorePredicate(format: "a == %@ OR b == %@", argumentArray: ["x", "y"]) == .or([cmp(key("a"), .equal, value("x")), cmp(key("b"), .equal, value("y"))]))
    }

    // MARK: Normalisation

    @Test(arguments: [
        ("==", ComparisonOperator.equal), ("!=", .notEqual), ("<", .greater), ("<=", .greaterOrEqual), (">", .less), (">=", .lessOrEqual),
    ])
    func constantOnTheLeftIsFlipped(_ text: String, _ flipped: ComparisonOperator) throws {
        #expect(try parse("5 \(text) age") == cmp(key("age"), flipped, value(5)))
    }

    @Test func flippingKeepsModifiersAndOptions() throws {
        #expect(try parse("%@ == title", "x") == cmp(key("title"), .equal, value("x")))
        #expect(try parse("ANY 'x' ==[c] tags.name") == cmp(key("tags.name"), .equal, value("x"), .any, .caseInsensitive))
        // Not flipped: two constants, two key paths, string operators, IN.
        #expect(try parse("5 < 6") == cmp(value(5), .less, value(6)))
        #expect(try parse("a < b") == cmp(key("a"), .less, key("b")))
        #expect(try parse("'abc' BEGINSWITH title") == cmp(value("abc"), .beginsWith, key("title")))
        #expect(try parse("'x' IN tags") == cmp(value("x"), .in, key("tags")))
    }

    // MARK: Printing and round trips

    @Test func canonicalFormat() throws {
        #expect(try parse("title beginswith[c] 'swift'").predicateFormat == "title BEGINSWITH[c] \"swift\"")
        #expect(try parse("a = 1 || b <> 2 && !c =< 3").predicateFormat == "(a == 1) OR ((b != 2) AND (NOT (c <= 3)))")
        #expect(try parse("some tags.name IN {'a', 2, nil, yes}").predicateFormat == "ANY tags.name IN {\"a\", 2, NIL, TRUE}")
        #expect(try parse("x == 'q\"\\\\'").predicateFormat == #"x == "q\"\\""#)
        #expect(try parse("5 < age").predicateFormat == "age > 5")
        #expect(StorePredicate.constant(false).predicateFormat == "FALSEPREDICATE")
    }

    @Test func roundTrips() throws {
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)
        let cases: [(String, [AttributeValue])] = [
            ("title == 'Hello'", []),
            ("title BEGINSWITH[cd] %@", ["sw\"i\\ft\n\ttab 'q' é"]),
            ("ANY tags.name IN {'a', \"b\", 3, 4.5}", []),
            ("NONE tags.name CONTAINS[c] 'x'", []),
            ("ALL scores > 3.25 AND ALL scores < 1e300", []),
            ("age BETWEEN {18, 65} OR age BETWEEN %@", [[1, 2]]),
            ("(a == 1 OR b == 2) AND NOT c == nil AND NOT (d != TRUE OR e == NO)", []),
            ("createdAt >= %@ AND createdAt < %@", [.date(date), .date(Date(timeIntervalSince1970: -86_400.5))]),
            ("id == %@ AND blob == %@ AND post == %@", [.uuid(Self.uuid), .data(Data([0, 1, 2, 255])), .objectID(Self.objectID)]),
            ("'x' IN tags.name AND 5 < age AND %@ CONTAINS title", ["long text"]),
            ("n == -42 AND d == -0.5 AND e == 1e-7 AND big == %@ AND small == %@", [.integer(.max), .integer(.min)]),
            ("externalID IN %@ AND tag IN %@", [["a", "b", 3], []]),
            ("x IN {%@, %@, %@}", [.date(date), .uuid(Self.uuid), [1, [2]]]),
            ("#in == 1 AND #TRUE == 2 AND #cast == 3 AND #size.any == 4", []),
            ("TRUEPREDICATE OR FALSEPREDICATE", []),
            ("title LIKE[d] '*a?' AND title ENDSWITH 'z' AND title =[cd] 'é'", []),
            ("a == b AND 1 == 2", []),
        ]
        for (format, arguments) in cases {
            let predicate = try StorePredicate(format: format, argumentArray: arguments)
            let printed = predicate.predicateFormat
            let reparsed = try StorePredicate(format: printed)
            #expect(reparsed == predicate, "\(format) printed as \(printed)")
            #expect(reparsed.predicateFormat == printed, "printing is stable for \(format)")
        }
    }

    /// Names another program gave an adopted table (a space, a hyphen, a keyword, a quote,
    /// a leading digit) go in backticks, part by part, and print back the same way.
    @Test func backtickedNames() throws {
        #expect(try parse("`unit price` > 2") == cmp(key("unit price"), .greater, value(2)))
        #expect(try parse("`and` == 1 AND `select`.`Order Details` == 'x'") == .and([cmp(key("and"), .equal, value(1)), cmp(.keyPath(["select", "Order Details"]), .equal, value("x"))]))
        #expect(try parse("a.`b-c` == 1") == cmp(.keyPath(["a", "b-c"]), .equal, value(1)))
        #expect(try parse("`Größe` == 'L'").predicateFormat == "Größe == \"L\"")
        for path in [["unit price"], ["say \"hi\""], ["1st"], ["a", "b-c"], ["_note"]] {
            let predicate = cmp(.keyPath(path), .equal, value(1))
            #expect(try StorePredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
        }
        #expect(try parse("`unit price` == 1").predicateFormat == "`unit price` == 1")
        failure("`unit price == 1", offset: 0, token: "`unit price")
        failure("a == 1 AND `` == 2", offset: 11, token: "``")
    }

    @Test(arguments: ComparisonOperator.allCases)
    func everyOperatorRoundTrips(_ op: ComparisonOperator) throws {
        let right: Expression = op == .between || op == .in ? .aggregate([value(1), value(2)]) : value("v")
        for modifier in [ComparisonModifier.direct, .any, .all, .none] {
            for options in [ComparisonOptions(), .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive]] {
                let predicate = cmp(key("a.b"), op, right, modifier, options)
                #expect(try StorePredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
            }
        }
    }

    @Test func builtPredicatesRoundTrip() throws {
        let predicates: [StorePredicate] = [
            cmp(.keyPath(["nil"]), .equal, value(.null)),
            cmp(.keyPath(["TruePredicate"]), .notEqual, value(.double(.infinity))),
            cmp(.keyPath(["some"]), .greater, value(.double(-.infinity)), .all),
            cmp(.keyPath(["in"]), .in, value(.array([.array([]), .data(Data()), .string("")]))),
            cmp(.keyPath(["yes", "no"]), .between, value(.array([.date(Date(timeIntervalSince1970: 0.001)), .date(Date(timeIntervalSinceReferenceDate: 0))]))),
            .not(.or([.constant(true), .and([cmp(key("a"), .like, value("*"), .any, .caseInsensitive), .constant(false)])])),
        ]
        for predicate in predicates {
            #expect(try StorePredicate(format: predicate.predicateFormat) == predicate, "\(predicate.predicateFormat)")
        }
    }

    // MARK: Errors

    @Test func unterminatedString() {
        failure("title == 'abc", offset: 9, token: "'abc")
        failure("title == \"abc\\\"", offset: 9, token: "\"abc")
    }

    @Test func unknownOperator() {
        let error = failure("title SOUNDSLIKE 'x'", offset: 6, token: "SOUNDSLIKE")
        #expect(error?.message.contains("unknown operator") == true)
        failure("title ~ 'x'", offset: 6, token: "~")
        failure("title 'x'", offset: 6, token: "'x'")
        failure("title", offset: 5, token: "end of predicate")
    }

    @Test func missingOperand() {
        failure("title ==", offset: 8, token: "end of predicate")
        #expect(failure("title ==", offset: 8, token: "end of predicate")?.location == "predicate \"title ==\" at offset 8 ('end of predicate')")
        failure("title == AND b == 1", offset: 9, token: "AND")
        failure("a == 1 AND", offset: 10, token: "end of predicate")
        failure("", offset: 0, token: "end of predicate")
        failure("ANY", offset: 3, token: "end of predicate")
        failure("AND == 1", offset: 0, token: "AND")
        failure("a IN ", offset: 5, token: "end of predicate")
    }

    @Test func unbalancedBrackets() {
        failure("(a == 1", offset: 7, token: "end of predicate")
        failure("a == 1)", offset: 6, token: ")")
        failure("a IN {1, 2", offset: 10, token: "end of predicate")
        failure("a IN {1 2}", offset: 8, token: "2")
        failure("title CONTAINS[c", offset: 14, token: "[")
    }

    @Test func badTokens() {
        failure("title CONTAINS[z] 'x'", offset: 15, token: "z")
        failure("a == %x", offset: 5, token: "%x")
        failure("a == 1.5.3", offset: 8, token: ".")
        failure("a == ^", offset: 5, token: "^")
    }

    @Test func tooFewArguments() {
        let error = failure("a == %@ AND b == %@", ["x"], offset: 17, token: "%@")
        #expect(error?.message.contains("only 1 given") == true)
        failure("%K == 1", offset: 0, token: "%K")
    }

    @Test func tooManyArguments() {
        let error = failure("a == %@", ["x", "y"], offset: 7, token: "end of predicate")
        #expect(error?.message.contains("2 arguments") == true)
        failure("a == 1", [1], offset: 6, token: "end of predicate")
    }

    @Test func argumentsOfTheWrongKind() {
        let error = failure("age == %d", ["x"], offset: 7, token: "%d")
        #expect(error?.message.contains("string") == true)
        failure("age == %lld", [1.5], offset: 7, token: "%lld")
        failure("score < %f", ["x"], offset: 8, token: "%f")
        failure("%K == 1", [1], offset: 0, token: "%K")
        failure("%K == 1", [""], offset: 0, token: "%K")
    }

    @Test func trailingGarbage() {
        let error = failure("title == 'a' 'b'", offset: 13, token: "'b'")
        #expect(error?.message.contains("after a complete predicate") == true)
        failure("a == 1 b == 2", offset: 7, token: "b")
        // Offsets count characters, not bytes.
        failure("title == 'café' 'b'", offset: 16, token: "'b'")
    }

    @Test func badValueForms() {
        failure("u == UUID('nope')", offset: 10, token: "'nope'")
        failure("d == CAST(1, 'NSString')", offset: 13, token: "'NSString'")
        failure("b == DATA('***')", offset: 10, token: "'***'")
        failure("o == OBJECTID('http://x')", offset: 14, token: "'http://x'")
        failure("u == UUID('\(Self.uuid.uuidString)'", offset: 48, token: "end of predicate")
        failure("x IN ARRAY(1, b)", offset: 14, token: "b")
        failure("x IN ARRAY(1 2)", offset: 13, token: "2")
        failure("x IN ARRAY(1,", offset: 13, token: "end of predicate")
    }

    @Test func betweenNeedsTwoValues() {
        failure("age BETWEEN {1, 2, 3}", offset: 12, token: "{")
        failure("age BETWEEN %@", [[1]], offset: 12, token: "%@")
        failure("age BETWEEN 5", offset: 12, token: "5")
    }
}
