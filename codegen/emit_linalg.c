/*
 * Dense linear algebra kernels: triangular_solve, cholesky and the
 * internal lu, lu_pivots_to_permutation, qr, householder_product, eigh,
 * svd and tridiagonal_solve.
 *
 * Each is a sequential recurrence along one matrix dimension, so instead
 * of "one invocation per result element":
 *
 *   triangular_solve: one invocation per right-hand side (a column of b for
 *     left_side, a row of b otherwise) of every batch matrix; forward or
 *     backward substitution over the k unknowns, O(k^2) work.
 *   cholesky: one invocation per batch matrix; the Cholesky-Banachiewicz
 *     row-by-row recurrence, O(n^3) work.
 *   lu, qr, householder_product, eigh, svd, tridiagonal_solve: one
 *     workgroup per batch matrix (workgroup_problems), its invocations
 *     ("lanes") splitting each step's rows (tridiagonal_solve: the
 *     right-hand sides), synchronized by barriers, reducing through
 *     shared arrays.
 *
 * Solved values are written to the result buffer as soon as they are known
 * and read back from it (the result bindings are readwrite; coherent for
 * the workgroup kernels), so no per-invocation array of unknown size is
 * needed.  Values are computed in the element type's compute type
 * (glsl_types.h) and normalized after each operation, so f16/bf16 round
 * like their own arithmetic would; complex values use the prelude's
 * vk_cmul/vk_cdiv.
 *
 * codegen/expand.c builds the blocked algorithms for large matrices from
 * these kernels, triangular solves and GEMMs.
 */
#include "codegen/emit_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "support/status.h"

/* The longest system whose solved values triangular_solve keeps in a
 * private array (the blocked solves' 64, codegen/expand.c, and shorter) */
#define TRSM_PRIVATE_MAX 64

/* ---------------------------------------------------------- arithmetic */

static bool is_complex(hlo_element_type_t t) { return hlo_element_type_is_complex(t); }

/* The GLSL type of a real value of |t|: of its parts for complex types. */
static const char *real_compute_type(hlo_element_type_t t) {
  return t == HLO_C64 ? "float" : t == HLO_C128 ? "double" : glsl_compute_type(t);
}

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

/* [batch..., last] */
static void vector_index(const el_name_t *batch, int br, const char *last, el_name_t *idx) {
  memcpy(idx, batch, sizeof(el_name_t) * (size_t)br);
  snprintf(idx[br].s, sizeof idx[br].s, "%s", last);
}

/* [batch..., row, col] */
static void matrix_index(const el_name_t *batch, int br, const char *row, const char *col, el_name_t *idx) {
  vector_index(batch, br, row, idx);
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

/* Declares |mag| = |x| and |phase| = x / |x| (1 for x = 0) of a value
 * of type |t|; a complex x is scaled by its larger part first, as its
 * square may be subnormal (flushed to zero on many devices). */
static void magnitude_phase(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                            const char *x, const char *mag, const char *phase) {
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  if (!is_complex(t)) {
    el_line(E, instr, "%s %s = abs(%s), %s = %s < %s(0) ? %s(-1) : %s(1);", rt, mag, x, phase, x, rt, rt, rt);
    return;
  }
  el_line(E, instr, "%s %s_big = max(abs(%s.x), abs(%s.y));", rt, mag, x, x);
  el_line(E, instr, "%s %s_unit = %s_big > %s(0) ? %s / %s_big : %s(1, 0);", ct, phase, mag, rt, x, mag, ct);
  el_line(E, instr, "%s %s_len = length(%s_unit), %s = %s_big * %s_len;", rt, mag, phase, mag, mag, mag);
  el_line(E, instr, "%s %s = %s_unit / %s_len;", ct, phase, phase, mag);
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

/* The opening of a kernel whose workgroup solves one matrix of |s|
 * [batch..., m, n] (workgroup_problems): `lane`, the batch index of the
 * workgroup's matrix into |bidx| and the batch shape into |batch|. */
static void open_problem(elemental_emitter_t *E, const hlo_instruction_t *instr, const hlo_shape_t *s,
                         el_name_t *bidx, hlo_shape_t *batch) {
  E->workgroup_problems = true;
  hlo_shape_init(batch, s->element_type, s->rank - 2, s->dimensions);
  el_line(E, instr, "int lane = int(gl_LocalInvocationID.x);");
  el_line(E, instr, "int idx = int(gid) / %d;", LU_LANES);
  el_delinearize(E, instr, batch, "idx", bidx);
}

/* Makes what every invocation of the workgroup stored into the results so
 * far visible to all of them (the results are coherent), and waits. */
static void sync_results(elemental_emitter_t *E, const hlo_instruction_t *instr) {
  el_line(E, instr, "memoryBarrierBuffer();");
  el_line(E, instr, "barrier();");
}

/* Result |r| at |idx| = |v|, stored by invocation 0 alone. */
static void store_by_first(elemental_emitter_t *E, const hlo_instruction_t *instr, int r, const el_name_t *idx,
                           const char *v) {
  glsl_scope_t first = el_open(E, instr, "if (lane == 0) {");
  codegen_store_result(E, instr, r, idx, v);
  el_close(E, instr, first);
}

/* Declares the workgroup's shared array |out| (named from |prefix|) of
 * |count| elements of GLSL type |type|; a single value for count 0. */
static void shared_array(elemental_emitter_t *E, const char *prefix, const char *type, int64_t count,
                         el_name_t *out) {
  el_fresh(E, prefix, out);
  if (count) strbuf_printf(&E->functions, "shared %s %s[%lld];\n", type, out->s, (long long)count);
  else strbuf_printf(&E->functions, "shared %s %s;\n", type, out->s);
}

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
  const char *rt = real_compute_type(t);
  el_name_t best, row;
  shared_array(E, "lu_best", rt, LU_LANES, &best);
  shared_array(E, "lu_row", "int", LU_LANES, &row);

  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK];
  open_problem(E, instr, s, bidx, &batch);
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
  sync_results(E, instr);
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
  vector_index(bidx, br, j.s, pidx);
  store_by_first(E, instr, 1, pidx, "p");
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
  sync_results(E, instr);
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
  sync_results(E, instr);
  el_close(E, instr, steps);
  store_by_first(E, instr, 2, bidx, "info");
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

/* ------------------------------------------------- qr, householder_product */

/* Names of the shared arrays of the Householder kernels: per lane the
 * scale and scaled sum of squares of its rows (the norm), per (column,
 * lane) the partial dot products v^H a[:, c], per column their sum. */
typedef struct householder_shared_s {
  el_name_t scale, ssq, part, w;
} householder_shared_t;

/* Declares the shared arrays for |cols| columns of element type |t|. */
static void householder_shared(elemental_emitter_t *E, hlo_element_type_t t, int64_t cols, householder_shared_t *sh) {
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  shared_array(E, "hh_scale", rt, LU_LANES, &sh->scale);
  shared_array(E, "hh_ssq", rt, LU_LANES, &sh->ssq);
  shared_array(E, "hh_part", ct, cols * LU_LANES, &sh->part);
  shared_array(E, "hh_w", ct, cols, &sh->w);
}

/* Opens the loops over the elements (i, c) of this lane's rows (i % 64 ==
 * lane) of an m x n matrix; el_close(scopes[1]) then el_close(scopes[0]). */
static void own_elements(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t m, int64_t n,
                         glsl_scope_t *scopes) {
  scopes[0] = el_open(E, instr, "for (int i = lane; i < %lld; i += %d) {", (long long)m, LU_LANES);
  scopes[1] = el_open(E, instr, "for (int c = 0; c < %lld; c++) {", (long long)n);
}

/* Opens "for (int i = ...) {" over the rows from |from| to m-1 that this
 * lane owns (i % 64 == lane): the same rows at every step, so that a lane
 * reads back only what it wrote itself between barriers. */
static glsl_scope_t own_rows(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *from, int64_t m) {
  return el_open(E, instr, "for (int i = (%s) + (lane - (%s) %% %d + %d) %% %d; i < %lld; i += %d) {", from, from,
                 LU_LANES, LU_LANES, LU_LANES, (long long)m, LU_LANES);
}

/* Applies H = I - tau v v^H (H^H, with conj(tau), when |adjoint|) to the
 * result's columns first..n-1, rows j..m-1 of the workgroup's matrix: v[j]
 * = 1 and v[i] = src[i][j] below (src: operand 0, or the result when
 * |v_in_result|).  Lanes own rows: each sums its rows' share of w[c] =
 * v^H a[:, c] into the shared partial sums, lane c adds them up, each
 * updates its rows.  The caller's |skip| (uniform) leaves the matrix
 * alone.  Returns the loop iterations per invocation. */
static int64_t householder_apply(elemental_emitter_t *E, const hlo_instruction_t *instr, const el_name_t *bidx,
                                 int br, const householder_shared_t *sh, bool v_in_result, const char *j,
                                 const char *first, const char *tau, bool adjoint, const char *skip, int64_t m,
                                 int64_t n) {
  hlo_element_type_t t = el_result_shape(instr, 0)->element_type;
  const char *ct = glsl_compute_type(t);
  bool cx = is_complex(t);
  el_name_t idx[HLO_MAX_RANK], v, a, vc, p;
  int64_t rows = (m + LU_LANES - 1) / LU_LANES;
  /* v[i] for this lane's row i */
  glsl_scope_t dots = el_open(E, instr, "if (!%s) {", skip);
  glsl_scope_t cols = el_open(E, instr, "for (int c = %s; c < %lld; c++) {", first, (long long)n);
  el_line(E, instr, "%s hd = %s(0);", ct, ct);
  glsl_scope_t own = own_rows(E, instr, j, m);
  matrix_index(bidx, br, "i", j, idx);
  if (v_in_result) codegen_load_result(E, instr, 0, idx, &v);
  else if (el_operand(E, instr, 0, idx, &v)) E->body.failed = true;
  el_def(E, instr, t, false, &vc, "i == %s ? %s(1%s) : %s", j, ct, cx ? ", 0" : "", v.s);
  matrix_index(bidx, br, "i", "c", idx);
  codegen_load_result(E, instr, 0, idx, &a);
  conj_(E, instr, t, vc.s, &v);
  mul(E, instr, t, v.s, a.s, &p);
  el_line(E, instr, "hd += %s;", p.s);
  el_close(E, instr, own);
  el_line(E, instr, "%s[c * %d + lane] = hd;", sh->part.s, LU_LANES);
  el_close(E, instr, cols);
  el_close(E, instr, dots);
  el_line(E, instr, "barrier();");
  glsl_scope_t sums = el_open(E, instr, "if (!%s) {", skip);
  glsl_scope_t mine = el_open(E, instr, "for (int c = %s + lane; c < %lld; c += %d) {", first, (long long)n, LU_LANES);
  el_line(E, instr, "%s hs = %s(0);", ct, ct);
  el_line(E, instr, "for (int l = 0; l < %d; l++) hs += %s[c * %d + l];", LU_LANES, sh->part.s, LU_LANES);
  el_line(E, instr, "%s[c] = hs;", sh->w.s);
  el_close(E, instr, mine);
  el_close(E, instr, sums);
  el_line(E, instr, "barrier();");
  glsl_scope_t update = el_open(E, instr, "if (!%s) {", skip);
  own = own_rows(E, instr, j, m);
  matrix_index(bidx, br, "i", j, idx);
  if (v_in_result) codegen_load_result(E, instr, 0, idx, &v);
  else if (el_operand(E, instr, 0, idx, &v)) E->body.failed = true;
  el_def(E, instr, t, false, &vc, "i == %s ? %s(1%s) : %s", j, ct, cx ? ", 0" : "", v.s);
  el_name_t tc, f;
  if (adjoint) conj_(E, instr, t, tau, &tc);
  else el_def(E, instr, t, false, &tc, "%s", tau);
  mul(E, instr, t, tc.s, vc.s, &f);
  cols = el_open(E, instr, "for (int c = %s; c < %lld; c++) {", first, (long long)n);
  matrix_index(bidx, br, "i", "c", idx);
  codegen_load_result(E, instr, 0, idx, &a);
  el_name_t acc, wc;
  accumulator(E, instr, t, a.s, &acc);
  el_def(E, instr, t, false, &wc, "%s[c]", sh->w.s);
  sub_product(E, instr, t, &acc, f.s, wc.s);
  codegen_store_result(E, instr, 0, idx, acc.s);
  el_close(E, instr, cols);
  el_close(E, instr, own);
  el_close(E, instr, update);
  return 2 * rows * n + (n + LU_LANES - 1) / LU_LANES * LU_LANES + 2 * rows;
}

/* qr (internal; codegen/expand.c, "solver custom calls"): LAPACK geqrf's
 * Householder QR of each batch matrix a [m, n]: a = Q R with Q = H(0)
 * H(1) ... H(k-1), k = min(m, n), H(j) = I - tau[j] v v^H, v[j] = 1.  The
 * first result holds R on and above the diagonal and v[j+1..m-1] below
 * it in column j; the second the taus [k].  Each step is LAPACK's larfg:
 * with x = a[j+1.., j] and alpha = a[j][j], tau = 0 when x = 0 and alpha
 * is real; else beta = -sign(re alpha) |(alpha, x)|, tau = (beta -
 * alpha) / beta, x scaled by 1 / (alpha - beta), a[j][j] = beta; then
 * H(j)^H is applied to the columns right of j (householder_apply).  The
 * norms are scaled as LAPACK's nrm2 (no overflow or underflow of the
 * squares).  One workgroup per matrix; lanes own rows.  Columns: at most
 * what the shared arrays hold (codegen/expand.c blocks wider matrices). */
vkhlo_status_t codegen_emit_qr(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 2)
    return VKHLO_INTERNAL("qr %s: operand of rank %d, or not two results", instr->name, r);
  int br = r - 2;
  int64_t m = s->dimensions[r - 2], n = s->dimensions[r - 1], kk = m < n ? m : n;
  int64_t rows = (m + LU_LANES - 1) / LU_LANES;
  bool cx = is_complex(t);
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  householder_shared_t sh;
  householder_shared(E, t, n, &sh);
  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], v;
  open_problem(E, instr, s, bidx, &batch);

  /* the copy */
  glsl_scope_t loops[2];
  own_elements(E, instr, m, n, loops);
  matrix_index(bidx, br, "i", "c", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  codegen_store_result(E, instr, 0, idx, v.s);
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  sync_results(E, instr);

  glsl_scope_t steps = el_open(E, instr, "for (int j = 0; j < %lld; j++) {", (long long)kk);
  el_name_t alpha;
  matrix_index(bidx, br, "j", "j", idx);
  codegen_load_result(E, instr, 0, idx, &alpha);
  /* this lane's share of |x| as LAPACK's lassq: scale * sqrt(ssq) */
  el_line(E, instr, "%s sc = %s(0), ss = %s(1);", rt, rt, rt);
  glsl_scope_t own = own_rows(E, instr, "j + 1", m);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 0, idx, &v);
  for (int part = 0; part < (cx ? 2 : 1); part++) {
    el_line(E, instr, "%s ax%d = abs(%s%s);", rt, part, v.s, cx ? (part ? ".y" : ".x") : "");
    el_line(E, instr, "if (ax%d > sc) { %s q = sc / ax%d; ss = %s(1) + ss * q * q; sc = ax%d; }", part, rt, part, rt,
            part);
    el_line(E, instr, "else if (ax%d > %s(0)) { %s q = ax%d / sc; ss += q * q; }", part, rt, rt, part);
    el_line(E, instr, "if (isnan(ax%d)) ss = ax%d;", part, part);
  }
  el_close(E, instr, own);
  el_line(E, instr, "%s[lane] = sc;", sh.scale.s);
  el_line(E, instr, "%s[lane] = ss;", sh.ssq.s);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "%s big = %s(0), sum = %s(0);", rt, rt, rt);
  el_line(E, instr, "for (int l = 0; l < %d; l++) big = max(big, %s[l]);", LU_LANES, sh.scale.s);
  /* a NaN's lane has ssq NaN: sum and xnorm NaN */
  el_line(E, instr, "for (int l = 0; l < %d; l++) { %s q = big > %s(0) ? %s[l] / big : %s(0); sum += %s[l] * q * q; }",
          LU_LANES, rt, rt, sh.scale.s, rt, sh.ssq.s);
  el_line(E, instr, "%s xnorm = big * sqrt(sum);", rt);
  /* larfg */
  if (cx) el_line(E, instr, "%s ar = %s.x, ai = %s.y;", rt, alpha.s, alpha.s);
  else el_line(E, instr, "%s ar = %s, ai = %s(0);", rt, alpha.s, rt);
  el_line(E, instr, "bool keep = xnorm == %s(0) && ai == %s(0);", rt, rt);
  el_line(E, instr, "%s top = max(max(abs(ar), abs(ai)), xnorm);", rt);
  el_line(E, instr,
          "%s mag = top > %s(0) ? top * sqrt((ar / top) * (ar / top) + (ai / top) * (ai / top) + (xnorm / top) * "
          "(xnorm / top)) : %s(0);",
          rt, rt, rt);
  el_line(E, instr, "%s beta = ar >= %s(0) ? -mag : mag;", rt, rt);
  el_name_t tau, scale;
  if (cx) {
    el_def(E, instr, t, false, &tau, "keep ? %s(0) : %s((beta - ar) / beta, -ai / beta)", ct, ct);
    el_def(E, instr, t, false, &scale, "vk_cdiv(%s(1, 0), %s(ar - beta, ai))", ct, ct);
  } else {
    el_def(E, instr, t, false, &tau, "keep ? %s(0) : (beta - ar) / beta", ct);
    el_def(E, instr, t, false, &scale, "%s(1) / (ar - beta)", ct);
  }
  glsl_scope_t reflect = el_open(E, instr, "if (!keep) {");
  own = own_rows(E, instr, "j + 1", m);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 0, idx, &v);
  el_name_t x;
  mul(E, instr, t, v.s, scale.s, &x);
  codegen_store_result(E, instr, 0, idx, x.s);
  el_close(E, instr, own);
  glsl_scope_t diag = el_open(E, instr, "if (lane == j %% %d) {", LU_LANES);
  el_name_t b;
  el_def(E, instr, t, false, &b, "%s(beta%s)", ct, cx ? ", 0" : "");
  matrix_index(bidx, br, "j", "j", idx);
  codegen_store_result(E, instr, 0, idx, b.s);
  el_close(E, instr, diag);
  el_close(E, instr, reflect);
  glsl_scope_t first = el_open(E, instr, "if (lane == 0) {");
  el_name_t tidx[HLO_MAX_RANK];
  vector_index(bidx, br, "j", tidx);
  codegen_store_result(E, instr, 1, tidx, tau.s);
  el_close(E, instr, first);
  int64_t per_step = householder_apply(E, instr, bidx, br, &sh, true, "j", "j + 1", tau.s, true, "keep", m, n);
  sync_results(E, instr);
  el_close(E, instr, steps);
  el_count_loop_iterations(E, instr, rows * n + kk * (per_step + 2 * rows + 2 * LU_LANES));
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}

/* householder_product (internal; LAPACK orgqr / ungqr): Q = H(0) H(1) ...
 * H(k-1) times the first n columns of the m x m identity, H(j) = I -
 * taus[j] v v^H with v[j] = 1 and v[i] = a[i][j] below (the reflectors as
 * qr leaves them), for a [batch..., m, n], taus [batch..., k], k <= n <=
 * m.  From the identity, H(k-1) first: H(j) changes only rows and columns
 * from j on.  One workgroup per matrix (householder_apply). */
vkhlo_status_t codegen_emit_householder_product(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                                int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape, *ts = &instr->operands[1]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || ts->rank != r - 1) return VKHLO_INTERNAL("householder_product %s: ranks", instr->name);
  int br = r - 2;
  int64_t m = s->dimensions[r - 2], n = s->dimensions[r - 1], k = ts->dimensions[r - 2];
  int64_t rows = (m + LU_LANES - 1) / LU_LANES;
  const char *ct = glsl_compute_type(t);
  householder_shared_t sh;
  householder_shared(E, t, n, &sh);
  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], tau;
  open_problem(E, instr, s, bidx, &batch);
  glsl_scope_t loops[2];
  own_elements(E, instr, m, n, loops);
  matrix_index(bidx, br, "i", "c", idx);
  el_name_t e;
  el_def(E, instr, t, false, &e, "i == c ? %s(1%s) : %s(0)", ct, is_complex(t) ? ", 0" : "", ct);
  codegen_store_result(E, instr, 0, idx, e.s);
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  el_line(E, instr, "barrier();");
  glsl_scope_t steps = el_open(E, instr, "for (int j = %lld; j >= 0; j--) {", (long long)k - 1);
  vector_index(bidx, br, "j", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, idx, &tau));
  el_line(E, instr, "bool keep = %s == %s(0);", tau.s, ct);
  int64_t per_step = householder_apply(E, instr, bidx, br, &sh, false, "j", "j", tau.s, false, "keep", m, n);
  el_line(E, instr, "barrier();");
  el_close(E, instr, steps);
  el_count_loop_iterations(E, instr, rows * n + k * per_step);
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}

/* ------------------------------------------------- Jacobi rotations */

/* The eigh and svd kernels rotate the N / 2 disjoint index pairs of a
 * round together (the circle method).  Per pair k the round keeps, in
 * shared arrays, the rotation J = [[c, s], [-conj(u) s, conj(u) c]] and
 * the pair (p, q). */
typedef struct jacobi_round_s {
  el_name_t c, s, u, pq;
} jacobi_round_t;

/* Declares the round's shared arrays for |half| pairs of type |t|. */
static void jacobi_round_shared(elemental_emitter_t *E, hlo_element_type_t t, int64_t half, jacobi_round_t *jr) {
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  shared_array(E, "jc", rt, half, &jr->c);
  shared_array(E, "js", rt, half, &jr->s);
  shared_array(E, "ju", ct, half, &jr->u);
  shared_array(E, "jpq", "ivec2", half, &jr->pq);
}

/* Declares p and q, pair k of round `round` among |nn| indices: (nn - 1,
 * round) for k = 0, else (round + k, round - k) mod nn - 1. */
static void circle_pair(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t nn) {
  el_line(E, instr, "int p = k == 0 ? %lld : (round + k) %% %lld;", (long long)nn - 1, (long long)nn - 1);
  el_line(E, instr, "int q = k == 0 ? round : (round - k + %lld) %% %lld;", (long long)nn - 1, (long long)nn - 1);
}

/* Sets cc and ss (declared by the caller, 1 and 0) to the rotation that
 * diagonalizes the Hermitian [[a_pp, g u], [g conj(u), a_qq]], g > 0: t =
 * s / c the smaller root of t^2 + 2 tau t - 1 = 0, tau = (a_qq - a_pp) /
 * 2 g. */
static void jacobi_rotation(elemental_emitter_t *E, const hlo_instruction_t *instr, const char *rt, const char *a_pp,
                            const char *a_qq, const char *g) {
  el_line(E, instr, "%s tau = (%s - %s) / (%s(2) * %s);", rt, a_qq, a_pp, rt, g);
  el_line(E, instr, "%s tt = (tau >= %s(0) ? %s(1) : %s(-1)) / (abs(tau) + sqrt(%s(1) + tau * tau));", rt, rt, rt, rt,
          rt);
  el_line(E, instr, "cc = %s(1) / sqrt(%s(1) + tt * tt);", rt, rt);
  el_line(E, instr, "ss = tt * cc;");
}

/* Stores pair k's rotation (cc, ss, u) and (p, q) into the round. */
static void jacobi_store(elemental_emitter_t *E, const hlo_instruction_t *instr, const jacobi_round_t *jr) {
  el_line(E, instr, "%s[k] = cc;", jr->c.s);
  el_line(E, instr, "%s[k] = ss;", jr->s.s);
  el_line(E, instr, "%s[k] = u;", jr->u.s);
  el_line(E, instr, "%s[k] = ivec2(p, q);", jr->pq.s);
}

/* Declares pair l's Q = (p, q), c2, s2 and u2 = conj(u) from the round. */
static void jacobi_load(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                        const jacobi_round_t *jr) {
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  el_line(E, instr, "ivec2 Q = %s[l];", jr->pq.s);
  el_line(E, instr, "%s c2 = %s[l], s2 = %s[l];", rt, jr->c.s, jr->s.s);
  el_line(E, instr, "%s u2 = %s[l];", ct, jr->u.s);
  if (is_complex(t)) el_line(E, instr, "u2 = %s(u2.x, -u2.y);", ct);
}

/* Row |row| of result |r| times the loaded rotation on columns Q: X[row,
 * (p, q)] = X[row, (p, q)] J, X read from operand |src| (the result itself
 * for -1). */
static vkhlo_status_t rotate_row(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                 int src, int r, const el_name_t *bidx, int br, const char *row) {
  el_name_t idx[HLO_MAX_RANK], v[2], mv, n0, n1;
  const char *cols[2] = {"Q.x", "Q.y"};
  for (int j = 0; j < 2; j++) {
    matrix_index(bidx, br, row, cols[j], idx);
    if (src < 0) codegen_load_result(E, instr, r, idx, &v[j]);
    else VKHLO_RETURN_IF_ERROR(el_operand(E, instr, src, idx, &v[j]));
  }
  mul(E, instr, t, "u2", v[1].s, &mv);
  el_def(E, instr, t, false, &n0, "c2 * %s - s2 * %s", v[0].s, mv.s);
  el_def(E, instr, t, false, &n1, "s2 * %s + c2 * %s", v[0].s, mv.s);
  matrix_index(bidx, br, row, "Q.x", idx);
  codegen_store_result(E, instr, r, idx, n0.s);
  matrix_index(bidx, br, row, "Q.y", idx);
  codegen_store_result(E, instr, r, idx, n1.s);
  return NULL;
}

/* Declares z00, z01, z10, z11 = J_k^H X J_l for the 2 x 2 block X = [[x00,
 * x01], [x10, x11]] of rows P (pair k's rotation c1, s1, u1) and columns
 * Q (pair l's c2, s2, u2 = conj(u)); a diagonal block (|same|: k == l)
 * becomes exactly diagonal and real. */
static void rotate_block(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                         const el_name_t *x, const char *same) {
  const char *ct = glsl_compute_type(t);
  el_name_t m0, m1;
  /* Y = X J_l, then J_k^H Y */
  mul(E, instr, t, "u2", x[1].s, &m0);
  mul(E, instr, t, "u2", x[3].s, &m1);
  el_line(E, instr, "%s y00 = c2 * %s - s2 * %s, y01 = s2 * %s + c2 * %s;", ct, x[0].s, m0.s, x[0].s, m0.s);
  el_line(E, instr, "%s y10 = c2 * %s - s2 * %s, y11 = s2 * %s + c2 * %s;", ct, x[2].s, m1.s, x[2].s, m1.s);
  mul(E, instr, t, "u1", "y10", &m0);
  mul(E, instr, t, "u1", "y11", &m1);
  el_line(E, instr, "%s z00 = c1 * y00 - s1 * %s, z10 = s1 * y00 + c1 * %s;", ct, m0.s, m0.s);
  el_line(E, instr, "%s z01 = c1 * y01 - s1 * %s, z11 = s1 * y01 + c1 * %s;", ct, m1.s, m1.s);
  el_line(E, instr, "if (%s) { z01 = %s(0); z10 = %s(0);%s }", same, ct, ct,
          is_complex(t) ? " z00.y = 0; z11.y = 0;" : "");
}

/* Declares cc, ss and u, the rotation of pair (p, q) (declared by the
 * caller) that zeroes a_pq of the Hermitian A: operand |src|, or result
 * |r| for -1. */
static vkhlo_status_t eigh_rotation(elemental_emitter_t *E, const hlo_instruction_t *instr, hlo_element_type_t t,
                                    int src, int r, const el_name_t *bidx, int br) {
  const char *rt = real_compute_type(t);
  const char *at[3][2] = {{"p", "q"}, {"p", "p"}, {"q", "q"}};
  el_name_t idx[HLO_MAX_RANK], a[3];
  for (int j = 0; j < 3; j++) {
    matrix_index(bidx, br, at[j][0], at[j][1], idx);
    if (src < 0) codegen_load_result(E, instr, r, idx, &a[j]);
    else VKHLO_RETURN_IF_ERROR(el_operand(E, instr, src, idx, &a[j]));
  }
  magnitude_phase(E, instr, t, a[0].s, "g", "u");
  el_line(E, instr, "%s cc = %s(1), ss = %s(0);", rt, rt, rt);
  glsl_scope_t rot = el_open(E, instr, "if (g > %s(0)) {", rt);
  char pp[EL_NAME_MAX + 4], qq[EL_NAME_MAX + 4];
  const char *re = is_complex(t) ? ".x" : "";
  snprintf(pp, sizeof pp, "%s%s", a[1].s, re);
  snprintf(qq, sizeof qq, "%s%s", a[2].s, re);
  jacobi_rotation(E, instr, rt, pp, qq, "g");
  el_close(E, instr, rot);
  return NULL;
}

/* The 2 x 2 block of rows P, columns Q, row-major */
static const char *const block_at[4][2] = {{"P.x", "Q.x"}, {"P.x", "Q.y"}, {"P.y", "Q.x"}, {"P.y", "Q.y"}};

/* Declares the x[4] of the block of operand |src| (result |r| for -1). */
static vkhlo_status_t load_block(elemental_emitter_t *E, const hlo_instruction_t *instr, int src, int r,
                                 const el_name_t *bidx, int br, el_name_t *x) {
  el_name_t idx[HLO_MAX_RANK];
  for (int z = 0; z < 4; z++) {
    matrix_index(bidx, br, block_at[z][0], block_at[z][1], idx);
    if (src < 0) codegen_load_result(E, instr, r, idx, &x[z]);
    else VKHLO_RETURN_IF_ERROR(el_operand(E, instr, src, idx, &x[z]));
  }
  return NULL;
}

/* Stores rotate_block's z00, z01, z10, z11 into the block of result |r|. */
static void store_block(elemental_emitter_t *E, const hlo_instruction_t *instr, int r, const el_name_t *bidx,
                        int br) {
  static const char *const zs[4] = {"z00", "z01", "z10", "z11"};
  el_name_t idx[HLO_MAX_RANK];
  for (int z = 0; z < 4; z++) {
    matrix_index(bidx, br, block_at[z][0], block_at[z][1], idx);
    codegen_store_result(E, instr, r, idx, zs[z]);
  }
}

/* ---------------------------------------------------------------- eigh */

/* eigh (internal; codegen/expand.c, "solver custom calls"): the
 * eigenvalues (ascending, real) and eigenvectors (the columns of the
 * first result) of each Hermitian batch matrix a [n, n], reading only its
 * lower (attrs.lower) or upper triangle and the real part of its diagonal,
 * as LAPACK's syevd / heevd.  Results: (vectors [n, n], values [n] of the
 * real type, and two [N, N] work arrays, N = n rounded up to even).
 *
 * The cyclic Jacobi method in parallel order: N - 1 rounds per sweep pair
 * every index with every other once (the circle method; an odd n pairs
 * one index per round with the zero row and column N - 1).  In a round
 * the N / 2 pairs (p, q) are disjoint, so their rotations J (the 2 x 2
 * [[c, s], [-conj(u) s, conj(u) c]], u = a_pq / |a_pq|, t = s / c the
 * smaller root of t^2 + 2 tau t - 1 = 0, tau = (a_qq - a_pp) / 2|a_pq|,
 * which zeroes a_pq) are found at once from the round's matrix, then A =
 * J^H A J by 2 x 2 blocks (block (k, l) reads and writes only the rows of
 * pair k and the columns of pair l) and V = V J, one workgroup per matrix.
 * Sweeps stop once the off-diagonal part is at most n eps times the
 * whole (Frobenius norms: eigenvalues within n eps |A|, LAPACK's bound),
 * or after |max_sweeps| (Jacobi converges quadratically: 6 to 10 sweeps
 * in practice).  Finally each eigenvalue's
 * rank (NaNs last, ties by index) places it and its vector. */
vkhlo_status_t codegen_emit_eigh(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 4)
    return VKHLO_INTERNAL("eigh %s: operand of rank %d, or not four results", instr->name, r);
  int br = r - 2;
  int64_t n = s->dimensions[r - 1], nn = n + (n & 1), half = nn / 2;
  int64_t rows = (nn + LU_LANES - 1) / LU_LANES;
  bool cx = is_complex(t), wide = t == HLO_F64 || t == HLO_C128;
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  int64_t max_sweeps = 15;
  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], v;
  open_problem(E, instr, s, bidx, &batch);
  jacobi_round_t jr;
  jacobi_round_shared(E, t, half, &jr);
  el_name_t red;
  shared_array(E, "jred", rt, 2 * LU_LANES, &red);
  const char *one = cx ? "(1, 0)" : "(1)";

  /* the work arrays: A (Hermitian from the triangle read, 0 past n), V = I */
  glsl_scope_t loops[2];
  own_elements(E, instr, nn, nn, loops);
  el_line(E, instr, "%s aw = %s(0);", ct, ct);
  glsl_scope_t in_n = el_open(E, instr, "if (i < %lld && c < %lld) {", (long long)n, (long long)n);
  el_line(E, instr, "bool mine = %s;", instr->attrs.lower ? "i >= c" : "i <= c");
  el_line(E, instr, "int ri = mine ? i : c, rj = mine ? c : i;");
  matrix_index(bidx, br, "ri", "rj", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  if (cx) el_line(E, instr, "aw = i == c ? %s(%s.x, 0) : mine ? %s : %s(%s.x, -%s.y);", ct, v.s, v.s, ct, v.s, v.s);
  else el_line(E, instr, "aw = %s;", v.s);
  el_close(E, instr, in_n);
  matrix_index(bidx, br, "i", "c", idx);
  codegen_store_result(E, instr, 2, idx, "aw");
  el_name_t e;
  el_def(E, instr, t, false, &e, "i == c ? %s%s : %s(0)", ct, one, ct);
  codegen_store_result(E, instr, 3, idx, e.s);
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  sync_results(E, instr);

  glsl_scope_t sweeps = el_open(E, instr, "for (int sweep = 0; sweep < %lld; sweep++) {", (long long)max_sweeps);
  /* stop once |offdiag(A)| <= n eps |A| (Frobenius norms; their
   * rounding keeps it from going lower; NaN stops too) */
  el_line(E, instr, "%s off = %s(0), all = %s(0);", rt, rt, rt);
  own_elements(E, instr, n, n, loops);
  matrix_index(bidx, br, "i", "c", idx);
  codegen_load_result(E, instr, 2, idx, &v);
  if (cx) el_line(E, instr, "%s m2 = dot(%s, %s);", rt, v.s, v.s);
  else el_line(E, instr, "%s m2 = %s * %s;", rt, v.s, v.s);
  el_line(E, instr, "all += m2;");
  el_line(E, instr, "if (i != c) off += m2;");
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  el_line(E, instr, "%s[lane] = off;", red.s);
  el_line(E, instr, "%s[lane + %d] = all;", red.s, LU_LANES);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "off = %s(0);", rt);
  el_line(E, instr, "all = %s(0);", rt);
  el_line(E, instr, "for (int l = 0; l < %d; l++) { off += %s[l]; all += %s[l + %d]; }", LU_LANES, red.s, red.s,
          LU_LANES);
  el_line(E, instr, "if (!(off > %s(%.17g) * all)) break;", rt, (wide ? 0x1p-53 : 0x1p-24) * (wide ? 0x1p-53 : 0x1p-24) * (double)(n * n));

  glsl_scope_t rounds = el_open(E, instr, "for (int round = 0; round < %lld; round++) {", (long long)nn - 1);
  /* the round's pairs and their rotations */
  glsl_scope_t pairs = el_open(E, instr, "for (int k = lane; k < %lld; k += %d) {", (long long)half, LU_LANES);
  circle_pair(E, instr, nn);
  VKHLO_RETURN_IF_ERROR(eigh_rotation(E, instr, t, -1, 2, bidx, br));
  jacobi_store(E, instr, &jr);
  el_close(E, instr, pairs);
  el_line(E, instr, "barrier();");
  /* A = J^H A J by 2 x 2 blocks: rows of pair k, columns of pair l */
  glsl_scope_t blocks = el_open(E, instr, "for (int b = lane; b < %lld; b += %d) {", (long long)(half * half), LU_LANES);
  el_line(E, instr, "int k = b / %lld, l = b %% %lld;", (long long)half, (long long)half);
  jacobi_load(E, instr, t, &jr);
  el_line(E, instr, "ivec2 P = %s[k];", jr.pq.s);
  el_line(E, instr, "%s c1 = %s[k], s1 = %s[k];", rt, jr.c.s, jr.s.s);
  el_line(E, instr, "%s u1 = %s[k];", ct, jr.u.s);
  el_name_t xs[4];
  VKHLO_RETURN_IF_ERROR(load_block(E, instr, -1, 2, bidx, br, xs));
  rotate_block(E, instr, t, xs, "k == l");
  store_block(E, instr, 2, bidx, br);
  el_close(E, instr, blocks);
  /* V = V J: rows i, columns of pair l */
  glsl_scope_t vrows = el_open(E, instr, "for (int b = lane; b < %lld; b += %d) {", (long long)(nn * half), LU_LANES);
  el_line(E, instr, "int i = b / %lld, l = b %% %lld;", (long long)half, (long long)half);
  jacobi_load(E, instr, t, &jr);
  VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, -1, 3, bidx, br, "i"));
  el_close(E, instr, vrows);
  sync_results(E, instr);
  el_close(E, instr, rounds);
  el_close(E, instr, sweeps);

  /* each eigenvalue's rank among them (NaNs last, ties by index) */
  glsl_scope_t own = el_open(E, instr, "for (int i = lane; i < %lld; i += %d) {", (long long)n, LU_LANES);
  el_name_t di, dj;
  matrix_index(bidx, br, "i", "i", idx);
  codegen_load_result(E, instr, 2, idx, &di);
  el_line(E, instr, "%s wi = %s%s;", rt, di.s, cx ? ".x" : "");
  el_line(E, instr, "int rank = 0;");
  glsl_scope_t others = el_open(E, instr, "for (int j = 0; j < %lld; j++) {", (long long)n);
  matrix_index(bidx, br, "j", "j", idx);
  codegen_load_result(E, instr, 2, idx, &dj);
  el_line(E, instr, "%s wj = %s%s;", rt, dj.s, cx ? ".x" : "");
  el_line(E, instr,
          "if (isnan(wi) ? (!isnan(wj) || j < i) : (!isnan(wj) && (wj < wi || (wj == wi && j < i)))) rank++;");
  el_close(E, instr, others);
  el_name_t ridx[HLO_MAX_RANK], vi;
  vector_index(bidx, br, "rank", ridx);
  codegen_store_result(E, instr, 1, ridx, "wi");
  glsl_scope_t vec = el_open(E, instr, "for (int row = 0; row < %lld; row++) {", (long long)n);
  matrix_index(bidx, br, "row", "i", idx);
  codegen_load_result(E, instr, 3, idx, &vi);
  matrix_index(bidx, br, "row", "rank", idx);
  codegen_store_result(E, instr, 0, idx, vi.s);
  el_close(E, instr, vec);
  el_close(E, instr, own);
  int64_t per_round = (half + LU_LANES - 1) / LU_LANES + (half * half + LU_LANES - 1) / LU_LANES +
                      (nn * half + LU_LANES - 1) / LU_LANES;
  el_count_loop_iterations(E, instr, rows * nn + max_sweeps * (rows * n + LU_LANES + (nn - 1) * (1 + per_round)) +
                                         rows * 2 * n);
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}

/* eigh_round (internal; codegen/expand.c, "solver custom calls"): one
 * round of the eigh kernel's Jacobi method for matrices too large for one
 * workgroup's loops, the round index (operand 2, s32, plus attrs.dimension)
 * taken mod N - 1: (A [batch..., N, N] Hermitian, V [batch..., N, N],
 * round) -> (J^H A J, V J) with J the round's N / 2 rotations, each found
 * from A as the eigh kernel finds it.  One invocation per pair of pairs
 * (k, l): it finds the rotations of pairs k and l, then writes the 2 x 2
 * block (rows of pair k, columns of pair l) of A and the rows of pair k,
 * columns of pair l of V.  No loops and no barriers: any size runs under
 * lavapipe's loop limiter, and a round is a few GPU waves. */
vkhlo_status_t codegen_emit_eigh_round(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  int64_t nn = r >= 2 ? s->dimensions[r - 1] : 0, half = nn / 2, m = nn - 1;
  if (r < 2 || (nn & 1) || nn < 2 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 2)
    return VKHLO_INTERNAL("eigh_round %s: operand of rank %d or of odd size, or not two results", instr->name, r);
  int br = r - 2;
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  hlo_shape_t batch;
  hlo_shape_init(&batch, t, br, s->dimensions);
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], rv;
  el_line(E, instr, "int idx = int(gid);");
  el_line(E, instr, "int l = idx %% %lld, kk = idx / %lld %% %lld;", (long long)half, (long long)half,
          (long long)half);
  el_line(E, instr, "idx /= %lld;", (long long)(half * half));
  el_delinearize(E, instr, &batch, "idx", bidx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 2, idx, &rv));
  el_line(E, instr, "int round = (%s + %lld) %% %lld;", rv.s, (long long)instr->attrs.dimension, (long long)m);
  el_line(E, instr, "if (round < 0) round += %lld;", (long long)m);
  el_line(E, instr, "ivec2 P, Q;");
  el_line(E, instr, "%s c1, s1, c2, s2;", rt);
  el_line(E, instr, "%s u1, u2;", ct);
  const char *pair[2] = {"kk", "l"}, *to[2] = {"P", "Q"}, *rot[2][3] = {{"c1", "s1", "u1"}, {"c2", "s2", "u2"}};
  for (int j = 0; j < 2; j++) {
    glsl_scope_t scope = el_open(E, instr, "{");
    el_line(E, instr, "int k = %s;", pair[j]);
    circle_pair(E, instr, nn);
    VKHLO_RETURN_IF_ERROR(eigh_rotation(E, instr, t, 0, -1, bidx, br));
    el_line(E, instr, "%s = ivec2(p, q);", to[j]);
    el_line(E, instr, "%s = cc;", rot[j][0]);
    el_line(E, instr, "%s = ss;", rot[j][1]);
    el_line(E, instr, "%s = u;", rot[j][2]);
    el_close(E, instr, scope);
  }
  if (is_complex(t)) el_line(E, instr, "u2 = %s(u2.x, -u2.y);", ct);
  el_name_t xs[4];
  VKHLO_RETURN_IF_ERROR(load_block(E, instr, 0, -1, bidx, br, xs));
  rotate_block(E, instr, t, xs, "kk == l");
  store_block(E, instr, 0, bidx, br);
  VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, 1, 1, bidx, br, "P.x"));
  VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, 1, 1, bidx, br, "P.y"));
  *out_total = hlo_shape_element_count(&batch) * half * half;
  return NULL;
}

/* svd_round (internal; codegen/expand.c, "solver custom calls"): one
 * round of the svd kernel's one-sided Jacobi method for matrices too large
 * for one workgroup's loops: (W [batch..., N, N], V [batch..., N, N],
 * stamps [batch..., N / 2] s32, round s32 []) -> (W J, V J, stamps), the
 * round g = operand 3 + attrs.dimension (pairs of round g mod N - 1).
 * One workgroup per (matrix, pair k): its invocations sum the pair's Gram
 * entries over rows through shared memory, each finds the same rotation
 * (the svd kernel's, with gesvj's test), and they rotate the pair's two
 * columns of W and V row by row; the pair's stamp becomes g where it
 * rotated (the expand pass stops once no pair has rotated for N - 1
 * rounds).  On CPU devices with serial reductions (lavapipe: a workgroup
 * with a barrier costs a coroutine switch per SIMD group, and its 64
 * invocations had two rows each) one invocation per (matrix, pair) does
 * it all alone, summing the rows in order: no shared memory, no barrier,
 * the workgroups' lanes being different pairs. */
vkhlo_status_t codegen_emit_svd_round(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  int64_t nn = r >= 2 ? s->dimensions[r - 1] : 0, half = nn / 2, m = nn - 1;
  if (r < 2 || (nn & 1) || nn < 2 || instr->operand_count != 4 || !hlo_shape_is_tuple(&instr->shape) ||
      instr->shape.tuple_count != 3)
    return VKHLO_INTERNAL("svd_round %s: operand of rank %d or of odd size, or not three results", instr->name, r);
  int br = r - 2;
  int64_t rows = (nn + LU_LANES - 1) / LU_LANES;
  bool wide = t == HLO_F64 || t == HLO_C128;
  double eps = wide ? 0x1p-53 : 0x1p-24;
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  hlo_shape_t batch;
  hlo_shape_init(&batch, t, br, s->dimensions);
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], rv, v, pa, pb, pg;
  bool serial = E->target->is_cpu && !E->target->subgroup_reduce;
  if (!serial) {
    E->workgroup_problems = true;
    el_line(E, instr, "int lane = int(gl_LocalInvocationID.x);");
    el_line(E, instr, "int idx = int(gid) / %d;", LU_LANES);
  } else {
    el_line(E, instr, "int idx = int(gid);");
  }
  el_line(E, instr, "int k = idx %% %lld;", (long long)half);
  el_line(E, instr, "idx /= %lld;", (long long)half);
  el_delinearize(E, instr, &batch, "idx", bidx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 3, idx, &rv));
  el_line(E, instr, "int g = %s + %lld;", rv.s, (long long)instr->attrs.dimension);
  el_line(E, instr, "int round = g %% %lld;", (long long)m);
  circle_pair(E, instr, nn);
  /* the pair's Gram entries: this invocation's rows (all of them when
   * serial), then the workgroup's sum */
  el_line(E, instr, "%s al = %s(0), be = %s(0);", rt, rt, rt);
  el_line(E, instr, "%s ga = %s(0);", ct, ct);
  glsl_scope_t own = serial ? el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)nn)
                            : el_open(E, instr, "for (int i = lane; i < %lld; i += %d) {", (long long)nn, LU_LANES);
  el_name_t wp, wq, cwp, gp;
  matrix_index(bidx, br, "i", "p", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &wp));
  matrix_index(bidx, br, "i", "q", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &wq));
  bool cx = is_complex(t);
  el_line(E, instr, cx ? "al += dot(%s, %s);" : "al += %s * %s;", wp.s, wp.s);
  el_line(E, instr, cx ? "be += dot(%s, %s);" : "be += %s * %s;", wq.s, wq.s);
  conj_(E, instr, t, wp.s, &cwp);
  mul(E, instr, t, cwp.s, wq.s, &gp);
  el_line(E, instr, "ga += %s;", gp.s);
  el_close(E, instr, own);
  if (!serial) {
    shared_array(E, "sr_a", rt, LU_LANES, &pa);
    shared_array(E, "sr_b", rt, LU_LANES, &pb);
    shared_array(E, "sr_g", ct, LU_LANES, &pg);
    el_line(E, instr, "%s[lane] = al;", pa.s);
    el_line(E, instr, "%s[lane] = be;", pb.s);
    el_line(E, instr, "%s[lane] = ga;", pg.s);
    el_line(E, instr, "barrier();");
    el_line(E, instr, "al = %s(0);", rt);
    el_line(E, instr, "be = %s(0);", rt);
    el_line(E, instr, "ga = %s(0);", ct);
    el_line(E, instr, "for (int l = 0; l < %d; l++) { al += %s[l]; be += %s[l]; ga += %s[l]; }", LU_LANES, pa.s,
            pb.s, pg.s);
  }
  magnitude_phase(E, instr, t, "ga", "gm", "u");
  el_line(E, instr, "%s cc = %s(1), ss = %s(0);", rt, rt, rt);
  el_line(E, instr, "bool turn = gm > %s(%.17g) * sqrt(al) * sqrt(be);", rt, eps * sqrt((double)nn));
  glsl_scope_t rot = el_open(E, instr, "if (turn) {");
  jacobi_rotation(E, instr, rt, "al", "be", "gm");
  el_close(E, instr, rot);
  el_line(E, instr, "ivec2 Q = ivec2(p, q);");
  el_line(E, instr, "%s c2 = cc, s2 = ss;", rt);
  el_line(E, instr, cx ? "%s u2 = %s(u.x, -u.y);" : "%s u2 = u;", ct, ct);
  own = serial ? el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)nn)
               : el_open(E, instr, "for (int i = lane; i < %lld; i += %d) {", (long long)nn, LU_LANES);
  VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, 0, 0, bidx, br, "i"));
  VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, 1, 1, bidx, br, "i"));
  el_close(E, instr, own);
  vector_index(bidx, br, "k", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 2, idx, &v));
  el_line(E, instr, "int stamp = turn ? g : %s;", v.s);
  if (serial) {
    codegen_store_result(E, instr, 2, idx, "stamp");
    el_count_loop_iterations(E, instr, 2 * nn);
    *out_total = hlo_shape_element_count(&batch) * half;
  } else {
    store_by_first(E, instr, 2, idx, "stamp");
    el_count_loop_iterations(E, instr, 2 * rows + LU_LANES);
    *out_total = hlo_shape_element_count(&batch) * half * LU_LANES;
  }
  return NULL;
}

/* ----------------------------------------------------------------- svd */

/* Rows of a column pair per iteration of the svd kernel's Gram sums
 * (fewer iterations under lavapipe's loop limiter) */
#define SVD_DOT_ROWS 4

/* The fewest sweeps the svd kernel is built with: one-sided Jacobi takes
 * 8 to 11 (f32, f64) for random 64 x 64 matrices, the last confirming */
#define SVD_MIN_SWEEPS 16

/* svd (internal; codegen/expand.c, "solver custom calls"): the singular
 * value decomposition a = U diag(s) V^H of each square batch matrix a
 * [n, n] (the expand pass reduces rectangular ones to it by QR).  Results:
 * (U [n, n], s [n] descending of the real type, V [n, n], info [batch...]
 * s32, and two [N, N] work arrays W and V, N = n rounded up to even).
 *
 * The one-sided (Hestenes) Jacobi method: W = a (scaled by a power of two
 * so that its largest part is in [0.5, 1): no sum of squares overflows,
 * and s is exact to unscale) is rotated by plane rotations from the right
 * until its columns are orthogonal; the same rotations build V from the
 * identity.  The rotation of columns (p, q) is the one that diagonalizes
 * their Gram matrix [[alpha, gamma], [conj(gamma), beta]] (alpha = |w_p|^2,
 * beta = |w_q|^2, gamma = w_p^H w_q), as in the eigh kernel; a pair is
 * rotated only while |gamma| > sqrt(n) eps sqrt(alpha beta) (LAPACK gesvj's
 * test), and sweeps stop after one with no rotation.  Rounds in parallel
 * order (the circle method), one workgroup per matrix: the round's Gram
 * entries summed over row segments through shared memory, then every
 * (row, pair) updated at once.  Then s_j = |w_j|, ranked descending (NaNs
 * last, ties by index); U's column is w_j / s_j, and where s_j is below
 * sqrt(smallest normal) / eps of the scaled matrix (zero, or too small to
 * normalize) a unit vector orthogonal to the columns before it: e_c for
 * the row c least covered by them, orthogonalized twice (classical
 * Gram-Schmidt).  info is 1 when the sweeps did not converge within
 * |max_sweeps| (fewer where the device's loop limit binds) or a value is
 * NaN, else 0. */
vkhlo_status_t codegen_emit_svd(elemental_emitter_t *E, const hlo_instruction_t *instr, int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[0]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 6 ||
      s->dimensions[r - 1] != s->dimensions[r - 2])
    return VKHLO_INTERNAL("svd %s: operand of rank %d not square, or not six results", instr->name, r);
  int br = r - 2;
  int64_t n = s->dimensions[r - 1], nn = n + (n & 1), half = nn / 2;
  int64_t seg = half < LU_LANES ? LU_LANES / half : 1, parts = half * seg;
  int64_t rows = (n + LU_LANES - 1) / LU_LANES, nrows = (nn + LU_LANES - 1) / LU_LANES;
  bool cx = is_complex(t), wide = t == HLO_F64 || t == HLO_C128;
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  double eps = wide ? 0x1p-53 : 0x1p-24, tiny = wide ? 0x1p-511 / 0x1p-53 : 0x1p-63 / 0x1p-24;
  /* shared memory: the round's partial Gram entries, rotations and pairs,
   * per index the value, rank, row coverage and projection */
  int64_t rsz = wide ? 8 : 4, csz = cx ? 2 * rsz : rsz;
  int64_t shared_bytes = parts * (2 * rsz + csz) + half * (2 * rsz + csz + 8) + nn * (2 * rsz + 4 + csz) +
                         LU_LANES * (rsz + 8);
  if (shared_bytes > 16384)
    return el_unimplemented(instr, "an svd of %lld x %lld %s matrices here (one workgroup's shared memory holds "
                            "its rotations and projections up to about 256 x 256)",
                            (long long)n, (long long)n, hlo_element_type_name(t));
  /* loop iterations: the scaling and the copy, per sweep, then the
   * values, ranks and columns and the completion of up to n columns */
  int64_t per_round = (parts + LU_LANES - 1) / LU_LANES * ((n + SVD_DOT_ROWS * seg - 1) / (SVD_DOT_ROWS * seg)) +
                      (half + LU_LANES - 1) / LU_LANES * seg + (half * ((n + 1) / 2) + LU_LANES - 1) / LU_LANES;
  int64_t per_sweep = (nn - 1) * per_round + 2;
  int64_t fixed = rows * n + LU_LANES + nrows * nn + rows * (n + n + 2 * n) + rows * n + 8 +
                  n * (3 * rows + 24) + rows * n * (n - 1) + n * ((n + LU_LANES - 1) / LU_LANES) * n;
  int64_t max_sweeps = 30;
  uint32_t limit = E->target->max_loop_iterations;
  if (limit && fixed + max_sweeps * per_sweep > (int64_t)limit) {
    max_sweeps = ((int64_t)limit - fixed) / per_sweep;
    if (max_sweeps < SVD_MIN_SWEEPS)
      return el_unimplemented(instr, "an svd of %lld x %lld matrices on this device: its loop limiter (%u "
                              "iterations per invocation) leaves %lld Jacobi sweeps, %d are needed",
                              (long long)n, (long long)n, limit, (long long)(max_sweeps > 0 ? max_sweeps : 0), SVD_MIN_SWEEPS);
  }
  el_count_loop_iterations(E, instr, fixed + max_sweeps * per_sweep);

  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], v, g;
  open_problem(E, instr, s, bidx, &batch);
  jacobi_round_t jr;
  jacobi_round_shared(E, t, half, &jr);
  el_name_t pa, pb, pg, red, redi, sig, rank, cover, proj, flag;
  shared_array(E, "sv_a", rt, parts, &pa);
  shared_array(E, "sv_b", rt, parts, &pb);
  shared_array(E, "sv_g", ct, parts, &pg);
  shared_array(E, "sv_red", rt, LU_LANES, &red);
  shared_array(E, "sv_redi", "ivec2", LU_LANES, &redi);
  shared_array(E, "sv_sig", rt, nn, &sig);
  shared_array(E, "sv_rank", "int", nn, &rank);
  shared_array(E, "sv_cover", rt, nn, &cover);
  shared_array(E, "sv_d", ct, nn, &proj);
  shared_array(E, "sv_flag", "int", 0, &flag);
  const char *one = cx ? "(1, 0)" : "(1)";
  const char *sq = cx ? "dot(%s, %s)" : "%s * %s";
  char sqbuf[160];
  glsl_scope_t loops[2];

  /* the scale: 2^-e for the largest part m = f 2^e, f in [0.5, 1) */
  el_line(E, instr, "%s mx = %s(0);", rt, rt);
  own_elements(E, instr, n, n, loops);
  matrix_index(bidx, br, "i", "c", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  if (cx) el_line(E, instr, "%s ma = max(abs(%s.x), abs(%s.y));", rt, v.s, v.s);
  else el_line(E, instr, "%s ma = abs(%s);", rt, v.s);
  el_line(E, instr, "if (ma > mx) mx = ma;");
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  el_line(E, instr, "%s[lane] = mx;", red.s);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "for (int l = 0; l < %d; l++) if (%s[l] > mx) mx = %s[l];", LU_LANES, red.s, red.s);
  el_line(E, instr, "int ex;");
  el_line(E, instr, "frexp(mx, ex);");
  el_line(E, instr, "%s scale = mx > %s(0) && !isinf(mx) ? ldexp(%s(1), -ex) : %s(1);", rt, rt, rt, rt);
  el_line(E, instr, "barrier();");
  /* W = scale a (0 past n), V = I */
  own_elements(E, instr, nn, nn, loops);
  el_line(E, instr, "%s aw = %s(0);", ct, ct);
  glsl_scope_t in_n = el_open(E, instr, "if (i < %lld && c < %lld) {", (long long)n, (long long)n);
  matrix_index(bidx, br, "i", "c", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, idx, &v));
  el_line(E, instr, "aw = scale * %s;", v.s);
  el_close(E, instr, in_n);
  codegen_store_result(E, instr, 4, idx, "aw");
  el_name_t e;
  el_def(E, instr, t, false, &e, "i == c ? %s%s : %s(0)", ct, one, ct);
  codegen_store_result(E, instr, 5, idx, e.s);
  el_close(E, instr, loops[1]);
  el_close(E, instr, loops[0]);
  sync_results(E, instr);

  el_line(E, instr, "bool converged = false;");
  glsl_scope_t sweeps = el_open(E, instr, "for (int sweep = 0; sweep < %lld; sweep++) {", (long long)max_sweeps);
  el_line(E, instr, "if (lane == 0) %s = 0;", flag.s);
  el_line(E, instr, "barrier();");
  glsl_scope_t rounds = el_open(E, instr, "for (int round = 0; round < %lld; round++) {", (long long)nn - 1);
  /* the round's Gram entries, by (pair, row segment) */
  glsl_scope_t items = el_open(E, instr, "for (int b = lane; b < %lld; b += %d) {", (long long)parts, LU_LANES);
  el_line(E, instr, "int k = b / %lld, sg = b %% %lld;", (long long)seg, (long long)seg);
  circle_pair(E, instr, nn);
  el_line(E, instr, "%s al = %s(0), be = %s(0);", rt, rt, rt);
  el_line(E, instr, "%s ga = %s(0);", ct, ct);
  glsl_scope_t segrows =
      el_open(E, instr, "for (int r0 = sg; r0 < %lld; r0 += %lld) {", (long long)n, (long long)(SVD_DOT_ROWS * seg));
  for (int u = 0; u < SVD_DOT_ROWS; u++) {
    glsl_scope_t row = el_open(E, instr, "if (r0 + %lld < %lld) {", (long long)(u * seg), (long long)n);
    el_line(E, instr, "int i = r0 + %lld;", (long long)(u * seg));
    el_name_t wp, wq, cwp, gp;
    matrix_index(bidx, br, "i", "p", idx);
    codegen_load_result(E, instr, 4, idx, &wp);
    matrix_index(bidx, br, "i", "q", idx);
    codegen_load_result(E, instr, 4, idx, &wq);
    snprintf(sqbuf, sizeof sqbuf, sq, wp.s, wp.s);
    el_line(E, instr, "al += %s;", sqbuf);
    snprintf(sqbuf, sizeof sqbuf, sq, wq.s, wq.s);
    el_line(E, instr, "be += %s;", sqbuf);
    conj_(E, instr, t, wp.s, &cwp);
    mul(E, instr, t, cwp.s, wq.s, &gp);
    el_line(E, instr, "ga += %s;", gp.s);
    el_close(E, instr, row);
  }
  el_close(E, instr, segrows);
  el_line(E, instr, "%s[b] = al;", pa.s);
  el_line(E, instr, "%s[b] = be;", pb.s);
  el_line(E, instr, "%s[b] = ga;", pg.s);
  el_close(E, instr, items);
  el_line(E, instr, "barrier();");
  /* the rotations (those of the eigh kernel, of the Gram matrix) */
  glsl_scope_t pairs = el_open(E, instr, "for (int k = lane; k < %lld; k += %d) {", (long long)half, LU_LANES);
  circle_pair(E, instr, nn);
  el_line(E, instr, "%s al = %s(0), be = %s(0);", rt, rt, rt);
  el_line(E, instr, "%s ga = %s(0);", ct, ct);
  el_line(E, instr, "for (int sg = 0; sg < %lld; sg++) { al += %s[k * %lld + sg]; be += %s[k * %lld + sg]; ga += "
                    "%s[k * %lld + sg]; }",
          (long long)seg, pa.s, (long long)seg, pb.s, (long long)seg, pg.s, (long long)seg);
  magnitude_phase(E, instr, t, "ga", "gm", "u");
  el_line(E, instr, "%s cc = %s(1), ss = %s(0);", rt, rt, rt);
  glsl_scope_t rot = el_open(E, instr, "if (gm > %s(%.17g) * sqrt(al) * sqrt(be)) {", rt, eps * sqrt((double)n));
  el_line(E, instr, "%s = 1;", flag.s);
  jacobi_rotation(E, instr, rt, "al", "be", "gm");
  el_close(E, instr, rot);
  jacobi_store(E, instr, &jr);
  el_close(E, instr, pairs);
  el_line(E, instr, "barrier();");
  /* W = W J and V = V J: every (pair, two rows) */
  glsl_scope_t upd =
      el_open(E, instr, "for (int b = lane; b < %lld; b += %d) {", (long long)(half * ((n + 1) / 2)), LU_LANES);
  el_line(E, instr, "int r0 = b / %lld * 2, l = b %% %lld;", (long long)half, (long long)half);
  jacobi_load(E, instr, t, &jr);
  glsl_scope_t moved = el_open(E, instr, "if (s2 != %s(0)) {", rt);
  for (int u = 0; u < 2; u++) {
    glsl_scope_t row = el_open(E, instr, "if (r0 + %d < %lld) {", u, (long long)n);
    el_line(E, instr, "int i = r0 + %d;", u);
    VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, -1, 4, bidx, br, "i"));
    VKHLO_RETURN_IF_ERROR(rotate_row(E, instr, t, -1, 5, bidx, br, "i"));
    el_close(E, instr, row);
  }
  el_close(E, instr, moved);
  el_close(E, instr, upd);
  sync_results(E, instr);
  el_close(E, instr, rounds);
  el_line(E, instr, "bool still = %s != 0;", flag.s);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "if (!still) { converged = true; break; }");
  el_close(E, instr, sweeps);

  /* the values s_j = |w_j| (scaled) */
  glsl_scope_t own = el_open(E, instr, "for (int j = lane; j < %lld; j += %d) {", (long long)n, LU_LANES);
  el_line(E, instr, "%s al = %s(0);", rt, rt);
  glsl_scope_t down = el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)n);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 4, idx, &v);
  snprintf(sqbuf, sizeof sqbuf, sq, v.s, v.s);
  el_line(E, instr, "al += %s;", sqbuf);
  el_close(E, instr, down);
  el_line(E, instr, "%s[j] = sqrt(al);", sig.s);
  el_close(E, instr, own);
  el_line(E, instr, "barrier();");
  /* ranks (descending, NaNs last), s, V's columns, U's defined ones */
  el_line(E, instr, "ivec2 counts = ivec2(0);");
  own = el_open(E, instr, "for (int j = lane; j < %lld; j += %d) {", (long long)n, LU_LANES);
  el_line(E, instr, "%s sj = %s[j];", rt, sig.s);
  el_line(E, instr, "int rk = 0;");
  el_line(E, instr,
          "for (int l = 0; l < %lld; l++) { %s sl = %s[l]; if (isnan(sj) ? (!isnan(sl) || l < j) : (!isnan(sl) && "
          "(sl > sj || (sl == sj && l < j)))) rk++; }",
          (long long)n, rt, sig.s);
  el_line(E, instr, "%s[j] = rk;", rank.s);
  el_line(E, instr, "bool good = sj >= %s(%.17g);", rt, tiny);
  el_line(E, instr, "counts += ivec2(good ? 1 : 0, isnan(sj) ? 1 : 0);");
  el_name_t sidx[HLO_MAX_RANK];
  vector_index(bidx, br, "rk", sidx);
  codegen_store_result(E, instr, 1, sidx, "sj / scale");
  down = el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)n);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 5, idx, &v);
  matrix_index(bidx, br, "i", "rk", idx);
  codegen_store_result(E, instr, 2, idx, v.s);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 4, idx, &v);
  el_line(E, instr, "%s uv = good ? %s / sj : %s(0);", ct, v.s, ct);
  matrix_index(bidx, br, "i", "rk", idx);
  codegen_store_result(E, instr, 0, idx, "uv");
  el_close(E, instr, down);
  el_close(E, instr, own);
  el_line(E, instr, "%s[lane] = counts;", redi.s);
  sync_results(E, instr);
  el_line(E, instr, "counts = ivec2(0);");
  el_line(E, instr, "for (int l = 0; l < %d; l++) counts += %s[l];", LU_LANES, redi.s);
  el_line(E, instr, "barrier();");
  /* how much of each row the defined columns cover */
  own = own_rows(E, instr, "0", n);
  el_line(E, instr, "%s cv = %s(0);", rt, rt);
  glsl_scope_t across = el_open(E, instr, "for (int l = 0; l < counts.x; l++) {");
  matrix_index(bidx, br, "i", "l", idx);
  codegen_load_result(E, instr, 0, idx, &v);
  snprintf(sqbuf, sizeof sqbuf, sq, v.s, v.s);
  el_line(E, instr, "cv += %s;", sqbuf);
  el_close(E, instr, across);
  el_line(E, instr, "%s[i] = cv;", cover.s);
  el_close(E, instr, own);
  /* the other columns: e_c for the least covered row c, orthogonalized
   * against the columns before it twice */
  glsl_scope_t fill = el_open(E, instr, "for (int j = counts.x; j < %lld; j++) {", (long long)n);
  el_line(E, instr, "%s best = %s(-1);", rt, rt);
  el_line(E, instr, "int arg = %lld;", (long long)n);
  own = own_rows(E, instr, "0", n);
  el_line(E, instr, "if (%s(1) - %s[i] > best) { best = %s(1) - %s[i]; arg = i; }", rt, cover.s, rt, cover.s);
  el_close(E, instr, own);
  el_line(E, instr, "%s[lane] = best;", red.s);
  el_line(E, instr, "%s[lane] = ivec2(arg, 0);", redi.s);
  el_line(E, instr, "barrier();");
  glsl_scope_t tree = el_open(E, instr, "for (int h = %d; h > 0; h >>= 1) {", LU_LANES / 2);
  el_line(E, instr,
          "if (lane < h && (%s[lane + h] > %s[lane] || (%s[lane + h] == %s[lane] && %s[lane + h].x < %s[lane].x))) "
          "{ %s[lane] = %s[lane + h]; %s[lane] = %s[lane + h]; }",
          red.s, red.s, red.s, red.s, redi.s, redi.s, red.s, red.s, redi.s, redi.s);
  el_line(E, instr, "barrier();");
  el_close(E, instr, tree);
  el_line(E, instr, "int cr = %s[0].x;", redi.s);
  el_line(E, instr, "barrier();");
  own = own_rows(E, instr, "0", n);
  el_line(E, instr, "%s x = i == cr ? %s%s : %s(0);", ct, ct, one, ct);
  across = el_open(E, instr, "for (int l = 0; l < j; l++) {");
  el_name_t uil, ucl, cu;
  matrix_index(bidx, br, "i", "l", idx);
  codegen_load_result(E, instr, 0, idx, &uil);
  matrix_index(bidx, br, "cr", "l", idx);
  codegen_load_result(E, instr, 0, idx, &ucl);
  conj_(E, instr, t, ucl.s, &cu);
  mul(E, instr, t, uil.s, cu.s, &g);
  el_line(E, instr, "x -= %s;", g.s);
  el_close(E, instr, across);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_store_result(E, instr, 0, idx, "x");
  el_close(E, instr, own);
  sync_results(E, instr);
  glsl_scope_t dots = el_open(E, instr, "for (int l = lane; l < j; l += %d) {", LU_LANES);
  el_line(E, instr, "%s d = %s(0);", ct, ct);
  down = el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)n);
  el_name_t ui, xi;
  matrix_index(bidx, br, "i", "l", idx);
  codegen_load_result(E, instr, 0, idx, &ui);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 0, idx, &xi);
  conj_(E, instr, t, ui.s, &cu);
  mul(E, instr, t, cu.s, xi.s, &g);
  el_line(E, instr, "d += %s;", g.s);
  el_close(E, instr, down);
  el_line(E, instr, "%s[l] = d;", proj.s);
  el_close(E, instr, dots);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "%s nrm = %s(0);", rt, rt);
  own = own_rows(E, instr, "0", n);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 0, idx, &xi);
  el_line(E, instr, "%s x = %s;", ct, xi.s);
  across = el_open(E, instr, "for (int l = 0; l < j; l++) {");
  matrix_index(bidx, br, "i", "l", idx);
  codegen_load_result(E, instr, 0, idx, &uil);
  el_name_t dl;
  el_def(E, instr, t, false, &dl, "%s[l]", proj.s);
  mul(E, instr, t, uil.s, dl.s, &g);
  el_line(E, instr, "x -= %s;", g.s);
  el_close(E, instr, across);
  snprintf(sqbuf, sizeof sqbuf, sq, "x", "x");
  el_line(E, instr, "nrm += %s;", sqbuf);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_store_result(E, instr, 0, idx, "x");
  el_close(E, instr, own);
  el_line(E, instr, "%s[lane] = nrm;", red.s);
  el_line(E, instr, "barrier();");
  el_line(E, instr, "for (int h = %d; h > 0; h >>= 1) { if (lane < h) %s[lane] += %s[lane + h]; barrier(); }",
          LU_LANES / 2, red.s, red.s);
  el_line(E, instr, "nrm = sqrt(%s[0]);", red.s);
  el_line(E, instr, "barrier();");
  own = own_rows(E, instr, "0", n);
  matrix_index(bidx, br, "i", "j", idx);
  codegen_load_result(E, instr, 0, idx, &xi);
  el_line(E, instr, "%s y = %s / nrm;", ct, xi.s);
  codegen_store_result(E, instr, 0, idx, "y");
  snprintf(sqbuf, sizeof sqbuf, sq, "y", "y");
  el_line(E, instr, "%s[i] += %s;", cover.s, sqbuf);
  el_close(E, instr, own);
  sync_results(E, instr);
  el_close(E, instr, fill);
  store_by_first(E, instr, 3, bidx, "converged && counts.y == 0 ? 0 : 1");
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}

/* ------------------------------------------------- tridiagonal_solve */

/* tridiagonal_solve (internal; codegen/expand.c, "solver custom calls"):
 * LAPACK gtsv's solution of each batch system A x = b, A tridiagonal with
 * sub-, main and superdiagonals dl, d, du [m] (dl[0] and du[m-1] not
 * part of A) and b [m, n].  Results: (dl, d, du as gtsv leaves them -- U's
 * diagonal in d, its first superdiagonal in du, its second in dl[1..m-2]
 * -- x [m, n], info [batch...] s32, and two [m] work arrays: the
 * multipliers and the rows interchanged).
 *
 * Gaussian elimination with partial pivoting, step by step as gtsv (a row
 * interchange where |dl| > |d|, |re| + |im| for complex types; a complex
 * zero subdiagonal eliminates nothing), by invocation 0 of one workgroup
 * per system; info = k + 1 for the first zero pivot (x then keeps b's
 * values).  Then each invocation applies the steps to its columns of b
 * and substitutes back. */
vkhlo_status_t codegen_emit_tridiagonal_solve(elemental_emitter_t *E, const hlo_instruction_t *instr,
                                             int64_t *out_total) {
  const hlo_shape_t *s = &instr->operands[3]->shape;
  hlo_element_type_t t = s->element_type;
  VKHLO_RETURN_IF_ERROR(check_float_type(instr, t));
  int r = s->rank;
  if (r < 2 || instr->operand_count != 4 || !hlo_shape_is_tuple(&instr->shape) || instr->shape.tuple_count != 7)
    return VKHLO_INTERNAL("tridiagonal_solve %s: b of rank %d, or not four operands and seven results", instr->name,
                          r);
  int br = r - 2;
  int64_t m = s->dimensions[r - 2], n = s->dimensions[r - 1], cols = (n + LU_LANES - 1) / LU_LANES;
  bool cx = is_complex(t);
  const char *ct = glsl_compute_type(t), *rt = real_compute_type(t);
  el_count_loop_iterations(E, instr, 2 * m + cols * 3 * m);
  hlo_shape_t batch;
  el_name_t bidx[HLO_MAX_RANK], vidx[HLO_MAX_RANK], idx[HLO_MAX_RANK], v;
  open_problem(E, instr, s, bidx, &batch);

  el_line(E, instr, "int info = 0;");
  glsl_scope_t first = el_open(E, instr, "if (lane == 0) {");
  /* the diagonals as they are, then the elimination over them */
  glsl_scope_t copy = el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)m);
  vector_index(bidx, br, "i", vidx);
  for (int k = 0; k < 3; k++) {
    VKHLO_RETURN_IF_ERROR(el_operand(E, instr, k, vidx, &v));
    codegen_store_result(E, instr, k, vidx, v.s);
  }
  el_close(E, instr, copy);
  el_name_t d0, du0;
  vector_index(bidx, br, "0", vidx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, vidx, &d0));
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 2, vidx, &du0));
  el_line(E, instr, "%s dk = %s, duk = %s;", ct, d0.s, du0.s);
  glsl_scope_t steps = el_open(E, instr, "for (int k = 0; k < %lld; k++) {", (long long)m - 1);
  el_name_t dl1, d1, du1, fact, prod;
  vector_index(bidx, br, "(k + 1)", vidx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 0, vidx, &dl1));
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 1, vidx, &d1));
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 2, vidx, &du1));
  el_line(E, instr, "int swap = 0;");
  el_line(E, instr, "%s fact = %s(0), dk1 = %s, dunext = %s, dlk = %s;", ct, ct, d1.s, du1.s, dl1.s);
  /* |x| as gtsv compares: |re| + |im| for complex types */
  if (cx) el_line(E, instr, "%s magd = abs(dk.x) + abs(dk.y), magl = abs(%s.x) + abs(%s.y);", rt, dl1.s, dl1.s);
  else el_line(E, instr, "%s magd = abs(dk), magl = abs(%s);", rt, dl1.s);
  glsl_scope_t none = el_open(E, instr, "if (%s) {", cx ? "magl == 0" : "false");
  el_line(E, instr, "if (dk == %s(0)) { info = k + 1; }", ct);
  el_line(E, instr, "swap = 2;");
  el_close(E, instr, none);
  glsl_scope_t keep = el_open(E, instr, "else if (magd >= magl) {");
  el_line(E, instr, "if (dk == %s(0)) { info = k + 1; }", ct);
  glsl_scope_t ok = el_open(E, instr, "else {");
  div_(E, instr, t, dl1.s, "dk", &fact);
  el_line(E, instr, "fact = %s;", fact.s);
  mul(E, instr, t, "fact", "duk", &prod);
  el_line(E, instr, "dk1 = %s - %s;", d1.s, prod.s);
  el_line(E, instr, "if (k < %lld) dlk = %s(0);", (long long)m - 2, ct);
  el_close(E, instr, ok);
  el_close(E, instr, keep);
  glsl_scope_t inter = el_open(E, instr, "else {");
  el_line(E, instr, "swap = 1;");
  div_(E, instr, t, "dk", dl1.s, &fact);
  el_line(E, instr, "fact = %s;", fact.s);
  el_line(E, instr, "%s temp = %s;", ct, d1.s);
  mul(E, instr, t, "fact", "temp", &prod);
  el_line(E, instr, "dk1 = duk - %s;", prod.s);
  el_line(E, instr, "dk = %s;", dl1.s);
  glsl_scope_t inner = el_open(E, instr, "if (k < %lld) {", (long long)m - 2);
  el_line(E, instr, "dlk = %s;", du1.s);
  mul(E, instr, t, "fact", du1.s, &prod);
  el_line(E, instr, "dunext = -%s;", prod.s);
  el_close(E, instr, inner);
  el_line(E, instr, "duk = temp;");
  el_close(E, instr, inter);
  vector_index(bidx, br, "k", vidx);
  codegen_store_result(E, instr, 1, vidx, "dk");
  codegen_store_result(E, instr, 2, vidx, "duk");
  codegen_store_result(E, instr, 5, vidx, "fact");
  codegen_store_result(E, instr, 6, vidx, "swap");
  el_line(E, instr, "if (info != 0) break;");
  vector_index(bidx, br, "(k + 1)", vidx);
  codegen_store_result(E, instr, 0, vidx, "dlk");
  el_line(E, instr, "dk = dk1;");
  el_line(E, instr, "duk = dunext;");
  el_close(E, instr, steps);
  char last_row[32];
  snprintf(last_row, sizeof last_row, "%lld", (long long)m - 1);
  vector_index(bidx, br, last_row, vidx);
  glsl_scope_t last = el_open(E, instr, "if (info == 0) {");
  codegen_store_result(E, instr, 1, vidx, "dk");
  el_line(E, instr, "if (dk == %s(0)) info = %lld;", ct, (long long)m);
  el_close(E, instr, last);
  codegen_store_result(E, instr, 4, bidx, "info");
  el_close(E, instr, first);
  sync_results(E, instr);
  codegen_load_result(E, instr, 4, bidx, &v);
  el_line(E, instr, "info = %s;", v.s);

  /* this invocation's columns: x = b, the steps, back substitution */
  glsl_scope_t own = el_open(E, instr, "for (int c = lane; c < %lld; c += %d) {", (long long)n, LU_LANES);
  copy = el_open(E, instr, "for (int i = 0; i < %lld; i++) {", (long long)m);
  matrix_index(bidx, br, "i", "c", idx);
  VKHLO_RETURN_IF_ERROR(el_operand(E, instr, 3, idx, &v));
  codegen_store_result(E, instr, 3, idx, v.s);
  el_close(E, instr, copy);
  glsl_scope_t solve = el_open(E, instr, "if (info == 0) {");
  steps = el_open(E, instr, "for (int k = 0; k < %lld; k++) {", (long long)m - 1);
  el_name_t sw, f, xk, xk1;
  vector_index(bidx, br, "k", vidx);
  codegen_load_result(E, instr, 6, vidx, &sw);
  codegen_load_result(E, instr, 5, vidx, &f);
  matrix_index(bidx, br, "k", "c", idx);
  codegen_load_result(E, instr, 3, idx, &xk);
  el_name_t idx1[HLO_MAX_RANK];
  matrix_index(bidx, br, "(k + 1)", "c", idx1);
  codegen_load_result(E, instr, 3, idx1, &xk1);
  glsl_scope_t s0 = el_open(E, instr, "if (%s == 0) {", sw.s);
  mul(E, instr, t, f.s, xk.s, &prod);
  el_line(E, instr, "%s y = %s - %s;", ct, xk1.s, prod.s);
  codegen_store_result(E, instr, 3, idx1, "y");
  el_close(E, instr, s0);
  glsl_scope_t s1 = el_open(E, instr, "else if (%s == 1) {", sw.s);
  mul(E, instr, t, f.s, xk1.s, &prod);
  el_line(E, instr, "%s y = %s - %s;", ct, xk.s, prod.s);
  codegen_store_result(E, instr, 3, idx, xk1.s);
  codegen_store_result(E, instr, 3, idx1, "y");
  el_close(E, instr, s1);
  el_close(E, instr, steps);
  /* x[k] = (x[k] - du[k] x[k+1] - dl[k+1] x[k+2]) / d[k], dl[k+1] being
   * U's second superdiagonal */
  el_line(E, instr, "%s x1 = %s(0), x2 = %s(0);", ct, ct, ct);
  glsl_scope_t back = el_open(E, instr, "for (int k = %lld; k >= 0; k--) {", (long long)m - 1);
  el_name_t dk_, duk_, dlk_, xv, p1, p2, q;
  vector_index(bidx, br, "k", vidx);
  codegen_load_result(E, instr, 1, vidx, &dk_);
  codegen_load_result(E, instr, 2, vidx, &duk_);
  matrix_index(bidx, br, "k", "c", idx);
  codegen_load_result(E, instr, 3, idx, &xv);
  el_line(E, instr, "%s acc = %s;", ct, xv.s);
  glsl_scope_t a1 = el_open(E, instr, "if (k + 1 < %lld) {", (long long)m);
  mul(E, instr, t, duk_.s, "x1", &p1);
  el_line(E, instr, "acc = acc - %s;", p1.s);
  el_close(E, instr, a1);
  glsl_scope_t a2 = el_open(E, instr, "if (k + 2 < %lld) {", (long long)m);
  vector_index(bidx, br, "(k + 1)", vidx);
  codegen_load_result(E, instr, 0, vidx, &dlk_);
  mul(E, instr, t, dlk_.s, "x2", &p2);
  el_line(E, instr, "acc = acc - %s;", p2.s);
  el_close(E, instr, a2);
  div_(E, instr, t, "acc", dk_.s, &q);
  codegen_store_result(E, instr, 3, idx, q.s);
  el_line(E, instr, "x2 = x1;");
  el_line(E, instr, "x1 = %s;", q.s);
  el_close(E, instr, back);
  el_close(E, instr, solve);
  el_close(E, instr, own);
  *out_total = hlo_shape_element_count(&batch) * LU_LANES;
  return NULL;
}
