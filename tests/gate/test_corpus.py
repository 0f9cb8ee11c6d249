"""The gate's own test: `axon verify` must accept every kernel in
corpus/good/ and reject every kernel in corpus/bad/ for the stated reason.

Each corpus file starts with one line

    // SPEC: tests/gate/specs/NAME.py  EXPECT: CODE

where SPEC is relative to the repository root and CODE is `accept` (good/)
or one rejection reason code that must be among the reasons the gate gives
(bad/). Other reasons may be reported as well: a kernel that writes past
the end of its output may also come out wrong. An optional second line

    // ARGS: --timeout 2

adds options to the verify command.

The binary comes from $AXON_BIN and the repository root from
$AXON_SOURCE_DIR, falling back to build/axon and the grandparent of this
folder. $AXON_GATE_SEED, when set, is passed on as --seed so that a failure
seen with fresh seeds can be replayed. Verifies spend much of their time
waiting (on the compiler, on the checks that watch for work after return),
so $AXON_GATE_JOBS of them (default: one more than the number of cores, at
most 8) run at once, in the background, as soon as the first one is needed.
"""

import json
import os
import re
import shlex
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
SOURCE_DIR = Path(os.environ.get("AXON_SOURCE_DIR", HERE.parent.parent))
AXON_BIN = Path(os.environ.get("AXON_BIN", SOURCE_DIR / "build" / "axon"))
SEED = os.environ.get("AXON_GATE_SEED")
JOBS = int(os.environ.get("AXON_GATE_JOBS", min(8, (os.cpu_count() or 1) + 1)))

EXIT_ACCEPT, EXIT_USAGE, EXIT_REJECT = 0, 1, 3

REASON_CODES = {
    "compile_error", "forbidden_symbol", "crash", "timeout", "memory_limit",
    "out_of_bounds", "wrote_input", "unwritten_output", "wrong_result",
    "nondeterministic", "stale_state", "ignores_input", "work_after_return",
    "sanitizer", "faster_than_roofline", "output_dependent", "call_count_dependent",
    "not_reentrant", "environment_dependent",
}

MIN_BAD, MIN_GOOD = 30, 12

# One verify compiles the kernel twice (plain and sanitized) and runs a
# battery; the kernels that hang are stopped by the gate's own time limit,
# so this only guards against the gate itself hanging.
VERIFY_TIMEOUT_S = 300

HEADER_RE = re.compile(r"^// SPEC: (?P<spec>\S+)\s+EXPECT: (?P<expect>[a-z_]+)\s*$")
ARGS_RE = re.compile(r"^// ARGS: (?P<args>.*)$")

BAD = sorted((HERE / "corpus" / "bad").glob("*.cpp"))
GOOD = sorted((HERE / "corpus" / "good").glob("*.cpp"))
SPECS = sorted((HERE / "specs").glob("*.py"))


def read_header(path):
    """(spec path, expectation, extra verify arguments) of a corpus file."""
    lines = path.read_text().splitlines() + [""]
    m = HEADER_RE.match(lines[0])
    assert m, f"{path.name}: first line must be '// SPEC: tests/gate/specs/NAME.py  EXPECT: CODE', got {lines[0]!r}"
    a = ARGS_RE.match(lines[1])
    return SOURCE_DIR / m.group("spec"), m.group("expect"), shlex.split(a.group("args")) if a else []


def describe(proc):
    return (f"exit {proc.returncode}\n--- stdout ---\n{proc.stdout[-4000:]}\n"
            f"--- stderr ---\n{proc.stderr[-4000:]}")


def require_axon():
    if not AXON_BIN.is_file():
        pytest.skip(f"axon binary not found at {AXON_BIN} (build it, or set AXON_BIN)")


def verify(spec, kernel, extra=()):
    """Runs `axon verify SPEC KERNEL --json`; returns (process, report)."""
    require_axon()
    args = [str(AXON_BIN), "verify", str(spec), str(kernel), "--json", *extra]
    if SEED is not None:
        args += ["--seed", SEED]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=VERIFY_TIMEOUT_S, cwd=SOURCE_DIR)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        report = None
    return proc, report


def check_report_shape(proc, report):
    """The parts of the --json contract every verdict must honour."""
    assert isinstance(report, dict), f"--json did not print one JSON object\n{describe(proc)}"
    assert report.get("verdict") in ("accept", "reject"), f"bad verdict\n{describe(proc)}"
    reasons = report.get("reasons")
    assert isinstance(reasons, list), f"'reasons' must be a list\n{describe(proc)}"
    for r in reasons:
        assert isinstance(r, dict) and {"code", "message", "evidence"} <= set(r), (
            f"each reason needs code, message and evidence: {r!r}\n{describe(proc)}")
        assert r["code"] in REASON_CODES, f"unknown reason code {r['code']!r}\n{describe(proc)}"
    expected_exit = EXIT_ACCEPT if report["verdict"] == "accept" else EXIT_REJECT
    assert proc.returncode == expected_exit, (
        f"verdict {report['verdict']} must exit {expected_exit}\n{describe(proc)}")
    if report["verdict"] == "accept":
        assert reasons == [], f"an accepted kernel must have no rejection reasons\n{describe(proc)}"
    else:
        assert reasons, f"a rejection must give at least one reason\n{describe(proc)}"


def codes(report):
    return [r["code"] for r in report["reasons"]]


def summary(report):
    lines = [f"  {r['code']}: {r['message']}" for r in report["reasons"]]
    if "seed" in report:
        lines.append(f"  (seed {report['seed']}; replay with AXON_GATE_SEED={report['seed']})")
    return "\n".join(lines)


def verify_corpus_file(path):
    spec, _, extra = read_header(path)
    return verify(spec, path, extra)


@pytest.fixture(scope="module")
def verdicts(request):
    """path -> future of verify_corpus_file(path), for every corpus test
    pytest selected, all submitted at once in test order."""
    require_axon()
    wanted = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is not None and getattr(item, "originalname", "") in CORPUS_TESTS:
            wanted.append(callspec.params["path"])
    with ThreadPoolExecutor(max_workers=max(1, JOBS)) as pool:
        yield {p: pool.submit(verify_corpus_file, p) for p in dict.fromkeys(wanted)}


CORPUS_TESTS = ("test_bad_kernel_is_rejected", "test_good_kernel_is_accepted")


# --------------------------------------------------------------------------
# The corpus itself


def test_corpus_is_large_enough():
    assert len(BAD) >= MIN_BAD, f"only {len(BAD)} bad kernels, want at least {MIN_BAD}"
    assert len(GOOD) >= MIN_GOOD, f"only {len(GOOD)} good kernels, want at least {MIN_GOOD}"


@pytest.mark.parametrize("path", BAD + GOOD, ids=[f"{p.parent.name}/{p.stem}" for p in BAD + GOOD])
def test_header_is_well_formed(path):
    spec, expect, _ = read_header(path)
    assert spec.is_file(), f"{path.name}: spec {spec} does not exist"
    if path.parent.name == "good":
        assert expect == "accept", f"{path.name}: a good kernel must EXPECT: accept"
    else:
        assert expect in REASON_CODES, f"{path.name}: {expect!r} is not a rejection reason code"


def test_every_spec_has_a_good_kernel():
    """A rejection only means something if the spec itself can be met."""
    used = {read_header(p)[0].resolve() for p in GOOD}
    missing = [s.name for s in SPECS if s.resolve() not in used]
    assert not missing, f"specs with no accepted kernel: {missing}"


def test_every_reason_code_is_exercised():
    expected = {read_header(p)[1] for p in BAD}
    assert REASON_CODES <= expected, f"no bad kernel expects {sorted(REASON_CODES - expected)}"


# --------------------------------------------------------------------------
# The gate on the corpus


@pytest.mark.parametrize("path", BAD, ids=[p.stem for p in BAD])
def test_bad_kernel_is_rejected(path, verdicts):
    _, expect, _ = read_header(path)
    proc, report = verdicts[path].result()
    check_report_shape(proc, report)
    assert report["verdict"] == "reject", f"{path.name}: accepted, expected a rejection for {expect}\n{describe(proc)}"
    assert expect in codes(report), (
        f"{path.name}: rejected, but not for {expect}; reasons:\n{summary(report)}")
    if expect == "not_reentrant":
        # Shared static memory is found by ThreadSanitizer whether or not the
        # concurrent rounds happened to overlap on this machine's load.
        tsan = [r for r in report["reasons"] if r["code"] == "not_reentrant" and "ThreadSanitizer" in r["message"]]
        assert tsan, f"{path.name}: not_reentrant, but not from ThreadSanitizer's run; reasons:\n{summary(report)}"
        assert tsan[0]["evidence"]["static_data"], f"{path.name}: the race names no static memory"


@pytest.mark.parametrize("path", GOOD, ids=[p.stem for p in GOOD])
def test_good_kernel_is_accepted(path, verdicts):
    proc, report = verdicts[path].result()
    check_report_shape(proc, report)
    assert report["verdict"] == "accept", f"{path.name}: rejected; reasons:\n{summary(report)}\n{describe(proc)}"
    # A kernel with static memory gets a conclusive race run (even with
    # OpenMP threads of its own), not a note that it could not be judged.
    inconclusive = [n for n in report.get("notes", []) if "ThreadSanitizer" in n]
    assert not inconclusive, f"{path.name}: {inconclusive}"


# --------------------------------------------------------------------------
# Usage errors are not verdicts


def test_missing_kernel_file_is_a_usage_error(tmp_path):
    proc, _ = verify(HERE / "specs" / "rowsum.py", tmp_path / "no_such_kernel.cpp")
    assert proc.returncode == EXIT_USAGE, f"expected exit {EXIT_USAGE}\n{describe(proc)}"


def test_missing_spec_file_is_a_usage_error(tmp_path):
    proc, _ = verify(tmp_path / "no_such_spec.py", GOOD[0])
    assert proc.returncode == EXIT_USAGE, f"expected exit {EXIT_USAGE}\n{describe(proc)}"
