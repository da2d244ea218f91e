// The bit generators of rng_bit_generator (codegen/emit_rng.c explains how
// XLA uses them): Threefry-2x32 with 20 rounds and Philox-4x32 with 10
// rounds, and ui64 <-> uvec2(low, high) words.  Needs shaderInt64.
uint vk_rotl32(uint v, int r) { return (v << r) | (v >> (32 - r)); }
uvec2 vk_threefry2x32(uvec2 key, uvec2 x) {
  const int R[8] = int[8](13, 15, 26, 6, 17, 29, 16, 24);
  uint ks[3] = uint[3](key.x, key.y, 0x1BD11BDAu ^ key.x ^ key.y);
  x += uvec2(ks[0], ks[1]);
  for (int s = 0; s < 5; s++) {
    for (int r = 0; r < 4; r++) {
      x.x += x.y;
      x.y = vk_rotl32(x.y, R[(s & 1) * 4 + r]);
      x.y ^= x.x;
    }
    x.x += ks[(s + 1) % 3];
    x.y += ks[(s + 2) % 3] + uint(s + 1);
  }
  return x;
}
uvec4 vk_philox4x32(uvec2 key, uvec4 x) {
  for (int r = 0; r < 10; r++) {
    uint hi0, lo0, hi1, lo1;
    umulExtended(x.x, 0xD2511F53u, hi0, lo0);
    umulExtended(x.z, 0xCD9E8D57u, hi1, lo1);
    x = uvec4(hi1 ^ x.y ^ key.x, lo1, hi0 ^ x.w ^ key.y, lo0);
    key += uvec2(0x9E3779B9u, 0xBB67AE85u);
  }
  return x;
}
uvec2 vk_u64_words(uint64_t v) { return uvec2(uint(v), uint(v >> 32)); }
uint64_t vk_u64_from_words(uvec2 w) { return uint64_t(w.x) | (uint64_t(w.y) << 32); }
