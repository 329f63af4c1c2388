#!/usr/bin/env bash
# SFT on the GPU machine (PyTorch 2.11's libtorch, CUDA): builds dragon and test_model
# against it, runs test_model (the CPU tests under libtorch 2.11: the API both versions
# share), then measures `dragon train sft --device cuda` tokens per second for the small
# (10.0M) and base (26.7M) presets on examples made from the expert scripts
# (data/scripts/expert, prompts as canonical IR text), and checks that a checkpoint written
# on the GPU resumes there. Logs and checkpoints go to $OUT (or out/ elsewhere).
# Usage (through the device tool): scripts/device-sft.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
build=build-device

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$out/machine.txt"
. scripts/device-env.sh
python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tee -a "$out/machine.txt"
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${device_cmake_args_torch[@]}" \
  >"$out/configure.log" 2>&1
grep -E "Little Dragon" "$out/configure.log"
cmake --build "$build" -j "$(nproc)" --target dragon test_model test_model_files >"$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -n 40; echo "build failed (see build.log)"; exit 1; }

"$build/tests/unit/model/test_model_files" >"$out/test_model_files.log" 2>&1; echo "test_model_files: exit $?"
"$build/tests/unit/model/test_model" >"$out/test_model.log" 2>&1; echo "test_model: exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$out/test_model.log" | head -n 20

# Training examples: every expert script with its op spec, prompts as IR text.
data="$out/sft-data"
mkdir -p "$data"
python3 - "$data/train.jsonl" <<'PY'
import json, sys
rows = []
for line in open("data/scripts/expert/index.txt"):
    parts = line.split()
    if len(parts) != 2 or line.startswith("#"):
        continue
    script = open("data/scripts/expert/" + parts[0]).read()
    rows.append({"task": "construction", "prompt": "ir", "workload": parts[1], "script": script})
with open(sys.argv[1], "w") as f:
    for r in rows:
        f.write(json.dumps(r) + "\n")
print(len(rows), "examples")
PY
cp "$data/train.jsonl" "$data/valid.jsonl"

# small: 30 steps, then resumed for the other 30 (a checkpoint written on the GPU resumes
# there); base: 60 steps straight.
sft=("$build/dragon" train sft --data "$data" --device cuda --steps 60 --batch 64 --warmup 10 --log-every 10
     --checkpoint-every 30)
echo "== small"
"${sft[@]}" --out "$out/sft-small" --preset small --run-steps 30 2>&1 | tee "$out/sft-small.log" |
  grep -E "parameters|step (10|30)/|valid|error"
echo "== small, resumed"
"${sft[@]}" --out "$out/sft-small" --resume 2>&1 | tee "$out/sft-small-resume.log" |
  grep -E "parameters|step (40|60)/|valid|error"
echo "== base"
"${sft[@]}" --out "$out/sft-base" --preset base 2>&1 | tee "$out/sft-base.log" |
  grep -E "parameters|step (10|30|60)/|valid|error"
ls -l "$out"/sft-*/ 2>&1
