"""What @axon.jit does with each kind of argument (python/axon/_args.py):
C-contiguous arrays are passed without a copy, a non-contiguous one is
copied with a CopyWarning, and a wrong dtype, rank, dim or count is refused
with ShapeError (also a TypeError) naming the parameter."""

import warnings

import numpy as np
import pytest

from pysupport import FAST, assert_close, axon, float64_reference

import specs_as_functions as S

rng = np.random.default_rng(11)


@pytest.fixture(scope="module")
def scale_rows():
    f = axon.jit(S.scale_rows, **FAST)
    f(np.ones((32, 64), np.float32), np.ones(64, np.float32))
    return f


def test_a_non_contiguous_argument_is_copied_with_a_warning(scale_rows):
    big = rng.standard_normal((32, 128)).astype(np.float32)
    x = big[:, ::2]
    w = rng.standard_normal(64).astype(np.float32)
    assert not x.flags.c_contiguous
    with pytest.warns(axon.CopyWarning, match="argument 'x' is not C-contiguous"):
        y = scale_rows(x, w)
    assert_close(y, float64_reference(S.scale_rows, x, w))
    assert scale_rows.stats["optimized"] == 1


def test_contiguous_arguments_give_no_warning(scale_rows):
    x = rng.standard_normal((32, 64)).astype(np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scale_rows(x, np.ones(64, np.float32))


def test_a_wrong_dtype_is_refused(scale_rows):
    x = np.ones((32, 64), np.float64)
    with pytest.raises(axon.ShapeError, match=r"argument 'x' has dtype float64; the spec annotates it f32\[N, 64\]"):
        scale_rows(x, np.ones(64, np.float32))
    with pytest.raises(TypeError):
        scale_rows(x, np.ones(64, np.float32))


def test_wrong_shapes_and_counts_are_refused(scale_rows):
    w = np.ones(64, np.float32)
    with pytest.raises(axon.ShapeError, match=r"argument 'x' has shape \[32\], rank 1; .* rank 2"):
        scale_rows(np.ones(32, np.float32), w)
    with pytest.raises(axon.ShapeError, match=r"argument 'x' has shape \[32, 63\]; .*dim 1 must be 64"):
        scale_rows(np.ones((32, 63), np.float32), w)
    with pytest.raises(axon.ShapeError, match=r"expected 2 arguments \(x, w\), got 1"):
        scale_rows(w)
    with pytest.raises(axon.ShapeError, match="is a list"):
        scale_rows([[1.0] * 64] * 32, w)
    assert scale_rows.stats["optimized"] == 1


def test_a_named_dim_bound_twice_is_refused():
    @axon.jit(**FAST)
    def add(a: "f32[N]", b: "f32[N]"):
        return a + b

    with pytest.raises(axon.ShapeError, match=r"binds N=5, but an earlier argument bound N=4"):
        add(np.ones(4, np.float32), np.ones(5, np.float32))


def test_the_compiled_kernel_checks_its_arguments():
    k = axon.optimize(S.scale_rows, {"N": 32}, **FAST)
    with pytest.raises(axon.ShapeError, match="argument 'x' is float64"):
        k(np.ones((32, 64)), np.ones(64, np.float32))


def test_other_dtypes_of_the_spec_language():
    @axon.jit(**FAST)
    def mixed(x: "f64[N]", i: "i32[N]", m: "bool[N]"):
        return np.where(m, x * 2.0, x + i), (i * 3).sum()

    x = rng.standard_normal(40)
    i = rng.integers(-5, 5, 40).astype(np.int32)
    m = x > 0
    y, s = mixed(x, i, m)
    ref_y, ref_s = mixed.__wrapped__(x, i, m)
    assert y.dtype == np.float64 and s.dtype == ref_s.dtype and s.shape == ()
    np.testing.assert_allclose(y, ref_y, rtol=1e-14)
    assert s == ref_s
    with pytest.raises(axon.ShapeError, match="argument 'i' has dtype int64"):
        mixed(x, i.astype(np.int64), m)
