"""`axon optimize` when the naive kernel misses its own error budget
(docs/optimize.md, "The naive kernel").

The naive kernel is the baseline, not a judge: when it fails its check the
search warns with the numbers (output, worst element, error, budget) and
returns the fastest kernel that passes; only when nothing passes does it
exit with 3, naming the output, the element and the budget, and write no
kernel.

A failing naive kernel is made deterministic with the documented test seam
AXON_TEST_NAIVE_KERNEL: the file it names is compiled, checked and timed as
the naive kernel, for real. kernels/scale_one_element_off.cpp is wrong at
one element of specs/tanh_scale.py (a row kernel exists, so the search can
replace it); kernels/huber_doubled.cpp returns twice the loss of
specs/small_huber.py; with AXON_TEST_NAIVE_ONLY set, every schedule space is
empty, so the naive kernel is the only kernel the search has.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import (AXON_BIN, EXIT_OK, EXIT_OVER_BUDGET, EXIT_USER_ERROR, SOURCE_DIR, describe,  # noqa: E402
                      require_axon, run_axon)

HERE = Path(__file__).resolve().parent
SCALE = HERE / "specs" / "tanh_scale.py"
HUBER = HERE / "specs" / "small_huber.py"
OFF_BY_ONE_ELEMENT = HERE / "kernels" / "scale_one_element_off.cpp"
DOUBLED = HERE / "kernels" / "huber_doubled.cpp"


def optimize(spec, out, naive_kernel=None, naive_only=False):
    require_axon()
    env = dict(os.environ)
    env.pop("AXON_TEST_NAIVE_KERNEL", None)
    env.pop("AXON_TEST_NAIVE_ONLY", None)
    if naive_only:
        env["AXON_TEST_NAIVE_ONLY"] = "1"
    if naive_kernel:
        env["AXON_TEST_NAIVE_KERNEL"] = str(naive_kernel)
    return subprocess.run([str(AXON_BIN), "optimize", str(spec), "-o", str(out), "--budget", "3", "--trials", "4",
                           "--no-db"], capture_output=True, text=True, timeout=120, cwd=SOURCE_DIR, env=env)


@pytest.fixture(scope="module")
def replaced(tmp_path_factory):
    out = tmp_path_factory.mktemp("replaced") / "out"
    r = optimize(SCALE, out, OFF_BY_ONE_ELEMENT)
    return {"r": r, "out": out, "report": json.loads((out / "report.json").read_text())}


def test_a_failing_baseline_is_a_warning_and_the_search_goes_on(replaced):
    r = replaced["r"]
    assert r.returncode == EXIT_OK, describe(r)
    warning = [ln for ln in r.stderr.splitlines() if "the naive kernel misses its error budget" in ln]
    assert len(warning) == 1, r.stderr
    assert warning[0].startswith("axon: warning: ")
    assert "output 0, element [3, 5]" in warning[0] and "budget" in warning[0] and "error" in warning[0]


def test_the_report_names_the_worst_element_with_its_numbers(replaced):
    v = replaced["report"]["verification"]
    assert v["naive_within_budget"] is False
    c = v["naive_check"]
    assert c["output"] == 0 and c["element"] == [3, 5] and c["elements_over"] == 1
    assert c["got"] == pytest.approx(c["reference"] * 1.01, rel=1e-5)
    assert c["error"] == pytest.approx(abs(c["got"] - c["reference"]), rel=1e-6)
    assert 0 < c["budget"] < c["error"]
    assert c["error_over_budget"] == pytest.approx(c["error"] / c["budget"], rel=1e-6)
    assert any("misses its error budget" in w for w in replaced["report"]["warnings"])
    assert "naive kernel: over its error budget at output 0, element [3,5]" in (replaced["out"] / "report.md").read_text()


def test_the_winner_is_a_passing_kernel_not_the_naive_one(replaced):
    rep = replaced["report"]
    assert rep["variant"] == "schedule"
    assert rep["verification"]["max_error_over_budget"] <= 1
    assert rep["time_ms"]["naive"] > 0  # timed all the same, so that the speedup means something
    v = run_axon(["verify", SCALE, replaced["out"] / "kernel.cpp"], timeout=120)
    assert v.returncode == EXIT_OK, describe(v)


def test_nothing_passing_exits_3_and_writes_no_kernel(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "kernel.cpp").write_text("// left by an earlier run\n")
    r = optimize(HUBER, out, DOUBLED, naive_only=True)
    assert r.returncode == EXIT_OVER_BUDGET, describe(r)
    last = r.stderr.strip().splitlines()
    message = [ln for ln in last if ln.startswith("axon: no kernel passed its error-budget check")]
    assert len(message) == 1, r.stderr
    assert "output 0, element []" in message[0] and "budget" in message[0]
    assert not (out / "kernel.cpp").exists() and not (out / "kernel.h").exists()
    rep = json.loads((out / "report.json").read_text())
    assert rep["variant"] == "none"
    assert rep["verification"]["naive_within_budget"] is False
    assert rep["verification"]["naive_check"]["got"] == pytest.approx(2 * rep["verification"]["naive_check"]["reference"],
                                                                      rel=1e-5)
    assert rep["failure"] == message[0][len("axon: "):]
    assert "**no kernel passed**" in (out / "report.md").read_text()


def test_a_passing_baseline_reports_no_warning(tmp_path):
    r = optimize(SCALE, tmp_path / "out")
    assert r.returncode == EXIT_OK, describe(r)
    rep = json.loads((tmp_path / "out" / "report.json").read_text())
    assert rep["verification"]["naive_within_budget"] is True
    assert "naive_check" not in rep["verification"]
    assert rep["warnings"] == []
    assert "warning" not in r.stderr


def test_an_unreadable_replacement_is_a_usage_error(tmp_path):
    r = optimize(SCALE, tmp_path / "out", tmp_path / "missing.cpp")
    assert r.returncode == EXIT_USER_ERROR, describe(r)
    assert "missing.cpp" in r.stderr and "AXON_TEST_NAIVE_KERNEL" in r.stderr


def test_a_naive_answer_says_why(tmp_path):
    """report.json's naive_reason (and report.md and the CLI's line) whenever
    the naive kernel is the answer: here every schedule space is empty."""
    out = tmp_path / "out"
    r = optimize(SCALE, out, naive_only=True)
    assert r.returncode == EXIT_OK, describe(r)
    report = json.loads((out / "report.json").read_text())
    assert report["variant"] == "naive"
    why = report["naive_reason"]
    assert why["why"] == "empty space" and "AXON_TEST_NAIVE_ONLY" in why["detail"], why
    assert "why the naive kernel: " + why["detail"] in (out / "report.md").read_text()
    assert "the naive kernel is the answer: " + why["detail"] in r.stdout


def test_a_searched_answer_has_no_naive_reason(tmp_path):
    out = tmp_path / "out"
    r = optimize(SCALE, out)
    assert r.returncode == EXIT_OK, describe(r)
    report = json.loads((out / "report.json").read_text())
    assert (report["variant"] == "naive") == ("naive_reason" in report), report.get("naive_reason")
