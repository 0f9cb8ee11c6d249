"""A small FileCheck for the golden tests (tests/golden/*.py).

A golden spec carries, in comments:
  # RUN: axon check %s [ARGS...]   the command; %s is the file itself
  # CHECK: TEXT                    in order, each TEXT must be a substring of
                                   an output line after the one the previous
                                   CHECK matched
  # CHECK-NOT: TEXT                no output line may contain TEXT
scripts/update_golden.py rewrites the CHECK lines from the current output.
"""

import os
import re
import shlex
import subprocess
from pathlib import Path

RUN_RE = re.compile(r"^# RUN: (.*)$")
CHECK_RE = re.compile(r"^# CHECK: (.*)$")
CHECK_NOT_RE = re.compile(r"^# CHECK-NOT: (.*)$")


class GoldenSpec:
    def __init__(self, path):
        self.path = Path(path)
        self.text = self.path.read_text()
        lines = self.text.splitlines()
        runs = [m.group(1) for m in map(RUN_RE.match, lines) if m]
        if len(runs) != 1:
            raise ValueError(f"{self.path.name}: expected exactly one '# RUN:' line, found {len(runs)}")
        self.run_line = runs[0]
        self.checks = [m.group(1) for m in map(CHECK_RE.match, lines) if m]
        self.check_nots = [m.group(1) for m in map(CHECK_NOT_RE.match, lines) if m]

    def command(self, axon_bin):
        words = shlex.split(self.run_line)
        if not words or words[0] != "axon":
            raise ValueError(f"{self.path.name}: the RUN line must start with 'axon'")
        return [str(axon_bin)] + [str(self.path) if w == "%s" else w for w in words[1:]]


def run(spec, axon_bin, cwd=None):
    """Returns (exit code, stdout, stderr) of the spec's RUN command."""
    proc = subprocess.run(spec.command(axon_bin), capture_output=True, text=True, timeout=60, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr


def match(spec, output):
    """None when the output satisfies every CHECK and CHECK-NOT, else a message."""
    lines = output.splitlines()
    for bad in spec.check_nots:
        hits = [i for i, line in enumerate(lines) if bad in line]
        if hits:
            return f"CHECK-NOT: {bad!r} found on output line {hits[0] + 1}: {lines[hits[0]]!r}"
    if not spec.checks:
        return "no CHECK lines (run scripts/update_golden.py)"
    pos = 0
    for n, want in enumerate(spec.checks):
        found = next((i for i in range(pos, len(lines)) if want in lines[i]), None)
        if found is None:
            earlier = next((i for i in range(0, pos) if want in lines[i]), None)
            where = f" (it does occur earlier, on line {earlier + 1}: out of order)" if earlier is not None else ""
            return (f"CHECK #{n + 1} not found after output line {pos}: {want!r}{where}\n"
                    f"--- output ---\n{output}")
        pos = found + 1
    return None


def rewritten(spec, output):
    """The spec's text with its CHECK lines replaced by the output, one CHECK
    per non-empty output line, at the end of the file."""
    kept = [line for line in spec.text.splitlines() if not CHECK_RE.match(line)]
    while kept and not kept[-1].strip():
        kept.pop()
    checks = [f"# CHECK: {line.strip()}" for line in output.splitlines() if line.strip()]
    return "\n".join(kept) + "\n\n" + "\n".join(checks) + "\n"


def golden_specs(folder):
    return sorted(p for p in Path(folder).glob("*.py") if not p.name.startswith("test_") and p.name != "filecheck.py")


def default_axon_bin(source_dir):
    return Path(os.environ.get("AXON_BIN", Path(source_dir) / "build" / "axon"))
