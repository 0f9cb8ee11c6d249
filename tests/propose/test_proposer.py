"""`axon optimize --proposer` end to end (docs/proposers.md).

The search runs once per module on a small SiLU with a temporary tuning
database; every later run answers from that database, so the search's
kernel is the same file each time and "the best stayed" is an exact
comparison. Then:

- the example proposer (examples/proposers/perturb.py) runs two rounds: the
  kernel it leaves is verified again, its gate time is never above the kept
  best's, and the report has the proposer section;
- a cheating proposer (proposers/cheater.py) has every proposal rejected for
  the reason it cheats with, and none becomes kernel.cpp; it also dumps the
  requests it got, which must hold no seed, reference or budget;
- proposers that crash, print garbage, answer a malformed message, hang or
  cannot be started leave optimize with exit 0, the search's kernel and a
  message that says what went wrong.
"""

import json
import os
import shlex
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, SOURCE_DIR, describe, run_axon  # noqa: E402

HERE = Path(__file__).resolve().parent
SPEC = HERE / "specs" / "small_silu.py"
PERTURB = SOURCE_DIR / "examples" / "proposers" / "perturb.py"
CHEATER = HERE / "proposers" / "cheater.py"
MISBEHAVE = HERE / "proposers" / "misbehave.py"
PY = shlex.quote(sys.executable)

WITHHELD_WORDS = ("seed", "reference", "budget")


def optimize(out, db, *extra, timeout=300):
    return run_axon(["optimize", SPEC, "-o", out, "--db", db, "--budget", "4", "--trials", "4", "--seed", "3",
                     *extra], timeout=timeout)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("propose")
    db = tmp / "tuning.sqlite"
    r = optimize(tmp / "base", db)
    assert r.returncode == EXIT_OK, describe(r)
    return {"tmp": tmp, "db": db, "kernel": (tmp / "base" / "kernel.cpp").read_text(),
            "report": json.loads((tmp / "base" / "report.json").read_text())}


def run_with(base, name, proposer, *extra, timeout=300):
    out = base["tmp"] / name
    r = optimize(out, base["db"], "--proposer", proposer, *extra, timeout=timeout)
    assert r.returncode == EXIT_OK, describe(r)
    report = json.loads((out / "report.json").read_text())
    return r, out, report


def all_keys(j):
    if isinstance(j, dict):
        for k, v in j.items():
            yield k
            yield from all_keys(v)
    elif isinstance(j, list):
        for v in j:
            yield from all_keys(v)


# --- the example proposer -------------------------------------------------

@pytest.fixture(scope="module")
def perturbed(base):
    cmd = f"{PY} {shlex.quote(str(PERTURB))} --per-round 1 --seed 5"
    r, out, report = run_with(base, "perturb", cmd, "--proposer-rounds", "2")
    return {"stderr": r.stderr, "out": out, "report": report}


def test_perturb_report_has_proposer_section(perturbed):
    p = perturbed["report"]["proposer"]
    assert p["command"].endswith("--per-round 1 --seed 5")
    assert p["rounds"] == 2 and p["rounds_run"] >= 1
    assert p["error"] is None, p["error"]
    assert p["stop_reason"] in ("rounds", "done")
    assert p["proposed"] == len(p["proposals"]) >= 1
    for x in p["proposals"]:
        assert x["kind"] in ("schedule", "source")
        assert x["verdict"] in ("accepted", "rejected")
        if x["verdict"] == "accepted":
            assert x["time_ms"] > 0 and x["reasons"] == []
        else:
            assert x["reasons"] and not x["winner"]
    assert "## proposer" in (perturbed["out"] / "report.md").read_text()
    assert "proposer: round 1" in perturbed["stderr"]


def test_perturb_never_worse_than_the_kept_best(perturbed, base):
    p = perturbed["report"]["proposer"]
    accepted = [x for x in p["proposals"] if x["verdict"] == "accepted"]
    if accepted:
        # The search's best was timed through the gate to compare with.
        assert p["baseline_gate_ms"] is not None
    winners = [x for x in p["proposals"] if x["winner"]]
    kernel = (perturbed["out"] / "kernel.cpp").read_text()
    if not winners:
        assert p["winner"] is None and not p["improved"]
        assert kernel == base["kernel"]
        return
    assert p["improved"] and p["winner"] == winners[-1]["id"]
    times = [p["baseline_gate_ms"]] + [x["time_ms"] for x in winners]
    assert all(b < a for a, b in zip(times, times[1:])), times
    assert p["best_gate_ms"] == winners[-1]["time_ms"] <= p["baseline_gate_ms"]
    t = perturbed["report"]["time_ms"]
    assert t["axon"] == p["best_gate_ms"] and t["search"] == base["report"]["time_ms"]["axon"]
    assert perturbed["report"]["variant"] == "proposer"
    assert kernel != base["kernel"]


def test_perturb_kernel_still_verified(perturbed):
    v = run_axon(["verify", SPEC, perturbed["out"] / "kernel.cpp", "--no-time"], timeout=300)
    assert v.returncode == EXIT_OK, describe(v)


# --- the cheater ------------------------------------------------------------

@pytest.fixture(scope="module")
def cheated(base):
    dump = base["tmp"] / "requests.jsonl"
    cmd = f"{PY} {shlex.quote(str(CHEATER))} --dump {shlex.quote(str(dump))}"
    r, out, report = run_with(base, "cheat", cmd, "--proposer-rounds", "2")
    requests = [json.loads(line) for line in dump.read_text().splitlines()]
    return {"stderr": r.stderr, "out": out, "report": report, "requests": requests}


def test_cheats_all_rejected_for_their_reason(cheated):
    p = cheated["report"]["proposer"]
    by_id = {x["id"]: x for x in p["proposals"]}
    expected = {"wrong_result", "out_of_bounds", "stale_state", "forbidden_symbol", "illegal_schedule",
                "malformed_proposal"}
    assert set(by_id) == expected
    for code, x in by_id.items():
        assert x["verdict"] == "rejected", x
        codes = {r["code"] for r in x["reasons"]}
        # The cached-by-pointer kernel is also wrong on the reused buffer.
        assert code in codes, (code, codes)
        assert not x["winner"]
    assert p["accepted"] == 0 and p["winner"] is None and not p["improved"]
    assert p["stop_reason"] == "done"


def test_cheats_never_become_the_kernel(cheated, base):
    assert (cheated["out"] / "kernel.cpp").read_text() == base["kernel"]
    r = cheated["report"]
    assert r["variant"] != "proposer"
    assert r["time_ms"]["axon"] == base["report"]["time_ms"]["axon"]


def test_requests_hold_no_seed_reference_or_budget(cheated):
    reqs = cheated["requests"]
    assert [q["round"] for q in reqs] == [1, 2]
    for q in reqs:
        for k in ["type", "round", "spec", "entry", "ir", "target", "abi", "best", "space", "history"]:
            assert k in q, k
        assert q["type"] == "request"
        assert "def small_silu" in q["spec"] and "func small_silu" in q["ir"]
        assert q["best"]["source"] == (cheated["out"] / "kernel.cpp").read_text()
        assert q["space"] and all(k["values"] for k in q["space"])
        bad = [k for k in all_keys(q) if any(w in k.lower() for w in WITHHELD_WORDS)]
        assert bad == [], bad
    history = reqs[1]["history"]
    assert len(history) == 6
    wrong = next(h for h in history if h["id"] == "wrong_result")
    msg = wrong["reasons"][0]["message"]
    # The verdict's message names the element, never the reference value.
    assert "reference <withheld>" in msg and "budget <withheld>" in msg, msg
    for h in history:
        assert set(h) == {"id", "round", "kind", "verdict", "reasons", "time_ms", "winner"}
        for r in h["reasons"]:
            assert set(r) == {"code", "message"}  # no evidence


# --- proposers that break the protocol --------------------------------------

BROKEN = {
    "crash": "the proposer ended (exit 3) before answering round 1",
    "garbage": "is not JSON: 'here are some kernels, I think'",
    "malformed": "is not {\"type\": \"proposals\"",
}


@pytest.mark.parametrize("mode", sorted(BROKEN))
def test_broken_proposer_keeps_the_best(base, mode):
    r, out, report = run_with(base, mode, f"{PY} {shlex.quote(str(MISBEHAVE))} {mode}")
    assert "proposer: error: " in r.stderr and BROKEN[mode] in r.stderr, r.stderr
    assert "keeping the best kernel so far" in r.stderr
    p = report["proposer"]
    assert BROKEN[mode] in p["error"]
    assert p["stop_reason"] == "proposer failed" and p["proposals"] == []
    assert (out / "kernel.cpp").read_text() == base["kernel"]
    assert report["time_ms"] == base["report"]["time_ms"]


def test_hanging_proposer_is_killed(base):
    pid_file = base["tmp"] / "hang.pid"
    t0 = time.monotonic()
    r, out, report = run_with(base, "hang", f"{PY} {shlex.quote(str(MISBEHAVE))} hang --pid-file {pid_file}",
                              "--proposer-timeout", "2", timeout=120)
    assert time.monotonic() - t0 < 60
    assert "did not answer round 1 within 2 s; killed it" in r.stderr, r.stderr
    assert (out / "kernel.cpp").read_text() == base["kernel"]
    pid = int(pid_file.read_text())
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the hung proposer (pid {pid}) is still running")


def test_missing_proposer_command(base):
    r, out, report = run_with(base, "missing", "/nonexistent/proposer --x")
    assert "the proposer ended (exit 127)" in r.stderr, r.stderr
    assert (out / "kernel.cpp").read_text() == base["kernel"]


def test_without_proposer_no_section(base):
    assert "proposer" not in base["report"]
