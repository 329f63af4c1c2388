#!/usr/bin/env python3
"""Do two builds of dragon generate the same code for the scripts search has found?

A change meant to keep every kernel (a faster simplifier, a cheaper analysis in code
generation) is checked here against the committed tuning records: each distinct
(workload, script) of bench/tuning/*.jsonl.zst that a CUDA record measured as correct is
built by both binaries (`dragon build SPEC --script FILE --target cuda`), and their
printed CUDA compared byte for byte. Tensor-core scripts (tensorize, mma, wgmma) come
first, the rest after, each group in a fixed shuffled order.

  scripts/compare_generated_code.py OLD_DRAGON NEW_DRAGON [--tensor-core N] [--other N]

Exit status 0 when every script prints the same code with both (a script that fails to
build with both counts as the same; failing with one only is a difference).
"""
import argparse
import glob
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read_records(paths):
    """(spec, script) of every distinct correct CUDA record, in file order."""
    specs, seen, cases = {}, set(), []
    for path in paths:
        try:
            text = subprocess.run(["zstdcat", path], capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as e:
            sys.exit(f"{path}: cannot decompress it with zstdcat: {e}")
        for number, line in enumerate(text.splitlines(), 1):
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{number}: not JSON: {e}")
            if row.get("kind") == "workload":
                specs[row["hash"]] = row.get("spec", "")
            elif (row.get("kind") == "record" and row.get("status") == "ok" and row.get("script")
                  and row.get("target", {}).get("name") == "cuda"):
                key = (row["workload"], row["script"])
                if key not in seen:
                    seen.add(key)
                    cases.append(key)
    return [(specs[w], s) for w, s in cases if specs.get(w)]


def generated(dragon, spec, script_path):
    run = subprocess.run([dragon, "build", spec, "--script", script_path, "--target", "cuda"],
                         capture_output=True)
    if run.returncode != 0:
        lines = run.stderr.decode(errors="replace").strip().splitlines()
        return "failed: " + (lines[-1] if lines else f"exit {run.returncode}")
    return hashlib.sha256(run.stdout).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the dragon binary before the change")
    parser.add_argument("new", help="the dragon binary after it")
    parser.add_argument("--tensor-core", type=int, default=250, help="tensor-core scripts to compare")
    parser.add_argument("--other", type=int, default=50, help="other scripts to compare")
    parser.add_argument("--records", nargs="*", default=sorted(glob.glob(os.path.join(ROOT, "bench/tuning/*.jsonl.zst"))))
    args = parser.parse_args()
    for binary in (args.old, args.new):
        if not os.access(binary, os.X_OK):
            sys.exit(f"{binary}: not an executable dragon binary")
    if not args.records:
        sys.exit("no tuning records given and none under bench/tuning")

    cases = read_records(args.records)
    random.Random(1).shuffle(cases)
    tensor_core = [c for c in cases if any(w in c[1] for w in ("tensorize", "mma", "wgmma"))]
    other = [c for c in cases if c not in tensor_core]
    chosen = tensor_core[:args.tensor_core] + other[:args.other]
    print(f"{len(cases)} distinct correct CUDA scripts in {len(args.records)} files; comparing "
          f"{min(len(tensor_core), args.tensor_core)} tensor-core and {min(len(other), args.other)} others")
    same = built = 0
    with tempfile.TemporaryDirectory() as scratch:
        for i, (spec, script) in enumerate(chosen):
            path = os.path.join(scratch, "script.txt")
            with open(path, "w") as f:
                f.write(script)
            old, new = generated(args.old, spec, path), generated(args.new, spec, path)
            built += not old.startswith("failed")
            if old == new:
                same += 1
            else:
                print(f"DIFFERENT: {spec}\n  old: {old}\n  new: {new}")
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(chosen)}", flush=True)
    print(f"same code: {same} of {len(chosen)} ({built} built by the old binary)")
    return 0 if same == len(chosen) else 1


if __name__ == "__main__":
    sys.exit(main())
