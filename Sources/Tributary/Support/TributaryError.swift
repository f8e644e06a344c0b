/// An error from Tributary: what went wrong, where, and what to do about it.
///
/// Every error has a ``code`` to match on, a one-line ``message``, the place it
/// concerns (a file and line, an entity, a predicate token) and a hint. Its
/// ``description`` is the single line the CLI prints.
///
/// ```swift
/// do {
///     try coordinator.execute(request)
/// } catch let error as TributaryError where error.code == .uniqueConstraint {
///     print(error.hint ?? "")
/// }
/// ```
public struct TributaryError: Error, Sendable, CustomStringConvertible, Equatable {
    /// A kind of error, stable across versions.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// A file or store that does not exist.
        public static let fileNotFound = Code(rawValue: "fileNotFound")
        /// A file that is not a Tributary store.
        public static let notAStore = Code(rawValue: "notAStore")
        /// A store written by a newer version of Tributary.
        public static let newerFormat = Code(rawValue: "newerFormat")
        /// A store locked by another connection past the busy timeout.
        public static let storeLocked = Code(rawValue: "storeLocked")
        /// A model that is not valid.
        public static let invalidModel = Code(rawValue: "invalidModel")
        /// A model that differs from the store's in a way that cannot be migrated in place.
        public static let incompatibleModel = Code(rawValue: "incompatibleModel")
        /// Input (NDJSON, YAML, arguments) that cannot be read.
        public static let invalidInput = Code(rawValue: "invalidInput")
        /// An entity the model does not have.
        public static let unknownEntity = Code(rawValue: "unknownEntity")
        /// An attribute or relationship the entity does not have.
        public static let unknownProperty = Code(rawValue: "unknownProperty")
        /// A value of the wrong type for its attribute.
        public static let typeMismatch = Code(rawValue: "typeMismatch")
        /// A value given for a derived attribute, which only the store writes.
        public static let derivedAttribute = Code(rawValue: "derivedAttribute")
        /// A missing required value.
        public static let missingValue = Code(rawValue: "missingValue")
        /// A write that would give two rows the same unique value.
        public static let uniqueConstraint = Code(rawValue: "uniqueConstraint")
        /// A delete refused by a deny rule.
        public static let deleteDenied = Code(rawValue: "deleteDenied")
        /// A predicate that cannot be parsed or compiled.
        public static let invalidPredicate = Code(rawValue: "invalidPredicate")
        /// No reader connection became free in time.
        public static let readerTimeout = Code(rawValue: "readerTimeout")
        /// A write attempted on a read-only store.
        public static let readOnly = Code(rawValue: "readOnly")
        /// A store that is not loaded, or a coordinator with no store.
        public static let noStore = Code(rawValue: "noStore")
        /// History requested past what pruning kept (Core Data's `NSPersistentHistoryTokenExpiredError`).
        public static let historyExpired = Code(rawValue: "historyExpired")
        /// A history request on a store that does not track history.
        public static let historyNotTracked = Code(rawValue: "historyNotTracked")
        /// History whose hash chain does not hold: it was edited after it was written.
        public static let historyTampered = Code(rawValue: "historyTampered")
        /// A consumer name that is not registered.
        public static let unknownConsumer = Code(rawValue: "unknownConsumer")
        /// An object whose row does not exist (a fault of a deleted row).
        public static let objectNotFound = Code(rawValue: "objectNotFound")
        /// A context save refused by conflicts with newer rows or unique constraints (``MergeConflictError``).
        public static let mergeConflict = Code(rawValue: "mergeConflict")
        /// A change stream (segments, manifest, dictionary) that is damaged, incomplete or has a gap.
        public static let damagedStream = Code(rawValue: "damagedStream")
        /// A pipeline file that cannot be read: the location names the file, line and key.
        public static let invalidPipeline = Code(rawValue: "invalidPipeline")
        /// A sink that cannot take records for now (connection refused, HTTP 429 or 5xx): retried.
        public static let sinkUnavailable = Code(rawValue: "sinkUnavailable")
        /// A sink that refused records for good (HTTP 4xx): handled by the sink's `on_error`.
        public static let sinkRejected = Code(rawValue: "sinkRejected")
        /// A pipeline stopped by its `on_error: stop` policy or by exhausted retries.
        public static let pipelineStopped = Code(rawValue: "pipelineStopped")
        /// An operating-system or SQLite failure.
        public static let io = Code(rawValue: "io")
    }

    /// The kind of error.
    public let code: Code
    /// What went wrong.
    public let message: String
    /// Where: a file and line, a store path, an entity, a predicate token.
    public let location: String?
    /// What to do about it.
    public let hint: String?

    /// An error with its code, message, location and hint.
    public init(_ code: Code, _ message: String, location: String? = nil, hint: String? = nil) {
        self.code = code
        self.message = message
        self.location = location
        self.hint = hint
    }

    /// The same error located somewhere (prefixing an existing location).
    public func located(_ place: String) -> TributaryError {
        TributaryError(code, message, location: location.map { "\(place): \($0)" } ?? place, hint: hint)
    }

    /// One line: `location: message (hint)`.
    public var description: String {
        var line = ""
        if let location { line += location + ": " }
        line += message
        if let hint { line += "; " + hint }
        return line
    }
}
