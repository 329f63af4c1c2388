# The two README commands: `make demo` and `make test`. Both install what is missing
# (scripts/setup.sh) and configure with CMake + Ninja into build/; demo builds only the
# dragon CLI that scripts/demo.sh runs, test builds everything (tests, benchmarks).
BUILD_DIR ?= build
CMAKE_FLAGS ?=
# Fresh trees compile in batches (unity build: bench/results/2026-12-04-ci-build-time.md);
# UNITY=OFF for a tree you edit and rebuild file by file.
UNITY ?= ON
JOBS ?= $(shell nproc)
DEMO_SPEC ?= matmul:m=128,n=128,k=128
# What scripts/demo.sh runs (the dragon target brings dragon-kernel-runner with it, and
# dragon-model, which `dragon optimize` asks for scripts, where libtorch is found).
DEMO_TARGETS ?= dragon
# Seconds per libFuzzer target in `make test`: a smoke run (every seed, then mutations of
# them); `make fuzz` runs them longer.
TEST_FUZZ_SECONDS ?= 20

.PHONY: all setup configure build demo test fuzz clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja -DDRAGON_UNITY_BUILD=$(UNITY) $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: setup
	@$(MAKE) --no-print-directory configure
	cmake --build $(BUILD_DIR) -j $(JOBS) --target $(DEMO_TARGETS)
	@scripts/demo.sh $(BUILD_DIR) "$(DEMO_SPEC)"

test: setup
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j $(JOBS)
	@FUZZ_SECONDS=$${FUZZ_SECONDS:-$(TEST_FUZZ_SECONDS)} scripts/fuzz.sh

# The libFuzzer targets alone (clang, build-fuzz/), FUZZ_SECONDS each (default 60).
fuzz: setup
	@scripts/fuzz.sh

clean:
	rm -rf $(BUILD_DIR)
