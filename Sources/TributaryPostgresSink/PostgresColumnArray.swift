import Foundation
import PostgresNIO
import Tributary
import TributaryPipeline

/// One column of a batch as a PostgreSQL array in the binary wire format, NULL elements
/// allowed, so a whole batch binds as one parameter per column and is inserted with
/// `INSERT … SELECT * FROM unnest($1, $2, …)`: a short statement PostgreSQL parses once per
/// batch, whatever its size.
///
/// ```swift
/// var titles = PostgresColumnArray(columnType: "text")!
/// guard titles.append(.string("Hello")), titles.append(.null) else { return }
/// binds.append(titles)
/// ```
struct PostgresColumnArray: PostgresThrowingDynamicTypeEncodable {
    private enum Element { case text, int8, float8, bool, timestamptz, uuid, bytea }

    private let element: Element
    private let elementType: PostgresDataType
    private let arrayType: PostgresDataType
    private var elements = ByteBuffer()
    private var count: Int32 = 0
    private var hasNull = false

    /// An empty array for a column of `columnType` (a type ``PostgresMirrorSchema`` makes); nil for another type.
    init?(columnType: String) {
        switch columnType {
        case "text": (element, elementType, arrayType) = (.text, .text, .textArray)
        case "bigint": (element, elementType, arrayType) = (.int8, .int8, .int8Array)
        case "double precision": (element, elementType, arrayType) = (.float8, .float8, .float8Array)
        case "boolean": (element, elementType, arrayType) = (.bool, .bool, .boolArray)
        case "timestamptz": (element, elementType, arrayType) = (.timestamptz, .timestamptz, .timestamptzArray)
        case "uuid": (element, elementType, arrayType) = (.uuid, .uuid, .uuidArray)
        case "bytea": (element, elementType, arrayType) = (.bytea, .bytea, .byteaArray)
        default: return nil
        }
    }

    /// Appends a value; false when its kind does not fit the column (the batch then binds values one by one).
    mutating func append(_ value: AttributeValue) -> Bool {
        let context = PostgresEncodingContext.default
        func write(_ encode: (inout ByteBuffer) -> Void) {
            let lengthIndex = elements.writerIndex
            elements.writeInteger(Int32(0))
            let start = elements.writerIndex
            encode(&elements)
            elements.setInteger(Int32(elements.writerIndex - start), at: lengthIndex)
        }
        switch (element, value) {
        case (_, .null):
            elements.writeInteger(Int32(-1))
            hasNull = true
        case (.text, .string(let text)): write { text.encode(into: &$0, context: context) }
        case (.int8, .integer(let number)): write { number.encode(into: &$0, context: context) }
        case (.int8, .objectID(let object)): write { object.primaryKey.encode(into: &$0, context: context) }
        case (.float8, .double(let number)): write { number.encode(into: &$0, context: context) }
        case (.float8, .integer(let number)): write { Double(number).encode(into: &$0, context: context) }
        case (.bool, .bool(let flag)): write { flag.encode(into: &$0, context: context) }
        case (.timestamptz, .date(let date)): write { date.encode(into: &$0, context: context) }
        case (.uuid, .uuid(let uuid)): write { uuid.encode(into: &$0, context: context) }
        case (.bytea, .data(let data)): write { $0.writeBytes(data) }
        default: return false
        }
        count += 1
        return true
    }

    var psqlType: PostgresDataType { arrayType }
    var psqlFormat: PostgresFormat { .binary }

    func encode<JSONEncoder: PostgresJSONEncoder>(into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>) throws {
        byteBuffer.writeInteger(Int32(1))                 // dimensions
        byteBuffer.writeInteger(Int32(hasNull ? 1 : 0))   // has NULLs
        byteBuffer.writeInteger(elementType.rawValue)     // element type
        byteBuffer.writeInteger(count)                    // length of the dimension
        byteBuffer.writeInteger(Int32(1))                 // lower bound
        byteBuffer.writeImmutableBuffer(elements)
    }
}
