// Integer helpers written once for int/uint and int64_t/uint64_t with
// XLA's semantics where GLSL's are undefined: division by zero and
// overflow, shifts by the width or more, pow with negative exponents.
// Expects IT / UT (the signed / unsigned type) and IBITS (their width);
// codegen/glsl_prelude.c defines them around each instance.  Narrow types
// computed in int/uint pass their width |w|; the caller normalizes.
IT vk_div(IT a, IT b) {
  if (b == IT(0)) return IT(-1);
  if (b == IT(-1)) return -a;
  return a / b;
}
IT vk_rem(IT a, IT b) {
  if (b == IT(0)) return a;
  if (b == IT(-1)) return IT(0);
  return a - (a / b) * b;
}
UT vk_div(UT a, UT b) { return b == UT(0) ? ~UT(0) : a / b; }
UT vk_rem(UT a, UT b) { return b == UT(0) ? a : a % b; }
#define VK_MASK(w) ((w) >= uint(IBITS) ? ~UT(0) : ((UT(1) << (w)) - UT(1)))
IT vk_shl(IT a, IT b, uint w) { return (b < IT(0) || b >= IT(w)) ? IT(0) : (a << b); }
IT vk_shra(IT a, IT b, uint w) {
  return (b < IT(0) || b >= IT(w)) ? (a < IT(0) ? IT(-1) : IT(0)) : (a >> b);
}
IT vk_shrl(IT a, IT b, uint w) {
  return (b < IT(0) || b >= IT(w)) ? IT(0) : IT((UT(a) & VK_MASK(w)) >> UT(b));
}
UT vk_shl(UT a, UT b, uint w) { return b >= UT(w) ? UT(0) : (a << b); }
UT vk_shrl(UT a, UT b, uint w) { return b >= UT(w) ? UT(0) : (a >> b); }
UT vk_shra(UT a, UT b, uint w) {
  IT s = (IT(a) << (uint(IBITS) - w)) >> (uint(IBITS) - w);
  IT r = b >= UT(w) ? (s < IT(0) ? IT(-1) : IT(0)) : (s >> b);
  return UT(r) & VK_MASK(w);
}
IT vk_pow(IT a, IT b) {
  if (b < IT(0)) {
    if (a == IT(1)) return IT(1);
    if (a == IT(-1)) return (b & IT(1)) == IT(0) ? IT(1) : IT(-1);
    return IT(0);
  }
  IT r = IT(1);
  while (b > IT(0)) {
    if ((b & IT(1)) != IT(0)) r *= a;
    a *= a;
    b >>= 1;
  }
  return r;
}
UT vk_pow(UT a, UT b) {
  UT r = UT(1);
  while (b > UT(0)) {
    if ((b & UT(1)) != UT(0)) r *= a;
    a *= a;
    b >>= 1;
  }
  return r;
}
IT vk_iabs(IT a) { return a < IT(0) ? -a : a; }
#undef VK_MASK
IT vk_isign(IT a) { return a > IT(0) ? IT(1) : (a < IT(0) ? IT(-1) : IT(0)); }
