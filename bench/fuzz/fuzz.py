#!/usr/bin/env python3
"""A long campaign of the command-line fuzzer (tests/property/cli_fuzz.py):
random specs (tests/property/fuzzgen.py) through `axon check`, `axon explain`
and `axon optimize` with a tiny budget; every spec that makes axon exit 2,
die of a signal or hang is shrunk and kept.

    bench/fuzz/fuzz.py [--seeds 1000:2000] [--out bench/fuzz/out] [--axon build/axon]
                       [--budget 1] [--trials 1] [--timeout 180] [--shrink 60] [--scale K]
                       [--stages check,explain,optimize] [--jobs N] [--target once|each|FILE]

Writes, under --out: one folder per breach, `seed-N/` with `original.py`,
`minimal.py` (the shrunk program) and `report.txt` (the command, the exit
or signal, the end of stderr), and `summary.txt` (one line per seed that
breached, how many times each command ended with each exit code, e.g.
`optimize 3: 0` for kernels over their error budget, and the totals). Each
seed's line on stdout lists its exit codes; a campaign cut short resumes
with --seeds from the seed after the last one printed. The same seeds give the same programs. With
--scale K every named dim of a program is K times larger (its sizes are 2
to 6 otherwise): vector widths, register tiles and loop tails then matter.
--stages check,explain skips optimize (for a sanitized build of axon, where
optimize is too slow).

What a program costs: optimize measures the machine's FMA and bandwidth
peaks (about a second, the same for every program) unless its target
description has them. With --target once (the default) the campaign runs
`axon target --json` once and hands its file to every optimize; --target
each measures them per program as a user's first optimize does; a FILE is
used as given. --jobs N runs N seeds at once (each a chain of axon
processes); run the campaign under `nice -n 19` on a shared machine. On
the 2-core AVX-512 host, about 1-2 s per seed with all three stages and
one job. Exits 1 when some seed breached, else 0.
"""

import argparse
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "property"))
import cli_fuzz  # noqa: E402
import fuzzgen  # noqa: E402


def target_file(choice, axon, out):
    """The target description every optimize reads, or None to measure per program."""
    if choice == "each":
        return None
    if choice != "once":
        return Path(choice)
    path = out / "target.json"
    r = subprocess.run([axon, "target", "--json"], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        sys.exit(f"axon target --json failed ({r.returncode}): {r.stderr[-500:]}")
    path.write_text(r.stdout)
    return path


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1000:1200", help="FIRST:END (END excluded)")
    ap.add_argument("--out", default=str(ROOT / "bench" / "fuzz" / "out"))
    ap.add_argument("--axon", default=str(ROOT / "build" / "axon"))
    ap.add_argument("--budget", default="1")
    ap.add_argument("--trials", default="1")
    ap.add_argument("--timeout", type=int, default=180)
    ap.add_argument("--shrink", type=int, default=60, help="most runs spent shrinking each breach")
    ap.add_argument("--scale", type=int, default=1, help="multiply every named dim by this")
    ap.add_argument("--stages", default=",".join(cli_fuzz.STAGES),
                    help="commands to run, of check,explain,optimize (check always runs)")
    ap.add_argument("--jobs", type=int, default=1, help="seeds run at once")
    ap.add_argument("--target", default="once",
                    help="once: measure the peaks once for the campaign; each: per program; or a target JSON file")
    a = ap.parse_args()
    stages = tuple(s for s in a.stages.split(",") if s)
    unknown = set(stages) - set(cli_fuzz.STAGES)
    if unknown:
        ap.error(f"unknown stage(s) {sorted(unknown)}; choose from {','.join(cli_fuzz.STAGES)}")
    first, end = (int(x) for x in a.seeds.split(":"))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    work = out / "work"
    target = target_file(a.target, a.axon, out) if "optimize" in stages else None
    kw = {"timeout": a.timeout, "budget": a.budget, "trials": a.trials, "stages": stages, "target": target}
    t0 = time.time()

    def one(seed):
        prog = fuzzgen.generate(seed)
        source = cli_fuzz.scaled(prog, a.scale).source()
        codes = {}
        v = cli_fuzz.verdict(source, work / str(seed), a.axon, ROOT, codes=codes, **kw)
        return seed, prog, source, v, codes

    breaches = []
    tally = Counter()  # (command, exit code) over every seed
    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        for seed, prog, source, v, codes in pool.map(one, range(first, end)):
            status = "ok" if v is None else f"{v[0]}: {v[1]}"
            tally.update(codes.items())
            exits = " ".join(f"{k} {c}" for k, c in codes.items())
            print(f"seed {seed}: {status}  [{exits}]  ({time.time() - t0:.0f} s)", flush=True)
            if v is None:
                continue
            d = out / f"seed-{seed}"
            d.mkdir(exist_ok=True)
            (d / "original.py").write_text(source)
            (d / "report.txt").write_text(f"seed {seed}\n{v[2]}\n")
            breaches.append((seed, prog, source, v))
    lines = []
    for seed, prog, source, v in breaches:  # shrunk after the campaign, one at a time
        d = out / f"seed-{seed}"
        res = cli_fuzz.minimize(prog, v, work / f"{seed}-shrink", a.axon, ROOT, max_evaluations=a.shrink,
                                scale=a.scale, **kw)
        (d / "minimal.py").write_text(cli_fuzz.scaled(res.program, a.scale).source())
        (d / "report.txt").write_text(f"seed {seed}\n{v[2]}\n--- shrunk in {res.steps} steps ({res.evaluations} runs) ---\n")
        lines.append(f"seed {seed}: axon {v[0]}: {v[1]} -> {d / 'minimal.py'}")
    lines.append("exit codes: " + ", ".join(f"{k} {c}: {n}" for (k, c), n in sorted(tally.items(), key=str)))
    lines.append(f"{len(breaches)} breach(es) in {end - first} seeds ({','.join(stages)}; jobs {a.jobs}, "
                 f"target {a.target}), {time.time() - t0:.0f} s")
    (out / "summary.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if breaches else 0


if __name__ == "__main__":
    sys.exit(main())
