"""The Python-side comparisons must themselves be able to fail: checked here
on made-up arrays, without the binary."""

import numpy as np

import conftest


def test_numpy_vs_reference_accepts_rounding_noise():
    ref = np.array([1.0, -2.0, 1e6, 0.0])
    assert conftest.compare_numpy_with_reference(ref * (1 + 1e-15), ref, "x") is None


def test_numpy_vs_reference_rejects_a_relative_error_of_1e_10():
    ref = np.array([1.0, 2.0, 3.0])
    got = ref.copy()
    got[1] *= 1 + 1e-10
    assert "differ at (1,)" in conftest.compare_numpy_with_reference(got, ref, "x")


def test_numpy_vs_reference_absolute_floor_scales_with_the_output():
    ref = np.array([1e6, 1e-9])
    got = np.array([1e6, 1e-9 + 1e-7])  # tiny next to the largest element: allowed
    assert conftest.compare_numpy_with_reference(got, ref, "x") is None
    got = np.array([1e6, 1e-9 + 1e-5])
    assert conftest.compare_numpy_with_reference(got, ref, "x") is not None


def test_numpy_vs_reference_nonfinite_positions():
    ref = np.array([np.nan, np.inf, 1.0])
    assert conftest.compare_numpy_with_reference(ref.copy(), ref, "x") is None
    assert "NaN" in conftest.compare_numpy_with_reference(np.array([0.0, np.inf, 1.0]), ref, "x")
    assert "inf" in conftest.compare_numpy_with_reference(np.array([np.nan, -np.inf, 1.0]), ref, "x")
    assert "inf" in conftest.compare_numpy_with_reference(np.array([np.nan, np.inf, np.inf]), ref, "x")


def test_numpy_vs_reference_shape():
    assert "shape" in conftest.compare_numpy_with_reference(np.zeros((2, 3)), np.zeros((3, 2)), "x")


def test_kernel_budget_edge():
    ref = np.array([1.0, 0.0])
    bound = np.array([1e-7, 0.0])
    ok = np.array([1.0 + 2e-7, 2.0 ** -127])
    assert conftest.compare_kernel_with_budget(ok, ref, bound, "x") is None
    over = np.array([1.0 + 2.1e-7, 0.0])
    assert "over budget at (0,)" in conftest.compare_kernel_with_budget(over, ref, bound, "x")
    over = np.array([1.0, 2.0 ** -120])
    assert "over budget at (1,)" in conftest.compare_kernel_with_budget(over, ref, bound, "x")


def test_kernel_budget_nonfinite():
    ref = np.array([np.nan, np.inf, -np.inf, np.inf])
    bound = np.array([0.0, 0.0, 0.0, np.inf])
    assert conftest.compare_kernel_with_budget(np.array([np.nan, np.inf, -np.inf, 5.0]), ref, bound, "x") is None
    assert conftest.compare_kernel_with_budget(np.array([0.0, np.inf, -np.inf, 0.0]), ref, bound, "x") is not None
    assert conftest.compare_kernel_with_budget(np.array([np.nan, 1e38, -np.inf, 0.0]), ref, bound, "x") is not None
    # a NaN where the reference is finite is never within budget
    assert conftest.compare_kernel_with_budget(np.array([1.0]), np.array([1.0]), np.array([1.0]), "x") is None
    assert conftest.compare_kernel_with_budget(np.array([np.nan]), np.array([1.0]), np.array([1.0]), "x") is not None
