import Foundation
import Tributary

/// A sink type's settings, read from its entry in a pipeline file and able to make the sink.
/// A sink module declares one and the program registers it in a ``SinkRegistry``: the file's
/// `type:` picks it, its ``keys`` are the keys allowed beside the common ones (`type`, `name`,
/// `on_error`, `dead_letter`, `batch_size`), and ``init(settings:)`` reads them from the
/// neutral ``PipelineSettingsNode``, so its errors name the file, line and key.
///
/// ```swift
/// struct PrintSinkSettings: SinkConfiguration {
///     static let type = "print"
///     static let keys = ["prefix"]
///     var prefix = ""
///     init(settings: PipelineSettingsNode) throws { prefix = try settings["prefix"]?.string() ?? "" }
///     func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink { PrintSink(name: sink.name, prefix: prefix) }
/// }
/// ```
public protocol SinkConfiguration: Sendable {
    /// The `type:` that selects it in a pipeline file.
    static var type: String { get }
    /// The keys it reads, besides the common ones, in the order error messages list them.
    static var keys: [String] { get }
    /// Reads the settings from `settings`, the sink's mapping in the file (the common keys
    /// included); a value that cannot work throws ``PipelineSettingsNode/fail(_:hint:)``'s error.
    init(settings: PipelineSettingsNode) throws
    /// The sink these settings describe, named and governed by `sink` (its name, `on_error`
    /// and batch size); `environment` supplies the secrets named by the settings.
    func makeSink(_ sink: PipelineFile.SinkSettings, environment: [String: String]) -> any Sink
}
