#!/usr/bin/env bash
# On the GPU machine (Ubuntu 24.04, g++ 13, CUDA 13, PyTorch's libtorch): builds the GPU
# benchmarks from this tree with cuBLAS and libtorch, and runs the expert scripts of
# data/scripts/expert/gpu/ against their vendor baselines in one process.
# Also measures NVRTC's build throughput on this machine's cores (NVRTC needs no GPU; the
# development VM has 2). Writes $OUT/gpu-expert.md (the table), $OUT/gpu-expert.json,
# $OUT/nvrtc-throughput.txt, $OUT/machine.txt, $OUT/bench-build.log (out/ when OUT is unset).
# Usage (through the device tool): DRAGON_COMMIT=<sha> scripts/device-bench.sh [--cases a,b]
# Environment: BUILD_DIR (default build-device), JOBS (default nproc), NVRTC_THROUGHPUT (0:
# skip the NVRTC throughput run).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-build-device}
jobs=${JOBS:-$(nproc)}
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$PWD/$build/kernel-cache}

{
  echo "== machine"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1 || true
  g++ --version | head -n 1
  nvcc --version 2>/dev/null | tail -n 1
  python3 -c 'import torch; print("torch", torch.__version__)' 2>&1
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

. scripts/device-env.sh
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRAGON_WITH_TORCH=ON \
  "${device_cmake_args_torch[@]}" >"$out/bench-build.log" 2>&1 || { echo "configure failed"; exit 1; }
grep -E "Little Dragon" "$out/bench-build.log"
cmake --build "$build" -j "$jobs" --target bench_gpu_expert dragon_eager_torch bench_nvrtc_throughput >>"$out/bench-build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/bench-build.log" | head -n 40; echo "build failed (bench-build.log)"; exit 1; }

{
  echo "# Expert GPU scripts against vendor baselines"
  echo
  echo "- command: DRAGON_COMMIT=${DRAGON_COMMIT:-unknown} scripts/device-bench.sh $*"
  echo "- commit: ${DRAGON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  echo "- machine: $(grep -v '^==' "$out/machine.txt" | tr '\n' ';')"
  echo
  "$build/bench/bench_gpu_expert" --json "$out/gpu-expert.json" "$@" 2>&1
  status=$?
  echo
  echo "bench_gpu_expert exit status: $status (1: a case failed, was wrong or impossibly fast)"
} | tee "$out/gpu-expert.md"

[ "${NVRTC_THROUGHPUT:-1}" = 0 ] && exit 0
{
  echo "# NVRTC build throughput on the GPU machine's CPUs ($(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
  echo "command: $build/bench/bench_nvrtc_throughput 3"
  "$build/bench/bench_nvrtc_throughput" 3 2>&1
} >"$out/nvrtc-throughput.txt"
tail -n 20 "$out/nvrtc-throughput.txt"
