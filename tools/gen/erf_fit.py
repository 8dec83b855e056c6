#!/usr/bin/env python3
"""erf_fit.py - the polynomial coefficients of src/backends/cpu/verf_f32_avx512.h (copied there by hand) and the
error of their float evaluation. Fits (iteratively reweighted least squares toward minimax, on Chebyshev nodes):
  erf(z) / z  in u = z^2, degree 5, on [0, 0.921875] (relative error);
  log(erfc(z)) in z, degree 8, on [0.921875, 3.925] (absolute error: erfc = exp of it);
  exp(r), degree 6, on [-ln2 / 2, ln2 / 2] (relative error).
Then evaluates GELU(x) = x Phi(x) in float32 as the header does (without FMA: slightly worse) on a grid of [-9, 9]
and prints the largest absolute and relative errors against double.
Run: .venv/bin/python tools/gen/erf_fit.py"""
import math

import numpy as np

SPLIT, ZMAX = 0.921875, 3.925
f32 = np.float32


def fit(f, a, b, deg, var=lambda z: z, rel=True, iters=30):
    z = (a + b) / 2 + (b - a) / 2 * np.cos((2 * np.arange(4000) + 1) * np.pi / 8000)
    t, y, w = var(z), np.array([f(v) for v in z]), np.ones_like(z)
    for _ in range(iters):
        v = np.vander(t, deg + 1, increasing=True)
        sc = 1 / np.abs(y) if rel else np.ones_like(y)
        c = np.linalg.lstsq(v * (w * sc)[:, None], y * w * sc, rcond=None)[0]
        e = (v @ c - y) * sc
        w = w * (np.abs(e) / np.abs(e).max() + 1e-3) ** 0.5
        w /= w.max()
    return [f32(x) for x in c], float(np.abs(e).max())


def horner(c, t):
    r = np.full_like(t, c[-1])
    for k in reversed(range(len(c) - 1)):
        r = (r * t + c[k]).astype(f32)
    return r


def main():
    small, es = fit(lambda z: math.erf(z) / z if z else 2 / math.sqrt(math.pi), 1e-6, SPLIT, 5, var=lambda z: z * z)
    big, eb = fit(lambda z: math.log(math.erfc(z)), SPLIT, ZMAX, 8, rel=False)
    ex, ee = fit(math.exp, -math.log(2) / 2, math.log(2) / 2, 6)
    for name, c, e in (("erf(z)/z in z^2", small, es), ("log erfc(z)", big, eb), ("exp(r)", ex, ee)):
        print(f"{name}: fit error {e:.3g}, coefficients c0.. {[float(v) for v in c]}")

    def exp32(y):
        n = np.rint(y * f32(1.4426950408889634)).astype(f32)
        r = (y - n * f32(0.693359375)).astype(f32)
        r = (r - n * f32(-2.12194440e-4)).astype(f32)
        return (horner(ex, r) * np.exp2(n).astype(f32)).astype(f32)

    x = np.linspace(-9, 9, 2000001).astype(f32)
    t = (x * f32(0.70710678)).astype(f32)
    z = np.abs(t)
    phi_small = (0.5 + 0.5 * (t * horner(small, (t * t).astype(f32)))).astype(f32)
    h = (f32(0.5) * exp32(horner(big, np.minimum(z, f32(ZMAX))))).astype(f32)
    phi_big = np.where(x > 0, f32(1) - h, np.where(z > ZMAX, f32(0), h)).astype(f32)
    g = (x * np.where(z < SPLIT, phi_small, phi_big)).astype(f32).astype(np.float64)
    want = np.array([0.5 * float(v) * math.erfc(-float(v) / math.sqrt(2)) for v in x])
    err = np.abs(g - want)
    big_vals = np.abs(want) > 1e-3
    print(f"GELU float evaluation on [-9, 9]: largest absolute error {err.max():.3g} (at x = {x[err.argmax()]:.6g}), "
          f"largest relative error where |GELU| > 1e-3: {(err[big_vals] / np.abs(want[big_vals])).max():.3g}")


if __name__ == "__main__":
    main()
