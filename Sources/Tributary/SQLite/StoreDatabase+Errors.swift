import Foundation

extension StoreDatabase {
    /// Turns SQLite's errors about the store's file (locks, format, damage, space, access,
    /// missing tables, expressions too deep) into one line a user can act on; other errors
    /// are returned as they are.
    static func translate(_ error: SQLiteError, path: String, timeout: TimeInterval) -> Error {
        switch error.primaryCode {
        case .busy, .locked:
            return TributaryError(.storeLocked, "the store stayed locked by another connection for \(timeout) s", location: path,
                                  hint: "wait for the other writer to finish, or raise the busy timeout")
        case .notADatabase:
            return TributaryError(.notAStore, "not a SQLite database", location: path, hint: "give the path of a SQLite database: a store made by tributary init, or a database to adopt")
        case .corrupt:
            return TributaryError(.notAStore, "the store's file is damaged (SQLite: \(error.message))", location: path,
                                  hint: "restore it from a backup, or replay a stream of it into a new store")
        case .full:
            return TributaryError(.io, "the disk is full; nothing was written", location: path, hint: "free space on its file system and run the command again")
        case .cantOpen, .ioError:
            return fileProblem(path) ?? unwritableDirectory(path)
                ?? TributaryError(.io, "cannot read or write the store (SQLite: \(error.message))", location: path,
                                  hint: "check that the file and its directory exist and that this user can write them")
        case .readOnly:
            if let problem = fileProblem(path), problem.code == .readOnly { return problem }
            if access(path, W_OK) == 0, let problem = unwritableDirectory(path) { return problem }
            return TributaryError(.readOnly, "the store's file is read-only", location: path, hint: "check the file's permissions")
        default:
            if error.message.hasPrefix("Expression tree is too large") || error.message.hasPrefix("parser stack overflow") {
                return TributaryError(.invalidPredicate, "the filter is too large for SQLite (\(error.message))", location: path,
                                      hint: "use fewer conditions or less nesting; a list of values reads best as IN {…}")
            }
            if error.message.hasPrefix("no such table") || error.message.hasPrefix("no such column") {
                return TributaryError(.incompatibleModel, "the store's tables do not match its model (\(error.message)): another program dropped or renamed them", location: path,
                                      hint: "for a database made a store with tributary adopt, run tributary adopt again; for a store made by tributary init, restore it from a backup or replay a stream of it into a new store")
            }
            return error
        }
    }

    /// A directory this user cannot write, where SQLite makes a new store and a store's
    /// `-wal` and `-shm` files (so even a writable store cannot be written there); nil when
    /// it can write it.
    static func unwritableDirectory(_ path: String) -> TributaryError? {
        guard !path.hasPrefix("file:") else { return nil }
        let directory = (path as NSString).deletingLastPathComponent
        guard access(directory.isEmpty ? "." : directory, W_OK) != 0, errno == EACCES else { return nil }
        return TributaryError(.readOnly, "this user cannot write the store's directory, where SQLite keeps the store's -wal and -shm files", location: path,
                              hint: "give this user write access to \(directory.isEmpty ? "the current directory" : directory), or copy the store to a writable directory")
    }

    /// Why the file at `path` cannot be opened, when its kind or file system says so: an
    /// empty path, a directory, a missing directory, or a read-only file system.
    static func fileProblem(_ path: String) -> TributaryError? {
        guard !path.hasPrefix("file:") else { return nil }
        if path.isEmpty {
            return TributaryError(.fileNotFound, "the store's path is empty", hint: "give the path of a store file")
        }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            return TributaryError(.notAStore, "this is a directory, not a store file", location: path, hint: "give the path of a store file, such as \((path as NSString).appendingPathComponent("store.sqlite"))")
        }
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty, !FileManager.default.fileExists(atPath: directory) {
            return TributaryError(.fileNotFound, "the store's directory does not exist", location: path, hint: "create \(directory) first")
        }
        var info = statvfs()
        if statvfs(directory.isEmpty ? "." : directory, &info) == 0, info.f_flag & UInt(ST_RDONLY) != 0 {
            return TributaryError(.readOnly, "the store is on a read-only file system", location: path,
                                  hint: "open it with the read-only option to read it, or copy it to a writable file system")
        }
        return nil
    }
}
