/*
 * Known trip counts of while loops (XLA's ComputeWhileLoopTripCount).
 *
 * The loop JAX writes for fori_loop and scan, and that lax.while_loop
 * with static bounds becomes, counts an integer loop value from a constant:
 *
 *   %r:2 = stablehlo.while(%i = %c0, %x = %init) ...
 *    cond {
 *     %p = stablehlo.compare LT, %i, %c_n, SIGNED      (n a constant)
 *     stablehlo.return %p
 *   } do {
 *     ...
 *     %j = stablehlo.add %i, %c_1                      (a constant step)
 *     stablehlo.return %j, ...
 *   }
 *
 * Its body runs a number of times the program fixes, which the host then
 * need not read back from the device after every iteration.  Recognised:
 *
 *   - the cond's root is a compare of loop value k (an integer scalar of
 *     8, 16, 32 or 64 bits) with a bound, either way round, any direction;
 *   - the bound is a constant of the cond, a captured operand of the while
 *     that is a constant, or a loop value that the body returns unchanged
 *     and that starts as a constant (lax.while_loop's carried upper bound);
 *   - the body returns k as k + c, c + k or k - c for a constant c (of
 *     the body, or a captured operand that is a constant);
 *   - k's initial value (the while's operand k) is a constant;
 *   - the cond has no side effect (it is not run when the count is known).
 *
 * The count is exact under the spec's wrapping integer arithmetic: values
 * are compared as the compare's comparison type says (SIGNED, UNSIGNED, or
 * from the element type), a loop whose value would wrap past the type's
 * range before the compare fails is not counted (it may run for ever; the
 * host loop and its iteration guard keep that case), and NE counts through
 * the wrap with steps of +1 and -1 only.  Anything else is "not known",
 * never a guess.
 */
#include "hlo/hlo.h"

#include <string.h>

/* The raw bits of integer scalar constant |in| of type |t|. */
static bool int_constant(const hlo_instruction_t *in, hlo_element_type_t t, uint64_t *out) {
  if (!in || in->opcode != HLO_OPCODE_CONSTANT || !in->literal || !in->literal->data || in->shape.rank != 0 ||
      in->shape.element_type != t)
    return false;
  size_t bytes = hlo_element_type_size_bytes(t);
  if (in->literal->size_bytes < bytes) return false;
  uint8_t v8;
  uint16_t v16;
  uint32_t v32;
  uint64_t v64;
  switch (bytes) {
    case 1: memcpy(&v8, in->literal->data, 1); *out = v8; return true;
    case 2: memcpy(&v16, in->literal->data, 2); *out = v16; return true;
    case 4: memcpy(&v32, in->literal->data, 4); *out = v32; return true;
    case 8: memcpy(&v64, in->literal->data, 8); *out = v64; return true;
    default: return false;
  }
}

/* The value the body's root returns as loop value |k| of |n|. */
static const hlo_instruction_t *body_result(const hlo_computation_t *body, int n, int k) {
  const hlo_instruction_t *root = body->root;
  if (!root) return NULL;
  if (root->opcode == HLO_OPCODE_TUPLE) return root->operand_count == n ? root->operands[k] : NULL;
  return n == 1 ? root : NULL;
}

static bool is_parameter(const hlo_instruction_t *in, int number) {
  return in && in->opcode == HLO_OPCODE_PARAMETER && in->parameter_number == number;
}

/* The value of |x|, an instruction of the cond or the body, when it is a
 * constant: a constant, or a parameter for a captured operand (past the
 * |n| loop values) that is one. */
static bool region_constant(const hlo_instruction_t *w, int n, const hlo_instruction_t *x, hlo_element_type_t t,
                            uint64_t *out) {
  if (int_constant(x, t, out)) return true;
  if (!x || x->opcode != HLO_OPCODE_PARAMETER) return false;
  int j = x->parameter_number;
  return j >= n && j < w->operand_count && int_constant(w->operands[j], t, out);
}

/* The constant value of cond operand |x| when it is the loop's bound: a
 * region constant, or a loop value the body passes through unchanged that
 * starts as a constant. */
static bool bound_value(const hlo_instruction_t *w, int n, const hlo_instruction_t *x, hlo_element_type_t t,
                        uint64_t *out) {
  if (region_constant(w, n, x, t, out)) return true;
  if (!x || x->opcode != HLO_OPCODE_PARAMETER) return false;
  int j = x->parameter_number;
  return j >= 0 && j < n && is_parameter(body_result(w->called_computations[1], n, j), j) &&
         int_constant(w->operands[j], t, out);
}

static hlo_comparison_direction_t swapped(hlo_comparison_direction_t d) {
  switch (d) {
    case HLO_CMP_LT: return HLO_CMP_GT;
    case HLO_CMP_LE: return HLO_CMP_GE;
    case HLO_CMP_GT: return HLO_CMP_LT;
    case HLO_CMP_GE: return HLO_CMP_LE;
    default: return d;
  }
}

/* The trip count of "v = a; while (v d b) v += s" over |bits|-bit values
 * taken as unsigned numbers in [0, mask] (signed ones shifted by
 * 2^(bits-1), which keeps their order and their differences), s the raw
 * step.  False where the loop would wrap before it ends. */
static bool count_trips(hlo_comparison_direction_t d, uint64_t a, uint64_t b, uint64_t s, int bits,
                        uint64_t *out) {
  uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
  bool holds;
  switch (d) {
    case HLO_CMP_EQ: holds = a == b; break;
    case HLO_CMP_NE: holds = a != b; break;
    case HLO_CMP_LT: holds = a < b; break;
    case HLO_CMP_LE: holds = a <= b; break;
    case HLO_CMP_GT: holds = a > b; break;
    case HLO_CMP_GE: holds = a >= b; break;
    default: return false;
  }
  if (!holds) {
    *out = 0;
    return true;
  }
  s &= mask;
  if (s == 0) return false; /* never ends */
  bool up = !(s >> (bits - 1) & 1);
  uint64_t m = up ? s : (0 - s) & mask; /* the step's magnitude */
  uint64_t trips, room;
  switch (d) {
    case HLO_CMP_EQ: /* one step leaves b */
      *out = 1;
      return true;
    case HLO_CMP_NE: /* counts through the wrap */
      if (m != 1) return false;
      *out = (up ? b - a : a - b) & mask;
      return true;
    case HLO_CMP_LT:
    case HLO_CMP_LE:
      if (!up) return false;
      trips = (b - a) / m + (d == HLO_CMP_LE || (b - a) % m != 0);
      room = mask - a; /* the last step must not pass the largest value */
      break;
    default: /* GT, GE */
      if (up) return false;
      trips = (a - b) / m + (d == HLO_CMP_GE || (a - b) % m != 0);
      room = a; /* nor the smallest */
      break;
  }
  if (trips > room / m) return false;
  *out = trips;
  return true;
}

bool hlo_while_trip_count(const hlo_instruction_t *w, hlo_trip_count_t *out) {
  if (w->opcode != HLO_OPCODE_WHILE || w->called_count != 2) return false;
  const hlo_computation_t *cond = w->called_computations[0], *body = w->called_computations[1];
  int n = hlo_shape_is_tuple(&w->shape) ? w->shape.tuple_count : 1;
  if (n > w->operand_count || cond->parameter_count != w->operand_count || hlo_computation_has_side_effect(cond))
    return false;
  const hlo_instruction_t *cmp = cond->root;
  if (!cmp || cmp->opcode != HLO_OPCODE_COMPARE || cmp->operand_count != 2) return false;
  hlo_element_type_t t = cmp->operands[0]->shape.element_type;
  int bits = hlo_element_type_bit_width(t);
  if (!hlo_element_type_is_integer(t) || cmp->operands[0]->shape.rank != 0 ||
      (size_t)bits != 8 * hlo_element_type_size_bytes(t))
    return false;
  bool is_signed = cmp->attrs.compare_type == HLO_CMP_TYPE_SIGNED ||
                   (cmp->attrs.compare_type == HLO_CMP_TYPE_NOTYPE && hlo_element_type_is_signed_int(t));
  if (cmp->attrs.compare_type != HLO_CMP_TYPE_SIGNED && cmp->attrs.compare_type != HLO_CMP_TYPE_UNSIGNED &&
      cmp->attrs.compare_type != HLO_CMP_TYPE_NOTYPE)
    return false;
  for (int side = 0; side < 2; side++) {
    const hlo_instruction_t *iv = cmp->operands[side], *other = cmp->operands[1 - side];
    if (iv->opcode != HLO_OPCODE_PARAMETER || iv->parameter_number < 0 || iv->parameter_number >= n) continue;
    int k = iv->parameter_number;
    /* the step: k + c, c + k or k - c */
    const hlo_instruction_t *next = body_result(body, n, k);
    if (!next || next->operand_count != 2) continue;
    uint64_t step;
    if (next->opcode == HLO_OPCODE_ADD && is_parameter(next->operands[0], k) &&
        region_constant(w, n, next->operands[1], t, &step)) {
    } else if (next->opcode == HLO_OPCODE_ADD && is_parameter(next->operands[1], k) &&
               region_constant(w, n, next->operands[0], t, &step)) {
    } else if (next->opcode == HLO_OPCODE_SUBTRACT && is_parameter(next->operands[0], k) &&
               region_constant(w, n, next->operands[1], t, &step)) {
      step = 0 - step;
    } else {
      continue;
    }
    uint64_t a, b, count;
    if (!int_constant(w->operands[k], t, &a) || !bound_value(w, n, other, t, &b)) continue;
    uint64_t init = a;
    if (is_signed) { /* order-keeping shift into [0, 2^bits) */
      uint64_t bias = 1ull << (bits - 1), mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
      a = (a + bias) & mask;
      b = (b + bias) & mask;
    }
    hlo_comparison_direction_t d = side == 0 ? cmp->attrs.comparison_direction : swapped(cmp->attrs.comparison_direction);
    if (!count_trips(d, a, b, step, bits, &count) || count > (uint64_t)INT64_MAX) return false;
    uint64_t mask = bits == 64 ? ~0ull : (1ull << bits) - 1;
    out->count = (int64_t)count;
    out->counter = k;
    out->init = init & mask;
    out->step = step & mask;
    return true;
  }
  return false;
}
