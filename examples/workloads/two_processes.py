"""Two processes: this one and a child it starts, each running bf16 matmuls and a
softmax on the GPU. Checks that dragon profile follows child processes (one trace file
each) and sums them in one report; not a timing workload."""
import subprocess
import sys

import torch

CHILD = "child" in sys.argv[1:]


def work(n):
    x = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(20):
        x = torch.softmax(x @ x, dim=-1)
    torch.cuda.synchronize()


if not torch.cuda.is_available():
    raise SystemExit("two_processes: needs a CUDA GPU")
if CHILD:
    work(1024)
    print("child done", flush=True)
else:
    child = subprocess.Popen([sys.executable, __file__, "child"])
    work(2048)
    status = child.wait()
    print(f"parent done, child exit status {status}", flush=True)
    sys.exit(status)
