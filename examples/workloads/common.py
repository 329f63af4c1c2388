"""Shared timing loop for the profiling workloads: warm-up, then timed iterations inside
an NVTX range named "measure", reporting the median time per iteration.

WORKLOAD_TORCH_PROFILER=1 runs the timed iterations under torch.profiler recording CUDA
activity only (Kineto, another CUPTI tracer): the yardstick for dragon profile's overhead.

Randomly initialised models only; nothing is downloaded."""
import argparse
import contextlib
import os
import statistics
import time

import torch


def parse_args(description, **defaults):
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--warmup", type=int, default=defaults.get("warmup", 5))
    parser.add_argument("--iters", type=int, default=defaults.get("iters", 20))
    parser.add_argument("--batch", type=int, default=defaults.get("batch", 8))
    parser.add_argument("--seq", type=int, default=defaults.get("seq", 512))
    return parser.parse_args()


def run(name, step, args):
    """Runs step() warmup + iters times; prints one parseable result line."""
    if not torch.cuda.is_available():
        raise SystemExit(f"{name}: needs a CUDA GPU")
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    times = []
    tracer = contextlib.nullcontext()
    if os.environ.get("WORKLOAD_TORCH_PROFILER") == "1":
        from torch.profiler import ProfilerActivity, profile
        tracer = profile(activities=[ProfilerActivity.CUDA])
    with tracer:
        torch.cuda.nvtx.range_push("measure")
        for _ in range(args.iters):
            start = time.perf_counter()
            step()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        torch.cuda.nvtx.range_pop()
    median_ms = 1e3 * statistics.median(times)
    print(f"workload {name} iters {args.iters} median_ms {median_ms:.4f} "
          f"min_ms {1e3 * min(times):.4f} gpu {torch.cuda.get_device_name()}", flush=True)
