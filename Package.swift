// swift-tools-version:6.1
import PackageDescription

// Package traits keep the server clients out of a library user's graph. Every trait is on by
// default (this repository builds everything); a package that needs only the store writes
//     .package(url: "…/tributary", from: "…", traits: [])
// and resolves and builds Yams, swift-log, swift-metrics (its core) and swift-crypto alone: SwiftPM
// fetches no dependency that only disabled traits use. `traits: ["Pipelines"]` adds the pipeline
// runtime (and the NATS and Redis sinks, whose clients are system libraries); "HTTPSink" and
// "PostgresSink" add those clients.

let package = Package(
    name: "Tributary",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tributary", targets: ["Tributary"]),
        .library(name: "TributaryStreams", targets: ["TributaryStreams"]),
        .library(name: "TributaryPipeline", targets: ["TributaryPipeline"]),
        // One library per sink with a server client; a program registers those it links.
        .library(name: "TributaryHTTPSink", targets: ["TributaryHTTPSink"]),
        .library(name: "TributaryPostgresSink", targets: ["TributaryPostgresSink"]),
        .library(name: "TributaryNATSSink", targets: ["TributaryNATSSink"]),
        .library(name: "TributaryRedisSink", targets: ["TributaryRedisSink"]),
        // Real servers on loopback for tests and benchmarks (nats-server, redis-server, postgres).
        .library(name: "TributaryTestSupport", targets: ["TributaryTestSupport"]),
        // The fuzz harnesses' bodies: the harnesses in Fuzz/ and the seed-corpus tests call them.
        .library(name: "TributaryFuzzTargets", targets: ["TributaryFuzzTargets"]),
        .executable(name: "tributary", targets: ["TributaryCLI"]),
    ],
    traits: [
        .trait(name: "Pipelines", description: "TributaryPipeline and the NATS and Redis sinks: swift-metrics, swift-service-lifecycle."),
        .trait(name: "HTTPSink", description: "TributaryHTTPSink: async-http-client (SwiftNIO).", enabledTraits: ["Pipelines"]),
        .trait(name: "PostgresSink", description: "TributaryPostgresSink: postgres-nio (SwiftNIO).", enabledTraits: ["Pipelines"]),
        .trait(name: "Command", description: "The tributary executable and its tests: every sink, swift-argument-parser, swift-prometheus.",
               enabledTraits: ["HTTPSink", "PostgresSink"]),
        .default(enabledTraits: ["Command"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),  // LogHandler.log(event:), which ProgressClearingLogHandler implements
        .package(url: "https://github.com/apple/swift-metrics", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.21.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
        // SHA-256 for the history chain and segment checksums (BoringSSL's, with SHA-NI where the CPU has it).
        .package(url: "https://github.com/apple/swift-crypto", "3.9.0"..<"5.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"])]
        ),
        .systemLibrary(
            name: "CZstd",
            pkgConfig: "libzstd",
            providers: [.apt(["libzstd-dev"])]
        ),
        // The server sinks' C clients: nats.c (JetStream) and hiredis.
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        .systemLibrary(
            name: "CHiredis",
            // No pkgConfig: hiredis.pc adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a
            // warning; the header needs no flags and the module map links the library.
            providers: [.apt(["libhiredis-dev"])]
        ),
        .target(
            name: "Tributary",
            dependencies: [
                "CSQLite",
                "CZstd",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "TributaryStreams",
            dependencies: ["Tributary"]
        ),
        // The pipeline runtime, the sink registry and the sinks without a server client.
        .target(
            name: "TributaryPipeline",
            dependencies: [
                "Tributary", "TributaryStreams",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Pipelines"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Pipelines"])),
            ]
        ),
        .target(
            name: "TributaryHTTPSink",
            dependencies: [
                "Tributary", "TributaryStreams", "TributaryPipeline",
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["HTTPSink"])),
            ]
        ),
        .target(
            name: "TributaryPostgresSink",
            dependencies: [
                "Tributary", "TributaryStreams", "TributaryPipeline",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["PostgresSink"])),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(name: "TributaryNATSSink", dependencies: ["Tributary", "TributaryStreams", "TributaryPipeline", "CNats"]),
        .target(name: "TributaryRedisSink", dependencies: ["Tributary", "TributaryStreams", "TributaryPipeline", "CHiredis"]),
        .target(name: "TributaryTestSupport"),
        .target(
            name: "TributaryFuzzTargets",
            dependencies: ["Tributary", "TributaryStreams", "TributaryPipeline", "TributaryHTTPSink", "TributaryPostgresSink", "TributaryNATSSink", "TributaryRedisSink"]
        ),
        .executableTarget(
            name: "TributaryCLI",
            dependencies: [
                "Tributary",
                "TributaryStreams",
                "TributaryPipeline",
                "TributaryHTTPSink", "TributaryPostgresSink", "TributaryNATSSink", "TributaryRedisSink",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Command"])),
                .product(name: "Logging", package: "swift-log"),
                // The Prometheus exporter and its server: the program picks the metrics backend.
                .product(name: "CoreMetrics", package: "swift-metrics", condition: .when(traits: ["Command"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Command"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Command"])),
            ]
        ),
        // The examples (examples/*/README.md): executables over the library.
        .target(name: "BlogExampleSupport", dependencies: ["Tributary"], path: "examples/support"),
        .executableTarget(name: "blog-importer", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/blog-importer", exclude: ["README.md"]),
        .executableTarget(name: "blog-viewer", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/blog-viewer", exclude: ["README.md"]),
        .executableTarget(name: "audit-tail", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/audit-tail", exclude: ["README.md"]),
        .executableTarget(name: "search-indexer", dependencies: ["BlogExampleSupport", "Tributary", "TributaryPipeline"], path: "examples/search-indexer", exclude: ["README.md"]),
        // The soak test's context writer (Tests/TributaryPipelineTests/SoakTests.swift): a process it can SIGKILL.
        .executableTarget(name: "soak-writer", dependencies: ["Tributary"], path: "Tests/SoakWriter"),
        .testTarget(
            name: "TributaryTests",
            dependencies: ["Tributary", "TributaryTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "TributaryStreamsTests",
            dependencies: ["TributaryStreams", "Tributary", "TributaryTestSupport"]
        ),
        .testTarget(
            name: "TributaryPipelineTests",
            dependencies: [
                "TributaryPipeline", "TributaryStreams", "Tributary", "TributaryCLI", "TributaryTestSupport",
                "TributaryHTTPSink", "TributaryPostgresSink", "TributaryNATSSink", "TributaryRedisSink",
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Command"])),
            ]
        ),
        .testTarget(
            name: "TributaryFuzzTargetsTests",
            dependencies: ["TributaryFuzzTargets"]
        ),
        .testTarget(
            name: "TributaryCLITests",
            dependencies: ["TributaryCLI", "TributaryTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// `make docs` sets TRIBUTARY_DOCS=1: only then is the DocC plugin a dependency (as GRDB gates
// it), so nobody else resolves it.
if Context.environment["TRIBUTARY_DOCS"] == "1" {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.4.0"))
}

// `make test` sets TRIBUTARY_TSAN=1 for its thread-sanitizer run (ContextConcurrencyTests, in
// TributaryTests): only the store, its tests and what they use are built, not the servers'
// clients and every other test target (six minutes of a fresh CI run, against two).
if Context.environment["TRIBUTARY_TSAN"] == "1" {
    let kept: Set<String> = ["CSQLite", "CZstd", "Tributary", "TributaryTestSupport", "TributaryTests"]
    package.targets.removeAll { !kept.contains($0.name) }
    package.products = [.library(name: "Tributary", targets: ["Tributary"])]
    package.dependencies.removeAll { dependency in
        guard case .sourceControl(_, let location, _) = dependency.kind else { return false }
        return !["Yams", "swift-log", "swift-metrics", "swift-crypto"].contains { location.hasSuffix("/\($0)") }
    }
}
