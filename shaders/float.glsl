// float helpers: bf16/f16 and small-float (f8, f6, f4) rounding,
// reduce_precision, total-order keys, expm1/log1p accurate near zero,
// tanh without overflow, atan2/cbrt/pow with C99's special cases.
// Uses float_basic.glsl and float_generic.glsl (FT = float).
// Prelude piece for GLSL_HELPERS_FLOAT (codegen/glsl_prelude.c).
float vk_round_bf16(float x) {
  if (isnan(x)) return x;
  uint b = floatBitsToUint(x);
  b += 0x7FFFu + ((b >> 16) & 1u);
  return uintBitsToFloat(b & 0xFFFF0000u);
}
/* The small float types (f8*, f6*, f4*), described as in hlo/literal.c
 * by exponent bits E, mantissa bits M, bias and style (0 IEEE, 1 FN,
 * 2 FNUZ, 3 no inf/NaN, 4 E8M0); encode rounds to nearest even. */
float vk_small_decode(uint b, int E, int M, int bias, int style) {
  if (style == 4) {
    b &= 0xFFu;
    if (b == 0xFFu) return uintBitsToFloat(0x7FC00000u);
    return ldexp(1.0, int(b) - bias);
  }
  uint eall = (1u << E) - 1u, mall = (1u << M) - 1u;
  bool neg = ((b >> (E + M)) & 1u) != 0u;
  uint ef = (b >> M) & eall, mf = b & mall;
  if (style == 0 && ef == eall)
    return uintBitsToFloat(mf != 0u ? 0x7FC00000u : (neg ? 0xFF800000u : 0x7F800000u));
  if (style == 1 && ef == eall && mf == mall) return uintBitsToFloat(0x7FC00000u);
  if (style == 2 && neg && ef == 0u && mf == 0u) return uintBitsToFloat(0x7FC00000u);
  float mag = ef == 0u ? ldexp(float(mf), 1 - bias - M)
                       : ldexp(float(mf | (1u << M)), int(ef) - bias - M);
  return neg ? -mag : mag;
}
uint vk_small_encode(float v, int E, int M, int bias, int style) {
  if (style == 4) {
    if (isnan(v) || v <= 0.0 || isinf(v)) return 0xFFu;
    int e;
    float fr = frexp(v, e);
    int ex = e - 1;
    if (fr * 2.0 > 1.5) ex++;
    return uint(clamp(ex + bias, 0, 254));
  }
  uint eall = (1u << E) - 1u, mall = (1u << M) - 1u, sbit = 1u << (E + M);
  uint sign = floatBitsToInt(v) < 0 ? sbit : 0u;
  uint maxe = style == 0 ? eall - 1u : eall;
  uint maxm = style == 1 ? mall - 1u : mall;
  uint nanb = 0u, infb = sign | (maxe << M) | maxm;
  if (style == 0) { nanb = (eall << M) | (1u << (M - 1)); infb = sign | (eall << M); }
  else if (style == 1) { nanb = (eall << M) | mall; infb = nanb; }
  else if (style == 2) { nanb = sbit; infb = sbit; }
  if (isnan(v)) return nanb;
  if (isinf(v)) return infb;
  float a = abs(v);
  if (a == 0.0) return style == 2 ? 0u : sign;
  int emin = 1 - bias, e;
  frexp(a, e);
  int eff = max(e - 1, emin);
  float r = roundEven(ldexp(a, M - eff));
  if (r >= ldexp(1.0, M + 1)) { eff++; r = ldexp(r, -1); }
  uint ef = uint(eff + bias), mant;
  if (eff == emin && r < ldexp(1.0, M)) { ef = 0u; mant = uint(r); }
  else mant = uint(r) - (1u << M);
  if (eff + bias > int(maxe) || (ef == maxe && mant > maxm)) return infb;
  uint bits = sign | (ef << M) | mant;
  return (style == 2 && bits == sbit) ? 0u : bits;
}
float vk_small_round(float v, int E, int M, int bias, int style) {
  return vk_small_decode(vk_small_encode(v, E, M, bias, style), E, M, bias, style);
}
/* f16 <-> f32 in integer code, for drivers whose conversion instructions
 * are broken (codegen_target_t.f16_soft_conversions): the prelude then
 * names these for unpackHalf2x16/packHalf2x16.  Exact both ways, round to
 * nearest even, overflow to infinity, NaN payloads kept (quieted) as the
 * hardware conversions keep them. */
float vk_half_to_float(uint h) {
  uint s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1Fu) return uintBitsToFloat(s | 0x7F800000u | (m << 13));
  if (e != 0u) return uintBitsToFloat(s | ((e + 112u) << 23) | (m << 13));
  /* zero or subnormal: m * 2^-24, exact in f32 */
  return uintBitsToFloat(s | floatBitsToUint(float(m) * 5.9604644775390625e-08));
}
uint vk_float_to_half(float x) {
  uint b = floatBitsToUint(x), s = (b >> 16) & 0x8000u, a = b & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return s | 0x7E00u | ((a >> 13) & 0x3FFu); /* NaN */
  if (a >= 0x477FF000u) return s | 0x7C00u; /* >= 65520 (and inf): inf */
  if (a >= 0x38800000u) { /* a normal f16 (>= 2^-14): round the mantissa */
    a += 0xFFFu + ((a >> 13) & 1u);
    return s | ((a - 0x38000000u) >> 13);
  }
  /* subnormal or zero: the multiple of 2^-24, exact scaling, then round */
  return s | uint(roundEven(uintBitsToFloat(a) * 16777216.0));
}
vec2 vk_unpack_half2x16(uint b) {
  return vec2(vk_half_to_float(b & 0xFFFFu), vk_half_to_float(b >> 16));
}
uint vk_pack_half2x16(vec2 v) {
  return vk_float_to_half(v.x) | (vk_float_to_half(v.y) << 16);
}
float vk_round_f16(float x) {
  if (isnan(x) || isinf(x)) return x;
  float a = abs(x);
  if (a >= 65520.0) return x * uintBitsToFloat(0x7F800000u);
  if (a < 6.103515625e-05) {
    const float q = 5.9604644775390625e-08;
    return roundEven(x / q) * q;
  }
  uint b = floatBitsToUint(x);
  b += 0xFFFu + ((b >> 13) & 1u);
  return uintBitsToFloat(b & 0xFFFFE000u);
}
/* XLA's reduce_precision: round the mantissa to nearest even, overflow
 * to inf, values below the smallest normal flush to signed zero; a NaN
 * stays itself, or becomes +inf with no mantissa bits to hold it. */
float vk_reduce_precision(float x, int ebits, int mbits) {
  if (isnan(x)) return mbits > 0 ? x : uintBitsToFloat(0x7F800000u);
  uint b = floatBitsToUint(x);
  if (mbits < 23) {
    uint drop = uint(23 - mbits);
    uint last = 1u << drop;
    b += (last >> 1) - 1u + ((b >> drop) & 1u);
    b &= ~(last - 1u);
  }
  if (ebits < 8) {
    int bias = (1 << (ebits - 1)) - 1;
    int e = int((b >> 23) & 0xFFu) - 127;
    uint sign = b & 0x80000000u;
    if (e > bias) b = sign | 0x7F800000u;
    else if (e <= -bias) b = sign;
  }
  return uintBitsToFloat(b);
}
int vk_total_key(float x) {
  int b = floatBitsToInt(x);
  return b < 0 ? (b ^ 0x7FFFFFFF) : b;
}
float vk_expm1(float x) {
  float a = abs(x);
  if (a < 0.35) {
    float s = 1.0 + x / 10.0;
    s = 1.0 + x / 9.0 * s;
    s = 1.0 + x / 8.0 * s;
    s = 1.0 + x / 7.0 * s;
    s = 1.0 + x / 6.0 * s;
    s = 1.0 + x / 5.0 * s;
    s = 1.0 + x / 4.0 * s;
    s = 1.0 + x / 3.0 * s;
    s = 1.0 + x / 2.0 * s;
    return x * s;
  }
  if (x > 88.8) return uintBitsToFloat(0x7F800000u);
  return exp(x) - 1.0;
}
float vk_log1p(float x) {
  if (isnan(x)) return x;
  if (abs(x) < 0.4) {
    float s = x / (2.0 + x);
    float s2 = s * s;
    float p = 1.0 / 17.0;
    p = 1.0 / 15.0 + s2 * p;
    p = 1.0 / 13.0 + s2 * p;
    p = 1.0 / 11.0 + s2 * p;
    p = 1.0 / 9.0 + s2 * p;
    p = 1.0 / 7.0 + s2 * p;
    p = 1.0 / 5.0 + s2 * p;
    p = 1.0 / 3.0 + s2 * p;
    return 2.0 * s + 2.0 * s * s2 * p;
  }
  if (x == -1.0) return uintBitsToFloat(0xFF800000u);
  if (x < -1.0) return uintBitsToFloat(0x7FC00000u);
  if (isinf(x)) return x;
  return log(1.0 + x);
}
float vk_tanh(float x) {
  if (isnan(x)) return x;
  float a = abs(x);
  if (a > 9.1) return x > 0.0 ? 1.0 : -1.0;
  if (a < 0.0004) return x;
  float e = vk_expm1(2.0 * a);
  float t = e / (e + 2.0);
  return x < 0.0 ? -t : t;
}
/* 1 / (1 + exp(-x)), as exp(x) / (1 + exp(x)) for x < 0: exp(-x) would
 * overflow where the result is still a (subnormal) float */
float vk_logistic(float x) {
  if (isnan(x)) return x;
  float e = exp(-abs(x));
  return (x < 0.0 ? e : 1.0) / (1.0 + e);
}
float vk_atan2(float y, float x) {
  const float pi = 3.14159265358979323846;
  if (isnan(x) || isnan(y)) return x + y;
  if (y == 0.0) return vk_signbit(x) ? (vk_signbit(y) ? -pi : pi) : y;
  if (isinf(x) && isinf(y)) {
    float r = x > 0.0 ? pi / 4.0 : 3.0 * pi / 4.0;
    return y < 0.0 ? -r : r;
  }
  if (isinf(x)) return x > 0.0 ? y * 0.0 : (y < 0.0 ? -pi : pi);
  if (isinf(y) || x == 0.0) return y < 0.0 ? -pi / 2.0 : pi / 2.0;
  return atan(y, x);
}
float vk_cbrt(float x) {
  if (isnan(x) || isinf(x) || x == 0.0) return x;
  float a = abs(x);
  float y = exp2(log2(a) / 3.0);
  y = y - (y * y * y - a) / (3.0 * y * y);
  return x < 0.0 ? -y : y;
}
float vk_pow(float x, float y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return x + y;
  float ay = abs(y);
  bool yint = floor(y) == y;
  bool yodd = yint && ay < 16777216.0 && vk_fmod(ay, 2.0) == 1.0;
  float inf = uintBitsToFloat(0x7F800000u);
  if (x == 0.0) {
    if (y < 0.0) return yodd ? (vk_signbit(x) ? -inf : inf) : inf;
    return yodd ? x : 0.0;
  }
  if (isinf(y)) {
    float ax = abs(x);
    if (ax == 1.0) return 1.0;
    return ((ax > 1.0) == (y > 0.0)) ? inf : 0.0;
  }
  if (isinf(x)) {
    if (x > 0.0) return y < 0.0 ? 0.0 : inf;
    if (y < 0.0) return yodd ? -0.0 : 0.0;
    return yodd ? -inf : inf;
  }
  if (x < 0.0 && !yint) return uintBitsToFloat(0x7FC00000u);
  if (yint && ay <= 64.0) {
    int n = int(ay);
    float base = x, r = 1.0;
    while (n > 0) {
      if ((n & 1) != 0) r *= base;
      base *= base;
      n >>= 1;
    }
    return y < 0.0 ? 1.0 / r : r;
  }
  float r = exp2(y * log2(abs(x)));
  return (x < 0.0 && yodd) ? -r : r;
}
/* erf for float results (f32, and f16/bf16 computed in float), in float:
 *   |x| < 1:      x + x s(x^2)         s ~ erf(sqrt t)/sqrt t - 1
 *   1 <= |x| < 4: 1 - exp(-x^2) r(1/x)  r ~ erfc(x) exp(x^2)
 *   |x| >= 4:     +-1 (1 - erf(4) is below half an ulp of 1)
 * s (degree 6) and r (degree 8) are least-squares fits made by
 * tools/fit_erf.py, which also measures the formulas in float32: at most
 * 1.2 ulp from the correctly rounded erf with a correctly rounded exp
 * (the device's exp adds its own error, times erfc(x) <= 0.16).  About
 * 20 float operations and one exp, against a double series of up to 200
 * terms or a 160-step continued fraction (math_generic.glsl's vk_erf,
 * which f64 keeps). */
float vk_erff(float x) {
  precise float a = abs(x), t = x * x;
  precise float s = 7.957699563e-05;
  s = s * t - 8.035623468e-04;
  s = s * t + 5.190381315e-03;
  s = s * t - 2.685433626e-02;
  s = s * t + 1.128358021e-01;
  s = s * t - 3.761262298e-01;
  s = s * t + 1.283791661e-01;
  precise float v = 1.0 / max(a, 1.0);
  precise float r = -1.207988430e-02;
  r = r * v + 4.147293419e-02;
  r = r * v - 3.256680677e-03;
  r = r * v - 2.105932236e-01;
  r = r * v + 4.749651551e-01;
  r = r * v - 4.620603919e-01;
  r = r * v + 3.947317228e-02;
  r = r * v + 5.594154596e-01;
  r = r * v + 2.469873580e-04;
  precise float small = x + x * s, e = a < 4.0 ? 1.0 - exp(-(a * a)) * r : 1.0;
  if (a < 1.0) return small;
  return isnan(x) ? x : (x < 0.0 ? -e : e);
}
