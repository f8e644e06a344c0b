import Testing
@testable import Tributary

/// SQLite's process-wide settings Tributary makes before its first connection.
@Suite struct ConnectionSettingsTests {
    /// Memory statistics are off (every allocation SQLite made took a process-wide mutex,
    /// an atomic operation once the process has a second thread: 3–4 % of a recording insert).
    /// `SQLITE_OK` says the setting was made before SQLite was initialized.
    @Test func memoryStatisticsAreTurnedOffBeforeTheFirstConnection() throws {
        _ = try Connection(path: ":memory:", options: ConnectionOptions())
        #expect(Connection.processSettings == 0)
    }
}
