// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tributary",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Tributary", targets: ["Tributary"]),
        .library(name: "TributaryStreams", targets: ["TributaryStreams"]),
        .executable(name: "tributary", targets: ["TributaryCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "6.0.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
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
        .target(
            name: "Tributary",
            dependencies: [
                "CSQLite",
                "CZstd",
                .product(name: "Yams", package: "Yams"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "TributaryStreams",
            dependencies: ["Tributary"]
        ),
        .executableTarget(
            name: "TributaryCLI",
            dependencies: [
                "Tributary",
                "TributaryStreams",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The examples (examples/*/README.md): executables over the library.
        .target(name: "BlogExampleSupport", dependencies: ["Tributary"], path: "examples/support"),
        .executableTarget(name: "blog-importer", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/blog-importer"),
        .executableTarget(name: "blog-viewer", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/blog-viewer"),
        .executableTarget(name: "audit-tail", dependencies: ["BlogExampleSupport", "Tributary"], path: "examples/audit-tail"),
        .testTarget(
            name: "TributaryTests",
            dependencies: ["Tributary", "CSQLite", .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(
            name: "TributaryStreamsTests",
            dependencies: ["TributaryStreams", "Tributary"]
        ),
        .testTarget(
            name: "TributaryCLITests",
            dependencies: ["TributaryCLI"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
