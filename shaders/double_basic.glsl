// double helpers the generic ones build on: the sign bit and +inf.
// Prelude piece for GLSL_HELPERS_DOUBLE (codegen/glsl_prelude.c).
bool vk_signbit(double x) { return int(unpackDouble2x32(x).y) < 0; }
double vk_dinf() { return packDouble2x32(uvec2(0u, 0x7FF00000u)); }
/* a * b + c (float_basic.glsl's vk_fma, for double: GLSL's fma as is) */
double vk_fma(double a, double b, double c) {
  precise double r = fma(a, b, c);
  return r;
}
