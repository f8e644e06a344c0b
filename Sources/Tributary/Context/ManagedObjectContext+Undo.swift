extension ManagedObjectContext {
    /// Core Data's undo manager, for ports: always nil. Tributary records no undo (and Linux's
    /// Foundation has no `UndoManager`), so the type is `Never?`: Core Data's usual
    /// `context.undoManager = nil` compiles and does what it does there (no undo cost), while
    /// code that needs a real undo manager fails to compile rather than silently not undoing.
    /// To drop unsaved changes use ``rollback()``; for edits that may be thrown away, a child context.
    ///
    /// ```swift
    /// context.undoManager = nil       // Core Data's idiom
    /// context.rollback()              // what undoing everything unsaved does
    /// ```
    public var undoManager: Never? {
        get { nil }
        // swiftlint:disable:next unused_setter_value
        set {}
    }
}
