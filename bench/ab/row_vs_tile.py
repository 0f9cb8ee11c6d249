#!/usr/bin/env python3
"""Times each row stage's two lowerings side by side: the row kernel against
the tile IR's loops kernel, through one build of axon.

    bench/ab/row_vs_tile.py [--axon build/axon] [--rounds N] [--threads T] [--cpu-time] [--set KNOB=V] [WORKLOAD.py ...]

For each workload (default: every bench/workloads spec with a row stage) the
host's default schedule is read from `axon lower --pipeline stages`; every
row stage's knob `k<i>.tile` is set to 0 for one kernel and to 1 for the
other (all other knobs equal), both are written by `axon compile
--schedule`, and bench/ab/time_kernels.py times them in turns. Prints one
line per workload: the two medians in ms and tile / row.

With --best, each side is a small grid instead, all timed in the same
turns: the row kernel at every unroll (1, 2, 4), row_group (1, 4), stream_prefetch
(0, 4096) and prefetch_pass (0, 1, 2; the values its space has) it takes, the
tile program at every unroll and stream_prefetch; the line gives each side's
fastest point and their ratio.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def default_schedule(axon, spec):
    out = subprocess.run([axon, "lower", spec, "--pipeline", "stages"], check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("# schedule "))
    return json.loads(line[len("# schedule "):])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--axon", default=os.path.join(HERE, "..", "..", "build", "axon"))
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--threads", type=int, default=0, help="set every *.threads knob to this (0: the default)")
    ap.add_argument("--cpu-time", action="store_true", help="time_kernels.py --cpu-time (one thread only)")
    ap.add_argument("--set", action="append", default=[], metavar="KNOB=V",
                    help="a knob's value for both kernels (a row knob such as k0.unroll)")
    ap.add_argument("--best", action="store_true", help="the fastest of a grid of row knobs against the tile's")
    ap.add_argument("specs", nargs="*")
    a = ap.parse_args()
    specs = a.specs or sorted(glob.glob(os.path.join(HERE, "..", "workloads", "*.py")))
    for spec in specs:
        s = default_schedule(a.axon, spec)
        if a.threads:
            s = {k: (a.threads if k.endswith(".threads") else v) for k, v in s.items()}
        for kv in a.set:
            k, v = kv.split("=")
            if k in s:
                s[k] = int(v)
        knobs = [k for k in s if re.fullmatch(r"k\d+\.tile", k)]
        if not knobs:
            continue
        grids = [[{}], [{}]]
        if a.best:
            axes = {"unroll": [1, 2, 4], "row_group": [1, 4], "stream_prefetch": [0, 4096], "prefetch_pass": [0, 1, 2]}
            row = [{}]
            for name, values in axes.items():
                keys = [k for k in s if k.endswith("." + name)]
                if keys:
                    row = [dict(p, **{k: v for k in keys}) for p in row for v in values]
            tile = [{}]
            for name in ("unroll", "stream_prefetch"):
                keys = [k for k in s if k.endswith("." + name)]
                if keys:
                    tile = [dict(p, **{k: v for k in keys}) for p in tile for v in axes[name]]
            grids = [row, tile]
        with tempfile.TemporaryDirectory() as d:
            dirs, sides = [], []
            for v in (0, 1):
                for i, point in enumerate(grids[v]):
                    sched = dict(s, **point, **{k: v for k in knobs})
                    out = os.path.join(d, f"{('row', 'tile')[v]}{i}")
                    r = subprocess.run([a.axon, "compile", spec, "-o", out, "--schedule", json.dumps(sched)],
                                       capture_output=True)
                    if r.returncode != 0 and "prefetch_pass" in r.stderr.decode():
                        continue  # a pass this row does not have
                    r.check_returncode()
                    dirs.append(out)
                    sides.append((v, point))
            timer = [sys.executable, os.path.join(HERE, "time_kernels.py")] + (["--cpu-time"] if a.cpu_time else [])
            r = subprocess.run([*timer, str(a.rounds), *dirs],
                               check=True, capture_output=True, text=True).stdout.splitlines()
            ms = [float(l.split("\t")[1].split()[0]) for l in r]
            best = [min((m, json.dumps(p)) for m, (side, p) in zip(ms, sides) if side == v) for v in (0, 1)]
            extra = f"\t(row at {best[0][1]}, tile at {best[1][1]})" if a.best else ""
            print(f"{os.path.basename(spec)}\trow {best[0][0]:.4g} ms\ttile {best[1][0]:.4g} ms\t"
                  f"tile/row {best[1][0] / best[0][0]:.3f}{extra}", flush=True)


if __name__ == "__main__":
    main()
