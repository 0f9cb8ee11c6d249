"""`axon verify --repeat-seconds S` (docs/gate.md, "Verdict time"): the soak
stops its unrecorded calls after S seconds and the plain process its calls
after S/5, the report says how many calls they made, the recorded calls are
still judged, and the replay line repeats the option.
"""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("AXON_SOURCE_DIR", HERE.parent.parent))
AXON_BIN = Path(os.environ.get("AXON_BIN", SOURCE_DIR / "build" / "axon"))
SPEC = HERE / "specs" / "rowsum.py"
SLOW = HERE / "slow" / "rowsum_repeated.cpp"


def verify(*extra):
    if not AXON_BIN.is_file():
        pytest.skip(f"axon binary not found at {AXON_BIN}")
    r = subprocess.run([str(AXON_BIN), "verify", str(SPEC), str(SLOW), "--json", "--no-time", "--seed", "5", *extra],
                       capture_output=True, text=True, timeout=600)
    return r, json.loads(r.stdout) if r.stdout.strip().startswith("{") else None


def test_a_short_repeat_time_cuts_the_repeated_calls_but_not_the_judged_ones():
    r, report = verify("--repeat-seconds", "0.5")
    assert r.returncode == 0, r.stdout + r.stderr
    assert report["verdict"] == "accept", report["reasons"]
    notes = " ".join(report["notes"])
    assert "the soak made" in notes and "the plain process made" in notes, notes
    soak_made = int(notes.split("the soak made ")[1].split()[0])
    assert soak_made < 1050  # fewer than every plan draws
    assert report["replay"].endswith("--repeat-seconds 0.5 --seed 5"), report["replay"]
    # Everything that repeats was cut to half a second (the plain process to a
    # tenth); the verdict ends in far less than the default repeat times would take.
    assert report["phases_s"]["user_run"] < 0.1 + 5


def test_the_repeat_time_is_bounded():
    r, _ = verify("--repeat-seconds", "0")
    assert r.returncode == 1
    assert "--repeat-seconds" in r.stderr
