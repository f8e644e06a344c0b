import TributaryHTTPSink
import TributaryNATSSink
import TributaryPipeline
import TributaryPostgresSink
import TributaryRedisSink

extension SinkRegistry {
    /// Every sink type the `tributary` command knows: the standard ones and one line per sink module.
    static let tributary = SinkRegistry.standard.registering(
        HTTPSinkSettings.self,
        PostgresSinkSettings.self,
        NATSSinkSettings.self,
        RedisSinkSettings.self
    )
}
