// f16 <-> f32 conversions in integer code: makes unpackHalf2x16 and
// packHalf2x16 in the kernel's own code mean float.glsl's
// vk_unpack_half2x16 / vk_pack_half2x16 (exact, round to nearest even).
// Appended after the other helpers for GLSL_FEATURE_F16_SOFT
// (codegen_target_t.f16_soft_conversions: drivers whose conversion
// instructions are broken, lavapipe on aarch64) by codegen/glsl_prelude.c.
#define unpackHalf2x16 vk_unpack_half2x16
#define packHalf2x16 vk_pack_half2x16
