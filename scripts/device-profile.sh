#!/usr/bin/env bash
# On the GPU machine: builds `dragon` and the CUPTI injection library, then profiles the
# seven workloads of examples/workloads inside their NVTX "measure" range. Each workload
# runs REPS times plain and REPS times under `dragon profile`, interleaved, so that the
# profiler's overhead is a difference of medians over runs, not of two single runs.
# MODES picks what runs besides "plain": "profiled" (dragon profile, everything recorded),
# "kernels" (dragon profile --activities kernel) and "kineto" (torch.profiler recording
# CUDA activity: another CUPTI tracer, the yardstick). Also checks that a program with a
# child process gives one trace per process (examples/workloads/two_processes.py).
# Writes $OUT/profile-summary.md, $OUT/profile-reports.json and $OUT/profile.log.
# Usage: [REPS=3] [MODES="plain profiled"] scripts/device-profile.sh [workload ...]
#        (default: all seven workloads)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${OUT:-out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=build-device
log="$out/profile.log"
reps=${REPS:-3}
modes=${MODES:-plain profiled}
workloads=("$@")
[ ${#workloads[@]} -eq 0 ] && workloads=(gpt2_inference gpt2_train llama_inference bert_encoder dlrm resnet50 vit)

. scripts/device-env.sh
{
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu --format=csv
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${device_cmake_args_torch[@]}" |
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
    for mode in $modes; do
      dir=/tmp/dragon-profile-$w-$mode-$rep
      rm -rf "$dir"
      case $mode in
        plain) result=$(python3 "$w.py" 2>>"$log" | grep '^workload') || true ;;
        kineto) result=$(WORKLOAD_TORCH_PROFILER=1 python3 "$w.py" 2>>"$log" | grep '^workload') || true ;;
        profiled) result=$("$dragon" profile --out "$dir" --nvtx-range measure -- python3 "$w.py" 2>>"$log" |
                    tee -a "$log" | grep '^workload') || true ;;
        kernels) result=$("$dragon" profile --activities kernel --out "$dir" --nvtx-range measure -- \
                    python3 "$w.py" 2>>"$log" | tee -a "$log" | grep '^workload') || true ;;
        *) echo "unknown mode $mode"; exit 2 ;;
      esac
      echo "$w $rep $mode $result" >>"$out/runs.txt"
      [ "$mode" = profiled ] && [ -f "$dir/report.json" ] && cp "$dir/report.json" "/tmp/report-$w.json"
    done
  done
  grep "^$w " "$out/runs.txt" | sed 's/gpu NVIDIA.*//'
done

# A parent and a child process, both on the GPU: one trace file each, one report.
echo "== two_processes under dragon profile" >>"$log"
rm -rf /tmp/dragon-profile-two
"$dragon" profile --out /tmp/dragon-profile-two -- python3 two_processes.py >>"$log" 2>&1
echo "exit status $? traces $(ls /tmp/dragon-profile-two/trace-*.jsonl 2>/dev/null | wc -l)" |
  tee -a "$log" >"$out/two-processes.txt"
cp /tmp/dragon-profile-two/report.json "$out/two-processes-report.json" 2>/dev/null

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

python3 - "$out" "$modes" "${workloads[@]}" <<'PY'
import json, os, re, statistics, sys
out, modes, names = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
runs = {}
for line in open(os.path.join(out, "runs.txt")):
    parts = line.split()
    m = re.search(r"median_ms ([0-9.]+)", line)
    if m:
        runs.setdefault((parts[0], parts[2]), []).append(float(m.group(1)))
others = [m for m in modes if m != "plain"]
rows = ["| workload | " + " | ".join(f"{m} ms (median of runs; range)" for m in modes) + " | " +
        " | ".join(f"{m} overhead" for m in others) + " | busy | addressable | largest categories |",
        "|---" * (len(modes) + len(others) + 4) + "|"]
def cell(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}-{max(v):.3f}, n={len(v)})" if v else "n/a"
reports = {}
for name in names:
    path = f"/tmp/report-{name}.json"
    rep = json.load(open(path)) if os.path.exists(path) else None
    reports[name] = rep
    plain = runs.get((name, "plain"), [])
    overheads = []
    for m in others:
        v = runs.get((name, m), [])
        overheads.append(f"{100 * (statistics.median(v) / statistics.median(plain) - 1):+.1f}%"
                         if plain and v else "n/a")
    if rep:
        busy = f"{100 * rep['busy_ns'] / rep['window_ns']:.1f}%"
        addr = f"{100 * rep['addressable_fraction']:.1f}%"
        cats = sorted(rep["categories"], key=lambda c: -c["share"])[:4]
        top = ", ".join(f"{c['category']} {100 * c['share']:.1f}%" for c in cats if c["share"] > 0)
    else:
        busy = addr = top = "no report"
    rows.append(f"| {name} | " + " | ".join(cell(runs.get((name, m), [])) for m in modes) + " | " +
                " | ".join(overheads) + f" | {busy} | {addr} | {top} |")
open(os.path.join(out, "profile-summary.md"), "w").write("\n".join(rows) + "\n")
json.dump(reports, open(os.path.join(out, "profile-reports.json"), "w"), indent=1)
print("\n".join(rows))
PY
