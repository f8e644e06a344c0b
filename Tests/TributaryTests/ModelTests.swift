import Foundation
import Testing
@testable import Tributary

@Suite struct ModelTests {
    @Test func yamlAndDSLProduceTheSameModel() throws {
        let yaml = try ManagedObjectModel(yamlFile: Fixtures.repositoryRoot.appendingPathComponent("examples/blog/model.yml"))
        let dsl = try Fixtures.blogModel()
        #expect(yaml == dsl)
        #expect(yaml.versionHash == dsl.versionHash)
    }

    @Test func yamlTextRoundTrips() throws {
        let model = try Fixtures.blogModel()
        let reread = try ManagedObjectModel(yaml: model.yamlText)
        #expect(reread == model)
    }

    @Test func canonicalJSONRoundTrips() throws {
        let model = try Fixtures.blogModel()
        #expect(try ManagedObjectModel.fromJSON(model.canonicalJSON()) == model)
    }

    @Test func differentModelsHaveDifferentHashes() throws {
        let a = try ManagedObjectModel { Entity("A") { Attribute("x", .string) } }
        let b = try ManagedObjectModel { Entity("A") { Attribute("x", .integer) } }
        #expect(a.versionHash != b.versionHash)
    }

    @Test func unknownKeyNamesLineAndAllowedKeys() throws {
        let yaml = """
        entities:
          Post:
            attributes:
              title: { type: string, optinal: false }
        """
        let error = try #require(throws: TributaryError.self) { try ManagedObjectModel(yaml: yaml, source: "m.yml") }
        #expect(error.code == .invalidModel)
        #expect(error.location == "m.yml:4")
        #expect(error.message.contains("optinal"))
        #expect(error.hint?.contains("allowed keys: type, optional, default") == true)
    }

    @Test func unknownTypeIsNamed() throws {
        let error = try #require(throws: TributaryError.self) {
            try ManagedObjectModel(yaml: "entities:\n  A:\n    attributes:\n      x: varchar\n", source: "m.yml")
        }
        #expect(error.message.contains("unknown type 'varchar'"))
        #expect(error.location == "m.yml:4")
    }

    @Test func missingInverseIsInvalid() throws {
        let error = try #require(throws: TributaryError.self) {
            try ManagedObjectModel {
                Entity("A") { Relationship("b", to: "B", inverse: "a") }
                Entity("B") { Attribute("x", .string) }
            }
        }
        #expect(error.code == .invalidModel)
        #expect(error.message.contains("inverse 'a' does not exist on B"))
    }

    @Test func malformedYAMLIsInvalid() throws {
        let error = try #require(throws: TributaryError.self) { try ManagedObjectModel(yaml: "entities: [unclosed", source: "bad.yml") }
        #expect(error.code == .invalidModel)
        #expect(error.location == "bad.yml")
    }

    @Test func badDefaultIsInvalid() throws {
        let error = try #require(throws: TributaryError.self) {
            try ManagedObjectModel(yaml: "entities:\n  A:\n    attributes:\n      n: { type: integer, default: lots }\n", source: "m.yml")
        }
        #expect(error.message.contains("default"))
        #expect(error.location == "m.yml:4")
    }

    @Test func duplicatePropertyIsInvalid() throws {
        #expect(throws: TributaryError.self) {
            try ManagedObjectModel { Entity("A") { Attribute("x", .string); Attribute("X", .integer) } }
        }
    }

    @Test func missingModelFileIsNamed() throws {
        let error = try #require(throws: TributaryError.self) { try ManagedObjectModel(yamlFile: URL(fileURLWithPath: "/nonexistent/model.yml")) }
        #expect(error.code == .fileNotFound)
        #expect(error.location == "/nonexistent/model.yml")
    }
}
