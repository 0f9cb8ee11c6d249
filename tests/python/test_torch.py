"""torch tensors through @axon.jit, and axon.torch.op: a torch custom op
whose fake implementation comes from the spec, inside a torch.compile
fullgraph module. Skipped, with the reason shown, where torch is not
installed (scripts/test.sh installs the CPU build when it can)."""

import numpy as np
import pytest

from pysupport import FAST, assert_close, axon, float64_reference

import specs_as_functions as S

try:
    import torch
except ImportError as e:
    pytest.skip(f"torch cannot be imported ({e}); scripts/test.sh installs it when it can",
                allow_module_level=True)
import axon.torch  # noqa: E402


def test_torch_tensors_in_torch_tensors_out():
    f = axon.jit(S.scale_rows, **FAST)
    x, w = torch.randn(32, 64), torch.randn(64)
    y = f(x, w)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.float32 and y.shape == (32, 64)
    assert_close(y.numpy(), float64_reference(S.scale_rows, x.numpy(), w.numpy()))
    # Zero copy in: the same kernel serves a numpy call of the same shapes.
    y2 = f(x.numpy(), w.numpy())
    assert isinstance(y2, np.ndarray)
    assert f.stats["optimized"] == 1


def test_torch_arguments_are_checked():
    f = axon.jit(S.scale_rows, **FAST)
    w = torch.randn(64)
    with pytest.raises(axon.ShapeError, match="argument 'x' has dtype torch.float64"):
        f(torch.randn(32, 64, dtype=torch.float64), w)
    x = torch.randn(64, 32).t()
    with pytest.warns(axon.CopyWarning, match="argument 'x' is not contiguous"):
        y = f(x, w)
    assert_close(y.numpy(), float64_reference(S.scale_rows, x.numpy(), w.numpy()))
    p = torch.nn.Parameter(torch.randn(32, 64))
    assert f(p, w).shape == (32, 64)


scale_rows_op = axon.torch.op("axon_test::scale_rows", S.scale_rows, **FAST)
rms_stats_op = axon.torch.op("axon_test::rms_stats", S.rms_stats, **FAST)


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.randn(64))

    def forward(self, x):
        h = torch.ops.axon_test.scale_rows(x * 0.5, self.w.detach())
        y, ms = torch.ops.axon_test.rms_stats(h)
        return y.sum(dim=1) + ms


def test_the_op_and_its_fake_shapes():
    x, w = torch.randn(32, 64), torch.randn(64)
    assert_close(scale_rows_op(x, w).numpy(), float64_reference(S.scale_rows, x.numpy(), w.numpy()))
    torch.library.opcheck(scale_rows_op, (x, w), test_utils=("test_schema", "test_faketensor"))
    y, ms = rms_stats_op(torch.randn(32, 64))
    assert y.shape == (32, 64) and ms.shape == (32,)


def test_torch_compile_fullgraph_matches_eager():
    torch.manual_seed(0)
    m = Block()
    x = torch.randn(32, 64)
    eager = m(x)
    compiled = torch.compile(m, fullgraph=True)
    got = compiled(x)
    assert got.shape == (32,)
    torch.testing.assert_close(got, eager, rtol=1e-5, atol=1e-5)
