#!/usr/bin/env bash
# The main job on a built-in default workload: its canonical IR (the model's prompt), a
# run on the reference interpreter, the generated C++ checked against it, and for a
# matmul expert schedule scripts applied: one compiled to C++ and checked, one for the
# GPU compiled to CUDA and a CUBIN (NVRTC, no GPU needed), run, checked and timed on the
# GPU when there is one; then the main job, `dragon optimize` with the shipped model.
# Usage: scripts/demo.sh BUILD_DIR SPEC
set -euo pipefail
build_dir=${1:-build}
spec=${2:-matmul:m=128,n=128,k=128}
DEMO_ATTEMPTS=${DEMO_ATTEMPTS:-4}
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
if [[ $spec == matmul:m=128,n=128,k=128 ]]; then
  script=data/scripts/expert/gemm_gpu.script
  echo
  echo "-- a GPU script: shared-memory tiles, threads and cooperative fetch ($script, $(wc -l <"$script") lines)"
  echo
  echo "-- its CUDA kernel for the H200 (dragon build --target cuda), first lines"
  "$dragon" build "$spec" --script "$script" --target cuda | sed -n '/__global__/,$p' | head -n 24
  cubin=$(mktemp --suffix=.cubin)
  "$dragon" build "$spec" --script "$script" --target cuda --emit cubin -o "$cubin" 2>&1
  rm -f "$cubin"
  echo
  if "$dragon" run "$spec" --seed 1 --script "$script" --target cuda --time >/tmp/dragon-demo-gpu.txt 2>&1; then
    echo "-- on the GPU: checked against the interpreter and timed"
    tail -n 3 /tmp/dragon-demo-gpu.txt
  else
    echo "-- not run on a GPU: $(grep -o 'needs a CUDA device[^(]*' /tmp/dragon-demo-gpu.txt || tail -n 1 /tmp/dragon-demo-gpu.txt)"
  fi
  rm -f /tmp/dragon-demo-gpu.txt
fi
echo
# The main job: the shipped model (data/model/) writes scripts for the workload; each is
# replayed, built, checked against the unscheduled function and timed beside the default
# schedule, on the GPU where there is one, else on the CPU backend.
model=data/model/model.safetensors
if [[ ! -x $build_dir/dragon-model ]]; then
  echo "-- the main job needs $build_dir/dragon-model, built where CMake finds libtorch (scripts/setup.sh installs Debian's)" >&2
  exit 1
fi
optimize_spec=$spec
if ! nvidia-smi -L >/dev/null 2>&1 && [[ $spec == "matmul:m=128,n=128,k=128" ]]; then
  # The model writes GPU schedules. On the CPU backend their thread loops run one after
  # another, so each thread's share of a cooperative fetch is redone for every thread: at
  # 128^3 the attempts pass the CPU measurer's 1 s limit. Without a GPU, ask about 64^3.
  optimize_spec=matmul:m=64,n=64,k=64
fi
db=$(mktemp -d)/demo.db
echo "-- the main job: dragon optimize $optimize_spec with the shipped model ($model), $DEMO_ATTEMPTS attempts"
start=$(date +%s)
"$dragon" optimize "$optimize_spec" --model "$model" --attempts "$DEMO_ATTEMPTS" --db "$db" 2>&1
echo "   ($(($(date +%s) - start)) s; every attempt stored in the tuning database)"
rm -rf "$(dirname "$db")"
echo
echo "-- $("$dragon" ops | tail -n 1)"
