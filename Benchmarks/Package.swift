// swift-tools-version:6.0
// Benchmarks for Tributary, in their own package so that comparison-only
// dependencies (GRDB) stay out of the main build. Run with `make bench`.
import PackageDescription

let package = Package(
    name: "TributaryBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tributary", path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
    ],
    targets: [
        .systemLibrary(name: "CSQLiteBench", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "TributaryBenchmarks",
            dependencies: [
                "CSQLiteBench",
                .product(name: "Tributary", package: "Tributary"),
                .product(name: "TributaryStreams", package: "Tributary"),
                .product(name: "TributaryPipeline", package: "Tributary"),
                .product(name: "TributaryHTTPSink", package: "Tributary"),
                .product(name: "TributaryPostgresSink", package: "Tributary"),
                .product(name: "TributaryNATSSink", package: "Tributary"),
                .product(name: "TributaryRedisSink", package: "Tributary"),
                .product(name: "TributaryTestSupport", package: "Tributary"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
