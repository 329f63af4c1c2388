#!/usr/bin/env bash
# Builds and tests this tree on the GPU machine (Ubuntu 24.04, g++ 13, CUDA 13, PyTorch's
# libtorch). Nothing can be installed there: .deb files carried in .deb/ are unpacked into
# a private prefix. Logs go to $OUT (or out/ when run elsewhere).
# Usage (through the device tool): scripts/device-build.sh [ctest -L label filter]
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
build=build-device
label_filter=${1:-}

{
  echo "== machine"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv 2>&1 || true
  g++ --version | head -n 1
  cmake --version | head -n 1
  nvcc --version 2>/dev/null | tail -n 1
} | tee "$out/machine.txt"

. scripts/device-env.sh
echo "libtorch cmake prefix: ${device_torch_prefix:-none}"

set -o pipefail
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${device_cmake_args_torch[@]}" \
  2>&1 | tee "$out/configure.log" | grep -E "Little Dragon|Error|error" || true
[ -f "$build/build.ninja" ] || { echo "configure failed (see configure.log)"; exit 1; }
cmake --build "$build" -j "$(nproc)" 2>&1 | tee "$out/build.log" | grep -E "error|FAILED" | head -n 40
[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "build failed (see build.log)"; exit 1; }

ctest_args=(--test-dir "$build" --output-on-failure -j "$(nproc)" --no-tests=error)
[ -n "$label_filter" ] && ctest_args+=(-L "$label_filter")
ctest "${ctest_args[@]}" > "$out/ctest.log" 2>&1
status=$?
grep -E "tests passed|tests failed|Failed|\*\*\*" "$out/ctest.log" | tail -n 30
exit $status
