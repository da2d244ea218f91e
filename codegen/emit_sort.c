/*
 * sort (spec 'sort') and the merge passes of long sorts (sort_runs, made
 * by codegen/expand.c) as rank computations.
 *
 * One kernel, one invocation per element i of the operands.  Along
 * |dimension| the operands are sorted in runs of |run| elements (from
 * index 0; the last run may be shorter), and each group of |merged| /
 * |run| consecutive runs is merged into one sorted run: element i, at
 * position pos in its own run, goes to
 *   group start + pos + sum over the group's other runs R of
 *     #{j in R : j goes before i},
 * where an element j of a run before i's own goes before i unless
 * cmp(i, j), and one of a run after it goes before i if cmp(j, i)
 * (comparator arguments lhs0, rhs0, lhs1, rhs1, ...).  Equal elements
 * keep their order, so every pass is stable, whether or not is_stable is
 * set.  The count in a sorted run is a binary search (about log2(run)
 * comparisons); with runs of one element it is one comparison.
 *
 * A sort is the pass with runs of one element merged into one run of the
 * whole dimension: n comparisons per element, O(n^2) per row, fine for
 * short rows; expand.c turns rows longer than that into a first pass
 * over short groups and merge passes of a few runs each (O(n log^2 n)).
 *
 * The comparator must be a strict weak order (as the spec requires);
 * otherwise two elements may get the same position.
 *
 * chlo.top_k of short rows uses a rank with a fixed descending total
 * order; long ones become a sort (expand.c).
 */
#include "codegen/emit_internal.h"

#include "support/status.h"

/* Appends to |call| "fn(" and the comparator arguments: element i's values
 * |x| as the left ones when |left| (a GLSL bool expression) holds and the
 * other element's |y| otherwise. */
static void comparator_call(strbuf_t *call, const el_name_t *fn, int n, const el_name_t *x,
                            const el_name_t *y, const char *left) {
  strbuf_printf(call, "%s(", fn->s);
  for (int k = 0; k < n; k++)
    strbuf_printf(call, "%s%s ? %s : %s, %s ? %s : %s", k ? ", " : "", left, x[k].s, y[k].s, left,
                  y[k].s, x[k].s);
}

/* The body of a sort or sort_runs kernel: runs of |run| merged in groups
 * of |merged| (see above). */
static vkhlo_status_t emit_merge(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 int64_t run, int64_t merged, int64_t keep, int64_t *out_total) {
  int n = instr->operand_count;
  if (n < 1 || n > EL_MAX_RESULTS / 2) return el_unimplemented(instr, "sort of %d operands", n);
  if (instr->called_count < 1) return el_unimplemented(instr, "sort without a comparator");
  const hlo_shape_t *s = &instr->operands[0]->shape;
  int64_t dim = instr->attrs.dimension;
  if (dim < 0) dim += s->rank;
  if (s->rank == 0) dim = -1;
  if (s->rank > 0 && (dim < 0 || dim >= s->rank))
    return el_unimplemented(instr, "sort dimension %lld out of range", (long long)instr->attrs.dimension);
  int64_t len = dim < 0 ? 1 : s->dimensions[dim];
  if (merged > len) merged = len;
  if (run > len) run = len;
  if (run < 1 || merged < run || (merged % run != 0 && merged != len) || keep < 0 ||
      (keep > 0 && merged < len && keep > merged))
    return el_unimplemented(instr, "sort_runs of runs %lld merged into %lld keeping %lld", (long long)run,
                            (long long)merged, (long long)keep);
  int64_t out_len = hlo_sort_runs_length(len, merged, keep);
  if (dim >= 0 && el_result_shape(instr, 0)->dimensions[dim] != out_len)
    return VKHLO_INTERNAL("sort_runs %s: result of %lld along the dimension, want %lld", instr->name,
                          (long long)el_result_shape(instr, 0)->dimensions[dim], (long long)out_len);
  el_name_t index[HLO_MAX_RANK], x[EL_MAX_RESULTS];
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, s, "idx", index);
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, index, &x[k]));
  *out_total = hlo_shape_element_count(s);
  if (merged == run && !keep) { /* nothing to merge */
    for (int k = 0; k < n; k++) codegen_store_result(E, instr, k, index, x[k].s);
    return NULL;
  }
  int64_t runs = (merged + run - 1) / run; /* per group */
  int steps = 0;                           /* binary search: bit length of run */
  for (int64_t r = run; r; r >>= 1) steps++;
  el_count_loop_iterations(E, instr, runs * (run == 1 ? 1 : steps));
  el_name_t fn;
  VKHLO_RETURN_IF_ERROR(el_function(E, instr, instr->called_computations[0], &fn));
  el_name_t start, own, dst, r, at, m, lo, hi, before, jidx[HLO_MAX_RANK], y[EL_MAX_RESULTS];
  const char *p = index[dim].s;
  el_fresh(E, "i", &start);
  el_fresh(E, "i", &own);
  el_fresh(E, "i", &dst);
  el_line(E, instr, "int %s = (%s / %lld) * %lld;", start.s, p, (long long)merged, (long long)merged);
  el_line(E, instr, "int %s = (%s - %s) / %lld;", own.s, p, start.s, (long long)run);
  el_line(E, instr, "int %s = %s - %s * %lld;", dst.s, p, own.s, (long long)run);
  el_fresh(E, "r", &r);
  glsl_scope_t loop = el_open(E, instr, "for (int %s = 0; %s < %lld; %s++) {", r.s, r.s,
                              (long long)runs, r.s);
  el_line(E, instr, "if (%s == %s) continue;", r.s, own.s);
  el_fresh(E, "i", &at);
  el_fresh(E, "i", &m);
  el_line(E, instr, "int %s = %s + %s * %lld;", at.s, start.s, r.s, (long long)run);
  el_line(E, instr, "int %s = min(%lld - %s, %lld);", m.s, (long long)len, at.s, (long long)run);
  el_fresh(E, "i", &lo);
  el_fresh(E, "i", &hi);
  el_line(E, instr, "int %s = 0, %s = %s;", lo.s, hi.s, m.s);
  glsl_scope_t search;
  el_name_t mid;
  if (run == 1) {
    search = el_open(E, instr, "if (%s > 0) {", m.s);
    mid = at;
  } else {
    el_name_t it;
    el_fresh(E, "r", &it);
    search = el_open(E, instr, "for (int %s = 0; %s < %d && %s < %s; %s++) {", it.s, it.s, steps,
                     lo.s, hi.s, it.s);
    el_fresh(E, "i", &mid);
    el_line(E, instr, "int %s = %s + ((%s + %s) >> 1);", mid.s, at.s, lo.s, hi.s);
  }
  for (int d = 0; d < s->rank; d++) jidx[d] = index[d];
  jidx[dim] = mid;
  for (int k = 0; k < n; k++) VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, jidx, &y[k]));
  /* the other element goes before element i: before own run, unless
   * cmp(i, j); after it, if cmp(j, i) */
  el_name_t left, c;
  el_fresh(E, "b", &left);
  el_fresh(E, "b", &c);
  el_line(E, instr, "bool %s = %s < %s;", left.s, r.s, own.s);
  el_line(E, instr, "bool %s;", c.s);
  strbuf_t call;
  strbuf_init(&call, E->allocator);
  comparator_call(&call, &fn, n, x, y, left.s);
  strbuf_printf(&call, ", %s);", c.s);
  vkhlo_status_t st = call.failed ? VKHLO_NO_MEMORY() : NULL;
  if (!st) el_line(E, instr, "%s", call.data);
  strbuf_free(&call);
  VKHLO_RETURN_IF_ERROR(st);
  el_fresh(E, "b", &before);
  el_line(E, instr, "bool %s = %s != %s;", before.s, left.s, c.s);
  if (run == 1) {
    el_line(E, instr, "if (%s) %s = 1;", before.s, lo.s);
  } else {
    el_line(E, instr, "if (%s) %s = %s - %s + 1; else %s = %s - %s;", before.s, lo.s, mid.s, at.s,
            hi.s, mid.s, at.s);
  }
  el_close(E, instr, search);
  el_line(E, instr, "%s += %s;", dst.s, lo.s);
  el_close(E, instr, loop);
  el_name_t oidx[HLO_MAX_RANK];
  for (int d = 0; d < s->rank; d++) oidx[d] = index[d];
  oidx[dim] = dst;
  glsl_scope_t kept = {0};
  if (keep) { /* the first |keep| of the group, at group * keep */
    el_line(E, instr, "%s -= %s;", dst.s, start.s);
    kept = el_open(E, instr, "if (%s < %lld) {", dst.s, (long long)keep);
    el_line(E, instr, "%s += %s / %lld * %lld;", dst.s, start.s, (long long)merged, (long long)keep);
  }
  for (int k = 0; k < n; k++) codegen_store_result(E, instr, k, oidx, x[k].s);
  if (keep) el_close(E, instr, kept);
  return NULL;
}

vkhlo_status_t codegen_emit_sort(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                 int64_t *out_total) {
  if (instr->opcode == HLO_OPCODE_SORT_RUNS)
    return emit_merge(E, instr, instr->attrs.run_length, instr->attrs.merged_run_length, instr->attrs.k,
                      out_total);
  return emit_merge(E, instr, 1, INT64_MAX, 0, out_total);
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
