#!/usr/bin/env python3
"""Fits the coefficients of vk_erff (shaders/float.glsl): erf for float
results, evaluated in float.  Needs python3-numpy (a development tool, not
a build or test dependency).

  |x| < 1:      erf(x) = x + x * s(x^2),       s(t) ~ erf(sqrt t)/sqrt t - 1
  1 <= |x| < 4: erf(x) = 1 - exp(-x^2) * r(1/x), r(x) ~ erfc(x) exp(x^2)
  |x| >= 4:     erf(x) = +-1 (1 - erf(4) is below half an ulp of 1)

Both polynomials are least-squares fits (weighted for relative error) on
4000 Chebyshev nodes, against Python's double-precision math.erf/erfc.
Prints the coefficients (highest degree first, as float literals) and the
largest error, in ulps of the float result, of the formulas evaluated in
float32 arithmetic (numpy's float32 exp) over a dense sweep of [0, 4.5]."""
import math

import numpy as np

F = np.float32


def nodes(a, b, n=4000):
    k = np.arange(n)
    return (a + b) / 2 + (b - a) / 2 * np.cos((2 * k + 1) * np.pi / (2 * n))


def fit(fn, a, b, deg, var):
    xs = nodes(a, b)
    ys = np.array([fn(x) for x in xs])
    w = 1 / np.abs(ys)
    c = np.linalg.lstsq(np.vander(var(xs), deg + 1) * w[:, None], ys * w, rcond=None)[0]
    return [F(v) for v in c]


def horner(c, v):
    r = c[0]
    for ci in c[1:]:
        r = F(F(r * v) + ci)
    return r


S = fit(lambda t: (math.erf(math.sqrt(t)) / math.sqrt(t) if t > 0 else 2 / math.sqrt(math.pi)) - 1, 0, 1, 6,
        lambda t: t)
R = fit(lambda x: math.erfc(x) * math.exp(x * x), 1, 4, 8, lambda x: 1 / x)


def erff(x):
    a = abs(x)
    if a < 1:
        return F(x + F(x * horner(S, F(x * x))))
    e = F(1) if a >= 4 else F(F(1) - F(np.exp(F(-F(a * a)))) * horner(R, F(F(1) / a)))
    return e if x >= 0 else -e


def main():
    worst, at = 0.0, 0.0
    xs = np.concatenate([np.linspace(0, 4.5, 400001), np.geomspace(1e-30, 1, 20001)]).astype(F)
    for x in xs:
        want = math.erf(float(x))
        ulp = float(np.spacing(F(abs(want)))) if want != 0 else 1.4e-45
        err = abs(float(erff(x)) - want) / ulp
        if err > worst:
            worst, at = err, float(x)
    print("s (t = x^2):", ", ".join("%.9e" % v for v in S))
    print("r (v = 1/x):", ", ".join("%.9e" % v for v in R))
    print("max error %.3f ulp at x = %.7g" % (worst, at))


if __name__ == "__main__":
    main()
