// Math written once for float and double on top of vk_exp, vk_log,
// vk_expm1, vk_log1p, vk_sin, vk_cos, vk_atan2 (float.glsl / double.glsl):
// hyperbolic and inverse functions, erf/erfc/erf_inv, Bessel i1e, lgamma,
// digamma, zeta, polygamma.  Expects FT (the type) and FT_EPS (its relative
// precision, for series cut-offs), defined around each instance by
// codegen/glsl_prelude.c.  Constants that need more digits than a float
// holds are double literals converted to FT, FT(0.693...lf): glslang folds
// the conversion into the constant a literal of type FT would give.
FT vk_sinh(FT x) {
  FT a = abs(x), r;
  if (a < FT(1)) {
    FT e = vk_expm1(a);
    r = FT(0.5lf) * (e + e / (e + FT(1)));
  } else if (a < FT(20)) {
    FT e = vk_exp(a);
    r = FT(0.5lf) * (e - FT(1) / e);
  } else {
    FT t = vk_exp(FT(0.5lf) * a);
    r = (FT(0.5lf) * t) * t;
  }
  return vk_signbit(x) ? -r : r;
}
FT vk_cosh(FT x) {
  FT a = abs(x);
  if (a < FT(20)) {
    FT e = vk_exp(a);
    return FT(0.5lf) * (e + FT(1) / e);
  }
  FT t = vk_exp(FT(0.5lf) * a);
  return (FT(0.5lf) * t) * t;
}
FT vk_asinh(FT x) {
  if (isnan(x) || isinf(x)) return x;
  FT a = abs(x), r;
  if (a > FT(1e8lf)) r = vk_log(a) + FT(0.69314718055994530942lf);
  else r = vk_log1p(a + a * a / (FT(1) + sqrt(FT(1) + a * a)));
  return vk_signbit(x) ? -r : r;
}
FT vk_acosh(FT x) {
  if (isnan(x) || x < FT(1)) return (x - x) / (x - x);
  if (isinf(x)) return x;
  if (x > FT(1e8lf)) return vk_log(x) + FT(0.69314718055994530942lf);
  FT t = x - FT(1);
  return vk_log1p(t + sqrt(FT(2) * t + t * t));
}
FT vk_atanh(FT x) {
  FT a = abs(x);
  if (isnan(x) || a > FT(1)) return (x - x) / (x - x);
  FT r = FT(0.5lf) * vk_log1p(FT(2) * a / (FT(1) - a));
  return vk_signbit(x) ? -r : r;
}
FT vk_asin(FT x) {
  if (isnan(x) || abs(x) > FT(1)) return (x - x) / (x - x);
  return vk_atan2(x, sqrt((FT(1) - x) * (FT(1) + x)));
}
FT vk_acos(FT x) {
  if (isnan(x) || abs(x) > FT(1)) return (x - x) / (x - x);
  return FT(2) * vk_atan2(sqrt(FT(1) - x), sqrt(FT(1) + x));
}
/* erf(a) = 2/sqrt(pi) exp(-a^2) sum 2^n a^(2n+1) / (1 3 5 ... (2n+1)):
 * positive terms, no cancellation. */
FT vk_erf_series(FT a) {
  FT a2 = a * a, term = a, sum = a;
  for (int n = 1; n < 200; n++) {
    term *= FT(2) * a2 / FT(2 * n + 1);
    sum += term;
    if (term < sum * FT_EPS) break;
  }
  return FT(1.12837916709551257390lf) * vk_exp(-a2) * sum;
}
/* erfc(a) for a >= 2.5: exp(-a^2)/sqrt(pi) / (a + (1/2)/(a + 1/(a + (3/2)/(a + ...)))) */
FT vk_erfc_cf(FT a) {
  FT t = a;
  for (int n = 160; n >= 1; n--) t = a + FT(0.5lf) * FT(n) / t;
  return FT(0.56418958354775628695lf) * vk_exp(-a * a) / t;
}
FT vk_erf(FT x) {
  if (isnan(x)) return x;
  FT a = abs(x);
  FT r = a > FT(6) ? FT(1) : (a < FT(2.5lf) ? vk_erf_series(a) : FT(1) - vk_erfc_cf(a));
  return vk_signbit(x) ? -r : r;
}
FT vk_erfc(FT x) {
  if (isnan(x)) return x;
  FT a = abs(x);
  FT r = a > FT(27) ? FT(0) : (a < FT(2.5lf) ? FT(1) - vk_erf_series(a) : vk_erfc_cf(a));
  if (x < FT(0)) return a < FT(2.5lf) ? FT(1) + vk_erf_series(a) : FT(2) - r;
  return r;
}
/* i1e(x) = exp(-|x|) I1(x): I1's power series (positive terms) up to
 * |x| = 30, above it the asymptotic expansion of I1(x) exp(-x). */
FT vk_bessel_i1e(FT x) {
  if (isnan(x)) return x;
  FT a = abs(x), r;
  if (a <= FT(30)) {
    FT h = FT(0.5lf) * a, q = h * h, t = h, s = h;
    for (int k = 1; k < 200 && t > s * FT_EPS; k++) {
      t *= q / (FT(k) * FT(k + 1));
      s += t;
    }
    r = s * vk_exp(-a);
  } else {
    FT t = FT(1), s = FT(1);
    for (int k = 1; k < 40 && abs(t) > s * FT_EPS; k++) {
      t *= (FT((2 * k - 1) * (2 * k - 1)) - FT(4)) / (FT(8 * k) * a);
      s += t;
    }
    r = s / sqrt(FT(6.28318530717958647693lf) * a);
  }
  return vk_signbit(x) ? -r : r;
}
/* erf_inv: Giles' single-precision approximation, then Newton steps on
 * erf (erfc in the tails, where 1 - |y| is exact). */
FT vk_erf_inv(FT y) {
  if (isnan(y) || abs(y) > FT(1)) return (y - y) / (y - y);
  if (abs(y) == FT(1)) return y / FT(0);
  float yf = float(y);
  float w = -log((1.0 - yf) * (1.0 + yf));
  float p;
  if (w < 5.0) {
    w = w - 2.5;
    p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
  } else {
    w = sqrt(w) - 3.0;
    p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
  }
  FT x = FT(p * yf);
  FT ay = abs(y);
  FT ax = abs(x);
  for (int i = 0; i < 3; i++) {
    FT d = FT(1.12837916709551257390lf) * vk_exp(-ax * ax);
    if (d == FT(0)) break;
    FT f = ay > FT(0.5lf) ? (FT(1) - ay) - vk_erfc(ax) : vk_erf(ax) - ay;
    ax = ay > FT(0.5lf) ? ax - f / d : ax - f / d;
  }
  return vk_signbit(y) ? -ax : ax;
}
FT vk_sinpi(FT x) {
  FT r = x - FT(2) * floor(x * FT(0.5lf));
  return vk_sin(FT(3.14159265358979323846lf) * r);
}
/* lgamma: Lanczos (g = 7, 9 terms) for x >= 0.5, reflection below. */
FT vk_lgamma_pos(FT x) {
  x -= FT(1);
  FT a = FT(0.99999999999980993lf);
  a += FT(676.5203681218851lf) / (x + FT(1));
  a += FT(-1259.1392167224028lf) / (x + FT(2));
  a += FT(771.32342877765313lf) / (x + FT(3));
  a += FT(-176.61502916214059lf) / (x + FT(4));
  a += FT(12.507343278686905lf) / (x + FT(5));
  a += FT(-0.13857109526572012lf) / (x + FT(6));
  a += FT(9.9843695780195716e-6lf) / (x + FT(7));
  a += FT(1.5056327351493116e-7lf) / (x + FT(8));
  FT t = x + FT(7.5lf);
  return FT(0.91893853320467274178lf) + (x + FT(0.5lf)) * vk_log(t) - t + vk_log(a);
}
FT vk_lgamma(FT x) {
  if (isnan(x)) return x;
  if (isinf(x)) return abs(x);
  if (x >= FT(0.5lf)) return vk_lgamma_pos(x);
  if (floor(x) == x) return FT(1) / FT(0);
  FT s = abs(vk_sinpi(x));
  return FT(1.14472988584940017414lf) - vk_log(s) - vk_lgamma_pos(FT(1) - x);
}
FT vk_digamma(FT x) {
  if (isnan(x) || (isinf(x) && x < FT(0))) return (x - x) / (x - x);
  if (isinf(x)) return x;
  FT r = FT(0);
  if (x <= FT(0)) {
    if (floor(x) == x) return (x - x) / (x - x);
    FT f = x - floor(x);
    FT c = FT(3.14159265358979323846lf) * vk_cos(FT(3.14159265358979323846lf) * f) / vk_sin(FT(3.14159265358979323846lf) * f);
    r = -c;
    x = FT(1) - x;
  }
  while (x < FT(10)) {
    r -= FT(1) / x;
    x += FT(1);
  }
  FT i2 = FT(1) / (x * x);
  FT s = i2 * (FT(1) / FT(12) - i2 * (FT(1) / FT(120) - i2 * (FT(1) / FT(252) - i2 * (FT(1) / FT(240) - i2 * (FT(1) / FT(132))))));
  return r + vk_log(x) - FT(0.5lf) / x - s;
}
/* Hurwitz zeta(x, q) = sum over k >= 0 of (q + k)^-x: the terms with
 * q + k < 9 (at least 9 of them) summed directly, the rest by
 * Euler-Maclaurin with B2..B24 (the coefficients are B2j / (2j)!).  The
 * domain as XLA's: NaN for x < 1, +inf at x = 1; for q <= 0 a pole at
 * the integers, and NaN unless x is an integer (then (q + k)^-x is real). */
FT vk_zeta(FT x, FT q) {
  if (isnan(x) || isnan(q)) return x + q;
  if (x == FT(1)) return FT(1) / FT(0);
  if (x < FT(1)) return (x - x) / (x - x);
  bool xint = floor(x) == x;
  if (q <= FT(0)) {
    if (floor(q) == q) return FT(1) / FT(0);
    if (!xint) return (x - x) / (x - x);
  }
  bool odd = xint && FT(2) * floor(x * FT(0.5lf)) != x;
  FT s = FT(0), a = q;
  for (int k = 0; k < 4096 && (k < 9 || a < FT(9)); k++) {
    FT t = vk_exp(-x * vk_log(abs(a)));
    s += (a < FT(0) && odd) ? -t : t;
    a += FT(1);
  }
  FT t = vk_exp(-x * vk_log(a));
  s += a * t / (x - FT(1)) + FT(0.5lf) * t;
  const FT c[12] = FT[12](FT(0.083333333333333329lf), FT(-0.0013888888888888889lf), FT(3.3068783068783071e-05lf), FT(-8.2671957671957675e-07lf), FT(2.08767569878681e-08lf), FT(-5.2841901386874932e-10lf), FT(1.3382536530684679e-11lf), FT(-3.3896802963225827e-13lf), FT(8.5860620562778452e-15lf), FT(-2.1748686985580619e-16lf), FT(5.5090028283602295e-18lf), FT(-1.3954464685812522e-19lf));
  FT m = x * t / a, a2 = a * a;
  for (int j = 0; j < 12; j++) {
    FT d = c[j] * m;
    s += d;
    if (abs(d) <= abs(s) * FT_EPS) break;
    m *= (x + FT(2 * j + 1)) * (x + FT(2 * j + 2)) / a2;
  }
  return s;
}
/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for integers n >= 1,
 * digamma for n = 0, NaN for other n. */
FT vk_polygamma(FT n, FT x) {
  if (isnan(n) || isnan(x)) return n + x;
  if (floor(n) != n || n < FT(0)) return (n - n) / (n - n);
  if (n == FT(0)) return vk_digamma(x);
  FT f = FT(1);
  for (int i = 2; i <= int(min(n, FT(200))); i++) f *= FT(i);
  FT r = f * vk_zeta(n + FT(1), x);
  return FT(2) * floor(n * FT(0.5lf)) == n ? -r : r;
}
