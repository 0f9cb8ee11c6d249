"""The verdict of the command-line fuzzer on one spec: does axon survive it?

A spec that parses may be refused (exit 1: outside the supported subset),
and optimize may find no kernel within the error budget (exit 3), but
nothing may end in exit 2 (axon's own bug), a signal (a crash) or a hang.
verdict() runs `axon check`, then `axon explain` and `axon optimize` with a
tiny budget when check accepted the spec, and returns the first breach as
(command, kind, report), kind being 'exit 2', 'signal SIGSEGV', 'timeout',
...; None when axon survived all three. minimize() shrinks a breaching
program (progen.shrink) while it still breaches the same way.

Used by tests/property/test_fuzz_cli.py (a fixed set of seeds) and
bench/fuzz/fuzz.py (long campaigns).
"""

import os
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import progen  # noqa: E402

ALLOWED = {"check": {0, 1}, "explain": {0, 1}, "optimize": {0, 1, 3}}


def commands(spec, out_dir, budget="1", trials="1", target=None):
    """The commands of a verdict. `target`: a file of `axon target --json`
    (peaks included) that optimize reads instead of measuring the peaks
    again, which takes about a second per program and does not depend on it."""
    optimize = ["optimize", spec, "-o", out_dir, "--budget", budget, "--trials", trials, "--no-db"]
    if target:
        optimize += ["--target", str(target)]
    return [
        ("check", ["check", spec]),
        ("explain", ["explain", spec]),
        ("optimize", optimize),
    ]


def _kind(returncode):
    if returncode < 0:
        try:
            return "signal " + signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit {returncode}"


STAGES = ("check", "explain", "optimize")


def verdict(source, folder, axon_bin, cwd, timeout=180, budget="1", trials="1", stages=STAGES, target=None,
            codes=None):
    """None if axon survives `source`, else (command, kind, report). `stages`
    picks the commands run (check always runs first); `target` as in commands().
    `codes`, a dict, receives each command's exit code ('timeout' for a hang)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "spec.py"
    spec.write_text(source)
    env = dict(os.environ)
    env.pop("AXON_TEST_NAIVE_KERNEL", None)
    for name, args in commands(str(spec), str(folder / "out"), budget, trials, target):
        if name != "check" and name not in stages:
            continue
        try:
            r = subprocess.run([str(axon_bin), *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                               env=env)
        except subprocess.TimeoutExpired:
            if codes is not None:
                codes[name] = "timeout"
            return name, "timeout", f"axon {name} ran past {timeout} s"
        if codes is not None:
            codes[name] = r.returncode
        if r.returncode not in ALLOWED[name]:
            report = f"axon {' '.join(args)}: {_kind(r.returncode)}\n--- stderr ---\n{r.stderr[-3000:]}"
            return name, _kind(r.returncode), report
        if name == "check" and r.returncode != 0:
            return None  # refused cleanly: explain and optimize would refuse it the same way
    return None


def scaled(prog, k):
    """`prog` with every named dim k times larger: the same program where
    vector widths, tiles and tails come into play (numpy validity is
    checked at the original sizes)."""
    return replace(prog, dims=tuple((d, v * k) for d, v in prog.dims))


def minimize(prog, breach, folder, axon_bin, cwd, max_evaluations=60, scale=1, **kw):
    """The smallest program found that still breaches as `breach` (command, kind)."""
    counter = [0]

    def still(cand):
        counter[0] += 1
        v = verdict(scaled(cand, scale).source(), Path(folder) / f"shrink{counter[0]}", axon_bin, cwd, **kw)
        return v is not None and v[:2] == breach[:2]

    return progen.shrink(prog, still, max_evaluations=max_evaluations)
