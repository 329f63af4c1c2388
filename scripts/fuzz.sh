#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (address and undefined-behaviour
# sanitizers on) into build-fuzz/ and runs each for FUZZ_SECONDS (default 60) from its
# seed corpus, the three side by side. Exits 1 with the fuzzer's report when one finds a
# crash, a sanitizer error, an internal error, a leak or a timeout; the input that did it
# is kept under build-fuzz/fuzz-artifacts/<target>/.
# `make test` runs them for 20 s each (a smoke run), `make fuzz` for 60.
# Usage: [FUZZ_SECONDS=60] scripts/fuzz.sh [target ...]   (targets: op_spec ir_text script)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${FUZZ_SECONDS:-60}
build=${FUZZ_BUILD_DIR:-build-fuzz}
jobs=${JOBS:-$(nproc)}
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(op_spec ir_text script)

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRAGON_FUZZ=ON -DDRAGON_UNITY_BUILD=ON \
    -DDRAGON_BUILD_TESTS=OFF -DDRAGON_BUILD_BENCHMARKS=OFF -DDRAGON_WITH_CUDA=OFF -DDRAGON_WITH_TORCH=OFF >/dev/null
fi
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}"

pids=()
for t in "${targets[@]}"; do
  work=$(mktemp -d)  # the fuzzer grows its corpus here, never in fuzz/corpus/
  cp -r "fuzz/corpus/$t/." "$work/"
  mkdir -p "$build/fuzz-artifacts/$t"
  "$build/fuzz/fuzz_$t" "$work" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$build/fuzz-artifacts/$t/" -print_final_stats=1 >"$build/fuzz-$t.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  if wait "${pids[$i]}"; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/fuzz-$t.log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz_$t: no finding in ${seconds} s (${runs} inputs run)"
  else
    echo "fuzz_$t FOUND A PROBLEM (log $build/fuzz-$t.log, input under $build/fuzz-artifacts/$t/):"
    grep -v '^#' "$build/fuzz-$t.log" | tail -n 40
    status=1
  fi
done
exit $status
