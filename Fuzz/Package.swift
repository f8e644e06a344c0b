// swift-tools-version:6.0
// libFuzzer harnesses for Tributary's parsers and readers, in their own package so that a
// normal `swift build` of the root never builds them. Build and run with `make fuzz`
// (or `make fuzz-smoke` for a few seconds each); see README.md.
import PackageDescription

/// One harness: a single file exporting `LLVMFuzzerTestOneInput`; libFuzzer supplies `main`.
func harness(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name,
        dependencies: ["FuzzSupport", .product(name: "Tributary", package: "Tributary")] + dependencies,
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let streams: Target.Dependency = .product(name: "TributaryStreams", package: "Tributary")

let package = Package(
    name: "TributaryFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tributary", path: ".."),
    ],
    targets: [
        .target(name: "FuzzSupport", dependencies: [.product(name: "Tributary", package: "Tributary")]),
        harness("fuzz-predicate", []),
        harness("fuzz-model-yaml", []),
        harness("fuzz-ndjson", []),
        harness("fuzz-parsers", [streams]),
        harness("fuzz-history-payload", []),
        harness("fuzz-segment", [streams]),
        harness("fuzz-manifest", [streams]),
        harness("fuzz-pipeline-file", [streams, .product(name: "TributaryPipeline", package: "Tributary")]),
    ],
    swiftLanguageModes: [.v6]
)
