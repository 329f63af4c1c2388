#!/usr/bin/env python3
"""CPU time (user+sys) of compiling a fixed sample of a build tree's translation units,
for comparing compile flags where a whole from-scratch build cannot be timed (a shared,
loaded machine). Takes every STRIDE-th source of compile_commands.json in path order, so
two trees of the same sources sample the same files; objects go to a scratch folder.
Usage: .ci/compile_sample.py BUILD_DIR STRIDE [JOBS [PATH_PREFIX ...]]   (prefixes: e.g. src/ir/)"""
import concurrent.futures
import json
import os
import resource
import shlex
import subprocess
import sys
import tempfile

build_dir, stride = sys.argv[1], int(sys.argv[2])
jobs = int(sys.argv[3]) if len(sys.argv) > 3 else 2
source_root = os.path.dirname(os.path.abspath(build_dir.rstrip("/")))
with open(os.path.join(build_dir, "compile_commands.json")) as f:
    entries = json.load(f)
prefixes = tuple(sys.argv[4:])
if prefixes:
    entries = [e for e in entries if os.path.relpath(e["file"], source_root).startswith(prefixes)]
entries.sort(key=lambda e: os.path.relpath(e["file"], source_root))
sample = entries[::stride]
scratch = tempfile.mkdtemp(prefix="compile-sample-")
env = dict(os.environ, CCACHE_DISABLE="1")


def compile_one(index_entry):
    index, entry = index_entry
    args = shlex.split(entry["command"])
    args[args.index("-o") + 1] = os.path.join(scratch, f"{index}.o")
    subprocess.run(["nice"] + args, cwd=entry["directory"], env=env, check=True)
    return os.path.getsize(os.path.join(scratch, f"{index}.o"))


before = resource.getrusage(resource.RUSAGE_CHILDREN)
with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
    sizes = list(pool.map(compile_one, enumerate(sample)))
after = resource.getrusage(resource.RUSAGE_CHILDREN)
user = after.ru_utime - before.ru_utime
system = after.ru_stime - before.ru_stime
print(f"{build_dir}: {len(sample)} of {len(entries)} sources (every {stride}th), "
      f"CPU user {user:.0f} s + sys {system:.0f} s = {user + system:.0f} s, objects {sum(sizes) / 1e6:.1f} MB")
for entry in sample:
    print("  ", os.path.relpath(entry["file"], source_root))
