// Helpers written once for float and double (FT, defined around each
// instance by codegen/glsl_prelude.c): NaN-propagating max/min, sign,
// round half away from zero, exact fmod.  Uses vk_signbit(FT) from
// float_basic.glsl / double_basic.glsl.
/* NaN if either is (a's first), +0 above -0; selects only (CPU
 * devices run these as SIMD lanes: no branches to mask) */
FT vk_fmax(FT a, FT b) {
  FT m = a > b ? a : b;
  m = a == b ? (vk_signbit(a) ? b : a) : m;
  m = isnan(b) ? b : m;
  return isnan(a) ? a : m;
}
FT vk_fmin(FT a, FT b) {
  FT m = a < b ? a : b;
  m = a == b ? (vk_signbit(a) ? a : b) : m;
  m = isnan(b) ? b : m;
  return isnan(a) ? a : m;
}
bool vk_is_finite(FT x) { return !isnan(x) && !isinf(x); }
FT vk_sign(FT x) { return isnan(x) ? x : (x > FT(0) ? FT(1) : (x < FT(0) ? FT(-1) : x)); }
FT vk_round_afz(FT x) {
  FT a = abs(x);
  if (a < FT(0.5)) return x * FT(0);
  FT t = trunc(a);
  if (a - t >= FT(0.5)) t += FT(1);
  return x < FT(0) ? -t : t;
}
/* Exact fmod: long division by power-of-two multiples of |y|; every
 * subtraction is exact (Sterbenz). */
FT vk_fmod(FT x, FT y) {
  if (isnan(x) || isnan(y) || isinf(x) || y == FT(0)) return (x - x) / (y - y);
  FT ax = abs(x), ay = abs(y);
  if (isinf(y) || ax < ay) return x;
  int ex, ey;
  frexp(ax, ex);
  frexp(ay, ey);
  FT d = ldexp(ay, ex - ey);
  if (d > ax) d = d * FT(0.5);
  FT r = ax;
  while (d >= ay) {
    if (r >= d) r -= d;
    d = d * FT(0.5);
  }
  return x < FT(0) ? -r : r;
}
