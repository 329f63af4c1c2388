#!/usr/bin/env bash
# On the GPU machine (Ubuntu 24.04, g++ 13, CUDA 13; nothing can be installed there:
# packages the image lacks are carried as .deb files in .deb/, as for device-build.sh):
# builds the targets the GPU tests need from this tree, runs the tests labelled gpu (the
# generated kernels of every op kind against the interpreter on the device) and the
# runtime's tests (NVRTC, cache, driver), and writes a summary.
# Writes $OUT/device-test-summary.md, $OUT/gpu-tests.log, $OUT/runtime-tests.log,
# $OUT/build.log, $OUT/configure.log, $OUT/machine.txt (out/ when OUT is unset).
# Usage (through the device tool): scripts/device-test.sh [ctest -R regex]
# Environment: BUILD_DIR (default build-device), JOBS (default nproc), DRAGON_COMMIT (the
# commit the tree was taken from, for the summary), GPU_TEST_TIMEOUT (seconds per test).
# Exit status: 0 only when the build succeeded and every gpu test ran and passed; a gpu
# test that skipped (no device visible) counts as a failure here.
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-build-device}
jobs=${JOBS:-$(nproc)}
test_filter=${1:-}
summary="$out/device-test-summary.md"
# Compiled kernels are cached inside the build tree, never in the home directory.
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$PWD/$build/kernel-cache}
export DRAGON_VERIFY_IR=1

{
  echo "== machine"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv 2>&1 || true
  g++ --version | head -n 1
  cmake --version | head -n 1
  nvcc --version 2>/dev/null | tail -n 1
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

. scripts/device-env.sh

finish() {  # finish STATUS MESSAGE: writes the summary and exits
  {
    echo "# Device test summary"
    echo
    echo "- result: $2"
    # The device copy's git metadata may lag its files: the caller passes DRAGON_COMMIT.
    echo "- commit: ${DRAGON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)} (plus the working tree's changes)"
    echo "- machine: $(grep -v '^==' "$out/machine.txt" | head -n 3 | tr '\n' ';')"
    if [ -f "$out/gpu-tests.log" ]; then
      echo "- gpu tests: $(grep -E 'tests passed|tests failed' "$out/gpu-tests.log" | tail -n 1)"
      echo
      echo '```'
      grep -E '(\*\*\*Failed|\*\*\*Skipped|Not Run|Passed|random GPU schedules)' "$out/gpu-tests.log" | head -n 40
      echo '```'
    fi
    if [ -f "$out/runtime-tests.log" ]; then
      echo "- runtime tests: $(grep -E '^\[  (PASSED|FAILED)' "$out/runtime-tests.log" | tr '\n' ' ')"
    fi
  } >"$summary"
  cat "$summary"
  exit "$1"
}

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRAGON_WITH_TORCH=OFF \
  -DDRAGON_BUILD_BENCHMARKS=OFF "${device_cmake_args[@]}" \
  >"$out/configure.log" 2>&1
grep -E "Little Dragon" "$out/configure.log"
[ -f "$build/build.ninja" ] || finish 1 "configure failed (configure.log)"
grep -q "CUDA toolkit: ON" "$out/configure.log" || finish 1 "configure did not find the CUDA toolkit (configure.log)"

cmake --build "$build" -j "$jobs" --target test_gpu_codegen test_gpu_design_space test_gpu_timer test_gpu_verify test_harness_isolation_gpu test_harness_reward_gpu dragon dragon-kernel-runner test_runtime >"$out/build.log" 2>&1
build_status=$?
grep -E "error|FAILED" "$out/build.log" | head -n 40
[ "$build_status" -eq 0 ] || finish 1 "build failed (build.log)"

# The device is one: gpu tests run one at a time.
# A kernel that hangs (a barrier some threads never reach) must cost one test, not the
# whole call: each test gets GPU_TEST_TIMEOUT seconds (default 240).
ctest_args=(--test-dir "$build" -L gpu --output-on-failure -j 1 --no-tests=error --timeout "${GPU_TEST_TIMEOUT:-240}")
[ -n "$test_filter" ] && ctest_args+=(-R "$test_filter")
ctest "${ctest_args[@]}" >"$out/gpu-tests.log" 2>&1
gpu_status=$?
"$build/tests/unit/runtime/test_runtime" >"$out/runtime-tests.log" 2>&1
runtime_status=$?

if grep -qE "\*\*\*Skipped|\[  SKIPPED \]" "$out/gpu-tests.log"; then
  finish 1 "gpu tests skipped: no usable device (see gpu-tests.log)"
fi
[ "$gpu_status" -eq 0 ] || finish 1 "gpu tests failed (gpu-tests.log)"
[ "$runtime_status" -eq 0 ] || finish 1 "runtime tests failed (runtime-tests.log)"
finish 0 "all gpu and runtime tests passed"
