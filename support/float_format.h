/*
 * Bit patterns of the small float types (f16, bf16, f8/f6/f4), described
 * by four numbers: exponent bits, mantissa bits, exponent bias, and a
 * "style" saying how the type spends its all-ones exponent:
 *   IEEE  (f16, bf16, f8E5M2, f8E4M3, f8E3M4, f32): all-ones exponent is
 *         infinity (mantissa 0) or NaN.
 *   FN    (f8E4M3FN): no infinity; only all-ones exponent *and* mantissa is
 *         NaN, so the top binade is usable except its last value.
 *   FNUZ  (f8E4M3FNUZ, f8E4M3B11FNUZ, f8E5M2FNUZ): no infinity, no negative
 *         zero; the pattern 0x80 (sign bit alone) is the one NaN.
 *   NONE  (f4E2M1FN, f6E2M3FN, f6E3M2FN): neither NaN nor infinity.
 *   E8M0  (f8E8M0FNU): no sign, no mantissa; 0xFF is NaN.
 * Which element type has which format: hlo/float_formats.def.  Shared by
 * the compiler (hlo/literal.c) and the runtime (api/element.c), so it
 * lives here, free of the IR.
 */
#ifndef VKHLO_SUPPORT_FLOAT_FORMAT_H
#define VKHLO_SUPPORT_FLOAT_FORMAT_H

#include <stdint.h>

typedef enum {
  FLOAT_STYLE_IEEE,
  FLOAT_STYLE_FN,
  FLOAT_STYLE_FNUZ,
  FLOAT_STYLE_NONE,
  FLOAT_STYLE_E8M0
} float_style_t;

typedef struct {
  int exponent_bits, mantissa_bits, bias;
  float_style_t style;
} float_format_t;

/* The bit pattern of |v| in format |f| (low bits), rounded to nearest,
 * ties to even; out-of-range values as hlo/literal.h describes. */
uint64_t float_format_encode(const float_format_t *f, double v);
/* The value of bit pattern |bits| (low bits used) in format |f|. */
double float_format_decode(const float_format_t *f, uint64_t bits);

#endif
