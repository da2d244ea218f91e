/*
 * Float bit-pattern conversion for the small float types (formats:
 * support/float_format.h).
 *
 * Encoding scales |v| so that one unit is the type's spacing in the binade
 * of |v| (or the subnormal spacing, below the normal range), rounds that to
 * an integer with ties to even, and assembles the fields.  All of it is
 * exact in double arithmetic because no type here has more than 52
 * mantissa bits.
 */
#include "support/float_format.h"

#include <math.h>
#include <stdbool.h>

/* Rounds a non-negative double to an integer, ties to even, without
 * depending on the floating-point environment's rounding mode. */
static double round_half_even(double x) {
  double fl = floor(x);
  double diff = x - fl;
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return fmod(fl, 2.0) == 0 ? fl : fl + 1;
}

uint64_t float_format_encode(const float_format_t *f, double v) {
  const int E = f->exponent_bits, M = f->mantissa_bits;
  const uint64_t exp_all = (1ull << E) - 1, mant_all = (1ull << M) - 1;
  const uint64_t sign_bit = 1ull << (E + M);

  if (f->style == FLOAT_STYLE_E8M0) {
    if (isnan(v) || v <= 0 || isinf(v)) return 0xFF;
    int e;
    double fr = frexp(v, &e); /* v = fr * 2^e, fr in [0.5, 1) */
    int exponent = e - 1;
    if (fr * 2 > 1.5) exponent++; /* nearest power of two (ties up) */
    int field = exponent + f->bias;
    if (field < 0) field = 0;
    if (field > 254) field = 254;
    return (uint64_t)field;
  }

  uint64_t sign = signbit(v) ? sign_bit : 0;
  uint64_t max_exp_field = f->style == FLOAT_STYLE_IEEE ? exp_all - 1 : exp_all;
  uint64_t max_mant = f->style == FLOAT_STYLE_FN ? mant_all - 1 : mant_all;
  uint64_t nan_bits = 0, inf_bits = 0;
  switch (f->style) {
    case FLOAT_STYLE_IEEE:
      nan_bits = (exp_all << M) | (M ? 1ull << (M - 1) : 0);
      inf_bits = sign | (exp_all << M);
      break;
    case FLOAT_STYLE_FN: nan_bits = inf_bits = (exp_all << M) | mant_all; break;
    case FLOAT_STYLE_FNUZ: nan_bits = inf_bits = sign_bit; break;
    case FLOAT_STYLE_NONE:
      nan_bits = 0;
      inf_bits = sign | (max_exp_field << M) | max_mant; /* saturate */
      break;
    case FLOAT_STYLE_E8M0: break;
  }
  if (isnan(v)) return nan_bits;
  if (isinf(v)) return inf_bits;
  double a = fabs(v);
  if (a == 0) return f->style == FLOAT_STYLE_FNUZ ? 0 : sign;

  const int emin = 1 - f->bias; /* exponent of the smallest normal */
  int e = ilogb(a);
  int eff = e < emin ? emin : e;
  double r = round_half_even(ldexp(a, M - eff));
  if (r >= ldexp(1.0, M + 1)) { /* rounded up into the next binade */
    eff++;
    r = ldexp(r, -1);
  }
  uint64_t exp_field, mant;
  if (eff == emin && r < ldexp(1.0, M)) {
    exp_field = 0;
    mant = (uint64_t)r;
  } else {
    exp_field = (uint64_t)(eff + f->bias);
    mant = (uint64_t)r - (1ull << M);
  }
  if (eff + f->bias > (int)max_exp_field ||
      (exp_field == max_exp_field && mant > max_mant)) {
    return inf_bits;
  }
  uint64_t bits = sign | (exp_field << M) | mant;
  if (f->style == FLOAT_STYLE_FNUZ && bits == sign_bit) bits = 0; /* -0 rounds to +0 */
  return bits;
}

double float_format_decode(const float_format_t *f, uint64_t bits) {
  const int E = f->exponent_bits, M = f->mantissa_bits;
  const uint64_t exp_all = (1ull << E) - 1, mant_all = (1ull << M) - 1;
  if (f->style == FLOAT_STYLE_E8M0) {
    bits &= 0xFF;
    if (bits == 0xFF) return NAN;
    return ldexp(1.0, (int)bits - f->bias);
  }
  uint64_t sign_bit = 1ull << (E + M);
  bits &= (sign_bit << 1) - 1;
  bool neg = (bits & sign_bit) != 0;
  uint64_t exp_field = (bits >> M) & exp_all, mant = bits & mant_all;
  switch (f->style) {
    case FLOAT_STYLE_IEEE:
      if (exp_field == exp_all) return mant ? NAN : (neg ? -INFINITY : INFINITY);
      break;
    case FLOAT_STYLE_FN:
      if (exp_field == exp_all && mant == mant_all) return NAN;
      break;
    case FLOAT_STYLE_FNUZ:
      if (bits == sign_bit) return NAN;
      break;
    default: break;
  }
  double value;
  if (exp_field == 0) {
    value = ldexp((double)mant, 1 - f->bias - M);
  } else {
    value = ldexp((double)(mant | (1ull << M)), (int)exp_field - f->bias - M);
  }
  return neg ? -value : value;
}
