#!/usr/bin/env python3
"""Times axon's naive kernels next to numpy on the benchmark workloads, in one run.

For each workload: `axon run --json` compiles the naive kernel, checks it
against the float64 reference (the row is marked if it is over budget) and
reports its median time; then numpy runs the same spec on float32 inputs in
this process, timed the same way (warm-up, then repetitions until 0.2 s and
5 runs, median). Both are measured back to back so that machine noise hits
them alike. Prints a markdown table; --csv writes the rows too.

    python3 bench/harness/naive_vs_numpy.py [--axon build/axon] [--csv out.csv] [WORKLOAD.py ...]
"""
import argparse
import csv
import glob
import importlib.util
import inspect
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np


def entry_function(module):
    """The last top-level function whose parameters are all annotated (axon's default)."""
    best = None
    for name, fn in vars(module).items():
        if inspect.isfunction(fn) and fn.__module__ == module.__name__:
            params = inspect.signature(fn).parameters.values()
            if params and all(p.annotation is not inspect.Parameter.empty for p in params):
                best = fn
    return best


def parse_annotation(text):
    m = re.fullmatch(r"\s*(\w+)\[(.*)\]\s*", text)
    dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "bool": np.bool_}[m.group(1)]
    dims = [int(d) for d in m.group(2).split(",") if d.strip()]
    return dtype, dims


def time_call(fn, warmup=2, min_reps=5, min_seconds=0.2):
    for _ in range(warmup):
        fn()
    samples = []
    start = time.perf_counter()
    while len(samples) < min_reps or time.perf_counter() - start < min_seconds:
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(samples), len(samples)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--axon", default="build/axon")
    ap.add_argument("--csv")
    ap.add_argument("workloads", nargs="*")
    args = ap.parse_args()
    files = args.workloads or sorted(glob.glob("bench/workloads/*.py"))
    rng = np.random.default_rng(0)
    rows = []
    for path in files:
        name = os.path.splitext(os.path.basename(path))[0]
        proc = subprocess.run([args.axon, "run", path, "--json"], capture_output=True, text=True)
        if proc.returncode not in (0, 3):
            print(f"{name}: axon failed ({proc.returncode}): {proc.stderr.strip()[:200]}", file=sys.stderr)
            continue
        report = json.loads(proc.stdout)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = entry_function(module)
        inputs = []
        for p in inspect.signature(fn).parameters.values():
            dtype, dims = parse_annotation(p.annotation)
            inputs.append(rng.standard_normal(dims).astype(dtype))
        numpy_ms, reps = time_call(lambda: fn(*inputs))
        naive_ms = report["time_ms"]["naive"]
        rows.append({"workload": name, "naive_ms": naive_ms, "numpy_ms": numpy_ms,
                     "naive_over_numpy": naive_ms / numpy_ms, "within_budget": report["within_budget"],
                     "max_error_over_budget": max(c["max_error_over_budget"] for c in report["checks"])})
        print(f"{name}: naive {naive_ms:.3f} ms, numpy {numpy_ms:.3f} ms", file=sys.stderr)
    print("| workload | naive kernel (ms) | numpy (ms) | naive / numpy | error / budget |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        flag = "" if r["within_budget"] else " OVER"
        print(f"| {r['workload']} | {r['naive_ms']:.3f} | {r['numpy_ms']:.3f} | {r['naive_over_numpy']:.2f} |"
              f" {r['max_error_over_budget']:.3f}{flag} |")
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
