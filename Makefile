# The two README commands: `make demo` and `make test`. Both install what is missing
# (scripts/setup.sh), configure with CMake + Ninja into build/, and build.
BUILD_DIR ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc)
DEMO_SPEC ?= matmul:m=128,n=128,k=128

.PHONY: all setup configure build demo test fuzz clean

all: build

setup:
	@scripts/setup.sh

$(BUILD_DIR)/build.ninja:
	cmake -S . -B $(BUILD_DIR) -G Ninja $(CMAKE_FLAGS)

configure: $(BUILD_DIR)/build.ninja

build: configure
	cmake --build $(BUILD_DIR) -j $(JOBS)

demo: setup
	@$(MAKE) --no-print-directory build
	@scripts/demo.sh $(BUILD_DIR) "$(DEMO_SPEC)"

test: setup
	@$(MAKE) --no-print-directory build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j $(JOBS)
	@scripts/fuzz.sh

# The libFuzzer targets alone (clang, build-fuzz/), FUZZ_SECONDS each (default 60).
fuzz: setup
	@scripts/fuzz.sh

clean:
	rm -rf $(BUILD_DIR)
