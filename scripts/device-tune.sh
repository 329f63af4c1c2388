#!/usr/bin/env bash
# On the GPU machine (Ubuntu 24.04, 16 cores, CUDA 13, PyTorch's libtorch; no sqlite3 header
# and no XGBoost: their Debian .deb files, carried in .deb/ by scripts/fetch-device-debs.sh,
# are unpacked into a prefix as scripts/device-build.sh does): builds what tuning needs, then
# runs the stages asked for, in order, each cut at the call's DEADLINE. Without stages it runs
# the one-call plan: build tune:kernelbench-l1:$KB_PROBLEMS tune:dlrm
# bench:kernelbench-l1:$KB_PROBLEMS bench:dlrm check-default, with the tuning stages ending
# BENCH_RESERVE seconds before the deadline so that the benches run, and the default
# schedule's reduced-shape check on what is left (scripts/device-test.sh runs it in full).
#   build                 configure and build dragon, the eager plugin and test_gpu_design_space
#                         (kept in BUILD_DIR between calls on a warm machine)
#   check-default         the untuned default schedule of every problem of every suite (reduced
#                         shapes) and a 2^22-term f32 mean against the interpreter on the device
#   tests                 the GPU test programs GPU_TESTS names (test_gpu_tune; PROGRAM:FILTER runs
#                         only what the gtest filter names), built and run
#   throughput            dragon tune on small kernels (relu, softmax, GEMM): verified candidates
#                         per second, the CPU work per candidate and the kernel definitions
#                         NVRTC compiled and its CPU time (the children's own), against the
#                         issue's >= 300/s and <= 2 ms
#   tune:SUITE[:IDS]      dragon tune --suite SUITE [--problems IDS] --target cuda --trials TRIALS
#                         --db DB; resumable: the database holds every earlier call's records
#   bench:SUITE[:IDS]     dragon bench SUITE --db DB: per problem the default schedule, the best
#                         tuned kernel and the baselines (eager, cuBLAS, cuDNN), verified and
#                         timed side by side in one process; the summary's table comes from it
#   data:K/N              dragon data build --corpus CORPUS (full) --shard K/N --target cuda into DB
#                         and $OUT/tune/data (the training set's examples, issue 19), then
#                         dragon data stats; resumable like tune. The committed set of this
#                         GPU kind (data/set/full-h200 or -h100) is copied in first, so the
#                         returned set is the committed one grown by the shard
#   sft                   dragon train sft --device cuda on the data set the data stages wrote
#                         ($OUT/tune/data, or SFT_DATA) for what is left of the call (--time-budget),
#                         resuming BUILD_DIR/sft's checkpoint on a warm machine (SFT_FRESH=1: not);
#                         model.safetensors comes back in parts of 15 MiB (model.safetensors.part-*;
#                         cat them to rebuild it: the tool returns files of at most 16 MiB)
#   evaluate              dragon evaluate --target cuda on the held-out split of the data set the
#                         data stages wrote (or EVAL_DATA) with the model the sft stage just
#                         trained (or EVAL_MODEL; default the shipped data/model/model.safetensors),
#                         EVAL_LIMIT (20) examples per task, EVAL_ATTEMPTS (8) attempts, constrained
#                         and, with EVAL_UNCONSTRAINED=1, also unconstrained; resumable through
#                         BUILD_DIR/eval-*.jsonl on a warm machine; the lines come back as
#                         $OUT/tune/eval-{trained,shipped}-MODE.jsonl and the summaries in summary.md
#   evaluate:shipped      the same with the shipped model whatever the sft stage trained
#   efficiency:SUITE:IDS  those problems tuned towards EFFICIENCY_TRIALS (1000) in a database of
#                         their own that resumes across calls (bench/tuning/efficiency-KIND.jsonl.zst);
#                         per problem the best after 64 trials over the best of all its trials
#   kernelbench-export[:IDS]  per problem (comma-separated ids; default KB_EXPORT_PROBLEMS) the
#                         best kernel in DB written as a KernelBench ModelNew file (dragon export
#                         kernelbench, with --reference) and checked by scripts/kernelbench_check.py
#                         under PyTorch here: KernelBench's seeded construction, 5 trials of
#                         allclose at 1e-2 and its CUDA-event timing against the reference;
#                         files and JSON results under $OUT/tune/kernelbench-export; a
#                         check takes 1-2 minutes, so give a call 3-4 problems
#   profile:SUITE:IDS     per problem the best record in DB (or the default schedule; always with
#                         PROFILE_SCHEDULE=default) printed by
#                         dragon build with its launch, its SASS instruction mix (whole kernel and main
#                         loop, cuobjdump) and ncu --set full on that launch alone (scripts/profile_kernel.py,
#                         --clock-control none); key lines in summary.md, reports under profile/ in logs.tgz
# The database: DB (default BUILD_DIR/tune.db) starts, when missing, from the committed one
# (bench/tuning/h200.jsonl.zst and h100.jsonl.zst, imported; or bench/tuning/h200.db, copied), so a cold machine
# resumes. After every tuning stage and at the end it is written to $OUT/tune/h200.db and
# exported by device to $OUT/tune/h200.jsonl.zst and $OUT/tune/h100.jsonl.zst: commit them as
# bench/tuning/h200.jsonl.zst and bench/tuning/h100.jsonl.zst (both are imported into a fresh
# database).
# Writes under $OUT/tune: summary.md (machine, GPU name and clocks, commit, each stage, the
# per-problem table of speedups over eager), h200.jsonl.zst, h100.jsonl.zst, the bench JSON, and logs.tgz with
# the rest (logs, HTML reports, tuning curves; KEEP_FILES=1 leaves them loose), since the
# device tool returns at most 8 files.
# Without a usable GPU the GPU stages are skipped, saying so, and the exit status is 1.
# Usage: DRAGON_COMMIT=<sha> bash scripts/device-tune.sh [STAGE...]
# Environment: BUILD_DIR (build-tune), JOBS (nproc), DEADLINE (seconds from the start, 530),
# TRIALS (per problem, earlier calls included: 64), BATCH (candidates per round: 32),
# BENCH_RESERVE (seconds the tuning stages leave for the bench, check-default and
# kernelbench-export stages when any is asked: 150), KB_SHARE (percent of the tuning
# window for KernelBench: 65), KB_PROBLEMS, DB, PEAKS (dragon bench --peaks: the committed
# bench/results/2026-12-03-h200-peaks.json), MAX_SECONDS (dragon bench, 0.2),
# BENCH_MAX_TRIALS (dragon bench --max-trials: the best of each problem's first N scripts),
# DATA_RESERVE (seconds a data stage leaves for the stages after it: 0), SFT_PRESET (small),
# SFT_PROMPT (spec), SFT_CONTEXT (2048), SFT_STEPS (600), SFT_BATCH (16), SFT_LR (5e-4),
# EVAL_SECONDS (the most an evaluate mode may take), EVAL_PER_WORKLOAD (1), EFFICIENCY_TRIALS (1000), THROUGHPUT_TRIALS (256), THROUGHPUT_MALLOC_AB
# (1: the build with the C library's malloc, and the throughput stage's specs with it and
# with jemalloc preloaded), KB_EXPORT_PROBLEMS
# (1,6,23,26,47,51,89,98), DRY_RUN (1: run the GPU stages even without a visible GPU, to see
# them fail clearly on a machine without one).
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
out=${OUT:-out}
mkdir -p "$out/tune"
out=$(cd "$out" && pwd)
work="$out/tune"
build=${BUILD_DIR:-build-tune}
mkdir -p "$build"
build_abs=$(cd "$build" && pwd)
jobs=${JOBS:-$(nproc)}
deadline=${DEADLINE:-530}
trials=${TRIALS:-64}
batch=${BATCH:-32}
bench_reserve=${BENCH_RESERVE:-150}
kb_share=${KB_SHARE:-65}
# KernelBench level 1: the 14 problems the default schedule got wrong at 992b90b (long f32
# sums in one thread) and, beside them, GEMMs, elementwise, softmax, norms, pooling,
# reductions, convolutions, scans and losses.
kb_problems=${KB_PROBLEMS:-1,4,6,9,19,23,24,26,33-41,47,48,51,54,88,89,94-96,98-100}
db=${DB:-$build/tune.db}
peaks=${PEAKS:-bench/results/2026-12-03-h200-peaks.json}
export DRAGON_CACHE_DIR=${DRAGON_CACHE_DIR:-$build_abs/kernel-cache}
export DRAGON_COMMIT=${DRAGON_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
summary="$work/summary.md"
status=0
if [ $# -eq 0 ]; then
  set -- build "tune:kernelbench-l1:$kb_problems" tune:dlrm "bench:kernelbench-l1:$kb_problems" bench:dlrm check-default
  planned=1
else
  planned=0
fi
echo "# dragon tune on the GPU machine" >"$summary"
echo >>"$summary"
echo "- commit: $DRAGON_COMMIT (plus the working tree's changes); stages: $*" >>"$summary"

. scripts/device-env.sh
gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw \
  --format=csv,noheader 2>/dev/null | head -n 1)
{
  uname -a
  echo "cores: $(nproc)"
  echo "gpu (name, driver, SM clock, max SM clock, memory clock, temperature, power): ${gpu:-none}"
} >"$work/machine.txt" 2>&1
echo "- machine: $(head -n 1 "$work/machine.txt" | cut -d' ' -f1-3), $(nproc) cores" >>"$summary"
echo "- GPU at the start: ${gpu:-none visible (nvidia-smi found no device)}" >>"$summary"
# h200, h100 or other: which committed data set (data/set/full-KIND) this machine grows.
gpu_kind() { case "$gpu" in *H200*) echo h200 ;; *H100*) echo h100 ;; *) echo other ;; esac; }

left() { echo $((deadline - ($(date +%s) - start))); }
elapsed() { echo $(($(date +%s) - start)); }
note() { echo "- $*" | tee -a "$summary"; }
dragon() { "$build/dragon" "$@"; }
# DRY_RUN=1 runs the GPU stages without a visible GPU (to see how they fail here).
have_gpu() { [ -n "$gpu" ] || [ "${DRY_RUN:-0}" = 1 ]; }
have_dragon() { [ -x "$build/dragon" ]; }
# The database: seeded from the committed one when this machine has none.
seed_db() {
  [ -f "$db" ] && return
  mkdir -p "$(dirname "$db")"
  if [ -f bench/tuning/h200.jsonl.zst ]; then
    # The H100's records too (a lent H100 resumes them; their key names the GPU).
    for committed in bench/tuning/h200.jsonl.zst bench/tuning/h100.jsonl.zst; do
      [ -f "$committed" ] || continue
      dragon db import "$db" "$committed" >"$work/db-import.log" 2>&1
      note "database: imported $committed (exit $?): $(tail -n 1 "$work/db-import.log")"
    done
  elif [ -f bench/tuning/h200.db ]; then
    cp bench/tuning/h200.db "$db"
    note "database: copied bench/tuning/h200.db"
  else
    note "database: none committed, starting empty"
  fi
}
save_db() {
  [ -f "$db" ] && have_dragon || return 0
  # SQLite's backup through the CLI: an export, then a fresh file imported from it, so the
  # copy holds every committed record whatever state the WAL is in.
  dragon db export "$db" -o "$work/all.jsonl" >"$work/db-export.log" 2>&1 || return 0
  rm -f "$work/h200.db" "$work/h200.db-wal" "$work/h200.db-shm"
  dragon db import "$work/h200.db" "$work/all.jsonl" >>"$work/db-export.log" 2>&1
  rm -f "$work/all.jsonl"
  dragon db stats "$work/h200.db" >"$work/db-stats.txt" 2>&1
  # One file per machine kind, as bench/tuning keeps them, zstd-compressed (the H100's
  # 11,719 records were 16.8 MB plain, past what the device tool returns): commit each one
  # there as it is.
  dragon db export "$work/h200.db" -o "$work/h200.jsonl.zst" --device "NVIDIA H200" >>"$work/db-export.log" 2>&1
  dragon db export "$work/h200.db" -o "$work/h100.jsonl.zst" --device "NVIDIA H100 80GB HBM3" \
    >>"$work/db-export.log" 2>&1
}
# The tuning window: what is left before BENCH_RESERVE when measuring stages follow, else
# what is left less 30 s.
wants_bench=0
for stage in "$@"; do
  case "$stage" in bench:* | check-default | kernelbench-export*) wants_bench=1 ;; esac
done
tune_window() {
  if [ "$wants_bench" -eq 1 ]; then echo $(($(left) - bench_reserve)); else echo $(($(left) - 30)); fi
}

# The per-problem table: default schedule, tuned and baselines from one bench run.
table() {
  python3 - "$@" <<'PY'
import json, math, sys
for path in sys.argv[1:]:
    try:
        run = json.load(open(path))
    except Exception as e:
        print(f"\n{path}: unreadable ({e})")
        continue
    g = run.get("gpu", {})
    print(f"\n### {run.get('suite')} ({path.split('/')[-1]}; `{run.get('command', '')}`)\n")
    print(f"{g.get('name')}, driver {g.get('driver_version')}, SM clock {g.get('sm_clock_mhz')} of "
          f"{g.get('max_sm_clock_mhz')} MHz, memory clock {g.get('memory_clock_mhz')} MHz, "
          f"{g.get('temperature_c')} C; commit {run.get('commit')}; eager: {run.get('eager_library')}\n")
    print("| problem | default ms | tuned ms | eager ms | default: speedup over eager | tuned: speedup over eager | cuBLAS/cuDNN ms | note |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    def ms(c):
        return c.get("time", {}).get("median_ms") if c and c.get("status") == "ok" else None
    def fmt(v):
        return f"{v:.4g}" if v else "-"
    ratios = {"default": [], "tuned": [], "best": []}
    correct = {"default": 0, "tuned": 0}
    for p in run.get("problems", []):
        ours, tuned = p.get("ours"), p.get("tuned")
        eager = next((b for b in p.get("baselines", []) if b.get("name", "").startswith("torch eager")), None)
        vendor = [b for b in p.get("baselines", []) if b.get("name", "").lower().startswith(("cublas", "cudnn"))]
        d, t, e = ms(ours), ms(tuned), ms(eager)
        v = min((ms(b) for b in vendor if ms(b)), default=None)
        correct["default"] += 1 if d else 0
        correct["tuned"] += 1 if t else 0
        note = []
        if ours and ours.get("status") != "ok":
            note.append(f"default {ours.get('status')}: {(ours.get('error') or '')[:80]}")
        if tuned and tuned.get("status") != "ok":
            note.append(f"tuned {tuned.get('status')}: {(tuned.get('error') or '')[:80]}")
        if not tuned:
            note.append("no tuned record")
        sd = e / d if d and e else None
        st = e / t if t and e else None
        best = max([x for x in (sd, st) if x], default=None)
        for k, x in (("default", sd), ("tuned", st), ("best", best)):
            if x:
                ratios[k].append(x)
        print(f"| {p.get('id')} {p.get('name', '')[:28]} | {fmt(d)} | {fmt(t)} | {fmt(e)} | "
              f"{fmt(sd)}{'x' if sd else ''} | {fmt(st)}{'x' if st else ''} | {fmt(v)} | {'; '.join(note)} |")
    n = len(run.get("problems", []))
    def geo(xs):
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")
    print(f"\n{n} problems; correct: default {correct['default']}, tuned {correct['tuned']}. Speedup over eager, "
          f"geometric mean: default {geo(ratios['default']):.3f}x over {len(ratios['default'])}, tuned "
          f"{geo(ratios['tuned']):.3f}x over {len(ratios['tuned'])}, the better of the two "
          f"{geo(ratios['best']):.3f}x over {len(ratios['best'])} (faster than eager: "
          f"{sum(1 for x in ratios['best'] if x > 1)})")
PY
}

finish() {
  save_db
  if [ -f "$work/db-stats.txt" ]; then
    { echo; echo "Database after the call (\`dragon db stats\`):"; echo; sed 's/^/    /' "$work/db-stats.txt"; } >>"$summary"
  fi
  benches=$(ls "$work"/bench-*.json 2>/dev/null)
  [ -n "$benches" ] && table $benches >>"$summary"
  gpu_end=$(nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem,temperature.gpu,power.draw --format=csv,noheader 2>/dev/null | head -n 1)
  note "GPU at the end (SM clock, max SM clock, memory clock, temperature, power): ${gpu_end:-none}"
  note "done after $(elapsed) s, exit $status"
  cat "$summary"
  # The device tool returns at most 8 files: the summary, the database export and the bench
  # JSON stay as they are, everything else travels in one archive.
  if [ "${KEEP_FILES:-0}" != 1 ]; then
    # The archive is written outside the folder it packs: tar inside it saw the archive grow
    # ("file changed as we read it", exit 1), and the && chain then kept every file, so the
    # tool left the summary behind (its 8-file limit).
    local archive
    archive=$(mktemp /tmp/dragon-logs.XXXXXX.tgz)
    (cd "$work" && tar czf "$archive" --exclude=summary.md --exclude=h200.jsonl.zst --exclude=h100.jsonl.zst \
       --exclude='bench-*.json' --exclude='h200.db*' --exclude='model.safetensors.part-*' \
       --exclude='efficiency-*.jsonl.zst' .)
    (cd "$work" &&
       find . -maxdepth 1 -type f ! -name summary.md ! -name h200.jsonl.zst ! -name h100.jsonl.zst ! -name 'bench-*.json' \
         ! -name 'model.safetensors.part-*' ! -name 'efficiency-*.jsonl.zst' -delete &&
       find . -mindepth 1 -maxdepth 1 -type d -exec rm -rf {} +)
    mv "$archive" "$work/logs.tgz"
  fi
}
trap finish EXIT

have_dragon && seed_db
for stage in "$@"; do
  if [ "$(left)" -lt 25 ]; then note "$stage: not started, the call's time is up"; status=1; continue; fi
  case "$stage" in
    build)
      # THROUGHPUT_MALLOC_AB=1 builds with the C library's malloc, so that the throughput
      # stage can run each spec with it and with jemalloc preloaded (the same binary).
      malloc=auto
      [ "${THROUGHPUT_MALLOC_AB:-0}" = 1 ] && malloc=system
      cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DDRAGON_WITH_TORCH=ON -DDRAGON_BUILD_BENCHMARKS=OFF \
        -DDRAGON_MALLOC="$malloc" "${device_cmake_args_torch[@]}" >"$work/build.log" 2>&1
      targets=(dragon test_gpu_design_space)
      # The eager baselines need libtorch; without it the benches use our f64 twin.
      grep -q "libtorch: ON" "$work/build.log" && targets+=(dragon_eager_torch)
      timeout "$(left)" cmake --build "$build" -j "$jobs" --target "${targets[@]}" >>"$work/build.log" 2>&1
      s=$?
      if [ $s -ne 0 ] && grep -qE "^FAILED: .*(src/model/|dragon-model)" "$work/build.log"; then
        # The model's code failed against this machine's libtorch: say so, and build the
        # rest without dragon-model, so tuning and the benches still run.
        note "build: the model did not build here (first errors below); building without dragon-model"
        grep -E "error" "$work/build.log" | head -n 12 | sed 's/^/    /' | tee -a "$summary"
        cmake -S . -B "$build" -DDRAGON_MODEL_BINARY=OFF >>"$work/build.log" 2>&1
        timeout "$(left)" cmake --build "$build" -j "$jobs" --target "${targets[@]}" >>"$work/build.log" 2>&1
        s=$?
      fi
      note "build (${targets[*]}): exit $s after $(elapsed) s; $(grep -E 'Little Dragon: (libtorch|CUDA|memory allocator)' "$work/build.log" | tr '\n' ' ')"
      if [ $s -ne 0 ]; then
        grep -E "error|FAILED|CMake Error" "$work/build.log" | head -n 30 | tee -a "$summary"
        status=1
        exit 1
      fi
      seed_db
      ;;
    check-default)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      if [ ! -x "$build/tests/gpu/test_gpu_design_space" ]; then note "$stage: test_gpu_design_space is not built"; status=1; continue; fi
      timeout "$(( $(left) < 150 ? $(left) : 150 ))" "$build/tests/gpu/test_gpu_design_space" \
        --gtest_filter='*TheDefaultSchedule*:*LongF32Sum*' >"$work/check-default.log" 2>&1
      s=$?
      [ $s -eq 0 ] || status=1
      note "default schedule on the device against the interpreter (test_gpu_design_space): exit $s; $(grep -E 'ran on the device|normalized error|^\[  (PASSED|FAILED|SKIPPED)' "$work/check-default.log" | tr '\n' ' ')"
      grep -E '^\[  FAILED|Failure' -A4 "$work/check-default.log" | head -n 40 | sed 's/^/    /' >>"$summary"
      ;;
    tests)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      # Each entry is a test program, or PROGRAM:FILTER to run only the tests the gtest
      # filter FILTER names (test_gpu_design_space:*StagedByColumns*).
      read -r -a gpu_tests <<<"${GPU_TESTS:-test_gpu_tune}"
      gpu_programs=()
      for t in "${gpu_tests[@]}"; do gpu_programs+=("${t%%:*}"); done
      timeout "$(left)" cmake --build "$build" -j "$jobs" --target "${gpu_programs[@]}" >"$work/gpu-tests-build.log" 2>&1 ||
        { note "gpu tests: the build failed"; grep -E "error|FAILED" "$work/gpu-tests-build.log" | head -n 20 >>"$summary"; }
      for entry in "${gpu_tests[@]}"; do
        t=${entry%%:*}
        filter='*'
        [ "$entry" = "$t" ] || filter=${entry#*:}
        DRAGON_EAGER_PLUGIN="$build_abs/libdragon_eager_torch.so" timeout "$(left)" "$build/tests/gpu/$t" \
          --gtest_filter="$filter" >"$work/$t.log" 2>&1
        s=$?
        [ $s -eq 0 ] || status=1
        note "$t ($filter): exit $s; $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' "$work/$t.log" | tr '\n' ' ')"
        grep -E '^\[  FAILED|Failure' -A3 "$work/$t.log" | head -n 30 >>"$summary"
        # What the accuracy tests print (test_gpu_tf32: each kernel's error and tolerance),
        # so the summary says how close a failure was without unpacking the logs.
        grep -E 'normalized error' "$work/$t.log" | head -n 24 | sed 's/^/    /' >>"$summary"
      done
      ;;
    kernelbench-export | kernelbench-export:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      if ! have_dragon; then note "$stage: dragon is not built (run the build stage first)"; status=1; continue; fi
      ids=${stage#kernelbench-export}
      ids=${ids#:}
      # The problems the committed database (bench/tuning/h200.jsonl.zst) holds verified kernels
      # of: GEMMs (one split over two kernels), softmax, GELU, sum, argmax, cumsum, KL
      # divergence (four kernels, three workspaces).
      ids=${ids:-${KB_EXPORT_PROBLEMS:-1,6,23,26,47,51,89,98}}
      kb_dir="$work/kernelbench-export"
      mkdir -p "$kb_dir"
      exported=0
      correct=0
      for id in ${ids//,/ }; do
        if ! dragon export kernelbench "$id" --db "$db" -o "$kb_dir/$id.py" --reference "$kb_dir/${id}_ref.py" \
          >"$kb_dir/$id.log" 2>&1; then
          note "kernelbench-export $id: not exported: $(tail -n 1 "$kb_dir/$id.log")"
          status=1
          continue
        fi
        exported=$((exported + 1))
        # load_inline's nvcc build (torch's headers) takes about a minute, KernelBench's CPU
        # torch.rand of a full-size input several seconds a trial: a check needs minutes.
        if [ "$(left)" -lt 120 ]; then note "kernelbench-export $id: exported, not checked: $(left) s left"; continue; fi
        timeout "$(($(left) < 300 ? $(left) : 300))" python3 scripts/kernelbench_check.py --reference "$kb_dir/${id}_ref.py" \
          --candidate "$kb_dir/$id.py" --json "$kb_dir/$id.json" >>"$kb_dir/$id.log" 2>&1
        s=$?
        if [ $s -eq 0 ]; then correct=$((correct + 1)); else status=1; fi
        note "kernelbench-export $id: check exit $s; $(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
t = lambda k: "%.4g ms" % r[k]["mean_ms"] if k in r else "-"
print("correct %s, trials %s, weights: %s, ModelNew %s, Model %s, speedup %s%s" % (
    r.get("correct"), r.get("trials_passed", "-"), r.get("weights", "-"), t("model_new_time"), t("model_time"),
    "%.3gx" % r["speedup"] if "speedup" in r else "-",
    "; " + r.get("load_error", r.get("runtime_error", r.get("shape_mismatch", "")))[:300]
    if any(k in r for k in ("load_error", "runtime_error", "shape_mismatch")) else ""))
' "$kb_dir/$id.json" 2>/dev/null || tail -n 3 "$kb_dir/$id.log" | tr '\n' ' ')"
      done
      note "kernelbench-export: $correct of $exported exported problems correct under KernelBench's protocol"
      ;;
    profile:*:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      if ! have_dragon; then note "$stage: dragon is not built (run the build stage first)"; status=1; continue; fi
      suite=${stage#profile:}
      ids=${suite#*:}
      suite=${suite%%:*}
      profile_dir="$work/profile"
      mkdir -p "$profile_dir"
      # Nsight Compute and cuobjdump, on the PATH or where CUDA and Nsight install them.
      ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
      cuobjdump_bin=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -n 1)
      [ -n "$ncu_bin" ] || note "$stage: no ncu found (PATH, /usr/local/cuda/bin, /opt/nvidia/nsight-compute): SASS mix only"
      [ -n "$cuobjdump_bin" ] || note "$stage: no cuobjdump found: ncu only"
      for id in ${ids//,/ }; do
        [ "$(left)" -lt 40 ] && { note "profile $suite $id: not started, $(left) s left"; status=1; break; }
        p="$profile_dir/$suite-$id"
        spec=$(dragon bench "$suite" --list 2>/dev/null | awk -F'\t' -v id="$id" '$1 == id { print $4 }')
        if [ -z "$spec" ]; then note "profile $suite $id: no such problem"; status=1; continue; fi
        # The best verified record of this GPU, or the default schedule when there is none.
        script_args=()
        if [ "${PROFILE_SCHEDULE:-best}" != default ] &&
           dragon best "$spec" --db "$db" --target cuda --script >"$p.script" 2>/dev/null && [ -s "$p.script" ]; then
          script_args=(--script "$p.script")
        fi
        if ! dragon build "$spec" "${script_args[@]}" --target cuda -o "$p.cu" >"$p.log" 2>&1 ||
           ! dragon build "$spec" "${script_args[@]}" --target cuda --emit cubin -o "$p.cubin" >>"$p.log" 2>&1; then
          note "profile $suite $id: does not build: $(tail -n 2 "$p.log" | tr '\n' ' ')"; status=1; continue
        fi
        # The instruction mix: every SASS opcode of the kernels, counted, and the same for the
        # longest loop that holds a tensor-core or FMA instruction (the main loop).
        [ -n "$cuobjdump_bin" ] && "$cuobjdump_bin" -sass "$p.cubin" >"$p.sass" 2>>"$p.log"
        touch "$p.sass"
        python3 - "$p.sass" >"$p-mix.txt" <<'PY'
import collections, re, sys
lines = open(sys.argv[1]).read().splitlines()
ins = []  # (function number, address, opcode, line)
function = 0
for line in lines:
    if "Function :" in line:
        function += 1
    m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m:
        ins.append((function, int(m.group(1), 16), m.group(3), line))
print(f"{len(ins)} SASS instructions")
def mix(items):
    c = collections.Counter(op.split(".")[0] for _, _, op, _ in items)
    return ", ".join(f"{op} {n}" for op, n in c.most_common(24))
print("whole:", mix(ins))
# Backward branches: BRA to a lower address closes a loop.
best = None
for fn, addr, op, line in ins:
    target = re.search(r"0x([0-9a-f]+)", line.split("BRA", 1)[1]) if op.startswith("BRA") else None
    if target:
        to = int(target.group(1), 16)
        body = [x for x in ins if x[0] == fn and to <= x[1] <= addr]
        if to < addr and any(x[2].startswith(("HMMA", "HGMMA", "FFMA", "IMMA")) for x in body):
            if best is None or len(body) > len(best):
                best = body
if best:
    print(f"main loop: {len(best)} instructions:", mix(best))
PY
        # ncu on the recorded launch: every section, the clocks left alone (METHOD.md).
        # Every kernel of the function once, on its second run (the first warms the caches).
        kernels=$(grep -oE '^//   [A-Za-z0-9_]+: --grid' "$p.cu" | sed 's#^//   ##; s#: --grid$##')
        nk=$(echo "$kernels" | wc -l)
        s="not run"
        if [ -n "$ncu_bin" ]; then
          timeout "$(($(left) < 150 ? $(left) : 150))" "$ncu_bin" --clock-control none --set full --target-processes all \
            -k "regex:^($(echo "$kernels" | paste -sd'|'))\$" --launch-skip "$nk" --launch-count "$nk" \
            -o "$p" python3 scripts/profile_kernel.py "$p.cu" "$p.cubin" >>"$p.log" 2>&1
          s=$?
          [ -f "$p.ncu-rep" ] && "$ncu_bin" -i "$p.ncu-rep" --page details >"$p-ncu.txt" 2>>"$p.log"
        fi
        touch "$p-ncu.txt"
        note "profile $suite $id ($([ ${#script_args[@]} -gt 0 ] && echo 'best record' || echo 'default schedule')): ncu exit $s; $(head -n 1 "$p-mix.txt")"
        { sed 's/^/    /' "$p-mix.txt"
          grep -E "^\s+(Duration|Compute \(SM\) Throughput|Memory Throughput|DRAM Throughput|L1/TEX Hit Rate|Executed Ipc Active|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Theoretical Occupancy|Warp Cycles Per Issued Instruction|Block Limit [A-Z][a-z]+|Dynamic Shared Memory Per Block|L1/TEX Cache Throughput|L2 Cache Throughput|No Eligible|One or More Eligible|Avg. Active Threads Per Warp)\b" "$p-ncu.txt" |
            sed 's/^ */    /' | head -n 40
          grep -E "^\s+(OPT|WRN)\s" -A2 "$p-ncu.txt" | head -n 30 | sed 's/^ */    /'
        } >>"$summary"
      done
      ;;
    throughput)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      # Small kernels, many candidates: the rate the measurement pipeline sustains. A fresh
      # database each time, so every candidate is built and measured.
      # An elementwise op (the smallest kernels: NVRTC's fixed cost, batched, dominates), a
      # softmax (reductions, loops of transcendental calls) and a GEMM (register tiles). With
      # THROUGHPUT_EAGER=1 the softmax once more with CUDA_MODULE_LOADING=EAGER: whether a
      # fresh module's first launch (lazy loading) is what its checked calls pay for (it was
      # not: 3.17 against 3.19 ms, 2026-12-07-h100-session23.md).
      # THROUGHPUT_MALLOC_AB=1 (with the build it configures): each spec with the C library's
      # malloc and again with jemalloc preloaded, the allocator's share of the rate.
      specs=("relu:shape=1024x1024" "softmax:shape=256x1024" "matmul:m=256,n=256,k=256")
      runs=("${specs[@]}")
      [ "${THROUGHPUT_EAGER:-0}" = 1 ] && runs+=("softmax:shape=256x1024 eager-loading")
      [ "${THROUGHPUT_MALLOC_AB:-0}" = 1 ] && runs+=("${specs[@]/%/ jemalloc-preloaded}")
      jemalloc_so=$device_prefix/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
      for run in "${runs[@]}"; do
        spec=${run%% *}
        name=throughput-${spec%%:*}
        loading=LAZY
        preload=
        if [ "$run" = "$spec eager-loading" ]; then name=$name-eager-loading; loading=EAGER; fi
        if [ "$run" = "$spec jemalloc-preloaded" ]; then
          [ -e "$jemalloc_so" ] || { note "$name: no libjemalloc.so.2 in .deb (scripts/fetch-device-debs.sh)"; continue; }
          name=$name-jemalloc; preload=$jemalloc_so
        fi
        rm -f "$work/$name.db"*
        LD_PRELOAD=$preload CUDA_MODULE_LOADING=$loading timeout "$(left)" "$build/dragon" tune "$spec" --target cuda \
          --trials "${THROUGHPUT_TRIALS:-256}" --batch 128 \
          --db "$work/$name.db" --curve "$work/$name-curve.json" >"$work/$name.log" 2>&1
        note "$name: exit $?; $(grep -E 'candidates/s' "$work/$name.log" | tail -n 1 | tr -d '\r' | tail -c 200)"
        note "$name: $(grep -E '^measurement:' "$work/$name.log")"
      done
      ;;
    tune:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      IFS=: read -r _ suite ids <<<"$stage"
      name="tune-$suite"
      args=()
      [ -n "$ids" ] && args+=(--problems "$ids")
      window=$(tune_window)
      # KernelBench first takes its share of the window; the last tuning stage takes the rest.
      budget=$window
      [ "$planned" -eq 1 ] && [ "$suite" = kernelbench-l1 ] && budget=$((window * kb_share / 100))
      if [ "$budget" -lt 20 ]; then note "$stage: not started, $budget s of tuning left"; continue; fi
      # No round starts after the budget; a round under way is cut 30 s after it.
      DRAGON_EAGER_PLUGIN="$build_abs/libdragon_eager_torch.so" timeout --kill-after=10 "$((budget + 30))" \
        "$build/dragon" tune --suite "$suite" "${args[@]}" --target cuda --trials "$trials" --batch "$batch" \
        --db "$db" --time-budget "$budget" --curve "$work/$name-curve.json" >"$work/$name.log" 2>&1
      s=$?
      [ $s -eq 0 ] || status=1
      note "$stage: exit $s at $(elapsed) s of the call (its budget $budget s); $(grep -E 'candidates/s' "$work/$name.log" | tail -n 1 | tr -d '\r' | tail -c 200)"
      { sed -n '/^task /,$p' "$work/$name.log" | sed 's/^/    /'; grep -E "error|Error" "$work/$name.log" | head -n 5 | sed 's/^/    /'; } >>"$summary"
      save_db
      ;;
    data:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      # The training set (issue 19): one shard of the corpus tuned into the same database,
      # its examples mined into $OUT/tune/data (commit the shard and the database export).
      shard=${stage#data:}
      # The committed data set of this GPU kind (data/set/full-h200, data/set/full-h100)
      # grows: its shards and summaries are copied in first, so the manifest written after
      # this shard lists them all and `sft` trains on them all. Commit $OUT/tune/data back
      # there (logs.tgz holds it).
      kind=$(gpu_kind)
      if [ "${CORPUS:-full}" = full ] && [ -d "data/set/full-$kind" ] && [ ! -e "$work/data/manifest.json" ]; then
        mkdir -p "$work/data" && cp "data/set/full-$kind"/shard-* "$work/data/" 2>/dev/null
        note "$stage: continuing data/set/full-$kind ($(ls "$work/data" | grep -c '\.jsonl\.zst$') shards)"
      fi
      budget=$(( $(left) - 40 - ${DATA_RESERVE:-0} ))
      if [ "$budget" -lt 20 ]; then note "$stage: not started, $budget s left"; continue; fi
      timeout --kill-after=10 "$((budget + 30))" "$build/dragon" data build --corpus "${CORPUS:-full}" --shard "$shard" \
        --target cuda --trials "$trials" --batch "$batch" --db "$db" --out "$work/data" --time-budget "$budget" \
        >"$work/data.log" 2>&1
      s=$?
      [ $s -eq 0 ] || status=1
      note "$stage: exit $s at $(elapsed) s of the call (its budget $budget s); $(tail -n 3 "$work/data.log" | tr '\n' ' ' | tail -c 300)"
      if [ $s -eq 124 ] || [ $s -eq 137 ]; then
        # Killed before it wrote the shard: every record it measured is in the database, so
        # the shard is mined from there.
        IFS=, read -r gpu_name gpu_driver _ <<<"$gpu"
        "$build/dragon" data build --corpus "${CORPUS:-full}" --shard "$shard" --target cuda --trials "$trials" \
          --db "$db" --out "$work/data" --mine-only --device "$gpu_name" --driver "${gpu_driver# }" --quiet \
          >>"$work/data.log" 2>&1
        note "$stage: --mine-only exit $? after $(elapsed) s; $(tail -n 1 "$work/data.log" | cut -c1-200)"
      fi
      "$build/dragon" data stats "$work/data" >>"$work/data.log" 2>&1 && note "$stage: dragon data stats passes"
      save_db
      ;;
    bench:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      IFS=: read -r _ suite ids <<<"$stage"
      name="bench-$suite"
      args=()
      [ -n "$ids" ] && args+=(--problems "$ids")
      [ -f "$db" ] && args+=(--db "$db")
      # BENCH_MAX_TRIALS: each problem's best among the first N scripts searched (the issue's
      # "at most 200 measured trials per problem").
      [ -f "$db" ] && [ -n "${BENCH_MAX_TRIALS:-}" ] && args+=(--max-trials "$BENCH_MAX_TRIALS")
      # The H200's measured peaks (for achieved fractions only), not measured again each call.
      [ -f "$peaks" ] && args+=(--peaks "$peaks")
      # The first bench of the plan leaves the second a third of what is left.
      limit=$(left)
      [ "$planned" -eq 1 ] && [ "$suite" = kernelbench-l1 ] && limit=$(($(left) * 2 / 3))
      DRAGON_EAGER_PLUGIN="$build_abs/libdragon_eager_torch.so" timeout --kill-after=10 "$limit" \
        "$build/dragon" bench "$suite" "${args[@]}" --max-seconds "${MAX_SECONDS:-0.2}" \
        --out "$work/$name.json" --report "$work/$name.html" >"$work/$name.log" 2>&1
      s=$?
      [ $s -eq 0 ] || status=1
      note "$stage: exit $s after $(elapsed) s; $(tail -n 2 "$work/$name.log" | tr '\n' ' ' | tail -c 300)"
      ;;
    sft)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      # The little dragon (issue 20) trained on this call's data set; cut at a step boundary
      # when the call's time runs out, so a later call on this machine resumes it.
      sft_data=${SFT_DATA:-$work/data}
      # No data stage in this call: the committed data set of this GPU kind, or of another.
      [ -f "$sft_data/manifest.json" ] || [ -f "$sft_data/train.jsonl" ] || sft_data=data/set/full-$(gpu_kind)
      [ -d "$sft_data" ] || sft_data=$(ls -d data/set/full-*/ 2>/dev/null | head -n 1)
      sft_data=${sft_data%/}
      sft_out="$build/sft"
      [ "${SFT_FRESH:-0}" = 1 ] && rm -rf "$sft_out"
      sft_args=(--data "$sft_data" --out "$sft_out" --device cuda --time-budget "$(( $(left) - 45 ))" --log-every 20)
      if [ -f "$sft_out/checkpoint.safetensors" ]; then
        sft_args+=(--resume)
      else
        # Spec prompts: with IR text an example ran to 3,400 tokens, and a 4,096-token context
        # at batch 32 ran out of the H100's memory (attention is computed whole).
        sft_args+=(--preset "${SFT_PRESET:-small}" --prompt "${SFT_PROMPT:-spec}" --context "${SFT_CONTEXT:-2048}"
                   --steps "${SFT_STEPS:-600}" --batch "${SFT_BATCH:-16}"
                   --lr "${SFT_LR:-5e-4}" --warmup 50 --checkpoint-every 100)
      fi
      timeout --kill-after=10 "$(( $(left) - 15 ))" "$build/dragon" train sft "${sft_args[@]}" >"$work/sft.log" 2>&1
      s=$?
      [ $s -eq 0 ] || status=1
      note "$stage: exit $s after $(elapsed) s; $(grep -E '^train sft: [0-9,]+ parameters' "$work/sft.log" | head -n 1 | cut -c1-200)"
      grep -E '^valid step' "$work/sft.log" | tail -n 3 | sed 's/^/    /' | tee -a "$summary"
      note "$stage: $(tail -n 1 "$work/sft.log" | cut -c1-300)"
      if [ -f "$sft_out/model.safetensors" ]; then
        split -b 15M -d "$sft_out/model.safetensors" "$work/model.safetensors.part-"
        note "$stage: model.safetensors $(stat -c %s "$sft_out/model.safetensors") bytes, sha256 $(sha256sum "$sft_out/model.safetensors" | cut -c1-16), in $(ls "$work"/model.safetensors.part-* | wc -l) parts"
      fi
      ;;
    evaluate|evaluate:shipped)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      if ! have_dragon; then note "$stage: dragon is not built (run the build stage first)"; status=1; continue; fi
      # The model on examples no training run reads (issue 20's targets), measured here.
      # evaluate:shipped always takes the shipped model, so one call can measure it beside the
      # model its sft stage trains; each model's lines go to a file of their own.
      eval_model=${EVAL_MODEL:-}
      [ "$stage" = evaluate:shipped ] && eval_model=data/model/model.safetensors
      [ -z "$eval_model" ] && [ -f "$build/sft/model.safetensors" ] && eval_model="$build/sft/model.safetensors"
      [ -z "$eval_model" ] && eval_model=data/model/model.safetensors
      label=trained
      [ "$eval_model" = data/model/model.safetensors ] && label=shipped
      eval_data=${EVAL_DATA:-$work/data}
      [ -f "$eval_data/manifest.json" ] || eval_data=data/set/full-$(gpu_kind)
      # A GPU kind with no committed set yet evaluates on another kind's held-out workloads:
      # every figure is measured again here, the search's best script included.
      [ -f "$eval_data/manifest.json" ] || eval_data=$(ls -d data/set/full-*/ 2>/dev/null | head -n 1)
      eval_data=${eval_data%/}
      modes=(constrained)
      [ "${EVAL_UNCONSTRAINED:-0}" = 1 ] && modes+=(unconstrained)
      for mode in "${modes[@]}"; do
        flags=()
        [ "$mode" = unconstrained ] && flags+=(--unconstrained)
        # Each mode gets an equal share of what is left; a stopped run resumes on a warm machine.
        share=$(( ($(left) - 20) / ${#modes[@]} ))
        [ "$mode" = unconstrained ] && share=$(( $(left) - 20 ))
        # EVAL_SECONDS caps a mode, so the stages after it still run.
        [ -n "${EVAL_SECONDS:-}" ] && [ "$EVAL_SECONDS" -lt "$share" ] && share=$EVAL_SECONDS
        timeout --kill-after=10 "$share" "$build/dragon" evaluate --data "$eval_data" --model "$eval_model" \
          --target cuda --limit "${EVAL_LIMIT:-20}" --per-workload "${EVAL_PER_WORKLOAD:-1}" \
          --attempts "${EVAL_ATTEMPTS:-8}" "${flags[@]}" \
          --out "$build/eval-$label-$mode.jsonl" >"$work/eval-$label-$mode.log" 2>&1
        note "$stage ($label model, $mode): exit $? after $(elapsed) s; model $eval_model, data $eval_data"
        # The summary of every line so far (a run cut by the timeout printed none).
        "$build/dragon" evaluate --data "$eval_data" --model "$eval_model" --target cuda --limit 0 \
          --attempts "${EVAL_ATTEMPTS:-8}" "${flags[@]}" --out "$build/eval-$label-$mode.jsonl" --summary-only 2>&1 |
          sed 's/^/    /' | tee -a "$summary"
        cp "$build/eval-$label-$mode.jsonl" "$work/" 2>/dev/null
      done
      ;;
    efficiency:*)
      if ! have_gpu; then note "$stage: skipped, no GPU"; status=1; continue; fi
      # Issue 17's search efficiency: the problems tuned towards EFFICIENCY_TRIALS in a
      # database of their own, which resumes across calls (kept in BUILD_DIR on a warm machine,
      # else imported from the committed bench/tuning/efficiency-KIND.jsonl.zst) and comes back
      # as $OUT/tune/efficiency-KIND.jsonl.zst: commit it there. The curve is the records' own
      # (dragon db curve: trials are distinct scripts in commit order), whichever call measured them.
      IFS=: read -r _ suite ids <<<"$stage"
      kind=$(gpu_kind)
      edb="$build/efficiency-$kind.db"
      committed=bench/tuning/efficiency-$kind.jsonl.zst
      if [ ! -f "$edb" ] && [ -f "$committed" ]; then
        dragon db import "$edb" "$committed" >"$work/efficiency-import.log" 2>&1
        note "$stage: imported $committed (exit $?): $(tail -n 1 "$work/efficiency-import.log")"
      fi
      name="efficiency-$suite"
      DRAGON_EAGER_PLUGIN="$build_abs/libdragon_eager_torch.so" timeout --kill-after=10 "$(( $(left) - 20 ))" \
        "$build/dragon" tune --suite "$suite" --problems "$ids" --target cuda \
        --trials "${EFFICIENCY_TRIALS:-1000}" --batch "$batch" --db "$edb" --time-budget "$(( $(left) - 40 ))" \
        >"$work/$name.log" 2>&1
      note "$stage: exit $? after $(elapsed) s; $(grep -E 'candidates/s' "$work/$name.log" | tail -n 1 | tr -d '\r' | tail -c 200)"
      grep -E '^(search|measurement):' "$work/$name.log" | sed 's/^/    /' >>"$summary"
      dragon db curve "$edb" --at 64 --json "$work/efficiency-curve.json" 2>&1 | sed 's/^/    /' | tee -a "$summary"
      dragon db export "$edb" -o "$work/efficiency-$kind.jsonl.zst" >>"$work/db-export.log" 2>&1
      note "$stage: database exported to efficiency-$kind.jsonl.zst (exit $?)"
      ;;
    *) note "unknown stage $stage"; status=1 ;;
  esac
done
exit "$status"
