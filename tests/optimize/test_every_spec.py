"""`axon optimize` never dies on a spec it can parse (docs/optimize.md,
"Failures are contained").

Every spec of tests/errors/ (bad specs: exit 1) and bench/workloads/ (exit
0, or 3 when no kernel passes its check) goes through `axon optimize` with
a tiny budget, and the exit code must be 0, 1 or 3: never 2 (axon's own
bug) and never a signal (a crash). The workloads are shrunk first: every
size in their annotations is divided by 16 (at least 2), which keeps their
structure, their equal sizes equal and their shape arithmetic exact, and
keeps the float64 reference and the kernels fast enough for the suite
(about two minutes on 2 cores). AXON_SWEEP_FULL_SIZE=1 runs them at their
own sizes instead (several minutes more: the reference of the attention
workloads alone takes seconds per input).

The property generator's programs (tests/property/progen.py, the seeds of
test_random_programs.py, which runs them through `axon run`) go through
`axon optimize --budget 1 --trials 1` under the same rule, with the
host's peaks measured once for all of them (about a second each).

Also the spec that crashed the rewrite exploration: SiLU after a matmul
written as y * (1 / (1 + exp(-y))).
"""

import os
import re
import shlex
import signal
from pathlib import Path

import pytest

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "property"))
from conftest import EXIT_OK, EXIT_OVER_BUDGET, EXIT_USER_ERROR, SOURCE_DIR, describe, run_axon  # noqa: E402
import progen  # noqa: E402
import test_random_programs  # noqa: E402

ERRORS = sorted(p for p in (SOURCE_DIR / "tests" / "errors").glob("*.py") if not p.name.startswith("test_"))
WORKLOADS = sorted((SOURCE_DIR / "bench" / "workloads").glob("*.py"))
SILU = Path(__file__).resolve().parent / "specs" / "silu_reciprocal_matmul.py"
ALLOWED = {EXIT_OK, EXIT_USER_ERROR, EXIT_OVER_BUDGET}
FULL_SIZE = os.environ.get("AXON_SWEEP_FULL_SIZE") == "1"

ANNOTATION_RE = re.compile(r'"(?P<dtype>[a-z]+[0-9]*)\[(?P<dims>[0-9, ]*)\]"')


def shrunk(text, factor=16):
    """The spec with every literal size of its annotations divided by `factor` (at least 2)."""
    def one(m):
        dims = [d.strip() for d in m.group("dims").split(",") if d.strip()]
        small = [str(max(2, int(d) // factor)) if int(d) > 1 else d for d in dims]
        return f'"{m.group("dtype")}[{", ".join(small)}]"'
    return ANNOTATION_RE.sub(one, text)


def extra_args(path):
    """The `# ARGS:` line of a tests/errors spec (its -D bindings), if any."""
    for line in path.read_text().splitlines()[:3]:
        if line.startswith("# ARGS:"):
            return shlex.split(line[len("# ARGS:"):])
    return []


def optimize(spec, out, *extra):
    return run_axon(["optimize", spec, "-o", out, "--budget", "2", "--trials", "4", "--no-db", *extra], timeout=300)


def assert_contained(r, spec):
    assert r.returncode >= 0, f"{spec}: killed by signal {signal.Signals(-r.returncode).name}\n{describe(r)}"
    assert r.returncode in ALLOWED, f"{spec}: exit {r.returncode}\n{describe(r)}"


def test_shrinking_keeps_the_structure():
    text = 'def f(q: "f32[32, 128]", K: "f32[8, 4096, 128]", b: "f32[1, 16]", s: "f32[]"):\n'
    assert shrunk(text) == 'def f(q: "f32[2, 8]", K: "f32[2, 256, 8]", b: "f32[1, 2]", s: "f32[]"):\n'


def test_the_sweep_covers_both_folders_and_the_generator():
    assert len(ERRORS) >= 35 and len(WORKLOADS) >= 15
    assert len(PROGRAM_SEEDS) >= 60


PROGRAM_SEEDS = test_random_programs.SEEDS


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """The host's description with its peaks, measured once for the generated programs."""
    r = run_axon(["target", "--json"], timeout=120)
    assert r.returncode == EXIT_OK, describe(r)
    path = tmp_path_factory.mktemp("target") / "target.json"
    path.write_text(r.stdout)
    return path


@pytest.mark.parametrize("seed", PROGRAM_SEEDS)
def test_generated_program_is_contained(seed, tmp_path, target):
    spec = tmp_path / "spec.py"
    spec.write_text(progen.generate(seed).source())
    r = run_axon(["optimize", spec, "-o", tmp_path / "out", "--budget", "1", "--trials", "1", "--no-db",
                  "--target", target], timeout=300)
    assert_contained(r, f"progen seed {seed}:\n{spec.read_text()}")


@pytest.mark.parametrize("spec", ERRORS, ids=[p.stem for p in ERRORS])
def test_bad_spec_is_a_user_error(spec, tmp_path):
    r = optimize(spec, tmp_path / "out", *extra_args(spec))
    assert_contained(r, spec)
    # Every spec of tests/errors is wrong: nothing else than exit 1 is right.
    assert r.returncode == EXIT_USER_ERROR, describe(r)


@pytest.mark.parametrize("spec", WORKLOADS, ids=[p.stem for p in WORKLOADS])
def test_workload_is_contained(spec, tmp_path):
    path = spec
    if not FULL_SIZE:
        path = tmp_path / spec.name
        path.write_text(shrunk(spec.read_text()))
    r = optimize(path, tmp_path / "out")
    assert_contained(r, spec)
    out = tmp_path / "out"
    assert (out / "report.json").stat().st_size > 2, describe(r)
    if r.returncode == EXIT_OK:
        assert (out / "kernel.cpp").is_file(), describe(r)
    else:
        assert "no kernel passed" in r.stderr, describe(r)


def test_explain_on_the_reciprocal_silu_after_a_matmul():
    r = run_axon(["explain", SILU, "--json"], timeout=120)
    assert r.returncode == EXIT_OK, describe(r)
    import json
    report = json.loads(r.stdout)
    folds = [w for w in report["rewrites"] if w["kind"] == "fold-constants"]
    assert folds and folds[0]["status"] == "proved", report["rewrites"]


def test_optimize_on_the_reciprocal_silu_after_a_matmul(tmp_path):
    r = optimize(SILU, tmp_path / "out")
    assert r.returncode == EXIT_OK, describe(r)
    assert (tmp_path / "out" / "kernel.cpp").is_file()
