# Tributary: two commands to know.
#   make demo   builds and runs `tributary demo`
#   make test   builds and runs the whole test suite
# Each first installs what is missing (scripts/bootstrap).

SWIFT ?= swift
DEMO_DIR ?= $(CURDIR)/demo-output

.PHONY: bootstrap build demo test soak bench docs clean fuzz fuzz-build fuzz-smoke

bootstrap:
	@./scripts/bootstrap

build: bootstrap
	$(SWIFT) build

demo: build
	$(SWIFT) run tributary demo --dir $(DEMO_DIR)

test: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	# The soak with faults, 60 s, alone (make soak runs it for 10 minutes).
	TRIBUTARY_SOAK_SECONDS=60 $(SWIFT) test --skip-build --filter SoakTests
	# Context work from many tasks at once, under the thread sanitizer.
	TRIBUTARY_TSAN=1 $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	TRIBUTARY_TSAN=1 $(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter ContextConcurrencyTests
	# The DocC catalogs build without a warning.
	$(MAKE) docs

# The soak with faults (Tests/TributaryPipelineTests/SoakTests.swift) for SOAK_SECONDS; make test
# runs it for 60 s after the rest of the suite; a plain swift test leaves it out.
SOAK_SECONDS ?= 600

soak: bootstrap
	$(SWIFT) build --build-tests
	TRIBUTARY_SOAK_SECONDS=$(SOAK_SECONDS) $(SWIFT) test --skip-build --filter SoakTests

bench: bootstrap
	# The import benchmarks run the release CLI, built beside the benchmarks.
	$(SWIFT) build -c release --package-path Benchmarks --product tributary
	$(SWIFT) run -c release --package-path Benchmarks TributaryBenchmarks $(BENCH)

# The DocC catalogs of the three libraries; any DocC warning fails. TRIBUTARY_DOCS=1 makes the
# DocC plugin a dependency (Package.swift), so nobody else resolves it.
docs: bootstrap
	TRIBUTARY_DOCS=1 $(SWIFT) package --disable-sandbox generate-documentation --target Tributary --target TributaryStreams --target TributaryPipeline --warnings-as-errors --output-path .build/docs

# libFuzzer harnesses (Fuzz/README.md): their own package, built with the fuzzer and address
# sanitizers in .build-fuzz; `make fuzz` runs each for FUZZ_SECONDS (FUZZ_HARNESSES to choose).
FUZZ_SECONDS ?= 600
FUZZ_HARNESSES ?=

# SwiftPM passes --sanitize flags to swiftc one by one, and swiftc keeps only the last
# (-sanitize=address -sanitize=fuzzer instruments no coverage); the -Xswiftc flag comes after
# them and turns both on, while --sanitize=fuzzer keeps libFuzzer's main at link time.
FUZZ_BUILD = $(SWIFT) build --package-path Fuzz -c release --scratch-path .build-fuzz --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address

fuzz-build: bootstrap
	$(FUZZ_BUILD)

fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz $(FUZZ_HARNESSES)

# Each harness for a few seconds, so that a regression shows.
fuzz-smoke: fuzz-build
	FUZZ_SECONDS=5 ./scripts/fuzz $(FUZZ_HARNESSES)

clean:
	rm -rf .build .build-tsan .build-fuzz Benchmarks/.build Fuzz/.build $(DEMO_DIR)
