#!/usr/bin/env python3
"""`axon optimize` next to the naive kernel and numpy, in one run.

For each workload: `axon optimize --no-db --budget S` searches and reports
the winner's time and the naive kernel's time, measured by the same harness
in the same process; numpy then runs the spec on float32 inputs in this
process, timed as in naive_vs_numpy.py. Prints a markdown table with the
roofline fraction axon's report gives (floor = max(FLOPs / FMA peak,
bytes / stream bandwidth), peaks probed in the same run).

    python3 bench/harness/optimized_vs_numpy.py [--budget 20] [WORKLOAD.py ...]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import naive_vs_numpy as base  # noqa: E402
import importlib.util  # noqa: E402
import inspect  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--axon", default="build/axon")
    ap.add_argument("--budget", default="20")
    ap.add_argument("workloads", nargs="+")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print("| workload | axon (ms) | naive (ms) | numpy (ms) | axon / naive speedup | numpy / axon | roofline fraction | schedule |")
    print("|---|---:|---:|---:|---:|---:|---:|---|")
    for path in args.workloads:
        name = os.path.splitext(os.path.basename(path))[0]
        with tempfile.TemporaryDirectory() as out:
            proc = subprocess.run([args.axon, "optimize", path, "-o", out, "--no-db", "--budget", args.budget],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                print(f"| {name} | failed ({proc.returncode}) | | | | | | |")
                continue
            r = json.load(open(os.path.join(out, "report.json")))
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        fn = base.entry_function(module)
        inputs = []
        for p in inspect.signature(fn).parameters.values():
            dtype, dims = base.parse_annotation(p.annotation)
            inputs.append(rng.standard_normal(dims).astype(dtype))
        numpy_ms, _ = base.time_call(lambda: fn(*inputs))
        a, n = r["time_ms"]["axon"], r["time_ms"]["naive"]
        print(f"| {name} | {a:.3f} | {n:.3f} | {numpy_ms:.3f} | {n / a:.1f}x | {numpy_ms / a:.1f}x |"
              f" {r['roofline']['fraction']:.2f} | `{json.dumps(r['schedule'])}` |", flush=True)


if __name__ == "__main__":
    main()
