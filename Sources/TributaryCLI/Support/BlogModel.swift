import Tributary

/// The blog model of examples/blog/model.yml, written with the DSL (the demo's model).
enum BlogModel {
    static func make() throws -> ManagedObjectModel {
        try ManagedObjectModel {
            Entity("Post") {
                Attribute("title", .string, optional: false)
                Attribute("content", .string)
                Attribute("externalID", .string, optional: false).unique()
                Attribute("createdAt", .date, optional: false)
                DerivedAttributeDescription("updatedAt", .date, derivation: "now()")
                Relationship("tags", to: "Tag", inverse: "posts", toMany: true)
                Relationship("attachments", to: "Attachment", inverse: "post", toMany: true, deleteRule: .cascade)
                FetchIndex("createdAt")
            }
            Entity("Tag") {
                Attribute("name", .string, optional: false).unique()
                Attribute("color", .string, default: "gray")
                DerivedAttributeDescription("postCount", .integer, derivation: "posts.@count")
                Relationship("posts", to: "Post", inverse: "tags", toMany: true)
            }
            Entity("Attachment") {
                Attribute("fileName", .string, optional: false)
                Attribute("mimeType", .string, default: "application/octet-stream")
                Relationship("post", to: "Post", inverse: "attachments")
                Relationship("imageData", to: "ImageData", inverse: "attachment", deleteRule: .cascade)
            }
            Entity("ImageData") {
                Attribute("bytes", .binary).excludedFromHistory()
                Attribute("width", .integer)
                Attribute("height", .integer)
                Relationship("attachment", to: "Attachment", inverse: "imageData")
            }
        }
    }
}
