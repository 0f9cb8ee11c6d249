"""The command-line fuzzer on a fixed set of seeds: random specs over the
spec language (fuzzgen.py: progen's programs, each operation also in its
other numpy spellings) through `axon check`, `axon explain` and
`axon optimize --budget 1 --trials 1`. A spec may be refused (exit 1) and
optimize may find nothing within budget (exit 3); exit 2, a signal or a hang
fails the test, which prints the program shrunk to the smallest one that
still breaks axon the same way. bench/fuzz/fuzz.py runs long campaigns.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import conftest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cli_fuzz  # noqa: E402
import fuzzgen  # noqa: E402
import progen  # noqa: E402

SEEDS = range(50)
_shrinks_left = [2]  # shrinking costs up to 60 runs of all three commands


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    """The host's description with its peaks, measured once: every optimize
    reads it instead of probing the peaks again (as bench/fuzz/fuzz.py does)."""
    conftest.require_axon()
    r = subprocess.run([str(conftest.AXON_BIN), "target", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    path = tmp_path_factory.mktemp("target") / "target.json"
    path.write_text(r.stdout)
    return path


@pytest.mark.parametrize("seed", SEEDS)
def test_axon_survives_a_random_spec(seed, tmp_path, target):
    conftest.require_axon()
    prog = fuzzgen.generate(seed)
    v = cli_fuzz.verdict(prog.source(), tmp_path / "original", conftest.AXON_BIN, conftest.SOURCE_DIR, target=target)
    if v is None:
        return
    report = f"seed {seed}: axon {v[0]}: {v[1]}\n--- program ---\n{prog.source()}--- what happened ---\n{v[2]}\n"
    if _shrinks_left[0] > 0:
        _shrinks_left[0] -= 1
        res = cli_fuzz.minimize(prog, v, tmp_path / "shrink", conftest.AXON_BIN, conftest.SOURCE_DIR, target=target)
        report += f"--- shrunk in {res.steps} steps ({res.evaluations} runs) to ---\n{res.program.source()}"
    pytest.fail(report, pytrace=False)


def test_the_generator_is_deterministic_and_valid():
    for seed in range(20):
        a, b = fuzzgen.generate(seed), fuzzgen.generate(seed)
        assert a.source() == b.source()
        assert progen.is_valid(a), a.source()


def test_the_generator_writes_each_form():
    text = "".join(fuzzgen.generate(s).source() for s in range(300))
    for form in ["np.reciprocal(", "** -1", "** 0.5", "np.sqrt(", "np.square(", "(1.0 / (", " @ ",
                 "/ (1.0 + np.exp(", "* (1.0 / (1.0 + np.exp("]:
        assert form in text, form


def test_the_verdict_catches_a_breach(tmp_path):
    """A stand-in for axon that crashes on optimize: the verdict names it."""
    fake = tmp_path / "fake_axon.sh"
    fake.write_text('#!/bin/sh\nif [ "$1" = optimize ]; then kill -SEGV $$; fi\nexit 0\n')
    fake.chmod(0o755)
    v = cli_fuzz.verdict(fuzzgen.generate(0).source(), tmp_path / "run", fake, tmp_path)
    assert v is not None and v[0] == "optimize" and v[1] == "signal SIGSEGV", v
    fake.write_text("#!/bin/sh\nexit 2\n")
    v = cli_fuzz.verdict(fuzzgen.generate(0).source(), tmp_path / "run2", fake, tmp_path)
    assert v is not None and v[0] == "check" and v[1] == "exit 2", v
    fake.write_text("#!/bin/sh\nexit 1\n")
    assert cli_fuzz.verdict(fuzzgen.generate(0).source(), tmp_path / "run3", fake, tmp_path) is None


def test_the_verdict_hands_optimize_the_target_file(tmp_path):
    fake = tmp_path / "fake_axon.sh"
    fake.write_text('#!/bin/sh\necho "$@" >> "$(dirname "$0")/calls"\nexit 0\n')
    fake.chmod(0o755)
    assert cli_fuzz.verdict(fuzzgen.generate(0).source(), tmp_path / "run", fake, tmp_path, target="/t.json") is None
    calls = (tmp_path / "calls").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["check", "explain", "optimize"]
    assert calls[2].endswith("--target /t.json") and "--target" not in calls[0] + calls[1]


def test_the_verdict_runs_only_the_stages_asked(tmp_path):
    """check and explain alone (the sanitized build's campaign) never run optimize."""
    fake = tmp_path / "fake_axon.sh"
    fake.write_text('#!/bin/sh\necho "$1" >> "$(dirname "$0")/calls"\n'
                    'if [ "$1" = optimize ]; then kill -SEGV $$; fi\nexit 0\n')
    fake.chmod(0o755)
    source = fuzzgen.generate(0).source()
    codes = {}
    assert cli_fuzz.verdict(source, tmp_path / "run", fake, tmp_path, stages=("check", "explain"), codes=codes) is None
    assert (tmp_path / "calls").read_text().split() == ["check", "explain"]
    assert codes == {"check": 0, "explain": 0}
    v = cli_fuzz.verdict(source, tmp_path / "run2", fake, tmp_path, codes=codes)
    assert v is not None and v[0] == "optimize", v
    assert codes == {"check": 0, "explain": 0, "optimize": -11}


def test_fuzz_regression_seed_10996(tmp_path):
    """(A @ B) @ (A @ B): the campaign's breach of seeds 10000:12000 (explain
    described a chain's bracketing by reading its pre-order splits right run
    first, out of range). axon survives its minimal program."""
    conftest.require_axon()
    source = (Path(__file__).resolve().parent / "fuzz_regressions" / "seed_10996.py").read_text()
    assert cli_fuzz.verdict(source, tmp_path / "run", conftest.AXON_BIN, conftest.SOURCE_DIR) is None


def test_fuzz_regression_seed_11593(tmp_path):
    """A 0-d chain of exp, tanh, |.| and reciprocals: one proof query of
    explain kept Z3 in nonlinear real arithmetic for minutes, past Z3's own
    timeout and its interrupt. Every query now ends at its deadline
    (src/verify/smt/bounded_check.h): explain finishes well inside the time
    limit and lists the rewrites whose proof gave up as unknown, not used."""
    conftest.require_axon()
    spec = Path(__file__).resolve().parent / "fuzz_regressions" / "seed_11593.py"
    try:
        r = conftest.run_axon(["explain", spec, "--json"], timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("axon explain ran past 120 s", pytrace=False)
    assert r.returncode == 0, conftest.describe(r)
    report = json.loads(r.stdout)
    gave_up = [w for w in report["rewrites"] if w["status"] == "unknown"]
    assert gave_up, [w["status"] for w in report["rewrites"]]
    for w in gave_up:
        assert "killed at the deadline of" in w["reason"] or w["reason"] == "the proof budget was spent", w
