#!/usr/bin/env bash
# On the GPU machine: builds `dragon` and the CUPTI injection library, then profiles the
# seven workloads of examples/workloads inside their NVTX "measure" range. Each workload
# runs REPS times plain and REPS times under `dragon profile`, interleaved, so that the
# profiler's overhead is a difference of medians over runs, not of two single runs.
# Writes $OUT/profile-summary.md, $OUT/profile-reports.json and $OUT/profile.log.
# Usage: scripts/device-profile.sh [workload ...]   (default: all seven; REPS=3)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=build-device
log="$out/profile.log"
reps=${REPS:-3}
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(gpt2_inference gpt2_train llama_inference bert_encoder dlrm resnet50 vit)

torch_prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$torch_prefix" |
    grep "Little Dragon"
  cmake --build "$build" -j "$(nproc)" --target dragon dragon_profile_injection | tail -n 2
} >"$log" 2>&1
[ -x "$build/dragon" ] && [ -f "$build/libdragon_profile.so" ] || { tail -n 30 "$log"; echo "build failed"; exit 1; }
dragon=$(pwd)/$build/dragon

export PYTHONUNBUFFERED=1
cd examples/workloads
: >"$out/runs.txt"
for w in "${workloads[@]}"; do
  for rep in $(seq 1 "$reps"); do
    plain=$(python3 "$w.py" 2>>"$log" | grep '^workload') || true
    dir=/tmp/dragon-profile-$w-$rep
    rm -rf "$dir"
    profiled=$("$dragon" profile --out "$dir" --nvtx-range measure -- python3 "$w.py" 2>>"$log" |
      tee -a "$log" | grep '^workload') || true
    echo "$w $rep plain $plain" >>"$out/runs.txt"
    echo "$w $rep profiled $profiled" >>"$out/runs.txt"
    [ -f "$dir/report.json" ] && cp "$dir/report.json" "/tmp/report-$w.json"
  done
  grep "^$w " "$out/runs.txt" | sed 's/gpu NVIDIA.*//'
done

# A program that starts torch.profiler (Kineto, another CUPTI client) under dragon profile.
cat >/tmp/kineto.py <<'PY'
import torch
from torch.profiler import profile
x = torch.ones(1024, device="cuda")
with profile() as p:
    y = x * 2
torch.cuda.synchronize()
print("kineto events", len(p.events()))
PY
echo "== torch.profiler under dragon profile" >>"$log"
rm -rf /tmp/dragon-profile-kineto
"$dragon" profile --out /tmp/dragon-profile-kineto -- python3 /tmp/kineto.py >>"$log" 2>&1
echo "exit status $?" >>"$log"
cd ../..

python3 - "$out" "${workloads[@]}" <<'PY'
import json, os, re, statistics, sys
out, names = sys.argv[1], sys.argv[2:]
runs = {}
for line in open(os.path.join(out, "runs.txt")):
    parts = line.split()
    m = re.search(r"median_ms ([0-9.]+)", line)
    if m:
        runs.setdefault((parts[0], parts[2]), []).append(float(m.group(1)))
rows = ["| workload | plain ms (median of runs; range) | profiled ms (median of runs; range) | overhead | busy | "
        "addressable | largest categories |", "|---|---|---|---|---|---|---|"]
reports = {}
for name in names:
    path = f"/tmp/report-{name}.json"
    rep = json.load(open(path)) if os.path.exists(path) else None
    reports[name] = rep
    plain, prof = runs.get((name, "plain"), []), runs.get((name, "profiled"), [])
    def cell(v):
        return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}, n={len(v)})" if v else "n/a"
    overhead = (f"{100 * (statistics.median(prof) / statistics.median(plain) - 1):+.1f}%"
                if plain and prof else "n/a")
    if rep:
        busy = f"{100 * rep['busy_ns'] / rep['window_ns']:.1f}%"
        addr = f"{100 * rep['addressable_fraction']:.1f}%"
        cats = sorted(rep["categories"], key=lambda c: -c["share"])[:4]
        top = ", ".join(f"{c['category']} {100 * c['share']:.1f}%" for c in cats if c["share"] > 0)
    else:
        busy = addr = top = "no report"
    rows.append(f"| {name} | {cell(plain)} | {cell(prof)} | {overhead} | {busy} | {addr} | {top} |")
open(os.path.join(out, "profile-summary.md"), "w").write("\n".join(rows) + "\n")
json.dump(reports, open(os.path.join(out, "profile-reports.json"), "w"), indent=1)
print("\n".join(rows))
PY
