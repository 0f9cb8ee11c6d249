"""report.json's "kernel" section (src/optimize/kernel_report.h): the
winner's stages, the temporaries each allocates, the values stored between
them, and the proof of each identity a lowering applies on its own."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import EXIT_OK, run_axon  # noqa: E402

B, M, N = 2, 64, 128
HEAD = f'''import numpy as np

def attn(Q: "f32[{B}, {M}, 32]", K: "f32[{B}, {N}, 32]", V: "f32[{B}, {N}, 64]"):
    s = Q @ np.swapaxes(K, -1, -2) * 0.125
'''
SOFTMAX = "    p = np.exp(s - np.max(s, axis=-1, keepdims=True))\n    p = p / np.sum(p, axis=-1, keepdims=True)\n"


def kernel_section(tmp_path, body):
    spec = tmp_path / "spec.py"
    spec.write_text(HEAD + body)
    r = run_axon(["optimize", spec, "-o", tmp_path / "out", "--budget", "4", "--trials", "4", "--no-db"], timeout=300)
    assert r.returncode == EXIT_OK, r.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["variant"] == "schedule", report["variant"]
    return report["kernel"]


def score_sized(section):
    """Temporaries that hold a whole M x N score matrix of a head or more."""
    found = [t for t in section["between_stages"] if t["elements"] >= M * N]
    for s in section["stages"]:
        found += [t for t in s.get("temporaries", []) if t["elements"] >= M * N]
    return found


def test_fused_attention_stores_no_score_matrix_and_cites_its_proof(tmp_path):
    for mask in ["", f"    s = np.where(np.triu(np.ones(({M}, {N}), dtype=bool), k=1), -np.inf, s)\n"]:
        section = kernel_section(tmp_path, mask + SOFTMAX + "    return p @ V\n")
        assert [s["kind"] for s in section["stages"]] == ["attention"], section
        assert score_sized(section) == [], section
        stage = section["stages"][0]
        assert "tile_program" not in stage and stage["temporaries"], stage
        proofs = stage["proofs"]
        assert [p["rule"] for p in proofs] == ["online-softmax"]
        if not mask:
            assert proofs[0]["status"] == "proved" and proofs[0]["solver"] == "z3" and proofs[0]["queries"] > 0, proofs
        else:
            # The rewrite as stated splits the keys into two tiles; a tile
            # wholly masked for a row has max -inf and exp(-inf + inf) = NaN,
            # which the prover finds. The kernel takes its differences from
            # 0 there (tile/lower_attention.h); the report must not claim a
            # proof it does not have.
            assert proofs[0]["status"] == "refuted" and "nan" in proofs[0]["counterexample"], proofs


def test_the_score_matrix_shows_when_it_is_stored(tmp_path):
    # The probabilities are also an output: no fusion, and the scores pass
    # between stages through memory, which the section must show.
    section = kernel_section(tmp_path, SOFTMAX + "    return p @ V, p\n")
    kinds = [s["kind"] for s in section["stages"]]
    assert "attention" not in kinds and "contraction" in kinds, kinds
    assert any(t["elements"] == B * M * N for t in section["between_stages"]), section
    assert score_sized(section), section
    for s in section["stages"]:
        assert "proofs" not in s
    # And it says why the score product is stored: the row stage after it
    # is no epilogue (the softmax's max over the keys in the original
    # graph; its several results in the variant that divides after the
    # product with V, which the search may pick instead).
    contractions = [s for s in section["partition"] if s["kind"] == "contraction"]
    assert contractions, section["partition"]
    why = " ".join(w for s in contractions for w in s["why"])
    assert "no epilogue: the row stage reading its product %" in why, section["partition"]
    assert "reduce_max over axes [2]" in why or "results; an epilogue computes one" in why, section["partition"]


def test_explain_shows_the_original_stages_beside_a_rewritten_choice(tmp_path):
    # explain's cost model prefers dividing after the product with V (a
    # rewrite); optimize also searches the original graph, whose softmax @ V
    # is one attention stage: explain lists both.
    spec = tmp_path / "spec.py"
    spec.write_text(HEAD + SOFTMAX + "    return p @ V\n")
    r = run_axon(["explain", "--json", spec], timeout=300)
    assert r.returncode == EXIT_OK, r.stderr
    report = json.loads(r.stdout)
    assert report["chosen"]["steps"], report["chosen"]
    assert "attention" not in [s["kind"] for s in report["chosen"]["stages"]], report["chosen"]["stages"]
    assert [s["kind"] for s in report["original_stages"]] == ["attention"], report["original_stages"]
    text = run_axon(["explain", spec], timeout=300)
    assert text.returncode == EXIT_OK, text.stderr
    assert "stages of the original graph (optimize searches it too):\n  attention: " in text.stdout, text.stdout
