"""A proved rewrite that loses accuracy in float32 is refused by `axon
optimize` (docs/rewrites.md, "expand-square-of-difference"): pairwise
squared distances expanded as |a|^2 + |b|^2 - 2 a.b cancel where a row of
a is near a row of b and both are far from 0. The rewritten variant's naive
kernel is checked on inputs offset by 1000 against the original graph's
reference, refused with the measured error, and the kernel axon returns
passes `axon verify` (whose battery has such inputs).
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, run_axon  # noqa: E402

SPEC = '''import numpy as np

def sqdist(a: "f32[512, 64]", b: "f32[384, 64]"):
    return np.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)
'''


def test_a_rewrite_that_cancels_is_refused_and_the_kernel_passes_the_gate(tmp_path):
    spec = tmp_path / "sqdist.py"
    spec.write_text(SPEC)
    r = run_axon(["optimize", spec, "-o", tmp_path / "out", "--no-db", "--budget", "6", "--trials", "4"], timeout=300)
    assert r.returncode == EXIT_OK, r.stderr
    rw = json.loads((tmp_path / "out" / "report.json").read_text())["rewrites"]
    refused = [v for v in rw["not_searched"] if "expand-square-of-difference" in v["steps"]]
    assert refused, rw
    assert refused[0]["why_not"].startswith("loses accuracy: on inputs offset by 1000"), refused[0]
    assert "expand-square-of-difference" not in [s["kind"] for s in rw["winner_steps"]]
    assert "loses accuracy" in r.stderr  # said as a warning too
    v = run_axon(["verify", spec, tmp_path / "out" / "kernel.cpp", "--seed", "2", "--no-time", "--json"], timeout=600)
    assert v.returncode == EXIT_OK, v.stdout + v.stderr
    assert json.loads(v.stdout)["verdict"] == "accept"


def test_explain_proves_the_expansion_and_names_its_numerics(tmp_path):
    spec = tmp_path / "sqdist.py"
    spec.write_text(SPEC)
    r = run_axon(["explain", spec], timeout=300)
    assert r.returncode == EXIT_OK, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "expand-square-of-difference" in ln)
    assert line.strip().startswith("[proved]"), r.stdout
    assert "it cancels where p is near q" in line
