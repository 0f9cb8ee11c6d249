"""The torch.sdpa peer (bench/harness/torch_sdpa.py): PyTorch's fused attention
on each attention workload must give the spec's outputs (peers.compare
against numpy running the spec itself, as `axon bench` checks every peer),
and a program that is not attention is "not applicable", never timed as
something else.
"""

import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import SOURCE_DIR  # noqa: E402

sys.path.insert(0, str(SOURCE_DIR / "bench" / "harness"))
import peers  # noqa: E402

WORKLOADS = SOURCE_DIR / "bench" / "workloads"
ATTENTION = ["m5_attention", "m6_causal_attention", "m7_gqa_decode", "m8_mla_decode", "m9_qknorm_attention"]


def inputs_of(path):
    fn = peers.load_entry(str(path), "", np)
    rng = np.random.default_rng(3)
    shapes = [tuple(int(s) for s in re.fullmatch(r"\w+\[(.*)\]", str(p.annotation)).group(1).split(","))
              for p in inspect.signature(fn).parameters.values()]
    # Scores over a wide range: a form that dropped the scale or the mask
    # would be far off.
    return [3 * rng.standard_normal(s, dtype=np.float32) for s in shapes], peers.param_dtypes(fn)


@pytest.fixture(scope="module")
def torch():
    if not peers.is_installed("torch.sdpa")[0]:
        pytest.skip("torch is not installed")
    import torch
    return torch


@pytest.mark.parametrize("name", ATTENTION)
def test_each_form_matches_its_spec(torch, name):
    path = WORKLOADS / f"{name}.py"
    inputs, dtypes = inputs_of(path)
    want = peers.make_runner("numpy", str(path), "", inputs, dtypes)[0]()
    got = peers.make_runner("torch.sdpa", str(path), "", inputs, dtypes)[0]()
    ok, detail, _ = peers.compare(got, want, None, None)
    assert ok, f"{name}: {detail}"
    assert [g.shape for g in got] == [w.shape for w in want]


def test_every_attention_workload_has_a_form(torch):
    import torch_sdpa
    assert sorted(torch_sdpa.forms(torch)) == sorted(ATTENTION)


def test_a_program_that_is_not_attention_is_not_applicable(torch):
    path = WORKLOADS / "s2_softmax.py"
    inputs, dtypes = inputs_of(path)
    with pytest.raises(peers.NotApplicable, match="s2_softmax"):
        peers.make_runner("torch.sdpa", str(path), "", inputs, dtypes)


def test_a_form_that_differs_from_its_spec_is_a_wrong_result(torch, monkeypatch):
    # The check can fail: the causal form timed for the non-causal spec.
    import torch_sdpa
    forms = torch_sdpa.forms(torch)
    monkeypatch.setattr(torch_sdpa, "forms", lambda t: {**forms, "m5_attention": forms["m6_causal_attention"]})
    path = WORKLOADS / "m5_attention.py"
    inputs, dtypes = inputs_of(path)
    want = peers.make_runner("numpy", str(path), "", inputs, dtypes)[0]()
    got = peers.make_runner("torch.sdpa", str(path), "", inputs, dtypes)[0]()
    ok, _, _ = peers.compare(got, want, None, None)
    assert not ok
