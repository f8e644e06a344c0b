import Foundation
import Testing
@testable import Tributary

/// `renamedFrom:` in models (Core Data's renaming identifiers), and the value conversions
/// of explicit migrations.
@Suite struct ModelRenamingTests {
    static let yaml = """
        entities:
          Article:
            renamedFrom: Post
            attributes:
              content: { type: string, renamedFrom: body }
            relationships:
              labels: { to: Label, inverse: articles, toMany: true, renamedFrom: tags }
          Label:
            attributes:
              name: string
            relationships:
              articles: { to: Article, inverse: labels, toMany: true }
        """

    @Test func renamedFromIsReadWrittenAndCached() throws {
        let model = try ManagedObjectModel(yaml: Self.yaml)
        let article = try model.requireEntity("Article")
        #expect(article.renamingIdentifier == "Post")
        #expect(article.attribute(named: "content")?.renamingIdentifier == "body")
        #expect(article.relationship(named: "labels")?.renamingIdentifier == "tags")
        #expect(try ManagedObjectModel(yaml: model.yamlText) == model)
        #expect(try ManagedObjectModel.fromJSON(model.canonicalJSON()) == model)
        let dsl = try ManagedObjectModel {
            Entity("Article") {
                Attribute("content", .string).renamed(from: "body")
                Relationship("labels", to: "Label", inverse: "articles", toMany: true).renamed(from: "tags")
            }.renamed(from: "Post")
            Entity("Label") {
                Attribute("name", .string)
                Relationship("articles", to: "Article", inverse: "labels", toMany: true)
            }
        }
        #expect(dsl == model)
    }

    @Test func aModelWithoutRenamesKeepsItsCanonicalJSON() throws {
        let json = String(decoding: try Fixtures.blogModel().canonicalJSON(), as: UTF8.self)
        #expect(!json.contains("renamedFrom"))
        #expect(String(decoding: try ManagedObjectModel(yaml: Self.yaml).canonicalJSON(), as: UTF8.self).contains(#""renamedFrom":"body""#))
    }

    @Test func anInvalidOldNameIsRefused() throws {
        let error = try #require(throws: TributaryError.self) {
            try ManagedObjectModel(yaml: "entities:\n  Note:\n    attributes:\n      text: { type: string, renamedFrom: \"old name\" }\n", source: "m.yml")
        }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("renamedFrom 'old name' is not a valid name"))
    }

    @Test func conversionsFollowTributarysReadingOfValues() throws {
        let cases: [(AttributeValue, AttributeType, AttributeValue?)] = [
            (.string(" 42 "), .integer, .integer(42)), (.string("4x"), .integer, nil), (.string("99999999999999999999"), .integer, nil),
            (.double(3), .integer, .integer(3)), (.double(3.5), .integer, nil),
            (.string("-1.5e3"), .double, .double(-1500)), (.string("nan"), .double, nil), (.string("inf"), .double, nil),
            (.integer(7), .double, .double(7)), (.integer(7), .string, .string("7")), (.double(1.5), .string, .string("1.5")),
            (.integer(1), .bool, .integer(1)), (.integer(2), .bool, nil),
            (.double(1e300), .date, nil), (.double(86400), .date, .double(86400)),
            (.string("6F9619FF-8B86-D011-B42D-00C04FC964FF"), .uuid, .string("6f9619ff-8b86-d011-b42d-00c04fc964ff")), (.string("nope"), .uuid, nil),
            (.string("aGk="), .binary, nil),
        ]
        for (value, type, expected) in cases {
            #expect(TypeConversion.convert(value, to: type) == expected, "\(value) to \(type)")
        }
        #expect(TypeConversion(from: .string, to: .binary) == nil)
        #expect(TypeConversion(from: .date, to: .string) == nil)
        #expect(TypeConversion(from: .integer, to: .double)?.changesColumn == true)
        #expect(TypeConversion(from: .bool, to: .integer)?.rewritesValues == false)
    }

    @Test func theSQLFunctionConvertsAsSwiftDoes() throws {
        let db = try Connection(path: ":memory:", options: ConnectionOptions())
        #expect(try db.scalar("SELECT tributary_convert(' 12 ', 'integer')") == .integer(12))
        #expect(try db.scalar("SELECT tributary_convert('12 apples', 'integer')") == .null)
        #expect(try db.scalar("SELECT tributary_convert(3, 'double')") == .double(3))
        #expect(try db.scalar("SELECT tributary_convert(2.5, 'string')") == .string("2.5"))
        #expect(try db.scalar("SELECT tributary_convert(NULL, 'string')") == .null)
        #expect(try db.scalar("SELECT tributary_convert(1, 'nosuchtype')") == .null)
    }
}
