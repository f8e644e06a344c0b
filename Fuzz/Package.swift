// swift-tools-version:6.0
// libFuzzer harnesses for Tributary's parsers and readers, in their own package so that a
// normal `swift build` of the root never builds them. Build and run with `make fuzz`
// (or `make fuzz-smoke` for a few seconds each); see README.md.
import PackageDescription

/// One harness: a single file exporting `LLVMFuzzerTestOneInput` that calls its `FuzzTarget`
/// (Sources/TributaryFuzzTargets in the root package); libFuzzer supplies `main`.
func harness(_ name: String) -> Target {
    .executableTarget(
        name: name,
        dependencies: [.product(name: "TributaryFuzzTargets", package: "Tributary")],
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    )
}

let package = Package(
    name: "TributaryFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Tributary", path: ".."),
    ],
    targets: [
        harness("fuzz-predicate"),
        harness("fuzz-model-yaml"),
        harness("fuzz-ndjson"),
        harness("fuzz-parsers"),
        harness("fuzz-history-payload"),
        harness("fuzz-segment"),
        harness("fuzz-manifest"),
        harness("fuzz-pipeline-file"),
    ],
    swiftLanguageModes: [.v6]
)
