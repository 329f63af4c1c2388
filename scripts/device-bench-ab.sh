#!/usr/bin/env bash
# On the GPU machine: the expert scripts' kernels of this tree against those of a base
# tree, in one call on one card, each beside its vendor baseline (bench_gpu_expert). The
# base is this tree with PATCH reversed (`git diff BASE HEAD > PATCH` made it here; the
# machine has no git history). Both are built at once, then benched one after the other,
# base first, so a codegen change's effect on kernels is measured side by side.
# Writes $OUT/base/ and $OUT/new/ (device-bench.sh's files for each) and $OUT/ab.md.
# Usage: DRAGON_COMMIT=<new sha> BASE_COMMIT=<base sha> scripts/device-bench-ab.sh PATCH --cases a,b,...
set -uo pipefail
cd "$(dirname "$0")/.."
patch_file=$(realpath "$1")
shift
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
base=${BASE_DIR:-/tmp/dragon-base}
jobs=${JOBS:-$(nproc)}
rm -rf "$base" && mkdir -p "$base"
tar --exclude='./build*' --exclude='./out' -cf - . | tar -xf - -C "$base"
(cd "$base" && patch -R -p1 --quiet <"$patch_file") || { echo "the patch does not reverse onto this tree"; exit 1; }

. scripts/device-env.sh
build_tree() {  # DIR LOG
  (cd "$1" && cmake -S . -B build-device -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRAGON_WITH_TORCH=ON \
    "${device_cmake_args_torch[@]}" >"$2" 2>&1 &&
    cmake --build build-device -j "$((jobs / 2))" --target bench_gpu_expert dragon_eager_torch bench_nvrtc_throughput \
      >>"$2" 2>&1)
}
start=$(date +%s)
build_tree "$base" "$out/base-build.log" &
base_pid=$!
build_tree "$PWD" "$out/new-build.log"
new_status=$?
wait "$base_pid"
base_status=$?
echo "built both in $(($(date +%s) - start)) s (base $base_status, new $new_status)"
[ "$base_status" -eq 0 ] && [ "$new_status" -eq 0 ] || { tail -n 30 "$out"/*-build.log; exit 1; }

(cd "$base" && OUT="$out/base" DRAGON_COMMIT="${BASE_COMMIT:-base}" NVRTC_THROUGHPUT=0 bash scripts/device-bench.sh "$@" >/dev/null 2>&1)
OUT="$out/new" DRAGON_COMMIT="${DRAGON_COMMIT:-new}" NVRTC_THROUGHPUT=0 bash scripts/device-bench.sh "$@" >/dev/null 2>&1
{
  echo "# Expert kernels, base ${BASE_COMMIT:-base} against new ${DRAGON_COMMIT:-new}, one card"
  echo
  for side in base new; do
    echo "## $side"
    grep -E '^\|' "$out/$side/gpu-expert.md"
    echo
  done
} | tee "$out/ab.md"
