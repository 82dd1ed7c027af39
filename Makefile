# Coffer: `make test` runs the whole suite, `make demo` the end-to-end tour.
PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
BUILD_LOG := .build/build.log

.PHONY: all bootstrap build release test lint demo clean fuzz bench soak

all: build

bootstrap:
	@scripts/bootstrap.sh

build: bootstrap
	$(SWIFT) build

# The release binary links the Swift runtime statically: it starts in a third of the time.
release: bootstrap
	$(SWIFT) build -c release --static-swift-stdlib --product coffer

# Builds everything (failing on any compiler warning), checks formatting, then runs every test.
test: bootstrap
	@mkdir -p .build
	$(SWIFT) build --build-tests 2>&1 | tee $(BUILD_LOG)
	@if grep -E "(warning|error):" $(BUILD_LOG) | grep -v "^warning: 'main': Source files" >/dev/null; then \
		echo "make test: the build printed warnings or errors" >&2; exit 1; fi
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Examples
	$(SWIFT) test

lint:
	$(SWIFT) format lint --strict --recursive Package.swift Sources Tests Examples

demo: bootstrap
	$(SWIFT) build
	scripts/demo.sh "$$($(SWIFT) build --show-bin-path)"

# coffer against pass, side by side (hyperfine); writes bench/results.json. See bench/README.md.
bench: bootstrap
	scripts/bench.sh

# libFuzzer targets with AddressSanitizer, FUZZ_SECONDS each (default 30).
fuzz: bootstrap
	scripts/fuzz.sh

# Soak tests (scripts/soak.sh lists them), each for SECONDS (default 600) with new seeds; reports in
# .build/soak/. `make soak SECONDS=1800 SOAKS=stateful-fuzzer` runs one of them.
SECONDS ?= 600
SOAKS ?=
soak: bootstrap
	SOAK_SECONDS=$(SECONDS) scripts/soak.sh $(SOAKS)

clean:
	rm -rf .build

# install, uninstall, install-pass-shim, docs
include mk/install.mk
