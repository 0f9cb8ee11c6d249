"""`axon optimize` searches the proved rewrites of a graph too (docs/optimize.md).

small_chain is `(A@B)@C` with a thin C: the proved reassociation `A@(B@C)`
does 32x fewer FLOPs, so its kernel must win. The tests check that the
report lists the rule with its Z3 proof, that the written kernel passes
`axon verify` against the ORIGINAL spec, that a database answer rebuilds
the same rewritten kernel, and that `--no-rewrites` lists none (and never
answers with the rewritten kernel from the same database).
"""

import json
import time
from pathlib import Path

import pytest

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, run_axon  # noqa: E402

SPEC = Path(__file__).resolve().parent / "specs" / "small_chain.py"


def optimize(out, db, *extra):
    return run_axon(["optimize", SPEC, "-o", out, "--db", db, "--budget", "8", "--trials", "6", "--seed", "3", *extra],
                    timeout=120)


@pytest.fixture(scope="module")
def chain(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("chain")
    db = tmp / "tuning.sqlite"
    r = optimize(tmp / "out", db)
    assert r.returncode == EXIT_OK, r.stderr
    return {"tmp": tmp, "db": db, "out": tmp / "out", "report": json.loads((tmp / "out" / "report.json").read_text())}


def test_report_lists_the_applied_rewrite_with_its_proof(chain):
    rw = chain["report"]["rewrites"]
    assert rw["enabled"] is True
    assert rw["explored"] >= 2
    applied = rw["applied"]
    assert [a["rule"] for a in applied] == ["reassociate"], rw
    a = applied[0]
    assert a["proof"]["status"] == "proved" and a["proof"]["solver"] == "z3"
    assert a["proof"]["queries"] >= 1
    assert a["after"]["flops"] < a["before"]["flops"] / 10
    searched = rw["searched"]
    assert len(searched) >= 2 and searched[0]["steps"] == []  # the original is always searched
    winners = [s for s in searched if s["winner"]]
    assert len(winners) == 1 and winners[0]["steps"] == ["reassociate"]
    assert winners[0]["hash"] == rw["winner_hash"]
    # Budget and trials are shared, not multiplied.
    assert sum(s["candidates"] for s in searched) == chain["report"]["search"]["candidates"] <= 6
    assert chain["report"]["verification"]["max_error_over_budget"] <= 1


def test_report_md_shows_the_rewrite(chain):
    md = (chain["out"] / "report.md").read_text()
    assert "Rewrites applied" in md and "reassociate" in md and "proved by z3" in md


def test_kernel_passes_verify_against_the_original_spec(chain):
    v = run_axon(["verify", SPEC, chain["out"] / "kernel.cpp", "--no-sanitizer", "--no-time"], timeout=120)
    assert v.returncode == EXIT_OK, v.stdout + v.stderr


def test_database_answer_rebuilds_the_rewritten_kernel(chain):
    out2 = chain["tmp"] / "again"
    t0 = time.monotonic()
    r = optimize(out2, chain["db"])
    elapsed = time.monotonic() - t0
    assert r.returncode == EXIT_OK, r.stderr
    rep = json.loads((out2 / "report.json").read_text())
    assert rep["search"]["stop_reason"] == "database"
    assert elapsed < 1.0, f"answer from the database took {elapsed:.2f} s"
    assert rep["verification"]["rechecked"] is True
    assert rep["rewrites"]["applied"] == chain["report"]["rewrites"]["applied"]
    assert (out2 / "kernel.cpp").read_text() == (chain["out"] / "kernel.cpp").read_text()


def test_no_rewrites_lists_none(chain):
    out = chain["tmp"] / "plain"
    # The same database: --no-rewrites must not answer with the rewritten winner.
    r = run_axon(["optimize", SPEC, "-o", out, "--db", chain["db"], "--budget", "5", "--trials", "3", "--seed", "3",
                  "--no-rewrites"], timeout=120)
    assert r.returncode == EXIT_OK, r.stderr
    rep = json.loads((out / "report.json").read_text())
    rw = rep["rewrites"]
    assert rw["enabled"] is False and rw["applied"] == [] and rw["stop_reason"] == "disabled"
    assert [s["steps"] for s in rw["searched"]] == [[]]
    assert rep["search"]["stop_reason"] != "database"
    assert "rewrites: off" in (out / "report.md").read_text()
