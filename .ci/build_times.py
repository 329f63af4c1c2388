#!/usr/bin/env python3
"""Where a build and test run spent its time, from a build tree's .ninja_log (compile and
link durations per target) and ctest's Testing/Temporary/LastTest.log (test time per
GoogleTest program). Reads logs only; the durations are wall times of each step, so on a
loaded machine they are inflated alike.
Usage: .ci/build_times.py BUILD_DIR [MORE_BUILD_DIRS ...]"""
import collections
import os
import re
import sys


def ninja_steps(build_dir):
    """(output, seconds) of the last run of each step in the log."""
    path = os.path.join(build_dir, ".ninja_log")
    if not os.path.exists(path):
        return []
    steps = {}
    with open(path) as log:
        for line in log:
            if line.startswith("#"):
                continue
            start, end, _, output, _ = line.rstrip("\n").split("\t")
            steps[output] = (int(end) - int(start)) / 1000.0
    return list(steps.items())


def target_of(output):
    """The CMake target an output belongs to and whether it is a compile step."""
    match = re.search(r"CMakeFiles/([^/]+)\.dir/", output)
    if match:
        return match.group(1), output.endswith(".o")
    name = os.path.basename(output)
    for prefix, suffix in (("lib", ".a"), ("lib", ".so")):
        if name.startswith(prefix) and name.endswith(suffix):
            return name[len(prefix):-len(suffix)], False
    return name, False


def report_build(build_dir):
    steps = ninja_steps(build_dir)
    if not steps:
        print(f"\n{build_dir}: no .ninja_log")
        return
    compile_s = collections.Counter()
    link_s = collections.Counter()
    objects = collections.Counter()
    for output, seconds in steps:
        target, is_compile = target_of(output)
        if is_compile:
            compile_s[target] += seconds
            objects[target] += 1
        else:
            link_s[target] += seconds
    with open(os.path.join(build_dir, ".ninja_log")) as log:
        ends = [int(l.split("\t")[1]) for l in log if not l.startswith("#")]
    total_compile = sum(compile_s.values())
    total_link = sum(link_s.values())
    print(f"\n{build_dir}: {len(steps)} steps, span {max(ends) / 1000:.0f} s; step time summed: "
          f"compile {total_compile:.0f} s ({sum(objects.values())} objects), link/archive {total_link:.0f} s")
    print("  heaviest targets (compile s / objects / link s):")
    for target, seconds in sorted(compile_s.items(), key=lambda kv: -(kv[1] + link_s[kv[0]]))[:20]:
        print(f"    {target:40s} {seconds:7.1f} {objects[target]:4d} {link_s[target]:7.1f}")
    print("  slowest objects:")
    for output, seconds in sorted((s for s in steps if s[0].endswith(".o")), key=lambda s: -s[1])[:12]:
        print(f"    {seconds:6.1f}  {output}")
    print("  slowest links:")
    for output, seconds in sorted((s for s in steps if not s[0].endswith(".o")), key=lambda s: -s[1])[:12]:
        print(f"    {seconds:6.1f}  {output}")


def report_tests(build_dir):
    path = os.path.join(build_dir, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(path):
        return
    per_program = collections.Counter()
    count = collections.Counter()
    tests = []
    program = name = None
    with open(path, errors="replace") as log:
        for line in log:
            match = re.match(r"\d+/\d+ Test: (.*)", line)
            if match:
                name = match.group(1).strip()
            match = re.match(r'Command: "([^"]+)"', line)
            if match:
                program = os.path.basename(match.group(1))
            match = re.match(r"Test time = +([0-9.]+) sec", line)
            if match and program:
                seconds = float(match.group(1))
                per_program[program] += seconds
                count[program] += 1
                tests.append((seconds, name))
    print(f"\n{build_dir}: {len(tests)} tests, {sum(per_program.values()):.0f} s summed (ctest runs them -j)")
    print("  per program (s summed / tests):")
    for program, seconds in per_program.most_common(15):
        print(f"    {program:40s} {seconds:7.1f} {count[program]:5d}")
    print("  slowest tests:")
    for seconds, name in sorted(tests, reverse=True)[:12]:
        print(f"    {seconds:6.1f}  {name}")


for build_dir in sys.argv[1:]:
    report_build(build_dir)
    report_tests(build_dir)
