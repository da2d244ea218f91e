/*
 * Float bit-pattern conversion for the element types (the formats of the
 * small float types: hlo/float_formats.def; the conversion itself:
 * support/float_format.c, shared with the runtime), and splitmix64.
 */
#include "hlo/literal.h"
#include "support/float_format.h"

#include <math.h>
#include <string.h>

static bool format_of(hlo_element_type_t t, float_format_t *f) {
  static const struct {
    hlo_element_type_t type;
    float_format_t format;
  } formats[] = {
#define X(e, exponent_bits, mantissa_bits, bias, style) \
  {HLO_##e, {exponent_bits, mantissa_bits, bias, FLOAT_STYLE_##style}},
#include "hlo/float_formats.def"
#undef X
  };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    if (formats[i].type == t) {
      *f = formats[i].format;
      return true;
    }
  }
  return false;
}


bool hlo_float_encode(hlo_element_type_t t, double value, uint64_t *out_bits) {
  if (t == HLO_F64) {
    memcpy(out_bits, &value, sizeof value);
    return true;
  }
  if (t == HLO_F32) {
    float f = (float)value; /* C conversion rounds to nearest even */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    *out_bits = u;
    return true;
  }
  float_format_t f;
  if (!format_of(t, &f)) return false;
  *out_bits = float_format_encode(&f, value);
  return true;
}

double hlo_float_decode(hlo_element_type_t t, uint64_t bits) {
  if (t == HLO_F64) {
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
  }
  if (t == HLO_F32) {
    uint32_t u = (uint32_t)bits;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  float_format_t f;
  if (!format_of(t, &f)) return NAN;
  return float_format_decode(&f, bits);
}

uint16_t hlo_float_to_f16_bits(double value) {
  uint64_t b = 0;
  hlo_float_encode(HLO_F16, value, &b);
  return (uint16_t)b;
}
uint16_t hlo_float_to_bf16_bits(double value) {
  uint64_t b = 0;
  hlo_float_encode(HLO_BF16, value, &b);
  return (uint16_t)b;
}
double hlo_f16_bits_to_double(uint16_t bits) { return hlo_float_decode(HLO_F16, bits); }
double hlo_bf16_bits_to_double(uint16_t bits) { return hlo_float_decode(HLO_BF16, bits); }

uint64_t hlo_splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform double in [-1, 1) from 53 random bits. */
static double random_unit(uint64_t *state) {
  return (double)(hlo_splitmix64(state) >> 11) * 0x1.0p-52 - 1.0;
}

static void store_bits(void *dst, size_t size, uint64_t bits) {
  /* Host is little-endian: the low |size| bytes of |bits|. */
  uint8_t bytes[8];
  for (int i = 0; i < 8; i++) bytes[i] = (uint8_t)(bits >> (8 * i));
  memcpy(dst, bytes, size);
}

void hlo_fill_random(hlo_element_type_t t, void *dst, int64_t count, uint64_t *state) {
  size_t size = hlo_element_type_size_bytes(t);
  uint8_t *out = dst;
  if (size == 0) return;
  for (int64_t i = 0; i < count; i++, out += size) {
    uint64_t bits = 0;
    if (hlo_element_type_is_float(t)) {
      hlo_float_encode(t, random_unit(state), &bits);
      store_bits(out, size, bits);
    } else if (hlo_element_type_is_complex(t)) {
      hlo_element_type_t part = hlo_element_type_real(t);
      hlo_float_encode(part, random_unit(state), &bits);
      store_bits(out, size / 2, bits);
      hlo_float_encode(part, random_unit(state), &bits);
      store_bits(out + size / 2, size / 2, bits);
    } else if (t == HLO_PRED) {
      *out = (uint8_t)(hlo_splitmix64(state) & 1);
    } else if (hlo_element_type_is_signed_int(t)) {
      int64_t v = (int64_t)(hlo_splitmix64(state) % 7) - 3;
      if (hlo_element_type_bit_width(t) == 2 && v < -2) v = -2;
      if (hlo_element_type_bit_width(t) == 2 && v > 1) v = 1;
      store_bits(out, size, (uint64_t)v);
    } else if (hlo_element_type_is_unsigned_int(t)) {
      store_bits(out, size, hlo_splitmix64(state) % 4);
    }
  }
}

bool hlo_constant_is_splat(const hlo_instruction_t *in) {
  if (in->opcode != HLO_OPCODE_CONSTANT || hlo_shape_is_tuple(&in->shape) || in->shape.element_type == HLO_TOKEN ||
      !in->literal || !in->literal->data)
    return false;
  int64_t n = hlo_shape_element_count(&in->shape);
  if (n < 1 || in->literal->size_bytes % (size_t)n != 0) return false;
  size_t w = in->literal->size_bytes / (size_t)n;
  const unsigned char *b = in->literal->data;
  /* every element equals the next one: one memcmp of the data against
   * itself shifted by an element, not one call per element */
  return w > 0 && memcmp(b, b + w, (size_t)(n - 1) * w) == 0;
}
