// float helpers the generic ones build on: the sign bit, the transcendental
// functions GLSL has (the double versions in double.glsl cannot use GLSL's,
// which are float-only), next_after.
// Prelude piece for GLSL_HELPERS_FLOAT (codegen/glsl_prelude.c).
bool vk_signbit(float x) { return floatBitsToInt(x) < 0; }
float vk_exp(float x) { return exp(x); }
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
