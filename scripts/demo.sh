#!/usr/bin/env bash
# The main job on a built-in default workload: its canonical IR (the model's prompt)
# and a run on the reference interpreter. Usage: scripts/demo.sh BUILD_DIR SPEC
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
echo "-- $("$dragon" ops | tail -n 1)"
