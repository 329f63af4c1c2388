#!/usr/bin/env bash
# On the GPU machine (Ubuntu 24.04, g++ 13, CUDA 13; nothing can be installed there:
# packages the image lacks are carried as .deb files in .deb/, as for device-build.sh):
# one call, within a deadline, that builds only what the harness's device checks need and
# runs them (issue 23): the CUDA exploit suite through dragon verify [--time] (siblings in
# the timed rotation, red zones with guards and page ends through the driver's virtual
# memory, NaN carried from the pre-fill, honest kernels still passing), isolated runs and
# timings, the reward on the GPU with its cost per candidate, and beside them the CPU
# exploit suite and isolation tests (whether this machine gives runners namespaces).
# Not the rest of the GPU tests (device-test.sh).
#
# Order: the timing-sensitive GPU tests (isolated timing, the reward's latencies and cost,
# the exploit cases judged by --time) alone on the GPU, one at a time, with the CPU tests
# on a few cores beside them; a few kernel files through dragon verify, for the summary;
# then the other GPU tests (correctness only) several at once.
# Past the deadline nothing new starts and what runs is stopped; the summary says what
# did not run. The build directory stays while the machine is warm, so a call that ran out
# of time in the build goes on where it stopped when made again.
#
# Writes $OUT/harness-summary.md (result, commit, GPU, clocks before and after, every test
# with its result and time, dragon verify's verdicts on a few kernel files, the figures),
# $OUT/harness-direct.log, $OUT/harness-gpu-serial.log,
# $OUT/harness-gpu-parallel.log, $OUT/harness-cpu-tests.log, $OUT/build.log,
# $OUT/configure.log, $OUT/machine.txt (out/ when OUT is unset).
# Usage (through the device tool, carrying .deb from scripts/fetch-device-debs.sh):
#   DRAGON_COMMIT=<commit> scripts/device-harness.sh
# Environment: DEADLINE (seconds for the whole call, default 340), BUILD_DIR (default
# build-device), JOBS (default nproc), DRAGON_COMMIT (the commit the tree was taken from:
# the device copy has no git metadata), GPU_TEST_TIMEOUT (seconds per test, default 120),
# CONFIGURE (1, default: configure BUILD_DIR for the device; 0: use it as it is, for a dry
# run on a development machine, where the GPU tests skip).
# Exit status: 0 only when the build succeeded and every test ran and passed; a GPU test
# that skipped (no device visible) counts as a failure here.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
deadline=${DEADLINE:-340}
left() { echo $((deadline - ($(date +%s) - start))); }
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=${BUILD_DIR:-build-device}
jobs=${JOBS:-$(nproc)}
test_timeout=${GPU_TEST_TIMEOUT:-120}
summary="$out/harness-summary.md"
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$PWD/$build/kernel-cache}
commit=${DRAGON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
notes=()
note() { notes+=("$1"); echo "device-harness: $1"; }

# name, driver, memory, SM clock (current / max), memory clock, temperature: one line.
gpu_state() {
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu \
    --format=csv,noheader 2>/dev/null | head -n 1 |
    awk -F', ' 'NF >= 7 { printf "%s, driver %s, %s; SM clock %s of %s max, memory clock %s, %s C", $1, $2, $3, $4, $5, $6, $7 }'
}
gpu_before=$(gpu_state)
{
  echo "== machine"
  uname -a
  echo "GPU: ${gpu_before:-none visible}"
  g++ --version | head -n 1
  nvcc --version 2>/dev/null | tail -n 1
  echo "unprivileged user namespaces: $(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo n/a), max $(cat /proc/sys/user/max_user_namespaces 2>/dev/null || echo n/a)"
} >"$out/machine.txt" 2>&1
cat "$out/machine.txt"

# The tests of one log, as markdown table rows: name, result, seconds.
test_rows() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ +Test +#[0-9]+: +([^ ]+) .*[. ]\**(Passed|Failed|Skipped|Not Run|Timeout|Exception|SEGFAULT|Subprocess aborted|Child aborted)[^0-9]*([0-9.]+) sec.*/| \1 | \2 | \3 |/p' "$1"
}

finish() {  # finish STATUS MESSAGE: writes the summary and exits
  local gpu_after
  gpu_after=$(gpu_state)
  {
    echo "# Harness checks on the device"
    echo
    echo "| | |"
    echo "|---|---|"
    echo "| result | $2 |"
    echo "| commit | $commit (plus the working tree's changes) |"
    echo "| GPU before the tests | ${gpu_before:-none visible} |"
    echo "| GPU after the tests | ${gpu_after:-none visible} |"
    echo "| machine | $(uname -r), $(nproc) cores, $(g++ --version | head -n 1) |"
    echo "| runner isolation | $(grep -h '^isolation: ' "$out/harness-direct.log" 2>/dev/null | sort -u | sed 's/^isolation: //' | tr '\n' ' ') |"
    echo "| call | $(( $(date +%s) - start )) s of a $deadline s deadline${build_seconds:+; build $build_seconds s} |"
    for note_text in "${notes[@]}"; do echo "| note | $note_text |"; done
    for log in harness-gpu-serial harness-gpu-parallel harness-cpu-tests; do
      [ -f "$out/$log.log" ] || continue
      echo
      echo "## $log: $(grep -E 'tests passed|tests failed' "$out/$log.log" | tail -n 1)"
      echo
      echo "| test | result | seconds |"
      echo "|---|---|---|"
      test_rows "$out/$log.log"
    done
    if [ -f "$out/harness-direct.log" ]; then
      echo
      echo "## dragon verify on kernel files (harness-direct.log)"
      echo
      echo '```'
      grep -E '^(== |PASS |FAIL |error: |timing: |  GPU: |  physics: |exit status|rejected|not timed)' "$out/harness-direct.log"
      echo '```'
    fi
    echo
    echo "## Figures"
    echo
    echo '```'
    grep -hE "reward cost|own CUDA kernel|CUDA kernel file:|timing: (OK|REJECTED)|^[0-9]+: (OK|REJECTED) " \
      "$out"/harness-gpu-*.log 2>/dev/null | sed 's/^[0-9]*: //' | sort -u | head -n 60
    echo '```'
  } >"$summary"
  cat "$summary"
  exit "$1"
}

. scripts/device-env.sh

if [ "${CONFIGURE:-1}" != 0 ]; then
  timeout "$(left)" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRAGON_WITH_TORCH=OFF \
    -DDRAGON_BUILD_BENCHMARKS=OFF "${device_cmake_args[@]}" \
    >"$out/configure.log" 2>&1
  [ -f "$build/build.ninja" ] || finish 1 "configure failed (configure.log; carry .deb: scripts/fetch-device-debs.sh)"
  grep -q "CUDA toolkit: ON" "$out/configure.log" || finish 1 "configure did not find the CUDA toolkit (configure.log)"
fi

# Only what the checks run: the CLI (dragon verify), the runner, and five test programs.
# At least 60 s are kept for the tests.
build_start=$(date +%s)
build_limit=$(( $(left) - 60 ))
[ "$build_limit" -ge 1 ] || finish 1 "no time left for the build after configuring"
timeout --kill-after=5 "$build_limit" cmake --build "$build" -j "$jobs" --target dragon dragon-kernel-runner \
  test_gpu_verify test_harness_isolation_gpu test_harness_reward_gpu test_harness_exploit_files test_harness_isolation \
  >"$out/build.log" 2>&1
build_status=$?
build_seconds=$(( $(date +%s) - build_start ))
grep -E "error|FAILED" "$out/build.log" | head -n 40
[ "$build_status" -eq 124 ] || [ "$build_status" -eq 137 ] &&
  finish 1 "the build did not finish within the deadline ($build_seconds s; build.log): call again, the build goes on"
[ "$build_status" -eq 0 ] || finish 1 "build failed (build.log)"

# ctest names tests by their GoogleTest names (Suite.Case), so the selections are by name.
timed_exploits='Catalog/ExploitCudaRun\.VerdictNamesTheExploit/(sparse_key_cache|sparse_index_cache|honest_relu_timed)( |$)'
gpu_serial="^(IsolatedTimingGpu\.|RewardGpu\.|$timed_exploits)"
gpu_parallel='^(Catalog/ExploitCudaRun\.|IsolatedCudaRun\.)'
cpu_tests='^(Catalog/ExploitCpuFile|ExploitCpu[A-Za-z]*|Namespaces/ExploitCpuSecrets|Catalog/ExploitCudaFile|ExploitCudaCatalog|IsolatedCandidate|CommandLineSecret|KernelRunner|KernelRunnerProtocol|RedZones|IsolatedCudaCompile|IsolatedTiming|IsolatedKernelFile|CudaVirtualMemoryAbi)\.'

# run_ctest LOG SECONDS ARGS...: ctest within SECONDS (and the deadline); 124 when cut off.
run_ctest() {
  local log=$1 seconds=$2
  shift 2
  [ "$seconds" -gt "$(left)" ] && seconds=$(left)
  if [ "$seconds" -le 5 ]; then
    echo "not started: the call's time was up" >"$out/$log.log"
    return 124
  fi
  timeout --kill-after=5 "$seconds" ctest --test-dir "$build" --no-tests=error --timeout "$test_timeout" "$@" \
    >"$out/$log.log" 2>&1
}

# 1. Timing-sensitive GPU tests alone on the GPU, one at a time; the CPU tests beside them
#    on a few cores (they use no device).
run_ctest harness-cpu-tests "$(left)" -L unit -R "$cpu_tests" --output-on-failure -j "$(( jobs < 4 ? jobs : 4 ))" &
cpu_pid=$!
run_ctest harness-gpu-serial "$(( $(left) - 40 ))" -L gpu -R "$gpu_serial" --output-on-failure -V -j 1
serial_status=$?
# 2. A few kernel files through `dragon verify` as a user runs it, for the summary: the
#    verdicts and timings in the CLI's words, the isolation it reports, the clocks.
direct() {  # direct SPEC FILE ARGS...
  local spec=$1 file=$2
  shift 2
  [ "$(left)" -gt 60 ] || { echo "== $file: not run, the call's time was up"; return; }
  echo "== dragon verify $spec --kernel $file $*"
  timeout --kill-after=5 60 "$build/dragon" verify "$spec" --kernel "tests/harness_exploits/$file" "$@" 2>&1
  echo "exit status $?"
}
{
  direct relu:shape=4x256 cpu/honest_relu.cc
  direct relu:shape=4x256 cuda/honest_relu.cu --grid 4 --block 256 --time
  direct relu:shape=4x256 cuda/sparse_key_cache.cu --grid 1 --block 256 --time
  direct embedding_bag:num_embeddings=64,embedding_dim=16,batch=128,max_bag_length=16,num_indices=1024 \
    cuda/sparse_index_cache.cu --grid 1 --block 256 --time
  direct relu:shape=4x256 cuda/discarded_read_past_end.cu --grid 4 --block 256
  direct relu:shape=4x256 cuda/reads_output_prefill.cu --grid 4 --block 256
} >"$out/harness-direct.log" 2>&1

# 3. The correctness-only GPU tests, several at once (each is mostly process starts).
run_ctest harness-gpu-parallel "$(( $(left) - 5 ))" -L gpu -R "$gpu_parallel" -E "$timed_exploits" \
  --output-on-failure -V -j 6
parallel_status=$?
wait "$cpu_pid"
cpu_status=$?

for group in serial:$serial_status parallel:$parallel_status cpu:$cpu_status; do
  [ "${group#*:}" -eq 124 ] || [ "${group#*:}" -eq 137 ] && note "${group%:*} tests cut off by the deadline"
done
if grep -qE "\*\*\*Skipped|\[  SKIPPED \]" "$out"/harness-gpu-*.log; then
  finish 1 "GPU tests skipped: no usable device (harness-gpu-*.log)"
fi
[ "$serial_status" -eq 0 ] || finish 1 "timing-sensitive GPU tests failed or did not finish (harness-gpu-serial.log)"
[ "$parallel_status" -eq 0 ] || finish 1 "GPU tests failed or did not finish (harness-gpu-parallel.log)"
[ "$cpu_status" -eq 0 ] || finish 1 "CPU tests failed or did not finish on the device machine (harness-cpu-tests.log)"
finish 0 "every harness GPU and CPU test passed"
