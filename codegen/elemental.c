/*
 * The elemental emitter: GLSL for "the value of instruction X at index I".
 *
 * Each op's emitter maps the output index to operand indices (data
 * movement), combines operand values (elementwise), or loops over a
 * reduction/window/contraction space asking for operand values inside the
 * loop body.  Every value lands in a fresh local ("v<n>", index locals
 * "i<n>", loop counters "r<n>"), one statement per line, each commented
 * with the HLO instruction it came from.  See elemental.h for the contract.
 *
 * Semantics follow the StableHLO spec (https://openxla.org/stablehlo/spec);
 * where the spec leaves a result implementation-defined (integer division
 * by zero, out-of-range float->int conversion...) we follow XLA, which
 * produced the conformance expectations.  Exact semantics that GLSL lacks
 * live in helper functions (glsl_prelude.c).
 *
 * Not handled here: sort and scatter (they write to computed positions, not
 * "value at index"; see emit_sort.c and emit_scatter.c), and ops that have
 * no GLSL form yet; those return UNIMPLEMENTED.
 */
#include "codegen/elemental.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/emulate64.h"
#include "hlo/literal.h"
#include "support/status.h"

/* ------------------------------------------------------------ basics */

struct el_scope {
  const hlo_computation_t *comp;
  el_name_t (*values)[EL_MAX_RESULTS]; /* per instruction of comp */
  el_scope_t *parent;
};

static void end_line(strbuf_t *sb, const void *instr);

void el_init(elemental_emitter_t *E, const codegen_target_t *target, const vkhlo_allocator_t *allocator,
             el_operand_value_fn operand_value, void *user) {
  memset(E, 0, sizeof *E);
  E->target = target;
  E->allocator = allocator;
  strbuf_init(&E->body, E->allocator);
  strbuf_init(&E->preamble, E->allocator);
  strbuf_init(&E->functions, E->allocator);
  glsl_builder_init(&E->glsl, &E->body, 1, end_line);
  E->operand_value = operand_value;
  E->user = user;
}

void el_free(elemental_emitter_t *E) {
  strbuf_free(&E->body);
  strbuf_free(&E->preamble);
  strbuf_free(&E->functions);
}

bool el_is_data_movement(hlo_opcode_t op) { return hlo_opcode_emitter(op) == HLO_EMITTER_MOVE; }

/* The ops el_emit computes at an index: elementwise ops, data movement,
 * reductions, contractions, windows and the elementwise CHLO functions
 * (the emitter column of opcodes.def).  The kernel driver (emit.c) and the
 * fusion pass (fusion.c) both ask this, so what may be fused is exactly
 * what the emitter can produce. */
bool el_is_elemental(hlo_opcode_t op) {
  hlo_emitter_class_t c = hlo_opcode_emitter(op);
  return c == HLO_EMITTER_ELEMENTAL || c == HLO_EMITTER_MOVE;
}

bool el_is_row_reduce(const hlo_instruction_t *x, const hlo_shape_t *out) {
  if (x->opcode != HLO_OPCODE_REDUCE || x->operand_count != 2 || hlo_shape_is_tuple(&x->shape) || !out ||
      hlo_shape_is_tuple(out))
    return false;
  const hlo_shape_t *is = &x->operands[0]->shape;
  if (is->rank < 1 || !hlo_shape_compatible_dims(is, out) || x->attrs.dimensions.count != 1 ||
      x->attrs.dimensions.data[0] != is->rank - 1)
    return false;
  int64_t c = is->dimensions[is->rank - 1];
  return c >= 2 && c <= EL_ROW_MAX;
}

static bool all_f32(const hlo_instruction_t *x) {
  if (x->shape.element_type != HLO_F32 || hlo_shape_is_tuple(&x->shape)) return false;
  for (int k = 0; k < x->operand_count; k++)
    if (x->operands[k]->shape.element_type != HLO_F32 || hlo_shape_is_tuple(&x->operands[k]->shape)) return false;
  return true;
}

/* |dims| is 0, 1, .., n - 1 */
static bool leading_dims(const hlo_dims_t *dims, int n) {
  if (dims->count != n) return false;
  for (int i = 0; i < n; i++)
    if (dims->data[i] != i) return false;
  return true;
}

bool el_attention_match(const codegen_target_t *target, const hlo_instruction_t *values,
                        const hlo_instruction_t *scores, const hlo_instruction_t *const *chain, int count,
                        el_attention_t *out) {
  uint32_t sg = target ? target->subgroup_size : 0;
  if (!target || !target->is_cpu || !target->subgroup_shuffle || sg < 4 || sg > 64 || (sg & (sg - 1)))
    return false;
  if (values->opcode != HLO_OPCODE_DOT_GENERAL || scores->opcode != HLO_OPCODE_DOT_GENERAL || values == scores ||
      !all_f32(values) || !all_f32(scores))
    return false;
  const hlo_instruction_t *p = values->operands[0], *v = values->operands[1];
  const hlo_instruction_t *q = scores->operands[0], *k = scores->operands[1];
  int r = p->shape.rank, nb = r - 2;
  if (r < 2 || !hlo_shape_compatible_dims(&p->shape, &scores->shape) || v->shape.rank != r ||
      q->shape.rank != r || k->shape.rank != r)
    return false;
  const hlo_attrs_t *va = &values->attrs, *sa = &scores->attrs;
  if (!leading_dims(&va->lhs_batching_dimensions, nb) || va->lhs_contracting_dimensions.count != 1 ||
      va->lhs_contracting_dimensions.data[0] != r - 1 || va->rhs_batching_dimensions.count != nb ||
      va->rhs_contracting_dimensions.count != 1 || sa->lhs_batching_dimensions.count != nb ||
      sa->rhs_batching_dimensions.count != nb || sa->lhs_contracting_dimensions.count != 1 ||
      sa->rhs_contracting_dimensions.count != 1)
    return false;
  int64_t M = p->shape.dimensions[r - 2], L = p->shape.dimensions[r - 1];
  int64_t K = q->shape.dimensions[sa->lhs_contracting_dimensions.data[0]];
  int64_t E = values->shape.dimensions[r - 1];
  int64_t per = (L + sg - 1) / sg;
  if (M < 1 || L < 1 || K < 1 || E < 1 || per > EL_ATTENTION_MAX_KEYS_PER_LANE || K > EL_ATTENTION_MAX_HEAD ||
      E > EL_ATTENTION_MAX_HEAD || per * (K + E) > EL_ATTENTION_MAX_KEPT)
    return false;
  for (int i = 0; i < count; i++) {
    const hlo_instruction_t *x = chain[i];
    bool reads = false;
    for (int j = 0; j < x->operand_count; j++) reads = reads || x->operands[j] == scores;
    bool row = el_is_row_reduce(x, &p->shape) && x->shape.element_type == HLO_F32;
    if (x->opcode == HLO_OPCODE_REDUCE && !row) return false;
    if (!reads || x == values) continue;
    bool own = hlo_opcode_is_elementwise(x->opcode) && hlo_shape_compatible_dims(&x->shape, &p->shape);
    if (!own && !(row && x->operands[0] == scores && x->operands[1] != scores)) return false;
  }
  out->scores = scores;
  out->values = values;
  out->batch_rank = nb;
  out->M = M;
  out->L = L;
  out->K = K;
  out->E = E;
  out->keys_per_lane = (int)per;
  return true;
}

int el_result_count(const hlo_instruction_t *instr) {
  return hlo_shape_is_tuple(&instr->shape) ? instr->shape.tuple_count : 1;
}

const hlo_shape_t *el_result_shape(const hlo_instruction_t *instr, int k) {
  return hlo_shape_is_tuple(&instr->shape) ? &instr->shape.tuple_shapes[k] : &instr->shape;
}

void el_count_loop_iterations(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t iterations) {
  const int64_t cap = INT64_MAX / 4;
  if (iterations > cap) iterations = cap;
  E->loop_iterations = E->loop_iterations > cap - iterations ? cap : E->loop_iterations + iterations;
  if (!E->loop_instr || iterations > E->loop_instr_iterations) {
    E->loop_instr = instr;
    E->loop_instr_iterations = iterations;
  }
}

vkhlo_status_t el_unimplemented(const hlo_instruction_t *instr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkhlo_status_t st = hlo_vstatus_at(VKHLO_STATUS_UNIMPLEMENTED, instr->loc, fmt, ap);
  va_end(ap);
  return st;
}

static vkhlo_status_t unsupported_type(const hlo_instruction_t *instr, hlo_element_type_t t) {
  return el_unimplemented(instr, "unsupported element type %s for %s.%s",
                          hlo_element_type_name(t),
                          hlo_opcode_is_chlo(instr->opcode) ? "chlo" : "stablehlo",
                          hlo_opcode_name(instr->opcode));
}

void el_use_type(elemental_emitter_t *E, hlo_element_type_t t) {
  glsl_type_t g;
  if (glsl_type_lookup_on(E->target, t, &g)) E->features |= g.features;
}

static void append_comment(strbuf_t *sb, const hlo_instruction_t *instr) {
  if (!instr) {
    strbuf_append(sb, "\n");
    return;
  }
  if (instr->loc.file && instr->loc.line)
    strbuf_printf(sb, "  // %s (%s:%d:%d)\n", instr->name, instr->loc.file, instr->loc.line,
                  instr->loc.col);
  else
    strbuf_printf(sb, "  // %s\n", instr->name);
}

/* glsl_note_fn of the emitter's builder: the note is the instruction. */
static void end_line(strbuf_t *sb, const void *instr) { append_comment(sb, instr); }

void el_line(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_vline(&E->glsl, instr, fmt, ap);
  va_end(ap);
}

glsl_scope_t el_open(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_scope_t s = glsl_vopen(&E->glsl, instr, fmt, ap);
  va_end(ap);
  return s;
}

glsl_scope_t el_else(elemental_emitter_t *E, const hlo_instruction_t *instr, glsl_scope_t s,
                     const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_scope_t n = glsl_velse(&E->glsl, s, instr, fmt, ap);
  va_end(ap);
  return n;
}

void el_close(elemental_emitter_t *E, const hlo_instruction_t *instr, glsl_scope_t s) {
  glsl_close(&E->glsl, s, instr);
}

void el_fresh(elemental_emitter_t *E, const char *prefix, el_name_t *out) {
  snprintf(out->s, sizeof out->s, "%s%d", prefix, E->next_id++);
}

void el_const_index(el_name_t *out, long long v) { snprintf(out->s, sizeof out->s, "%lld", v); }

static void el_vdef(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *type,
                    hlo_element_type_t norm_t, bool normalize, el_name_t *out, const char *fmt,
                    va_list ap) {
  strbuf_t expr, line;
  strbuf_init(&expr, E->allocator);
  strbuf_init(&line, E->allocator);
  char small[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  if (n >= 0 && (size_t)n < sizeof small) {
    strbuf_append(&expr, small);
  } else if (n >= 0) {
    char *big = vkhlo_malloc(E->allocator, (size_t)n + 1);
    if (big) {
      vsnprintf(big, (size_t)n + 1, fmt, ap2);
      strbuf_append(&expr, big);
      vkhlo_free(E->allocator, big);
    } else {
      E->body.failed = true;
    }
  }
  va_end(ap2);
  el_fresh(E, "v", out);
  /* Real floating-point values are `precise`: glslang then marks their
   * arithmetic NoContraction, so no optimizer fuses a multiply and an
   * add of two ops into one rounding (an fma); each op rounds as the spec
   * says.  Complex values are left free: one complex op is several real
   * roundings anyway, and fma makes its formulas more accurate. */
  bool fp = strcmp(type, "float") == 0 || strcmp(type, "double") == 0;
  strbuf_printf(&line, "%s%s %s = ", fp ? "precise " : "", type, out->s);
  if (normalize && !expr.failed) glsl_append_normalized(&line, norm_t, expr.data ? expr.data : "");
  else strbuf_append(&line, expr.data ? expr.data : "");
  strbuf_append(&line, ";");
  if (line.failed || expr.failed) E->body.failed = true;
  else el_line(E, instr, "%s", line.data);
  strbuf_free(&expr);
  strbuf_free(&line);
}

void el_def(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
            bool normalize, el_name_t *out, const char *fmt, ...) {
  el_use_type(E, t);
  va_list ap;
  va_start(ap, fmt);
  el_vdef(E, instr, glsl_compute_type_on(E->target, t), t, normalize && glsl_type_needs_normalize(t), out, fmt,
          ap);
  va_end(ap);
}

/* An int index local = printf(fmt...). */
static void idx_def(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t *out,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void idx_def(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t *out,
                    const char *fmt, ...) {
  char expr[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(expr, sizeof expr, fmt, ap);
  va_end(ap);
  el_fresh(E, "i", out);
  el_line(E, instr, "int %s = %s;", out->s, expr);
}

void el_append_linear(strbuf_t *sb, const hlo_shape_t *shape, const el_name_t *index) {
  int64_t stride = 1;
  bool first = true;
  for (int d = shape->rank - 1; d >= 0; d--) {
    if (shape->dimensions[d] != 1) {
      if (!first) strbuf_append(sb, " + ");
      if (stride == 1) strbuf_printf(sb, "%s", index[d].s);
      else strbuf_printf(sb, "%s * %lld", index[d].s, (long long)stride);
      first = false;
    }
    stride *= shape->dimensions[d];
  }
  if (first) strbuf_append(sb, "0");
}

static int64_t dims_get(hlo_dims_t d, int i, int64_t dflt) {
  return i < d.count ? d.data[i] : dflt;
}

static char kind_of(hlo_element_type_t t) {
  glsl_type_t g;
  return glsl_type_lookup(t, &g) ? g.kind : '?';
}

static bool is_double_based(hlo_element_type_t t) { return t == HLO_F64 || t == HLO_C128; }

/* --------------------------------------------------------- scopes */

static int scope_position(const el_scope_t *s, const hlo_instruction_t *instr) {
  for (int i = 0; i < s->comp->instruction_count; i++)
    if (s->comp->instructions[i] == instr) return i;
  return -1;
}

vkhlo_status_t el_operand(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                          const el_name_t *index, el_name_t *out) {
  if (E->scope) {
    int p = scope_position(E->scope, instr->operands[k]);
    if (p < 0) return VKHLO_INTERNAL("operand of %s not in its computation", instr->name);
    *out = E->scope->values[p][0];
    return NULL;
  }
  return E->operand_value(E, instr, k, index, out);
}

/* ------------------------------------------------------- conversions */

/* convert (spec 'convert'): XLA semantics for the implementation-defined
 * cases: float -> int saturates and maps NaN to 0, x -> i1 is x != 0,
 * complex -> real keeps the real part. */
void el_convert(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t from,
                hlo_element_type_t to, const char *v, el_name_t *out) {
  if (glsl_type_is_emulated64(E->target, from) || glsl_type_is_emulated64(E->target, to)) {
    emu64_convert(E, instr, from, to, v, out);
    return;
  }
  char fk = kind_of(from), tk = kind_of(to);
  const char *tt = glsl_compute_type_on(E->target, to);
  el_use_type(E, from);
  if (from == to) {
    el_def(E, instr, to, false, out, "%s", v);
    return;
  }
  if (tk == 'P') {
    /* complex -> i1 looks at the real part only (XLA: complex -> real first) */
    if (fk == 'C') el_def(E, instr, to, false, out, "(%s.x != %s(0))", v,
                          from == HLO_C64 ? "float" : "double");
    else if (fk == 'P') el_def(E, instr, to, false, out, "%s", v);
    else el_def(E, instr, to, false, out, "(%s != %s(0))", v, glsl_compute_type_on(E->target, from));
    return;
  }
  if (fk == 'P') {
    strbuf_t one, zero;
    strbuf_init(&one, E->allocator);
    strbuf_init(&zero, E->allocator);
    glsl_append_int_constant_on(&one, E->target, to, 1);
    glsl_append_int_constant_on(&zero, E->target, to, 0);
    el_def(E, instr, to, false, out, "(%s ? %s : %s)", v, one.data, zero.data);
    strbuf_free(&one);
    strbuf_free(&zero);
    return;
  }
  if (tk == 'C') {
    const char *rt = (to == HLO_C64 || glsl_type_is_demoted(E->target, to)) ? "float" : "double";
    if (fk == 'C') el_def(E, instr, to, false, out, "%s(%s)", tt, v);
    else el_def(E, instr, to, false, out, "%s(%s(%s), 0)", tt, rt, v);
    return;
  }
  if (fk == 'C') { /* complex -> real: the real part, then float -> |to| */
    hlo_element_type_t part = hlo_element_type_real(from);
    el_name_t re;
    el_def(E, instr, part, false, &re, "%s.x", v);
    el_convert(E, instr, part, to, re.s, out);
    return;
  }
  if (fk == 'F' && (tk == 'S' || tk == 'U')) {
    int w = hlo_element_type_bit_width(to);
    const char *suffix = (from == HLO_F64 && !glsl_type_is_demoted(E->target, from)) ? "lf" : "";
    strbuf_t maxv, minv;
    strbuf_init(&maxv, E->allocator);
    strbuf_init(&minv, E->allocator);
    if (tk == 'S') {
      if (w == 64) {
        strbuf_append(&maxv, "9223372036854775807l");
        strbuf_append(&minv, "(-9223372036854775807l - 1l)");
      } else {
        strbuf_printf(&maxv, "%lld", (1LL << (w - 1)) - 1);
        strbuf_printf(&minv, "(%lld - 1)", -((1LL << (w - 1)) - 1));
      }
      el_def(E, instr, to, false, out,
             "(isnan(%s) ? %s(0) : (%s >= %.1f%s ? %s : (%s <= %.1f%s ? %s : %s(%s))))", v, tt, v,
             (double)(1ULL << (w - 1)), suffix, maxv.data, v, -(double)(1ULL << (w - 1)), suffix,
             minv.data, tt, v);
    } else {
      if (w == 64) strbuf_append(&maxv, "18446744073709551615ul");
      else strbuf_printf(&maxv, "%lluu", (unsigned long long)((1ULL << w) - 1));
      double lim = w == 64 ? 18446744073709551616.0 : (double)(1ULL << w);
      el_def(E, instr, to, false, out,
             "((isnan(%s) || %s <= 0.0%s) ? %s(0) : (%s >= %.1f%s ? %s : %s(%s)))", v, v, suffix,
             tt, v, lim, suffix, maxv.data, tt, v);
    }
    strbuf_free(&maxv);
    strbuf_free(&minv);
    return;
  }
  if ((fk == 'S' || fk == 'U') && (tk == 'S' || tk == 'U')) {
    /* Integer -> integer wraps.  Go through the signed 64-bit type for a
     * signed source widening to uint64 (sign extension). */
    if (to == HLO_U64 && fk == 'S') el_def(E, instr, to, true, out, "%s(int64_t(%s))", tt, v);
    else el_def(E, instr, to, true, out, "%s(%s)", tt, v);
    return;
  }
  /* int -> float, float -> float */
  el_def(E, instr, to, true, out, "%s(%s)", tt, v);
}

/* ------------------------------------------------------ elementwise */

/* Bits of a compute value as uint (<= 32 bits) or uint64_t. */
static void append_to_bits(strbuf_t *sb, hlo_element_type_t t, const char *v) {
  int w = hlo_element_type_bit_width(t);
  switch (t) {
    case HLO_F32: strbuf_printf(sb, "floatBitsToUint(%s)", v); break;
    case HLO_F64: strbuf_printf(sb, "packUint2x32(unpackDouble2x32(%s))", v); break;
    case HLO_F16: strbuf_printf(sb, "(packHalf2x16(vec2(%s, 0.0)) & 0xFFFFu)", v); break;
    case HLO_BF16: strbuf_printf(sb, "(floatBitsToUint(%s) >> 16)", v); break;
    case HLO_S64: case HLO_U64: strbuf_printf(sb, "uint64_t(%s)", v); break;
    case HLO_PRED: strbuf_printf(sb, "(%s ? 1u : 0u)", v); break;
    default:
      if (glsl_small_float_args(t, NULL, 0)) {
        char args[48];
        glsl_small_float_args(t, args, sizeof args);
        strbuf_printf(sb, "vk_small_encode(%s, %s)", v, args);
      } else if (w == 32) strbuf_printf(sb, "uint(%s)", v);
      else strbuf_printf(sb, "(uint(%s) & 0x%xu)", v, (unsigned)((1u << w) - 1));
      break;
  }
}

/* A compute value of |t| from bits |b| (uint or uint64_t). */
static void append_from_bits(strbuf_t *sb, hlo_element_type_t t, const char *b) {
  int w = hlo_element_type_bit_width(t);
  switch (t) {
    case HLO_F32: strbuf_printf(sb, "uintBitsToFloat(uint(%s))", b); break;
    case HLO_F64: strbuf_printf(sb, "packDouble2x32(unpackUint2x32(uint64_t(%s)))", b); break;
    case HLO_F16: strbuf_printf(sb, "unpackHalf2x16(uint(%s)).x", b); break;
    case HLO_BF16: strbuf_printf(sb, "uintBitsToFloat(uint(%s) << 16)", b); break;
    case HLO_S64: strbuf_printf(sb, "int64_t(%s)", b); break;
    case HLO_U64: strbuf_printf(sb, "uint64_t(%s)", b); break;
    case HLO_PRED: strbuf_printf(sb, "((uint(%s) & 1u) != 0u)", b); break;
    default:
      if (glsl_small_float_args(t, NULL, 0)) {
        char args[48];
        glsl_small_float_args(t, args, sizeof args);
        strbuf_printf(sb, "vk_small_decode(uint(%s) & 0x%xu, %s)", b, (unsigned)((1u << w) - 1), args);
      } else if (kind_of(t) == 'S') strbuf_printf(sb, "bitfieldExtract(int(uint(%s)), 0, %d)", b, w);
      else strbuf_printf(sb, "bitfieldExtract(uint(%s), 0, %d)", b, w);
      break;
  }
}

static const char *cmp_op(hlo_comparison_direction_t d) {
  switch (d) {
    case HLO_CMP_EQ: return "==";
    case HLO_CMP_NE: return "!=";
    case HLO_CMP_GE: return ">=";
    case HLO_CMP_GT: return ">";
    case HLO_CMP_LE: return "<=";
    case HLO_CMP_LT: return "<";
  }
  return "==";
}

/* compare (spec 'compare'): FLOAT compares IEEE-style (NaN unordered),
 * TOTALORDER orders -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN,
 * SIGNED/UNSIGNED reinterpret the integer bits. */
static vkhlo_status_t emit_compare(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                   const el_name_t *v, el_name_t *out) {
  hlo_element_type_t t = instr->operands[0]->shape.element_type;
  char k = kind_of(t);
  const char *op = cmp_op(instr->attrs.comparison_direction);
  hlo_compare_type_t ct = instr->attrs.compare_type;
  if (k == 'C') {
    if (instr->attrs.comparison_direction == HLO_CMP_EQ)
      el_def(E, instr, HLO_PRED, false, out, "all(equal(%s, %s))", v[0].s, v[1].s);
    else if (instr->attrs.comparison_direction == HLO_CMP_NE)
      el_def(E, instr, HLO_PRED, false, out, "any(notEqual(%s, %s))", v[0].s, v[1].s);
    else return unsupported_type(instr, t);
    return NULL;
  }
  if (k == 'P') {
    el_def(E, instr, HLO_PRED, false, out, "(uint(%s) %s uint(%s))", v[0].s, op, v[1].s);
    return NULL;
  }
  if (k == 'F' && ct == HLO_CMP_TYPE_TOTALORDER) {
    if (t == HLO_F64 && !glsl_type_is_demoted(E->target, t)) {
      if (!E->target->shader_int64) return unsupported_type(instr, t);
      E->features |= GLSL_FEATURE_INT64;
      el_name_t ka, kb;
      el_def(E, instr, HLO_S64, false, &ka, "doubleBitsToInt64(%s)", v[0].s);
      el_def(E, instr, HLO_S64, false, &kb, "doubleBitsToInt64(%s)", v[1].s);
      el_def(E, instr, HLO_PRED, false, out,
             "((%s < 0l ? (%s ^ 9223372036854775807l) : %s) %s (%s < 0l ? (%s ^ "
             "9223372036854775807l) : %s))",
             ka.s, ka.s, ka.s, op, kb.s, kb.s, kb.s);
      return NULL;
    }
    E->features |= GLSL_HELPERS_FLOAT;
    el_def(E, instr, HLO_PRED, false, out, "(vk_total_key(%s) %s vk_total_key(%s))", v[0].s, op,
           v[1].s);
    return NULL;
  }
  if ((k == 'S' && ct == HLO_CMP_TYPE_UNSIGNED) || (k == 'U' && ct == HLO_CMP_TYPE_SIGNED)) {
    const char *ty;
    if (t == HLO_S64 || t == HLO_U64) ty = k == 'S' ? "uint64_t" : "int64_t";
    else ty = k == 'S' ? "uint" : "int";
    if (hlo_element_type_bit_width(t) < 32 && k == 'S') {
      el_def(E, instr, HLO_PRED, false, out, "(bitfieldExtract(uint(%s), 0, %d) %s bitfieldExtract(uint(%s), 0, %d))",
             v[0].s, hlo_element_type_bit_width(t), op, v[1].s, hlo_element_type_bit_width(t));
    } else if (hlo_element_type_bit_width(t) < 32) {
      int w = hlo_element_type_bit_width(t);
      el_def(E, instr, HLO_PRED, false, out,
             "(bitfieldExtract(int(%s), 0, %d) %s bitfieldExtract(int(%s), 0, %d))", v[0].s, w, op,
             v[1].s, w);
    } else {
      el_def(E, instr, HLO_PRED, false, out, "(%s(%s) %s %s(%s))", ty, v[0].s, op, ty, v[1].s);
    }
    return NULL;
  }
  /* x != x is how XLA and JAX test for NaN: test the bits (vk_isnan), which
   * no driver may fold away as it may fold x != x without float controls. */
  hlo_comparison_direction_t dir = instr->attrs.comparison_direction;
  if (k == 'F' && instr->operands[0] == instr->operands[1] && (dir == HLO_CMP_NE || dir == HLO_CMP_EQ)) {
    el_def(E, instr, HLO_PRED, false, out, "(%svk_isnan(%s))", dir == HLO_CMP_NE ? "" : "!", v[0].s);
    return NULL;
  }
  el_def(E, instr, HLO_PRED, false, out, "(%s %s %s)", v[0].s, op, v[1].s);
  return NULL;
}

/* bitcast_convert involving complex types.  A complex<fN> value is 2N bits:
 * its real part (low N bits) then its imaginary part, i.e. two fN
 * components in little-endian order.  |v| is the operand value for equal
 * widths; otherwise the operand is read at |index| (the narrow side has one
 * more dimension, the pieces in little-endian order). */
static vkhlo_status_t emit_bitcast_complex(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           const el_name_t *index, const char *v,
                                           el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  hlo_element_type_t from = os->element_type, to = instr->shape.element_type;
  int wf = hlo_element_type_bit_width(from), wt = hlo_element_type_bit_width(to);
  bool cf = kind_of(from) == 'C';
  hlo_element_type_t part = hlo_element_type_real(cf ? from : to);
  int half = hlo_element_type_bit_width(part);
  el_use_type(E, from);
  el_use_type(E, to);
  if (glsl_type_is_emulated64(E->target, from) || glsl_type_is_emulated64(E->target, to) ||
      glsl_type_is_demoted(E->target, from) || glsl_type_is_demoted(E->target, to))
    return unsupported_type(instr, to);
  if (half == 64 || wf == 64 || wt == 64) {
    bool f64_only = (from == HLO_C128 && to == HLO_C64) || (from == HLO_C64 && to == HLO_C128) ||
                    (from == HLO_C64 && to == HLO_F64) || (from == HLO_F64 && to == HLO_C64);
    if (!f64_only) {
      if (!E->target->shader_int64) return unsupported_type(instr, to);
      E->features |= GLSL_FEATURE_INT64;
    }
  }
  const char *bt = half == 64 ? "uint64_t" : "uint";
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  el_name_t x;
  if (wf == wt) { /* complex<f32> <-> a 64-bit type */
    if (!v) {
      VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &x));
      v = x.s;
    }
    if (to == HLO_F64) el_def(E, instr, to, false, out, "packDouble2x32(floatBitsToUint(%s))", v);
    else if (from == HLO_F64)
      el_def(E, instr, to, false, out, "uintBitsToFloat(unpackDouble2x32(%s))", v);
    else if (cf) {
      strbuf_printf(&sb, "packUint2x32(floatBitsToUint(%s))", v);
      strbuf_t val;
      strbuf_init(&val, E->allocator);
      append_from_bits(&val, to, sb.data ? sb.data : "0");
      el_def(E, instr, to, false, out, "%s", val.data ? val.data : "0");
      strbuf_free(&val);
    } else {
      append_to_bits(&sb, from, v);
      el_def(E, instr, to, false, out, "uintBitsToFloat(unpackUint2x32(uint64_t(%s)))",
             sb.data ? sb.data : "0");
    }
  } else if (from == HLO_C128 && to == HLO_C64) {
    el_name_t oi[HLO_MAX_RANK];
    for (int d = 0; d < os->rank; d++) oi[d] = index[d];
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &x));
    el_def(E, instr, to, false, out, "uintBitsToFloat(unpackDouble2x32(%s == 0 ? %s.x : %s.y))",
           index[instr->shape.rank - 1].s, x.s, x.s);
  } else if (from == HLO_C64 && to == HLO_C128) {
    el_name_t oi[HLO_MAX_RANK], p[2];
    for (int d = 0; d < instr->shape.rank; d++) oi[d] = index[d];
    for (int c = 0; c < 2; c++) {
      el_const_index(&oi[os->rank - 1], c);
      VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &p[c]));
    }
    el_def(E, instr, to, false, out,
           "dvec2(packDouble2x32(floatBitsToUint(%s)), packDouble2x32(floatBitsToUint(%s)))",
           p[0].s, p[1].s);
  } else if (cf) { /* complex -> narrower real pieces */
    if (wt > half) return unsupported_type(instr, to);
    el_name_t oi[HLO_MAX_RANK], pos, bits;
    for (int d = 0; d < os->rank; d++) oi[d] = index[d];
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &x));
    el_fresh(E, "i", &pos);
    el_line(E, instr, "int %s = %s * %d;", pos.s, index[instr->shape.rank - 1].s, wt);
    char comp[3 * EL_NAME_MAX + 32];
    snprintf(comp, sizeof comp, "(%s < %d ? %s.x : %s.y)", pos.s, half, x.s, x.s);
    append_to_bits(&sb, part, comp);
    el_fresh(E, "v", &bits);
    el_line(E, instr, "%s %s = %s(%s) >> (%s %% %d);", bt, bits.s, bt, sb.data ? sb.data : "0",
            pos.s, half);
    strbuf_free(&sb);
    strbuf_init(&sb, E->allocator);
    append_from_bits(&sb, to, bits.s);
    el_def(E, instr, to, false, out, "%s", sb.data ? sb.data : "0");
  } else { /* narrower real pieces -> complex */
    if (wf > half) return unsupported_type(instr, to);
    int n = half / wf;
    el_name_t oi[HLO_MAX_RANK], comp[2];
    for (int d = 0; d < instr->shape.rank; d++) oi[d] = index[d];
    for (int c = 0; c < 2; c++) {
      el_name_t bits;
      el_fresh(E, "v", &bits);
      el_line(E, instr, "%s %s = %s(0);", bt, bits.s, bt);
      for (int p = 0; p < n; p++) {
        el_const_index(&oi[os->rank - 1], c * n + p);
        VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &x));
        strbuf_free(&sb);
        strbuf_init(&sb, E->allocator);
        append_to_bits(&sb, from, x.s);
        el_line(E, instr, "%s |= %s(%s) << %d;", bits.s, bt, sb.data ? sb.data : "0", p * wf);
      }
      strbuf_free(&sb);
      strbuf_init(&sb, E->allocator);
      append_from_bits(&sb, part, bits.s);
      el_def(E, instr, part, false, &comp[c], "%s", sb.data ? sb.data : "0");
    }
    el_def(E, instr, to, false, out, "%s(%s, %s)", glsl_compute_type(to), comp[0].s, comp[1].s);
  }
  bool failed = sb.failed;
  strbuf_free(&sb);
  return failed ? VKHLO_NO_MEMORY() : NULL;
}

/* bitcast_convert (spec 'bitcast_convert') with equal bit widths. */
static vkhlo_status_t emit_bitcast_same(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                        hlo_element_type_t from, hlo_element_type_t to,
                                        const char *v, el_name_t *out) {
  if (from == to) {
    el_def(E, instr, to, false, out, "%s", v);
    return NULL;
  }
  if (kind_of(from) == 'C' || kind_of(to) == 'C')
    return emit_bitcast_complex(E, instr, NULL, v, out);
  if (glsl_type_is_emulated64(E->target, from) || glsl_type_is_emulated64(E->target, to) ||
      glsl_type_is_demoted(E->target, from) || glsl_type_is_demoted(E->target, to)) {
    el_name_t operand; /* emulate64.c handles 64-bit bits held as uvec2 */
    snprintf(operand.s, sizeof operand.s, "%s", v);
    return emu64_elementwise(E, instr, &operand, out);
  }
  strbuf_t bits, val;
  strbuf_init(&bits, E->allocator);
  strbuf_init(&val, E->allocator);
  el_use_type(E, from);
  append_to_bits(&bits, from, v);
  append_from_bits(&val, to, bits.data ? bits.data : "0");
  el_def(E, instr, to, false, out, "%s", val.data ? val.data : "0");
  strbuf_free(&bits);
  strbuf_free(&val);
  return NULL;
}

/* The elementwise ops (spec: each op's section of the same name). */
/* For a binary op with an f32/f64 splat constant operand (operand 1
 * preferred): its index, with its value in *out; -1 otherwise.  Against a
 * constant that is neither NaN nor the signed zero the general form cares
 * about, maximum and minimum need only the other operand's NaN test and
 * one compare (relu is max(x, +0): -0 > +0 is false, so it gives +0). */
static int float_splat_operand(const hlo_instruction_t *instr, double *out) {
  for (int k = 1; k >= 0; k--) {
    const hlo_instruction_t *x = instr->operands[k];
    hlo_element_type_t t = x->shape.element_type;
    if ((t != HLO_F32 && t != HLO_F64) || !hlo_constant_is_splat(x)) continue;
    if (t == HLO_F32) {
      float f;
      memcpy(&f, x->literal->data, sizeof f);
      *out = f;
    } else {
      memcpy(out, x->literal->data, sizeof *out);
    }
    return k;
  }
  return -1;
}

/* The GLSL of the elementwise ops, one template per kind of the operand
 * type (F float, S signed, U unsigned, P pred, C complex; d: a float of
 * f64 precision, when it differs from f).  No template: the op does not
 * take that kind.  In a template
 *   $a $b  the operands' values,
 *   $T     the operand type's compute type, $R the result's,
 *   $f     the scalar float type ("float" or "double"),
 *   $w     the operand type's bit width, $W the unsigned word type holding
 *          it ("uint" or "uint64_t").
 * Ops whose GLSL depends on more than the type (convert, compare, select,
 * clamp, reduce_precision, a maximum/minimum against a constant) are
 * emitted by code in emit_elementwise. */
static const struct {
  hlo_opcode_t op;
  const char *f, *d, *s, *u, *p, *c;
} elementwise_glsl[] = {
#define ALL4(x) .f = x, .s = x, .u = x, .c = x
#define INT2(x) .s = x, .u = x
    {HLO_OPCODE_ABS, .f = "abs($a)", .s = "vk_iabs($a)", .u = "$a", .c = "vk_cabs($a)"},
    /* complex: the principal root exp(log(z) / 3) */
    {HLO_OPCODE_CBRT, .f = "vk_cbrt($a)", .c = "vk_cexp(vk_clog($a) / $f(3))"},
    {HLO_OPCODE_CEIL, .f = "ceil($a)"},
    {HLO_OPCODE_FLOOR, .f = "floor($a)"},
    {HLO_OPCODE_COSINE, .f = "vk_cos($a)", .c = "vk_ccos($a)"},
    {HLO_OPCODE_SINE, .f = "vk_sin($a)", .c = "vk_csin($a)"},
    {HLO_OPCODE_TAN, .f = "vk_tan($a)"},
    {HLO_OPCODE_EXPONENTIAL, .f = "vk_exp($a)", .c = "vk_cexp($a)"},
    {HLO_OPCODE_EXPONENTIAL_MINUS_ONE, .f = "vk_expm1($a)", .c = "vk_cexpm1($a)"},
    {HLO_OPCODE_LOG, .f = "vk_log($a)", .c = "vk_clog($a)"},
    {HLO_OPCODE_LOG_PLUS_ONE, .f = "vk_log1p($a)", .c = "vk_clog1p($a)"},
    {HLO_OPCODE_LOGISTIC, .f = "vk_logistic($a)", .c = "vk_cdiv($T(1, 0), $T(1, 0) + vk_cexp(-$a))"},
    {HLO_OPCODE_TANH, .f = "vk_tanh($a)", .c = "vk_ctanh($a)"},
    {HLO_OPCODE_RSQRT, .f = "inversesqrt($a)", .d = "(1.0lf / sqrt($a))", .c = "vk_crsqrt($a)"},
    {HLO_OPCODE_SQRT, .f = "sqrt($a)", .c = "vk_csqrt($a)"},
    {HLO_OPCODE_ROUND_NEAREST_EVEN, .f = "roundEven($a)"},
    {HLO_OPCODE_ROUND_NEAREST_AFZ, .f = "vk_round_afz($a)"},
    {HLO_OPCODE_IS_FINITE, .f = "vk_is_finite($a)"},
    {HLO_OPCODE_COUNT_LEADING_ZEROS, INT2("$T(vk_clz($W($a), $wu))")},
    {HLO_OPCODE_POPCNT, INT2("$T(vk_popcnt($W($a), $wu))")},
    {HLO_OPCODE_NEGATE, ALL4("-$a")},
    {HLO_OPCODE_NOT, .p = "!$a", INT2("~$a")},
    {HLO_OPCODE_SIGN, .f = "vk_sign($a)", .c = "vk_csign($a)", .s = "vk_isign($a)",
     .u = "($a != $T(0) ? $T(1) : $T(0))"},
    {HLO_OPCODE_REAL, .f = "$a", INT2("$a"), .p = "$a", .c = "$a.x"},
    {HLO_OPCODE_IMAG, .f = "$R(0)", INT2("$R(0)"), .p = "$R(0)", .c = "$a.y"},
    {HLO_OPCODE_ADD, ALL4("($a + $b)"), .p = "($a || $b)"},
    {HLO_OPCODE_SUBTRACT, ALL4("($a - $b)")},
    {HLO_OPCODE_MULTIPLY, .f = "($a * $b)", INT2("($a * $b)"), .p = "($a && $b)", .c = "vk_cmul($a, $b)"},
    {HLO_OPCODE_DIVIDE, .f = "($a / $b)", .c = "vk_cdiv($a, $b)", INT2("vk_div($a, $b)")},
    {HLO_OPCODE_REMAINDER, .f = "vk_fmod($a, $b)", INT2("vk_rem($a, $b)")},
    {HLO_OPCODE_AND, .p = "($a && $b)", INT2("($a & $b)")},
    {HLO_OPCODE_OR, .p = "($a || $b)", INT2("($a | $b)")},
    {HLO_OPCODE_XOR, .p = "($a != $b)", INT2("($a ^ $b)")},
    /* complex: lexicographic on (real, imag), as the spec says */
    {HLO_OPCODE_MAXIMUM, .f = "vk_fmax($a, $b)", INT2("max($a, $b)"), .p = "($a || $b)",
     .c = "(($a.x > $b.x || ($a.x == $b.x && $a.y >= $b.y)) ? $a : $b)"},
    {HLO_OPCODE_MINIMUM, .f = "vk_fmin($a, $b)", INT2("min($a, $b)"), .p = "($a && $b)",
     .c = "(($a.x < $b.x || ($a.x == $b.x && $a.y <= $b.y)) ? $a : $b)"},
    {HLO_OPCODE_POWER, .f = "vk_pow($a, $b)", .c = "vk_cpow($a, $b)", INT2("vk_pow($a, $b)")},
    {HLO_OPCODE_SHIFT_LEFT, INT2("vk_shl($a, $b, $wu)")},
    {HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC, INT2("vk_shra($a, $b, $wu)")},
    {HLO_OPCODE_SHIFT_RIGHT_LOGICAL, INT2("vk_shrl($a, $b, $wu)")},
    /* complex: atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)) */
    {HLO_OPCODE_ATAN2, .f = "vk_atan2($a, $b)",
     .c = "vk_cmul($T(0, -1), vk_clog(vk_cdiv($b + $T(-$a.y, $a.x), "
          "vk_csqrt(vk_cmul($b, $b) + vk_cmul($a, $a)))))"},
    {HLO_OPCODE_COMPLEX, ALL4("$R($a, $b)"), .p = "$R($a, $b)"},
#undef ALL4
#undef INT2
};

/* The template of |op| for kind |k| (|dbl|: f64 precision); NULL if none. */
static const char *elementwise_template(hlo_opcode_t op, char k, bool dbl, bool *found) {
  *found = false;
  for (size_t i = 0; i < sizeof elementwise_glsl / sizeof elementwise_glsl[0]; i++) {
    if (elementwise_glsl[i].op != op) continue;
    *found = true;
    switch (k) {
      case 'F': return dbl && elementwise_glsl[i].d ? elementwise_glsl[i].d : elementwise_glsl[i].f;
      case 'S': return elementwise_glsl[i].s;
      case 'U': return elementwise_glsl[i].u;
      case 'P': return elementwise_glsl[i].p;
      case 'C': return elementwise_glsl[i].c;
      default: return NULL;
    }
  }
  return NULL;
}

typedef struct {
  const char *a, *b, *T, *R, *f, *W;
  int w;
} template_args_t;

/* Appends |tmpl| with its $-names replaced (see elementwise_glsl). */
static void expand_template(strbuf_t *sb, const char *tmpl, const template_args_t *x) {
  for (const char *p = tmpl; *p; p++) {
    size_t run = strcspn(p, "$");
    strbuf_appendn(sb, p, run);
    p += run;
    if (!*p || !p[1]) break;
    switch (*++p) {
      case 'a': strbuf_append(sb, x->a); break;
      case 'b': strbuf_append(sb, x->b); break;
      case 'T': strbuf_append(sb, x->T); break;
      case 'R': strbuf_append(sb, x->R); break;
      case 'f': strbuf_append(sb, x->f); break;
      case 'W': strbuf_append(sb, x->W); break;
      case 'w': strbuf_printf(sb, "%d", x->w); break;
      default: strbuf_printf(sb, "$%c", *p); break;
    }
  }
}

/* Whether |op| on float (|k| 'F') or complex64 ('C') values is evaluated
 * through the double versions of its helpers and rounded once.  On CPU
 * devices (lavapipe) GLSL's exp, log, sin, ... are several ulps off
 * (exp(x) - 1 up to 59 ulps, log near 1 relatively 1e-3), which
 * StableHLO's tests against correctly rounded libm results see; doubles
 * cost about twice floats there (sine of 16M floats 1.5x the time, log
 * 2x).  GPUs keep their float instructions: doubles are a fraction of
 * their float rate. */
static bool math_via_double(const codegen_target_t *target, hlo_opcode_t op, char k) {
  if (!target->is_cpu || !target->shader_float64) return false;
  switch (op) {
    case HLO_OPCODE_SINE: case HLO_OPCODE_COSINE: case HLO_OPCODE_TAN:
    case HLO_OPCODE_EXPONENTIAL_MINUS_ONE: case HLO_OPCODE_LOG:
    case HLO_OPCODE_LOG_PLUS_ONE: case HLO_OPCODE_POWER: case HLO_OPCODE_ATAN2:
    case HLO_OPCODE_CBRT:
      return true;
    /* on every element of softmax, GELU, SiLU and the normalizations:
     * the device's float functions for reals (through double, softmax
     * took 2.2x as long on lavapipe; GLSL's exp is within 4e-6) */
    case HLO_OPCODE_EXPONENTIAL: case HLO_OPCODE_LOGISTIC: case HLO_OPCODE_TANH:
    case HLO_OPCODE_RSQRT: case HLO_OPCODE_SQRT: case HLO_OPCODE_ABS: case HLO_OPCODE_DIVIDE:
      return k == 'C';
    default: return false;
  }
}

static vkhlo_status_t emit_elementwise(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       const el_name_t *index, el_name_t *out) {
  el_name_t v[3];
  for (int k = 0; k < instr->operand_count && k < 3; k++) {
    const hlo_shape_t *os = &instr->operands[k]->shape;
    /* select's predicate and clamp's bounds may be rank-0 */
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, os->rank == 0 ? NULL : index, &v[k]));
  }
  /* i64/ui64 without shaderInt64 (emulate64.c) */
  if (emu64_involved(E, instr)) return emu64_elementwise(E, instr, v, out);
  hlo_element_type_t rt = instr->shape.element_type;
  hlo_element_type_t t = instr->operand_count ? instr->operands[0]->shape.element_type : rt;
  char k = kind_of(t);
  bool dbl = is_double_based(t) && !glsl_type_is_demoted(E->target, t);
  const char *a = v[0].s, *b = instr->operand_count > 1 ? v[1].s : "";
  int c;     /* maximum/minimum: which operand is a splat constant */
  double cv; /* and its value */
  if (k == 'F') E->features |= dbl ? GLSL_HELPERS_DOUBLE : GLSL_HELPERS_FLOAT;
#define DEF(...) el_def(E, instr, rt, true, out, __VA_ARGS__)
  switch (instr->opcode) {
    case HLO_OPCODE_CONVERT: el_convert(E, instr, t, rt, a, out); return NULL;
    case HLO_OPCODE_BITCAST_CONVERT: return emit_bitcast_same(E, instr, t, rt, a, out);
    case HLO_OPCODE_COMPARE: return emit_compare(E, instr, v, out);
    case HLO_OPCODE_SELECT:
      el_def(E, instr, rt, false, out, "(%s ? %s : %s)", a, b, v[2].s);
      return NULL;
    case HLO_OPCODE_CLAMP: {
      /* clamp(min, operand, max) = min(max(operand, min), max) */
      char k1 = kind_of(instr->operands[1]->shape.element_type);
      if (k1 == 'F') DEF("vk_fmin(vk_fmax(%s, %s), %s)", b, a, v[2].s);
      else if (k1 == 'S' || k1 == 'U') DEF("min(max(%s, %s), %s)", b, a, v[2].s);
      else return unsupported_type(instr, instr->operands[1]->shape.element_type);
      return NULL;
    }
    case HLO_OPCODE_REDUCE_PRECISION:
      if (k != 'F') return unsupported_type(instr, t);
      if (dbl) {
        if (!E->target->shader_int64) return unsupported_type(instr, t);
        E->features |= GLSL_FEATURE_INT64;
      }
      DEF("vk_reduce_precision(%s, %d, %d)", a, instr->attrs.exponent_bits,
          instr->attrs.mantissa_bits);
      return NULL;
    case HLO_OPCODE_MAXIMUM:
      if (k == 'F' && (c = float_splat_operand(instr, &cv)) >= 0 && !isnan(cv) && !(cv == 0 && signbit(cv))) {
        DEF("((isnan(%s) || %s > %s) ? %s : %s)", c ? a : b, c ? a : b, c ? b : a, c ? a : b, c ? b : a);
        return NULL;
      }
      break;
    case HLO_OPCODE_MINIMUM:
      if (k == 'F' && (c = float_splat_operand(instr, &cv)) >= 0 && !isnan(cv) && !(cv == 0 && !signbit(cv))) {
        DEF("((isnan(%s) || %s < %s) ? %s : %s)", c ? a : b, c ? a : b, c ? b : a, c ? a : b, c ? b : a);
        return NULL;
      }
      break;
    default: break;
  }
  bool found;
  bool via_double = (k == 'F' || k == 'C') && !dbl && math_via_double(E->target, instr->opcode, k);
  const char *tmpl = elementwise_template(instr->opcode, k, dbl || via_double, &found);
  if (!found) return el_unimplemented(instr, "unsupported op stablehlo.%s", hlo_opcode_name(instr->opcode));
  if (!tmpl) return unsupported_type(instr, t);
  int w = hlo_element_type_bit_width(t);
  template_args_t x = {a, b, glsl_compute_type_on(E->target, t), glsl_compute_type_on(E->target, rt),
                       dbl ? "double" : "float", w == 64 ? "uint64_t" : "uint", w};
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  if (via_double) {
    /* the double versions of the helpers (shaders/double.glsl, the dvec2
     * instantiation of complex_generic.glsl), rounded once at the end */
    const char *wide = k == 'C' ? "dvec2" : "double";
    char wa[EL_NAME_MAX + 8], wb[EL_NAME_MAX + 8];
    snprintf(wa, sizeof wa, "%s(%s)", wide, a);
    snprintf(wb, sizeof wb, "%s(%s)", wide, b);
    bool complex_result = kind_of(rt) == 'C';
    x = (template_args_t){wa, wb, wide, complex_result ? "dvec2" : "double", "double", "uint", w};
    E->features |= GLSL_HELPERS_DOUBLE | GLSL_FEATURE_FLOAT64 | (k == 'C' ? GLSL_HELPERS_DCOMPLEX : 0);
    strbuf_printf(&sb, "%s(", complex_result ? "vec2" : "float");
    expand_template(&sb, tmpl, &x);
    strbuf_append(&sb, ")");
  } else {
    expand_template(&sb, tmpl, &x);
  }
  if (sb.failed) {
    strbuf_free(&sb);
    return VKHLO_NO_MEMORY();
  }
  DEF("%s", sb.data ? sb.data : "");
  strbuf_free(&sb);
#undef DEF
  return NULL;
}

/* bitcast_convert (spec 'bitcast_convert') between different widths: the
 * narrow side has one more dimension, the pieces in little-endian order. */
static vkhlo_status_t emit_bitcast_convert(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  hlo_element_type_t from = os->element_type, to = instr->shape.element_type;
  int wf = hlo_element_type_bit_width(from), wt = hlo_element_type_bit_width(to);
  if (wf == wt) {
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &v));
    return emit_bitcast_same(E, instr, from, to, v.s, out);
  }
  if (kind_of(from) == 'C' || kind_of(to) == 'C')
    return emit_bitcast_complex(E, instr, index, NULL, out);
  if (wf > 64 || wt > 64) return unsupported_type(instr, to);
  if (emu64_bitcast_involved(E, instr)) return emu64_bitcast_convert(E, instr, index, out);
  el_use_type(E, from);
  el_use_type(E, to);
  if (wf == 64 || wt == 64) E->features |= GLSL_FEATURE_INT64;
  const char *bt = (wf == 64 || wt == 64) ? "uint64_t" : "uint";
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  el_name_t bits;
  if (wf > wt) {
    /* wide -> narrow: result[..., k] = bits(op[...]) >> (k * wt) */
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &v));
    append_to_bits(&sb, from, v.s);
    el_fresh(E, "v", &bits);
    el_line(E, instr, "%s %s = %s(%s) >> (%s * %d);", bt, bits.s, bt, sb.data ? sb.data : "0",
            index[instr->shape.rank - 1].s, wt);
    strbuf_free(&sb);
    strbuf_init(&sb, E->allocator);
    append_from_bits(&sb, to, bits.s);
    el_def(E, instr, to, false, out, "%s", sb.data ? sb.data : "0");
  } else {
    /* narrow -> wide: bits = sum_k bits(op[..., k]) << (k * wf) */
    int n = wt / wf;
    el_name_t oi[HLO_MAX_RANK];
    for (int d = 0; d < instr->shape.rank; d++) oi[d] = index[d];
    el_fresh(E, "v", &bits);
    el_line(E, instr, "%s %s = %s(0);", bt, bits.s, bt);
    for (int p = 0; p < n; p++) {
      el_name_t v;
      el_const_index(&oi[os->rank - 1], p);
      VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &v));
      strbuf_free(&sb);
      strbuf_init(&sb, E->allocator);
      append_to_bits(&sb, from, v.s);
      el_line(E, instr, "%s |= %s(%s) << %d;", bits.s, bt, sb.data ? sb.data : "0", p * wf);
    }
    strbuf_free(&sb);
    strbuf_init(&sb, E->allocator);
    append_from_bits(&sb, to, bits.s);
    el_def(E, instr, to, false, out, "%s", sb.data ? sb.data : "0");
  }
  strbuf_free(&sb);
  return NULL;
}

/* ---------------------------------------------------- data movement */

/* iota (spec 'iota'): result[i] = convert(i[iota_dimension]). */
static vkhlo_status_t emit_iota(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                const el_name_t *index, el_name_t *out) {
  int64_t d = instr->attrs.dimension;
  if (d < 0 || d >= instr->shape.rank) return el_unimplemented(instr, "bad iota_dimension");
  el_convert(E, instr, HLO_S32, instr->shape.element_type, index[d].s, out);
  return NULL;
}

/* broadcast_in_dim (spec 'broadcast_in_dim'): operand index d is the result
 * index broadcast_dimensions[d], or 0 where the operand dimension is 1. */
static vkhlo_status_t emit_broadcast_in_dim(elemental_emitter_t *E,
                                            const hlo_instruction_t *instr,
                                            const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  el_name_t oi[HLO_MAX_RANK];
  for (int d = 0; d < os->rank; d++) {
    int64_t rd = dims_get(instr->attrs.broadcast_dimensions, d, d);
    if (os->dimensions[d] == 1 || rd < 0 || rd >= instr->shape.rank) el_const_index(&oi[d], 0);
    else oi[d] = index[rd];
  }
  return el_operand(E, instr, 0, oi, out);
}

/* broadcast (legacy): result dims = broadcast_sizes ++ operand dims. */
static vkhlo_status_t emit_broadcast(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  int lead = instr->shape.rank - os->rank;
  return el_operand(E, instr, 0, index + lead, out);
}

/* The linear_memo key of |index| in |shape| into |key|; false when it has
 * no dimension of size > 1 or does not fit. */
static bool linear_key(const hlo_shape_t *shape, const el_name_t *index, char *key, size_t cap) {
  size_t len = 0;
  key[0] = 0;
  for (int d = 0; d < shape->rank; d++) {
    if (shape->dimensions[d] == 1) continue;
    int n = snprintf(key + len, cap - len, "%s:%lld;", index[d].s, (long long)shape->dimensions[d]);
    if (n < 0 || (size_t)n >= cap - len) return false;
    len += (size_t)n;
  }
  return len > 0;
}

static void linear_memo_add(elemental_emitter_t *E, const hlo_shape_t *shape, const el_name_t *index,
                            const char *linear) {
  el_linear_entry_t *m = &E->linear_memo[E->linear_memo_next];
  if (strlen(linear) < sizeof m->linear.s && linear_key(shape, index, m->key, sizeof m->key)) {
    snprintf(m->linear.s, sizeof m->linear.s, "%s", linear);
    E->linear_memo_next = (E->linear_memo_next + 1) % EL_LINEAR_MEMO;
  }
}

static void delinearize(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *shape,
                        const char *linear, el_name_t *out);

/* A lane position's index (see elemental_emitter_t.lanes): its base's,
 * made once while in scope, with the offset added to the last component. */
static bool lane_index(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *shape,
                       const char *linear, el_name_t *out) {
  int W = E->wide_lanes, r = shape->rank;
  if (W < 2 || r < 1 || shape->dimensions[r - 1] % W != 0) return false;
  const el_lane_position_t *lane = NULL;
  for (int i = 0; i < E->lane_count && !lane; i++)
    if (strcmp(E->lanes[i].linear.s, linear) == 0) lane = &E->lanes[i];
  if (!lane) return false;
  const el_base_index_t *b = NULL;
  for (int i = 0; i < EL_BASES && !b; i++)
    if (E->bases[i].rank == r && memcmp(E->bases[i].dims, shape->dimensions, sizeof(int64_t) * (size_t)r) == 0 &&
        strcmp(E->bases[i].linear.s, lane->base.s) == 0 && glsl_scope_open(&E->glsl, E->bases[i].scope))
      b = &E->bases[i];
  if (!b) {
    el_base_index_t *n = &E->bases[E->base_next];
    E->base_next = (E->base_next + 1) % EL_BASES;
    delinearize(E, instr, shape, lane->base.s, n->index);
    n->rank = r;
    memcpy(n->dims, shape->dimensions, sizeof(int64_t) * (size_t)r);
    n->linear = lane->base;
    n->scope = glsl_innermost(&E->glsl);
    b = n;
  }
  for (int d = 0; d < r - 1; d++) out[d] = b->index[d];
  if (lane->offset == 0) idx_def(E, instr, &out[r - 1], "%s", b->index[r - 1].s);
  else idx_def(E, instr, &out[r - 1], "%s + %d", b->index[r - 1].s, lane->offset);
  linear_memo_add(E, shape, out, linear);
  return true;
}

void el_delinearize(elemental_emitter_t *E, const hlo_instruction_t *instr,
                        const hlo_shape_t *shape, const char *linear, el_name_t *out) {
  if (!lane_index(E, instr, shape, linear, out)) delinearize(E, instr, shape, linear, out);
}

static void delinearize(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *shape,
                        const char *linear, el_name_t *out) {
  int64_t stride = 1;
  for (int d = shape->rank - 1; d >= 0; d--) {
    int64_t n = shape->dimensions[d];
    if (n == 1) el_const_index(&out[d], 0);
    else if (d == 0 && stride == 1) idx_def(E, instr, &out[d], "%s", linear);
    else if (d == 0) idx_def(E, instr, &out[d], "%s / %lld", linear, (long long)stride);
    else if (stride == 1) idx_def(E, instr, &out[d], "%s %% %lld", linear, (long long)n);
    else idx_def(E, instr, &out[d], "(%s / %lld) %% %lld", linear, (long long)stride, (long long)n);
    stride *= n;
  }
  linear_memo_add(E, shape, out, linear);
}

/* The position el_delinearize made |index| (in |shape|) from, if it made it. */
static bool linear_memo_find(const elemental_emitter_t *E, const hlo_shape_t *shape, const el_name_t *index,
                             el_name_t *out) {
  char key[sizeof E->linear_memo[0].key];
  if (!linear_key(shape, index, key, sizeof key)) return false;
  for (int i = 0; i < EL_LINEAR_MEMO; i++)
    if (strcmp(E->linear_memo[i].key, key) == 0) {
      *out = E->linear_memo[i].linear;
      return true;
    }
  return false;
}

/* reshape (spec 'reshape'): same row-major position in the operand. */
static vkhlo_status_t emit_reshape(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                   const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  if (hlo_shape_compatible_dims(os, &instr->shape)) return el_operand(E, instr, 0, index, out);
  /* Only dimensions of size 1 added or removed (JAX's keepdims): the
   * operand's index is the result's without them, no arithmetic. */
  int a = 0, b = 0;
  el_name_t si[HLO_MAX_RANK];
  for (;;) {
    while (a < os->rank && os->dimensions[a] == 1) el_const_index(&si[a++], 0);
    while (b < instr->shape.rank && instr->shape.dimensions[b] == 1) b++;
    if (a == os->rank || b == instr->shape.rank || os->dimensions[a] != instr->shape.dimensions[b]) break;
    si[a++] = index[b++];
  }
  if (a == os->rank && b == instr->shape.rank) return el_operand(E, instr, 0, si, out);
  el_name_t l, oi[HLO_MAX_RANK];
  if (!linear_memo_find(E, &instr->shape, index, &l)) {
    strbuf_t lin;
    strbuf_init(&lin, E->allocator);
    el_append_linear(&lin, &instr->shape, index);
    idx_def(E, instr, &l, "%s", lin.data ? lin.data : "0");
    strbuf_free(&lin);
  }
  /* Row-major data: the reshape's element at position l is the operand's
   * element at position l.  Loading it there avoids the divisions of
   * delinearizing, which matter inside contraction loops. */
  if (E->operand_linear && !E->scope) {
    bool handled = false;
    VKHLO_RETURN_IF_ERROR(E->operand_linear(E, instr, 0, l.s, out, &handled));
    if (handled) return NULL;
  }
  el_delinearize(E, instr, os, l.s, oi);
  return el_operand(E, instr, 0, oi, out);
}

/* transpose (spec 'transpose'): result[i] = operand[j], j[permutation[d]] = i[d]. */
static vkhlo_status_t emit_transpose(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     const el_name_t *index, el_name_t *out) {
  el_name_t oi[HLO_MAX_RANK];
  for (int d = 0; d < instr->shape.rank; d++) {
    int64_t p = dims_get(instr->attrs.permutation, d, d);
    if (p < 0 || p >= instr->shape.rank) return el_unimplemented(instr, "bad permutation");
    oi[p] = index[d];
  }
  return el_operand(E, instr, 0, oi, out);
}

/* slice (spec 'slice'): operand index = start + index * stride. */
static vkhlo_status_t emit_slice(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 const el_name_t *index, el_name_t *out) {
  el_name_t oi[HLO_MAX_RANK];
  for (int d = 0; d < instr->shape.rank; d++) {
    int64_t s = dims_get(instr->attrs.start_indices, d, 0);
    int64_t st = dims_get(instr->attrs.strides, d, 1);
    if (s == 0 && st == 1) oi[d] = index[d];
    else if (st == 1) idx_def(E, instr, &oi[d], "%s + %lld", index[d].s, (long long)s);
    else idx_def(E, instr, &oi[d], "%s * %lld + %lld", index[d].s, (long long)st, (long long)s);
  }
  return el_operand(E, instr, 0, oi, out);
}

/* reverse (spec 'reverse'): operand index = dim - 1 - index on |dimensions|. */
static vkhlo_status_t emit_reverse(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                   const el_name_t *index, el_name_t *out) {
  el_name_t oi[HLO_MAX_RANK];
  for (int d = 0; d < instr->shape.rank; d++) {
    if (hlo_dims_contains(instr->attrs.dimensions, d))
      idx_def(E, instr, &oi[d], "%lld - %s", (long long)(instr->shape.dimensions[d] - 1),
              index[d].s);
    else oi[d] = index[d];
  }
  return el_operand(E, instr, 0, oi, out);
}

/* Declares an uninitialized local of type |t|. */
static void declare(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                    el_name_t *out) {
  el_use_type(E, t);
  el_fresh(E, "v", out);
  el_line(E, instr, "%s %s;", glsl_compute_type_on(E->target, t), out->s);
}

/* concatenate (spec 'concatenate'): the operand whose range along
 * |dimension| holds the index, at the index minus the range's start. */
static vkhlo_status_t emit_concatenate(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       const el_name_t *index, el_name_t *out) {
  int64_t dim = instr->attrs.dimension;
  if (dim < 0 || dim >= instr->shape.rank) return el_unimplemented(instr, "bad dimension");
  declare(E, instr, instr->shape.element_type, out);
  el_name_t oi[HLO_MAX_RANK];
  for (int d = 0; d < instr->shape.rank; d++) oi[d] = index[d];
  int64_t offset = 0;
  glsl_scope_t branch = {0};
  for (int k = 0; k < instr->operand_count; k++) {
    int64_t n = instr->operands[k]->shape.dimensions[dim];
    if (k + 1 < instr->operand_count && k)
      branch = el_else(E, instr, branch, "else if (%s < %lld) {", index[dim].s, (long long)(offset + n));
    else if (k + 1 < instr->operand_count)
      branch = el_open(E, instr, "if (%s < %lld) {", index[dim].s, (long long)(offset + n));
    else if (k) branch = el_else(E, instr, branch, "else {");
    else branch = el_open(E, instr, "{");
    if (offset) idx_def(E, instr, &oi[dim], "%s - %lld", index[dim].s, (long long)offset);
    else oi[dim] = index[dim];
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, oi, &v));
    el_line(E, instr, "%s = %s;", out->s, v.s);
    offset += n;
  }
  el_close(E, instr, branch);
  return NULL;
}

/* pad (spec 'pad'): position p = index - edge_padding_low is an operand
 * element when p >= 0, p % (interior + 1) == 0 and p / (interior + 1) <
 * dim; otherwise the padding value.  Negative padding just shifts p. */
static vkhlo_status_t emit_pad(elemental_emitter_t *E, const hlo_instruction_t *instr,
                               const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  el_name_t inb, oi[HLO_MAX_RANK];
  el_fresh(E, "b", &inb);
  el_line(E, instr, "bool %s = true;", inb.s);
  for (int d = 0; d < os->rank; d++) {
    int64_t lo = dims_get(instr->attrs.edge_padding_low, d, 0);
    int64_t s = dims_get(instr->attrs.interior_padding, d, 0) + 1;
    el_name_t p;
    if (lo) idx_def(E, instr, &p, "%s - %lld", index[d].s, (long long)lo);
    else p = index[d];
    if (s == 1) {
      el_line(E, instr, "%s = %s && %s >= 0 && %s < %lld;", inb.s, inb.s, p.s, p.s,
              (long long)os->dimensions[d]);
      oi[d] = p;
    } else {
      el_line(E, instr, "%s = %s && %s >= 0 && %s %% %lld == 0 && %s < %lld;", inb.s, inb.s, p.s,
              p.s, (long long)s, p.s, (long long)((os->dimensions[d] - 1) * s + 1));
      idx_def(E, instr, &oi[d], "%s / %lld", p.s, (long long)s);
    }
  }
  declare(E, instr, instr->shape.element_type, out);
  glsl_scope_t branch = el_open(E, instr, "if (%s) {", inb.s);
  el_name_t v;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, oi, &v));
  el_line(E, instr, "%s = %s;", out->s, v.s);
  branch = el_else(E, instr, branch, "else {");
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, NULL, &v));
  el_line(E, instr, "%s = %s;", out->s, v.s);
  el_close(E, instr, branch);
  return NULL;
}

/* A start index operand (any integer type), clamped to [0, hi], as int. */
static vkhlo_status_t clamped_start(elemental_emitter_t *E, const hlo_instruction_t *instr, int k,
                                    int64_t hi, el_name_t *out) {
  el_name_t s;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, NULL, &s));
  hlo_element_type_t t = instr->operands[k]->shape.element_type;
  const char *ct = glsl_compute_type(t);
  if (hi < 0) hi = 0;
  if (glsl_type_is_emulated64(E->target, t)) emu64_index(E, instr, t, s.s, 0, hi, out);
  else if (kind_of(t) == 'S')
    idx_def(E, instr, out, "int(clamp(%s, %s(0), %s(%lld)))", s.s, ct, ct, (long long)hi);
  else if (kind_of(t) == 'U')
    idx_def(E, instr, out, "int(min(%s, %s(%lld)))", s.s, ct, (long long)hi);
  else return unsupported_type(instr, t);
  return NULL;
}

/* dynamic_slice (spec 'dynamic_slice'): start indices are clamped to
 * [0, dim - slice_size]; operand index = start + index. */
static vkhlo_status_t emit_dynamic_slice(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                         const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  el_name_t oi[HLO_MAX_RANK];
  if (instr->operand_count != os->rank + 1)
    return el_unimplemented(instr, "dynamic_slice with tensor start indices");
  for (int d = 0; d < os->rank; d++) {
    el_name_t s;
    VKHLO_RETURN_IF_ERROR(
        clamped_start(E, instr, d + 1, os->dimensions[d] - instr->shape.dimensions[d], &s));
    idx_def(E, instr, &oi[d], "%s + %s", s.s, index[d].s);
  }
  return el_operand(E, instr, 0, oi, out);
}

/* dynamic_update_slice (spec 'dynamic_update_slice'): the update where the
 * index lies in [start, start + update dims) (start clamped to
 * [0, dim - update dim]), the operand elsewhere. */
static vkhlo_status_t emit_dynamic_update_slice(elemental_emitter_t *E,
                                                const hlo_instruction_t *instr,
                                                const el_name_t *index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  const hlo_shape_t *us = &instr->operands[1]->shape;
  if (instr->operand_count != os->rank + 2)
    return el_unimplemented(instr, "dynamic_update_slice with tensor start indices");
  el_name_t ui[HLO_MAX_RANK], inb;
  el_fresh(E, "b", &inb);
  el_line(E, instr, "bool %s = true;", inb.s);
  for (int d = 0; d < os->rank; d++) {
    el_name_t s;
    VKHLO_RETURN_IF_ERROR(
        clamped_start(E, instr, d + 2, os->dimensions[d] - us->dimensions[d], &s));
    idx_def(E, instr, &ui[d], "%s - %s", index[d].s, s.s);
    el_line(E, instr, "%s = %s && %s >= 0 && %s < %lld;", inb.s, inb.s, ui[d].s, ui[d].s,
            (long long)us->dimensions[d]);
  }
  declare(E, instr, instr->shape.element_type, out);
  el_name_t v;
  glsl_scope_t branch = el_open(E, instr, "if (%s) {", inb.s);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, ui, &v));
  el_line(E, instr, "%s = %s;", out->s, v.s);
  branch = el_else(E, instr, branch, "else {");
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &v));
  el_line(E, instr, "%s = %s;", out->s, v.s);
  el_close(E, instr, branch);
  return NULL;
}

vkhlo_status_t el_dus_window(elemental_emitter_t *E, const hlo_instruction_t *instr, const el_name_t *ui,
                             el_name_t *out_index, el_name_t *out) {
  const hlo_shape_t *os = &instr->operands[0]->shape;
  const hlo_shape_t *us = &instr->operands[1]->shape;
  if (instr->opcode != HLO_OPCODE_DYNAMIC_UPDATE_SLICE || instr->operand_count != os->rank + 2)
    return el_unimplemented(instr, "in-place dynamic_update_slice with tensor start indices");
  for (int d = 0; d < os->rank; d++) {
    el_name_t s;
    VKHLO_RETURN_IF_ERROR(clamped_start(E, instr, d + 2, os->dimensions[d] - us->dimensions[d], &s));
    idx_def(E, instr, &out_index[d], "%s + %s", ui[d].s, s.s);
  }
  return el_operand(E, instr, 1, ui, out);
}

/* gather (spec 'gather'):
 *   batch_index = result_index[batch_dims]   (dims not in offset_dims)
 *   start_index = start_indices[batch_index with ':' at index_vector_dim]
 *   full_start_index[start_index_map[k]] = clamp(start_index[k], 0,
 *                                  dim(operand) - slice_sizes)
 *   full_batching_index[operand_batching_dims[i]] =
 *       batch_index[start_indices_batching_dims[i] (minus 1 past ivd)]
 *   full_offset_index = result_index[offset_dims] with 0 inserted at
 *                       collapsed_slice_dims and operand_batching_dims
 *   operand_index = full_start_index + full_batching_index + full_offset_index */
static vkhlo_status_t emit_gather(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *index, el_name_t *out) {
  const hlo_attrs_t *a = &instr->attrs;
  const hlo_shape_t *os = &instr->operands[0]->shape;
  const hlo_shape_t *ss = &instr->operands[1]->shape;
  int64_t ivd = a->index_vector_dim;
  el_name_t batch[HLO_MAX_RANK];
  int nb = 0;
  for (int d = 0; d < instr->shape.rank; d++)
    if (!hlo_dims_contains(a->offset_dims, d)) batch[nb++] = index[d];
  /* start_indices index with index_vector_dim left to fill */
  el_name_t si[HLO_MAX_RANK];
  int bi = 0;
  for (int d = 0; d < ss->rank; d++) {
    if (d == ivd) el_const_index(&si[d], 0);
    else si[d] = batch[bi++];
  }
  el_name_t full[HLO_MAX_RANK];
  for (int d = 0; d < os->rank; d++) el_const_index(&full[d], 0);
  for (int k = 0; k < a->start_index_map.count; k++) {
    int64_t od = a->start_index_map.data[k];
    if (ivd < ss->rank) el_const_index(&si[ivd], k);
    el_name_t s;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, si, &s));
    hlo_element_type_t t = ss->element_type;
    const char *ct = glsl_compute_type(t);
    int64_t hi = os->dimensions[od] - dims_get(a->slice_sizes, (int)od, 1);
    if (hi < 0) hi = 0;
    if (glsl_type_is_emulated64(E->target, t)) emu64_index(E, instr, t, s.s, 0, hi, &full[od]);
    else if (kind_of(t) == 'S')
      idx_def(E, instr, &full[od], "int(clamp(%s, %s(0), %s(%lld)))", s.s, ct, ct, (long long)hi);
    else if (kind_of(t) == 'U')
      idx_def(E, instr, &full[od], "int(min(%s, %s(%lld)))", s.s, ct, (long long)hi);
    else return unsupported_type(instr, t);
  }
  for (int i = 0; i < a->operand_batching_dims.count; i++) {
    int64_t od = a->operand_batching_dims.data[i];
    int64_t sd = dims_get(a->start_indices_batching_dims, i, 0);
    int64_t b = sd < ivd ? sd : sd - 1;
    if (ivd >= ss->rank) b = sd;
    if (strcmp(full[od].s, "0") == 0) full[od] = batch[b];
    else idx_def(E, instr, &full[od], "%s + %s", full[od].s, batch[b].s);
  }
  int oi = 0;
  for (int d = 0; d < os->rank; d++) {
    if (hlo_dims_contains(a->collapsed_slice_dims, d) || hlo_dims_contains(a->operand_batching_dims, d))
      continue;
    int64_t rd = dims_get(a->offset_dims, oi++, 0);
    if (strcmp(full[d].s, "0") == 0) full[d] = index[rd];
    else idx_def(E, instr, &full[d], "%s + %s", full[d].s, index[rd].s);
  }
  return el_operand(E, instr, 0, full, out);
}

/* ------------------------------------------------------- reductions */

int64_t el_open_loops(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t outer, int count,
                      const int64_t *dims, el_name_t *vars, glsl_scope_t *loops) {
  for (int i = 0; i < count; i++) {
    outer = dims[i] > 0 && outer > INT64_MAX / 4 / dims[i] ? INT64_MAX / 4 : outer * dims[i];
    el_count_loop_iterations(E, instr, outer);
    el_fresh(E, "r", &vars[i]);
    loops[i] = el_open(E, instr, "for (int %s = 0; %s < %lld; %s++) {", vars[i].s, vars[i].s,
                       (long long)dims[i], vars[i].s);
  }
  return outer;
}

void el_close_loops(elemental_emitter_t *E, int count, const glsl_scope_t *loops) {
  for (int i = count - 1; i >= 0; i--)
    if (loops[i].id) el_close(E, NULL, loops[i]); /* id 0: a loop not opened */
}

/* Calls the function of |c| on |args|, results into the existing locals |res|. */
static vkhlo_status_t call_function(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                    const hlo_computation_t *c, int nargs, const el_name_t *args,
                                    int nres, const el_name_t *res) {
  el_name_t fn;
  VKHLO_RETURN_IF_ERROR(el_function(E, instr, c, &fn));
  strbuf_t call;
  strbuf_init(&call, E->allocator);
  strbuf_printf(&call, "%s(", fn.s);
  for (int i = 0; i < nargs; i++) strbuf_printf(&call, "%s%s", i ? ", " : "", args[i].s);
  for (int i = 0; i < nres; i++) strbuf_printf(&call, ", %s", res[i].s);
  strbuf_append(&call, ");");
  if (call.failed) {
    strbuf_free(&call);
    return VKHLO_NO_MEMORY();
  }
  el_line(E, instr, "%s", call.data);
  strbuf_free(&call);
  return NULL;
}

static vkhlo_status_t need_called(const hlo_instruction_t *instr, int n) {
  if (instr->called_count < n)
    return el_unimplemented(instr, "stablehlo.%s without its computation",
                            hlo_opcode_name(instr->opcode));
  return NULL;
}

int64_t el_reduced_count(const hlo_instruction_t *instr) {
  const hlo_shape_t *is = &instr->operands[0]->shape;
  int64_t count = 1;
  for (int d = 0; d < is->rank; d++)
    if (hlo_dims_contains(instr->attrs.dimensions, d)) count *= is->dimensions[d];
  return count;
}

bool el_reduce_lanes_ok(const codegen_target_t *target, const hlo_instruction_t *instr) {
  if (instr->opcode != HLO_OPCODE_REDUCE || instr->called_count < 1 || instr->operand_count < 2 ||
      el_reduced_count(instr) < EL_LANES_REDUCE_MIN)
    return false;
  for (int k = 0; k < instr->operand_count / 2; k++) {
    const char *t = glsl_compute_type_on(target, el_result_shape(instr, k)->element_type);
    if (strcmp(t, "float") && strcmp(t, "int") && strcmp(t, "uint") && strcmp(t, "bool") && strcmp(t, "vec2") &&
        strcmp(t, "uvec2"))
      return false;
  }
  return true;
}

/* The input index |ii| of reduce |instr| at output index |index| and
 * position |r| (an int expression) of its reduced elements, row-major
 * over the reduced dimensions. */
static void reduced_index(elemental_emitter_t *E, const hlo_instruction_t *instr, const el_name_t *index,
                          const char *r, el_name_t *ii) {
  const hlo_shape_t *is = &instr->operands[0]->shape;
  int64_t inner = 1;
  for (int d = is->rank - 1, oi = is->rank - instr->attrs.dimensions.count - 1; d >= 0; d--) {
    if (!hlo_dims_contains(instr->attrs.dimensions, d)) {
      ii[d] = index[oi--];
      continue;
    }
    int64_t size = is->dimensions[d];
    if (inner == 1 && size == el_reduced_count(instr)) snprintf(ii[d].s, sizeof ii[d].s, "%s", r);
    else el_def(E, instr, HLO_S32, false, &ii[d], "(%s / %lld) %% %lld", r, (long long)inner, (long long)size);
    inner *= size;
  }
}

/* reduce over a subgroup's lanes (E->subgroup_reduce): lane l folds
 * reduced elements l, l + S, l + 2S, ... (S = gl_SubgroupSize) in order,
 * starting from its first one; the lanes' partials then combine by
 * butterfly, the lower lane's first (body(lower, upper) on both lanes of
 * a pair, so every lane holds the same value; a lane without elements
 * takes its partner's), and the init values fold in last: body(init,
 * total).  The spec leaves a reduce's order implementation-defined (spec
 * 'reduce', schedule); integer, maximum and minimum results are those of
 * the loop in order. */
static vkhlo_status_t reduce_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr, const el_name_t *index,
                                   int n, el_name_t *acc) {
  int64_t count = el_reduced_count(instr);
  el_name_t part[EL_MAX_RESULTS], ok, ii[HLO_MAX_RANK], v[EL_MAX_RESULTS];
  const char *ty[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) {
    ty[k] = glsl_compute_type_on(E->target, el_result_shape(instr, k)->element_type);
    el_fresh(E, "p", &part[k]);
    el_line(E, instr, "%s %s = %s;", ty[k], part[k].s, acc[k].s);
  }
  el_fresh(E, "ok", &ok);
  el_line(E, instr, "bool %s = gl_SubgroupInvocationID < %lldu;", ok.s, (long long)count);
  glsl_scope_t first = el_open(E, instr, "if (%s) {", ok.s);
  reduced_index(E, instr, index, "int(gl_SubgroupInvocationID)", ii);
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, ii, &v[k]));
  for (int k = 0; k < n; k++) el_line(E, instr, "%s = %s;", part[k].s, v[k].s);
  el_name_t r;
  el_fresh(E, "r", &r);
  el_count_loop_iterations(E, instr, count);
  glsl_scope_t loop = el_open(E, instr, "for (int %s = int(gl_SubgroupInvocationID + gl_SubgroupSize); %s < %lld; %s += int(gl_SubgroupSize)) {",
                              r.s, r.s, (long long)count, r.s);
  reduced_index(E, instr, index, r.s, ii);
  VKHLO_RETURN_IF_ERROR(el_reduce_step(E, instr, ii, part));
  el_close(E, instr, loop);
  el_close(E, instr, first);
  el_name_t w, qo, q[EL_MAX_RESULTS], lo[2 * EL_MAX_RESULTS], res[EL_MAX_RESULTS];
  el_fresh(E, "w", &w);
  glsl_scope_t fly = el_open(E, instr, "for (uint %s = 1u; %s < gl_SubgroupSize; %s <<= 1) {", w.s, w.s, w.s);
  for (int k = 0; k < n; k++) {
    el_fresh(E, "q", &q[k]);
    el_line(E, instr, "%s %s = subgroupShuffleXor(%s, %s);", ty[k], q[k].s, part[k].s, w.s);
  }
  el_fresh(E, "qo", &qo);
  el_line(E, instr, "bool %s = subgroupShuffleXor(%s, %s);", qo.s, ok.s, w.s);
  glsl_scope_t both = el_open(E, instr, "if (%s && %s) {", ok.s, qo.s);
  for (int k = 0; k < n; k++) { /* (lower lane's, upper lane's) */
    el_fresh(E, "lo", &lo[k]);
    el_line(E, instr, "%s %s = (gl_SubgroupInvocationID & %s) == 0u ? %s : %s;", ty[k], lo[k].s, w.s, part[k].s, q[k].s);
    el_fresh(E, "hi", &lo[n + k]);
    el_line(E, instr, "%s %s = (gl_SubgroupInvocationID & %s) == 0u ? %s : %s;", ty[k], lo[n + k].s, w.s, q[k].s, part[k].s);
    el_fresh(E, "c", &res[k]);
    el_line(E, instr, "%s %s;", ty[k], res[k].s);
  }
  VKHLO_RETURN_IF_ERROR(call_function(E, instr, instr->called_computations[0], 2 * n, lo, n, res));
  for (int k = 0; k < n; k++) el_line(E, instr, "%s = %s;", part[k].s, res[k].s);
  both = el_else(E, instr, both, "else if (%s) {", qo.s);
  for (int k = 0; k < n; k++) el_line(E, instr, "%s = %s;", part[k].s, q[k].s);
  el_close(E, instr, both);
  el_line(E, instr, "%s = %s || %s;", ok.s, ok.s, qo.s);
  el_close(E, instr, fly);
  el_name_t args[2 * EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) args[k] = acc[k], args[n + k] = part[k];
  return call_function(E, instr, instr->called_computations[0], 2 * n, args, n, acc);
}

/* reduce (spec 'reduce'): for N inputs and N init values, each result
 * element accumulates body(acc..., input[index]...) from the init values
 * over the reduced dimensions in row-major order. */
static vkhlo_status_t emit_reduce(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  int n = instr->operand_count / 2;
  if (n < 1 || n > EL_MAX_RESULTS / 2) return el_unimplemented(instr, "reduce with %d inputs", n);
  const hlo_shape_t *is = &instr->operands[0]->shape;
  el_name_t acc[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) {
    el_name_t init;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, n + k, NULL, &init));
    hlo_element_type_t t = el_result_shape(instr, k)->element_type;
    el_use_type(E, t);
    el_fresh(E, "v", &acc[k]);
    el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, t), acc[k].s, init.s);
  }
  /* at the top level of main() only: shuffles need every lane there */
  if (E->subgroup_reduce && el_reduce_lanes_ok(E->target, instr) && glsl_at_root(&E->glsl) && !E->scope) {
    VKHLO_RETURN_IF_ERROR(reduce_lanes(E, instr, index, n, acc));
    for (int k = 0; k < n; k++) out[k] = acc[k];
    return NULL;
  }
  int64_t rdims[HLO_MAX_RANK] = {0};
  int nr = 0;
  for (int d = 0; d < is->rank; d++)
    if (hlo_dims_contains(instr->attrs.dimensions, d)) rdims[nr++] = is->dimensions[d];
  el_name_t vars[HLO_MAX_RANK], ii[HLO_MAX_RANK];
  glsl_scope_t loops[HLO_MAX_RANK];
  /* A row along the input's minor-most dimension may be read by words
   * (E->reduce_row): the loops of the other reduced dimensions open here. */
  bool try_row = n == 1 && nr >= 1 && E->reduce_row &&
                 hlo_dims_contains(instr->attrs.dimensions, is->rank - 1);
  int nouter = try_row ? nr - 1 : nr;
  int64_t outer = el_open_loops(E, instr, 1, nouter, rdims, vars, loops);
  int ri = 0, oi = 0;
  for (int d = 0; d < is->rank; d++) {
    if (!hlo_dims_contains(instr->attrs.dimensions, d)) ii[d] = index[oi++];
    else if (ri < nouter) ii[d] = vars[ri++];
    else snprintf(ii[d].s, sizeof ii[d].s, "0"); /* the row's: set below or by reduce_row */
  }
  bool handled = false;
  if (try_row)
    VKHLO_RETURN_IF_ERROR(E->reduce_row(E, instr, ii, is->rank - 1, rdims[nr - 1], acc, &handled));
  if (handled) el_count_loop_iterations(E, instr, outer * (rdims[nr - 1] / 8 + 2)); /* by words */
  if (try_row && !handled) {
    el_open_loops(E, instr, outer, 1, &rdims[nr - 1], &vars[nr - 1], &loops[nr - 1]);
    ii[is->rank - 1] = vars[nr - 1];
  }
  if (!handled) VKHLO_RETURN_IF_ERROR(el_reduce_step(E, instr, ii, acc));
  el_close_loops(E, handled ? nr - 1 : nr, loops);
  for (int k = 0; k < n; k++) out[k] = acc[k];
  return NULL;
}

vkhlo_status_t el_reduce_combine(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t *acc,
                                 const el_name_t *part) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  int n = instr->operand_count / 2;
  if (n < 1 || n > EL_MAX_RESULTS / 2) return el_unimplemented(instr, "reduce with %d inputs", n);
  el_name_t args[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) args[k] = acc[k], args[n + k] = part[k];
  return call_function(E, instr, instr->called_computations[0], 2 * n, args, n, acc);
}

vkhlo_status_t el_reduce_step(elemental_emitter_t *E, const hlo_instruction_t *instr,
                              const el_name_t *index, el_name_t *acc) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  int n = instr->operand_count / 2;
  if (n < 1 || n > EL_MAX_RESULTS / 2) return el_unimplemented(instr, "reduce with %d inputs", n);
  el_name_t v[EL_MAX_RESULTS / 2];
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, index, &v[k]));
  return el_reduce_combine(E, instr, acc, v);
}

/* Multiply-accumulate of dot_general / convolution in the result type:
 * acc = acc + convert(a) * convert(b) (i1: acc = acc || (a && b)). */
static void emit_mac(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t rt,
                     const el_name_t *acc, const el_name_t *a, hlo_element_type_t at,
                     const el_name_t *b, hlo_element_type_t bt) {
  el_name_t ca, cb;
  if (at != rt) el_convert(E, instr, at, rt, a->s, &ca);
  else ca = *a;
  if (bt != rt) el_convert(E, instr, bt, rt, b->s, &cb);
  else cb = *b;
  if (rt == HLO_PRED) {
    el_line(E, instr, "%s = %s || (%s && %s);", acc->s, acc->s, ca.s, cb.s);
    return;
  }
  if (glsl_type_is_emulated64(E->target, rt)) {
    emu64_mac(E, instr, acc->s, ca.s, cb.s);
    return;
  }
  strbuf_t sb, expr;
  strbuf_init(&sb, E->allocator);
  strbuf_init(&expr, E->allocator);
  if (kind_of(rt) == 'C') strbuf_printf(&expr, "%s + vk_cmul(%s, %s)", acc->s, ca.s, cb.s);
  else strbuf_printf(&expr, "%s + %s * %s", acc->s, ca.s, cb.s);
  /* f16/bf16 accumulate in float and round once at the end (like XLA). */
  if (rt == HLO_F16 || rt == HLO_BF16) strbuf_append(&sb, expr.data ? expr.data : "0");
  else glsl_append_normalized(&sb, rt, expr.data ? expr.data : "0");
  el_line(E, instr, "%s = %s;", acc->s, sb.data ? sb.data : "0");
  strbuf_free(&sb);
  strbuf_free(&expr);
}

static void finish_acc(elemental_emitter_t *E, const hlo_instruction_t *instr,
                       hlo_element_type_t rt, const el_name_t *acc, el_name_t *out) {
  if (rt == HLO_F16 || rt == HLO_BF16) el_def(E, instr, rt, true, out, "%s", acc->s);
  else *out = *acc;
}

static vkhlo_status_t check_mac_type(const hlo_instruction_t *instr, hlo_element_type_t rt) {
  glsl_type_t g;
  if (!glsl_type_lookup(rt, &g)) return unsupported_type(instr, rt);
  return NULL;
}

/* dot_general (spec 'dot_general'): result dims = batch, lhs free, rhs
 * free; sums lhs * rhs (converted to the result type) over the
 * contracting dimensions.  Legacy dot contracts lhs's last dimension with
 * rhs's first. */
vkhlo_status_t el_emit_dot_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *const *row_index, int rows, int lanes, el_name_t *out) {
  const el_name_t *index = row_index[0];
  if (lanes < 1 || rows < 1 || rows * lanes > EL_MAX_LANES)
    return VKHLO_INTERNAL("dot_general with %d x %d lanes", rows, lanes);
  const hlo_shape_t *ls = &instr->operands[0]->shape, *rs = &instr->operands[1]->shape;
  hlo_element_type_t rt = instr->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_mac_type(instr, rt));
  int64_t lb[HLO_MAX_RANK], rb[HLO_MAX_RANK], lc[HLO_MAX_RANK], rc[HLO_MAX_RANK];
  int nb, nc;
  if (instr->opcode == HLO_OPCODE_DOT) {
    nb = 0;
    nc = 1;
    lc[0] = ls->rank - 1;
    rc[0] = 0;
  } else {
    const hlo_attrs_t *a = &instr->attrs;
    nb = a->lhs_batching_dimensions.count;
    nc = a->lhs_contracting_dimensions.count;
    if (a->rhs_batching_dimensions.count != nb || a->rhs_contracting_dimensions.count != nc)
      return el_unimplemented(instr, "dot_general with mismatched dimension numbers");
    for (int i = 0; i < nb; i++) {
      lb[i] = a->lhs_batching_dimensions.data[i];
      rb[i] = a->rhs_batching_dimensions.data[i];
    }
    for (int i = 0; i < nc; i++) {
      lc[i] = a->lhs_contracting_dimensions.data[i];
      rc[i] = a->rhs_contracting_dimensions.data[i];
    }
  }
  el_name_t li[HLO_MAX_RANK], ri[HLO_MAX_RANK], vars[HLO_MAX_RANK];
  int64_t cdims[HLO_MAX_RANK];
  for (int i = 0; i < nc; i++) cdims[i] = ls->dimensions[lc[i]];
  el_name_t acc[EL_MAX_LANES];
  el_use_type(E, rt);
  for (int j = 0; j < rows * lanes; j++) {
    el_fresh(E, "v", &acc[j]);
    strbuf_t zero;
    strbuf_init(&zero, E->allocator);
    glsl_append_int_constant_on(&zero, E->target, rt, 0);
    el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, rt), acc[j].s,
            zero.data ? zero.data : "0");
    strbuf_free(&zero);
  }
  glsl_scope_t loops[HLO_MAX_RANK];
  el_open_loops(E, instr, 1, nc, cdims, vars, loops);
  int o = nb;
  for (int i = 0; i < nb; i++) {
    li[lb[i]] = index[i];
    ri[rb[i]] = index[i];
  }
  for (int i = 0; i < nc; i++) {
    li[lc[i]] = vars[i];
    ri[rc[i]] = vars[i];
  }
  int lfree[HLO_MAX_RANK], nlfree = 0, ofirst = o; /* lhs free dims, result dims from ofirst */
  for (int d = 0; d < ls->rank; d++) {
    bool used = false;
    for (int i = 0; i < nb; i++) used |= lb[i] == d;
    for (int i = 0; i < nc; i++) used |= lc[i] == d;
    if (!used) {
      lfree[nlfree++] = d;
      li[d] = index[o++];
    }
  }
  int last = -1; /* the rhs dim of the result's last dim (lanes run along it) */
  for (int d = 0; d < rs->rank; d++) {
    bool used = false;
    for (int i = 0; i < nb; i++) used |= rb[i] == d;
    for (int i = 0; i < nc; i++) used |= rc[i] == d;
    if (!used) {
      last = d;
      ri[d] = index[o++];
    }
  }
  if (lanes > 1 && (last < 0 || o != instr->shape.rank))
    return VKHLO_INTERNAL("dot_general lanes need a rhs free dimension last");
  if (rows > 1 && (nb != 0 || nlfree < 1)) return VKHLO_INTERNAL("dot_general rows need lhs free dimensions only");
  el_name_t a[EL_MAX_LANES], b[EL_MAX_LANES];
  for (int q = 0; q < rows; q++) { /* row q's lhs free indices come from its own result index */
    el_name_t lq[HLO_MAX_RANK];
    memcpy(lq, li, sizeof(el_name_t) * (size_t)ls->rank);
    for (int f = 0; f < nlfree; f++) lq[lfree[f]] = row_index[q][ofirst + f];
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, lq, &a[q]));
  }
  bool handled = false;
  if (lanes > 1 && E->operand_run)
    VKHLO_RETURN_IF_ERROR(E->operand_run(E, instr, 1, ri, last, lanes, b, &handled));
  for (int j = 0; j < lanes && !handled; j++) {
    el_name_t rj[HLO_MAX_RANK];
    memcpy(rj, ri, sizeof(el_name_t) * (size_t)rs->rank);
    if (j) idx_def(E, instr, &rj[last], "%s + %d", ri[last].s, j);
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, rj, &b[j]));
  }
  for (int q = 0; q < rows; q++)
    for (int j = 0; j < lanes; j++)
      emit_mac(E, instr, rt, &acc[q * lanes + j], &a[q], ls->element_type, &b[j], rs->element_type);
  el_close_loops(E, nc, loops);
  for (int j = 0; j < rows * lanes; j++) finish_acc(E, instr, rt, &acc[j], &out[j]);
  return NULL;
}

static vkhlo_status_t emit_dot_general(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       const el_name_t *index, el_name_t *out) {
  return el_emit_dot_lanes(E, instr, &index, 1, 1, out);
}

/* Input position of window element |w| for output position |o| along one
 * dimension after padding |lo| and base dilation |bd|:
 *   p = o * stride + w * wdil - lo, valid when p >= 0, p % bd == 0 and
 *   p / bd < dim.  ANDs validity into |valid|, writes the index to |pos|. */
static void window_position(elemental_emitter_t *E, const hlo_instruction_t *instr,
                            const char *o, int64_t stride, const char *w, int64_t wdil,
                            int64_t lo, int64_t bd, int64_t dim, const char *valid,
                            el_name_t *pos) {
  el_name_t p;
  /* Index arithmetic is 32-bit, so the padded extent is (as every other
   * literal here must be).  Then a stride past INT32_MAX leaves one window
   * (o is 0), and a window dilation past it leaves none for a window of
   * more than one position (the kernel never runs): either way the value
   * does not matter, and as a literal it would not compile. */
  if (stride > INT32_MAX) stride = 1;
  if (wdil > INT32_MAX) wdil = 1;
  idx_def(E, instr, &p, "%s * %lld + %s * %lld - %lld", o, (long long)stride, w, (long long)wdil,
          (long long)lo);
  if (bd == 1) {
    el_line(E, instr, "%s = %s && %s >= 0 && %s < %lld;", valid, valid, p.s, p.s, (long long)dim);
    *pos = p;
  } else {
    el_line(E, instr, "%s = %s && %s >= 0 && %s %% %lld == 0 && %s < %lld;", valid, valid, p.s,
            p.s, (long long)bd, p.s, (long long)((dim - 1) * bd + 1));
    idx_def(E, instr, pos, "%s / %lld", p.s, (long long)bd);
  }
}

/* reduce_window (spec 'reduce_window'): pad (with the init values, base
 * dilation holes too), then reduce each window
 *   [index * window_strides, + (window_dimensions - 1) * window_dilations]
 * with body, accumulating from the init values.  Padded positions
 * contribute the init value. */
static vkhlo_status_t emit_reduce_window(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                         const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  const hlo_attrs_t *a = &instr->attrs;
  int n = instr->operand_count / 2;
  if (n < 1 || n > EL_MAX_RESULTS / 2)
    return el_unimplemented(instr, "reduce_window with %d inputs", n);
  const hlo_shape_t *is = &instr->operands[0]->shape;
  el_name_t acc[EL_MAX_RESULTS], init[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) {
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, n + k, NULL, &init[k]));
    hlo_element_type_t t = el_result_shape(instr, k)->element_type;
    el_use_type(E, t);
    el_fresh(E, "v", &acc[k]);
    el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, t), acc[k].s, init[k].s);
  }
  int64_t wdims[HLO_MAX_RANK];
  for (int d = 0; d < is->rank; d++) wdims[d] = dims_get(a->window_dimensions, d, 1);
  el_name_t vars[HLO_MAX_RANK], ii[HLO_MAX_RANK], valid;
  glsl_scope_t loops[HLO_MAX_RANK];
  el_open_loops(E, instr, 1, is->rank, wdims, vars, loops);
  el_fresh(E, "b", &valid);
  el_line(E, instr, "bool %s = true;", valid.s);
  for (int d = 0; d < is->rank; d++)
    window_position(E, instr, index[d].s, dims_get(a->window_strides, d, 1), vars[d].s,
                    dims_get(a->window_dilations, d, 1), dims_get(a->padding, 2 * d, 0),
                    dims_get(a->base_dilations, d, 1), is->dimensions[d], valid.s, &ii[d]);
  el_name_t args[EL_MAX_RESULTS], x[EL_MAX_RESULTS];
  for (int k = 0; k < n; k++) {
    args[k] = acc[k];
    declare(E, instr, instr->operands[k]->shape.element_type, &x[k]);
    args[n + k] = x[k];
  }
  glsl_scope_t branch = el_open(E, instr, "if (%s) {", valid.s);
  for (int k = 0; k < n; k++) {
    el_name_t v;
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, ii, &v));
    el_line(E, instr, "%s = %s;", x[k].s, v.s);
  }
  branch = el_else(E, instr, branch, "else {");
  for (int k = 0; k < n; k++) el_line(E, instr, "%s = %s;", x[k].s, init[k].s);
  el_close(E, instr, branch);
  VKHLO_RETURN_IF_ERROR(call_function(E, instr, instr->called_computations[0], 2 * n, args, n, acc));
  el_close_loops(E, is->rank, loops);
  for (int k = 0; k < n; k++) out[k] = acc[k];
  return NULL;
}

/* convolution (spec 'convolution'): for output (b, o, spatial s),
 *   feature groups: g = o / (O / feature_group_count), input feature
 *     c = g * C_kernel + ci;  batch groups: g = o / (O / batch_group_count),
 *     input batch = g * (N / batch_group_count) + b;
 *   for each kernel position k and ci: lhs position (padded, lhs-dilated)
 *     p = s * window_strides + k' * rhs_dilation - padding_low, where
 *     k' = K - 1 - k on reversed dims, valid when p % lhs_dilation == 0 and
 *     in range; acc += lhs[batch, c, p / lhs_dilation] * rhs[ci, o, k]. */
static vkhlo_status_t emit_convolution(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                       const el_name_t *index, el_name_t *out) {
  const hlo_attrs_t *a = &instr->attrs;
  const hlo_shape_t *ls = &instr->operands[0]->shape, *ks = &instr->operands[1]->shape;
  hlo_element_type_t rt = instr->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_mac_type(instr, rt));
  int ns = a->input_spatial_dimensions.count;
  if (a->kernel_spatial_dimensions.count != ns || a->output_spatial_dimensions.count != ns)
    return el_unimplemented(instr, "convolution with mismatched spatial dimensions");
  int64_t fgc = a->feature_group_count > 0 ? a->feature_group_count : 1;
  int64_t bgc = a->batch_group_count > 0 ? a->batch_group_count : 1;
  int64_t O = instr->shape.dimensions[a->output_feature_dimension];
  int64_t N = ls->dimensions[a->input_batch_dimension];
  int64_t CI = ks->dimensions[a->kernel_input_feature_dimension];
  const char *ob = index[a->output_batch_dimension].s;
  const char *of = index[a->output_feature_dimension].s;
  el_name_t li[HLO_MAX_RANK], ki[HLO_MAX_RANK];
  /* batch */
  if (bgc > 1)
    idx_def(E, instr, &li[a->input_batch_dimension], "(%s / %lld) * %lld + %s", of,
            (long long)(O / bgc), (long long)(N / bgc), ob);
  else snprintf(li[a->input_batch_dimension].s, EL_NAME_MAX, "%s", ob);
  ki[a->kernel_output_feature_dimension] = index[a->output_feature_dimension];
  el_name_t acc;
  el_use_type(E, rt);
  el_fresh(E, "v", &acc);
  {
    strbuf_t zero;
    strbuf_init(&zero, E->allocator);
    glsl_append_int_constant_on(&zero, E->target, rt, 0);
    el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, rt), acc.s,
            zero.data ? zero.data : "0");
    strbuf_free(&zero);
  }
  int64_t ldims[HLO_MAX_RANK + 1];
  ldims[0] = CI;
  for (int i = 0; i < ns; i++) ldims[i + 1] = ks->dimensions[a->kernel_spatial_dimensions.data[i]];
  el_name_t vars[HLO_MAX_RANK + 1], valid;
  glsl_scope_t loops[HLO_MAX_RANK + 1];
  el_open_loops(E, instr, 1, ns + 1, ldims, vars, loops);
  ki[a->kernel_input_feature_dimension] = vars[0];
  if (fgc > 1)
    idx_def(E, instr, &li[a->input_feature_dimension], "(%s / %lld) * %lld + %s", of,
            (long long)(O / fgc), (long long)CI, vars[0].s);
  else li[a->input_feature_dimension] = vars[0];
  el_fresh(E, "b", &valid);
  el_line(E, instr, "bool %s = true;", valid.s);
  for (int i = 0; i < ns; i++) {
    int64_t kd = a->kernel_spatial_dimensions.data[i];
    int64_t ld = a->input_spatial_dimensions.data[i];
    int64_t od = a->output_spatial_dimensions.data[i];
    ki[kd] = vars[i + 1];
    el_name_t kk = vars[i + 1];
    if (dims_get(a->window_reversal, i, 0))
      idx_def(E, instr, &kk, "%lld - %s", (long long)(ks->dimensions[kd] - 1), vars[i + 1].s);
    window_position(E, instr, index[od].s, dims_get(a->window_strides, i, 1), kk.s,
                    dims_get(a->rhs_dilation, i, 1), dims_get(a->padding, 2 * i, 0),
                    dims_get(a->lhs_dilation, i, 1), ls->dimensions[ld], valid.s, &li[ld]);
  }
  glsl_scope_t inside = el_open(E, instr, "if (%s) {", valid.s);
  el_name_t x, y;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, li, &x));
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, ki, &y));
  emit_mac(E, instr, rt, &acc, &x, ls->element_type, &y, ks->element_type);
  el_close(E, instr, inside);
  el_close_loops(E, ns + 1, loops);
  finish_acc(E, instr, rt, &acc, out);
  return NULL;
}

/* select_and_scatter (spec 'select_and_scatter'), computed per operand
 * element e: for every source position s whose window covers e, find the
 * window's selected position (first non-padding element, then
 * `if (!select(cur, x)) cur = x` in row-major window order); where it is e,
 * acc = scatter(acc, source[s]), starting from init_value.  codegen/
 * expand.c splits it in two kernels where it can (select_window, then
 * scatter_selected: each window's selection made once, not once per
 * element it covers); the pieces below serve all three. */

/* Opens the loops over the source positions sv[] (of a source of |ss|)
 * whose windows (|a|'s) cover the operand element at |index|; returns
 * their most iterations. */
static int64_t open_covering_sources(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_attrs_t *a,
                                     const hlo_shape_t *ss, const el_name_t *index, el_name_t *sv,
                                     glsl_scope_t *loops) {
  E->features |= GLSL_HELPERS_INDEX;
  el_name_t lo[HLO_MAX_RANK], hi[HLO_MAX_RANK];
  bool own[HLO_MAX_RANK];
  for (int d = 0; d < ss->rank; d++) {
    int64_t st = dims_get(a->window_strides, d, 1), w = dims_get(a->window_dimensions, d, 1);
    int64_t pl = dims_get(a->padding, 2 * d, 0);
    /* the element's own position, always there: no loop */
    own[d] = w == 1 && st == 1 && pl == 0 && ss->dimensions[d] >= instr->shape.dimensions[d];
    if (own[d]) continue;
    if (st > INT32_MAX) st = 1; /* one source position (window_position) */
    idx_def(E, instr, &lo[d], "max(0, vk_ceil_div(%s + %lld, %lld))", index[d].s, (long long)(pl - (w - 1)),
            (long long)st);
    idx_def(E, instr, &hi[d], "min(%lld, vk_floor_div(%s + %lld, %lld))", (long long)(ss->dimensions[d] - 1),
            index[d].s, (long long)pl, (long long)st);
  }
  int64_t sources = 1; /* at most (w - 1) / stride + 1 source positions per dimension */
  for (int d = 0; d < ss->rank; d++) {
    int64_t st = dims_get(a->window_strides, d, 1), w = dims_get(a->window_dimensions, d, 1);
    loops[d] = (glsl_scope_t){0};
    sv[d] = index[d];
    if (own[d]) continue;
    sources *= st > 0 && w > 0 ? (w - 1) / st + 1 : 1;
    el_count_loop_iterations(E, instr, sources);
    el_fresh(E, "r", &sv[d]);
    loops[d] = el_open(E, instr, "for (int %s = %s; %s <= %s; %s++) {", sv[d].s, lo[d].s, sv[d].s, hi[d].s, sv[d].s);
  }
  return sources;
}

/* The window of source position sv[] over operand 0 (of shape |os|):
 * opens the loops over its first |count| dimensions (the others at window
 * offset 0) into |loops|, defines each element's index ii[] and opens
 * "if (valid) {", which it returns. */
static glsl_scope_t open_window(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *os,
                                const el_name_t *sv, int64_t outer, int count, glsl_scope_t *loops, el_name_t *ii) {
  const hlo_attrs_t *a = &instr->attrs;
  el_name_t wv[HLO_MAX_RANK], valid;
  int64_t wdims[HLO_MAX_RANK] = {0};
  for (int d = 0; d < os->rank; d++) wdims[d] = dims_get(a->window_dimensions, d, 1);
  el_open_loops(E, instr, outer, count, wdims, wv, loops);
  for (int d = count; d < os->rank; d++) el_const_index(&wv[d], 0);
  el_fresh(E, "b", &valid);
  el_line(E, instr, "bool %s = true;", valid.s);
  for (int d = 0; d < os->rank; d++)
    window_position(E, instr, sv[d].s, dims_get(a->window_strides, d, 1), wv[d].s, 1,
                    dims_get(a->padding, 2 * d, 0), 1, os->dimensions[d], valid.s, &ii[d]);
  return el_open(E, instr, "if (%s) {", valid.s);
}

/* One step of a window's selection: unless |have| and select(cur, x)
 * (the instruction's first called computation), |x| becomes the selected
 * value; opens that block ("have = true; cur = x;" emitted) into *block
 * for the caller to record the position and close. */
static vkhlo_status_t select_step(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t cur,
                                  el_name_t have, el_name_t x, glsl_scope_t *block) {
  el_name_t keep;
  el_fresh(E, "b", &keep);
  el_line(E, instr, "bool %s = false;", keep.s);
  glsl_scope_t have_one = el_open(E, instr, "if (%s) {", have.s);
  el_name_t args[2] = {cur, x};
  VKHLO_RETURN_IF_ERROR(call_function(E, instr, instr->called_computations[0], 2, args, 1, &keep));
  el_close(E, instr, have_one);
  *block = el_open(E, instr, "if (!%s) {", keep.s);
  el_line(E, instr, "%s = true;", have.s);
  el_line(E, instr, "%s = %s;", cur.s, x.s);
  return NULL;
}

/* The selection over the window of source position sv[] (select, the
 * instruction's first called computation, over operand 0 of shape |os|):
 * *have whether the window holds a non-padding element, curpos[] the
 * selected one's index. */
static vkhlo_status_t select_in_window(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *os,
                                       const el_name_t *sv, int64_t outer, el_name_t *have, el_name_t *curpos) {
  int rank = os->rank;
  el_name_t cur, ii[HLO_MAX_RANK], x;
  glsl_scope_t window_loops[HLO_MAX_RANK], selected;
  declare(E, instr, os->element_type, &cur);
  el_fresh(E, "b", have);
  el_line(E, instr, "bool %s = false;", have->s);
  for (int d = 0; d < rank; d++) {
    el_fresh(E, "i", &curpos[d]);
    el_line(E, instr, "int %s = -1;", curpos[d].s);
  }
  glsl_scope_t inside = open_window(E, instr, os, sv, outer, rank, window_loops, ii);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, ii, &x));
  VKHLO_RETURN_IF_ERROR(select_step(E, instr, cur, *have, x, &selected));
  for (int d = 0; d < rank; d++) el_line(E, instr, "%s = %s;", curpos[d].s, ii[d].s);
  el_close(E, instr, selected);
  el_close(E, instr, inside);
  el_close_loops(E, rank, window_loops);
  return NULL;
}

/* acc = scatter(acc, source[sv]) (the scatter computation |scatter|,
 * source operand |k|) where |cond| holds. */
static vkhlo_status_t scatter_where(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *cond,
                                    const hlo_computation_t *scatter, int k, const el_name_t *sv, el_name_t *acc) {
  glsl_scope_t selected = el_open(E, instr, "if (%s) {", cond);
  el_name_t src;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, sv, &src));
  el_name_t sargs[2] = {*acc, src};
  VKHLO_RETURN_IF_ERROR(call_function(E, instr, scatter, 2, sargs, 1, acc));
  el_close(E, instr, selected);
  return NULL;
}

/* acc = init_value (operand |k|), in the result type. */
static vkhlo_status_t scatter_init(elemental_emitter_t *E, const hlo_instruction_t *instr, int k, el_name_t *acc) {
  el_name_t init;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, NULL, &init));
  hlo_element_type_t rt = instr->shape.element_type;
  el_use_type(E, rt);
  el_fresh(E, "v", acc);
  el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, rt), acc->s, init.s);
  return NULL;
}

/* Defines *out as the row-major linear index of |index| into an array
 * of shape |s|. */
static void def_linear(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *s,
                       const el_name_t *index, el_name_t *out) {
  char expr[480];
  int64_t stride = 1;
  size_t n = (size_t)snprintf(expr, sizeof expr, "0");
  for (int d = s->rank - 1; d >= 0 && n < sizeof expr; stride *= s->dimensions[d--])
    n += (size_t)snprintf(expr + n, sizeof expr - n, " + %s * %lld", index[d].s, (long long)stride);
  idx_def(E, instr, out, "%s", expr);
}

void el_word_element(char *buf, size_t size, hlo_element_type_t t, const char *w, int j, bool one) {
  static const char *const part[4] = {".x", ".y", ".z", ".w"};
  const char *conv = t == HLO_F32 ? "uintBitsToFloat" : t == HLO_S32 ? "int" : "";
  snprintf(buf, size, "%s(unpackUint2x32(%s%s)%s)", conv, w, one ? "" : part[j / 2], j % 2 ? ".y" : ".x");
}

static vkhlo_status_t emit_select_and_scatter(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                              const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 2));
  const hlo_shape_t *os = &instr->operands[0]->shape, *ss = &instr->operands[1]->shape;
  int rank = os->rank;
  el_name_t acc, sv[HLO_MAX_RANK], have, curpos[HLO_MAX_RANK];
  glsl_scope_t source_loops[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(scatter_init(E, instr, 2, &acc));
  int64_t sources = open_covering_sources(E, instr, &instr->attrs, ss, index, sv, source_loops);
  VKHLO_RETURN_IF_ERROR(select_in_window(E, instr, os, sv, sources, &have, curpos));
  /* selected == this element? */
  strbuf_t cond;
  strbuf_init(&cond, E->allocator);
  strbuf_printf(&cond, "%s", have.s);
  for (int d = 0; d < rank; d++) strbuf_printf(&cond, " && %s == %s", curpos[d].s, index[d].s);
  vkhlo_status_t st = scatter_where(E, instr, cond.data ? cond.data : "false", instr->called_computations[1], 1, sv, &acc);
  strbuf_free(&cond);
  VKHLO_RETURN_IF_ERROR(st);
  el_close_loops(E, rank, source_loops);
  *out = acc;
  return NULL;
}

/* select_window (internal, codegen/expand.c): at source position |index|,
 * the row-major index into operand 0 of its window's selected element,
 * -1 where the window holds only padding. */
static vkhlo_status_t emit_select_window(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                         const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  const hlo_shape_t *os = &instr->operands[0]->shape;
  el_name_t have, curpos[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(select_in_window(E, instr, os, index, 1, &have, curpos));
  el_name_t at;
  def_linear(E, instr, os, curpos, &at);
  el_def(E, instr, HLO_S32, false, out, "%s ? %s : -1", have.s, at.s);
  return NULL;
}

/* scatter_selected (internal, codegen/expand.c): select_and_scatter's
 * result at operand element |index| from select_window's selections
 * (operand 0), the source (1) and init_value (2). */
static vkhlo_status_t emit_scatter_selected(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                            const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  const hlo_shape_t *ss = &instr->operands[1]->shape;
  el_name_t acc, sv[HLO_MAX_RANK], sel;
  glsl_scope_t source_loops[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(scatter_init(E, instr, 2, &acc));
  el_name_t self;
  def_linear(E, instr, &instr->shape, index, &self);
  open_covering_sources(E, instr, &instr->attrs, ss, index, sv, source_loops);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, sv, &sel));
  char cond[160];
  snprintf(cond, sizeof cond, "%s == %s", sel.s, self.s);
  VKHLO_RETURN_IF_ERROR(scatter_where(E, instr, cond, instr->called_computations[0], 1, sv, &acc));
  el_close_loops(E, ss->rank, source_loops);
  *out = acc;
  return NULL;
}

int el_window_lanes(const codegen_target_t *target, const hlo_instruction_t *instr) {
  bool scatter = instr->opcode == HLO_OPCODE_SCATTER_SELECTED;
  if (!scatter && instr->opcode != HLO_OPCODE_SELECT_WINDOW) return 0;
  /* the operand's and the source's shapes, the values' type */
  const hlo_shape_t *os = scatter ? &instr->shape : &instr->operands[0]->shape;
  const hlo_shape_t *ss = scatter ? &instr->operands[1]->shape : &instr->shape;
  hlo_element_type_t t = scatter ? ss->element_type : os->element_type;
  int d = os->rank - 1;
  if (!target->is_cpu || !target->shader_int64 || d < 0 || ss->rank != os->rank ||
      !(t == HLO_F32 || t == HLO_S32 || t == HLO_U32))
    return 0;
  if (scatter && (instr->operand_count != 3 || instr->operands[0]->shape.element_type != HLO_S32 ||
                  instr->shape.element_type != t))
    return 0;
  const hlo_attrs_t *a = &instr->attrs;
  if (dims_get(a->window_dimensions, d, 1) != 1 || dims_get(a->window_strides, d, 1) != 1 ||
      dims_get(a->padding, 2 * d, 0) != 0 || ss->dimensions[d] != os->dimensions[d])
    return 0;
  return os->dimensions[d] % 8 == 0 ? 8 : os->dimensions[d] % 4 == 0 ? 4 : 0;
}

vkhlo_status_t el_emit_select_window_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                           const el_name_t *index, int W, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  const hlo_shape_t *os = &instr->operands[0]->shape;
  hlo_element_type_t t = os->element_type;
  int rank = os->rank;
  if (rank < 1 || rank > HLO_MAX_RANK || W > EL_MAX_LANES) return VKHLO_INTERNAL("select_window %s by words", instr->name);
  el_name_t cur[EL_MAX_LANES], have[EL_MAX_LANES], ii[HLO_MAX_RANK], at, word;
  glsl_scope_t window_loops[HLO_MAX_RANK];
  for (int j = 0; j < W; j++) {
    declare(E, instr, t, &cur[j]);
    el_fresh(E, "b", &have[j]);
    el_line(E, instr, "bool %s = false;", have[j].s);
    el_fresh(E, "i", &out[j]);
    el_line(E, instr, "int %s = -1;", out[j].s);
  }
  /* the last dimension's window is 1 (el_window_lanes): the lanes' own */
  glsl_scope_t inside = open_window(E, instr, os, index, 1, rank - 1, window_loops, ii);
  def_linear(E, instr, os, ii, &at);
  el_fresh(E, "w", &word);
  el_line(E, instr, "%s %s = in0w_at(%s / %d);", W == 8 ? "u64vec4" : "u64vec2", word.s, at.s, W);
  for (int j = 0; j < W; j++) {
    char v[128];
    el_word_element(v, sizeof v, t, word.s, j, false);
    el_name_t x;
    glsl_scope_t selected;
    el_def(E, instr, t, false, &x, "%s", v);
    VKHLO_RETURN_IF_ERROR(select_step(E, instr, cur[j], have[j], x, &selected));
    el_line(E, instr, "%s = %s + %d;", out[j].s, at.s, j);
    el_close(E, instr, selected);
  }
  el_close(E, instr, inside);
  el_close_loops(E, rank - 1, window_loops);
  return NULL;
}

vkhlo_status_t el_emit_scatter_selected_lanes(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                              const el_name_t *index, const char *first, int W, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  const hlo_shape_t *ss = &instr->operands[1]->shape;
  hlo_element_type_t t = instr->shape.element_type;
  const char *word = W == 8 ? "u64vec4" : "u64vec2";
  el_name_t sv[HLO_MAX_RANK];
  glsl_scope_t source_loops[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(scatter_init(E, instr, 2, &out[0]));
  for (int j = 1; j < W; j++) {
    el_fresh(E, "v", &out[j]);
    el_line(E, instr, "%s %s = %s;", glsl_compute_type_on(E->target, t), out[j].s, out[0].s);
  }
  open_covering_sources(E, instr, &instr->attrs, ss, index, sv, source_loops);
  el_name_t lin, at, sel, src;
  def_linear(E, instr, ss, sv, &lin);
  idx_def(E, instr, &at, "%s / %d", lin.s, W);
  el_fresh(E, "w", &sel);
  el_fresh(E, "w", &src);
  el_line(E, instr, "%s %s = in0w_at(%s);", word, sel.s, at.s);
  el_line(E, instr, "%s %s = in1w_at(%s);", word, src.s, at.s);
  for (int j = 0; j < W; j++) {
    char s[128], v[128], cond[192];
    el_word_element(s, sizeof s, HLO_S32, sel.s, j, false);
    el_word_element(v, sizeof v, t, src.s, j, false);
    snprintf(cond, sizeof cond, "%s == %s + %d", s, first, j);
    glsl_scope_t selected = el_open(E, instr, "if (%s) {", cond);
    el_name_t x;
    el_def(E, instr, t, false, &x, "%s", v);
    el_name_t sargs[2] = {out[j], x};
    VKHLO_RETURN_IF_ERROR(call_function(E, instr, instr->called_computations[0], 2, sargs, 1, &out[j]));
    el_close(E, instr, selected);
  }
  el_close_loops(E, ss->rank, source_loops);
  return NULL;
}

/* map (spec 'map'): result[i] = computation(inputs[i]...). */
static vkhlo_status_t emit_map(elemental_emitter_t *E, const hlo_instruction_t *instr,
                               const el_name_t *index, el_name_t *out) {
  VKHLO_RETURN_IF_ERROR(need_called(instr, 1));
  if (instr->operand_count > EL_MAX_RESULTS) return el_unimplemented(instr, "map arity");
  el_name_t args[EL_MAX_RESULTS];
  for (int k = 0; k < instr->operand_count; k++)
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, index, &args[k]));
  declare(E, instr, instr->shape.element_type, out);
  return call_function(E, instr, instr->called_computations[0], instr->operand_count, args, 1, out);
}

/* ------------------------------------------------------- scope ops */

static vkhlo_status_t emit_constant(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                    const el_name_t *index, el_name_t *out) {
  const hlo_literal_t *lit = instr->literal;
  if (!lit || !lit->data || hlo_shape_element_count(&instr->shape) != 1)
    return el_unimplemented(instr, "non-scalar constant inside a kernel");
  strbuf_t sb;
  strbuf_init(&sb, E->allocator);
  glsl_append_literal_on(&sb, E->target, instr->shape.element_type, lit->data);
  el_def(E, instr, instr->shape.element_type, false, out, "%s", sb.data ? sb.data : "0");
  strbuf_free(&sb);
  return NULL;
}

static vkhlo_status_t emit_get_tuple_element(elemental_emitter_t *E,
                                             const hlo_instruction_t *instr, el_name_t *out) {
  if (!E->scope) return el_unimplemented(instr, "get_tuple_element inside a kernel");
  int p = scope_position(E->scope, instr->operands[0]);
  if (p < 0 || instr->attrs.index < 0 || instr->attrs.index >= EL_MAX_RESULTS)
    return VKHLO_INTERNAL("bad get_tuple_element %s", instr->name);
  *out = E->scope->values[p][instr->attrs.index];
  return NULL;
}

/* The CHLO elementwise ops' prelude functions (glsl_prelude.c), and their
 * complex versions where chlo has them. */
static const struct {
  hlo_opcode_t op;
  const char *fn, *complex_fn;
} chlo_functions[] = {
    {HLO_OPCODE_CHLO_ACOS, "vk_acos", "vk_cacos"},
    {HLO_OPCODE_CHLO_ACOSH, "vk_acosh", "vk_cacosh"},
    {HLO_OPCODE_CHLO_ASIN, "vk_asin", "vk_casin"},
    {HLO_OPCODE_CHLO_ASINH, "vk_asinh", "vk_casinh"},
    {HLO_OPCODE_CHLO_ATAN, "vk_atan", "vk_catan"},
    {HLO_OPCODE_CHLO_ATANH, "vk_atanh", "vk_catanh"},
    {HLO_OPCODE_CHLO_COSH, "vk_cosh", "vk_ccosh"},
    {HLO_OPCODE_CHLO_SINH, "vk_sinh", "vk_csinh"},
    {HLO_OPCODE_CHLO_TAN, "vk_tan", "vk_ctan"},
    {HLO_OPCODE_CHLO_ERF, "vk_erf", NULL},
    {HLO_OPCODE_CHLO_ERFC, "vk_erfc", NULL},
    {HLO_OPCODE_CHLO_ERF_INV, "vk_erf_inv", NULL},
    {HLO_OPCODE_CHLO_BESSEL_I1E, "vk_bessel_i1e", NULL},
    {HLO_OPCODE_CHLO_POLYGAMMA, "vk_polygamma", NULL},
    {HLO_OPCODE_CHLO_ZETA, "vk_zeta", NULL},
    {HLO_OPCODE_CHLO_LGAMMA, "vk_lgamma", NULL},
    {HLO_OPCODE_CHLO_DIGAMMA, "vk_digamma", NULL},
    {HLO_OPCODE_CHLO_NEXT_AFTER, "vk_next_after", NULL},
    {HLO_OPCODE_CHLO_IS_INF, "isinf", NULL},
    {HLO_OPCODE_CHLO_IS_POS_INF, "vk_is_pos_inf", NULL},
    {HLO_OPCODE_CHLO_IS_NEG_INF, "vk_is_neg_inf", NULL},
    {HLO_OPCODE_CHLO_CONJ, "vk_conj", NULL},
};

/* A complex CHLO function: |fn| (NULL where chlo has no complex version).
 * complex64 is evaluated as dvec2 and rounded once where the device has
 * doubles: the inverse functions' cancellations then cost nothing at float
 * precision. */
static vkhlo_status_t emit_chlo_complex(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                        const char *fn, hlo_element_type_t t,
                                        hlo_element_type_t rt, const char *a, el_name_t *out) {
  if (!fn) return unsupported_type(instr, t);
  bool dbl = t == HLO_C128 && !glsl_type_is_demoted(E->target, t);
  if (!dbl && E->target->shader_float64) {
    E->features |= GLSL_HELPERS_DOUBLE | GLSL_HELPERS_DCOMPLEX | GLSL_FEATURE_FLOAT64;
    el_def(E, instr, rt, true, out, "vec2(%s(dvec2(%s)))", fn, a);
    return NULL;
  }
  E->features |= dbl ? GLSL_HELPERS_DOUBLE | GLSL_HELPERS_DCOMPLEX : GLSL_HELPERS_FLOAT | GLSL_HELPERS_COMPLEX;
  el_def(E, instr, rt, true, out, "%s(%s)", fn, a);
  return NULL;
}

/* CHLO elementwise ops (chlo dialect; the formulas are in glsl_prelude.c). */
static vkhlo_status_t emit_chlo(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                const el_name_t *index, el_name_t *out) {
  size_t f = 0, nf = sizeof chlo_functions / sizeof chlo_functions[0];
  while (f < nf && chlo_functions[f].op != instr->opcode) f++;
  if (f == nf) return el_unimplemented(instr, "unsupported op chlo.%s", hlo_opcode_name(instr->opcode));
  const char *fn = chlo_functions[f].fn;
  if (instr->operand_count < 1 || instr->operand_count > 2)
    return el_unimplemented(instr, "chlo.%s arity", hlo_opcode_name(instr->opcode));
  el_name_t v[2];
  for (int k = 0; k < instr->operand_count; k++)
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, index, &v[k]));
  hlo_element_type_t t = instr->operands[0]->shape.element_type, rt = instr->shape.element_type;
  char k = kind_of(t);
  if (instr->opcode == HLO_OPCODE_CHLO_CONJ) {
    if (k == 'C') el_def(E, instr, rt, false, out, "%s(%s.x, -%s.y)", glsl_compute_type_on(E->target, rt), v[0].s, v[0].s);
    else el_def(E, instr, rt, false, out, "%s", v[0].s);
    return NULL;
  }
  if (k == 'C') return emit_chlo_complex(E, instr, chlo_functions[f].complex_fn, t, rt, v[0].s, out);
  if (k != 'F') return unsupported_type(instr, t);
  bool dbl = t == HLO_F64 && !glsl_type_is_demoted(E->target, t);
  E->features |= dbl ? GLSL_HELPERS_DOUBLE : GLSL_HELPERS_FLOAT;
  if (instr->opcode == HLO_OPCODE_CHLO_NEXT_AFTER && dbl) {
    if (!E->target->shader_int64) return unsupported_type(instr, t);
    E->features |= GLSL_FEATURE_INT64;
  }
  if (instr->opcode == HLO_OPCODE_CHLO_IS_POS_INF) {
    el_def(E, instr, rt, false, out, "(isinf(%s) && %s > 0.0)", v[0].s, v[0].s);
    return NULL;
  }
  if (instr->opcode == HLO_OPCODE_CHLO_IS_NEG_INF) {
    el_def(E, instr, rt, false, out, "(isinf(%s) && %s < 0.0)", v[0].s, v[0].s);
    return NULL;
  }
  /* erf of a float: float.glsl's vk_erff (about 1 ulp, in float) */
  if (instr->opcode == HLO_OPCODE_CHLO_ERF && !dbl) {
    el_def(E, instr, rt, true, out, "vk_erff(%s)", v[0].s);
    return NULL;
  }
  /* Other special functions in float lose several ulps (GPU exp/log are
   * not correctly rounded); where the device has doubles, evaluate them
   * in double and round once. */
  bool via_double = !dbl && E->target->shader_float64 && rt != HLO_PRED &&
                    instr->opcode != HLO_OPCODE_CHLO_NEXT_AFTER;
  if (via_double) {
    E->features |= GLSL_HELPERS_DOUBLE | GLSL_FEATURE_FLOAT64;
    if (instr->operand_count == 2)
      el_def(E, instr, rt, true, out, "float(%s(double(%s), double(%s)))", fn, v[0].s, v[1].s);
    else el_def(E, instr, rt, true, out, "float(%s(double(%s)))", fn, v[0].s);
    return NULL;
  }
  if (instr->operand_count == 2) el_def(E, instr, rt, true, out, "%s(%s, %s)", fn, v[0].s, v[1].s);
  else el_def(E, instr, rt, true, out, "%s(%s)", fn, v[0].s);
  return NULL;
}

/* ---------------------------------------------------------- dispatch */

vkhlo_status_t el_emit(elemental_emitter_t *E, const hlo_instruction_t *instr,
                       const el_name_t *index, el_name_t *out) {
  if (hlo_opcode_is_elementwise(instr->opcode)) return emit_elementwise(E, instr, index, out);
  switch (instr->opcode) {
    case HLO_OPCODE_BITCAST_CONVERT: return emit_bitcast_convert(E, instr, index, out);
    case HLO_OPCODE_IOTA: return emit_iota(E, instr, index, out);
    case HLO_OPCODE_BROADCAST_IN_DIM: return emit_broadcast_in_dim(E, instr, index, out);
    case HLO_OPCODE_BROADCAST: return emit_broadcast(E, instr, index, out);
    case HLO_OPCODE_RESHAPE: return emit_reshape(E, instr, index, out);
    case HLO_OPCODE_TRANSPOSE: return emit_transpose(E, instr, index, out);
    case HLO_OPCODE_SLICE: return emit_slice(E, instr, index, out);
    case HLO_OPCODE_REVERSE: return emit_reverse(E, instr, index, out);
    case HLO_OPCODE_CONCATENATE: return emit_concatenate(E, instr, index, out);
    case HLO_OPCODE_PAD: return emit_pad(E, instr, index, out);
    case HLO_OPCODE_DYNAMIC_SLICE: return emit_dynamic_slice(E, instr, index, out);
    case HLO_OPCODE_DYNAMIC_UPDATE_SLICE: return emit_dynamic_update_slice(E, instr, index, out);
    case HLO_OPCODE_GATHER: return emit_gather(E, instr, index, out);
    case HLO_OPCODE_REDUCE: return emit_reduce(E, instr, index, out);
    case HLO_OPCODE_DOT:
    case HLO_OPCODE_DOT_GENERAL: return emit_dot_general(E, instr, index, out);
    case HLO_OPCODE_REDUCE_WINDOW: return emit_reduce_window(E, instr, index, out);
    case HLO_OPCODE_CONVOLUTION: return emit_convolution(E, instr, index, out);
    case HLO_OPCODE_SELECT_AND_SCATTER: return emit_select_and_scatter(E, instr, index, out);
    case HLO_OPCODE_SELECT_WINDOW: return emit_select_window(E, instr, index, out);
    case HLO_OPCODE_SCATTER_SELECTED: return emit_scatter_selected(E, instr, index, out);
    case HLO_OPCODE_MAP: return emit_map(E, instr, index, out);
    case HLO_OPCODE_CONSTANT: return emit_constant(E, instr, index, out);
    case HLO_OPCODE_GET_TUPLE_ELEMENT: return emit_get_tuple_element(E, instr, out);
    case HLO_OPCODE_OPTIMIZATION_BARRIER:
      if (instr->operand_count == 1) return el_operand(E, instr, 0, index, out);
      break;
    default: break;
  }
  if (hlo_opcode_is_chlo(instr->opcode)) return emit_chlo(E, instr, index, out);
  return el_unimplemented(instr, "unsupported op stablehlo.%s", hlo_opcode_name(instr->opcode));
}

/* ------------------------------------------------ called computations */

vkhlo_status_t el_function(elemental_emitter_t *E, const hlo_instruction_t *user,
                           const hlo_computation_t *c, el_name_t *out_name) {
  for (int i = 0; i < E->function_count; i++)
    if (E->function_comps[i] == c) {
      *out_name = E->function_names[i];
      return NULL;
    }
  if (E->function_count >= EL_MAX_FUNCTIONS)
    return el_unimplemented(user, "too many called computations in one kernel");
  if (!c->root) return el_unimplemented(user, "called computation %s has no root", c->name);
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode == HLO_OPCODE_TUPLE) continue;
    for (int k = 0; k < el_result_count(in); k++) {
      const hlo_shape_t *s = el_result_shape(in, k);
      if (s->element_type == HLO_TOKEN) continue;
      if (s->rank != 0)
        return el_unimplemented(user, "called computation %s has non-scalar value %s", c->name,
                                in->name);
      VKHLO_RETURN_IF_ERROR(glsl_type_check(E->target, s->element_type, in->loc));
    }
  }
  /* "f<k>_<name>" without the name's trailing number ("reduce_body.4"):
   * k makes it unique in the kernel, and the same kernel of another layer
   * (another numbered copy of the computation) stays the same GLSL, one
   * SPIR-V compilation for all of them */
  el_name_t name;
  snprintf(name.s, sizeof name.s, "f%d_", E->function_count);
  size_t len = strlen(name.s), end = strlen(c->name);
  while (end > 0 && c->name[end - 1] >= '0' && c->name[end - 1] <= '9') end--;
  if (end > 1 && end < strlen(c->name) && (c->name[end - 1] == '.' || c->name[end - 1] == '_')) end--;
  else end = strlen(c->name);
  for (size_t i = 0; i < end && len + 1 < 32; i++) {
    char ch = c->name[i];
    name.s[len++] = ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9')) ? ch : '_';
  }
  name.s[len] = 0;

  el_scope_t scope = {c, NULL, E->scope};
  scope.values = vkhlo_calloc(E->allocator, (size_t)c->instruction_count + 1, sizeof *scope.values);
  if (!scope.values) return VKHLO_NO_MEMORY();
  strbuf_t body;
  strbuf_init(&body, E->allocator);
  glsl_scope_t function = glsl_open_function(&E->glsl, &body);
  E->scope = &scope;
  vkhlo_status_t st = NULL;
  for (int i = 0; i < c->instruction_count && !st; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode == HLO_OPCODE_PARAMETER) {
      snprintf(scope.values[i][0].s, EL_NAME_MAX, "p%d", in->parameter_number);
    } else if (in->opcode == HLO_OPCODE_TUPLE) {
      for (int k = 0; k < in->operand_count && k < EL_MAX_RESULTS; k++) {
        int p = scope_position(&scope, in->operands[k]);
        if (p >= 0) scope.values[i][k] = scope.values[p][0];
      }
    } else {
      st = el_emit(E, in, NULL, scope.values[i]);
    }
  }
  /* outputs */
  int root_pos = scope_position(&scope, c->root);
  int nres = el_result_count(c->root);
  strbuf_t header;
  strbuf_init(&header, E->allocator);
  if (!st) {
    strbuf_printf(&header, "void %s(", name.s);
    for (int p = 0; p < c->parameter_count; p++) {
      const hlo_instruction_t *pi = c->parameters[p];
      el_use_type(E, pi->shape.element_type);
      strbuf_printf(&header, "%sin %s p%d", p ? ", " : "",
                    glsl_compute_type_on(E->target, pi->shape.element_type),
                    pi->parameter_number);
    }
    for (int r = 0; r < nres; r++)
      strbuf_printf(&header, "%sout %s res%d", (c->parameter_count || r) ? ", " : "",
                    glsl_compute_type_on(E->target, el_result_shape(c->root, r)->element_type), r);
    strbuf_append(&header, ") {\n");
    for (int r = 0; r < nres && root_pos >= 0; r++)
      el_line(E, c->root, "res%d = %s;", r, scope.values[root_pos][r].s);
    strbuf_append(&header, body.data ? body.data : "");
    strbuf_append(&header, "}\n\n");
    if (header.failed || body.failed) st = VKHLO_NO_MEMORY();
    else strbuf_append(&E->functions, header.data);
  }
  glsl_close_function(&E->glsl, function);
  strbuf_free(&header);
  strbuf_free(&body);
  E->scope = scope.parent;
  vkhlo_free(E->allocator, scope.values);
  if (st) return st;
  E->function_comps[E->function_count] = c;
  E->function_names[E->function_count] = name;
  E->function_count++;
  *out_name = name;
  return NULL;
}
