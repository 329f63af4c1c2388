#!/usr/bin/env bash
# On the GPU machine: builds `dragon` and the CUPTI injection library, then profiles the
# seven workloads of examples/workloads inside their NVTX "measure" range, each run once
# plain and once under `dragon profile` to measure the profiler's overhead. Writes
# $OUT/profile-summary.md, $OUT/profile-reports.json and $OUT/profile.log.
# Usage: scripts/device-profile.sh [workload ...]   (default: all seven)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
build=build-device
log="$(cd "$out" && pwd)/profile.log"
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(gpt2_inference gpt2_train llama_inference bert_encoder dlrm resnet50 vit)

torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDRAGON_BUILD_TESTS=OFF \
    -DDRAGON_BUILD_BENCHMARKS=OFF -DCMAKE_PREFIX_PATH="$torch_prefix" | grep "Little Dragon"
  cmake --build "$build" -j "$(nproc)" --target dragon dragon_profile_injection | tail -n 2
} >"$log" 2>&1
[ -x "$build/dragon" ] && [ -f "$build/libdragon_profile.so" ] || { tail -n 30 "$log"; echo "build failed"; exit 1; }

export PYTHONUNBUFFERED=1
results=()
for w in "${workloads[@]}"; do
  echo "== $w" | tee -a "$log"
  plain=$(cd examples/workloads && python3 "$w.py" 2>>"$log" | grep '^workload') || true
  dir=/tmp/dragon-profile-$w
  rm -rf "$dir"
  profiled=$( (cd examples/workloads && "../../$build/dragon" profile --out "$dir" --nvtx-range measure -- \
    python3 "$w.py") 2>>"$log" | tee -a "$log" | grep '^workload') || true
  echo "plain:    $plain" | tee -a "$log"
  echo "profiled: $profiled" | tee -a "$log"
  if [ -f "$dir/report.json" ]; then cp "$dir/report.json" "/tmp/report-$w.json"; fi
  results+=("$w|$plain|$profiled")
done

python3 - "$out" "${results[@]}" <<'PY'
import json, os, re, sys
out, rows = sys.argv[1], sys.argv[2:]
def median(line):
    m = re.search(r"median_ms ([0-9.]+)", line)
    return float(m.group(1)) if m else None
summary = ["| workload | median ms (plain) | median ms (profiled) | overhead | busy | addressable | largest categories |",
           "|---|---|---|---|---|---|---|"]
reports = {}
for row in rows:
    name, plain, profiled = row.split("|", 2)
    path = f"/tmp/report-{name}.json"
    rep = json.load(open(path)) if os.path.exists(path) else None
    reports[name] = rep
    p, q = median(plain), median(profiled)
    overhead = f"{100 * (q - p) / p:+.1f}%" if p and q else "n/a"
    if rep:
        busy = f"{100 * rep['busy_ns'] / rep['window_ns']:.1f}%"
        addr = f"{100 * rep['addressable_fraction']:.1f}%"
        cats = sorted(rep["categories"], key=lambda c: -c["share"])[:4]
        top = ", ".join(f"{c['category']} {100 * c['share']:.1f}%" for c in cats if c["share"] > 0)
    else:
        busy = addr = top = "no report"
    summary.append(f"| {name} | {p} | {q} | {overhead} | {busy} | {addr} | {top} |")
open(os.path.join(out, "profile-summary.md"), "w").write("\n".join(summary) + "\n")
json.dump(reports, open(os.path.join(out, "profile-reports.json"), "w"), indent=1)
print("\n".join(summary))
PY
