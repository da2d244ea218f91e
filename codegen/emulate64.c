/*
 * 64-bit integers without shaderInt64.
 *
 * On such a device an i64/ui64 value lives in a uvec2 (x = low word, y =
 * high word, two's complement), which is also the host's little-endian
 * layout, so buffers of 64-bit integers are `uvec2 data[]` and load and
 * store need no conversion.  GLSL's vector operators already do the right
 * thing for ==, !=, &, |, ^, ~ and ?:, so those stay operators; everything
 * else becomes a call to a helper of the EMU64 prelude block
 * (glsl_prelude.c): i64_add/sub/mul/neg, signed and unsigned
 * div/rem/min/max/lt/pow (x / 0 = -1, INT64_MIN / -1 = INT64_MIN,
 * x % 0 = x, like XLA), shifts with XLA's out-of-range rules (any amount
 * >= 64, or negative, gives 0, or the sign fill for an arithmetic right
 * shift), count_leading_zeros, popcnt, and the conversions: f32 -> i64
 * truncates and saturates (NaN -> 0), i64 -> f32 rounds to nearest even
 * (one rounding, through a sticky bit).
 *
 * Invariants: the emitted code has the same semantics as the native
 * int64_t code in elemental.c for every op this file accepts; an op it does
 * not know returns UNIMPLEMENTED rather than approximate code.  Index
 * operands (gather, scatter, dynamic_slice) are clamped while still 64-bit,
 * so a large value can never wrap into range.
 *
 * Not here: double <-> i64 on a device that has shaderFloat64 but not
 * shaderInt64 goes through float (lavapipe's restricted mode has neither).
 */
#include "codegen/emulate64.h"

#include <stdio.h>
#include <string.h>

#include "support/status.h"

static bool emu(const elemental_emitter_t *E, hlo_element_type_t t) {
  return glsl_type_is_emulated64(E->target, t);
}

static char kind_of(hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup(t, &g) ? g.kind : '?';
}

static vkhlo_status_t unsupported(const hlo_instruction_t *instr, hlo_element_type_t t) {
  return el_unimplemented(instr, "unsupported element type %s for %s.%s (emulated 64-bit)",
                          hlo_element_type_name(t),
                          hlo_opcode_is_chlo(instr->opcode) ? "chlo" : "stablehlo",
                          hlo_opcode_name(instr->opcode));
}

bool emu64_involved(const elemental_emitter_t *E, const hlo_instruction_t *instr) {
  if (emu(E, instr->shape.element_type)) return true;
  for (int k = 0; k < instr->operand_count; k++)
    if (emu(E, instr->operands[k]->shape.element_type)) return true;
  return false;
}

static void use_emu(elemental_emitter_t *E) { E->features |= GLSL_HELPERS_EMU64; }

/* ------------------------------------------------------- conversions */

void emu64_convert(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t from,
                   hlo_element_type_t to, const char *v, el_name_t *out) {
  use_emu(E);
  el_use_type(E, from);
  char fk = kind_of(from), tk = kind_of(to);
  bool to_emu = emu(E, to), from_emu = emu(E, from);
  if (from == to || (to_emu && from_emu)) { /* i64 <-> ui64 keeps the bits */
    el_def(E, instr, to, false, out, "%s", v);
    return;
  }
  if (fk == 'C') { /* complex -> real part -> |to| */
    el_name_t re;
    hlo_element_type_t part = hlo_element_type_real(from);
    el_def(E, instr, part, false, &re, "%s.x", v);
    emu64_convert(E, instr, part, to, re.s, out);
    return;
  }
  if (to_emu) {
    bool s = tk == 'S';
    if (fk == 'P') el_def(E, instr, to, false, out, "(%s ? uvec2(1u, 0u) : uvec2(0u))", v);
    else if (fk == 'S') el_def(E, instr, to, false, out, "i64_from_int(int(%s))", v);
    else if (fk == 'U') el_def(E, instr, to, false, out, "uvec2(uint(%s), 0u)", v);
    else if (from == HLO_F64 && !glsl_type_is_demoted(E->target, from))
      el_def(E, instr, to, false, out, "%s(float(%s))", s ? "i64_from_float" : "u64_from_float", v);
    else el_def(E, instr, to, false, out, "%s(%s)", s ? "i64_from_float" : "u64_from_float", v);
    return;
  }
  /* from an emulated integer */
  bool s = fk == 'S';
  if (tk == 'P') {
    el_def(E, instr, to, false, out, "(%s != uvec2(0u))", v);
  } else if (tk == 'S') {
    el_def(E, instr, to, true, out, "int(%s.x)", v);
  } else if (tk == 'U') {
    el_def(E, instr, to, true, out, "%s.x", v);
  } else if (tk == 'F') {
    if (to == HLO_F64 && !glsl_type_is_demoted(E->target, to))
      el_def(E, instr, to, false, out, "(double(%s(%s.y)) * 4294967296.0lf + double(%s.x))",
             s ? "int" : "uint", v, v);
    else el_def(E, instr, to, true, out, "%s(%s)", s ? "i64_to_float" : "u64_to_float", v);
  } else if (tk == 'C') {
    el_name_t f;
    hlo_element_type_t part = hlo_element_type_real(to);
    emu64_convert(E, instr, from, part, v, &f);
    el_def(E, instr, to, false, out, "%s(%s, 0.0)", glsl_compute_type_on(E->target, to), f.s);
  } else {
    el_def(E, instr, to, false, out, "%s", v);
  }
}

void emu64_index(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                 const char *v, int lo, long long hi, el_name_t *out) {
  use_emu(E);
  el_fresh(E, "i", out);
  if (hi < 0) hi = 0;
  if (kind_of(t) == 'S')
    el_line(E, instr, "int %s = i64_is_neg(%s) ? %d : ((%s.y != 0u || %s.x > %lluu) ? %lld : int(%s.x));",
            out->s, v, lo, v, v, (unsigned long long)hi, hi, v);
  else
    el_line(E, instr, "int %s = (%s.y != 0u || %s.x > %lluu) ? %lld : int(%s.x);", out->s, v, v,
            (unsigned long long)hi, hi, v);
}

void emu64_mac(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *acc,
               const char *a, const char *b) {
  use_emu(E);
  el_line(E, instr, "%s = i64_add(%s, i64_mul(%s, %s));", acc, acc, a, b);
}

/* ------------------------------------------------------ elementwise */

static const char *cmp_call(hlo_comparison_direction_t d, bool is_signed, const char *a,
                            const char *b, char *buf, size_t n) {
  const char *lt = is_signed ? "i64_lt" : "u64_lt";
  switch (d) {
    case HLO_CMP_EQ: snprintf(buf, n, "(%s == %s)", a, b); break;
    case HLO_CMP_NE: snprintf(buf, n, "(%s != %s)", a, b); break;
    case HLO_CMP_LT: snprintf(buf, n, "%s(%s, %s)", lt, a, b); break;
    case HLO_CMP_GT: snprintf(buf, n, "%s(%s, %s)", lt, b, a); break;
    case HLO_CMP_LE: snprintf(buf, n, "!%s(%s, %s)", lt, b, a); break;
    case HLO_CMP_GE: snprintf(buf, n, "!%s(%s, %s)", lt, a, b); break;
  }
  return buf;
}

vkhlo_status_t emu64_elementwise(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 const el_name_t *v, el_name_t *out) {
  use_emu(E);
  hlo_element_type_t rt = instr->shape.element_type;
  hlo_element_type_t t = instr->operand_count ? instr->operands[0]->shape.element_type : rt;
  char k = kind_of(t);
  bool s = k == 'S';
  const char *a = v[0].s, *b = instr->operand_count > 1 ? v[1].s : "";
#define DEF(...) el_def(E, instr, rt, false, out, __VA_ARGS__)
  switch (instr->opcode) {
    case HLO_OPCODE_CONVERT: emu64_convert(E, instr, t, rt, a, out); return NULL;
    case HLO_OPCODE_SELECT: DEF("(%s ? %s : %s)", a, b, v[2].s); return NULL;
    case HLO_OPCODE_CLAMP: {
      hlo_element_type_t xt = instr->operands[1]->shape.element_type;
      if (!emu(E, xt)) return unsupported(instr, xt);
      const char *p = kind_of(xt) == 'S' ? "i64" : "u64";
      DEF("%s_min(%s_max(%s, %s), %s)", p, p, b, a, v[2].s);
      return NULL;
    }
    case HLO_OPCODE_COMPARE: {
      if (!emu(E, t)) return unsupported(instr, t);
      hlo_compare_type_t ct = instr->attrs.compare_type;
      bool sg = ct == HLO_CMP_TYPE_SIGNED || (ct != HLO_CMP_TYPE_UNSIGNED && s);
      char buf[EL_NAME_MAX * 3];
      DEF("%s", cmp_call(instr->attrs.comparison_direction, sg, a, b, buf, sizeof buf));
      return NULL;
    }
    case HLO_OPCODE_BITCAST_CONVERT:
      if (emu(E, t) && emu(E, rt)) DEF("%s", a);
      else if (rt == HLO_F64 && glsl_type_is_demoted(E->target, rt)) {
        E->features |= GLSL_HELPERS_F64SOFT;
        DEF("vk_f64_to_f32(%s)", a);
      } else if (t == HLO_F64 && glsl_type_is_demoted(E->target, t)) {
        E->features |= GLSL_HELPERS_F64SOFT;
        DEF("vk_f32_to_f64(%s)", a);
      } else if (rt == HLO_F64) DEF("packDouble2x32(%s)", a);
      else if (t == HLO_F64) DEF("unpackDouble2x32(%s)", a);
      else return unsupported(instr, rt);
      return NULL;
    default: break;
  }
  /* the rest take and give the emulated type itself */
  if (!emu(E, t)) return unsupported(instr, t);
  if (k != 'S' && k != 'U') return unsupported(instr, t);
  const char *p = s ? "i64" : "u64";
  switch (instr->opcode) {
    case HLO_OPCODE_ABS:
      if (s) DEF("i64_abs(%s)", a);
      else DEF("%s", a);
      return NULL;
    case HLO_OPCODE_NEGATE: DEF("i64_neg(%s)", a); return NULL;
    case HLO_OPCODE_NOT: DEF("(~%s)", a); return NULL;
    case HLO_OPCODE_SIGN:
      if (s) DEF("i64_sign(%s)", a);
      else DEF("(%s != uvec2(0u) ? uvec2(1u, 0u) : uvec2(0u))", a);
      return NULL;
    case HLO_OPCODE_COUNT_LEADING_ZEROS: DEF("uvec2(uint(u64_clz(%s)), 0u)", a); return NULL;
    case HLO_OPCODE_POPCNT: DEF("uvec2(uint(u64_popcnt(%s)), 0u)", a); return NULL;
    case HLO_OPCODE_REAL: DEF("%s", a); return NULL;
    case HLO_OPCODE_ADD: DEF("i64_add(%s, %s)", a, b); return NULL;
    case HLO_OPCODE_SUBTRACT: DEF("i64_sub(%s, %s)", a, b); return NULL;
    case HLO_OPCODE_MULTIPLY: DEF("i64_mul(%s, %s)", a, b); return NULL;
    case HLO_OPCODE_DIVIDE: DEF("%s_div(%s, %s)", p, a, b); return NULL;
    case HLO_OPCODE_REMAINDER: DEF("%s_rem(%s, %s)", p, a, b); return NULL;
    case HLO_OPCODE_AND: DEF("(%s & %s)", a, b); return NULL;
    case HLO_OPCODE_OR: DEF("(%s | %s)", a, b); return NULL;
    case HLO_OPCODE_XOR: DEF("(%s ^ %s)", a, b); return NULL;
    case HLO_OPCODE_MAXIMUM: DEF("%s_max(%s, %s)", p, a, b); return NULL;
    case HLO_OPCODE_MINIMUM: DEF("%s_min(%s, %s)", p, a, b); return NULL;
    case HLO_OPCODE_POWER: DEF("%s_pow(%s, %s)", p, a, b); return NULL;
    case HLO_OPCODE_SHIFT_LEFT: DEF("u64_shl(%s, %s)", a, b); return NULL;
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL: DEF("u64_shrl(%s, %s)", a, b); return NULL;
    case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC: DEF("i64_shra(%s, %s)", a, b); return NULL;
    default: break;
  }
#undef DEF
  return unsupported(instr, t);
}

/* ------------------------------------------------- bitcast_convert */

bool emu64_bitcast_involved(const elemental_emitter_t *E, const hlo_instruction_t *instr) {
  hlo_element_type_t from = instr->operands[0]->shape.element_type, to = instr->shape.element_type;
  if (hlo_element_type_bit_width(from) == hlo_element_type_bit_width(to)) return false;
  /* the native code goes through uint64_t */
  return !E->target->shader_int64 || glsl_type_is_demoted(E->target, from) ||
         glsl_type_is_demoted(E->target, to);
}

/* The 64 bits of wide value |v| of type |t| as a uvec2 expression. */
static void wide_to_bits(elemental_emitter_t *E, strbuf_t *sb, hlo_element_type_t t, const char *v) {
  if (emu(E, t)) strbuf_append(sb, v);
  else if (glsl_type_is_demoted(E->target, t)) strbuf_printf(sb, "vk_f32_to_f64(%s)", v);
  else if (t == HLO_F64) strbuf_printf(sb, "unpackDouble2x32(%s)", v);
  else strbuf_printf(sb, "unpackUint2x32(uint64_t(%s))", v);
}

static void wide_from_bits(elemental_emitter_t *E, strbuf_t *sb, hlo_element_type_t t,
                           const char *b) {
  if (emu(E, t)) strbuf_append(sb, b);
  else if (glsl_type_is_demoted(E->target, t)) strbuf_printf(sb, "vk_f64_to_f32(%s)", b);
  else if (t == HLO_F64) strbuf_printf(sb, "packDouble2x32(%s)", b);
  else strbuf_printf(sb, "%s(packUint2x32(%s))", t == HLO_S64 ? "int64_t" : "uint64_t", b);
}

/* Bits (uint, low |w| bits) of narrow compute value |v| of type |t|. */
static void narrow_to_bits(strbuf_t *sb, hlo_element_type_t t, const char *v) {
  int w = hlo_element_type_bit_width(t);
  switch (t) {
    case HLO_F32: strbuf_printf(sb, "floatBitsToUint(%s)", v); break;
    case HLO_F16: strbuf_printf(sb, "(packHalf2x16(vec2(%s, 0.0)) & 0xFFFFu)", v); break;
    case HLO_BF16: strbuf_printf(sb, "(floatBitsToUint(%s) >> 16)", v); break;
    default:
      if (w == 32) strbuf_printf(sb, "uint(%s)", v);
      else strbuf_printf(sb, "(uint(%s) & 0x%xu)", v, (unsigned)((1u << w) - 1));
      break;
  }
}

static void narrow_from_bits(strbuf_t *sb, hlo_element_type_t t, const char *b) {
  int w = hlo_element_type_bit_width(t);
  switch (t) {
    case HLO_F32: strbuf_printf(sb, "uintBitsToFloat(%s)", b); break;
    case HLO_F16: strbuf_printf(sb, "unpackHalf2x16(%s).x", b); break;
    case HLO_BF16: strbuf_printf(sb, "uintBitsToFloat(%s << 16)", b); break;
    default:
      if (kind_of(t) == 'S') strbuf_printf(sb, "bitfieldExtract(int(%s), 0, %d)", b, w);
      else strbuf_printf(sb, "bitfieldExtract(%s, 0, %d)", b, w);
      break;
  }
}

vkhlo_status_t emu64_bitcast_convert(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  hlo_element_type_t from = os->element_type, to = instr->shape.element_type;
  int wf = hlo_element_type_bit_width(from), wt = hlo_element_type_bit_width(to);
  char fk = kind_of(from), tk = kind_of(to);
  if (fk == 'C' || tk == 'C' || fk == 'P' || tk == 'P' || (wf != 64 && wt != 64) ||
      (wf == 64 && wt > 32) || (wt == 64 && wf > 32))
    return unsupported(instr, to);
  use_emu(E);
  if (glsl_type_is_demoted(E->target, from) || glsl_type_is_demoted(E->target, to))
    E->features |= GLSL_HELPERS_F64SOFT;
  el_use_type(E, from);
  el_use_type(E, to);
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  el_name_t bits;
  el_fresh(E, "v", &bits);
  if (wf > wt) {
    /* wide -> narrow: piece k = bits >> (k * wt) */
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &v));
    wide_to_bits(E, &sb, from, v.s);
    el_line(E, instr, "uvec2 %s = u64_shrl(%s, uvec2(uint(%s * %d), 0u));", bits.s,
            sb.data ? sb.data : "uvec2(0u)", index[instr->shape.rank - 1].s, wt);
    strbuf_free(&sb);
    strbuf_init(&sb, E->allocator);
    char low[EL_NAME_MAX + 8];
    snprintf(low, sizeof low, "%s.x", bits.s);
    narrow_from_bits(&sb, to, low);
    el_def(E, instr, to, false, out, "%s", sb.data ? sb.data : "0");
  } else {
    /* narrow -> wide: bits |= bits(op[..., k]) << (k * wf) */
    el_name_t oi[HLO_MAX_RANK];
    for (int d = 0; d < instr->shape.rank; d++) oi[d] = index[d];
    el_line(E, instr, "uvec2 %s = uvec2(0u);", bits.s);
    for (int p = 0; p < wt / wf; p++) {
      el_name_t v;
      el_const_index(&oi[os->rank - 1], p);
      VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &v));
      strbuf_free(&sb);
      strbuf_init(&sb, E->allocator);
      narrow_to_bits(&sb, from, v.s);
      el_line(E, instr, "%s |= u64_shl(uvec2(%s, 0u), uvec2(%du, 0u));", bits.s,
              sb.data ? sb.data : "0u", p * wf);
    }
    strbuf_free(&sb);
    strbuf_init(&sb, E->allocator);
    wide_from_bits(E, &sb, to, bits.s);
    el_def(E, instr, to, false, out, "%s", sb.data ? sb.data : "uvec2(0u)");
  }
  bool failed = sb.failed;
  strbuf_free(&sb);
  return failed ? VKHLO_NO_MEMORY() : NULL;
}
