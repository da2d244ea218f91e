/*
 * Reading single elements of host tensors (for checks and printing), and
 * vkhlo_tensor_format.
 */
#define _POSIX_C_SOURCE 200809L
#include "api/internal.h"
#include "support/float_format.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double half_to_double(uint16_t h) {
  int sign = h >> 15, exp = (h >> 10) & 0x1f, man = h & 0x3ff;
  double v;
  if (exp == 0) v = ldexp(man, -24);
  else if (exp == 31) v = man ? NAN : INFINITY;
  else v = ldexp(man + 1024, exp - 25);
  return sign ? -v : v;
}

static double bf16_to_double(uint16_t b) {
  uint32_t bits = (uint32_t)b << 16;
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

/* The value of a small float's bit pattern (hlo/float_formats.def), NaN
 * for other types. */
static double small_float_value(vkhlo_element_type_t t, uint64_t bits) {
  static const struct {
    vkhlo_element_type_t type;
    float_format_t format;
  } formats[] = {
#define X(e, exponent_bits, mantissa_bits, bias, style) \
  {VKHLO_##e, {exponent_bits, mantissa_bits, bias, FLOAT_STYLE_##style}},
#include "hlo/float_formats.def"
#undef X
  };
  for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++)
    if (formats[i].type == t) return float_format_decode(&formats[i].format, bits);
  return NAN;
}

/* Element |i| (component |part| for complex) as a double; *out_ordered is
 * a monotonic integer image of the float for ULP distances. */
double exe_element_value(const void *data, vkhlo_element_type_t t, int64_t i, int part,
                      int64_t *out_ordered) {
  const unsigned char *p = data;
  *out_ordered = 0;
  switch ((int)t) {
    case VKHLO_PRED: return p[i] != 0;
    case VKHLO_S2: case VKHLO_S4: case VKHLO_S8: return (int8_t)p[i];
    case VKHLO_U2: case VKHLO_U4: case VKHLO_U8: return p[i];
    case VKHLO_S16: { int16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case VKHLO_U16: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
    case VKHLO_S32: { int32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case VKHLO_U32: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
    case VKHLO_S64: { int64_t v; memcpy(&v, p + 8 * i, 8); *out_ordered = v; return (double)v; }
    case VKHLO_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); *out_ordered = (int64_t)v; return (double)v; }
    case VKHLO_F16: case VKHLO_BF16: {
      uint16_t v;
      memcpy(&v, p + 2 * i, 2);
      *out_ordered = (v & 0x8000) ? -(int64_t)(v & 0x7fff) : (int64_t)v;
      return t == VKHLO_F16 ? half_to_double(v) : bf16_to_double(v);
    }
    case VKHLO_F32: case VKHLO_C64: {
      uint32_t bits;
      memcpy(&bits, p + 4 * (t == VKHLO_C64 ? 2 * i + part : i), 4);
      float f;
      memcpy(&f, &bits, 4);
      *out_ordered = (bits & 0x80000000u) ? -(int64_t)(bits & 0x7fffffffu) : (int64_t)bits;
      return f;
    }
    case VKHLO_F64: case VKHLO_C128: {
      uint64_t bits;
      memcpy(&bits, p + 8 * (t == VKHLO_C128 ? 2 * i + part : i), 8);
      double d;
      memcpy(&d, &bits, 8);
      *out_ordered = (bits >> 63) ? -(int64_t)(bits & 0x7fffffffffffffffull) : (int64_t)bits;
      return d;
    }
    default: { /* f8/f6/f4 types: one byte, decoded exactly */
      double v = small_float_value(t, p[i]);
      *out_ordered = p[i];
      return v;
    }
  }
}


static void format_element(FILE *f, const void *data, vkhlo_element_type_t t, int64_t i) {
  const unsigned char *p = data;
  int64_t ordered;
  switch ((int)t) {
    case VKHLO_PRED: fputs(p[i] ? "true" : "false", f); return;
    case VKHLO_S64: { int64_t v; memcpy(&v, p + 8 * i, 8); fprintf(f, "%" PRId64, v); return; }
    case VKHLO_U64: { uint64_t v; memcpy(&v, p + 8 * i, 8); fprintf(f, "%" PRIu64, v); return; }
    case VKHLO_C64: case VKHLO_C128: {
      double re = exe_element_value(data, t, i, 0, &ordered), im = exe_element_value(data, t, i, 1, &ordered);
      fprintf(f, t == VKHLO_C64 ? "(%.9g, %.9g)" : "(%.17g, %.17g)", re, im);
      return;
    }
    case VKHLO_F64: fprintf(f, "%.17g", exe_element_value(data, t, i, 0, &ordered)); return;
    default: break;
  }
  double v = exe_element_value(data, t, i, 0, &ordered);
  if (t >= VKHLO_F4E2M1FN && t <= VKHLO_F32) fprintf(f, "%.9g", v);
  else fprintf(f, "%.0f", v);
}

static void format_dim(FILE *f, const vkhlo_tensor_type_t *type, const void *data, int dim,
                       int64_t *linear, int64_t *printed, int64_t max_elements) {
  if (dim == type->rank) {
    if (*printed < max_elements) format_element(f, data, type->element_type, *linear);
    (*printed)++;
    (*linear)++;
    return;
  }
  fputc('[', f);
  for (int64_t i = 0; i < type->dimensions[dim]; i++) {
    if (i) fputs(dim + 1 == type->rank ? ", " : ",\n ", f);
    if (*printed >= max_elements) {
      fputs("...", f);
      int64_t skip = 1;
      for (int d = dim + 1; d < type->rank; d++) skip *= type->dimensions[d];
      *linear += skip * (type->dimensions[dim] - i);
      *printed += skip * (type->dimensions[dim] - i);
      break;
    }
    format_dim(f, type, data, dim + 1, linear, printed, max_elements);
  }
  fputc(']', f);
}

vkhlo_status_t vkhlo_tensor_format(const vkhlo_tensor_type_t *type, const void *data,
                                   int64_t max_elements, char **out_text) {
  *out_text = NULL;
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  if (!f) return VKHLO_NO_MEMORY();
  fputs("tensor<", f);
  for (int i = 0; i < type->rank; i++) fprintf(f, "%" PRId64 "x", type->dimensions[i]);
  fprintf(f, "%s>\n", vkhlo_element_type_name(type->element_type));
  int64_t linear = 0, printed = 0;
  if (max_elements < 0) max_elements = INT64_MAX;
  format_dim(f, type, data, 0, &linear, &printed, max_elements);
  fputc('\n', f);
  if (fclose(f) != 0) {
    free(text);
    return VKHLO_NO_MEMORY();
  }
  *out_text = text;
  return NULL;
}
