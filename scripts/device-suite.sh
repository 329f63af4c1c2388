#!/usr/bin/env bash
# On the GPU machine (Ubuntu 24.04, g++ 13, CUDA 13, PyTorch's libtorch): builds dragon with
# the libtorch eager-baseline plugin, then runs the stages asked for, in order:
#   build            configure and build (kept in BUILD_DIR between calls on a warm machine)
#   tests            the eager baselines against the interpreter (CPU, this libtorch), the
#                    gpu tests of dragon bench and of the cuDNN baselines
#   peaks            dragon peaks --out peaks.json
#   bench:SUITE[:IDS]  dragon bench SUITE [--problems IDS] --out bench-SUITE[-IDS].json --report ....html
#   audit:SUITE[:IDS]  dragon audit SUITE [--problems IDS] --out/--markdown audit-SUITE[-IDS].{json,md}
# Everything lands in $OUT/suite-results.tar.gz (logs, JSON, HTML, Markdown) plus
# $OUT/suite-summary.md; a stage that would run past DEADLINE seconds from the start
# (default 560) is cut by `timeout`, and the results file it rewrote after each problem stays.
# Usage: DRAGON_COMMIT=<sha> scripts/device-suite.sh build tests peaks bench:dlrm audit:dlrm
# Environment: BUILD_DIR (default build-suite), JOBS (default nproc), DEADLINE, MAX_SECONDS
# (dragon bench --max-seconds, default 0.5).
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out/suite"
out=$(cd "$out" && pwd)
work="$out/suite"
build=${BUILD_DIR:-build-suite}
jobs=${JOBS:-$(nproc)}
deadline=${DEADLINE:-560}
start=$(date +%s)
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$PWD/$build/kernel-cache}
export DRAGON_COMMIT=${DRAGON_COMMIT:-unknown}
summary="$out/suite-summary.md"
. scripts/device-env.sh
echo "# dragon bench on the GPU machine (commit $DRAGON_COMMIT, stages: $*)" >"$summary"

{
  uname -a
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv 2>&1 || true
  g++ --version | head -n 1
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version())' 2>&1
  echo "cuDNN library: ${DRAGON_CUDNN_LIBRARY:-not found}"
} >"$work/machine.txt" 2>&1
sed 's/^/    /' "$work/machine.txt" >>"$summary"

left() { echo $((deadline - ($(date +%s) - start))); }
note() { echo "- $*" | tee -a "$summary"; }
package() { tar -C "$out" -czf "$out/suite-results.tar.gz" suite; }
trap package EXIT

for stage in "$@"; do
  if [ "$(left)" -lt 20 ]; then note "$stage: not started, the call's time is up"; continue; fi
  case "$stage" in
    build)
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRAGON_WITH_TORCH=ON \
        "${device_cmake_args_torch[@]}" >"$work/build.log" 2>&1
      timeout "$(left)" cmake --build "$build" -j "$jobs" --target dragon dragon-kernel-runner test_gpu_bench test_gpu_cudnn test_gpu_fill \
        >>"$work/build.log" 2>&1
      status=$?
      note "build: exit $status; $(grep -E 'Little Dragon: libtorch' "$work/build.log")"
      [ $status -eq 0 ] || { grep -E "error|FAILED" "$work/build.log" | head -n 30 | tee -a "$summary"; exit 1; }
      # The plugin apart: without it the suites still run (our f64 twin as the reference).
      timeout "$(left)" cmake --build "$build" -j "$jobs" --target dragon_eager_torch test_eager_baselines \
        test_eager_plugin >"$work/plugin-build.log" 2>&1
      status=$?
      note "eager plugin build: exit $status"
      [ $status -eq 0 ] || grep -E "error|FAILED" "$work/plugin-build.log" | head -n 30 | tee -a "$summary"
      ;;
    tests)
      timeout "$(left)" "$build/tests/unit/bench/test_eager_baselines" >"$work/eager-tests.log" 2>&1
      note "eager baselines vs interpreter (this libtorch, CPU): exit $?; $(grep -E '^\[  (PASSED|FAILED)' "$work/eager-tests.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED' "$work/eager-tests.log" | head -n 20 >>"$summary"
      timeout "$(left)" "$build/tests/unit/bench/test_eager_plugin" >"$work/eager-plugin-tests.log" 2>&1
      note "eager plugin: exit $?"
      # The plugin sits beside dragon, not beside the test binaries.
      DRAGON_EAGER_PLUGIN="$PWD/$build/libdragon_eager_torch.so" timeout "$(left)" "$build/tests/gpu/test_gpu_bench" \
        >"$work/gpu-bench-tests.log" 2>&1
      note "gpu bench tests: exit $?; $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$work/gpu-bench-tests.log" | tr '\n' ' ')"
      grep -E '^\[  (FAILED|SKIPPED) ' "$work/gpu-bench-tests.log" | head -n 20 >>"$summary"
      timeout "$(left)" "$build/tests/gpu/test_gpu_cudnn" >"$work/gpu-cudnn-tests.log" 2>&1
      note "gpu cuDNN tests: exit $?; $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$work/gpu-cudnn-tests.log" | tr '\n' ' ')"
      grep -E '^\[  (FAILED|SKIPPED) ' "$work/gpu-cudnn-tests.log" | head -n 20 >>"$summary"
      timeout "$(left)" "$build/tests/gpu/test_gpu_fill" >"$work/gpu-fill-tests.log" 2>&1
      note "gpu fill tests: exit $?; $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$work/gpu-fill-tests.log" | tr '\n' ' ')"
      grep -E '^\[  (FAILED|SKIPPED) ' "$work/gpu-fill-tests.log" | head -n 20 >>"$summary"
      ;;
    peaks)
      timeout "$(left)" "$build/dragon" peaks --out "$work/peaks.json" >"$work/peaks.txt" 2>&1
      note "peaks: exit $?"
      sed 's/^/    /' "$work/peaks.txt" >>"$summary"
      ;;
    bench:* | audit:*)
      IFS=: read -r kind suite ids <<<"$stage"
      name="$kind-$suite${ids:+-$ids}"
      args=()
      [ -n "$ids" ] && args+=(--problems "$ids")
      if [ "$kind" = bench ]; then
        [ -f "$work/peaks.json" ] && args+=(--peaks "$work/peaks.json")
        timeout "$(left)" "$build/dragon" bench "$suite" "${args[@]}" --max-seconds "${MAX_SECONDS:-0.5}" \
          --out "$work/$name.json" --report "$work/$name.html" >"$work/$name.log" 2>&1
      else
        timeout "$(left)" "$build/dragon" audit "$suite" "${args[@]}" --out "$work/$name.json" \
          --markdown "$work/$name.md" >"$work/$name.log" 2>&1
      fi
      note "$stage: exit $? after $(( $(date +%s) - start )) s; $(tail -n 1 "$work/$name.log")"
      ;;
    *) note "unknown stage $stage" ;;
  esac
done
note "done after $(( $(date +%s) - start )) s"
