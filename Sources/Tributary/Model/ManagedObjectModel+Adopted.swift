extension ManagedObjectModel {
    /// What a relationship of an adopted table (one with a ``EntityDescription/tableKey``)
    /// can be: a to-one whose key is a column of the table (a foreign key, named after it),
    /// or the to-many inverse of one. Tributary never adds a table or a column to an adopted
    /// database, so a many-to-many relationship (a join table) and a one-to-one (one end
    /// keeps its key in the other's table) are refused, as is one between an adopted table
    /// and a table Tributary made.
    static func checkAdoptedRelationship(_ relationship: RelationshipDescription, of entity: EntityDescription,
                                         inverse: RelationshipDescription, destination: EntityDescription) throws {
        let place = "\(entity.name).\(relationship.name)"
        func refuse(_ message: String, hint: String) -> TributaryError {
            TributaryError(.invalidModel, message, location: place, hint: hint)
        }
        guard entity.tableKey != nil, destination.tableKey != nil else {
            throw refuse("a relationship between an adopted table and a table Tributary made", hint: "relate adopted tables only to adopted tables")
        }
        switch (relationship.isToMany, inverse.isToMany) {
        case (true, true):
            throw refuse("a many-to-many relationship needs a join table, and Tributary adds no table to an adopted database",
                         hint: "make the join table in the database, with a foreign key to each side, and run tributary adopt again")
        case (false, false):
            throw refuse("a one-to-one relationship keeps its key in one of the two tables, and Tributary adds no column to an adopted database",
                         hint: "make \(destination.name).\(inverse.name) to-many: \(entity.name).\(relationship.name) is then the table's foreign-key column")
        default:
            break
        }
    }
}
