// float helpers the generic ones build on: the sign bit, the transcendental
// functions GLSL has (the double versions in double.glsl cannot use GLSL's,
// which are float-only), next_after.
// Prelude piece for GLSL_HELPERS_FLOAT (codegen/glsl_prelude.c).
bool vk_signbit(float x) { return floatBitsToInt(x) < 0; }
/* exp(x) = 2^k exp(r), x = k ln2 + r, |r| <= ln2/2: ln2 in two parts, the
 * first with 16 significant bits so that k * it is exact (Cody and
 * Waite); exp(r) = 1 + r + r^2 q(r), q of degree 4 fitted (Remez,
 * tools/fit_exp.py) for the least relative error of exp, 3e-9 (0.05 ulp); 2^k as two normal powers
 * of two built from their bits, so that a subnormal result rounds once and
 * x past ln(FLT_MAX) overflows to infinity.  Straight-line code (selects,
 * no branches).  Within 1 ulp, 90% correctly rounded; GLSL's exp on
 * lavapipe (exp2 of x log2(e)) is up to 60 ulps off for |x| near 80, and
 * this costs it about a quarter more time. */
float vk_exp(float x) {
  float xc = clamp(x, -104.0, 89.0);
  precise float k = roundEven(xc * 1.44269504088896341);
  precise float r = (xc - k * 0.693145751953125) - k * 1.42860676533018700e-06;
  float q = 0.0013814613185383256;
  q = q * r + 0.008368709822971134;
  q = q * r + 0.04166838736278007;
  q = q * r + 0.1666652068984618;
  q = q * r + 0.4999999345170092;
  precise float p = 1.0 + (r + r * r * q);
  int ki = int(k), k1 = ki >> 1;
  p *= uintBitsToFloat(uint(k1 + 127) << 23);
  p *= uintBitsToFloat(uint(ki - k1 + 127) << 23);
  return isnan(x) ? x : p;
}
float vk_log(float x) { return log(x); }
float vk_sin(float x) { return sin(x); }
float vk_cos(float x) { return cos(x); }
float vk_tan(float x) { return tan(x); }
float vk_atan(float x) { return atan(x); }
/* a * b + c rounded once.  GLSL's fma may be a multiply and an add (SPIR-V
 * only asks that it be computed the same way everywhere): lavapipe 22.3
 * splits it.  With VK_FMA_VIA_DOUBLE (codegen sets it on CPU devices with
 * shaderFloat64, GLSL_FEATURE_FMA_DOUBLE) the product is formed exactly in
 * double (24 + 24 bits fit in 53) and the sum rounded to double and then
 * to float, which differs from one rounding only where the double sum
 * lands exactly on a tie between two floats. */
float vk_fma(float a, float b, float c) {
#ifdef VK_FMA_VIA_DOUBLE
  precise double r = double(a) * double(b) + double(c);
  return float(r);
#else
  precise float r = fma(a, b, c);
  return r;
#endif
}
float vk_next_after(float x, float y) {
  if (isnan(x) || isnan(y)) return x + y;
  if (x == y) return y;
  if (x == 0.0) return uintBitsToFloat(vk_signbit(y) ? 0x80000001u : 1u);
  uint b = floatBitsToUint(x);
  if ((x < y) == (x > 0.0)) b += 1u; else b -= 1u;
  return uintBitsToFloat(b);
}
