#!/usr/bin/env python3
"""Checks a KernelBench ModelNew file against a reference the way KernelBench's evaluation
does (docs/bench.md, "KernelBench export"; REFERENCE-kernelbench.md 1.3 and 1.4), for a
machine without KernelBench's code: our own implementation of its protocol.

  1. Both files are executed as modules; the candidate's load_inline compiles its kernel.
  2. Seeded construction: set_seed(seed); init = get_init_inputs(); set_seed(seed);
     Model(*init); set_seed(seed); ModelNew(*init); both moved to the GPU. Beyond
     KernelBench, the two modules' parameters are compared in registration order: equal
     values mean ModelNew drew its weights as Model did.
  3. Correctness: torch.manual_seed(seed), then one seed per trial from torch.randint; per
     trial set_seed(trial seed), get_inputs() on the GPU, Model then ModelNew on the same
     tensors, a synchronize after each; the output shapes must match and
     torch.allclose(ref, new, atol=tol, rtol=tol) hold (tol 1e-2, KernelBench's v0/v0.1).
  4. Timing (when correct), KernelBench's cuda_event method, for ModelNew and then Model:
     3 warm-up calls each followed by a synchronize, empty_cache, then trials + 1 calls
     (the first discarded), each after a device synchronize and an L2 flush (a 256 MB
     tensor written), between CUDA events on the current stream, then a synchronize.

Prints one JSON object (also written to --json FILE); exit status 0 when correct, 1 when
not, 2 when a file fails to load or compile.
"""
import argparse
import importlib.util
import json
import statistics
import sys
import traceback


def load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def set_seed(torch, seed):
    torch.manual_seed(seed)
    torch.cuda.manual_seed(seed)


def to_device(torch, values, device):
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def same_parameters(torch, model, model_new):
    ref = list(model.parameters())
    new = list(model_new.parameters())
    if len(ref) != len(new):
        return False, f"Model has {len(ref)} parameter tensors, ModelNew {len(new)}"
    for i, (a, b) in enumerate(zip(ref, new)):
        if a.shape != b.shape:
            return False, f"parameter {i}: shape {tuple(a.shape)} in Model, {tuple(b.shape)} in ModelNew"
        if not torch.equal(a, b):
            return False, f"parameter {i} ({tuple(a.shape)}): values differ, so ModelNew drew its weights differently"
    return True, f"{len(ref)} parameter tensors equal"


def time_cuda_events(torch, model, inputs, trials, device):
    with torch.no_grad():
        for _ in range(3):
            model(*inputs)
            torch.cuda.synchronize(device)
        torch.cuda.empty_cache()
        flush = torch.empty(256 * 1024 * 1024 // 8, dtype=torch.int64, device=device)
        times = []
        for _ in range(trials + 1):
            torch.cuda.synchronize(device)
            flush.zero_()
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            model(*inputs)
            end.record()
            torch.cuda.synchronize(device)
            times.append(start.elapsed_time(end))
    times = times[1:]
    return {
        "mean_ms": statistics.fmean(times),
        "std_ms": statistics.pstdev(times),
        "min_ms": min(times),
        "max_ms": max(times),
        "trials": len(times),
    }


def check(args):
    import torch

    result = {"reference": args.reference, "candidate": args.candidate, "tolerance": args.tolerance,
              "seed": args.seed, "correct": False}
    device = torch.device("cuda", 0)
    try:
        ref = load_module(args.reference, "kernelbench_reference")
        new = load_module(args.candidate, "kernelbench_candidate")
    except Exception as e:  # a compile error of the extension lands here
        result["load_error"] = f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
        return result, 2

    with torch.no_grad():
        set_seed(torch, args.seed)
        init_inputs = to_device(torch, ref.get_init_inputs(), device)
        set_seed(torch, args.seed)
        model = ref.Model(*init_inputs)
        set_seed(torch, args.seed)
        model_new = new.ModelNew(*init_inputs)
        model = model.to(device=device, dtype=torch.float32)
        model_new = model_new.to(device=device, dtype=torch.float32)
        torch.cuda.synchronize(device)
    ok, why = same_parameters(torch, model, model_new)
    result["weights_match"] = ok
    result["weights"] = why

    torch.manual_seed(args.seed)
    trial_seeds = [torch.randint(0, 2**32 - 1, (1,)).item() for _ in range(args.trials)]
    passed = 0
    result["max_abs_diff"] = []
    with torch.no_grad():
        for seed in trial_seeds:
            set_seed(torch, seed)
            inputs = to_device(torch, ref.get_inputs(), device)
            out = model(*inputs)
            torch.cuda.synchronize(device)
            try:
                out_new = model_new(*inputs)
                torch.cuda.synchronize(device)
            except Exception as e:
                result["runtime_error"] = f"{type(e).__name__}: {e}"
                return result, 1
            if out.shape != out_new.shape:
                result["shape_mismatch"] = f"expected {tuple(out.shape)}, got {tuple(out_new.shape)}"
                return result, 1
            # Integer outputs (argmax) compare as KernelBench's allclose would, in float64.
            a, b = out.double(), out_new.double()
            result["max_abs_diff"].append(torch.max(torch.abs(a - b)).item() if a.numel() else 0.0)
            if torch.allclose(a, b, atol=args.tolerance, rtol=args.tolerance):
                passed += 1
    result["trials_passed"] = f"{passed}/{args.trials}"
    result["correct"] = passed == args.trials and ok
    if not result["correct"] or args.perf_trials == 0:
        return result, 0 if result["correct"] else 1

    set_seed(torch, args.seed)
    inputs = to_device(torch, ref.get_inputs(), device)
    result["model_new_time"] = time_cuda_events(torch, model_new, inputs, args.perf_trials, device)
    result["model_time"] = time_cuda_events(torch, model, inputs, args.perf_trials, device)
    result["speedup"] = result["model_time"]["mean_ms"] / result["model_new_time"]["mean_ms"]
    return result, 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", required=True, help="KernelBench-format file with Model, get_inputs, get_init_inputs")
    parser.add_argument("--candidate", required=True, help="KernelBench-format file with ModelNew")
    parser.add_argument("--trials", type=int, default=5, help="correctness trials (KernelBench's script default: 5)")
    parser.add_argument("--perf-trials", type=int, default=100, help="timed calls (0: no timing)")
    parser.add_argument("--tolerance", type=float, default=1e-2, help="atol and rtol of allclose")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    result, status = check(args)
    text = json.dumps(result, indent=2, default=str)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
