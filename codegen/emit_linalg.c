/*
 * Dense linear algebra kernels: triangular_solve and cholesky.
 *
 * Both are sequential recurrences along one matrix dimension, so instead of
 * "one invocation per result element" each invocation owns one independent
 * problem and walks the recurrence serially:
 *
 *   triangular_solve: one invocation per right-hand side (a column of b for
 *     left_side, a row of b otherwise) of every batch matrix; forward or
 *     backward substitution over the k unknowns, O(k^2) work.
 *   cholesky: one invocation per batch matrix; the Cholesky-Banachiewicz
 *     row-by-row recurrence, O(n^3) work.
 *
 * Solved values are written to the result buffer as soon as they are known
 * and read back from it by the same invocation (the result bindings are
 * readwrite), so no per-invocation array of unknown size is needed.  Values
 * are computed in the element type's compute type (glsl_types.h) and
 * normalized after each operation, so f16/bf16 round like their own
 * arithmetic would; complex values use the prelude's vk_cmul/vk_cdiv.
 *
 * Parallelism is deliberately modest (the matrices seen in programs so far
 * are small); a blocked algorithm can replace these later without changing
 * the interface.
 */
#include "codegen/emit_internal.h"

#include <stdio.h>
#include <string.h>

#include "support/status.h"

/* The longest system whose solved values triangular_solve keeps in a
 * private array (the blocked solves' 64, codegen/expand.c, and shorter) */
#define TRSM_PRIVATE_MAX 64

/* ---------------------------------------------------------- arithmetic */

static bool is_complex(hlo_element_type_t t) { return hlo_element_type_is_complex(t); }

static vkhlo_status_t check_float_type(const hlo_instruction_t *instr, hlo_element_type_t t) {
  if (!hlo_element_type_is_float(t) && !is_complex(t))
    return el_unimplemented(instr, "unsupported element type %s for stablehlo.%s",
                            hlo_element_type_name(t), hlo_opcode_name(instr->opcode));
  return NULL;
}

/* out = a * b */
static void mul(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                const char *a, const char *b, el_name_t *out) {
  if (is_complex(t)) el_def(E, instr, t, false, out, "vk_cmul(%s, %s)", a, b);
  else el_def(E, instr, t, true, out, "%s * %s", a, b);
}

/* out = a / b */
static void div_(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                 const char *a, const char *b, el_name_t *out) {
  if (is_complex(t)) el_def(E, instr, t, false, out, "vk_cdiv(%s, %s)", a, b);
  else el_def(E, instr, t, true, out, "%s / %s", a, b);
}

/* out = conj(a) (a copy for real types) */
static void conj_(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                  const char *a, el_name_t *out) {
  if (is_complex(t)) el_def(E, instr, t, false, out, "%s(%s.x, -%s.y)", glsl_compute_type(t), a, a);
  else el_def(E, instr, t, false, out, "%s", a);
}

/* Declares a mutable accumulator of type |t| initialized to |init|. */
static void accumulator(elemental_emitter_t *E, const hlo_instruction_t *instr,
                        hlo_element_type_t t, const char *init, el_name_t *out) {
  el_fresh(E, "acc", out);
  el_line(E, instr, "%s %s = %s;", glsl_compute_type(t), out->s, init);
}

/* acc -= a * b (normalized) */
static void sub_product(elemental_emitter_t *E, const hlo_instruction_t *instr,
                        hlo_element_type_t t, const el_name_t *acc, const char *a, const char *b) {
  el_name_t p;
  mul(E, instr, t, a, b, &p);
  if (is_complex(t) || !glsl_type_needs_normalize(t)) {
    el_line(E, instr, "%s = %s - %s;", acc->s, acc->s, p.s);
  } else {
    strbuf_t sb, expr;
    strbuf_init(&sb, E->allocator);
    strbuf_init(&expr, E->allocator);
    strbuf_printf(&expr, "%s - %s", acc->s, p.s);
    glsl_append_normalized(&sb, t, expr.data ? expr.data : "0");
    if (sb.failed || expr.failed) E->body.failed = true;
    else el_line(E, instr, "%s = %s;", acc->s, sb.data);
    strbuf_free(&sb);
    strbuf_free(&expr);
  }
}

/* A "for (int NAME = FROM; NAME < TO; NAME++) {" loop (or counting down
 * from TO-1 to FROM when |down|); closes with el_close. */
static glsl_scope_t open_loop(elemental_emitter_t *E, const hlo_instruction_t *instr, el_name_t *var,
                              const char *from, const char *to, bool down) {
  el_fresh(E, "r", var);
  if (down)
    return el_open(E, instr, "for (int %s = (%s) - 1; %s >= (%s); %s--) {", var->s, to, var->s, from,
                   var->s);
  return el_open(E, instr, "for (int %s = %s; %s < %s; %s++) {", var->s, from, var->s, to, var->s);
}

/* ---------------------------------------------------- triangular_solve */

/* Loads M[i][k] where M is the matrix of the system "M x = rhs" solved for
 * one right-hand side: M = op(a) for left_side, op(a)^T otherwise, so
 * M[i][k] is a[i][k] or a[k][i] (|swap|), conjugated for ADJOINT. */
static vkhlo_status_t load_system(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *batch, int batch_rank, bool swap, bool conj,
                                  const char *i, const char *k, el_name_t *out) {
  el_name_t idx[HLO_MAX_RANK];
  for (int d = 0; d < batch_rank; d++) idx[d] = batch[d];
  snprintf(idx[batch_rank].s, sizeof idx[batch_rank].s, "%s", swap ? k : i);
  snprintf(idx[batch_rank + 1].s, sizeof idx[batch_rank + 1].s, "%s", swap ? i : k);
  el_name_t v;
  /* through the element view: a storage-buffer read costs lavapipe a loop over the lanes */
  VKHLO_RETURN_IF_ERROR(codegen_load_operand_viewed(E, instr, 0, idx, &v));
  if (conj) conj_(E, instr, instr->shape.element_type, v.s, out);
  else *out = v;
  return NULL;
}

/* triangular_solve (spec 'triangular_solve'): solves op(a) * x = b
 * (left_side) or x * op(a) = b for x, with op = identity, transpose or
 * adjoint (transpose_a), reading only the |lower| (or upper) triangle of a;
 * with unit_diagonal the diagonal of a is taken to be 1.  One invocation per
 * right-hand side runs forward substitution when the system matrix is lower
 * triangular and backward substitution when it is upper triangular. */
vkhlo_status_t codegen_emit_triangular_solve(elemental_emitter_t *E,
                                             const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *bs = &instr->operands[1]->shape;
  hlo_element_type_t t = instr->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = bs->rank;
  if (r < 2) return el_unimplemented(instr, "triangular_solve of rank %d", r);
  bool left = instr->attrs.left_side;
  int ta = instr->attrs.transpose_a;
  /* The unknowns of one problem run along |solve_dim| of b and x. */
  int solve_dim = left ? r - 2 : r - 1;
  int64_t kdim = bs->dimensions[solve_dim];
  bool swap = left ? ta != 0 : ta == 0;
  bool conj = ta == 2;
  bool m_lower = instr->attrs.lower != swap;

  hlo_shape_t work = *bs;
  work.dimensions[solve_dim] = 1;
  el_name_t index[HLO_MAX_RANK];
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, &work, "idx", index);

  /* Forward substitution visits i = 0..k-1 and sums over j < i; backward
   * substitution visits i = k-1..0 and sums over j > i. */
  char kstr[32];
  snprintf(kstr, sizeof kstr, "%lld", (long long)kdim);
  /* Short systems keep the solved values in a private array too, read
   * back from there instead of the result buffer */
  bool private_x = kdim <= TRSM_PRIVATE_MAX;
  el_name_t xs;
  if (private_x) {
    el_fresh(E, "xs", &xs);
    el_line(E, instr, "%s %s[%lld];", glsl_compute_type(t), xs.s, (long long)kdim);
  }
  el_name_t i, j;
  el_count_loop_iterations(E, instr, kdim + kdim * (kdim - 1) / 2); /* rows, and j before (after) i */
  glsl_scope_t rows = open_loop(E, instr, &i, "0", kstr, !m_lower);
  index[solve_dim] = i;
  el_name_t rhs, acc;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, index, &rhs));
  accumulator(E, instr, t, rhs.s, &acc);
  char from[EL_NAME_MAX + 8];
  glsl_scope_t sum;
  if (m_lower) sum = open_loop(E, instr, &j, "0", i.s, false);
  else {
    snprintf(from, sizeof from, "%s + 1", i.s);
    sum = open_loop(E, instr, &j, from, kstr, false);
  }
  el_name_t a, x, xidx[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(load_system(E, instr, index, r - 2, swap, conj, i.s, j.s, &a));
  if (private_x) {
    el_def(E, instr, t, false, &x, "%s[%s]", xs.s, j.s);
  } else {
    memcpy(xidx, index, sizeof(el_name_t) * (size_t)r);
    xidx[solve_dim] = j;
    codegen_load_result(E, instr, 0, xidx, &x);
  }
  sub_product(E, instr, t, &acc, a.s, x.s);
  el_close(E, instr, sum);
  el_name_t value = acc;
  if (!instr->attrs.unit_diagonal) {
    el_name_t d;
    VKHLO_RETURN_IF_ERROR(load_system(E, instr, index, r - 2, swap, conj, i.s, i.s, &d));
    div_(E, instr, t, acc.s, d.s, &value);
  }
  codegen_store_result(E, instr, 0, index, value.s);
  if (private_x) el_line(E, instr, "%s[%s] = %s;", xs.s, i.s, value.s);
  el_close(E, instr, rows);
  *out_total = hlo_shape_element_count(&work);
  return NULL;
}

/* ------------------------------------------------------------ cholesky */

/* cholesky (spec 'cholesky'): for each batch matrix a (Hermitian positive
 * definite; only the |lower| or upper triangle is read) computes L with
 * a = L * L^H, L lower triangular, returned as L (lower) or U = L^H
 * (upper).  The other triangle of the result is implementation-defined;
 * we write zeros there (as XLA does).  One invocation per batch matrix:
 *   for i: for j <= i:
 *     s = A[i][j] - sum_{k<j} L[i][k] * conj(L[j][k])
 *     L[i][j] = (i == j) ? sqrt(s) : s / L[j][j]
 * where A[i][j] (i >= j) is a[i][j] (lower) or conj(a[j][i]) (upper), and
 * L[i][j] is stored at result[i][j] (lower) or conj'd at result[j][i].
 * A non-positive pivot gives NaNs, as in XLA. */
static vkhlo_status_t chol_load_a(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *batch, int br, bool lower, const char *i,
                                  const char *j, el_name_t *out) {
  el_name_t idx[HLO_MAX_RANK], v;
  memcpy(idx, batch, sizeof(el_name_t) * (size_t)br);
  snprintf(idx[br].s, sizeof idx[br].s, "%s", lower ? i : j);
  snprintf(idx[br + 1].s, sizeof idx[br + 1].s, "%s", lower ? j : i);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  if (lower) *out = v;
  else conj_(E, instr, instr->shape.element_type, v.s, out);
  return NULL;
}

static void chol_index(const el_name_t *batch, int br, bool lower, const char *i, const char *j,
                       el_name_t *idx) {
  memcpy(idx, batch, sizeof(el_name_t) * (size_t)br);
  snprintf(idx[br].s, sizeof idx[br].s, "%s", lower ? i : j);
  snprintf(idx[br + 1].s, sizeof idx[br + 1].s, "%s", lower ? j : i);
}

static void chol_load_l(elemental_emitter_t *E, const hlo_instruction_t *instr,
                        const el_name_t *batch, int br, bool lower, const char *i, const char *j,
                        el_name_t *out) {
  el_name_t idx[HLO_MAX_RANK], v;
  chol_index(batch, br, lower, i, j, idx);
  codegen_load_result(E, instr, 0, idx, &v);
  if (lower) *out = v;
  else conj_(E, instr, instr->shape.element_type, v.s, out);
}

static void chol_store_l(elemental_emitter_t *E, const hlo_instruction_t *instr,
                         const el_name_t *batch, int br, bool lower, const char *i, const char *j,
                         const char *v) {
  el_name_t idx[HLO_MAX_RANK], c;
  chol_index(batch, br, lower, i, j, idx);
  if (lower) {
    codegen_store_result(E, instr, 0, idx, v);
  } else {
    conj_(E, instr, instr->shape.element_type, v, &c);
    codegen_store_result(E, instr, 0, idx, c.s);
  }
}

vkhlo_status_t codegen_emit_cholesky(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                     int64_t *out_total) {
  const hlo_shape_t *s = &instr->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2) return el_unimplemented(instr, "cholesky of rank %d", r);
  int br = r - 2;
  bool lower = instr->attrs.lower;
  int64_t n = s->dimensions[r - 1];
  char nstr[32];
  snprintf(nstr, sizeof nstr, "%lld", (long long)n);
  hlo_shape_t batch;
  hlo_shape_init(&batch, t, br, s->dimensions);
  el_name_t bidx[HLO_MAX_RANK];
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, &batch, "idx", bidx);

  el_name_t i, j, k, zero;
  el_def(E, instr, t, false, &zero, "%s(0)", glsl_compute_type(t));
  /* rows, the zeros right of the diagonal, the columns up to it, and k < j */
  el_count_loop_iterations(E, instr, n + n * (n - 1) / 2 + n * (n + 1) / 2 + (n - 1) * n * (n + 1) / 6);
  glsl_scope_t rows = open_loop(E, instr, &i, "0", nstr, false);
  char ip1[EL_NAME_MAX + 8];
  snprintf(ip1, sizeof ip1, "%s + 1", i.s);
  /* the strictly upper part of row i of L is zero */
  glsl_scope_t upper = open_loop(E, instr, &j, ip1, nstr, false);
  chol_store_l(E, instr, bidx, br, lower, i.s, j.s, zero.s);
  el_close(E, instr, upper);
  glsl_scope_t columns = open_loop(E, instr, &j, "0", ip1, false);
  el_name_t a, acc;
  VKHLO_RETURN_IF_ERROR(chol_load_a(E, instr, bidx, br, lower, i.s, j.s, &a));
  accumulator(E, instr, t, a.s, &acc);
  glsl_scope_t sum = open_loop(E, instr, &k, "0", j.s, false);
  el_name_t lik, ljk, cjk;
  chol_load_l(E, instr, bidx, br, lower, i.s, k.s, &lik);
  chol_load_l(E, instr, bidx, br, lower, j.s, k.s, &ljk);
  conj_(E, instr, t, ljk.s, &cjk);
  sub_product(E, instr, t, &acc, lik.s, cjk.s);
  el_close(E, instr, sum);
  glsl_scope_t branch = el_open(E, instr, "if (%s == %s) {", i.s, j.s);
  el_name_t root;
  if (is_complex(t)) el_def(E, instr, t, false, &root, "vk_csqrt(%s)", acc.s);
  else el_def(E, instr, t, true, &root, "sqrt(%s)", acc.s);
  chol_store_l(E, instr, bidx, br, lower, i.s, j.s, root.s);
  branch = el_else(E, instr, branch, "else {");
  el_name_t ljj, q;
  chol_load_l(E, instr, bidx, br, lower, j.s, j.s, &ljj);
  div_(E, instr, t, acc.s, ljj.s, &q);
  chol_store_l(E, instr, bidx, br, lower, i.s, j.s, q.s);
  el_close(E, instr, branch);
  el_close(E, instr, columns);
  el_close(E, instr, rows);
  *out_total = hlo_shape_element_count(&batch);
  return NULL;
}
