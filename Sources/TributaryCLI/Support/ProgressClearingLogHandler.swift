import Logging

/// The CLI's log handler: swift-log's standard-error stream, after clearing a progress line
/// that is on the terminal, so a retry logged during `run --once` starts a line of its own.
struct ProgressClearingLogHandler: LogHandler {
    private var stream: StreamLogHandler

    init(label: String) {
        stream = StreamLogHandler.standardError(label: label)
    }

    func log(event: LogEvent) {
        Console.clearProgress()
        stream.log(event: event)
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { stream[metadataKey: key] }
        set { stream[metadataKey: key] = newValue }
    }

    var metadata: Logger.Metadata {
        get { stream.metadata }
        set { stream.metadata = newValue }
    }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }
}
