"""Golden tests of the IR printer: each tests/golden/*.py runs its RUN
command and must satisfy its CHECK lines (see filecheck.py)."""

import sys
from pathlib import Path

import pytest

import conftest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import filecheck  # noqa: E402

SPECS = filecheck.golden_specs(HERE)


def test_enough_golden_specs():
    assert len(SPECS) >= 8


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_golden(path):
    conftest.require_axon()
    spec = filecheck.GoldenSpec(path)
    rc, out, err = filecheck.run(spec, conftest.AXON_BIN, cwd=conftest.SOURCE_DIR)
    assert rc == 0, f"{spec.run_line} exited {rc}\n{err}"
    problem = filecheck.match(spec, out)
    assert problem is None, problem


def test_matcher_rejects_wrong_order_and_missing_lines(tmp_path):
    """The matcher itself can fail: out-of-order, missing and forbidden text."""
    p = tmp_path / "s.py"
    p.write_text("# RUN: axon check %s\n# CHECK-NOT: bad\n# CHECK: b\n# CHECK: a\n")
    spec = filecheck.GoldenSpec(p)
    assert "out of order" in filecheck.match(spec, "a\nb\n")
    assert filecheck.match(spec, "b\na\n") is None
    assert "not found" in filecheck.match(spec, "b\nc\n")
    assert "CHECK-NOT" in filecheck.match(spec, "b\nbad\na\n")
    # one output line cannot satisfy two CHECKs
    p.write_text("# RUN: axon check %s\n# CHECK: x\n# CHECK: x\n")
    assert filecheck.match(filecheck.GoldenSpec(p), "x\n") is not None


def test_rewrite_round_trips(tmp_path):
    p = tmp_path / "s.py"
    p.write_text("# RUN: axon check %s\nimport numpy as np\n\n# CHECK: old\n")
    spec = filecheck.GoldenSpec(p)
    text = filecheck.rewritten(spec, "func f() {\n  %0 = x\n}\n")
    assert "old" not in text and "# CHECK: %0 = x" in text
    p.write_text(text)
    assert filecheck.match(filecheck.GoldenSpec(p), "func f() {\n  %0 = x\n}\n") is None
