/*
 * GLSL helper functions that give HLO ops their exact StableHLO/XLA
 * semantics where plain GLSL differs or is undefined: integer division by
 * zero and overflow, shifts by the bit width or more, NaN-propagating
 * maximum/minimum, fmod-style remainder, round-half-away-from-zero,
 * expm1/log1p accurate near zero, tanh without overflow, pow's special
 * cases, reduce_precision, bf16/f16 rounding, total-order keys.
 *
 * The helpers come in blocks, one per compute type (see glsl_types.h);
 * a kernel includes the blocks of the types it touches.  Blocks that are the
 * same algorithm for several types are written once and instantiated with
 * the GLSL preprocessor (FT = float type, IT/UT = signed/unsigned int type,
 * IBITS = their width), relying on GLSL overloading to pick the right one.
 * Unused functions cost nothing: the SPIR-V optimizer drops them.
 *
 * All names start with "vk_".
 */
#include "codegen/glsl_types.h"

#include <string.h>

/* Helpers written once for float and double. */
static const char generic_float[] =
    "FT vk_fmax(FT a, FT b) {\n"
    "  if (isnan(a)) return a;\n"
    "  if (isnan(b)) return b;\n"
    "  if (a == b) return vk_signbit(a) ? b : a;\n"
    "  return a > b ? a : b;\n"
    "}\n"
    "FT vk_fmin(FT a, FT b) {\n"
    "  if (isnan(a)) return a;\n"
    "  if (isnan(b)) return b;\n"
    "  if (a == b) return vk_signbit(a) ? a : b;\n"
    "  return a < b ? a : b;\n"
    "}\n"
    "bool vk_is_finite(FT x) { return !isnan(x) && !isinf(x); }\n"
    "FT vk_sign(FT x) { return isnan(x) ? x : (x > FT(0) ? FT(1) : (x < FT(0) ? FT(-1) : x)); }\n"
    "FT vk_round_afz(FT x) {\n"
    "  FT a = abs(x);\n"
    "  if (a < FT(0.5)) return x * FT(0);\n"
    "  FT t = trunc(a);\n"
    "  if (a - t >= FT(0.5)) t += FT(1);\n"
    "  return x < FT(0) ? -t : t;\n"
    "}\n"
    /* Exact fmod: long division by power-of-two multiples of |y|; every
     * subtraction is exact (Sterbenz). */
    "FT vk_fmod(FT x, FT y) {\n"
    "  if (isnan(x) || isnan(y) || isinf(x) || y == FT(0)) return (x - x) / (y - y);\n"
    "  FT ax = abs(x), ay = abs(y);\n"
    "  if (isinf(y) || ax < ay) return x;\n"
    "  int ex, ey;\n"
    "  frexp(ax, ex);\n"
    "  frexp(ay, ey);\n"
    "  FT d = ldexp(ay, ex - ey);\n"
    "  if (d > ax) d = d * FT(0.5);\n"
    "  FT r = ax;\n"
    "  while (d >= ay) {\n"
    "    if (r >= d) r -= d;\n"
    "    d = d * FT(0.5);\n"
    "  }\n"
    "  return x < FT(0) ? -r : r;\n"
    "}\n";

static const char float_block[] =
    "bool vk_signbit(float x) { return floatBitsToInt(x) < 0; }\n"
    "#define FT float\n"
    "%GENERIC%"
    "#undef FT\n"
    "float vk_round_bf16(float x) {\n"
    "  if (isnan(x)) return x;\n"
    "  uint b = floatBitsToUint(x);\n"
    "  b += 0x7FFFu + ((b >> 16) & 1u);\n"
    "  return uintBitsToFloat(b & 0xFFFF0000u);\n"
    "}\n"
    "float vk_round_f16(float x) {\n"
    "  if (isnan(x) || isinf(x)) return x;\n"
    "  float a = abs(x);\n"
    "  if (a >= 65520.0) return x * uintBitsToFloat(0x7F800000u);\n"
    "  if (a < 6.103515625e-05) {\n"
    "    const float q = 5.9604644775390625e-08;\n"
    "    return roundEven(x / q) * q;\n"
    "  }\n"
    "  uint b = floatBitsToUint(x);\n"
    "  b += 0xFFFu + ((b >> 13) & 1u);\n"
    "  return uintBitsToFloat(b & 0xFFFFE000u);\n"
    "}\n"
    /* XLA's reduce_precision: round the mantissa to nearest even, overflow
     * to inf, values below the smallest normal flush to signed zero. */
    "float vk_reduce_precision(float x, int ebits, int mbits) {\n"
    "  if (isnan(x)) return x;\n"
    "  uint b = floatBitsToUint(x);\n"
    "  if (mbits < 23) {\n"
    "    uint drop = uint(23 - mbits);\n"
    "    uint last = 1u << drop;\n"
    "    b += (last >> 1) - 1u + ((b >> drop) & 1u);\n"
    "    b &= ~(last - 1u);\n"
    "  }\n"
    "  if (ebits < 8) {\n"
    "    int bias = (1 << (ebits - 1)) - 1;\n"
    "    int e = int((b >> 23) & 0xFFu) - 127;\n"
    "    uint sign = b & 0x80000000u;\n"
    "    if (e > bias) b = sign | 0x7F800000u;\n"
    "    else if (e <= -bias) b = sign;\n"
    "  }\n"
    "  return uintBitsToFloat(b);\n"
    "}\n"
    "int vk_total_key(float x) {\n"
    "  int b = floatBitsToInt(x);\n"
    "  return b < 0 ? (b ^ 0x7FFFFFFF) : b;\n"
    "}\n"
    "float vk_expm1(float x) {\n"
    "  float a = abs(x);\n"
    "  if (a < 0.35) {\n"
    "    float s = 1.0 + x / 10.0;\n"
    "    s = 1.0 + x / 9.0 * s;\n"
    "    s = 1.0 + x / 8.0 * s;\n"
    "    s = 1.0 + x / 7.0 * s;\n"
    "    s = 1.0 + x / 6.0 * s;\n"
    "    s = 1.0 + x / 5.0 * s;\n"
    "    s = 1.0 + x / 4.0 * s;\n"
    "    s = 1.0 + x / 3.0 * s;\n"
    "    s = 1.0 + x / 2.0 * s;\n"
    "    return x * s;\n"
    "  }\n"
    "  if (x > 88.8) return uintBitsToFloat(0x7F800000u);\n"
    "  return exp(x) - 1.0;\n"
    "}\n"
    "float vk_log1p(float x) {\n"
    "  if (isnan(x)) return x;\n"
    "  if (abs(x) < 0.4) {\n"
    "    float s = x / (2.0 + x);\n"
    "    float s2 = s * s;\n"
    "    float p = 1.0 / 17.0;\n"
    "    p = 1.0 / 15.0 + s2 * p;\n"
    "    p = 1.0 / 13.0 + s2 * p;\n"
    "    p = 1.0 / 11.0 + s2 * p;\n"
    "    p = 1.0 / 9.0 + s2 * p;\n"
    "    p = 1.0 / 7.0 + s2 * p;\n"
    "    p = 1.0 / 5.0 + s2 * p;\n"
    "    p = 1.0 / 3.0 + s2 * p;\n"
    "    return 2.0 * s + 2.0 * s * s2 * p;\n"
    "  }\n"
    "  if (x == -1.0) return uintBitsToFloat(0xFF800000u);\n"
    "  if (x < -1.0) return uintBitsToFloat(0x7FC00000u);\n"
    "  if (isinf(x)) return x;\n"
    "  return log(1.0 + x);\n"
    "}\n"
    "float vk_tanh(float x) {\n"
    "  if (isnan(x)) return x;\n"
    "  float a = abs(x);\n"
    "  if (a > 9.1) return x > 0.0 ? 1.0 : -1.0;\n"
    "  if (a < 0.0004) return x;\n"
    "  float e = vk_expm1(2.0 * a);\n"
    "  float t = e / (e + 2.0);\n"
    "  return x < 0.0 ? -t : t;\n"
    "}\n"
    "float vk_logistic(float x) {\n"
    "  if (isnan(x)) return x;\n"
    "  return 1.0 / (1.0 + exp(-x));\n"
    "}\n"
    "float vk_cbrt(float x) {\n"
    "  if (isnan(x) || isinf(x) || x == 0.0) return x;\n"
    "  float a = abs(x);\n"
    "  float y = exp2(log2(a) / 3.0);\n"
    "  y = y - (y * y * y - a) / (3.0 * y * y);\n"
    "  return x < 0.0 ? -y : y;\n"
    "}\n"
    "float vk_pow(float x, float y) {\n"
    "  if (y == 0.0 || x == 1.0) return 1.0;\n"
    "  if (isnan(x) || isnan(y)) return x + y;\n"
    "  float ay = abs(y);\n"
    "  bool yint = floor(y) == y;\n"
    "  bool yodd = yint && ay < 16777216.0 && vk_fmod(ay, 2.0) == 1.0;\n"
    "  float inf = uintBitsToFloat(0x7F800000u);\n"
    "  if (x == 0.0) {\n"
    "    if (y < 0.0) return yodd ? (vk_signbit(x) ? -inf : inf) : inf;\n"
    "    return yodd ? x : 0.0;\n"
    "  }\n"
    "  if (isinf(y)) {\n"
    "    float ax = abs(x);\n"
    "    if (ax == 1.0) return 1.0;\n"
    "    return ((ax > 1.0) == (y > 0.0)) ? inf : 0.0;\n"
    "  }\n"
    "  if (isinf(x)) {\n"
    "    if (x > 0.0) return y < 0.0 ? 0.0 : inf;\n"
    "    if (y < 0.0) return yodd ? -0.0 : 0.0;\n"
    "    return yodd ? -inf : inf;\n"
    "  }\n"
    "  if (x < 0.0 && !yint) return uintBitsToFloat(0x7FC00000u);\n"
    "  if (yint && ay <= 64.0) {\n"
    "    int n = int(ay);\n"
    "    float base = x, r = 1.0;\n"
    "    while (n > 0) {\n"
    "      if ((n & 1) != 0) r *= base;\n"
    "      base *= base;\n"
    "      n >>= 1;\n"
    "    }\n"
    "    return y < 0.0 ? 1.0 / r : r;\n"
    "  }\n"
    "  float r = exp2(y * log2(abs(x)));\n"
    "  return (x < 0.0 && yodd) ? -r : r;\n"
    "}\n";

static const char double_block[] =
    "bool vk_signbit(double x) { return int(unpackDouble2x32(x).y) < 0; }\n"
    "#define FT double\n"
    "%GENERIC%"
    "#undef FT\n";

/* Integer helpers written once for int/uint and int64_t/uint64_t.  Narrow
 * types computed in int/uint pass their width |w|; the caller normalizes. */
static const char generic_int[] =
    "IT vk_div(IT a, IT b) {\n"
    "  if (b == IT(0)) return IT(-1);\n"
    "  if (b == IT(-1)) return -a;\n"
    "  return a / b;\n"
    "}\n"
    "IT vk_rem(IT a, IT b) {\n"
    "  if (b == IT(0)) return a;\n"
    "  if (b == IT(-1)) return IT(0);\n"
    "  return a - (a / b) * b;\n"
    "}\n"
    "UT vk_div(UT a, UT b) { return b == UT(0) ? ~UT(0) : a / b; }\n"
    "UT vk_rem(UT a, UT b) { return b == UT(0) ? a : a % b; }\n"
    "UT vk_mask(uint w) { return w >= uint(IBITS) ? ~UT(0) : ((UT(1) << w) - UT(1)); }\n"
    "IT vk_shl(IT a, IT b, uint w) { return (b < IT(0) || b >= IT(w)) ? IT(0) : (a << b); }\n"
    "IT vk_shra(IT a, IT b, uint w) {\n"
    "  return (b < IT(0) || b >= IT(w)) ? (a < IT(0) ? IT(-1) : IT(0)) : (a >> b);\n"
    "}\n"
    "IT vk_shrl(IT a, IT b, uint w) {\n"
    "  return (b < IT(0) || b >= IT(w)) ? IT(0) : IT((UT(a) & vk_mask(w)) >> UT(b));\n"
    "}\n"
    "UT vk_shl(UT a, UT b, uint w) { return b >= UT(w) ? UT(0) : (a << b); }\n"
    "UT vk_shrl(UT a, UT b, uint w) { return b >= UT(w) ? UT(0) : (a >> b); }\n"
    "UT vk_shra(UT a, UT b, uint w) {\n"
    "  IT s = (IT(a) << (uint(IBITS) - w)) >> (uint(IBITS) - w);\n"
    "  IT r = b >= UT(w) ? (s < IT(0) ? IT(-1) : IT(0)) : (s >> b);\n"
    "  return UT(r) & vk_mask(w);\n"
    "}\n"
    "IT vk_pow(IT a, IT b) {\n"
    "  if (b < IT(0)) {\n"
    "    if (a == IT(1)) return IT(1);\n"
    "    if (a == IT(-1)) return (b & IT(1)) == IT(0) ? IT(1) : IT(-1);\n"
    "    return IT(0);\n"
    "  }\n"
    "  IT r = IT(1);\n"
    "  while (b > IT(0)) {\n"
    "    if ((b & IT(1)) != IT(0)) r *= a;\n"
    "    a *= a;\n"
    "    b >>= 1;\n"
    "  }\n"
    "  return r;\n"
    "}\n"
    "UT vk_pow(UT a, UT b) {\n"
    "  UT r = UT(1);\n"
    "  while (b > UT(0)) {\n"
    "    if ((b & UT(1)) != UT(0)) r *= a;\n"
    "    a *= a;\n"
    "    b >>= 1;\n"
    "  }\n"
    "  return r;\n"
    "}\n"
    "IT vk_iabs(IT a) { return a < IT(0) ? -a : a; }\n"
    "IT vk_isign(IT a) { return a > IT(0) ? IT(1) : (a < IT(0) ? IT(-1) : IT(0)); }\n";

static const char int32_block[] =
    "#define IT int\n#define UT uint\n#define IBITS 32\n"
    "%GENERIC%"
    "#undef IT\n#undef UT\n#undef IBITS\n"
    "int vk_clz(uint x, uint w) { return 31 - findMSB(x & vk_mask(w)) - int(32u - w); }\n"
    "int vk_popcnt(uint x, uint w) { return bitCount(x & vk_mask(w)); }\n";

static const char int64_block[] =
    "#define IT int64_t\n#define UT uint64_t\n#define IBITS 64\n"
    "%GENERIC%"
    "#undef IT\n#undef UT\n#undef IBITS\n"
    "int vk_clz(uint64_t x, uint w) {\n"
    "  uvec2 h = unpackUint2x32(x);\n"
    "  return h.y != 0u ? 31 - findMSB(h.y) : 63 - findMSB(h.x);\n"
    "}\n"
    "int vk_popcnt(uint64_t x, uint w) {\n"
    "  uvec2 h = unpackUint2x32(x);\n"
    "  return bitCount(h.x) + bitCount(h.y);\n"
    "}\n";

static const char index_block[] =
    "int vk_floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }\n"
    "int vk_ceil_div(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }\n";

/* Appends |block| with every "%GENERIC%" replaced by |generic|. */
static void append_instantiated(strbuf_t *sb, const char *block, const char *generic) {
  const char *mark = "%GENERIC%";
  for (;;) {
    const char *p = generic ? strstr(block, mark) : NULL;
    if (!p) {
      strbuf_append(sb, block);
      return;
    }
    strbuf_appendn(sb, block, (size_t)(p - block));
    strbuf_append(sb, generic);
    block = p + strlen(mark);
  }
}

void glsl_append_prelude(strbuf_t *sb, unsigned features) {
  if (features & GLSL_HELPERS_INDEX) strbuf_append(sb, index_block);
  if (features & (GLSL_HELPERS_INT | GLSL_HELPERS_UINT))
    append_instantiated(sb, int32_block, generic_int);
  if (features & (GLSL_HELPERS_INT64 | GLSL_HELPERS_UINT64))
    append_instantiated(sb, int64_block, generic_int);
  if (features & GLSL_HELPERS_FLOAT) append_instantiated(sb, float_block, generic_float);
  if (features & GLSL_HELPERS_DOUBLE) append_instantiated(sb, double_block, generic_float);
}
