// 64-bit words read through uniform texel buffers (usamplerBuffer of
// RGBA32UI texels, 16 bytes: codegen_declare_word_view in codegen/emit.c).
// On CPU devices (lavapipe) a texel fetch is one vector load per SIMD lane,
// where a storage-buffer read is a loop over the lanes per component, with
// a bounds check and a branch in each step; reading a kernel's words this
// way makes a copy kernel about 2.5x faster there.  The words keep the
// storage-buffer form (u64vec4: 8 floats, u64vec2: 4) so the code that
// unpacks them is the same for both; the packs fold away in the compiler.
// Macros, since GLSL cannot store a sampler in a variable; |t| is the
// sampler, |i| the word's index.
// Prelude piece for GLSL_HELPERS_TEXEL (codegen/glsl_prelude.c).
u64vec4 vk_texel_pack4(uvec4 a, uvec4 b) {
  return u64vec4(packUint2x32(a.xy), packUint2x32(a.zw), packUint2x32(b.xy), packUint2x32(b.zw));
}
u64vec2 vk_texel_pack2(uvec4 a) { return u64vec2(packUint2x32(a.xy), packUint2x32(a.zw)); }
#define VK_TEXEL_WORD4(t, i) vk_texel_pack4(texelFetch(t, 2 * int(i)), texelFetch(t, 2 * int(i) + 1))
#define VK_TEXEL_WORD2(t, i) vk_texel_pack2(texelFetch(t, int(i)))
