/*
 * Dense linear algebra kernels: triangular_solve, cholesky and the
 * internal lu and lu_pivots_to_permutation.
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

/* [batch..., row, col] */
static void matrix_index(const el_name_t *batch, int br, const char *row, const char *col, el_name_t *idx) {
  memcpy(idx, batch, sizeof(el_name_t) * (size_t)br);
  snprintf(idx[br].s, sizeof idx[br].s, "%s", row);
  snprintf(idx[br + 1].s, sizeof idx[br + 1].s, "%s", col);
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
  matrix_index(batch, batch_rank, swap ? k : i, swap ? i : k, idx);
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
static void chol_index(const el_name_t *batch, int br, bool lower, const char *i, const char *j,
                       el_name_t *idx) {
  matrix_index(batch, br, lower ? i : j, lower ? j : i, idx);
}

static vkhlo_status_t chol_load_a(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                  const el_name_t *batch, int br, bool lower, const char *i,
                                  const char *j, el_name_t *out) {
  el_name_t idx[HLO_MAX_RANK], v;
  chol_index(batch, br, lower, i, j, idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  if (lower) *out = v;
  else conj_(E, instr, instr->shape.element_type, v.s, out);
  return NULL;
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

/* ------------------------------------------------------------------ lu */

/* The workgroup size the lu kernel's invocations split the rows over */
#define LU_LANES 64

/* lu (internal; codegen/expand.c, "solver custom calls"): LAPACK getrf's
 * factorization of each batch matrix a [m, n]: P a = L U with L unit lower
 * triangular (m x min(m, n)) and U upper triangular, both in the first
 * result (L below the diagonal); pivots[j] (from 0) is the row swapped
 * with row j at step j; info is 1 + the first j whose pivot is exactly 0
 * (0: none).  Step j takes the first row of largest |a[i][j]| (|re| + |im|
 * for complex, as icamax) at or below j, swaps it with row j over all n
 * columns, divides the column below the diagonal by the pivot and
 * subtracts the outer product from the trailing matrix; a zero pivot
 * swaps and divides nothing.
 *
 * One workgroup per batch matrix (workgroup_problems): invocation `lane`
 * owns rows lane, lane + 64, ...; the pivot search reduces the lanes'
 * best rows through shared arrays, and barriers separate the search, the
 * swap (each lane swapping its columns) and the update (each lane its
 * rows), whose values other lanes read through the coherent result. */
vkhlo_status_t codegen_emit_lu(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 3)
    return VKHLO_INTERNAL("lu %s: operand of rank %d, or not three results", instr->name, r);
  int br = r - 2;
  int64_t m = s->dimensions[r - 2], n = s->dimensions[r - 1], kk = m < n ? m : n;
  int64_t rows = (m + LU_LANES - 1) / LU_LANES, cols = (n + LU_LANES - 1) / LU_LANES;
  E->workgroup_problems = true;
  const char *rt = t == HLO_C64 ? "float" : t == HLO_C128 ? "double" : glsl_compute_type(t);
  el_name_t best, row;
  el_fresh(E, "lu_best", &best);
  el_fresh(E, "lu_row", &row);
  strbuf_printf(&E->functions, "shared %s %s[%d];\nshared int %s[%d];\n", rt, best.s, LU_LANES, row.s, LU_LANES);

  hlo_shape_t batch;
  hlo_shape_init(&batch, t, br, s->dimensions);
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK];
  el_line(E, instr, "int lane = int(gl_LocalInvocationID.x);");
  el_line(E, instr, "int idx = int(gid) / %d;", LU_LANES);
  el_delinearize(E, instr, &batch, "idx", bidx);
  char ms[32], ns[32], ks[32];
  snprintf(ms, sizeof ms, "%lld", (long long)m);
  snprintf(ns, sizeof ns, "%lld", (long long)n);
  snprintf(ks, sizeof ks, "%lld", (long long)kk);
  /* the copy; per column the search, the reduction, the swap and the
   * rows below; the update of each of them */
  el_count_loop_iterations(E, instr, rows * n + kk * (rows + 6 + cols + rows) + rows * (kk * n - kk * (kk + 1) / 2));

  el_name_t i, c, j, v;
  glsl_scope_t l1 = el_open(E, instr, "for (int i = lane; i < %s; i += %d) {", ms, LU_LANES);
  snprintf(i.s, sizeof i.s, "i");
  glsl_scope_t l2 = open_loop(E, instr, &c, "0", ns, false);
  matrix_index(bidx, br, i.s, c.s, idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  codegen_store_result(E, instr, 0, idx, v.s);
  el_close(E, instr, l2);
  el_close(E, instr, l1);
  el_line(E, instr, "memoryBarrierBuffer();");
  el_line(E, instr, "barrier();");
  el_line(E, instr, "int info = 0;");

  glsl_scope_t steps = open_loop(E, instr, &j, "0", ks, false);
  /* this lane's first largest row, then the workgroup's */
  el_line(E, instr, "%s best = %s(-1);", rt, rt);
  el_line(E, instr, "int arg = %s;", ms);
  glsl_scope_t scan = el_open(E, instr, "for (int i = %s + lane; i < %s; i += %d) {", j.s, ms, LU_LANES);
  matrix_index(bidx, br, "i", j.s, idx);
  codegen_load_result(E, instr, 0, idx, &v);
  el_name_t mag;
  el_fresh(E, "mag", &mag);
  if (is_complex(t)) el_line(E, instr, "%s %s = abs(%s.x) + abs(%s.y);", rt, mag.s, v.s, v.s);
  else el_line(E, instr, "%s %s = abs(%s);", rt, mag.s, v.s);
  el_line(E, instr, "if (%s > best) { best = %s; arg = i; }", mag.s, mag.s);
  el_close(E, instr, scan);
  el_line(E, instr, "%s[lane] = best;", best.s);
  el_line(E, instr, "%s[lane] = arg;", row.s);
  el_line(E, instr, "barrier();");
  glsl_scope_t reduce = el_open(E, instr, "for (int h = %d; h > 0; h >>= 1) {", LU_LANES / 2);
  el_line(E, instr,
          "if (lane < h && (%s[lane + h] > %s[lane] || (%s[lane + h] == %s[lane] && %s[lane + h] < %s[lane]))) "
          "{ %s[lane] = %s[lane + h]; %s[lane] = %s[lane + h]; }",
          best.s, best.s, best.s, best.s, row.s, row.s, best.s, best.s, row.s, row.s);
  el_line(E, instr, "barrier();");
  el_close(E, instr, reduce);
  /* no row compared (all NaN): row j, as isamax; a zero pivot: nothing moves */
  el_line(E, instr, "int p = %s[0] < %s ? %s[0] : %s;", row.s, ms, row.s, j.s);
  el_line(E, instr, "bool pivot_zero = %s[0] == %s(0);", best.s, rt);
  el_line(E, instr, "if (pivot_zero && info == 0) info = %s + 1;", j.s);
  el_name_t pidx[HLO_MAX_RANK];
  memcpy(pidx, bidx, sizeof(el_name_t) * (size_t)br);
  pidx[br] = j;
  glsl_scope_t first = el_open(E, instr, "if (lane == 0) {");
  codegen_store_result(E, instr, 1, pidx, "p");
  el_close(E, instr, first);
  glsl_scope_t swap = el_open(E, instr, "if (!pivot_zero && p != %s) {", j.s);
  glsl_scope_t sl = el_open(E, instr, "for (int c = lane; c < %s; c += %d) {", ns, LU_LANES);
  el_name_t rowj[HLO_MAX_RANK], rowp[HLO_MAX_RANK], vj, vp;
  matrix_index(bidx, br, j.s, "c", rowj);
  matrix_index(bidx, br, "p", "c", rowp);
  codegen_load_result(E, instr, 0, rowj, &vj);
  codegen_load_result(E, instr, 0, rowp, &vp);
  codegen_store_result(E, instr, 0, rowj, vp.s);
  codegen_store_result(E, instr, 0, rowp, vj.s);
  el_close(E, instr, sl);
  el_close(E, instr, swap);
  el_line(E, instr, "memoryBarrierBuffer();");
  el_line(E, instr, "barrier();");
  /* the rows below: multipliers and the update of the trailing columns */
  glsl_scope_t update = el_open(E, instr, "if (!pivot_zero) {");
  el_name_t d, l, u, a;
  char jp1[EL_NAME_MAX + 8];
  matrix_index(bidx, br, j.s, j.s, idx);
  codegen_load_result(E, instr, 0, idx, &d);
  snprintf(jp1, sizeof jp1, "%s + 1", j.s);
  glsl_scope_t below = el_open(E, instr, "for (int i = %s + 1 + lane; i < %s; i += %d) {", j.s, ms, LU_LANES);
  matrix_index(bidx, br, "i", j.s, idx);
  codegen_load_result(E, instr, 0, idx, &v);
  div_(E, instr, t, v.s, d.s, &l);
  codegen_store_result(E, instr, 0, idx, l.s);
  glsl_scope_t right = open_loop(E, instr, &c, jp1, ns, false);
  matrix_index(bidx, br, j.s, c.s, idx);
  codegen_load_result(E, instr, 0, idx, &u);
  matrix_index(bidx, br, "i", c.s, idx);
  codegen_load_result(E, instr, 0, idx, &a);
  el_name_t acc;
  accumulator(E, instr, t, a.s, &acc);
  sub_product(E, instr, t, &acc, l.s, u.s);
  codegen_store_result(E, instr, 0, idx, acc.s);
  el_close(E, instr, right);
  el_close(E, instr, below);
  el_close(E, instr, update);
  el_line(E, instr, "memoryBarrierBuffer();");
  el_line(E, instr, "barrier();");
  el_close(E, instr, steps);
  glsl_scope_t last = el_open(E, instr, "if (lane == 0) {");
  codegen_store_result(E, instr, 2, bidx, "info");
  el_close(E, instr, last);
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}

/* lu_pivots_to_permutation (internal): the permutation of 0..p-1 that
 * the row interchanges i <-> pivots[i] (i = 0, 1, ..., in order) make;
 * an interchange with a row outside 0..p-1 is skipped.  One invocation
 * per batch, in the result buffer. */
vkhlo_status_t codegen_emit_lu_pivots_to_permutation(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                     int64_t *out_total) {
  const hlo_shape_t *ps = &instr->operands[0]->shape, *s = &instr->shape;
  int r = s->rank;
  if (r < 1 || ps->rank != r) return VKHLO_INTERNAL("lu_pivots_to_permutation %s: ranks", instr->name);
  int64_t k = ps->dimensions[r - 1], p = s->dimensions[r - 1];
  hlo_shape_t batch;
  hlo_shape_init(&batch, s->element_type, r - 1, s->dimensions);
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], i, v, a, b;
  el_line(E, instr, "int idx = int(gid);");
  el_delinearize(E, instr, &batch, "idx", bidx);
  memcpy(idx, bidx, sizeof(el_name_t) * (size_t)(r - 1));
  char ks[32], pstr[32];
  snprintf(ks, sizeof ks, "%lld", (long long)(k < p ? k : p));
  snprintf(pstr, sizeof pstr, "%lld", (long long)p);
  el_count_loop_iterations(E, instr, p + k);
  glsl_scope_t init = open_loop(E, instr, &i, "0", pstr, false);
  idx[r - 1] = i;
  codegen_store_result(E, instr, 0, idx, i.s);
  el_close(E, instr, init);
  glsl_scope_t swaps = open_loop(E, instr, &i, "0", ks, false);
  idx[r - 1] = i;
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  el_name_t pv;
  el_def(E, instr, HLO_S32, false, &pv, "int(%s)", v.s);
  glsl_scope_t in_range = el_open(E, instr, "if (%s >= 0 && %s < %s) {", pv.s, pv.s, pstr);
  el_name_t jdx[HLO_MAX_RANK];
  memcpy(jdx, idx, sizeof(el_name_t) * (size_t)r);
  jdx[r - 1] = pv;
  codegen_load_result(E, instr, 0, idx, &a);
  codegen_load_result(E, instr, 0, jdx, &b);
  codegen_store_result(E, instr, 0, idx, b.s);
  codegen_store_result(E, instr, 0, jdx, a.s);
  el_close(E, instr, in_range);
  el_close(E, instr, swaps);
  *out_total = hlo_shape_element_count(&batch);
  return NULL;
}
