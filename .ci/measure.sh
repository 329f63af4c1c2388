#!/usr/bin/env bash
# Times a from-scratch `make test` the way CI runs it (CI=1 and CCACHE_DISABLE=1: no
# ccache; fresh build trees), niced, and prints the figures for bench/results/: wall and
# CPU time (user+sys, which the load of other processes on a shared machine changes far
# less than wall time), the load average before and after, and where the time went
# (.ci/build_times.py). It measures; it does not decide pass or fail.
# Usage: .ci/measure.sh [BUILD_DIR] [extra make variables ...]   (BUILD_DIR default build-ci-time)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-ci-time}
shift || true
fuzz_dir="$dir-fuzz"
logs="$dir-logs"  # beside the trees, ignored by git like them
rm -rf "$dir" "$fuzz_dir" "$logs"
mkdir -p "$logs"
log="$logs/make-test.log"

echo "commit $(git rev-parse --short HEAD) ($(git log -1 --format=%s | cut -c1-70))"
echo "machine $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem:/{print $2}') GB"
echo "load before $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command CI=1 CCACHE_DISABLE=1 FUZZ_BUILD_DIR=$fuzz_dir nice make test BUILD_DIR=$dir $*"
status=0
CI=1 CCACHE_DISABLE=1 FUZZ_BUILD_DIR="$fuzz_dir" /usr/bin/time -f "time wall %e s, user %U s, sys %S s" -o "$logs/time" \
  nice make test BUILD_DIR="$dir" "$@" >"$log" 2>&1 || status=$?
echo "load after $(cut -d' ' -f1-3 /proc/loadavg)"
cat "$logs/time"
echo "make test exit status $status (log $log)"
echo "ctest -N: $(ctest --test-dir "$dir" -N | tail -n 1)"
grep -E '^(fuzz_|Total Test time|[0-9]+% tests passed)' "$log" || true
python3 .ci/build_times.py "$dir" "$fuzz_dir"
exit $status
