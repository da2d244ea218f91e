// Demoted f64 (no shaderFloat64, opt-in): the double's bits in a uvec2
// (low, high) <-> float, and c128 (uvec4) <-> c64 (vec2).
// Uses int64_emulated.glsl (u64_to_float).
// Prelude piece for GLSL_HELPERS_F64SOFT (codegen/glsl_prelude.c).
float vk_f64_to_f32(uvec2 d) {
  uint sign = d.y & 0x80000000u;
  int e = int((d.y >> 20) & 0x7FFu);
  uvec2 m = uvec2(d.x, d.y & 0xFFFFFu);
  if (e == 0x7FF)
    return uintBitsToFloat(sign | 0x7F800000u | (m != uvec2(0u) ? 0x400000u | (m.y << 3) : 0u));
  if (e >= 1023 + 128) return uintBitsToFloat(sign | 0x7F800000u);
  if (e < 1023 - 151) return uintBitsToFloat(sign);
  m.y |= 0x100000u;
  /* 1.m * 2^(e - 1023), rounded once by u64_to_float (values in the float
   * subnormal range may round twice) */
  float f = ldexp(ldexp(u64_to_float(m), -52), e - 1023);
  return sign != 0u ? -f : f;
}
uvec2 vk_f32_to_f64(float f) {
  uint b = floatBitsToUint(f);
  uint sign = b & 0x80000000u;
  int e = int((b >> 23) & 0xFFu);
  uint m = b & 0x7FFFFFu;
  if (e == 255) return uvec2(m << 29, sign | 0x7FF00000u | (m >> 3));
  if (e == 0) {
    if (m == 0u) return uvec2(0u, sign);
    int s = 23 - findMSB(m);
    m = (m << uint(s)) & 0x7FFFFFu;
    e = 1 - s;
  }
  return uvec2(m << 29, sign | (uint(e + 896) << 20) | (m >> 3));
}
vec2 vk_c128_to_c64(uvec4 c) { return vec2(vk_f64_to_f32(c.xy), vk_f64_to_f32(c.zw)); }
uvec4 vk_c64_to_c128(vec2 c) { return uvec4(vk_f32_to_f64(c.x), vk_f32_to_f64(c.y)); }
