import Foundation
import Testing
import TributaryTestSupport
@testable import Tributary

/// Issue 19, bug 1: every default form, on every type, survives the store's cached model,
/// so the model reopens its own store in another coordinator and in another process.
@Suite struct ModelDefaultsTests {
    /// One attribute per type and default form: a literal of the attribute's own type, and
    /// each literal of another kind that converts to it without loss.
    static func model() throws -> ManagedObjectModel {
        let uuid = UUID(uuidString: "6f9619ff-8b86-d011-b42d-00cf4fc964ff")!
        return try ManagedObjectModel {
            Entity("Quake") {
                Attribute("magnitude", .double, optional: false, default: 0)          // integer on a double (the report)
                Attribute("depth", .double, default: 2.5)
                Attribute("tenth", .double, default: 0.1)
                Attribute("count", .integer, default: 7)
                Attribute("wholeDouble", .integer, default: .double(3))               // a whole double on an integer
                Attribute("flagged", .bool, default: true)
                Attribute("flagFromInt", .bool, default: 1)                           // 0/1 on a bool
                Attribute("countFromBool", .integer, default: .bool(true))            // a bool on an integer
                Attribute("title", .string, default: "untitled")
                Attribute("emptyTitle", .string, default: "")
                Attribute("time", .date, default: .date(Date(timeIntervalSince1970: 1_714_564_800.123_456)))  // sub-millisecond
                Attribute("timeFromText", .date, default: "2024-05-01T12:00:00Z")     // ISO 8601 text on a date
                Attribute("timeFromInt", .date, default: 86_400)                      // seconds on a date
                Attribute("timeFromDouble", .date, default: 1.5)
                Attribute("code", .uuid, default: .uuid(uuid))
                Attribute("codeFromText", .uuid, default: "6F9619FF-8B86-D011-B42D-00CF4FC964FF")
                Attribute("bytes", .binary, default: .data(Data([1, 2, 3])))
                Attribute("bytesFromText", .binary, default: "AQID")                  // base64 text on binary
                Attribute("nothing", .string, default: .null)                         // a null default is no default
            }
        }
    }

    /// Creates the store at `url` with the model and saves one quake with every default.
    static func createStoreWithOneQuake(at url: URL) throws {
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try model())
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: url))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: coordinator)
        _ = try context.insertNewObject(forEntityName: "Quake")
        try context.save()
    }

    @Test func defaultsAreTheAttributesTypes() throws {
        let entity = try Self.model().requireEntity("Quake")
        #expect(entity.attribute(named: "magnitude")?.defaultValue == .double(0))
        #expect(entity.attribute(named: "wholeDouble")?.defaultValue == .integer(3))
        #expect(entity.attribute(named: "flagFromInt")?.defaultValue == .bool(true))
        #expect(entity.attribute(named: "countFromBool")?.defaultValue == .integer(1))
        #expect(entity.attribute(named: "timeFromText")?.defaultValue == .date(ISO8601.date(from: "2024-05-01T12:00:00Z")!))
        #expect(entity.attribute(named: "codeFromText")?.defaultValue == entity.attribute(named: "code")?.defaultValue)
        #expect(entity.attribute(named: "bytesFromText")?.defaultValue == .data(Data([1, 2, 3])))
        #expect(entity.attribute(named: "nothing")?.defaultValue == nil)
    }

    @Test func theModelEqualsItsCachedAndYAMLForms() throws {
        let model = try Self.model()
        #expect(try ManagedObjectModel.fromJSON(model.canonicalJSON()) == model)
        #expect(try ManagedObjectModel(yaml: model.yamlText) == model)
        #expect(try ManagedObjectModel(yaml: model.yamlText).versionHash == model.versionHash)
    }

    @Test func yamlDefaultsAreNormalizedToo() throws {
        let yaml = "entities:\n  Quake:\n    attributes:\n      magnitude: { type: double, default: 0 }\n      time: { type: date, default: 1.0004 }\n"
        let model = try ManagedObjectModel(yaml: yaml)
        #expect(try ManagedObjectModel.fromJSON(model.canonicalJSON()) == model)
    }

    @Test func reopensItsStoreInAnotherCoordinator() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("quakes.sqlite")
        try Self.createStoreWithOneQuake(at: url)
        let second = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try second.addPersistentStore(with: PersistentStoreDescription(url: url))
        let context = ManagedObjectContext(concurrencyType: .privateQueue, coordinator: second)
        let quake = try #require(try context.fetch(FetchRequest(entityName: "Quake")).first)
        #expect(quake["magnitude"] == .double(0))
        #expect(quake["flagFromInt"] == .bool(true))
        #expect(quake["codeFromText"] == .uuid(UUID(uuidString: "6f9619ff-8b86-d011-b42d-00cf4fc964ff")!))
    }

    @Test func reopensAStoreAnotherProcessMade() throws {
        let dir = TemporaryDirectory()
        let modelFile = dir.file("model.yml")
        try Data(try Self.model().yamlText.utf8).write(to: modelFile)
        let store = dir.file("quakes.sqlite").path
        let created = try TributaryProcess.run(["init", store, "--model", modelFile.path])
        #expect(created.status == 0, "\(created.stderr)")
        let coordinator = PersistentStoreCoordinator(managedObjectModel: try Self.model())
        try coordinator.addPersistentStore(with: PersistentStoreDescription(url: URL(fileURLWithPath: store)))
    }

    @Test func anotherProcessReopensTheStore() throws {
        let dir = TemporaryDirectory()
        let url = dir.file("quakes.sqlite")
        try Self.createStoreWithOneQuake(at: url)
        let modelFile = dir.file("model.yml")
        try Data(try Self.model().yamlText.utf8).write(to: modelFile)
        let reopened = try TributaryProcess.run(["init", url.path, "--model", modelFile.path])
        #expect(reopened.status == 0, "\(reopened.stderr)")
        let counted = try TributaryProcess.run(["count", url.path, "--entity", "Quake"])
        #expect(counted.status == 0, "\(counted.stderr)")
        #expect(counted.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "1")
    }
}
