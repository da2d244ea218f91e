// Bit counts of (narrow) unsigned 32-bit values of width |w|.
// Prelude piece for GLSL_HELPERS_INT / _UINT (codegen/glsl_prelude.c).
uint vk_low_bits(uint x, uint w) { return w >= 32u ? x : (x & ((1u << w) - 1u)); }
int vk_clz(uint x, uint w) { return 31 - findMSB(vk_low_bits(x, w)) - int(32u - w); }
int vk_popcnt(uint x, uint w) { return bitCount(vk_low_bits(x, w)); }
