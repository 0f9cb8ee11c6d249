#!/usr/bin/env python3
"""Times each row stage's two lowerings side by side: the row kernel emitter
of an older build of axon (knob `k<i>.tile` 0, deleted since) against this
build's tile program of the loops pipeline.

    bench/ab/row_vs_tile.py --row-axon OLD/axon [--axon build/axon] [--rounds N] [--threads T] [--cpu-time] WORKLOAD.py ...

OLD is a build of a commit that still has the row kernel emitter, e.g.
`git worktree add /tmp/old 46ff31b && cmake -S /tmp/old -B /tmp/old/build -G
Ninja -DCMAKE_BUILD_TYPE=Release && cmake --build /tmp/old/build --target axon`.
For each workload (default: every bench/workloads spec that is one row
stage) each side is a small grid around its build's default schedule, all
timed in the same turns by bench/ab/time_kernels.py: the row kernel at every
unroll (1, 2, 4), row_group (1, 4), stream_prefetch (0, 4096) and
prefetch_pass (0, 1, 2) its space has, the tile program at every unroll,
stream_prefetch and prefetch_pass its space has. With --threads every
*.threads knob is set to T on both sides. Prints one line per workload:
each side's fastest point (median over rounds of the round medians, ms) and
tile / row.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def default_schedule(axon, spec):
    out = subprocess.run([axon, "lower", spec, "--pipeline", "stages"], check=True, capture_output=True, text=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("# schedule "))
    return json.loads(line[len("# schedule "):])


def grid(s, axes):
    points = [{}]
    for name, values in axes.items():
        keys = [k for k in s if k.endswith("." + name)]
        if keys:
            points = [dict(p, **{k: v for k in keys}) for p in points for v in values]
    return points


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--axon", default=os.path.join(HERE, "..", "..", "build", "axon"))
    ap.add_argument("--row-axon", required=True, help="an older build with the row kernel emitter (knob tile 0)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=0, help="set every *.threads knob to this (0: the default)")
    ap.add_argument("--cpu-time", action="store_true", help="time_kernels.py --cpu-time (one thread only)")
    ap.add_argument("specs", nargs="*")
    a = ap.parse_args()
    specs = a.specs or sorted(glob.glob(os.path.join(HERE, "..", "workloads", "s*.py")))
    common = {"unroll": [1, 2, 4], "stream_prefetch": [0, 4096], "prefetch_pass": [0, 1, 2]}
    for spec in specs:
        sides = []
        for v, axon in ((0, a.row_axon), (1, a.axon)):
            s = default_schedule(axon, spec)
            if a.threads:
                s = {k: (a.threads if k.endswith(".threads") else x) for k, x in s.items()}
            if v == 0:
                if "k0.tile" not in s:
                    sys.exit(f"{a.row_axon} has no knob k0.tile for {spec}: not a build with the row kernel emitter")
                s["k0.tile"] = 0
            axes = dict(common, **({"row_group": [1, 4]} if v == 0 else {}))
            sides.append((axon, s, grid(s, axes)))
        with tempfile.TemporaryDirectory() as d:
            dirs, which = [], []
            for v, (axon, s, points) in enumerate(sides):
                for i, point in enumerate(points):
                    out = os.path.join(d, f"{('row', 'tile')[v]}{i}")
                    r = subprocess.run([axon, "compile", spec, "-o", out, "--schedule", json.dumps(dict(s, **point))],
                                       capture_output=True)
                    if r.returncode != 0 and "prefetch_pass" in r.stderr.decode():
                        continue  # a pass this row does not have
                    r.check_returncode()
                    dirs.append(out)
                    which.append((v, point))
            timer = [sys.executable, os.path.join(HERE, "time_kernels.py")] + (["--cpu-time"] if a.cpu_time else [])
            r = subprocess.run([*timer, str(a.rounds), *dirs], check=True, capture_output=True, text=True).stdout.splitlines()
            ms = [float(l.split("\t")[1].split()[0]) for l in r]
            best = [min((m, json.dumps(p)) for m, (side, p) in zip(ms, which) if side == v) for v in (0, 1)]
            print(f"{os.path.basename(spec)}\trow {best[0][0]:.4g} ms\ttile {best[1][0]:.4g} ms\t"
                  f"tile/row {best[1][0] / best[0][0]:.3f}\t(row at {best[0][1]}, tile at {best[1][1]})", flush=True)


if __name__ == "__main__":
    main()
