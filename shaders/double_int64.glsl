// double helpers that need 64-bit integers (shaderInt64): reduce_precision
// and next_after on the bits.  Uses double_basic.glsl.
// Prelude piece for GLSL_HELPERS_DOUBLE with GLSL_FEATURE_INT64
// (codegen/glsl_prelude.c).
/* (a NaN stays itself, except with no mantissa bits to hold it: then +inf,
 * as XLA and the StableHLO interpreter give) */
double vk_reduce_precision(double x, int ebits, int mbits) {
  if (isnan(x)) return mbits > 0 ? x : vk_dinf();
  uint64_t b = doubleBitsToUint64(x);
  if (mbits < 52) {
    uint drop = uint(52 - mbits);
    uint64_t last = uint64_t(1) << drop;
    b += (last >> 1) - uint64_t(1) + ((b >> drop) & uint64_t(1));
    b &= ~(last - uint64_t(1));
  }
  if (ebits < 11) {
    int bias = (1 << (ebits - 1)) - 1;
    int e = int((b >> 52) & uint64_t(0x7FF)) - 1023;
    uint64_t sign = b & 0x8000000000000000ul;
    if (e > bias) b = sign | 0x7FF0000000000000ul;
    else if (e <= -bias) b = sign;
  }
  return uint64BitsToDouble(b);
}
double vk_next_after(double x, double y) {
  if (isnan(x) || isnan(y)) return x + y;
  if (x == y) return y;
  if (x == 0.0lf) return uint64BitsToDouble(vk_signbit(y) ? 0x8000000000000001ul : 1ul);
  uint64_t b = doubleBitsToUint64(x);
  if ((x < y) == (x > 0.0lf)) b += 1ul; else b -= 1ul;
  return uint64BitsToDouble(b);
}
