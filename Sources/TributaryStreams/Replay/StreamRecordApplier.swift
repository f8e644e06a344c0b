import Foundation
import Tributary

/// Applies records read from anywhere (a message broker, a socket) to a replica store, the way
/// ``StreamReplayer`` applies a stream directory's: records parsed with the replay parser,
/// batched into batch requests that keep the source's primary keys, so applying a record
/// twice changes nothing.
///
/// ```swift
/// var applier = StreamRecordApplier(coordinator: replica, model: model)
/// try applier.add(line: bytes[...], format: .native, position: position)
/// try applier.flush()
/// print(applier.appliedThrough as Any)
/// ```
public struct StreamRecordApplier {
    private var applier: ReplayApplier
    private let ids = ObjectIDReader()
    private var native = NativeRecordReader()

    /// An applier writing to `coordinator`'s store with `model`, `batchSize` records per request at most.
    ///
    /// ```swift
    /// var applier = StreamRecordApplier(coordinator: replica, model: model, batchSize: 500)
    /// ```
    public init(coordinator: PersistentStoreCoordinator, model: ManagedObjectModel, batchSize: Int = 1_000) {
        applier = ReplayApplier(coordinator: coordinator, model: model, batchSize: batchSize)
    }

    /// Adds the record `line` (one record of `format`, without its newline) at `position`;
    /// it is written by this call or a later one, at the latest by ``flush()``. A schema
    /// record writes what is pending and migrates the replica to its model (see
    /// `PersistentStoreCoordinator.migrateStore(to:)`), and is returned; a capture gap record
    /// is passed over.
    ///
    /// ```swift
    /// try applier.add(line: bytes[...], format: .native, position: StreamPosition(token: 42, index: 0))
    /// ```
    @discardableResult
    public mutating func add(line: ArraySlice<UInt8>, format: StreamFormat, position: StreamPosition) throws -> SchemaRecord? {
        if SchemaRecord.mayBeAt(position), let schema = try SchemaRecord.read(line, format: format) {
            try applier.migrate(to: schema, at: position)
            native = NativeRecordReader()
            return schema
        }
        // A capture gap: writes the source may have missed, which no replica can repair.
        if try CaptureGapRecord.read(line, format: format, at: position) != nil { return nil }
        let change = try ReplayChange(line: line, format: format, model: applier.model, ids: ids, native: native)
        _ = try applier.add(change, position: position)
        return nil
    }

    /// The model records are applied with: the replica's, after any schema record applied.
    public var model: ManagedObjectModel { applier.model }

    /// Writes every record added.
    ///
    /// ```swift
    /// try applier.flush()
    /// ```
    public mutating func flush() throws { try applier.flush() }

    /// The position of the last record written.
    ///
    /// ```swift
    /// let through = applier.appliedThrough
    /// ```
    public var appliedThrough: StreamPosition? { applier.appliedThrough }
}
