// Packed 1- and 2-byte elements in `uint data[]` (devices without 8/16-bit
// storage): element i lives in word i / 4 (i / 2) at bit (i % 4) * 8
// ((i % 2) * 16).  A store clears then sets its own bits with two atomics,
// so invocations storing neighbouring elements of one word never lose each
// other's writes.  |b| is a buffer block ("out0"); macros, since GLSL
// cannot pass buffers to functions.
// Prelude piece for GLSL_HELPERS_PACKED (codegen/glsl_prelude.c).
#define VK_LOAD_U8(b, i) bitfieldExtract(b.data[int(i) >> 2], (int(i) & 3) * 8, 8)
#define VK_LOAD_S8(b, i) bitfieldExtract(int(b.data[int(i) >> 2]), (int(i) & 3) * 8, 8)
#define VK_LOAD_U16(b, i) bitfieldExtract(b.data[int(i) >> 1], (int(i) & 1) * 16, 16)
#define VK_LOAD_S16(b, i) bitfieldExtract(int(b.data[int(i) >> 1]), (int(i) & 1) * 16, 16)
#define VK_STORE_8(b, i, v) { int vk_w = int(i) >> 2; uint vk_s = uint(int(i) & 3) * 8u; \
    atomicAnd(b.data[vk_w], ~(0xFFu << vk_s)); \
    atomicOr(b.data[vk_w], (uint(v) & 0xFFu) << vk_s); }
#define VK_STORE_16(b, i, v) { int vk_w = int(i) >> 1; uint vk_s = uint(int(i) & 1) * 16u; \
    atomicAnd(b.data[vk_w], ~(0xFFFFu << vk_s)); \
    atomicOr(b.data[vk_w], (uint(v) & 0xFFFFu) << vk_s); }
