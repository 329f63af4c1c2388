#!/usr/bin/env python3
"""Launches the kernels `dragon build --target cuda` printed on the GPU, outside Little Dragon,
so that a profiler (ncu, compute-sanitizer) sees exactly that code run at its recorded launch
shape: the code is the CUBIN `dragon build --emit cubin` wrote (NVRTC with Little Dragon's
options), and the grid, block, dynamic shared memory and arguments come from the
"// Launches" comments after the printed source.

Floating-point arguments hold standard normal values; integer ones hold zeros, which keep
any index read from them in bounds (the kernel's results are not checked here: `dragon
verify` and the tuner's harness do that). Workspaces are zeroed.

Usage: python3 scripts/profile_kernel.py KERNEL.cu KERNEL.cubin [--launches N]
Needs CuPy (NVRTC and the driver) on the GPU machine.
"""
import argparse
import re
import sys

LAUNCH = re.compile(r"^//   (\w+): --grid (\d+),(\d+),(\d+) --block (\d+),(\d+),(\d+) --shared (\d+)$")
ARGUMENTS = re.compile(r"^//     arguments: (.*)$")
PARAMETER = re.compile(r"^(\w+) (\w+)\[([\d, ]*)\]$")
WORKSPACE = re.compile(r"^(\w+) workspace of (\d+) bytes$")

DTYPES = {"f16": "float16", "bf16": None, "f32": "float32", "f64": "float64", "i8": "int8", "i32": "int32",
          "i64": "int64", "u8": "uint8", "bool": "bool"}


def read_launches(lines):
    """[(name, grid, block, shared, [argument description])] in launch order."""
    launches = []
    for number, line in enumerate(lines, 1):
        m = LAUNCH.match(line)
        if m:
            launches.append([m.group(1), tuple(int(x) for x in m.group(2, 3, 4)),
                             tuple(int(x) for x in m.group(5, 6, 7)), int(m.group(8)), None])
            continue
        m = ARGUMENTS.match(line)
        if m:
            if not launches or launches[-1][4] is not None:
                sys.exit(f"line {number}: arguments without the launch line before them")
            launches[-1][4] = m.group(1).split("; ") if m.group(1) else []
    if not launches:
        sys.exit("no '// Launches' comments: give the output of `dragon build SPEC --target cuda` (source)")
    for launch in launches:
        if launch[4] is None:
            sys.exit(f"kernel {launch[0]}: its '//     arguments:' line is missing")
    return launches


def make_argument(description, buffers, cupy):
    """The device array an argument names, made once per name and shared by every kernel."""
    m = PARAMETER.match(description) or WORKSPACE.match(description)
    if not m:
        sys.exit(f"argument '{description}': not 'NAME DTYPE[SHAPE]' or 'NAME workspace of N bytes'")
    name = m.group(1)
    if name in buffers:
        return buffers[name]
    if description.endswith(" bytes"):
        array = cupy.zeros(int(m.group(2)), dtype=cupy.uint8)
    else:
        dtype, shape = m.group(2), [int(x) for x in m.group(3).split(",") if x.strip()]
        size = 1
        for extent in shape:
            size *= extent
        if dtype == "bf16":
            # No bf16 in CuPy: random bits of normal f32 values, the upper halves.
            array = (cupy.random.standard_normal(size, dtype=cupy.float32).view(cupy.uint32) >> 16).astype(cupy.uint16)
        elif dtype not in DTYPES:
            sys.exit(f"argument '{description}': unknown dtype {dtype}")
        elif dtype.startswith("f"):
            array = cupy.random.standard_normal(size, dtype=cupy.float32).astype(DTYPES[dtype])
        else:
            array = cupy.zeros(size, dtype=DTYPES[dtype])
    buffers[name] = array
    return array


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("kernel", help="the CUDA source `dragon build --target cuda` printed")
    parser.add_argument("cubin", help="the same build's CUBIN (`dragon build ... --emit cubin -o FILE`)")
    parser.add_argument("--launches", type=int, default=3, help="how many times the whole function runs")
    options = parser.parse_args()
    import cupy

    with open(options.kernel) as f:
        source = f.read()
    launches = read_launches(source.splitlines())
    module = cupy.RawModule(path=options.cubin)
    buffers = {}
    kernels = []
    for name, grid, block, shared, arguments in launches:
        kernel = module.get_function(name)
        if shared > 48 * 1024:
            kernel.max_dynamic_shared_size_bytes = shared
        kernels.append((kernel, grid, block, shared, [make_argument(a, buffers, cupy) for a in arguments]))
    for _ in range(options.launches):
        for kernel, grid, block, shared, arguments in kernels:
            kernel(grid, block, tuple(arguments), shared_mem=shared)
    cupy.cuda.runtime.deviceSynchronize()
    print(f"{options.kernel}: {len(kernels)} kernel(s) launched {options.launches} time(s)")


if __name__ == "__main__":
    main()
