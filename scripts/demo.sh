#!/usr/bin/env bash
# The main job on a built-in default workload: its canonical IR (the model's prompt), a
# run on the reference interpreter, the generated C++ checked against it, and for a
# matmul an expert schedule script applied, compiled and checked.
# Usage: scripts/demo.sh BUILD_DIR SPEC
set -euo pipefail
build_dir=${1:-build}
spec=${2:-matmul:m=128,n=128,k=128}
dragon="$build_dir/dragon"

echo "== Little Dragon demo: $spec"
echo
echo "-- canonical IR text (what the model reads)"
"$dragon" show "$spec"
echo
echo "-- reference interpreter, deterministic inputs"
"$dragon" run "$spec" --seed 1 --dist normal
echo
echo "-- generated C++ (unscheduled), compiled and checked against the interpreter"
"$dragon" run "$spec" --seed 1 --target cpu | tail -n 1
if [[ $spec == matmul* ]]; then
  script=data/scripts/expert/gemm_cpu.script
  echo
  echo "-- a schedule script in the compact format ($script)"
  cat "$script"
  echo
  echo "-- that script applied, compiled to C++ and checked against the unscheduled function"
  "$dragon" run "$spec" --seed 1 --script "$script" --target cpu | tail -n 2
fi
echo
echo "-- $("$dragon" ops | tail -n 1)"
