// nan_double.glsl: nan.glsl's bit tests for double (kernels on devices with
// shaderFloat64).  The high word's exponent is all ones for both; NaN when
// any mantissa bit is set.
bool vk_isnan(double x) {
  uvec2 w = unpackDouble2x32(x);
  uint hi = w.y & 0x7fffffffu;
  return hi > 0x7ff00000u || (hi == 0x7ff00000u && w.x != 0u);
}
bool vk_isinf(double x) {
  uvec2 w = unpackDouble2x32(x);
  return (w.y & 0x7fffffffu) == 0x7ff00000u && w.x == 0u;
}
bvec2 vk_isnan(dvec2 x) { return bvec2(vk_isnan(x.x), vk_isnan(x.y)); }
bvec2 vk_isinf(dvec2 x) { return bvec2(vk_isinf(x.x), vk_isinf(x.y)); }
