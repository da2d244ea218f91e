#!/usr/bin/env python3
"""Fits the polynomial of vk_exp (shaders/float_basic.glsl): exp for float
results, evaluated in float after a Cody-Waite reduction x = k ln2 + r,
|r| <= ln2/2.  Plain Python (no numpy).

  exp(r) = 1 + r + r^2 q(r),   q of degree 4

q is the minimax fit (Remez exchange) of (exp(r) - 1 - r) / r^2 weighted
so that the error measured is the relative error of exp(r) itself.  Prints
the coefficients (lowest degree first) and that error: 3.06e-9, about 0.05
ulp of a float in [0.7, 1.4].  The float evaluation's own roundings bring
the whole to within 1 ulp (e2e_math float_functions_round_well)."""
import math

H = math.log(2) / 2
DEGREE = 4


def q(r):
    """(exp(r) - 1 - r) / r^2 by its series: no cancellation near 0."""
    s, t = 0.0, 0.5
    for k in range(2, 30):
        s += t * r ** (k - 2)
        t /= k + 1
    return s


def weight(r):
    return r * r / math.exp(r)


def solve(a, b):
    """Gaussian elimination with partial pivoting."""
    m = len(a)
    rows = [row[:] + [v] for row, v in zip(a, b)]
    for i in range(m):
        p = max(range(i, m), key=lambda r: abs(rows[r][i]))
        rows[i], rows[p] = rows[p], rows[i]
        for r in range(m):
            if r != i:
                f = rows[r][i] / rows[i][i]
                for c in range(i, m + 1):
                    rows[r][c] -= f * rows[i][c]
    return [rows[i][m] / rows[i][i] for i in range(m)]


def main():
    n = DEGREE + 1
    pts = [H * math.cos(math.pi * (2 * i + 1) / (2 * (n + 1))) for i in range(n + 1)]
    grid = [-H + 2 * H * i / 20000 for i in range(20001)]
    for _ in range(10):
        a = [[x ** j * weight(x) for j in range(n)] + [(-1) ** i] for i, x in enumerate(pts)]
        sol = solve(a, [q(x) * weight(x) for x in pts])
        coef = sol[:n]
        err = [(q(x) - sum(c * x ** j for j, c in enumerate(coef))) * weight(x) for x in grid]
        ext = [0] + [i for i in range(1, len(grid) - 1)
                     if (err[i] - err[i - 1]) * (err[i + 1] - err[i]) <= 0] + [len(grid) - 1]
        if len(ext) >= n + 1:
            pts = sorted(grid[i] for i in sorted(ext, key=lambda i: -abs(err[i]))[:n + 1])
    print("q coefficients, r^0 first:", ", ".join(repr(c) for c in coef))
    print("largest relative error of exp(r): %.3g" % max(abs(e) for e in err))


if __name__ == "__main__":
    main()
