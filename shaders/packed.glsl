#define VK_LOAD_U8(b, i) bitfieldExtract(b.data[int(i) >> 2], (int(i) & 3) * 8, 8)
#define VK_LOAD_S8(b, i) bitfieldExtract(int(b.data[int(i) >> 2]), (int(i) & 3) * 8, 8)
#define VK_LOAD_U16(b, i) bitfieldExtract(b.data[int(i) >> 1], (int(i) & 1) * 16, 16)
#define VK_LOAD_S16(b, i) bitfieldExtract(int(b.data[int(i) >> 1]), (int(i) & 1) * 16, 16)
#define VK_STORE_8(b, i, v) { int vk_w = int(i) >> 2; uint vk_s = uint(int(i) & 3) * 8u; atomicAnd(b.data[vk_w], ~(0xFFu << vk_s)); atomicOr(b.data[vk_w], (uint(v) & 0xFFu) << vk_s); }
#define VK_STORE_16(b, i, v) { int vk_w = int(i) >> 1; uint vk_s = uint(int(i) & 1) * 16u; atomicAnd(b.data[vk_w], ~(0xFFFFu << vk_s)); atomicOr(b.data[vk_w], (uint(v) & 0xFFFFu) << vk_s); }
