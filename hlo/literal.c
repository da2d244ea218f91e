/*
 * Float bit-pattern conversion for the small float types, and splitmix64.
 *
 * Every float type is described by four numbers: exponent bits, mantissa
 * bits, exponent bias, and a "style" saying how the type spends its
 * all-ones exponent:
 *   IEEE  (f16, bf16, f8E5M2, f8E4M3, f8E3M4, f32): all-ones exponent is
 *         infinity (mantissa 0) or NaN.
 *   FN    (f8E4M3FN): no infinity; only all-ones exponent *and* mantissa is
 *         NaN, so the top binade is usable except its last value.
 *   FNUZ  (f8E4M3FNUZ, f8E4M3B11FNUZ, f8E5M2FNUZ): no infinity, no negative
 *         zero; the pattern 0x80 (sign bit alone) is the one NaN.
 *   NONE  (f4E2M1FN, f6E2M3FN, f6E3M2FN): neither NaN nor infinity.
 *   E8M0  (f8E8M0FNU): no sign, no mantissa; 0xFF is NaN.
 *
 * Encoding scales |v| so that one unit is the type's spacing in the binade
 * of |v| (or the subnormal spacing, below the normal range), rounds that to
 * an integer with ties to even, and assembles the fields.  All of it is
 * exact in double arithmetic because no type here has more than 52
 * mantissa bits.
 */
#include "hlo/literal.h"

#include <math.h>
#include <string.h>

typedef enum { STYLE_IEEE, STYLE_FN, STYLE_FNUZ, STYLE_NONE, STYLE_E8M0 } float_style_t;

typedef struct {
  int exponent_bits, mantissa_bits, bias;
  float_style_t style;
} float_format_t;

static bool format_of(hlo_element_type_t t, float_format_t *f) {
  static const struct {
    hlo_element_type_t type;
    float_format_t format;
  } formats[] = {
      {HLO_F16, {5, 10, 15, STYLE_IEEE}},
      {HLO_BF16, {8, 7, 127, STYLE_IEEE}},
      {HLO_F32, {8, 23, 127, STYLE_IEEE}},
      {HLO_F8E5M2, {5, 2, 15, STYLE_IEEE}},
      {HLO_F8E4M3, {4, 3, 7, STYLE_IEEE}},
      {HLO_F8E3M4, {3, 4, 3, STYLE_IEEE}},
      {HLO_F8E4M3FN, {4, 3, 7, STYLE_FN}},
      {HLO_F8E4M3FNUZ, {4, 3, 8, STYLE_FNUZ}},
      {HLO_F8E4M3B11FNUZ, {4, 3, 11, STYLE_FNUZ}},
      {HLO_F8E5M2FNUZ, {5, 2, 16, STYLE_FNUZ}},
      {HLO_F8E8M0FNU, {8, 0, 127, STYLE_E8M0}},
      {HLO_F4E2M1FN, {2, 1, 1, STYLE_NONE}},
      {HLO_F6E2M3FN, {2, 3, 1, STYLE_NONE}},
      {HLO_F6E3M2FN, {3, 2, 3, STYLE_NONE}},
  };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    if (formats[i].type == t) {
      *f = formats[i].format;
      return true;
    }
  }
  return false;
}

/* Rounds a non-negative double to an integer, ties to even, without
 * depending on the floating-point environment's rounding mode. */
static double round_half_even(double x) {
  double fl = floor(x);
  double diff = x - fl;
  if (diff > 0.5) return fl + 1;
  if (diff < 0.5) return fl;
  return fmod(fl, 2.0) == 0 ? fl : fl + 1;
}

static uint64_t encode_small(const float_format_t *f, double v) {
  const int E = f->exponent_bits, M = f->mantissa_bits;
  const uint64_t exp_all = (1ull << E) - 1, mant_all = (1ull << M) - 1;
  const uint64_t sign_bit = 1ull << (E + M);

  if (f->style == STYLE_E8M0) {
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
  uint64_t max_exp_field = f->style == STYLE_IEEE ? exp_all - 1 : exp_all;
  uint64_t max_mant = f->style == STYLE_FN ? mant_all - 1 : mant_all;
  uint64_t nan_bits = 0, inf_bits = 0;
  switch (f->style) {
    case STYLE_IEEE:
      nan_bits = (exp_all << M) | (M ? 1ull << (M - 1) : 0);
      inf_bits = sign | (exp_all << M);
      break;
    case STYLE_FN: nan_bits = inf_bits = (exp_all << M) | mant_all; break;
    case STYLE_FNUZ: nan_bits = inf_bits = sign_bit; break;
    case STYLE_NONE:
      nan_bits = 0;
      inf_bits = sign | (max_exp_field << M) | max_mant; /* saturate */
      break;
    case STYLE_E8M0: break;
  }
  if (isnan(v)) return nan_bits;
  if (isinf(v)) return inf_bits;
  double a = fabs(v);
  if (a == 0) return f->style == STYLE_FNUZ ? 0 : sign;

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
  if (f->style == STYLE_FNUZ && bits == sign_bit) bits = 0; /* -0 rounds to +0 */
  return bits;
}

static double decode_small(const float_format_t *f, uint64_t bits) {
  const int E = f->exponent_bits, M = f->mantissa_bits;
  const uint64_t exp_all = (1ull << E) - 1, mant_all = (1ull << M) - 1;
  if (f->style == STYLE_E8M0) {
    bits &= 0xFF;
    if (bits == 0xFF) return NAN;
    return ldexp(1.0, (int)bits - f->bias);
  }
  uint64_t sign_bit = 1ull << (E + M);
  bits &= (sign_bit << 1) - 1;
  bool neg = (bits & sign_bit) != 0;
  uint64_t exp_field = (bits >> M) & exp_all, mant = bits & mant_all;
  switch (f->style) {
    case STYLE_IEEE:
      if (exp_field == exp_all) return mant ? NAN : (neg ? -INFINITY : INFINITY);
      break;
    case STYLE_FN:
      if (exp_field == exp_all && mant == mant_all) return NAN;
      break;
    case STYLE_FNUZ:
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

bool hlo_float_encode(hlo_element_type_t t, double value, uint64_t *out_bits) {
  if (t == HLO_F64) {
    memcpy(out_bits, &value, sizeof value);
    return true;
  }
  if (t == HLO_F32) {
    float f = (float)value; /* C conversion rounds to nearest even */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    *out_bits = u;
    return true;
  }
  float_format_t f;
  if (!format_of(t, &f)) return false;
  *out_bits = encode_small(&f, value);
  return true;
}

double hlo_float_decode(hlo_element_type_t t, uint64_t bits) {
  if (t == HLO_F64) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (t == HLO_F32) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  float_format_t f;
  if (!format_of(t, &f)) return NAN;
  return decode_small(&f, bits);
}

uint16_t hlo_float_to_f16_bits(double value) {
  uint64_t b = 0;
  hlo_float_encode(HLO_F16, value, &b);
  return (uint16_t)b;
}
uint16_t hlo_float_to_bf16_bits(double value) {
  uint64_t b = 0;
  hlo_float_encode(HLO_BF16, value, &b);
  return (uint16_t)b;
}
double hlo_f16_bits_to_double(uint16_t bits) { return hlo_float_decode(HLO_F16, bits); }
double hlo_bf16_bits_to_double(uint16_t bits) { return hlo_float_decode(HLO_BF16, bits); }

uint64_t hlo_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform double in [-1, 1) from 53 random bits. */
static double random_unit(uint64_t *state) {
  return (double)(hlo_splitmix64(state) >> 11) * 0x1.0p-52 - 1.0;
}

static void store_bits(void *dst, size_t size, uint64_t bits) {
  /* Host is little-endian: the low |size| bytes of |bits|. */
  uint8_t bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)(bits >> (8 * i));
  memcpy(dst, bytes, size);
}

void hlo_fill_random(hlo_element_type_t t, void *dst, int64_t count, uint64_t *state) {
  size_t size = hlo_element_type_size_bytes(t);
  uint8_t *out = dst;
  if (size == 0) return;
  for (int64_t i = 0; i < count; i++, out += size) {
    uint64_t bits = 0;
    if (hlo_element_type_is_float(t)) {
      hlo_float_encode(t, random_unit(state), &bits);
      store_bits(out, size, bits);
    } else if (hlo_element_type_is_complex(t)) {
      hlo_element_type_t part = t == HLO_C64 ? HLO_F32 : HLO_F64;
      hlo_float_encode(part, random_unit(state), &bits);
      store_bits(out, size / 2, bits);
      hlo_float_encode(part, random_unit(state), &bits);
      store_bits(out + size / 2, size / 2, bits);
    } else if (t == HLO_PRED) {
      *out = (uint8_t)(hlo_splitmix64(state) & 1);
    } else if (hlo_element_type_is_signed_int(t)) {
      int64_t v = (int64_t)(hlo_splitmix64(state) % 7) - 3;
      if (hlo_element_type_bit_width(t) == 2 && v < -2) v = -2;
      if (hlo_element_type_bit_width(t) == 2 && v > 1) v = 1;
      store_bits(out, size, (uint64_t)v);
    } else if (hlo_element_type_is_unsigned_int(t)) {
      store_bits(out, size, hlo_splitmix64(state) % 4);
    }
  }
}

bool hlo_constant_is_splat(const hlo_instruction_t *in) {
  if (in->opcode != HLO_OPCODE_CONSTANT || hlo_shape_is_tuple(&in->shape) || in->shape.element_type == HLO_TOKEN ||
      !in->literal || !in->literal->data)
    return false;
  int64_t n = hlo_shape_element_count(&in->shape);
  if (n < 1 || in->literal->size_bytes % (size_t)n != 0) return false;
  size_t w = in->literal->size_bytes / (size_t)n;
  const unsigned char *b = in->literal->data;
  /* every element equals the next one: one memcmp of the data against
   * itself shifted by an element, not one call per element */
  return w > 0 && memcmp(b, b + w, (size_t)(n - 1) * w) == 0;
}
