// Complex helpers written once for vec2 (FT float) and dvec2 (FT double):
// CT is the complex type, FT its part's type, defined around each instance
// by codegen/glsl_prelude.c.  Uses the real helpers of the same FT
// (float.glsl + math_generic.glsl, or double.glsl + math_generic.glsl).
// Constants are written FT(...lf) as in math_generic.glsl.
/* One product of each part rounded, the other fused into it, as XLA's
 * CPU backend (whose results the conformance files hold) computes it:
 * with both products rounded, 32 of the 600 elements of
 * integer_pow_complex64_20_30 differ from it by an ulp or two.  vk_fma
 * rounds once also where the driver splits fma into a multiply and an add
 * (lavapipe 22.3; float_basic.glsl); precise keeps the compiler from
 * contracting anything else. */
CT vk_cmul(CT a, CT b) {
  precise FT re = vk_fma(a.x, b.x, -(a.y * b.y)), im = vk_fma(a.x, b.y, a.y * b.x);
  return CT(re, im);
}
CT vk_cdiv(CT a, CT b) {
  if (abs(b.x) >= abs(b.y)) {
    FT r = b.y / b.x, d = b.x + b.y * r;
    return CT((a.x + a.y * r) / d, (a.y - a.x * r) / d);
  }
  FT r = b.x / b.y, d = b.x * r + b.y;
  return CT((a.x * r + a.y) / d, (a.y * r - a.x) / d);
}
FT vk_cabs(CT a) {
  FT x = abs(a.x), y = abs(a.y);
  if (isinf(x) || isinf(y)) return FT(1) / FT(0);
  if (isnan(x) || isnan(y)) return x + y;
  FT m = max(x, y), n = min(x, y);
  if (m == FT(0)) return m;
  FT r = n / m;
  return m * sqrt(FT(1) + r * r);
}
CT vk_cexp(CT a) {
  FT e = vk_exp(a.x);
  if (a.y == FT(0)) return CT(e, a.y);
  return CT(e * vk_cos(a.y), e * vk_sin(a.y));
}
CT vk_clog(CT a) { return CT(vk_log(vk_cabs(a)), vk_atan2(a.y, a.x)); }
CT vk_csqrt(CT a) {
  if (a.x == FT(0) && a.y == FT(0)) return CT(FT(0), a.y);
  FT t = sqrt((abs(a.x) + vk_cabs(a)) * FT(0.5lf));
  if (a.x >= FT(0)) return CT(t, a.y / (FT(2) * t));
  return CT(abs(a.y) / (FT(2) * t), vk_signbit(a.y) ? -t : t);
}
CT vk_crsqrt(CT a) { return vk_cdiv(CT(FT(1), FT(0)), vk_csqrt(a)); }
CT vk_cexpm1(CT a) {
  FT em1 = vk_expm1(a.x), s = vk_sin(a.y * FT(0.5lf));
  return CT(em1 * vk_cos(a.y) - FT(2) * s * s, (em1 + FT(1)) * vk_sin(a.y));
}
CT vk_clog1p(CT a) {
  FT x = a.x, y = a.y;
  FT m = max(abs(x), abs(y));
  if (m > FT(1e10lf)) return vk_clog(CT(x + FT(1), y));
  return CT(FT(0.5lf) * vk_log1p(x * (FT(2) + x) + y * y), vk_atan2(y, FT(1) + x));
}
CT vk_csign(CT a) {
  if (isnan(a.x) || isnan(a.y)) return CT(a.x + a.y, a.x + a.y);
  FT m = vk_cabs(a);
  if (m == FT(0)) return CT(FT(0), FT(0));
  if (isinf(m)) return CT(isinf(a.x) ? vk_sign(a.x) : FT(0), isinf(a.y) ? vk_sign(a.y) : FT(0)) / (isinf(a.x) && isinf(a.y) ? sqrt(FT(2)) : FT(1));
  return a / m;
}
CT vk_ctanh(CT a) {
  FT x = a.x, y = a.y;
  if (abs(x) > FT(20)) return CT(x > FT(0) ? FT(1) : FT(-1), FT(0) * vk_sin(FT(2) * y));
  FT d = vk_cosh(FT(2) * x) + vk_cos(FT(2) * y);
  return CT(vk_sinh(FT(2) * x) / d, vk_sin(FT(2) * y) / d);
}
CT vk_csin(CT a) { return CT(vk_sin(a.x) * vk_cosh(a.y), vk_cos(a.x) * vk_sinh(a.y)); }
CT vk_ccos(CT a) { return CT(vk_cos(a.x) * vk_cosh(a.y), -vk_sin(a.x) * vk_sinh(a.y)); }
/* chlo's complex functions.  The inverse ones are Kahan's ("Branch cuts
 * for complex elementary functions", 1987): principal values with C99's
 * branch cuts, the side of a cut chosen by the sign of a zero imaginary
 * part; the others from their real counterparts. */
CT vk_casin(CT z) {
  CT s1 = vk_csqrt(CT(FT(1) - z.x, -z.y)), s2 = vk_csqrt(CT(FT(1) + z.x, z.y));
  return CT(vk_atan2(z.x, s1.x * s2.x - s1.y * s2.y), vk_asinh(s1.x * s2.y - s1.y * s2.x));
}
CT vk_cacos(CT z) {
  CT s1 = vk_csqrt(CT(FT(1) - z.x, -z.y)), s2 = vk_csqrt(CT(FT(1) + z.x, z.y));
  return CT(FT(2) * vk_atan2(s1.x, s2.x), vk_asinh(s2.x * s1.y - s2.y * s1.x));
}
CT vk_cacosh(CT z) {
  CT s1 = vk_csqrt(CT(z.x - FT(1), z.y)), s2 = vk_csqrt(CT(z.x + FT(1), z.y));
  return CT(vk_asinh(s1.x * s2.x + s1.y * s2.y), FT(2) * vk_atan2(s1.y, s2.x));
}
/* asinh z = -i asin(i z) */
CT vk_casinh(CT z) {
  CT w = vk_casin(CT(-z.y, z.x));
  return CT(w.y, -w.x);
}
/* atanh z = (log1p(z) - log1p(-z)) / 2, real and imaginary parts apart */
CT vk_catanh(CT z) {
  FT ax = abs(z.x), ay = abs(z.y), m = FT(1) - ax;
  FT re = FT(0.25lf) * vk_log1p(FT(4) * ax / (m * m + ay * ay));
  FT im = FT(0.5lf) * vk_atan2(FT(2) * z.y, m * (FT(1) + ax) - ay * ay);
  if (isnan(z.x) || isnan(z.y)) return CT(z.x + z.y, z.x + z.y);
  return CT(vk_signbit(z.x) ? -re : re, im);
}
/* atan z = -i atanh(i z) */
CT vk_catan(CT z) {
  CT w = vk_catanh(CT(-z.y, z.x));
  return CT(w.y, -w.x);
}
CT vk_ccosh(CT z) { return CT(vk_cosh(z.x) * vk_cos(z.y), vk_sinh(z.x) * vk_sin(z.y)); }
CT vk_csinh(CT z) { return CT(vk_sinh(z.x) * vk_cos(z.y), vk_cosh(z.x) * vk_sin(z.y)); }
/* tan z = -i tanh(i z) */
CT vk_ctan(CT z) {
  CT w = vk_ctanh(CT(-z.y, z.x));
  return CT(w.y, -w.x);
}
CT vk_cpow(CT a, CT b) {
  if (b.x == FT(0) && b.y == FT(0)) return CT(FT(1), FT(0));
  if (a.x == FT(0) && a.y == FT(0)) return b.x > FT(0) ? CT(FT(0), FT(0)) : CT(FT(1) / FT(0), FT(0));
  return vk_cexp(vk_cmul(b, vk_clog(a)));
}
