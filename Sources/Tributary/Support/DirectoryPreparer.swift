import Foundation

/// Creates the directories commands write into, with one-line errors instead of
/// Foundation's: a path that is a regular file, or a directory that cannot be made.
package enum DirectoryPreparer {
    /// Creates `directory` (and its parents) unless it exists; `what` names it in errors
    /// ("stream directory", "demo directory").
    package static func create(_ directory: URL, what: String) throws {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw TributaryError(.invalidInput, "this is a file, not a \(what)", location: directory.path, hint: "give the path of a directory (a new one is created)")
            }
            return
        }
        do {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw TributaryError(.io, "cannot create the \(what) (\(reason))", location: directory.path, hint: "check that its parent directories are directories this user can write")
        }
    }
}
