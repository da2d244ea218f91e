// Bit counts of 64-bit values (needs shaderInt64).
// Prelude piece for GLSL_HELPERS_INT64 / _UINT64 (codegen/glsl_prelude.c).
int vk_clz(uint64_t x, uint w) {
  uvec2 h = unpackUint2x32(x);
  return h.y != 0u ? 31 - findMSB(h.y) : 63 - findMSB(h.x);
}
int vk_popcnt(uint64_t x, uint w) {
  uvec2 h = unpackUint2x32(x);
  return bitCount(h.x) + bitCount(h.y);
}
