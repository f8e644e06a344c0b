# Tributary: two commands to know.
#   make demo   builds and runs `tributary demo`
#   make test   builds and runs the whole test suite
# Each first installs what is missing (scripts/bootstrap).

SWIFT ?= swift
DEMO_DIR ?= $(CURDIR)/demo-output

.PHONY: bootstrap build demo test bench docs clean

bootstrap:
	@./scripts/bootstrap

build: bootstrap
	$(SWIFT) build

demo: build
	$(SWIFT) run tributary demo --dir $(DEMO_DIR)

test: bootstrap
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build
	# Context work from many tasks at once, under the thread sanitizer.
	$(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan
	$(SWIFT) test --skip-build --sanitize=thread --scratch-path .build-tsan --filter ContextConcurrencyTests
	# The DocC catalogs build without a warning.
	$(MAKE) docs

bench: bootstrap
	# The import benchmarks run the release CLI, built beside the benchmarks.
	$(SWIFT) build -c release --package-path Benchmarks --product tributary
	$(SWIFT) run -c release --package-path Benchmarks TributaryBenchmarks $(BENCH)

# The DocC catalogs of the three libraries; any DocC warning fails.
docs: bootstrap
	$(SWIFT) package --disable-sandbox generate-documentation --target Tributary --target TributaryStreams --target TributaryPipeline --warnings-as-errors --output-path .build/docs

clean:
	rm -rf .build .build-tsan Benchmarks/.build $(DEMO_DIR)
