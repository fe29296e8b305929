# quiver: `make demo` runs the main job on bundled data, `make test` installs
# what is missing, builds and runs every test (plain, the minimal build without
# integration JSON and the NumPy formats, ASan+UBSan, fuzzers, and the cmocka
# tests on a big-endian CPU under qemu: test-s390x, ~5 min).
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
S390X_BUILD ?= build-s390x
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 30
WERROR     ?= ON

.PHONY: all deps build test test-plain test-minimal test-asan test-fuzz test-s390x demo install bench docs clean

all: build

deps:
	@bash scripts/install-deps.sh

build:
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQV_WERROR=$(WERROR) >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

test: deps test-plain test-minimal test-asan test-fuzz test-s390x

# QV_REQUIRE_PEERS: `deps` installed every peer, so a Python test skipped for
# a missing one (PyTorch, PyData Sparse, the npm package) fails the run.
test-plain: build
	cd $(BUILD) && QV_REQUIRE_PEERS=1 ctest --output-on-failure -j $(JOBS)

# The smallest build: integration JSON and the NumPy formats left out
# (-DQV_WITH_JSON=OFF -DQV_WITH_NUMPY=OFF, so no libdeflate); the tests that
# need them are listed as skipped, every other test runs.
MINIMAL_BUILD ?= build-minimal
test-minimal:
	cmake -S . -B $(MINIMAL_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQV_WERROR=$(WERROR) \
	  -DQV_WITH_JSON=OFF -DQV_WITH_NUMPY=OFF >/dev/null
	cmake --build $(MINIMAL_BUILD) -j $(JOBS)
	cd $(MINIMAL_BUILD) && ctest --output-on-failure -j $(JOBS)

# A sanitizer report exits 86, never 1: a crashing command cannot pass for
# one that rejected its input (exit 1), which is what many tests expect.
SAN_EXIT = exitcode=86
test-asan:
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DQV_SANITIZE=ON -DQV_WERROR=$(WERROR) >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:$(SAN_EXIT) UBSAN_OPTIONS=print_stacktrace=1:$(SAN_EXIT) \
	  ctest --output-on-failure -j $(JOBS)

test-fuzz:
	CC=clang-14 cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQV_FUZZ=ON -DQV_BUILD_TESTS=OFF -DQV_WERROR=$(WERROR) >/dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS)
	bash fuzz/run-all.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# The cmocka tests on a big-endian CPU: cross-built for s390x and run under
# qemu-s390x (cmake/s390x-toolchain.cmake); the dependencies are installed by
# `scripts/install-deps.sh s390x` (root, network to Debian's mirrors).
test-s390x:
	@bash scripts/install-deps.sh s390x
	cmake -S . -B $(S390X_BUILD) -DCMAKE_TOOLCHAIN_FILE=cmake/s390x-toolchain.cmake \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQV_WERROR=$(WERROR) >/dev/null
	cmake --build $(S390X_BUILD) -j $(JOBS)
	cd $(S390X_BUILD) && ctest --output-on-failure -j $(JOBS)

demo: deps build
	bash examples/demo.sh $(BUILD)/quiver

# The API reference from include/quiver/ (Debian's doxygen): $(BUILD)/docs/html.
# docs/Doxyfile makes every warning an error.
docs:
	mkdir -p $(BUILD)/docs
	QV_DOCS_OUT=$(abspath $(BUILD))/docs doxygen docs/Doxyfile
	@echo "API reference: $(BUILD)/docs/html/index.html"

install: build
	cmake --install $(BUILD)

bench: build
	cmake --build $(BUILD) --target benchmarks -j $(JOBS)
	bash bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(MINIMAL_BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(S390X_BUILD)
