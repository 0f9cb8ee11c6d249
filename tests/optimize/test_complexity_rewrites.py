"""`axon explain` finds the rewrites that lower the order of the work
(docs/rewrites.md): on each program below, of f32[512, 512] operands, at
least one rewrite is proved and it cuts the FLOPs from about 2 n^3 to at most
4 n^2, and the chosen variant is that one."""

import json
from pathlib import Path

import pytest

import sys
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import EXIT_OK, run_axon  # noqa: E402

SPECS = Path(__file__).resolve().parent / "specs"
N = 512

CASES = {
    "rowsum_of_product": "sum-into-contraction",
    "matvec_chain": "reassociate-chain",
    "total_of_product": "sum-into-contraction",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_lists_a_proved_complexity_rewrite(name):
    r = run_axon(["explain", "--json", SPECS / f"{name}.py"], timeout=120)
    assert r.returncode == EXIT_OK, r.stderr
    j = json.loads(r.stdout)
    assert j["cost"]["flops"] >= 2 * N**3
    proved = [w for w in j["rewrites"] if w["kind"] == CASES[name] and w["status"] == "proved"]
    assert len(proved) >= 1, j["rewrites"]
    assert proved[0]["cost_after"]["flops"] <= 4 * N**2
    assert [s["kind"] for s in j["chosen"]["steps"]] == [CASES[name]]
    assert j["chosen"]["cost"]["flops"] <= 4 * N**2
    # The chosen variant's stages: no n^3 matrix product is left in them.
    stages = j["chosen"]["stages"]
    assert stages and all(s["what"] for s in stages), stages
    assert not any(s["kind"] == "contraction" and f"M {N}, N {N}, K {N}" in s["what"] for s in stages), stages


@pytest.mark.parametrize("name", sorted(CASES))
def test_explain_text_counts_the_rewrite(name):
    r = run_axon(["explain", SPECS / f"{name}.py"], timeout=120)
    assert r.returncode == EXIT_OK, r.stderr
    first = r.stdout.splitlines()[1]
    assert first.endswith("rewrite(s) applicable:") and int(first.split()[0]) >= 1, r.stdout
    assert f"[proved] {CASES[name]}" in r.stdout
