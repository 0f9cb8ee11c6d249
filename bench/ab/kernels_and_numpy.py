#!/usr/bin/env python3
"""Times kernels compiled by `axon compile` and a numpy expression in turns, in one process.

    bench/ab/kernels_and_numpy.py [--cpu-time] ROUNDS GFLOP EXPR DIR_A [DIR ...]

Each DIR holds a kernel.cpp and kernel.h of one spec, built and given inputs
as bench/ab/time_kernels.py does (hot inputs). EXPR is evaluated with the
inputs bound to their names in kernel.h (the first DIR's buffers), numpy as
np and silu(x) = x / (1 + exp(-x)); "-" times no expression. Per round each
callable is called 3 times to warm up and 11 times timed. Prints per line:
the median over rounds of each round's median (ms), its ratio to the first,
GFLOP/s at that time, the 10th percentile of the round medians, and the
fastest single call (on a loaded host the least disturbed). Wall clock
unless --cpu-time (the calling thread's CPU time: one-thread kernels, with
OPENBLAS_NUM_THREADS=1 for numpy). E.g., two threads in turns with numpy's
OpenBLAS:

    OPENBLAS_NUM_THREADS=2 bench/ab/kernels_and_numpy.py 7 2.147 "A@B" D/old D/new
"""
import os
import re
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import time_kernels as tk  # noqa: E402


def main():
    args = sys.argv[1:]
    clock = time.perf_counter
    if args and args[0] == "--cpu-time":
        clock, args = time.thread_time, args[1:]
    rounds, gflop, expr, dirs = int(args[0]), float(args[1]), args[2], args[3:]
    with tempfile.TemporaryDirectory() as out:
        kernels = [tk.load(d, out) for d in dirs]
        header = open(os.path.join(dirs[0], "kernel.h")).read()
        decls = re.findall(r"^//\s+(\w+)\s+(\w+)\[([0-9, ]*)\]\s+input", header, re.M)
        env = {"np": np, "silu": lambda x: x / (1.0 + np.exp(-x))}
        for (name, _, dims), (_, a) in zip(decls, kernels[0][1]):
            env[name] = a.reshape([int(x) for x in dims.split(",") if x.strip()])
        calls = [call for call, _ in kernels]
        labels = list(dirs)
        if expr != "-":
            code = compile(expr, "expr", "eval")
            calls.append(lambda: eval(code, env))
            labels.append("numpy")
        medians = [[] for _ in calls]
        fastest = [float("inf") for _ in calls]
        for _ in range(rounds):
            for i, call in enumerate(calls):
                times = tk.time_calls(call, clock)
                medians[i].append(statistics.median(times) * 1e3)
                fastest[i] = min(fastest[i], min(times) * 1e3)
        first = statistics.median(medians[0])
        for label, m, f in zip(labels, medians, fastest):
            ms = statistics.median(m)
            print(f"{label}\t{ms:.4g} ms\t{ms / first:.3f}\t{gflop / ms * 1e3:.1f} GFLOP/s\t"
                  f"p10 {np.percentile(m, 10):.4g}\tfastest {f:.4g}")


if __name__ == "__main__":
    main()
