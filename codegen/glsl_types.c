/*
 * Element type -> GLSL type, load, store, normalization and literals.
 *
 * The table below is the single place that decides how an element type is
 * stored and computed.  Storage always equals the host representation, so
 * buffers are copied to and from the device without conversion:
 *   i1        uint8_t 0/1           -> bool
 *   i2/i4/i8  int8_t (sign-extended) -> int, sign-extended after each op
 *   ui2..ui8  uint8_t               -> uint, masked after each op
 *   i16/ui16  int16_t/uint16_t      -> int/uint, wrapped after each op
 *   i32/ui32  int/uint, i64/ui64 int64_t/uint64_t (no conversion)
 *   f16       float16_t             -> float, rounded to f16 after each op
 *   bf16      uint16_t (raw bits)   -> float, rounded to bf16 after each op
 *   f32/f64   float/double
 *   complex<f32>/complex<f64>  vec2/dvec2 (real, imaginary)
 * f8 and the other small float types are not implemented.
 */
#include "codegen/glsl_types.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "hlo/literal.h"
#include "support/status.h"

bool glsl_type_lookup(hlo_element_type_t t, glsl_type_t *out) {
  const unsigned s8 = GLSL_FEATURE_STORAGE8, s16 = GLSL_FEATURE_STORAGE16;
  const unsigned hi = GLSL_HELPERS_INT, hu = GLSL_HELPERS_UINT, hf = GLSL_HELPERS_FLOAT;
  glsl_type_t r;
  switch (t) {
    case HLO_PRED: r = (glsl_type_t){"bool", "uint8_t", 1, 'P', s8}; break;
    case HLO_S2: r = (glsl_type_t){"int", "int8_t", 2, 'S', s8 | hi}; break;
    case HLO_S4: r = (glsl_type_t){"int", "int8_t", 4, 'S', s8 | hi}; break;
    case HLO_S8: r = (glsl_type_t){"int", "int8_t", 8, 'S', s8 | hi}; break;
    case HLO_S16: r = (glsl_type_t){"int", "int16_t", 16, 'S', s16 | hi}; break;
    case HLO_S32: r = (glsl_type_t){"int", "int", 32, 'S', hi}; break;
    case HLO_S64:
      r = (glsl_type_t){"int64_t", "int64_t", 64, 'S', GLSL_FEATURE_INT64 | GLSL_HELPERS_INT64};
      break;
    case HLO_U2: r = (glsl_type_t){"uint", "uint8_t", 2, 'U', s8 | hu}; break;
    case HLO_U4: r = (glsl_type_t){"uint", "uint8_t", 4, 'U', s8 | hu}; break;
    case HLO_U8: r = (glsl_type_t){"uint", "uint8_t", 8, 'U', s8 | hu}; break;
    case HLO_U16: r = (glsl_type_t){"uint", "uint16_t", 16, 'U', s16 | hu}; break;
    case HLO_U32: r = (glsl_type_t){"uint", "uint", 32, 'U', hu}; break;
    case HLO_U64:
      r = (glsl_type_t){"uint64_t", "uint64_t", 64, 'U', GLSL_FEATURE_INT64 | GLSL_HELPERS_UINT64};
      break;
    case HLO_F16: r = (glsl_type_t){"float", "float16_t", 16, 'F', s16 | hf}; break;
    case HLO_BF16: r = (glsl_type_t){"float", "uint16_t", 16, 'F', s16 | hf}; break;
    case HLO_F4E2M1FN: case HLO_F6E2M3FN: case HLO_F6E3M2FN: case HLO_F8E3M4: case HLO_F8E4M3:
    case HLO_F8E4M3FN: case HLO_F8E4M3FNUZ: case HLO_F8E4M3B11FNUZ: case HLO_F8E5M2:
    case HLO_F8E5M2FNUZ: case HLO_F8E8M0FNU: /* raw bits in a byte; computed as float */
      r = (glsl_type_t){"float", "uint8_t", hlo_element_type_bit_width(t), 'F', s8 | hf};
      break;
    case HLO_F32: r = (glsl_type_t){"float", "float", 32, 'F', hf}; break;
    case HLO_F64:
      r = (glsl_type_t){"double", "double", 64, 'F', GLSL_FEATURE_FLOAT64 | GLSL_HELPERS_DOUBLE};
      break;
    case HLO_C64: r = (glsl_type_t){"vec2", "vec2", 64, 'C', hf | GLSL_HELPERS_COMPLEX}; break;
    case HLO_C128:
      r = (glsl_type_t){"dvec2", "dvec2", 128, 'C',
                        GLSL_FEATURE_FLOAT64 | GLSL_HELPERS_DOUBLE | GLSL_HELPERS_DCOMPLEX};
      break;
    default: return false;
  }
  *out = r;
  return true;
}

vkhlo_status_t glsl_type_check(const codegen_target_t *target, hlo_element_type_t t,
                               hlo_location_t loc) {
  glsl_type_t g;
  const char *file = loc.file ? loc.file : "<input>";
  if (!glsl_type_lookup_on(target, t, &g))
    return VKHLO_UNIMPLEMENTED("%s:%d:%d: unsupported element type %s", file, loc.line, loc.col,
                               hlo_element_type_name(t));
  const char *missing = NULL;
  if ((g.features & GLSL_FEATURE_INT64) && !target->shader_int64) missing = "shaderInt64";
  if ((g.features & GLSL_FEATURE_FLOAT64) && !target->shader_float64) missing = "shaderFloat64";
  if ((g.features & GLSL_FEATURE_STORAGE8) && !target->storage_buffer_8bit)
    missing = "storageBuffer8BitAccess";
  if ((g.features & GLSL_FEATURE_STORAGE16) && !target->storage_buffer_16bit)
    missing = "storageBuffer16BitAccess";
  if (missing)
    return VKHLO_UNIMPLEMENTED("%s:%d:%d: unsupported element type %s on this device (needs %s)%s",
                               file, loc.line, loc.col, hlo_element_type_name(t), missing,
                               (g.features & GLSL_FEATURE_FLOAT64) && !target->shader_float64
                                   ? "; set VKHLO_DEMOTE_F64=1 to compute f64 as f32"
                                   : "");
  return NULL;
}

const char *glsl_compute_type(hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup(t, &g) ? g.compute : "void";
}

const char *glsl_storage_type(hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup(t, &g) ? g.storage : "void";
}

bool glsl_small_float_args(hlo_element_type_t t, char *buf, size_t size) {
  /* exponent bits, mantissa bits, bias, style: the table of hlo/literal.c */
  static const struct {
    hlo_element_type_t t;
    int e, m, bias, style;
  } formats[] = {
      {HLO_F8E5M2, 5, 2, 15, 0},      {HLO_F8E4M3, 4, 3, 7, 0},
      {HLO_F8E3M4, 3, 4, 3, 0},       {HLO_F8E4M3FN, 4, 3, 7, 1},
      {HLO_F8E4M3FNUZ, 4, 3, 8, 2},   {HLO_F8E4M3B11FNUZ, 4, 3, 11, 2},
      {HLO_F8E5M2FNUZ, 5, 2, 16, 2},  {HLO_F4E2M1FN, 2, 1, 1, 3},
      {HLO_F6E2M3FN, 2, 3, 1, 3},     {HLO_F6E3M2FN, 3, 2, 3, 3},
      {HLO_F8E8M0FNU, 8, 0, 127, 4},
  };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
    if (formats[i].t != t) continue;
    if (buf && size)
      snprintf(buf, size, "%d, %d, %d, %d", formats[i].e, formats[i].m, formats[i].bias,
               formats[i].style);
    return true;
  }
  return false;
}

bool glsl_type_needs_normalize(hlo_element_type_t t) {
  switch (t) {
    case HLO_S2: case HLO_S4: case HLO_S8: case HLO_S16:
    case HLO_U2: case HLO_U4: case HLO_U8: case HLO_U16:
    case HLO_F16: case HLO_BF16:
      return true;
    default: return glsl_small_float_args(t, NULL, 0);
  }
}

void glsl_append_load(strbuf_t *sb, hlo_element_type_t t, const char *e) {
  switch (t) {
    case HLO_PRED: strbuf_printf(sb, "(uint(%s) != 0u)", e); break;
    case HLO_S2: case HLO_S4: case HLO_S8: case HLO_S16: strbuf_printf(sb, "int(%s)", e); break;
    case HLO_U2: case HLO_U4: case HLO_U8: case HLO_U16: strbuf_printf(sb, "uint(%s)", e); break;
    case HLO_F16: strbuf_printf(sb, "float(%s)", e); break;
    case HLO_BF16: strbuf_printf(sb, "uintBitsToFloat(uint(%s) << 16)", e); break;
    default: {
      char args[48];
      if (glsl_small_float_args(t, args, sizeof args))
        strbuf_printf(sb, "vk_small_decode(uint(%s), %s)", e, args);
      else strbuf_append(sb, e);
      break;
    }
  }
}

void glsl_append_store(strbuf_t *sb, hlo_element_type_t t, const char *v) {
  switch (t) {
    case HLO_PRED: strbuf_printf(sb, "uint8_t(%s ? 1u : 0u)", v); break;
    case HLO_S2: case HLO_S4: case HLO_S8: strbuf_printf(sb, "int8_t(%s)", v); break;
    case HLO_U2: case HLO_U4: case HLO_U8: strbuf_printf(sb, "uint8_t(%s)", v); break;
    case HLO_S16: strbuf_printf(sb, "int16_t(%s)", v); break;
    case HLO_U16: strbuf_printf(sb, "uint16_t(%s)", v); break;
    case HLO_F16: strbuf_printf(sb, "float16_t(%s)", v); break;
    case HLO_BF16: strbuf_printf(sb, "uint16_t(floatBitsToUint(%s) >> 16)", v); break;
    default: {
      char args[48];
      if (glsl_small_float_args(t, args, sizeof args))
        strbuf_printf(sb, "uint8_t(vk_small_encode(%s, %s))", v, args);
      else strbuf_append(sb, v);
      break;
    }
  }
}

void glsl_append_normalized(strbuf_t *sb, hlo_element_type_t t, const char *e) {
  int bits = hlo_element_type_bit_width(t);
  switch (t) {
    case HLO_S2: case HLO_S4: case HLO_S8: case HLO_S16:
      strbuf_printf(sb, "bitfieldExtract(int(%s), 0, %d)", e, bits);
      break;
    case HLO_U2: case HLO_U4: case HLO_U8: case HLO_U16:
      strbuf_printf(sb, "bitfieldExtract(uint(%s), 0, %d)", e, bits);
      break;
    case HLO_F16: strbuf_printf(sb, "vk_round_f16(%s)", e); break;
    case HLO_BF16: strbuf_printf(sb, "vk_round_bf16(%s)", e); break;
    default: {
      char args[48];
      if (glsl_small_float_args(t, args, sizeof args))
        strbuf_printf(sb, "vk_small_round(%s, %s)", e, args);
      else strbuf_append(sb, e);
      break;
    }
  }
}

static void append_float_bits(strbuf_t *sb, uint32_t bits) {
  strbuf_printf(sb, "uintBitsToFloat(0x%08" PRIx32 "u)", bits);
}

static void append_double_bits(strbuf_t *sb, uint64_t bits) {
  strbuf_printf(sb, "packDouble2x32(uvec2(0x%08" PRIx32 "u, 0x%08" PRIx32 "u))",
                (uint32_t)bits, (uint32_t)(bits >> 32));
}

/* A float literal for an f16 pattern, widened exactly to f32 bits. */
static uint32_t half_to_float_bits(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31u, man = h & 0x3FFu;
  if (exp == 31) return sign | 0x7F800000u | (man << 13);
  if (exp == 0) {
    if (man == 0) return sign;
    int e = -1;
    do {
      man <<= 1;
      e++;
    } while (!(man & 0x400u));
    return sign | ((uint32_t)(127 - 15 - e) << 23) | ((man & 0x3FFu) << 13);
  }
  return sign | ((exp + 112u) << 23) | (man << 13);
}

void glsl_append_literal(strbuf_t *sb, hlo_element_type_t t, const void *bytes) {
  const unsigned char *p = bytes;
  switch (t) {
    case HLO_PRED: strbuf_append(sb, p[0] ? "true" : "false"); break;
    case HLO_S2: case HLO_S4: case HLO_S8: strbuf_printf(sb, "%d", (int)(int8_t)p[0]); break;
    case HLO_U2: case HLO_U4: case HLO_U8: strbuf_printf(sb, "%uu", (unsigned)p[0]); break;
    case HLO_S16: {
      int16_t v;
      memcpy(&v, p, 2);
      strbuf_printf(sb, "%d", (int)v);
      break;
    }
    case HLO_U16: {
      uint16_t v;
      memcpy(&v, p, 2);
      strbuf_printf(sb, "%uu", (unsigned)v);
      break;
    }
    case HLO_S32: {
      int32_t v;
      memcpy(&v, p, 4);
      if (v == INT32_MIN) strbuf_append(sb, "(-2147483647 - 1)");
      else strbuf_printf(sb, "%" PRId32, v);
      break;
    }
    case HLO_U32: {
      uint32_t v;
      memcpy(&v, p, 4);
      strbuf_printf(sb, "%" PRIu32 "u", v);
      break;
    }
    case HLO_S64: {
      int64_t v;
      memcpy(&v, p, 8);
      if (v == INT64_MIN) strbuf_append(sb, "(-9223372036854775807l - 1l)");
      else strbuf_printf(sb, "%" PRId64 "l", v);
      break;
    }
    case HLO_U64: {
      uint64_t v;
      memcpy(&v, p, 8);
      strbuf_printf(sb, "%" PRIu64 "ul", v);
      break;
    }
    case HLO_F16: {
      uint16_t h;
      memcpy(&h, p, 2);
      append_float_bits(sb, half_to_float_bits(h));
      break;
    }
    case HLO_BF16: {
      uint16_t h;
      memcpy(&h, p, 2);
      append_float_bits(sb, (uint32_t)h << 16);
      break;
    }
    case HLO_F32: {
      uint32_t v;
      memcpy(&v, p, 4);
      append_float_bits(sb, v);
      break;
    }
    case HLO_F64: {
      uint64_t v;
      memcpy(&v, p, 8);
      append_double_bits(sb, v);
      break;
    }
    case HLO_C64: {
      uint32_t re, im;
      memcpy(&re, p, 4);
      memcpy(&im, p + 4, 4);
      strbuf_append(sb, "vec2(");
      append_float_bits(sb, re);
      strbuf_append(sb, ", ");
      append_float_bits(sb, im);
      strbuf_append(sb, ")");
      break;
    }
    case HLO_C128: {
      uint64_t re, im;
      memcpy(&re, p, 8);
      memcpy(&im, p + 8, 8);
      strbuf_append(sb, "dvec2(");
      append_double_bits(sb, re);
      strbuf_append(sb, ", ");
      append_double_bits(sb, im);
      strbuf_append(sb, ")");
      break;
    }
    default:
      if (glsl_small_float_args(t, NULL, 0)) { /* every small float value is an f32 value */
        float f = (float)hlo_float_decode(t, p[0]);
        uint32_t bits;
        memcpy(&bits, &f, 4);
        append_float_bits(sb, bits);
      } else {
        strbuf_append(sb, "0");
      }
      break;
  }
}

void glsl_append_int_constant(strbuf_t *sb, hlo_element_type_t t, long long v) {
  switch (t) {
    case HLO_PRED: strbuf_append(sb, v ? "true" : "false"); break;
    case HLO_C64: strbuf_printf(sb, "vec2(%lld.0, 0.0)", v); break;
    case HLO_C128: strbuf_printf(sb, "dvec2(%lld.0lf, 0.0lf)", v); break;
    case HLO_F64: strbuf_printf(sb, "%lld.0lf", v); break;
    case HLO_F16: case HLO_BF16: case HLO_F32: strbuf_printf(sb, "%lld.0", v); break;
    case HLO_F4E2M1FN: case HLO_F6E2M3FN: case HLO_F6E3M2FN: case HLO_F8E3M4: case HLO_F8E4M3:
    case HLO_F8E4M3FN: case HLO_F8E4M3FNUZ: case HLO_F8E4M3B11FNUZ: case HLO_F8E5M2:
    case HLO_F8E5M2FNUZ: case HLO_F8E8M0FNU:
      strbuf_printf(sb, "%lld.0", v);
      break;
    case HLO_S64: strbuf_printf(sb, "%lldl", v); break;
    case HLO_U64: strbuf_printf(sb, "uint64_t(%lldl)", v); break;
    case HLO_U2: case HLO_U4: case HLO_U8: case HLO_U16: case HLO_U32:
      strbuf_printf(sb, "uint(%lld)", v);
      break;
    default: strbuf_printf(sb, "%lld", v); break;
  }
}

/* ------------------------------------------------- emulated forms */

bool glsl_type_is_emulated64(const codegen_target_t *target, hlo_element_type_t t) {
  return (t == HLO_S64 || t == HLO_U64) && !target->shader_int64;
}

bool glsl_type_is_demoted(const codegen_target_t *target, hlo_element_type_t t) {
  return (t == HLO_F64 || t == HLO_C128) && !target->shader_float64 && target->demote_f64;
}

bool glsl_type_is_packed(const codegen_target_t *target, hlo_element_type_t t) {
  glsl_type_t g;
  if (!glsl_type_lookup(t, &g)) return false;
  return ((g.features & GLSL_FEATURE_STORAGE8) && !target->storage_buffer_8bit) ||
         ((g.features & GLSL_FEATURE_STORAGE16) && !target->storage_buffer_16bit) ||
         (t == HLO_F16 && target->f16_soft_conversions);
}

bool glsl_type_lookup_on(const codegen_target_t *target, hlo_element_type_t t, glsl_type_t *out) {
  if (!glsl_type_lookup(t, out)) return false;
  if (glsl_type_is_emulated64(target, t)) {
    out->compute = out->storage = "uvec2";
    out->features = GLSL_HELPERS_EMU64;
  } else if (glsl_type_is_packed(target, t)) {
    out->storage = "uint";
    out->features = (out->features & ~(GLSL_FEATURE_STORAGE8 | GLSL_FEATURE_STORAGE16)) |
                    GLSL_HELPERS_PACKED;
    if (t == HLO_F16 && target->f16_soft_conversions) out->features |= GLSL_FEATURE_F16_SOFT;
  } else if (glsl_type_is_demoted(target, t)) {
    if (t == HLO_F64) *out = (glsl_type_t){"float", "uvec2", 32, 'F',
                                           GLSL_HELPERS_FLOAT | GLSL_HELPERS_F64SOFT};
    else *out = (glsl_type_t){"vec2", "uvec4", 64, 'C',
                              GLSL_HELPERS_FLOAT | GLSL_HELPERS_COMPLEX | GLSL_HELPERS_F64SOFT};
  }
  /* complex products round once (vk_cmul's vk_fma): through double where
   * the device may split fma (lavapipe does) */
  if (t == HLO_C64 && target->is_cpu && target->shader_float64)
    out->features |= GLSL_FEATURE_FMA_DOUBLE | GLSL_FEATURE_FLOAT64;
  return true;
}

const char *glsl_compute_type_on(const codegen_target_t *target, hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup_on(target, t, &g) ? g.compute : "void";
}

const char *glsl_buffer_type_on(const codegen_target_t *target, hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup_on(target, t, &g) ? g.storage : "void";
}

void glsl_append_load_element(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                              const char *buffer, const char *index) {
  if (glsl_type_is_packed(target, t)) {
    int bytes = (int)hlo_element_type_size_bytes(t);
    const char *u = bytes == 1 ? "VK_LOAD_U8" : "VK_LOAD_U16";
    const char *s = bytes == 1 ? "VK_LOAD_S8" : "VK_LOAD_S16";
    switch (t) {
      case HLO_PRED: strbuf_printf(sb, "(%s(%s, %s) != 0u)", u, buffer, index); break;
      case HLO_F16: strbuf_printf(sb, "unpackHalf2x16(%s(%s, %s)).x", u, buffer, index); break;
      case HLO_BF16: strbuf_printf(sb, "uintBitsToFloat(%s(%s, %s) << 16)", u, buffer, index); break;
      default: {
        char args[48];
        if (glsl_small_float_args(t, args, sizeof args))
          strbuf_printf(sb, "vk_small_decode(%s(%s, %s), %s)", u, buffer, index, args);
        else
          strbuf_printf(sb, "%s(%s, %s)", hlo_element_type_is_signed_int(t) ? s : u, buffer, index);
        break;
      }
    }
    return;
  }
  if (glsl_type_is_demoted(target, t)) {
    if (t == HLO_F64) strbuf_printf(sb, "vk_f64_to_f32(%s.data[%s])", buffer, index);
    else strbuf_printf(sb, "vk_c128_to_c64(%s.data[%s])", buffer, index);
    return;
  }
  strbuf_t ref;
  strbuf_init(&ref, sb->allocator);
  strbuf_printf(&ref, "%s.data[%s]", buffer, index);
  if (ref.failed) sb->failed = true;
  else if (glsl_type_is_emulated64(target, t)) strbuf_append(sb, ref.data);
  else glsl_append_load(sb, t, ref.data);
  strbuf_free(&ref);
}

void glsl_append_store_element(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                               const char *buffer, const char *index, const char *value) {
  if (glsl_type_is_packed(target, t)) {
    const char *store = hlo_element_type_size_bytes(t) == 1 ? "VK_STORE_8" : "VK_STORE_16";
    switch (t) {
      case HLO_PRED: strbuf_printf(sb, "%s(%s, %s, (%s ? 1u : 0u));", store, buffer, index, value); break;
      case HLO_F16:
        strbuf_printf(sb, "%s(%s, %s, packHalf2x16(vec2(%s, 0.0)));", store, buffer, index, value);
        break;
      case HLO_BF16:
        strbuf_printf(sb, "%s(%s, %s, floatBitsToUint(%s) >> 16);", store, buffer, index, value);
        break;
      default: {
        char args[48];
        if (glsl_small_float_args(t, args, sizeof args))
          strbuf_printf(sb, "%s(%s, %s, vk_small_encode(%s, %s));", store, buffer, index, value, args);
        else strbuf_printf(sb, "%s(%s, %s, uint(%s));", store, buffer, index, value);
        break;
      }
    }
    return;
  }
  if (glsl_type_is_demoted(target, t)) {
    strbuf_printf(sb, "%s.data[%s] = %s(%s);", buffer, index,
                  t == HLO_F64 ? "vk_f32_to_f64" : "vk_c64_to_c128", value);
    return;
  }
  strbuf_printf(sb, "%s.data[%s] = ", buffer, index);
  if (glsl_type_is_emulated64(target, t)) strbuf_append(sb, value);
  else glsl_append_store(sb, t, value);
  strbuf_append(sb, ";");
}

/* f64 -> f32 on the host, rounding to nearest even (for demoted literals). */
static uint32_t demote_bits(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  float f = (float)d;
  uint32_t r;
  memcpy(&r, &f, 4);
  return r;
}

void glsl_append_literal_on(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                            const void *bytes) {
  const unsigned char *p = bytes;
  if (glsl_type_is_emulated64(target, t)) {
    uint32_t lo, hi;
    memcpy(&lo, p, 4);
    memcpy(&hi, p + 4, 4);
    strbuf_printf(sb, "uvec2(0x%08" PRIx32 "u, 0x%08" PRIx32 "u)", lo, hi);
  } else if (glsl_type_is_demoted(target, t)) {
    uint64_t re, im;
    memcpy(&re, p, 8);
    if (t == HLO_F64) {
      append_float_bits(sb, demote_bits(re));
      return;
    }
    memcpy(&im, p + 8, 8);
    strbuf_append(sb, "vec2(");
    append_float_bits(sb, demote_bits(re));
    strbuf_append(sb, ", ");
    append_float_bits(sb, demote_bits(im));
    strbuf_append(sb, ")");
  } else {
    glsl_append_literal(sb, t, bytes);
  }
}

void glsl_append_int_constant_on(strbuf_t *sb, const codegen_target_t *target,
                                 hlo_element_type_t t, long long v) {
  if (glsl_type_is_emulated64(target, t)) {
    uint64_t u = (uint64_t)v;
    strbuf_printf(sb, "uvec2(%uu, %uu)", (unsigned)(uint32_t)u, (unsigned)(uint32_t)(u >> 32));
  } else if (glsl_type_is_demoted(target, t)) {
    if (t == HLO_F64) strbuf_printf(sb, "%lld.0", v);
    else strbuf_printf(sb, "vec2(%lld.0, 0.0)", v);
  } else {
    glsl_append_int_constant(sb, t, v);
  }
}
