"""Per-call overhead of @axon.jit over the raw kernel called from C.

A tiny workload (y = 2x + b over 16 floats, about 10 ns of work) is called
through each path on the same arrays, in one process, after warm-up:

  raw C        the loaded kernel called in a C loop on preallocated buffers
               (the Compiled kernel's time_raw): the floor;
  axon.jit     `f(x, b)` on numpy arrays: Python call, dispatch on dtypes and
               shapes, zero-copy argument import, the output allocated,
               the GIL released around the kernel, a numpy array returned;
  Compiled     the kernel object that axon.optimize returns, called directly;
  torch        with torch installed: `f(x, b)` on torch tensors, the op
               through `torch.ops` (axon.torch.op), and, for scale, torch's
               own `torch.add(x, b, alpha=...)`-style eager call.

Each figure is the median over rounds of the mean time per call in a round.
The overhead is jit's median minus raw's. Not a test: results go to
bench/RESULTS.md ("The Python package's call overhead").

    python3 bench/python/jit_overhead.py [--rounds 7] [--calls 20000]
"""

import argparse
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

root = Path(__file__).resolve().parents[2]
staged = root / "build" / "python"
if (staged / "axon").is_dir():
    sys.path.insert(0, str(staged))
os.environ.setdefault("AXON_DB", os.path.join(tempfile.mkdtemp(prefix="axon-bench-"), "tuning.sqlite"))
import axon  # noqa: E402


def axpy(x: "f32[16]", b: "f32[16]"):
    return 2.0 * x + b


def per_call_ns(fn, args, calls, rounds):
    for _ in range(1000):
        fn(*args)
    means = []
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            fn(*args)
        means.append((time.perf_counter_ns() - t0) / calls)
    return statistics.median(means)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    a = ap.parse_args()

    f = axon.jit(axpy, budget=5, trials=4, progress=False)
    x = np.random.default_rng(0).standard_normal(16).astype(np.float32)
    b = np.ones(16, np.float32)
    np.testing.assert_allclose(f(x, b), 2 * x + b, rtol=1e-6)
    compiled = f.kernel(x, b)

    raw = statistics.median(compiled.kernel.time_raw((x, b), a.calls) for _ in range(a.rounds))
    rows = [("raw C (kernel in a C loop)", raw)]
    jit = per_call_ns(f, (x, b), a.calls, a.rounds)
    rows.append(("axon.jit, numpy arrays", jit))
    rows.append(("Compiled kernel, numpy arrays", per_call_ns(compiled, (x, b), a.calls, a.rounds)))
    try:
        import torch
        import axon.torch as at
        tx, tb = torch.from_numpy(x), torch.from_numpy(b)
        rows.append(("axon.jit, torch tensors", per_call_ns(f, (tx, tb), a.calls, a.rounds)))
        at.op("axon_bench::axpy", f)
        op = torch.ops.axon_bench.axpy
        rows.append(("torch.ops.axon_bench.axpy (custom op)", per_call_ns(op, (tx, tb), a.calls, a.rounds)))
        rows.append(("torch.add(b, x, alpha=2) (eager, for scale)",
                     per_call_ns(lambda p, q: torch.add(q, p, alpha=2), (tx, tb), a.calls, a.rounds)))
    except ImportError:
        print("torch not installed: its rows are left out", file=sys.stderr)

    print(f"host: {platform.node()} ({platform.processor() or platform.machine()}), Python "
          f"{platform.python_version()}, numpy {np.__version__}"
          + (f", torch {sys.modules['torch'].__version__}" if "torch" in sys.modules else ""))
    print(f"command: python3 bench/python/jit_overhead.py --rounds {a.rounds} --calls {a.calls}")
    print("| path | ns per call | over raw C |")
    print("|---|---|---|")
    for name, ns in rows:
        print(f"| {name} | {ns:.0f} | {ns - raw:+.0f} |")
    print(f"axon.jit overhead over raw C: {(jit - raw) / 1000:.2f} us per call (goal < 5 us)")


if __name__ == "__main__":
    main()
