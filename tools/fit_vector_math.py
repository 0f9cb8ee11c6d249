#!/usr/bin/env python3
"""Fits the polynomial coefficients of src/codegen/cpu/vector_math.cpp.

Each kernel function is a fixed leading part plus a polynomial correction
P (see docs/vector_math.md for the decompositions). P is fitted by Lawson's
iteratively reweighted least squares, which converges to the weighted
minimax polynomial, on 3000 Chebyshev points with targets from mpmath at
40 digits. Coefficients are then rounded to float32 and the weighted error
is re-measured with the rounded coefficients (in float64 arithmetic: the
float32 evaluation error is what the exhaustive sweep measures).

Usage: python3 tools/fit_vector_math.py   (prints C++ initialisers)
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def cheb_points(a, b, n):
    k = np.arange(n)
    return 0.5 * (a + b) + 0.5 * (b - a) * np.cos(np.pi * (k + 0.5) / n)


def lawson(x, target, weight, powers, iters=200):
    """Minimises max |weight * (sum c_j x^p_j - target)|."""
    scale = np.max(np.abs(x))
    A = np.stack([(x / scale) ** p for p in powers], axis=1) * weight[:, None]
    b = target * weight
    w = np.ones_like(x) / len(x)
    for _ in range(iters):
        sw = np.sqrt(w)
        c, *_ = np.linalg.lstsq(A * sw[:, None], b * sw, rcond=None)
        e = np.abs(A @ c - b)
        w = w * e
        w /= w.sum()
    return c / np.array([scale ** p for p in powers], dtype=float)


def report(name, x, target, weight, powers, c):
    c32 = np.array(c, dtype=np.float32).astype(np.float64)
    val = sum(ci * x ** p for ci, p in zip(c32, powers))
    err = np.max(np.abs((val - target) * weight))
    print(f"// {name}: powers {powers}, max weighted error {err:.3e} ({err * 2**24:.3f} half-ulps of 2^-24)")
    print("  " + ", ".join(hexf(ci) for ci in c))


def hexf(v):
    m, e = float(np.float32(v)).hex().split("p")
    return m.rstrip("0").rstrip(".") + "p" + e + "f"


def fit(name, lo, hi, f_target, f_weight, powers, n=3000):
    xs = cheb_points(lo, hi, n)
    target = np.array([float(f_target(mp.mpf(float(v)))) for v in xs])
    weight = np.array([float(f_weight(mp.mpf(float(v)))) for v in xs])
    c = lawson(xs, target, weight, powers)
    report(name, xs, target, weight, powers, c)
    return c


def main():
    ln2 = mp.log(2)
    # exp(r) = 1 + r + r^2 P(r), |r| <= ln2/2 (widened a little for the rounding of n).
    h = float(ln2 / 2) * 1.002
    fit("exp", -h, h,
        lambda r: (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(0.5),
        lambda r: r**2 / mp.exp(r), [0, 1, 2, 3, 4])
    # exp2: 2^f = 1 + f Q(f), |f| <= 1/32 (the fraction left after a
    # 16-entry table of 2^(j/16)).
    fit("exp2", -1.0 / 32, 1.0 / 32,
        lambda f: (mp.power(2, f) - 1) / f if f != 0 else ln2,
        lambda f: abs(f) / mp.power(2, f), [0, 1, 2])
    # log(1+f) = f - f^2/2 + f^3 P(f), 1+f in [sqrt(1/2), sqrt(2)).
    lo, hi = float(mp.sqrt(0.5) - 1), float(mp.sqrt(2) - 1)
    fit("log1p", lo, hi,
        lambda f: (mp.log1p(f) - f + f**2 / 2) / f**3 if f != 0 else mp.mpf(1) / 3,
        lambda f: abs(f**3 / mp.log1p(f)) if f != 0 else mp.mpf(0), list(range(8)))
    # tanh(x) = x + x^3 P(x^2), 0 <= x <= 0.625.
    fit("tanh_small", 1e-4, 0.625,
        lambda x: (mp.tanh(x) - x) / x**3,
        lambda x: x**3 / mp.tanh(x), [0, 2, 4, 6, 8, 10])
    # erf(x) = x + x P(x^2), 0 <= x <= 1.
    fit("erf_small", 1e-4, 1.0,
        lambda x: mp.erf(x) / x - 1,
        lambda x: x / mp.erf(x), [0, 2, 4, 6, 8, 10, 12])
    # erf(a) = 1 - exp(R(t)), t = a - 2.5, 1 <= a <= 3.95: R approximates
    # log(erfc(a)); the absolute error of erf is erfc(a) |dR|. Centring the
    # variable keeps the float Horner evaluation free of cancellation.
    fit("erfc_log (t = a - 2.5)", 1.0 - 2.5, 3.95 - 2.5,
        lambda t: mp.log(mp.erfc(t + mp.mpf(2.5))),
        lambda t: mp.erfc(t + mp.mpf(2.5)), list(range(11)))


if __name__ == "__main__":
    main()
