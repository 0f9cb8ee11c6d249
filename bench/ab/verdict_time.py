#!/usr/bin/env python3
"""Times `axon verify` of two builds side by side, alternately per workload.

    bench/ab/verdict_time.py ROUNDS KERNELS OLD_AXON NEW_AXON OUT.jsonl [PREFIX,...]

KERNELS holds one folder per workload of bench/workloads, as `axon optimize
bench/workloads/W.py -o KERNELS/W` writes it. For each round and workload
(those whose names start with one of the PREFIXes, or all), the two builds
run `axon verify bench/workloads/W.py KERNELS/W/kernel.cpp --seed 1 --json`
one after the other, which one first alternating between workloads and
rounds, from the repository root. Each run appends one JSON line to OUT
(round, workload, build, wall seconds, CPU seconds (user and system of axon
and every process it waited for: compilers, drivers, the kernel's calls),
the 1-minute load average at its start, the verdict, the report's phases_s
and notes). Then prints, per workload, the median wall time of each build
over the rounds in OUT and their ratio, the median over workloads of each
build's medians, and each build's CPU seconds summed over its runs (on a
loaded host the CPU time is the steadier measure of the work a verdict
does; the wall time is what a proposer waits).
"""
import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    rounds, kernels, old, new, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
    prefixes = sys.argv[6].split(",") if len(sys.argv) > 6 else None
    names = sorted(f[:-3] for f in os.listdir(os.path.join(ROOT, "bench", "workloads")) if f.endswith(".py"))
    if prefixes:
        names = [w for w in names if any(w.startswith(p) for p in prefixes)]
    first = 0
    if os.path.exists(out):
        with open(out) as f:
            first = 1 + max((json.loads(line)["round"] for line in f if line.strip()), default=-1)
    with open(out, "a") as f:
        for r in range(first, first + rounds):
            for i, w in enumerate(names):
                builds = [("old", old), ("new", new)]
                if (i + r) % 2:
                    builds.reverse()
                for tag, axon in builds:
                    load = os.getloadavg()[0]
                    c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = time.time()
                    p = subprocess.run([axon, "verify", f"bench/workloads/{w}.py", os.path.join(kernels, w, "kernel.cpp"),
                                        "--seed", "1", "--json"], cwd=ROOT, capture_output=True, text=True)
                    wall = time.time() - t0
                    c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = (c1.ru_utime - c0.ru_utime) + (c1.ru_stime - c0.ru_stime)
                    try:
                        d = json.loads(p.stdout)
                        verdict, phases, notes = d["verdict"], d["phases_s"], d["notes"]
                    except ValueError:
                        verdict, phases, notes = f"exit {p.returncode}", {}, [p.stderr[-300:]]
                    f.write(json.dumps(dict(round=r, w=w, build=tag, wall=wall, cpu=cpu, load=load, verdict=verdict,
                                            phases=phases, notes=notes)) + "\n")
                    f.flush()
                    print(f"{r} {w:24s} {tag} {wall:6.1f} s  cpu {cpu:6.1f} s  load {load:4.1f}  {verdict}", flush=True)
    summarize(out)


def summarize(out):
    walls = collections.defaultdict(lambda: collections.defaultdict(list))
    cpus = collections.defaultdict(float)
    loads = []
    with open(out) as f:
        for line in f:
            rec = json.loads(line)
            walls[rec["w"]][rec["build"]].append(rec["wall"])
            cpus[rec["build"]] += rec.get("cpu", 0)
            loads.append(rec["load"])
    medians = {"old": [], "new": []}
    for w in sorted(walls):
        o, n = walls[w]["old"], walls[w]["new"]
        if not o or not n:
            continue
        mo, mn = statistics.median(o), statistics.median(n)
        medians["old"].append(mo)
        medians["new"].append(mn)
        print(f"{w:24s} old {mo:6.1f} s  new {mn:6.1f} s  new/old {mn / mo:5.2f}  ({len(o)} and {len(n)} runs)")
    for tag, m in medians.items():
        if m:
            print(f"median over workloads, {tag}: {statistics.median(m):.1f} s")
    if cpus:
        print("CPU seconds summed over the runs: " + ", ".join(f"{tag} {c:.1f} s" for tag, c in sorted(cpus.items())))
    if loads:
        print(f"load average at the runs' starts: {min(loads):.1f} to {max(loads):.1f}")


if __name__ == "__main__":
    main()
