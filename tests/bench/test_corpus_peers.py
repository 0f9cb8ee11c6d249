"""The peers' numpy shims (bench/harness/peers.py) on every program of bench/corpus.

Each program runs under numpy as written, and under torch, jax (when
installed) and torch.compile (only with $AXON_TEST_TORCH_COMPILE=1: it
compiles for seconds per program) through the shims `axon bench` uses; each
peer's outputs must match numpy's in count, shape and value (peers.compare:
within rtol 1e-3 of numpy's scale). Inputs are float32 normal values of the
annotated shapes. A program the shim cannot run fails here rather than as a
"failed" cell of a benchmark table.
"""

import importlib.util
import inspect
import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from conftest import SOURCE_DIR  # noqa: E402

sys.path.insert(0, str(SOURCE_DIR / "bench" / "harness"))
import peers  # noqa: E402

CORPUS = sorted((SOURCE_DIR / "bench" / "corpus").glob("*.py"))
PEERS = ["torch", "jax"] + (["torch.compile"] if os.environ.get("AXON_TEST_TORCH_COMPILE") == "1" else [])


def shapes(fn):
    out = []
    for p in inspect.signature(fn).parameters.values():
        m = re.fullmatch(r"\s*\w+\[(.*)\]\s*", str(p.annotation))
        assert m, f"{fn.__name__}: parameter {p.name} has no array annotation"
        out.append(tuple(int(s) for s in m.group(1).split(",")))
    return out


_numpy_outputs = {}


def numpy_run(path):
    """(inputs, dtypes, numpy's outputs) of one program, computed once."""
    if path not in _numpy_outputs:
        fn = peers.load_entry(str(path), "", np)
        rng = np.random.default_rng(len(path.name))
        inputs = [rng.standard_normal(s, dtype=np.float32) for s in shapes(fn)]
        dtypes = peers.param_dtypes(fn)
        with np.errstate(all="ignore"):
            outputs, _ = peers.make_runner("numpy", str(path), "", inputs, dtypes)
            _numpy_outputs[path] = (inputs, dtypes, outputs())
    return _numpy_outputs[path]


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 40


@pytest.mark.parametrize("peer", PEERS)
@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_each_peer_matches_numpy(path, peer):
    installed, broken = peers.is_installed(peer)
    if not installed:
        pytest.skip(f"{peer} is not installed")
    assert not broken, broken
    inputs, dtypes, want = numpy_run(path)
    outputs, _ = peers.make_runner(peer, str(path), "", inputs, dtypes)
    got = outputs()
    ok, detail, _ = peers.compare(got, want, None, None)
    assert ok, f"{path.name} under {peer}: {detail}"
    assert [np.shape(g) for g in got] == [np.shape(w) for w in want]


def test_the_torch_shim_gives_numpy_transpose_forms():
    if not peers.is_installed("torch")[0]:
        pytest.skip("torch is not installed")
    import torch
    peers.TorchNumpy(torch)
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = torch.from_numpy(x.copy())
    for form in [lambda a: a.transpose(2, 0, 1), lambda a: a.transpose((1, 2, 0)), lambda a: a.transpose(),
                 lambda a: a.T, lambda a: a[0].transpose(1, 0)]:
        assert np.array_equal(form(t).numpy(), form(x))
    assert t.transpose(0, 2).shape == (4, 3, 2)  # torch's own two-dim swap is unchanged


def test_a_view_is_timed_with_its_copy_to_a_dense_array():
    # numpy's np.transpose moves no element; the timed call must produce what axon's kernel writes.
    path = SOURCE_DIR / "bench" / "corpus" / "transpose_nhwc.py"
    inputs, dtypes, want = numpy_run(path)
    assert peers.views_among(want) == [0]
    _, call = peers.make_runner("numpy", str(path), "", inputs, dtypes)
    assert not call().flags.c_contiguous
    dense = peers.made_dense("numpy", call, [0])()
    assert len(dense) == 1 and dense[0].flags.c_contiguous
    assert np.array_equal(dense[0], want[0])
    # a dense output is timed as it is, and so is jax's (XLA writes every output dense)
    rows = SOURCE_DIR / "bench" / "corpus" / "mean_axis0.py"
    assert peers.views_among(numpy_run(rows)[2]) == []
    assert peers.made_dense("numpy", call, []) is call
    assert peers.made_dense("jax", call, [0]) is call
