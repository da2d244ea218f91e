/*
 * Simplification (see codegen/passes.h): constant folding of small
 * constants and algebraic identities, each keeping the program's meaning
 * exactly, floating point included.
 *
 * The walk
 *   Each computation (region computations included) is walked once in
 *   def-before-use order.  An instruction's operands are first replaced by
 *   what they were simplified to (|scratch| holds an instruction's
 *   replacement), then the rules below are tried.  A rule either returns an
 *   existing instruction of the same shape (x * 1 -> x) or builds a new one
 *   (reshape(reshape(x)) -> reshape(x), small constant expressions ->
 *   constant), which is placed just before the instruction it replaces and
 *   simplified in turn.  Replaced instructions are dropped from the list
 *   (every use has been redirected); side-effecting instructions are never
 *   touched.  Instructions that become unused but were not replaced stay
 *   for the dce pass.  New instructions take the location of the
 *   instruction they replace.
 *
 * Constant folding (fold_*): when every operand is a constant and the
 * result has between 1 and FOLD_MAX_ELEMENTS elements.
 *  - Data movement, on the bytes of any element type: broadcast_in_dim,
 *    broadcast, reshape, transpose, slice, reverse, concatenate, pad,
 *    select; iota for integer and f16/bf16/f32/f64 results.
 *  - Arithmetic on i1, signed and unsigned integers of every width and
 *    f32/f64, as the device computes it (codegen/elemental.c and the GLSL
 *    prelude): integers wrap; x / 0 = -1 (all ones unsigned), x % 0 = x,
 *    INT_MIN / -1 = INT_MIN; shifts by >= the bit width give 0 (or the sign
 *    for arithmetic right shifts); float -> int converts saturate, NaN -> 0.
 *    Float add/sub/mul/div are computed in double and rounded once to the
 *    result type, which is the correctly rounded IEEE result for f32 too
 *    (double has more than 2p + 2 bits).  Float folding gives up when any
 *    input or result is NaN (NaN payloads and signs differ between hosts
 *    and devices) or subnormal (devices may flush them to zero).
 *  - Not folded: transcendental and inexact functions (exp, log, sin,
 *    tanh, sqrt, rsqrt, pow, atan2, remainder on floats...) whose device
 *    results may differ from the host's libm; f16, bf16, f8 and complex
 *    arithmetic; and ops on tuples or tokens.
 *
 * Algebraic rules (simplify_*): x * 1, x + 0 (ints, i1), x + (-0.0) (floats:
 *   x + (+0.0) is NOT x because -0.0 + 0.0 = +0.0), x - 0 (ints) and
 *   x - (+0.0) (floats), x / 1, x | 0, x ^ 0, x & all-ones, shifts by 0,
 *   max(x, x), min(x, x) -> x; not(not(x)), negate(negate(x)) -> x;
 *   select(constant pred, a, b) and select(p, a, a); convert to the same
 *   type; reshape to the same shape, reshape(reshape(x)); transpose with the
 *   identity permutation, transpose(transpose(x)) -> one transpose;
 *   transpose(dot_general(a, b)) -> transpose(dot_general(b, a)) when that
 *   makes the transpose keep its minor dimension (swap_dot_operands);
 *   broadcast_in_dim to the same shape with identity dimensions,
 *   broadcast_in_dim(broadcast_in_dim(x)) -> one broadcast_in_dim; slice of
 *   the full range; slice of an iota that keeps the iota dimension's start
 *   at 0 with stride 1 -> iota; reverse of size-1 dimensions; concatenate
 *   of one operand; pad with no padding; get_tuple_element(tuple(...));
 *   dynamic_slice with constant start indices -> slice (start indices
 *   clamped to [0, dim - size] as the spec says); convolution(pad(x, +0))
 *   -> the convolution of x with the pad's edges in its padding.  A constant "1" or "0"
 *   may be a constant or a broadcast of one whose elements all hold it.
 *
 * What it does not do: no reassociation or distribution, no x * 0 = 0 or
 * x - x = 0 for floats (NaN, inf), no rules that change shapes, no folding
 * of large constants (FOLD_MAX_ELEMENTS bounds the host work and the size
 * of new constants), no rewrites inside fusions' semantics beyond what
 * holds for every computation.
 */
#include "codegen/passes.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/literal.h"

/* Largest result folded into a constant, in elements. */
#define FOLD_MAX_ELEMENTS 64
/* Largest element, in bytes (complex<f64>). */
#define MAX_ELEMENT_BYTES 16
/* How deep a new instruction is simplified again (each step shrinks it). */
#define MAX_DEPTH 8

/* f32 folding needs float arithmetic done in float (SSE, not x87). */
#if defined(FLT_EVAL_METHOD) && (FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 1)
#define FOLD_F32 1
#else
#define FOLD_F32 0
#endif

typedef struct simplifier {
  hlo_module_t *m;
  hlo_computation_t *c; /* the computation being walked */
  bool users_known;     /* its instructions' users as they were before the walk */
  hlo_instruction_t **out; /* the computation's new instruction list */
  int out_count, out_capacity;
  bool changed;
  bool oom;
} simplifier_t;

static hlo_instruction_t *simplify(simplifier_t *S, hlo_instruction_t *in, int depth);

/* ------------------------------------------------------- helpers */

static char kind_of(hlo_element_type_t t) {
  if (t == HLO_PRED) return 'P';
  if (hlo_element_type_is_signed_int(t)) return 'S';
  if (hlo_element_type_is_unsigned_int(t)) return 'U';
  if (hlo_element_type_is_float(t)) return 'F';
  if (hlo_element_type_is_complex(t)) return 'C';
  return '?';
}

/* Same type, dimensions and layout. */
static bool same_shape(const hlo_shape_t *a, const hlo_shape_t *b) {
  if (!hlo_shape_equal(a, b)) return false;
  if (a->element_type == HLO_TUPLE) return true;
  return memcmp(a->minor_to_major, b->minor_to_major, (size_t)a->rank) == 0;
}

static bool is_array(const hlo_shape_t *s) {
  return s->element_type != HLO_TUPLE && s->element_type != HLO_TOKEN &&
         hlo_element_type_size_bytes(s->element_type) > 0;
}

static void unflatten(const hlo_shape_t *s, int64_t flat, int64_t *idx) {
  for (int d = s->rank - 1; d >= 0; d--) {
    idx[d] = flat % s->dimensions[d];
    flat /= s->dimensions[d];
  }
}

static int64_t flatten(const hlo_shape_t *s, const int64_t *idx) {
  int64_t f = 0;
  for (int d = 0; d < s->rank; d++) f = f * s->dimensions[d] + idx[d];
  return f;
}

/* The literal of a constant operand whose bytes match its shape, or NULL. */
static const hlo_literal_t *literal_of(const hlo_instruction_t *in) {
  if (in->opcode != HLO_OPCODE_CONSTANT || !in->literal || !is_array(&in->shape)) return NULL;
  const hlo_literal_t *l = in->literal;
  if (l->size_bytes != hlo_shape_size_bytes(&in->shape) || (l->size_bytes && !l->data)) return NULL;
  return l;
}

static bool all_operands_constant(const hlo_instruction_t *in) {
  for (int k = 0; k < in->operand_count; k++)
    if (!literal_of(in->operands[k])) return false;
  return true;
}

/* Appends |in| to the new instruction list. */
static void emit(simplifier_t *S, hlo_instruction_t *in) {
  if (S->out_count == S->out_capacity) {
    int cap = S->out_capacity ? S->out_capacity * 2 : 64;
    hlo_instruction_t **p = vkhlo_realloc(S->m->arena.allocator, S->out, sizeof(void *) * (size_t)cap);
    if (!p) {
      S->oom = true;
      return;
    }
    S->out = p;
    S->out_capacity = cap;
  }
  S->out[S->out_count++] = in;
}

/* Places a new instruction (operands already final) before the one being
 * simplified, after simplifying it in turn; returns what replaces it. */
static hlo_instruction_t *add_new(simplifier_t *S, hlo_instruction_t *new_instr,
                                  const hlo_instruction_t *replaced, int depth) {
  if (!new_instr) {
    S->oom = true;
    return NULL;
  }
  new_instr->loc = replaced->loc;
  hlo_instruction_t *r = simplify(S, new_instr, depth + 1);
  if (r == new_instr) emit(S, new_instr);
  return r;
}

/* A new instruction with the shape of |like| and one operand. */
static hlo_instruction_t *make_unary(simplifier_t *S, hlo_opcode_t op, const hlo_instruction_t *like,
                                     hlo_instruction_t *operand) {
  return hlo_instruction_create(S->m, op, &like->shape, 1, &operand);
}

static bool dims_ok(hlo_dims_t d, int count) { return count == 0 || d.data != NULL; }

/* ------------------------------------------------------- element values */

static uint64_t width_mask(int w) { return w >= 64 ? ~0ULL : ((1ULL << w) - 1); }

/* An integer value normalized to type |t|: sign-extended from its bit
 * width for signed types, zero-extended for unsigned ones, 0/1 for i1. */
static uint64_t norm(hlo_element_type_t t, uint64_t v) {
  if (t == HLO_PRED) return v != 0;
  int w = hlo_element_type_bit_width(t);
  if (w >= 64) return v;
  v &= width_mask(w);
  if (kind_of(t) == 'S' && ((v >> (w - 1)) & 1)) v |= ~width_mask(w);
  return v;
}

static uint64_t load_int(hlo_element_type_t t, const void *p) {
  switch (hlo_element_type_size_bytes(t)) {
    case 1: { uint8_t v; memcpy(&v, p, 1); return norm(t, v); }
    case 2: { uint16_t v; memcpy(&v, p, 2); return norm(t, v); }
    case 4: { uint32_t v; memcpy(&v, p, 4); return norm(t, v); }
    default: { uint64_t v; memcpy(&v, p, 8); return norm(t, v); }
  }
}

/* Stores in host representation: sub-byte types sign- or zero-extended to
 * their byte (norm does that), wider ones truncated to their size. */
static void store_int(hlo_element_type_t t, void *p, uint64_t v) {
  v = norm(t, v);
  switch (hlo_element_type_size_bytes(t)) {
    case 1: { uint8_t x = (uint8_t)v; memcpy(p, &x, 1); break; }
    case 2: { uint16_t x = (uint16_t)v; memcpy(p, &x, 2); break; }
    case 4: { uint32_t x = (uint32_t)v; memcpy(p, &x, 4); break; }
    default: memcpy(p, &v, 8); break;
  }
}

static double load_float(hlo_element_type_t t, const void *p) {
  if (t == HLO_F32) {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  double d;
  memcpy(&d, p, 8);
  return d;
}

/* Whether a float value of type |t| may take part in folding: not NaN and
 * not subnormal at the type's precision. */
static bool float_ok(hlo_element_type_t t, double v) {
  if (isnan(v)) return false;
  if (t == HLO_F32) {
    float f = (float)v;
    return fpclassify(f) != FP_SUBNORMAL;
  }
  return fpclassify(v) != FP_SUBNORMAL;
}

/* Rounds |v| to |t| and stores it; false if the result is NaN or subnormal. */
static bool store_float(hlo_element_type_t t, void *p, double v) {
  if (t == HLO_F32) {
    float f = (float)v;
    if (isnan(f) || fpclassify(f) == FP_SUBNORMAL) return false;
    memcpy(p, &f, 4);
    return true;
  }
  if (isnan(v) || fpclassify(v) == FP_SUBNORMAL) return false;
  memcpy(p, &v, 8);
  return true;
}

/* Types whose arithmetic is folded. */
static bool arith_type(hlo_element_type_t t) {
  char k = kind_of(t);
  if (k == 'P' || k == 'S' || k == 'U') return true;
  return t == HLO_F64 || (FOLD_F32 && t == HLO_F32);
}

/* ------------------------------------------------------- integer ops */

static int64_t as_signed(uint64_t v) { return (int64_t)v; }

/* |v| sign-extended from its low |w| bits. */
static uint64_t sign_extend(uint64_t v, int w) {
  if (w >= 64) return v;
  v &= width_mask(w);
  return ((v >> (w - 1)) & 1) ? v | ~width_mask(w) : v;
}

/* Arithmetic shift right of a 64-bit signed value by 0 <= s < 64. */
static uint64_t sar(uint64_t v, uint64_t s) {
  int64_t x = as_signed(v);
  return x < 0 ? ~((~v) >> s) : v >> s;
}

/* Binary integer / i1 op as the device computes it; false if not folded. */
static bool int_binary(hlo_opcode_t op, hlo_element_type_t t, uint64_t a, uint64_t b,
                       uint64_t *r) {
  char k = kind_of(t);
  int w = hlo_element_type_bit_width(t);
  if (k == 'P') {
    switch (op) {
      case HLO_OPCODE_ADD: case HLO_OPCODE_OR: case HLO_OPCODE_MAXIMUM: *r = a | b; return true;
      case HLO_OPCODE_MULTIPLY: case HLO_OPCODE_AND: case HLO_OPCODE_MINIMUM: *r = a & b; return true;
      case HLO_OPCODE_XOR: *r = a ^ b; return true;
      default: return false;
    }
  }
  bool s = k == 'S';
  switch (op) {
    case HLO_OPCODE_ADD: *r = a + b; break;
    case HLO_OPCODE_SUBTRACT: *r = a - b; break;
    case HLO_OPCODE_MULTIPLY: *r = a * b; break;
    case HLO_OPCODE_AND: *r = a & b; break;
    case HLO_OPCODE_OR: *r = a | b; break;
    case HLO_OPCODE_XOR: *r = a ^ b; break;
    case HLO_OPCODE_DIVIDE:
      if (b == 0) *r = ~0ULL;
      else if (s && as_signed(b) == -1) *r = 0 - a;
      else if (s) *r = (uint64_t)(as_signed(a) / as_signed(b));
      else *r = a / b;
      break;
    case HLO_OPCODE_REMAINDER:
      if (b == 0) *r = a;
      else if (s && as_signed(b) == -1) *r = 0;
      else if (s) *r = (uint64_t)(as_signed(a) % as_signed(b));
      else *r = a % b;
      break;
    case HLO_OPCODE_MAXIMUM:
      *r = (s ? as_signed(a) >= as_signed(b) : a >= b) ? a : b;
      break;
    case HLO_OPCODE_MINIMUM:
      *r = (s ? as_signed(a) <= as_signed(b) : a <= b) ? a : b;
      break;
    case HLO_OPCODE_SHIFT_LEFT:
      if (s ? (as_signed(b) < 0 || as_signed(b) >= w) : b >= (uint64_t)w) *r = 0;
      else *r = a << b;
      break;
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL:
      if (s ? (as_signed(b) < 0 || as_signed(b) >= w) : b >= (uint64_t)w) *r = 0;
      else *r = (a & width_mask(w)) >> b;
      break;
    case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC: {
      /* the value sign-extended from its width, shifted arithmetically */
      uint64_t x = sign_extend(a, w);
      bool out_of_range = s ? (as_signed(b) < 0 || as_signed(b) >= w) : b >= (uint64_t)w;
      if (out_of_range) *r = as_signed(x) < 0 ? ~0ULL : 0;
      else *r = sar(x, b);
      break;
    }
    default: return false;
  }
  *r = norm(t, *r);
  return true;
}

static bool int_unary(hlo_opcode_t op, hlo_element_type_t t, uint64_t a, uint64_t *r) {
  char k = kind_of(t);
  if (k == 'P') {
    if (op != HLO_OPCODE_NOT) return false;
    *r = !a;
    return true;
  }
  switch (op) {
    case HLO_OPCODE_NEGATE: *r = 0 - a; break;
    case HLO_OPCODE_NOT: *r = ~a; break;
    case HLO_OPCODE_ABS: *r = (k == 'S' && as_signed(a) < 0) ? 0 - a : a; break;
    case HLO_OPCODE_SIGN:
      if (k == 'S') *r = as_signed(a) > 0 ? 1 : (as_signed(a) < 0 ? ~0ULL : 0);
      else *r = a != 0;
      break;
    default: return false;
  }
  *r = norm(t, *r);
  return true;
}

/* ------------------------------------------------------- float ops */

/* vk_fmax / vk_fmin of the GLSL prelude, NaN excluded. */
static double fmax_dev(double a, double b) {
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
static double fmin_dev(double a, double b) {
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

static bool float_binary(hlo_opcode_t op, double a, double b, double *r) {
  switch (op) {
    case HLO_OPCODE_ADD: *r = a + b; return true;
    case HLO_OPCODE_SUBTRACT: *r = a - b; return true;
    case HLO_OPCODE_MULTIPLY: *r = a * b; return true;
    case HLO_OPCODE_DIVIDE: *r = a / b; return true;
    case HLO_OPCODE_MAXIMUM: *r = fmax_dev(a, b); return true;
    case HLO_OPCODE_MINIMUM: *r = fmin_dev(a, b); return true;
    default: return false;
  }
}

static bool float_unary(hlo_opcode_t op, double a, double *r) {
  switch (op) {
    case HLO_OPCODE_NEGATE: *r = -a; return true;
    case HLO_OPCODE_ABS: *r = fabs(a); return true;
    case HLO_OPCODE_FLOOR: *r = floor(a); return true;
    case HLO_OPCODE_CEIL: *r = ceil(a); return true;
    case HLO_OPCODE_SIGN: *r = a > 0 ? 1.0 : (a < 0 ? -1.0 : a); return true;
    default: return false;
  }
}

/* Total-order key of a (non-NaN) float: -0 < +0. */
static int64_t total_key(double v) {
  int64_t bits;
  memcpy(&bits, &v, 8);
  return bits < 0 ? bits ^ INT64_MAX : bits;
}

static bool compare_result(hlo_comparison_direction_t d, int c /* <0, 0, >0 */) {
  switch (d) {
    case HLO_CMP_EQ: return c == 0;
    case HLO_CMP_NE: return c != 0;
    case HLO_CMP_GE: return c >= 0;
    case HLO_CMP_GT: return c > 0;
    case HLO_CMP_LE: return c <= 0;
    case HLO_CMP_LT: return c < 0;
  }
  return false;
}

/* ------------------------------------------------------- conversion */

/* convert (spec 'convert') of one element from |ft| to |tt| as the device
 * does it (codegen/elemental.c el_convert); false if not folded. */
static bool convert_element(hlo_element_type_t ft, const void *src, hlo_element_type_t tt,
                            void *dst) {
  char fk = kind_of(ft), tk = kind_of(tt);
  if (fk == 'F') {
    double v = load_float(ft, src);
    if (!float_ok(ft, v)) return false;
    if (tk == 'F') return store_float(tt, dst, v);
    if (tk == 'P') {
      store_int(tt, dst, v != 0.0);
      return true;
    }
    int w = hlo_element_type_bit_width(tt);
    uint64_t r;
    if (tk == 'S') {
      double lim = ldexp(1.0, w - 1);
      if (v >= lim) r = (uint64_t)(as_signed(width_mask(w - 1)));
      else if (v <= -lim) r = ~width_mask(w - 1);
      else r = (uint64_t)(int64_t)v;
    } else {
      double lim = ldexp(1.0, w);
      if (v <= 0.0) r = 0;
      else if (v >= lim) r = width_mask(w);
      else r = (uint64_t)v;
    }
    store_int(tt, dst, r);
    return true;
  }
  uint64_t x = load_int(ft, src);
  if (tk == 'F') {
    if (fk == 'S') {
      if (tt == HLO_F32) return store_float(tt, dst, (float)as_signed(x));
      return store_float(tt, dst, (double)as_signed(x));
    }
    if (tt == HLO_F32) return store_float(tt, dst, (float)x);
    return store_float(tt, dst, (double)x);
  }
  if (tk == 'P') {
    store_int(tt, dst, x != 0);
    return true;
  }
  store_int(tt, dst, x); /* integer -> integer wraps; i1 -> 0 / 1 */
  return true;
}

/* ------------------------------------------------------- constant folding */

/* A new constant of |in|'s shape with the bytes in |data|. */
static hlo_instruction_t *new_constant(simplifier_t *S, const hlo_instruction_t *in,
                                       const void *data, int depth) {
  hlo_instruction_t *c = hlo_constant_create(S->m, &in->shape, data);
  return add_new(S, c, in, depth);
}

/* Folds ops that only move bytes; returns the constant or NULL. */
static hlo_instruction_t *fold_movement(simplifier_t *S, hlo_instruction_t *in, int n, int depth) {
  const hlo_shape_t *rs = &in->shape;
  size_t es = hlo_element_type_size_bytes(rs->element_type);
  if (es > MAX_ELEMENT_BYTES) return NULL;
  const hlo_attrs_t *a = &in->attrs;
  const hlo_instruction_t *x = in->operand_count ? in->operands[0] : NULL;
  const hlo_shape_t *xs = x ? &x->shape : NULL;
  unsigned char buf[FOLD_MAX_ELEMENTS * MAX_ELEMENT_BYTES];
  int64_t r[HLO_MAX_RANK], src[HLO_MAX_RANK];
  for (int f = 0; f < n; f++) {
    unflatten(rs, f, r);
    const hlo_instruction_t *from = x; /* operand the element comes from */
    int64_t j = 0;                     /* its flat index there */
    switch (in->opcode) {
      case HLO_OPCODE_BROADCAST_IN_DIM:
        if (a->broadcast_dimensions.count != xs->rank) return NULL;
        for (int i = 0; i < xs->rank; i++)
          src[i] = xs->dimensions[i] == 1 ? 0 : r[a->broadcast_dimensions.data[i]];
        j = flatten(xs, src);
        break;
      case HLO_OPCODE_BROADCAST:
        if (a->dimensions.count + xs->rank != rs->rank) return NULL;
        j = flatten(xs, r + a->dimensions.count);
        break;
      case HLO_OPCODE_RESHAPE: j = f; break;
      case HLO_OPCODE_TRANSPOSE:
        if (a->permutation.count != xs->rank) return NULL;
        for (int i = 0; i < rs->rank; i++) src[a->permutation.data[i]] = r[i];
        j = flatten(xs, src);
        break;
      case HLO_OPCODE_SLICE:
        if (a->start_indices.count != xs->rank) return NULL;
        for (int i = 0; i < rs->rank; i++)
          src[i] = a->start_indices.data[i] + r[i] * (a->strides.count ? a->strides.data[i] : 1);
        j = flatten(xs, src);
        break;
      case HLO_OPCODE_REVERSE:
        memcpy(src, r, sizeof src);
        for (int i = 0; i < a->dimensions.count; i++) {
          int64_t d = a->dimensions.data[i];
          src[d] = xs->dimensions[d] - 1 - r[d];
        }
        j = flatten(xs, src);
        break;
      case HLO_OPCODE_CONCATENATE: {
        int64_t d = a->dimension, pos = r[d];
        int k = 0;
        while (k < in->operand_count && pos >= in->operands[k]->shape.dimensions[d])
          pos -= in->operands[k++]->shape.dimensions[d];
        if (k == in->operand_count) return NULL;
        from = in->operands[k];
        memcpy(src, r, sizeof src);
        src[d] = pos;
        j = flatten(&from->shape, src);
        break;
      }
      case HLO_OPCODE_PAD: {
        bool pad = false;
        for (int i = 0; i < rs->rank && !pad; i++) {
          int64_t step = (a->interior_padding.count ? a->interior_padding.data[i] : 0) + 1;
          int64_t p = r[i] - a->edge_padding_low.data[i];
          if (p < 0 || p % step != 0 || p / step >= xs->dimensions[i]) pad = true;
          else src[i] = p / step;
        }
        if (pad) {
          from = in->operands[1];
          j = 0;
        } else {
          j = flatten(xs, src);
        }
        break;
      }
      case HLO_OPCODE_SELECT: {
        const hlo_instruction_t *p = in->operands[0];
        uint64_t pv = load_int(HLO_PRED, (const char *)p->literal->data + (p->shape.rank ? f : 0));
        from = in->operands[pv ? 1 : 2];
        j = f;
        break;
      }
      default: return NULL;
    }
    memcpy(buf + (size_t)f * es, (const char *)from->literal->data + (size_t)j * es, es);
  }
  return new_constant(S, in, buf, depth);
}

static hlo_instruction_t *fold_iota(simplifier_t *S, hlo_instruction_t *in, int n, int depth) {
  hlo_element_type_t t = in->shape.element_type;
  char k = kind_of(t);
  if (k != 'S' && k != 'U' && t != HLO_F32 && t != HLO_F64 && t != HLO_F16 && t != HLO_BF16)
    return NULL;
  if (in->attrs.dimension < 0 || in->attrs.dimension >= in->shape.rank) return NULL;
  size_t es = hlo_element_type_size_bytes(t);
  unsigned char buf[FOLD_MAX_ELEMENTS * MAX_ELEMENT_BYTES];
  int64_t r[HLO_MAX_RANK];
  for (int f = 0; f < n; f++) {
    unflatten(&in->shape, f, r);
    int64_t v = r[in->attrs.dimension]; /* < 64: exact in every float type here */
    void *p = buf + (size_t)f * es;
    if (k == 'S' || k == 'U') {
      store_int(t, p, (uint64_t)v);
    } else if (t == HLO_F32 || t == HLO_F64) {
      store_float(t, p, (double)v); /* small integers: never NaN or subnormal */
    } else {
      uint64_t bits;
      hlo_float_encode(t, (double)v, &bits);
      uint16_t h = (uint16_t)bits;
      memcpy(p, &h, 2);
    }
  }
  return new_constant(S, in, buf, depth);
}

/* Folds the arithmetic elementwise ops; returns the constant or NULL. */
static hlo_instruction_t *fold_arith(simplifier_t *S, hlo_instruction_t *in, int n, int depth) {
  hlo_opcode_t op = in->opcode;
  hlo_element_type_t rt = in->shape.element_type;
  int first = op == HLO_OPCODE_CLAMP ? 1 : 0; /* clamp's operand is its second */
  hlo_element_type_t t = in->operands[first]->shape.element_type;
  if (!arith_type(t) || !arith_type(rt)) return NULL;
  char k = kind_of(t);
  size_t es = hlo_element_type_size_bytes(t), rs = hlo_element_type_size_bytes(rt);
  unsigned char buf[FOLD_MAX_ELEMENTS * MAX_ELEMENT_BYTES];
  for (int f = 0; f < n; f++) {
    const void *p[3];
    for (int q = 0; q < in->operand_count && q < 3; q++) {
      const hlo_instruction_t *o = in->operands[q];
      /* clamp bounds may be rank 0 */
      p[q] = (const char *)o->literal->data + (o->shape.rank ? (size_t)f * es : 0);
    }
    void *dst = buf + (size_t)f * rs;
    if (op == HLO_OPCODE_CONVERT) {
      if (!convert_element(t, p[0], rt, dst)) return NULL;
      continue;
    }
    if (op == HLO_OPCODE_COMPARE) {
      int c;
      hlo_compare_type_t ct = in->attrs.compare_type;
      if (k == 'F') {
        double a = load_float(t, p[0]), b = load_float(t, p[1]);
        if (!float_ok(t, a) || !float_ok(t, b)) return NULL;
        if (ct == HLO_CMP_TYPE_TOTALORDER) {
          int64_t ka = total_key(a), kb = total_key(b);
          c = ka < kb ? -1 : ka > kb;
        } else {
          c = a < b ? -1 : a > b;
        }
      } else {
        uint64_t a = load_int(t, p[0]), b = load_int(t, p[1]);
        int w = hlo_element_type_bit_width(t);
        bool as_sgn = (k == 'S' && ct != HLO_CMP_TYPE_UNSIGNED) || (k == 'U' && ct == HLO_CMP_TYPE_SIGNED);
        if (as_sgn) {
          int64_t sa = as_signed(sign_extend(a, w)), sb = as_signed(sign_extend(b, w));
          c = sa < sb ? -1 : sa > sb;
        } else {
          uint64_t ua = a & width_mask(w), ub = b & width_mask(w);
          c = ua < ub ? -1 : ua > ub;
        }
      }
      store_int(HLO_PRED, dst, compare_result(in->attrs.comparison_direction, c));
      continue;
    }
    if (k == 'F') {
      double v[3], r;
      for (int q = 0; q < in->operand_count; q++) {
        v[q] = load_float(t, p[q]);
        if (!float_ok(t, v[q])) return NULL;
      }
      if (op == HLO_OPCODE_IS_FINITE) {
        store_int(HLO_PRED, dst, isfinite(v[0]) != 0);
        continue;
      }
      if (op == HLO_OPCODE_CLAMP) r = fmin_dev(fmax_dev(v[1], v[0]), v[2]);
      else if (in->operand_count == 2 ? !float_binary(op, v[0], v[1], &r) : !float_unary(op, v[0], &r))
        return NULL;
      /* add/sub/mul/div of f32 values in double, rounded once: exact */
      if (!store_float(rt, dst, r)) return NULL;
      continue;
    }
    uint64_t v[3], r;
    for (int q = 0; q < in->operand_count; q++) v[q] = load_int(t, p[q]);
    if (op == HLO_OPCODE_CLAMP) {
      if (k == 'P') return NULL;
      uint64_t lo, hi;
      int_binary(HLO_OPCODE_MAXIMUM, t, v[1], v[0], &lo);
      int_binary(HLO_OPCODE_MINIMUM, t, lo, v[2], &hi);
      r = hi;
    } else if (in->operand_count == 2 ? !int_binary(op, t, v[0], v[1], &r) : !int_unary(op, t, v[0], &r)) {
      return NULL;
    }
    store_int(rt, dst, r);
  }
  return new_constant(S, in, buf, depth);
}

static hlo_instruction_t *fold_constant(simplifier_t *S, hlo_instruction_t *in, int depth) {
  if (!is_array(&in->shape)) return NULL;
  int64_t n = hlo_shape_element_count(&in->shape);
  if (n < 1 || n > FOLD_MAX_ELEMENTS) return NULL;
  if (in->opcode == HLO_OPCODE_IOTA) return fold_iota(S, in, (int)n, depth);
  if (in->operand_count == 0 || !all_operands_constant(in)) return NULL;
  switch (in->opcode) {
    case HLO_OPCODE_BROADCAST_IN_DIM: case HLO_OPCODE_BROADCAST: case HLO_OPCODE_RESHAPE:
    case HLO_OPCODE_TRANSPOSE: case HLO_OPCODE_SLICE: case HLO_OPCODE_REVERSE:
    case HLO_OPCODE_CONCATENATE: case HLO_OPCODE_PAD: case HLO_OPCODE_SELECT:
      return fold_movement(S, in, (int)n, depth);
    case HLO_OPCODE_ADD: case HLO_OPCODE_SUBTRACT: case HLO_OPCODE_MULTIPLY:
    case HLO_OPCODE_DIVIDE: case HLO_OPCODE_REMAINDER: case HLO_OPCODE_MAXIMUM:
    case HLO_OPCODE_MINIMUM: case HLO_OPCODE_AND: case HLO_OPCODE_OR: case HLO_OPCODE_XOR:
    case HLO_OPCODE_SHIFT_LEFT: case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC:
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL: case HLO_OPCODE_NEGATE: case HLO_OPCODE_ABS:
    case HLO_OPCODE_NOT: case HLO_OPCODE_SIGN: case HLO_OPCODE_FLOOR: case HLO_OPCODE_CEIL:
    case HLO_OPCODE_IS_FINITE: case HLO_OPCODE_CONVERT: case HLO_OPCODE_COMPARE:
    case HLO_OPCODE_CLAMP:
      if (in->operand_count > 3) return NULL;
      /* remainder on floats, floor/ceil/is_finite on ints: not folded */
      if (in->opcode == HLO_OPCODE_REMAINDER &&
          kind_of(in->operands[0]->shape.element_type) == 'F')
        return NULL;
      if ((in->opcode == HLO_OPCODE_FLOOR || in->opcode == HLO_OPCODE_CEIL ||
           in->opcode == HLO_OPCODE_IS_FINITE) &&
          kind_of(in->operands[0]->shape.element_type) != 'F')
        return NULL;
      return fold_arith(S, in, (int)n, depth);
    default: return NULL;
  }
}

/* ------------------------------------------------------- algebraic rules */

typedef enum splat_value { SPLAT_ONE, SPLAT_ZERO, SPLAT_NEG_ZERO, SPLAT_POS_ZERO, SPLAT_ALL_ONES } splat_value_t;

/* Whether every element of |in| (a constant, or a broadcast of one) is
 * |want| in |in|'s element type. */
static bool is_splat(const hlo_instruction_t *in, splat_value_t want) {
  if (in->opcode == HLO_OPCODE_BROADCAST_IN_DIM || in->opcode == HLO_OPCODE_BROADCAST)
    in = in->operands[0];
  const hlo_literal_t *l = literal_of(in);
  if (!l) return false;
  hlo_element_type_t t = in->shape.element_type;
  char k = kind_of(t);
  unsigned char pattern[8];
  size_t es = hlo_element_type_size_bytes(t);
  if (k == 'P' || k == 'S' || k == 'U') {
    uint64_t v;
    switch (want) {
      case SPLAT_ONE: v = 1; break;
      case SPLAT_ZERO: v = 0; break;
      case SPLAT_ALL_ONES: v = ~0ULL; break;
      default: return false;
    }
    store_int(t, pattern, v);
  } else if (t == HLO_F32 || t == HLO_F64 || t == HLO_F16 || t == HLO_BF16) {
    uint64_t bits;
    switch (want) {
      case SPLAT_ONE: hlo_float_encode(t, 1.0, &bits); break;
      case SPLAT_POS_ZERO: bits = 0; break;
      case SPLAT_NEG_ZERO: bits = 1ULL << (hlo_element_type_bit_width(t) - 1); break;
      default: return false;
    }
    memcpy(pattern, &bits, es); /* little-endian host */
  } else {
    return false;
  }
  return l->size_bytes > 0 && memcmp(l->data, pattern, es) == 0 && hlo_constant_is_splat(in);
}

/* The operand of a binary op that the identity |want| on the other side
 * leaves unchanged (either side when |commutes|), or NULL. */
static hlo_instruction_t *identity_operand(hlo_instruction_t *in, splat_value_t want, bool commutes) {
  hlo_instruction_t *a = in->operands[0], *b = in->operands[1];
  if (is_splat(b, want) && same_shape(&a->shape, &in->shape)) return a;
  if (commutes && is_splat(a, want) && same_shape(&b->shape, &in->shape)) return b;
  return NULL;
}

static hlo_instruction_t *simplify_binary(hlo_instruction_t *in) {
  if (in->operand_count != 2) return NULL;
  hlo_element_type_t t = in->operands[0]->shape.element_type;
  char k = kind_of(t);
  bool ints = k == 'S' || k == 'U' || k == 'P';
  bool floats = t == HLO_F32 || t == HLO_F64 || t == HLO_F16 || t == HLO_BF16;
  switch (in->opcode) {
    case HLO_OPCODE_ADD:
      if (ints) return identity_operand(in, SPLAT_ZERO, true);
      if (floats) return identity_operand(in, SPLAT_NEG_ZERO, true);
      return NULL;
    case HLO_OPCODE_SUBTRACT:
      if (k == 'S' || k == 'U') return identity_operand(in, SPLAT_ZERO, false);
      if (floats) return identity_operand(in, SPLAT_POS_ZERO, false);
      return NULL;
    case HLO_OPCODE_MULTIPLY:
      if (ints || floats) return identity_operand(in, SPLAT_ONE, true);
      return NULL;
    case HLO_OPCODE_DIVIDE:
      if (k == 'S' || k == 'U' || floats) return identity_operand(in, SPLAT_ONE, false);
      return NULL;
    case HLO_OPCODE_OR:
    case HLO_OPCODE_XOR:
      if (ints) return identity_operand(in, SPLAT_ZERO, true);
      return NULL;
    case HLO_OPCODE_AND:
      if (ints) return identity_operand(in, SPLAT_ALL_ONES, true);
      return NULL;
    case HLO_OPCODE_SHIFT_LEFT:
    case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC:
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL:
      if (k == 'S' || k == 'U') return identity_operand(in, SPLAT_ZERO, false);
      return NULL;
    case HLO_OPCODE_MAXIMUM:
    case HLO_OPCODE_MINIMUM:
      if (in->operands[0] == in->operands[1] && (ints || floats) &&
          same_shape(&in->operands[0]->shape, &in->shape))
        return in->operands[0];
      return NULL;
    default: return NULL;
  }
}

/* A rank-0 or same-shape i1 operand whose elements are all |value|. */
static bool pred_is(const hlo_instruction_t *p, bool value) {
  return p->shape.element_type == HLO_PRED && is_splat(p, value ? SPLAT_ONE : SPLAT_ZERO);
}

static bool is_identity(const hlo_dims_t *d) {
  for (int i = 0; i < d->count; i++)
    if (d->data[i] != i) return false;
  return true;
}

/* dynamic_slice with constant start indices -> slice.  The spec clamps
 * each start index to [0, dim - size]. */
static hlo_instruction_t *dynamic_slice_to_slice(simplifier_t *S, hlo_instruction_t *in, int depth) {
  hlo_instruction_t *x = in->operands[0];
  int rank = x->shape.rank;
  if (in->operand_count != rank + 1 || in->attrs.slice_sizes.count != rank) return NULL;
  int64_t start[HLO_MAX_RANK], limit[HLO_MAX_RANK], stride[HLO_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    const hlo_instruction_t *ix = in->operands[i + 1];
    const hlo_literal_t *l = literal_of(ix);
    hlo_element_type_t t = ix->shape.element_type;
    if (!l || ix->shape.rank != 0 || (kind_of(t) != 'S' && kind_of(t) != 'U')) return NULL;
    uint64_t v = load_int(t, l->data);
    int64_t s;
    if (kind_of(t) == 'S') s = as_signed(v);
    else s = v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
    int64_t size = in->attrs.slice_sizes.data[i], hi = x->shape.dimensions[i] - size;
    if (hi < 0) return NULL;
    if (s < 0) s = 0;
    if (s > hi) s = hi;
    start[i] = s;
    limit[i] = s + size;
    stride[i] = 1;
  }
  hlo_instruction_t *sl = make_unary(S, HLO_OPCODE_SLICE, in, x);
  if (!sl) return add_new(S, NULL, in, depth);
  sl->attrs.start_indices = hlo_dims_make(S->m, start, rank);
  sl->attrs.limit_indices = hlo_dims_make(S->m, limit, rank);
  sl->attrs.strides = hlo_dims_make(S->m, stride, rank);
  if (!dims_ok(sl->attrs.start_indices, rank) || !dims_ok(sl->attrs.limit_indices, rank) ||
      !dims_ok(sl->attrs.strides, rank))
    return add_new(S, NULL, in, depth);
  return add_new(S, sl, in, depth);
}

/* transpose(dot_general(a, b)) -> transpose(dot_general(b, a)) where the
 * transpose's minor dimension is a's last free dimension: the new dot's
 * result is [batch, b's free, a's free], whose minor dimension is then
 * the transpose's, so the transpose keeps rows contiguous (the identity
 * when nothing else moves).  XLA's algebraic simplifier does the same for
 * rank-2 dots.  Every element is the same sum of the same products in the
 * same order (products commute exactly), so the result is unchanged; the
 * kernels gain contiguous stores and loads (attention's probabilities x
 * values exported as dot_general(v, p) then transposed: [b, h, d, s] ->
 * [b, s, h, d]).  Only when the dot has no other user (|in| is its one
 * recorded user, S->users_known) and its layout is the default. */
static hlo_instruction_t *swap_dot_operands(simplifier_t *S, hlo_instruction_t *in, hlo_instruction_t *x,
                                            int depth) {
  const hlo_attrs_t *d = &x->attrs;
  int rank = x->shape.rank, nb = d->lhs_batching_dimensions.count;
  if (!S->users_known || x->user_count != 1 || x->users[0] != in || x == S->c->root || x->operand_count != 2)
    return NULL;
  hlo_instruction_t *l = x->operands[0], *rt = x->operands[1];
  int nl = l->shape.rank - nb - d->lhs_contracting_dimensions.count;
  int nr = rank - nb - nl;
  if (nl < 1 || nr < 1 || d->rhs_batching_dimensions.count != nb ||
      in->attrs.permutation.data[rank - 1] != nb + nl - 1)
    return NULL;
  hlo_shape_t def;
  hlo_shape_init(&def, x->shape.element_type, rank, x->shape.dimensions);
  if (!same_shape(&def, &x->shape)) return NULL;
  /* new dot dim j <- old dot dim from[j]; old dim i -> new dim to[i] */
  int64_t dims[HLO_MAX_RANK], from[HLO_MAX_RANK], to[HLO_MAX_RANK], q[HLO_MAX_RANK];
  for (int j = 0; j < rank; j++) {
    from[j] = j < nb ? j : j < nb + nr ? nb + nl + (j - nb) : nb + (j - nb - nr);
    dims[j] = x->shape.dimensions[from[j]];
    to[from[j]] = j;
  }
  for (int j = 0; j < rank; j++) q[j] = to[in->attrs.permutation.data[j]];
  hlo_shape_t s;
  hlo_shape_init(&s, x->shape.element_type, rank, dims);
  hlo_instruction_t *ops[2] = {rt, l};
  hlo_instruction_t *dot = hlo_instruction_create(S->m, HLO_OPCODE_DOT_GENERAL, &s, 2, ops);
  if (!dot) return add_new(S, NULL, in, depth);
  dot->attrs.lhs_batching_dimensions = d->rhs_batching_dimensions;
  dot->attrs.rhs_batching_dimensions = d->lhs_batching_dimensions;
  dot->attrs.lhs_contracting_dimensions = d->rhs_contracting_dimensions;
  dot->attrs.rhs_contracting_dimensions = d->lhs_contracting_dimensions;
  dot->loc = x->loc;
  emit(S, dot);
  hlo_instruction_t *t = make_unary(S, HLO_OPCODE_TRANSPOSE, in, dot);
  if (t) {
    t->attrs.permutation = hlo_dims_make(S->m, q, rank);
    if (!dims_ok(t->attrs.permutation, rank)) t = NULL;
  }
  return add_new(S, t, in, depth);
}

/* transpose(|op|) with its contracting dimensions |c| (n, pair order) made
 * one run in that order where the first of them was, the other dimensions
 * in their order; *at gets the run's first position and |batch| (nb
 * dimensions) is renumbered. */
static hlo_instruction_t *contracting_to_run(simplifier_t *S, hlo_instruction_t *op, const int64_t *c, int n,
                                             int64_t *batch, int nb, int64_t *at) {
  const hlo_shape_t *s = &op->shape;
  int64_t perm[HLO_MAX_RANK], to[HLO_MAX_RANK], dims[HLO_MAX_RANK], first = s->rank;
  int j = 0;
  for (int i = 0; i < n; i++) first = c[i] < first ? c[i] : first;
  for (int d = 0; d < s->rank; d++) {
    bool contracted = false;
    for (int i = 0; i < n; i++) contracted |= c[i] == d;
    if (d == first) {
      *at = j;
      for (int i = 0; i < n; i++) perm[j++] = c[i];
    }
    if (!contracted) perm[j++] = d;
  }
  for (int i = 0; i < s->rank; i++) {
    to[perm[i]] = i;
    dims[i] = s->dimensions[perm[i]];
  }
  for (int i = 0; i < nb; i++) batch[i] = to[batch[i]];
  hlo_shape_t ts;
  hlo_shape_init(&ts, s->element_type, s->rank, dims);
  hlo_instruction_t *t = hlo_instruction_create(S->m, HLO_OPCODE_TRANSPOSE, &ts, 1, &op);
  if (!t) return NULL;
  t->attrs.permutation = hlo_dims_make(S->m, perm, s->rank);
  return dims_ok(t->attrs.permutation, s->rank) ? t : NULL;
}

/* dot_general whose contracting dimensions are not one run in both
 * operands (contracting_dims = [1, 2] x [2, 1], or [0, 2] x ...): the
 * pairs reordered where that makes both runs, else the operand (of the
 * two orders, the fewer bytes) transposed so that its dimensions are; the
 * GEMM kernels then take the product, which they could not before (one
 * invocation per output element: 256x512 over 16x32, 7x slower on
 * lavapipe).  The same sums of the same products in another order of k;
 * the result's dimensions are unchanged (the other dimensions keep their
 * order). */
static hlo_instruction_t *contracting_runs(simplifier_t *S, hlo_instruction_t *in, int depth) {
  const hlo_attrs_t *a = &in->attrs;
  int n = a->lhs_contracting_dimensions.count, nb = a->lhs_batching_dimensions.count;
  if (in->operand_count != 2 || n < 2 || a->rhs_contracting_dimensions.count != n ||
      a->rhs_batching_dimensions.count != nb)
    return NULL;
  hlo_instruction_t *op[2] = {in->operands[0], in->operands[1]};
  const int64_t *orig[2] = {a->lhs_contracting_dimensions.data, a->rhs_contracting_dimensions.data};
  if (hlo_shape_dims_contiguous(&op[0]->shape, orig[0], n) && hlo_shape_dims_contiguous(&op[1]->shape, orig[1], n)) return NULL;
  /* the pairs sorted by operand s's dimensions: c[s] ascending */
  int64_t c[2][2][HLO_MAX_RANK];
  uint64_t cost[2] = {0, 0};
  for (int s = 0; s < 2; s++) {
    int idx[HLO_MAX_RANK];
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = 1; i < n; i++)
      for (int k = i; k > 0 && orig[s][idx[k - 1]] > orig[s][idx[k]]; k--) {
        int t = idx[k];
        idx[k] = idx[k - 1];
        idx[k - 1] = t;
      }
    for (int k = 0; k < 2; k++) {
      for (int i = 0; i < n; i++) c[s][k][i] = orig[k][idx[i]];
      if (!hlo_shape_dims_contiguous(&op[k]->shape, c[s][k], n)) cost[s] += hlo_shape_size_bytes(&op[k]->shape);
    }
  }
  int s = cost[1] < cost[0];
  int64_t batch[2][HLO_MAX_RANK], lc[2][HLO_MAX_RANK];
  for (int k = 0; k < 2; k++) {
    const hlo_dims_t *b = k ? &a->rhs_batching_dimensions : &a->lhs_batching_dimensions;
    for (int i = 0; i < nb; i++) batch[k][i] = b->data[i];
    for (int i = 0; i < n; i++) lc[k][i] = c[s][k][i];
    if (hlo_shape_dims_contiguous(&op[k]->shape, c[s][k], n)) continue;
    int64_t at = 0;
    hlo_instruction_t *t = contracting_to_run(S, op[k], c[s][k], n, batch[k], nb, &at);
    op[k] = add_new(S, t, in, depth);
    if (!op[k]) return NULL;
    for (int i = 0; i < n; i++) lc[k][i] = at + i;
  }
  hlo_instruction_t *dot = hlo_instruction_create(S->m, HLO_OPCODE_DOT_GENERAL, &in->shape, 2, op);
  if (dot) {
    dot->attrs = *a;
    dot->attrs.lhs_batching_dimensions = hlo_dims_make(S->m, batch[0], nb);
    dot->attrs.rhs_batching_dimensions = hlo_dims_make(S->m, batch[1], nb);
    dot->attrs.lhs_contracting_dimensions = hlo_dims_make(S->m, lc[0], n);
    dot->attrs.rhs_contracting_dimensions = hlo_dims_make(S->m, lc[1], n);
    if (!dims_ok(dot->attrs.lhs_batching_dimensions, nb) || !dims_ok(dot->attrs.rhs_batching_dimensions, nb) ||
        !dims_ok(dot->attrs.lhs_contracting_dimensions, n) || !dims_ok(dot->attrs.rhs_contracting_dimensions, n))
      dot = NULL;
  }
  return add_new(S, dot, in, depth);
}

/* convolution(pad(x, +0), w) -> convolution(x, w) with the pad's edges
 * added to the convolution's padding: the padding a convolution implies is
 * +0 too, so the sums are the same (a pad with nonnegative edges on the
 * spatial dimensions only, no interior padding, no lhs dilation; the conv
 * kernels then read x itself instead of a padded copy). */
static hlo_instruction_t *fold_conv_pad(simplifier_t *S, hlo_instruction_t *in, int depth) {
  const hlo_attrs_t *a = &in->attrs;
  hlo_instruction_t *p = in->operands[0];
  int n = a->input_spatial_dimensions.count, rank = p->shape.rank;
  if (p->opcode != HLO_OPCODE_PAD || p->operand_count != 2 || a->padding.count != 2 * n ||
      p->attrs.edge_padding_low.count != rank || p->attrs.edge_padding_high.count != rank ||
      (p->attrs.interior_padding.count && p->attrs.interior_padding.count != rank))
    return NULL;
  hlo_element_type_t t = p->shape.element_type;
  char k = kind_of(t);
  if (!is_splat(p->operands[1], (k == 'S' || k == 'U' || k == 'P') ? SPLAT_ZERO : SPLAT_POS_ZERO)) return NULL;
  int64_t pad[2 * HLO_MAX_RANK];
  for (int d = 0; d < rank; d++) {
    int64_t lo = p->attrs.edge_padding_low.data[d], hi = p->attrs.edge_padding_high.data[d];
    if ((p->attrs.interior_padding.count && p->attrs.interior_padding.data[d] != 0) || lo < 0 || hi < 0) return NULL;
    int i = 0;
    while (i < n && a->input_spatial_dimensions.data[i] != d) i++;
    if (i == n) {
      if (lo || hi) return NULL; /* batch or feature padding changes the shapes */
      continue;
    }
    if (a->lhs_dilation.count && a->lhs_dilation.data[i] != 1) return NULL;
  }
  for (int i = 0; i < n; i++) {
    int64_t d = a->input_spatial_dimensions.data[i];
    pad[2 * i] = a->padding.data[2 * i] + p->attrs.edge_padding_low.data[d];
    pad[2 * i + 1] = a->padding.data[2 * i + 1] + p->attrs.edge_padding_high.data[d];
  }
  hlo_instruction_t *ops[2] = {p->operands[0], in->operands[1]};
  hlo_instruction_t *c = hlo_instruction_create(S->m, HLO_OPCODE_CONVOLUTION, &in->shape, 2, ops);
  if (c) {
    c->attrs = in->attrs;
    c->attrs.padding = hlo_dims_make(S->m, pad, 2 * n);
    if (!dims_ok(c->attrs.padding, 2 * n)) c = NULL;
  }
  return add_new(S, c, in, depth);
}

/* The algebraic rules; returns the replacement or NULL. */
static hlo_instruction_t *simplify_algebraic(simplifier_t *S, hlo_instruction_t *in, int depth) {
  const hlo_attrs_t *a = &in->attrs;
  hlo_instruction_t *x = in->operand_count ? in->operands[0] : NULL;
  hlo_instruction_t *r = NULL;
  switch (in->opcode) {
    case HLO_OPCODE_ADD: case HLO_OPCODE_SUBTRACT: case HLO_OPCODE_MULTIPLY:
    case HLO_OPCODE_DIVIDE: case HLO_OPCODE_OR: case HLO_OPCODE_XOR: case HLO_OPCODE_AND:
    case HLO_OPCODE_SHIFT_LEFT: case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC:
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL: case HLO_OPCODE_MAXIMUM: case HLO_OPCODE_MINIMUM:
      return simplify_binary(in);
    case HLO_OPCODE_NOT:
    case HLO_OPCODE_NEGATE:
      if (x->opcode == in->opcode && x->operand_count == 1) r = x->operands[0];
      break;
    case HLO_OPCODE_SELECT:
      if (in->operand_count != 3) return NULL;
      if (pred_is(x, true)) r = in->operands[1];
      else if (pred_is(x, false)) r = in->operands[2];
      else if (in->operands[1] == in->operands[2]) r = in->operands[1];
      break;
    case HLO_OPCODE_CONVERT:
      if (x->shape.element_type == in->shape.element_type) r = x;
      break;
    case HLO_OPCODE_RESHAPE:
      if (same_shape(&x->shape, &in->shape)) return x;
      if (x->opcode == HLO_OPCODE_RESHAPE)
        return add_new(S, make_unary(S, HLO_OPCODE_RESHAPE, in, x->operands[0]), in, depth);
      break;
    case HLO_OPCODE_TRANSPOSE: {
      const hlo_dims_t *p = &a->permutation;
      if (p->count != x->shape.rank) return NULL;
      if (is_identity(p)) {
        r = x;
        break;
      }
      if (x->opcode == HLO_OPCODE_DOT_GENERAL) {
        hlo_instruction_t *sw = swap_dot_operands(S, in, x, depth);
        if (sw || S->oom) return sw;
      }
      if (x->opcode == HLO_OPCODE_TRANSPOSE && x->attrs.permutation.count == p->count) {
        /* transpose(transpose(y, p1), p2) = transpose(y, q), q[i] = p1[p2[i]] */
        int64_t q[HLO_MAX_RANK];
        for (int i = 0; i < p->count; i++) q[i] = x->attrs.permutation.data[p->data[i]];
        hlo_instruction_t *t = make_unary(S, HLO_OPCODE_TRANSPOSE, in, x->operands[0]);
        if (t) {
          t->attrs.permutation = hlo_dims_make(S->m, q, p->count);
          if (!dims_ok(t->attrs.permutation, p->count)) t = NULL;
        }
        return add_new(S, t, in, depth);
      }
      break;
    }
    case HLO_OPCODE_BROADCAST_IN_DIM: {
      const hlo_dims_t *d = &a->broadcast_dimensions;
      if (d->count != x->shape.rank) return NULL;
      if (is_identity(d) && same_shape(&x->shape, &in->shape)) return x;
      if (x->opcode == HLO_OPCODE_BROADCAST_IN_DIM &&
          x->attrs.broadcast_dimensions.count == x->operands[0]->shape.rank) {
        /* operand dim i -> x dim d1[i] -> result dim d2[d1[i]] */
        const hlo_dims_t *d1 = &x->attrs.broadcast_dimensions;
        int64_t q[HLO_MAX_RANK];
        for (int i = 0; i < d1->count; i++) q[i] = d->data[d1->data[i]];
        hlo_instruction_t *b = make_unary(S, HLO_OPCODE_BROADCAST_IN_DIM, in, x->operands[0]);
        if (b) {
          b->attrs.broadcast_dimensions = hlo_dims_make(S->m, q, d1->count);
          if (!dims_ok(b->attrs.broadcast_dimensions, d1->count)) b = NULL;
        }
        return add_new(S, b, in, depth);
      }
      break;
    }
    case HLO_OPCODE_BROADCAST:
      if (a->dimensions.count == 0) r = x;
      break;
    case HLO_OPCODE_SLICE: {
      int rank = x->shape.rank;
      if (a->start_indices.count != rank || a->limit_indices.count != rank ||
          (a->strides.count && a->strides.count != rank))
        return NULL;
      bool full = true;
      for (int i = 0; i < rank; i++)
        full &= a->start_indices.data[i] == 0 && a->limit_indices.data[i] == x->shape.dimensions[i] &&
                (!a->strides.count || a->strides.data[i] == 1);
      if (full) {
        r = x;
        break;
      }
      int64_t d = x->attrs.dimension;
      if (x->opcode == HLO_OPCODE_IOTA && d >= 0 && d < rank && a->start_indices.data[d] == 0 &&
          (!a->strides.count || a->strides.data[d] == 1)) {
        /* iota values depend only on the iota dimension, which starts at 0 */
        hlo_instruction_t *io = hlo_instruction_create(S->m, HLO_OPCODE_IOTA, &in->shape, 0, NULL);
        if (io) io->attrs.dimension = d;
        return add_new(S, io, in, depth);
      }
      break;
    }
    case HLO_OPCODE_REVERSE: {
      bool trivial = true;
      for (int i = 0; i < a->dimensions.count; i++) {
        int64_t d = a->dimensions.data[i];
        trivial &= d >= 0 && d < x->shape.rank && x->shape.dimensions[d] <= 1;
      }
      if (trivial) r = x;
      break;
    }
    case HLO_OPCODE_CONCATENATE:
      if (in->operand_count == 1) r = x;
      break;
    case HLO_OPCODE_PAD: {
      bool none = true;
      for (int i = 0; i < a->edge_padding_low.count; i++) none &= a->edge_padding_low.data[i] == 0;
      for (int i = 0; i < a->edge_padding_high.count; i++) none &= a->edge_padding_high.data[i] == 0;
      for (int i = 0; i < a->interior_padding.count; i++) none &= a->interior_padding.data[i] == 0;
      if (none) r = x;
      break;
    }
    case HLO_OPCODE_GET_TUPLE_ELEMENT:
      if (x->opcode == HLO_OPCODE_TUPLE && a->index >= 0 && a->index < x->operand_count)
        r = x->operands[a->index];
      break;
    case HLO_OPCODE_DYNAMIC_SLICE:
      return dynamic_slice_to_slice(S, in, depth);
    case HLO_OPCODE_CONVOLUTION:
      return in->operand_count == 2 ? fold_conv_pad(S, in, depth) : NULL;
    case HLO_OPCODE_DOT_GENERAL:
      return contracting_runs(S, in, depth);
    default: break;
  }
  if (r && same_shape(&r->shape, &in->shape)) return r;
  return NULL;
}

/* ------------------------------------------------------- the walk */

/* What |in| (operands already final) simplifies to: itself or another
 * instruction of the same shape, defined before |in|. */
static hlo_instruction_t *simplify(simplifier_t *S, hlo_instruction_t *in, int depth) {
  if (depth > MAX_DEPTH || S->oom) return in;
  switch (in->opcode) {
    case HLO_OPCODE_PARAMETER:
    case HLO_OPCODE_CONSTANT:
    case HLO_OPCODE_FUSION:
      return in;
    default: break;
  }
  if (hlo_instruction_has_side_effect(in)) return in;
  hlo_instruction_t *r = fold_constant(S, in, depth);
  if (!r && !S->oom) r = simplify_algebraic(S, in, depth);
  if (!r || S->oom) return in;
  return r;
}

static hlo_instruction_t *replacement(hlo_instruction_t *in) {
  return in->scratch ? (hlo_instruction_t *)in->scratch : in;
}

static vkhlo_status_t simplify_computation(simplifier_t *S, hlo_computation_t *c) {
  S->out_count = 0;
  S->c = c;
  S->users_known = hlo_compute_users(S->m, c);
  for (int i = 0; i < c->instruction_count; i++) c->instructions[i]->scratch = NULL;
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    for (int k = 0; k < in->operand_count; k++) in->operands[k] = replacement(in->operands[k]);
    hlo_instruction_t *r = simplify(S, in, 0);
    if (S->oom) return VKHLO_NO_MEMORY();
    if (r == in) {
      emit(S, in);
      if (S->oom) return VKHLO_NO_MEMORY();
    } else {
      in->scratch = r;
      S->changed = true;
    }
  }
  if (c->root) c->root = replacement(c->root);
  for (int i = 0; i < c->instruction_count; i++) c->instructions[i]->scratch = NULL;
  if (S->out_count > c->instruction_capacity) {
    hlo_instruction_t **p = arena_alloc(&S->m->arena, sizeof(void *) * (size_t)S->out_count);
    if (!p) return VKHLO_NO_MEMORY();
    c->instructions = p;
    c->instruction_capacity = S->out_count;
  }
  memcpy(c->instructions, S->out, sizeof(void *) * (size_t)S->out_count);
  c->instruction_count = S->out_count;
  return NULL;
}

vkhlo_status_t codegen_simplify_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  (void)target;
  *changed = false;
  simplifier_t S = {.m = module};
  vkhlo_status_t st = NULL;
  bool entry_listed = false;
  for (int i = 0; i < module->computation_count && !st; i++) {
    entry_listed |= module->computations[i] == module->entry_computation;
    st = simplify_computation(&S, module->computations[i]);
  }
  if (!st && !entry_listed && module->entry_computation)
    st = simplify_computation(&S, module->entry_computation);
  vkhlo_free(S.m->arena.allocator, S.out);
  *changed = S.changed;
  return st;
}
