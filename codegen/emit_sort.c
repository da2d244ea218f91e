/*
 * sort (spec 'sort') as a rank computation.
 *
 * One invocation per element i of the operands.  Along |dimension| it
 * counts the elements that go before it,
 *   rank = #{j : cmp(j, i)} + #{j < i : !cmp(i, j) && !cmp(j, i)},
 * with comparator arguments (lhs0, rhs0, lhs1, rhs1, ...), and writes every
 * operand's element i to position |rank| of the matching result.  Equal
 * elements keep their order, so the result is stable whether or not
 * is_stable is set.  This is O(n^2) per row: fine for the sizes programs
 * sort today; a bitonic/merge kernel can replace it later.
 *
 * The comparator must be a strict weak order (as the spec requires);
 * otherwise two elements may get the same rank.
 *
 * chlo.top_k uses the same rank scheme with a fixed descending total order.
 */
#include "codegen/emit_internal.h"

#include "support/status.h"

static vkhlo_status_t emit_call(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                const el_name_t *fn, int nargs, const el_name_t *args,
                                const el_name_t *result) {
  strbuf_t call;
  strbuf_init(&call, E->allocator);
  strbuf_printf(&call, "%s(", fn->s);
  for (int a = 0; a < nargs; a++) strbuf_printf(&call, "%s%s", a ? ", " : "", args[a].s);
  strbuf_printf(&call, ", %s);", result->s);
  vkhlo_status_t st = call.failed ? VKHLO_NO_MEMORY() : NULL;
  if (!st) el_line(E, instr, "%s", call.data);
  strbuf_free(&call);
  return st;
}

vkhlo_status_t codegen_emit_sort(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 int64_t *out_total) {
  int n = instr->operand_count;
  if (n < 1 || n > EL_MAX_RESULTS / 2) return el_unimplemented(instr, "sort of %d operands", n);
  if (instr->called_count < 1) return el_unimplemented(instr, "sort without a comparator");
  const hlo_shape_t *s = &instr->operands[0]->shape;
  int64_t dim = instr->attrs.dimension;
  if (dim < 0) dim += s->rank;
  if (s->rank == 0) dim = -1;
  if (s->rank > 0 && (dim < 0 || dim >= s->rank))
    return el_unimplemented(instr, "sort dimension %lld out of range", (long long)instr->attrs.dimension);
  el_name_t index[HLO_MAX_RANK], x[EL_MAX_RESULTS];
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, s, "idx", index);
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, index, &x[k]));
  if (dim < 0 || s->dimensions[dim] == 1) {
    for (int k = 0; k < n; k++) codegen_store_result(E, instr, k, index, x[k].s);
    *out_total = hlo_shape_element_count(s);
    return NULL;
  }
  el_name_t rank, j, jidx[HLO_MAX_RANK], y[EL_MAX_RESULTS];
  el_fresh(E, "i", &rank);
  el_line(E, instr, "int %s = 0;", rank.s);
  el_fresh(E, "r", &j);
  el_count_loop_iterations(E, instr, s->dimensions[dim]);
  glsl_scope_t loop = el_open(E, instr, "for (int %s = 0; %s < %lld; %s++) {", j.s, j.s,
                              (long long)s->dimensions[dim], j.s);
  el_line(E, instr, "if (%s == %s) continue;", j.s, index[dim].s);
  for (int d = 0; d < s->rank; d++) jidx[d] = index[d];
  jidx[dim] = j;
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, jidx, &y[k]));
  el_name_t before, after, args[EL_MAX_RESULTS];
  el_name_t fn;
  VKHLO_RETURN_IF_ERROR(el_function(E, instr, instr->called_computations[0], &fn));
  /* before = cmp(element j, element i) */
  el_fresh(E, "b", &before);
  el_line(E, instr, "bool %s;", before.s);
  for (int k = 0; k < n; k++) {
    args[2 * k] = y[k];
    args[2 * k + 1] = x[k];
  }
  VKHLO_RETURN_IF_ERROR(emit_call(E, instr, &fn, 2 * n, args, &before));
  glsl_scope_t branch = el_open(E, instr, "if (%s) {", before.s);
  el_line(E, instr, "%s++;", rank.s);
  branch = el_else(E, instr, branch, "else if (%s < %s) {", j.s, index[dim].s);
  /* j < i and neither goes before the other: j stays first */
  el_fresh(E, "b", &after);
  el_line(E, instr, "bool %s;", after.s);
  for (int k = 0; k < n; k++) {
    args[2 * k] = x[k];
    args[2 * k + 1] = y[k];
  }
  VKHLO_RETURN_IF_ERROR(emit_call(E, instr, &fn, 2 * n, args, &after));
  el_line(E, instr, "if (!%s) %s++;", after.s, rank.s);
  el_close(E, instr, branch);
  el_close(E, instr, loop);
  el_name_t oidx[HLO_MAX_RANK];
  for (int d = 0; d < s->rank; d++) oidx[d] = index[d];
  oidx[dim] = rank;
  for (int k = 0; k < n; k++) codegen_store_result(E, instr, k, oidx, x[k].s);
  *out_total = hlo_shape_element_count(s);
  return NULL;
}

/* Total-order key of compute value |v| of type |t| (an int, int64_t, uint
 * or bool expression comparable with < and >): floats order
 * -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. */
static vkhlo_status_t order_key(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                hlo_element_type_t t, const char *v, el_name_t *out) {
  if (t == HLO_F64 && !glsl_type_is_demoted(E->target, t)) {
    if (!E->target->shader_int64)
      return el_unimplemented(instr, "unsupported element type f64 for chlo.top_k (needs shaderInt64)");
    E->features |= GLSL_FEATURE_INT64;
    el_name_t b;
    el_def(E, instr, HLO_S64, false, &b, "doubleBitsToInt64(%s)", v);
    el_def(E, instr, HLO_S64, false, out, "(%s < 0l ? (%s ^ 9223372036854775807l) : %s)", b.s,
           b.s, b.s);
  } else if (hlo_element_type_is_float(t)) {
    E->features |= GLSL_HELPERS_FLOAT;
    el_def(E, instr, HLO_S32, false, out, "vk_total_key(%s)", v);
  } else if (t == HLO_PRED) {
    el_def(E, instr, HLO_U32, false, out, "(%s ? 1u : 0u)", v);
  } else if (glsl_type_is_emulated64(E->target, t)) {
    /* uvec2 keys compared with u64_lt: flip the sign bit of signed ones */
    E->features |= GLSL_HELPERS_EMU64;
    if (hlo_element_type_is_signed_int(t))
      el_def(E, instr, t, false, out, "(%s ^ uvec2(0u, 0x80000000u))", v);
    else el_def(E, instr, t, false, out, "%s", v);
  } else if (hlo_element_type_is_integer(t)) {
    el_def(E, instr, t, false, out, "%s", v);
  } else {
    return el_unimplemented(instr, "unsupported element type %s for chlo.top_k",
                            hlo_element_type_name(t));
  }
  return NULL;
}

/* chlo.top_k(operand, k) -> (values, indices): the k largest elements of
 * each row (last dimension) in descending order, ties in index order.
 * One invocation per operand element computes its descending rank
 *   rank = #{j : x_j > x_i} + #{j < i : x_j == x_i}
 * and, when rank < k, writes itself to position rank of both results. */
vkhlo_status_t codegen_emit_top_k(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  if (s->rank < 1 || el_result_count(instr) != 2)
    return el_unimplemented(instr, "chlo.top_k needs a ranked operand and two results");
  int dim = s->rank - 1;
  int64_t n = s->dimensions[dim], k = el_result_shape(instr, 0)->dimensions[dim];
  el_name_t index[HLO_MAX_RANK], x, kx;
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, s, "idx", index);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, index, &x));
  VKHLO_RETURN_IF_ERROR(order_key(E, instr, s->element_type, x.s, &kx));
  el_name_t rank, j, jidx[HLO_MAX_RANK], y, ky;
  el_fresh(E, "i", &rank);
  el_line(E, instr, "int %s = 0;", rank.s);
  el_fresh(E, "r", &j);
  el_count_loop_iterations(E, instr, n);
  glsl_scope_t loop = el_open(E, instr, "for (int %s = 0; %s < %lld; %s++) {", j.s, j.s, (long long)n, j.s);
  for (int d = 0; d < s->rank; d++) jidx[d] = index[d];
  jidx[dim] = j;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, jidx, &y));
  VKHLO_RETURN_IF_ERROR(order_key(E, instr, s->element_type, y.s, &ky));
  if (glsl_type_is_emulated64(E->target, s->element_type))
    el_line(E, instr, "if (u64_lt(%s, %s) || (%s == %s && %s < %s)) %s++;", kx.s, ky.s, ky.s,
            kx.s, j.s, index[dim].s, rank.s);
  else
    el_line(E, instr, "if (%s > %s || (%s == %s && %s < %s)) %s++;", ky.s, kx.s, ky.s, kx.s, j.s,
            index[dim].s, rank.s);
  el_close(E, instr, loop);
  glsl_scope_t kept = el_open(E, instr, "if (%s < %lld) {", rank.s, (long long)k);
  el_name_t oidx[HLO_MAX_RANK];
  for (int d = 0; d < s->rank; d++) oidx[d] = index[d];
  oidx[dim] = rank;
  codegen_store_result(E, instr, 0, oidx, x.s);
  el_name_t pos;
  el_convert(E, instr, HLO_S32, el_result_shape(instr, 1)->element_type, index[dim].s, &pos);
  codegen_store_result(E, instr, 1, oidx, pos.s);
  el_close(E, instr, kept);
  *out_total = hlo_shape_element_count(s);
  return NULL;
}
