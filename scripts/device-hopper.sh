#!/usr/bin/env bash
# On the GPU machine, in one device call of under 8 minutes: builds what the software
# pipeline needs (Release, no libtorch), times the f16 and bf16 GEMM expert scripts,
# mma.sync unpipelined and pipelined and wgmma (sm_90a, last: a faulting kernel spoils the
# process's later cases), side by side with cuBLAS in one process (bench_gpu_expert, which
# checks each against cuBLAS first), then runs the pipeline's and wgmma's tests (pipelined
# and wgmma GEMMs and expert scripts against the interpreter on the device, the cp.async
# and wgmma code and their NVRTC builds). Not the whole suite: that is scripts/device-test.sh.
# Writes $OUT/hopper.md (GPU, clocks, commit, test results, the table), gpu-expert.json,
# machine.txt, configure.log, build.log, tests.log (and one log per test program) and
# bench.log (out/ when OUT is unset).
# Usage (through the device tool, carrying .deb from scripts/fetch-device-debs.sh):
#   DRAGON_COMMIT=<sha> scripts/device-hopper.sh [--cases a,b]
# Environment: BUILD_DIR (default build-hopper), BUILD_TYPE (default Release), JOBS
# (default nproc), DRY_RUN=1 (no GPU: builds and runs the tests, which skip what needs a
# device, and no benchmark; for checking the script on a development machine).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-build-hopper}
jobs=${JOBS:-$(nproc)}
cases=gemm_f16_4096,gemm_f16_pipe3,gemm_f16_pipe4,gemm_f16_pipe3_128x256,gemm_f16_pipe3_k64,gemm_bf16_pipe4,gemm_f16_wgmma_128x256,gemm_f16_wgmma_pipe3_128x256,gemm_f16_wgmma_pipe3_1024,gemm_bf16_wgmma_pipe3_128x256
[ "${1:-}" = "--cases" ] && cases=$2
report="$out/hopper.md"
commit=${DRAGON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$PWD/$build/kernel-cache}
started=$(date +%s)
elapsed() { echo "$(($(date +%s) - started)) s"; }

gpu_state() {
  command -v nvidia-smi >/dev/null || { echo "no nvidia-smi"; return; }
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
    --format=csv,noheader 2>&1 || echo "no nvidia-smi"
}

{
  echo "== machine"
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv 2>&1 || true
  g++ --version | head -n 1
  cmake --version | head -n 1
  nvcc --version 2>/dev/null | tail -n 1
} >"$out/machine.txt" 2>&1

{
  echo "# Software pipelining on the H200: tests, and f16/bf16 GEMM against cuBLAS"
  echo
  echo "- command: DRAGON_COMMIT=$commit scripts/device-hopper.sh $*"
  echo "- commit: $commit (plus the working tree's changes)"
  echo "- GPU at the start (name, driver, SM clock, max SM clock, memory clock, temperature, power): $(gpu_state)"
  echo "- host: $(nproc) cores, $(g++ --version | head -n 1), $(nvcc --version 2>/dev/null | tail -n 1)"
} >"$report"

finish() {  # finish STATUS MESSAGE
  {
    echo
    echo "- GPU at the end: $(gpu_state)"
    echo "- result: $2 (after $(elapsed))"
  } >>"$report"
  cat "$report"
  exit "$1"
}

. scripts/device-env.sh

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DDRAGON_WITH_TORCH=OFF \
  "${device_cmake_args[@]}" >"$out/configure.log" 2>&1
[ -f "$build/build.ninja" ] || finish 1 "configure failed (configure.log; was .deb carried?)"
grep -q "CUDA toolkit: ON" "$out/configure.log" || finish 1 "configure did not find the CUDA toolkit (configure.log)"

tests=(test_gpu_pipeline test_gpu_wgmma test_cuda_async_copy test_cuda_wgmma test_expert_gpu_scripts)
timeout 330 cmake --build "$build" -j "$jobs" --target "${tests[@]}" bench_gpu_expert >"$out/build.log" 2>&1
build_status=$?
echo "- build of ${tests[*]} bench_gpu_expert: status $build_status, done after $(elapsed)" >>"$report"
[ "$build_status" -eq 124 ] && finish 1 "build timed out after 330 s (build.log)"
[ "$build_status" -eq 0 ] || { grep -E "error|FAILED" "$out/build.log" | head -n 20 >>"$report"; finish 1 "build failed (build.log)"; }

# The benchmark first: it is the figure this call is for, and it checks each kernel
# against cuBLAS at full size before timing it. Partial output survives a timeout.
echo >>"$report"
echo "## f16 and bf16 GEMMs (4096^3, one wgmma case at 1024^3): expert scripts against cuBLAS" >>"$report"
echo >>"$report"
bench_status=0
if [ -n "${DRY_RUN:-}" ]; then
  echo "(dry run: no benchmark)" >>"$report"
else
  timeout 240 "$build/bench/bench_gpu_expert" --cases "$cases" --json "$out/gpu-expert.json" >"$out/bench.log" 2>&1
  bench_status=$?
  cat "$out/bench.log" >>"$report"
  echo >>"$report"
  echo "bench_gpu_expert status: $bench_status (1: a case failed, was wrong or impossibly fast)" >>"$report"
fi

# One test program at a time (the device is one); a hung kernel costs its program only.
# The IR verifier runs after every pass, as under ctest.
test_status=0
: >"$out/tests.log"
echo >>"$report"
echo "## Tests" >>"$report"
echo >>"$report"
for t in "${tests[@]}"; do
  binary=$(find "$build/tests" -name "$t" -type f -perm -u+x | head -n 1)
  DRAGON_VERIFY_IR=1 timeout 200 "$binary" >"$out/$t.log" 2>&1
  status=$?
  cat "$out/$t.log" >>"$out/tests.log"
  summary=$(grep -E "^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ tests?\.?" "$out/$t.log" | tr '\n' ' ')
  echo "- $t: status $status; $summary" >>"$report"
  [ "$status" -eq 0 ] || test_status=1
done
grep -E "^\[  FAILED  \]|\[SKIP\]" "$out/tests.log" | sort -u | head -n 20 | sed 's/^/    /' >>"$report"
# On the device a skip means the GPU was not usable: that is a failure here.
if [ -z "${DRY_RUN:-}" ] && grep -q "\[SKIP\]" "$out/tests.log"; then
  echo "- a test skipped: no usable device" >>"$report"
  test_status=1
fi

[ -n "${DRY_RUN:-}" ] && finish "$test_status" "dry run: tests only (DRY_RUN set)"
if [ "$test_status" -ne 0 ] || [ "$bench_status" -ne 0 ]; then
  finish 1 "a test or a benchmark case failed (tests.log, bench.log)"
fi
finish 0 "tests passed and every case ran"
