// i64/ui64 without shaderInt64: uvec2(low, high), two's complement (see
// codegen/emulate64.c).  ==, !=, &, |, ^, ~ and ?: are GLSL's vector
// operators, so they need no helper.
// Prelude piece for GLSL_HELPERS_EMU64 (codegen/glsl_prelude.c).
bool i64_is_neg(uvec2 a) { return int(a.y) < 0; }
uvec2 i64_from_int(int x) { return uvec2(uint(x), x < 0 ? 0xFFFFFFFFu : 0u); }
uvec2 i64_add(uvec2 a, uvec2 b) {
  uint c;
  uint lo = uaddCarry(a.x, b.x, c);
  return uvec2(lo, a.y + b.y + c);
}
uvec2 i64_sub(uvec2 a, uvec2 b) {
  uint c;
  uint lo = usubBorrow(a.x, b.x, c);
  return uvec2(lo, a.y - b.y - c);
}
uvec2 i64_neg(uvec2 a) { return i64_sub(uvec2(0u), a); }
/* low 64 bits of the product: a.x*b.x in full, the cross terms' low words */
uvec2 i64_mul(uvec2 a, uvec2 b) {
  uint hi, lo;
  umulExtended(a.x, b.x, hi, lo);
  return uvec2(lo, hi + a.x * b.y + a.y * b.x);
}
bool u64_lt(uvec2 a, uvec2 b) { return a.y != b.y ? a.y < b.y : a.x < b.x; }
bool i64_lt(uvec2 a, uvec2 b) { return a.y != b.y ? int(a.y) < int(b.y) : a.x < b.x; }
uvec2 i64_min(uvec2 a, uvec2 b) { return i64_lt(b, a) ? b : a; }
uvec2 i64_max(uvec2 a, uvec2 b) { return i64_lt(a, b) ? b : a; }
uvec2 u64_min(uvec2 a, uvec2 b) { return u64_lt(b, a) ? b : a; }
uvec2 u64_max(uvec2 a, uvec2 b) { return u64_lt(a, b) ? b : a; }
uvec2 i64_abs(uvec2 a) { return i64_is_neg(a) ? i64_neg(a) : a; }
uvec2 i64_sign(uvec2 a) {
  return i64_is_neg(a) ? uvec2(0xFFFFFFFFu) : (a == uvec2(0u) ? a : uvec2(1u, 0u));
}
/* shift counts are read as unsigned 64-bit: >= 64 (or negative) overflows */
uvec2 u64_shl(uvec2 a, uvec2 s) {
  if (s.y != 0u || s.x >= 64u) return uvec2(0u);
  uint n = s.x;
  if (n == 0u) return a;
  if (n >= 32u) return uvec2(0u, a.x << (n - 32u));
  return uvec2(a.x << n, (a.y << n) | (a.x >> (32u - n)));
}
uvec2 u64_shrl(uvec2 a, uvec2 s) {
  if (s.y != 0u || s.x >= 64u) return uvec2(0u);
  uint n = s.x;
  if (n == 0u) return a;
  if (n >= 32u) return uvec2(a.y >> (n - 32u), 0u);
  return uvec2((a.x >> n) | (a.y << (32u - n)), a.y >> n);
}
uvec2 i64_shra(uvec2 a, uvec2 s) {
  uint fill = i64_is_neg(a) ? 0xFFFFFFFFu : 0u;
  if (s.y != 0u || s.x >= 64u) return uvec2(fill);
  uint n = s.x;
  if (n == 0u) return a;
  if (n >= 32u) return uvec2(uint(int(a.y) >> int(n - 32u)), fill);
  return uvec2((a.x >> n) | (a.y << (32u - n)), uint(int(a.y) >> int(n)));
}
/* unsigned a / b and a % b for b != 0: restoring division, one bit per
 * step; |carry| keeps the bit shifted out of r when b >= 2^63 */
uvec2 u64_divmod(uvec2 a, uvec2 b, out uvec2 r) {
  if (a.y == 0u && b.y == 0u) {
    r = uvec2(a.x % b.x, 0u);
    return uvec2(a.x / b.x, 0u);
  }
  uvec2 q = uvec2(0u);
  r = uvec2(0u);
  for (int i = 63; i >= 0; i--) {
    bool carry = (r.y >> 31) != 0u;
    uint bit = i >= 32 ? (a.y >> uint(i - 32)) & 1u : (a.x >> uint(i)) & 1u;
    r = uvec2((r.x << 1) | bit, (r.y << 1) | (r.x >> 31));
    if (carry || !u64_lt(r, b)) {
      r = i64_sub(r, b);
      if (i >= 32) q.y |= 1u << uint(i - 32); else q.x |= 1u << uint(i);
    }
  }
  return q;
}
uvec2 u64_div(uvec2 a, uvec2 b) {
  if (b == uvec2(0u)) return uvec2(0xFFFFFFFFu);
  uvec2 r;
  return u64_divmod(a, b, r);
}
uvec2 u64_rem(uvec2 a, uvec2 b) {
  if (b == uvec2(0u)) return a;
  uvec2 r;
  u64_divmod(a, b, r);
  return r;
}
/* x / 0 = -1, INT64_MIN / -1 = INT64_MIN (wraps), x % 0 = x, x % -1 = 0;
 * quotients truncate toward zero, remainders take the dividend's sign */
uvec2 i64_div(uvec2 a, uvec2 b) {
  if (b == uvec2(0u)) return uvec2(0xFFFFFFFFu);
  if (b == uvec2(0xFFFFFFFFu)) return i64_neg(a);
  uvec2 r;
  uvec2 q = u64_divmod(i64_abs(a), i64_abs(b), r);
  return i64_is_neg(a) != i64_is_neg(b) ? i64_neg(q) : q;
}
uvec2 i64_rem(uvec2 a, uvec2 b) {
  if (b == uvec2(0u)) return a;
  if (b == uvec2(0xFFFFFFFFu)) return uvec2(0u);
  uvec2 r;
  u64_divmod(i64_abs(a), i64_abs(b), r);
  return i64_is_neg(a) ? i64_neg(r) : r;
}
uvec2 u64_pow(uvec2 a, uvec2 b) {
  uvec2 r = uvec2(1u, 0u);
  while (b != uvec2(0u)) {
    if ((b.x & 1u) != 0u) r = i64_mul(r, a);
    a = i64_mul(a, a);
    b = u64_shrl(b, uvec2(1u, 0u));
  }
  return r;
}
uvec2 i64_pow(uvec2 a, uvec2 b) {
  if (i64_is_neg(b)) {
    if (a == uvec2(1u, 0u)) return a;
    if (a == uvec2(0xFFFFFFFFu)) return (b.x & 1u) == 0u ? uvec2(1u, 0u) : a;
    return uvec2(0u);
  }
  return u64_pow(a, b);
}
int u64_clz(uvec2 a) { return a.y != 0u ? 31 - findMSB(a.y) : 63 - findMSB(a.x); }
int u64_popcnt(uvec2 a) { return bitCount(a.x) + bitCount(a.y); }
/* float -> integer: truncate; t < 2^64 splits exactly into two words */
uvec2 u64_from_float_mag(float a) {
  float t = trunc(a);
  float hi = floor(t * (1.0 / 4294967296.0));
  return uvec2(uint(t - hi * 4294967296.0), uint(hi));
}
uvec2 i64_from_float(float x) {
  if (isnan(x)) return uvec2(0u);
  if (x >= 9223372036854775808.0) return uvec2(0xFFFFFFFFu, 0x7FFFFFFFu);
  if (x <= -9223372036854775808.0) return uvec2(0u, 0x80000000u);
  uvec2 m = u64_from_float_mag(abs(x));
  return x < 0.0 ? i64_neg(m) : m;
}
uvec2 u64_from_float(float x) {
  if (isnan(x) || x <= 0.0) return uvec2(0u);
  if (x >= 18446744073709551616.0) return uvec2(0xFFFFFFFFu);
  return u64_from_float_mag(x);
}
/* integer -> float, rounded once to nearest even: the top 32 bits with
 * a sticky bit for everything below convert exactly as the whole */
float u64_to_float(uvec2 a) {
  if (a.y == 0u) return float(a.x);
  uint s = uint(findMSB(a.y)) + 1u;
  uint t = s == 32u ? a.y : ((a.x >> s) | (a.y << (32u - s)));
  uint lost = s == 32u ? a.x : (a.x << (32u - s));
  return ldexp(float(t | (lost != 0u ? 1u : 0u)), int(s));
}
float i64_to_float(uvec2 a) {
  return i64_is_neg(a) ? -u64_to_float(i64_neg(a)) : u64_to_float(a);
}
