import Foundation
import Testing
import Tributary
@testable import TributaryStreams

/// Debezium schema change events name an entity only by a change item's exact form (its verb,
/// then the entity's name), so an adopted table `Details` is not altered by a change of
/// `Order Details` (matched by substring, `added Order Details.y` altered both).
@Suite struct DebeziumTableChangesTests {
    /// `Details` and `Order Details`: a column added to the second alters only it.
    @Test func debeziumAltersOnlyTheEntityAnItemIsAbout() throws {
        var details = EntityDescription(name: "Details", attributes: [AttributeDescription(name: "x", type: .string)])
        var orderDetails = EntityDescription(name: "Order Details", attributes: [AttributeDescription(name: "x", type: .string), AttributeDescription(name: "y", type: .string)])
        details.tableKey = "id"   // adopted tables: their names may hold spaces
        orderDetails.tableKey = "id"
        let model = try ManagedObjectModel(entities: [details, orderDetails])
        func altered(_ changes: [String]) -> [String] {
            let change = SchemaChange(fromVersion: nil, toVersion: model.versionHash, changes: changes, model: model, isDetected: false)
            return DebeziumSchemaChange.tableChanges(change).map { "\($0.0) \($0.1)" }
        }
        #expect(altered(["added Order Details.y"]) == ["ALTER Order Details"])
        #expect(altered(["changed Order Details"]) == ["ALTER Order Details"])
        #expect(altered(["added index Order Details(y)", "changed the key of Order Details to id"]) == ["ALTER Order Details"])
        #expect(altered(["renamed Order Details.z to Order Details.y"]) == ["ALTER Order Details"])
        #expect(altered(["added Details.x"]) == ["ALTER Details"])
        #expect(altered(["changed the unique constraints of Details"]) == ["ALTER Details"])
        #expect(altered(["added entity Order Details", "removed entity Order"]) == ["CREATE Order Details", "DROP Order"])
        #expect(altered(["renamed entity Orders to Order Details"]) == ["ALTER Order Details"])
        #expect(SchemaChange.entity(of: "added Order Details.notes", among: ["Details", "Order Details"]) == "Order Details")
        #expect(altered(["made Order Details a WITHOUT ROWID table"]) == ["ALTER Order Details"], "a table made again WITHOUT ROWID and adopted again")
    }
}
