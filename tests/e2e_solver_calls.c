/*
 * JAX's linear algebra as jax.export writes it for CPUs (LAPACK) and GPUs
 * (cuSOLVER): custom_calls @lapack_?getrf_ffi, @lapack_?potrf_ffi,
 * @lapack_?trsm_ffi, @lapack_?geqrf_ffi, @lapack_?orgqr_ffi / ?ungqr_ffi,
 * @cusolver_getrf_ffi, @cusolver_potrf_ffi, @cusolver_geqrf_ffi,
 * @cusolver_orgqr_ffi, @lapack_?syevd_ffi / ?heevd_ffi, @cusolver_syevd_ffi,
 * @lapack_?gesdd_ffi, @cusolver_gesvd_ffi, @cusolver_gesvdj_ffi,
 * @lapack_?gtsv_ffi, @cusparse_gtsv2_ffi
 * and @cu_lu_pivots_to_permutation (codegen/expand.c, "solver custom calls"),
 * end to end with the validation layer on.  The programs carry what the
 * exporter writes: options in an mhlo.backend_config dictionary, the
 * libraries' column-major operand_layouts, output_operand_aliases.
 *
 *   getrf        a 4 x 4 matrix whose pivots and factors are known (LAPACK's
 *                results, worked by hand); batches of 150 x 150 (blocked: three
 *                panels), 100 x 70 and 70 x 130 f32 and 40 x 40 complex64,
 *                checked by what partial pivoting guarantees: P a = L U to
 *                rounding, |L| <= 1 (sqrt(2) for complex: the pivot search
 *                compares |re| + |im|), pivots at or below their step; a zero
 *                column gives info = its index + 1.
 *   potrf        lower 100 x 100 f32 (blocked cholesky) against a double
 *                reference, the other triangle the input's bit for bit, info 0
 *                and, for a matrix that is not positive definite at column 80,
 *                81; upper complex64 through cusolver's {lower = false}.
 *   trsm         side R, upper, transposed, unit diagonal, alpha 2; side L,
 *                lower, conjugate-transposed complex64: the residual of the
 *                solved system, with NaNs in the triangle not read.
 *   permutation  pivots in and out of range (skipped) to permutations of 8.
 *   syevd        [[2, 1], [1, 2]] (values 1 and 3); 33 x 33 and 64 x 64 f32,
 *                20 x 20 and 7 x 7 complex64 (cuSOLVER's and LAPACK's names,
 *                either triangle, 1e6 in the other), eigenvalues 1, 1, 1,
 *                2, 2, ...: orthonormal vectors, a v = w v, ascending, info 0;
 *                past 64 (the while loop of eigh_round dispatches) 65 x 65
 *                (a batch of two), upper 100 x 100, 90 x 90 repeated f32 and
 *                71 x 71 complex64.
 *   geqrf, orgqr a 2 x 2 matrix whose reflectors are known (worked by hand),
 *                also through the TPU export's @Qr (a function returning
 *                its tuple as one value);
 *                150 x 100 (blocked), 40 x 90, 30 x 20 with a zero first
 *                column f32, 45 x 40 and 12 x 12 complex64 (cuSOLVER and
 *                LAPACK names), checked by what Householder QR guarantees
 *                and against the product of the reflectors built here.
 *   svd          [[3, 0], [4, 5]] (values 3 sqrt 5 and sqrt 5, vectors known);
 *                33 x 33, 64 x 64, tall 90 x 20 and wide 12 x 40, full and
 *                reduced, f32 and complex64, rank deficient and zero matrices,
 *                cuSOLVER's transposed gesvd and gesvdj's V: s descending,
 *                U and V orthonormal, U s V^H = a, info 0; past 64 (the
 *                while loop of svd_round dispatches) 65 x 65, reduced
 *                100 x 70, complex 66 x 80, rank deficient 75 x 75 and
 *                zero 67 x 67.
 *   gtsv         a 3 x 3 system whose solution is known; batches of 50 and 300
 *                unknowns (70 right-hand sides), complex64, cuSPARSE's
 *                gtsv2: A x = b within rounding; a zero column gives info 2.
 *   errors       a solver call of the wrong result types is an
 *                INVALID_ARGUMENT naming what it expects.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <complex.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"


/* Runs |text| on |n| operands (types, host data) and reads |nres| results
 * into out[r] (bytes[r] each); at most four of each. */
static void run(vkhlo_context_t *ctx, const char *text, int n, const vkhlo_tensor_type_t *types,
                const void *const *in, int nres, void *const *out, const size_t *bytes) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_buffer_t *args[4] = {NULL, NULL, NULL, NULL}, *res[4] = {NULL, NULL, NULL, NULL};
  assert_true(n <= 4 && nres <= 4);
  for (int i = 0; i < n; i++) expect_ok(vkhlo_buffer_create(ctx, &types[i], in[i], &args[i]));
  expect_ok(vkhlo_executable_execute(exe, n, args, nres, res));
  for (int r = 0; r < nres; r++) {
    expect_ok(vkhlo_buffer_read(res[r], out[r], bytes[r]));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int i = 0; i < n; i++) vkhlo_buffer_destroy(args[i]);
  vkhlo_executable_destroy(exe);
}

/* element i of floats laid out as complex64 (|cplx|) or f32 */
static double complex at(const float *v, size_t i, bool cplx) {
  return cplx ? v[2 * i] + I * v[2 * i + 1] : v[i];
}

static void put(float *v, size_t i, bool cplx, double complex x) {
  if (cplx) {
    v[2 * i] = (float)creal(x);
    v[2 * i + 1] = (float)cimag(x);
  } else {
    v[i] = (float)creal(x);
  }
}

/* "tensor<BxMxNxT>" (no batch dimension when b is 0) */
static void tensor(char *buf, size_t size, int b, int m, int n, const char *t) {
  if (b) snprintf(buf, size, "tensor<%dx%dx%dx%s>", b, m, n, t);
  else snprintf(buf, size, "tensor<%dx%dx%s>", m, n, t);
}

/* --------------------------------------------------------------- getrf */

static char *getrf_text(const char *target, int b, int m, int n, const char *t) {
  char at[64], pt[64], it[64];
  int k = m < n ? m : n;
  tensor(at, sizeof at, b, m, n, t);
  snprintf(pt, sizeof pt, "tensor<%dx%dxi32>", b, k);
  snprintf(it, sizeof it, "tensor<%dxi32>", b);
  char *text = malloc(2048);
  assert_non_null(text);
  snprintf(text, 2048,
           "module @jit_lu attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n"
           "  func.func public @main(%%arg0: %s) -> (%s, %s, %s) {\n"
           "    %%0:3 = stablehlo.custom_call @%s(%%arg0) {mhlo.backend_config = {}, operand_layouts = "
           "[dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
           "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = "
           "[dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} "
           ": (%s) -> (%s, %s, %s)\n"
           "    return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n  }\n}\n",
           at, at, pt, it, target, at, at, pt, it, at, pt, it);
  return text;
}

/* Factors b random m x n matrices (column |zero| of batch 0 all zeros when
 * >= 0) and checks what partial pivoting guarantees. */
static void getrf_case(vkhlo_context_t *ctx, const char *target, int b, int m, int n, bool cplx, int zero) {
  int k = m < n ? m : n, w = cplx ? 2 : 1;
  size_t count = (size_t)b * m * n;
  float *a = malloc(sizeof *a * count * w), *lu = malloc(sizeof *lu * count * w);
  int32_t *piv = malloc(sizeof *piv * (size_t)b * k), *info = malloc(sizeof *info * (size_t)b);
  double complex *pa = malloc(sizeof *pa * (size_t)m * n);
  assert_true(a && lu && piv && info && pa);
  uint32_t seed = 5u + (unsigned)(m * n);
  for (size_t i = 0; i < count; i++) put(a, i, cplx, test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  if (zero >= 0)
    for (int i = 0; i < m; i++) put(a, (size_t)i * n + zero, cplx, 0);
  char *text = getrf_text(target, b, m, n, cplx ? "complex<f32>" : "f32");
  vkhlo_tensor_type_t t = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, m, n}};
  const void *in[1] = {a};
  void *out[3] = {lu, piv, info};
  size_t bytes[3] = {sizeof *lu * count * w, sizeof *piv * (size_t)b * k, sizeof *info * (size_t)b};
  run(ctx, text, 1, &t, in, 3, out, bytes);
  for (int q = 0; q < b; q++) {
    const float *aq = a + (size_t)q * m * n * w, *fq = lu + (size_t)q * m * n * w;
    for (size_t i = 0; i < (size_t)m * n; i++) pa[i] = at(aq, i, cplx);
    for (int j = 0; j < k; j++) { /* the interchanges, applied to a */
      int p = piv[q * k + j] - 1;
      if (p < j || p >= m) fail_msg("%s batch %d: pivot %d of step %d", text, q, p + 1, j);
      for (int c = 0; c < n; c++) {
        double complex v = pa[(size_t)j * n + c];
        pa[(size_t)j * n + c] = pa[(size_t)p * n + c];
        pa[(size_t)p * n + c] = v;
      }
    }
    /* (P a - L U)[i][c], against the bound sum |L[i][j]| |U[j][c]| of its rounding */
    for (int i = 0; i < m; i++)
      for (int c = 0; c < n; c++) {
        double complex s = 0;
        double bound = 0;
        for (int j = 0; j <= (i < c ? i : c) && j < k; j++) {
          double complex l = j == i ? 1 : at(fq, (size_t)i * n + j, cplx), u = at(fq, (size_t)j * n + c, cplx);
          /* the pivot search compares |re| + |im|, which bounds |l| by sqrt(2) for complex */
          if (j < i && cabs(l) > (cplx ? sqrt(2) : 1) + 1e-6)
            fail_msg("%s batch %d: |L[%d][%d]| = %g", text, q, i, j, cabs(l));
          s += l * u;
          bound += cabs(l) * cabs(u);
        }
        if (!(cabs(pa[(size_t)i * n + c] - s) <= 1e-5 * (bound + 1)))
          fail_msg("%s batch %d: (P a - L U)[%d][%d] = %g", text, q, i, c, cabs(pa[(size_t)i * n + c] - s));
      }
    int want = q == 0 && zero >= 0 ? zero + 1 : 0;
    if (info[q] != want) fail_msg("%s batch %d: info %d, want %d", text, q, info[q], want);
  }
  free(text), free(a), free(lu), free(piv), free(info), free(pa);
}

/* LAPACK's sgetrf on [[1, 2, 3, 4], [4, 3, 2, 1], [0, 1, 0, 1], [2, 2, 5, 1]]:
 * step 0 takes row 1 (|4|), step 1 row 1 again (1.25 over 0.5 and 1),
 * step 2 row 3 (|-2.6667 + ...|: worked by hand) */
static void getrf_known(void **state) {
  static const float a[16] = {1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1, 2, 2, 5, 1};
  /* rows after each interchange; L below the diagonal, U on and above */
  static const double want[16] = {4,   3,   2,   1, 0.25, 1.25,         2.5,          3.75,
                                  0.5, 0.4, 3,   -1, 0,   0.8, -2.0 / 3.0, -8.0 / 3.0};
  static const int32_t want_piv[4] = {2, 2, 4, 4};
  float lu[16];
  int32_t piv[4], info = -1;
  char *text = getrf_text("lapack_sgetrf_ffi", 1, 4, 4, "f32");
  vkhlo_tensor_type_t t = {.element_type = VKHLO_F32, .rank = 3, .dimensions = {1, 4, 4}};
  const void *in[1] = {a};
  void *out[3] = {lu, piv, &info};
  size_t bytes[3] = {sizeof lu, sizeof piv, sizeof info};
  run(*state, text, 1, &t, in, 3, out, bytes);
  for (int i = 0; i < 16; i++)
    if (!(fabs(lu[i] - want[i]) <= 1e-6)) fail_msg("lu[%d] = %.9g, want %.9g", i, lu[i], want[i]);
  for (int j = 0; j < 4; j++) assert_int_equal(piv[j], want_piv[j]);
  assert_int_equal(info, 0);
  free(text);
}

static void getrf_blocked(void **state) {
  getrf_case(*state, "lapack_sgetrf_ffi", 2, 150, 150, false, -1);
  getrf_case(*state, "lapack_sgetrf_ffi", 1, 130, 130, false, 70);
}

static void getrf_rectangular(void **state) {
  getrf_case(*state, "lapack_sgetrf_ffi", 2, 100, 70, false, -1);
  getrf_case(*state, "cusolver_getrf_ffi", 2, 70, 130, false, 3);
}

static void getrf_complex(void **state) { getrf_case(*state, "lapack_cgetrf_ffi", 2, 40, 40, true, -1); }

/* --------------------------------------------------------------- potrf */


/* potrf of b matrices n x n (batch |bad| made indefinite at column 80),
 * lower or upper; |config| is the backend_config dictionary. */
static void potrf_case(vkhlo_context_t *ctx, const char *target, const char *config, int b, int n, bool lower,
                       bool cplx, int bad) {
  int w = cplx ? 2 : 1;
  size_t count = (size_t)b * n * n;
  double complex *a = malloc(sizeof *a * count), *l = malloc(sizeof *l * count);
  float *in = malloc(sizeof *in * count * w), *got = malloc(sizeof *got * count * w);
  int32_t *info = malloc(sizeof *info * (size_t)b);
  assert_true(a && l && in && got && info);
  test_hpd(b, n, cplx, 3u + (unsigned)n, a, l);
  for (size_t i = 0; i < count; i++) put(in, i, cplx, a[i]);
  if (bad >= 0) put(in, ((size_t)bad * n + 80) * n + 80, cplx, -1);
  char ty[64], text[1536];
  tensor(ty, sizeof ty, b, n, n, cplx ? "complex<f32>" : "f32");
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: %s) -> (%s, tensor<%dxi32>) {\n"
           "  %%0:2 = stablehlo.custom_call @%s(%%arg0) {mhlo.backend_config = %s, mhlo.frontend_attributes = "
           "{num_batch_dims = \"1\"}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>], "
           "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 0, "
           "operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, dense<0> : "
           "tensor<1xindex>]} : (%s) -> (%s, tensor<%dxi32>)\n"
           "  return %%0#0, %%0#1 : %s, tensor<%dxi32>\n}\n",
           ty, ty, b, target, config, ty, ty, b, ty, b);
  vkhlo_tensor_type_t t = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, n, n}};
  const void *ins[1] = {in};
  void *out[2] = {got, info};
  size_t bytes[2] = {sizeof *got * count * w, sizeof *info * (size_t)b};
  run(ctx, text, 1, &t, ins, 2, out, bytes);
  for (int q = 0; q < b; q++) {
    assert_int_equal(info[q], q == bad ? 81 : 0);
    if (q == bad) continue;
    double top = 0;
    for (int i = 0; i < n * n; i++) top = fmax(top, cabs(l[(size_t)q * n * n + i]));
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        size_t e = ((size_t)q * n + i) * n + j;
        bool factor = lower ? j <= i : j >= i;
        if (!factor) { /* the input's own value, untouched */
          if (memcmp(&got[e * w], &in[e * w], sizeof(float) * w) != 0)
            fail_msg("%s batch %d: [%d][%d] changed", target, q, i, j);
          continue;
        }
        double complex want = lower ? l[e] : conj(l[((size_t)q * n + j) * n + i]);
        if (!(cabs(at(got, e, cplx) - want) <= 1e-4 * top))
          fail_msg("%s batch %d: [%d][%d] = %g, want %g", target, q, i, j, creal(at(got, e, cplx)), creal(want));
      }
  }
  free(a), free(l), free(in), free(got), free(info);
}

static void potrf_lower(void **state) {
  potrf_case(*state, "lapack_spotrf_ffi", "{uplo = 76 : ui8}", 3, 100, true, false, 1);
}

static void potrf_upper_complex(void **state) {
  potrf_case(*state, "cusolver_potrf_ffi", "{lower = false}", 2, 90, false, true, -1);
}

/* ---------------------------------------------------------------- trsm */

/* |side| 'L' / 'R', |uplo|, |trans| ('N', 'T', 'C'), |diag| ('N', 'U'), with
 * alpha when |alpha| is nonzero; a [k, k], b [rows, cols] (one batch of 2). */
static void trsm_case(vkhlo_context_t *ctx, const char *target, char side, char uplo, char trans, char diag,
                      float alpha, int k, int nrhs, bool cplx) {
  enum { B = 2 };
  int rows = side == 'L' ? k : nrhs, cols = side == 'L' ? nrhs : k, w = cplx ? 2 : 1;
  const char *et = cplx ? "complex<f32>" : "f32";
  size_t an = (size_t)B * k * k, bn = (size_t)B * rows * cols;
  float *a = malloc(sizeof *a * an * w), *b = malloc(sizeof *b * bn * w), *x = malloc(sizeof *x * bn * w);
  assert_true(a && b && x);
  uint32_t seed = 17u + (unsigned)k;
  for (int q = 0; q < B; q++)
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++) {
        size_t e = ((size_t)q * k + i) * k + j;
        bool read = (uplo == 'L' ? j <= i : j >= i) && !(diag == 'U' && i == j);
        double complex v = 0.1 * (test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0)) + (i == j ? 2 : 0);
        put(a, e, cplx, read ? v : NAN); /* the triangle not read holds NaNs */
      }
  for (size_t i = 0; i < bn; i++) put(b, i, cplx, test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  char aty[64], bty[64], text[1536], extra[64] = "", extra_ty[64] = "";
  tensor(aty, sizeof aty, B, k, k, et);
  tensor(bty, sizeof bty, B, rows, cols, et);
  if (alpha != 0) {
    snprintf(extra, sizeof extra, ", %%alpha");
    snprintf(extra_ty, sizeof extra_ty, ", tensor<%s>", et);
  }
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: %s, %%arg1: %s) -> %s {\n"
           "  %%alpha = stablehlo.constant dense<%s> : tensor<%s>\n"
           "  %%0 = stablehlo.custom_call @%s(%%arg0, %%arg1%s) {mhlo.backend_config = {diag = %d : ui8, side = %d "
           ": ui8, trans_x = %d : ui8, uplo = %d : ui8}, operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>, "
           "dense<[1, 2, 0]> : tensor<3xindex>%s], output_operand_aliases = [#stablehlo.output_operand_alias<"
           "output_tuple_indices = [], operand_index = 1, operand_tuple_indices = []>], result_layouts = "
           "[dense<[1, 2, 0]> : tensor<3xindex>]} : (%s, %s%s) -> %s\n"
           "  return %%0 : %s\n}\n",
           aty, bty, bty, cplx ? "(2.0, 0.0)" : "2.0", et, target, extra, diag, side, trans, uplo,
           alpha != 0 ? ", dense<> : tensor<0xindex>" : "", aty, bty, extra_ty, bty, bty);
  vkhlo_element_type_t e = cplx ? VKHLO_C64 : VKHLO_F32;
  vkhlo_tensor_type_t t[2] = {{.element_type = e, .rank = 3, .dimensions = {B, k, k}},
                              {.element_type = e, .rank = 3, .dimensions = {B, rows, cols}}};
  const void *in[2] = {a, b};
  void *out[1] = {x};
  size_t bytes[1] = {sizeof *x * bn * w};
  run(ctx, text, 2, t, in, 1, out, bytes);
  /* op(A) X (left) or X op(A) (right) against alpha B */
  double scale = alpha != 0 ? alpha : 1;
  for (int q = 0; q < B; q++)
    for (int i = 0; i < rows; i++)
      for (int c = 0; c < cols; c++) {
        double complex s = 0;
        for (int j = 0; j < k; j++) {
          /* op(A)[r][s] for the product's order */
          int r0 = side == 'L' ? i : j, s0 = side == 'L' ? j : c;
          int ai = trans == 'N' ? r0 : s0, aj = trans == 'N' ? s0 : r0;
          bool read = uplo == 'L' ? aj <= ai : aj >= ai;
          double complex av = ai == aj && diag == 'U' ? 1 : read ? at(a, ((size_t)q * k + ai) * k + aj, cplx) : 0;
          if (trans == 'C') av = conj(av);
          double complex xv = side == 'L' ? at(x, ((size_t)q * rows + j) * cols + c, cplx)
                                          : at(x, ((size_t)q * rows + i) * cols + j, cplx);
          s += av * xv;
        }
        double complex want = scale * at(b, ((size_t)q * rows + i) * cols + c, cplx);
        if (!(cabs(s - want) <= 1e-4 * (1 + cabs(want))))
          fail_msg("%s %c%c%c%c: residual [%d][%d][%d] = %g", target, side, uplo, trans, diag, q, i, c,
                   cabs(s - want));
      }
  free(a), free(b), free(x);
}

static void trsm_right_upper_transposed(void **state) {
  trsm_case(*state, "lapack_strsm_ffi", 'R', 'U', 'T', 'U', 2, 90, 13, false);
}

static void trsm_left_lower_adjoint(void **state) {
  trsm_case(*state, "lapack_ctrsm_ffi", 'L', 'L', 'C', 'N', 0, 70, 9, true);
}

/* --------------------------------------------------------- permutation */

static void pivots_to_permutation(void **state) {
  /* [2, 3, 4] pivots (from 0) to [2, 3, 8]: -1, 8 and 9 are out of range */
  static const int32_t pivots[24] = {3, 3, 5, 7, 0, 1, 2, 3, 7, 0, 9, -1, 1, 0, 1, 0, 8, 6, 6, 6, 2, 2, 2, 2};
  int32_t got[48], want[48];
  for (int p = 0; p < 6; p++) {
    int32_t *w = want + p * 8;
    for (int i = 0; i < 8; i++) w[i] = i;
    for (int i = 0; i < 4; i++) {
      int j = pivots[p * 4 + i];
      if (j < 0 || j >= 8) continue;
      int32_t v = w[i];
      w[i] = w[j];
      w[j] = v;
    }
  }
  const char *text =
      "func.func public @main(%arg0: tensor<2x3x4xi32>) -> tensor<2x3x8xi32> {\n"
      "  %0 = stablehlo.custom_call @cu_lu_pivots_to_permutation(%arg0) {mhlo.backend_config = {permutation_size = 8 "
      ": i32}, operand_layouts = [dense<[2, 1, 0]> : tensor<3xindex>], result_layouts = [dense<[2, 1, 0]> : "
      "tensor<3xindex>]} : (tensor<2x3x4xi32>) -> tensor<2x3x8xi32>\n"
      "  return %0 : tensor<2x3x8xi32>\n}\n";
  vkhlo_tensor_type_t t = {.element_type = VKHLO_S32, .rank = 3, .dimensions = {2, 3, 4}};
  const void *in[1] = {pivots};
  void *out[1] = {got};
  size_t bytes[1] = {sizeof got};
  run(*state, text, 1, &t, in, 1, out, bytes);
  for (int i = 0; i < 48; i++)
    if (got[i] != want[i]) fail_msg("permutation element %d is %d, want %d", i, got[i], want[i]);
}

/* ------------------------------------------------------------------ qr */

/* geqrf of b m x n matrices, then orgqr (ungqr) of its reflectors (the
 * first min(m, n) columns when m < n, as jnp.linalg.qr slices them):
 * returns (a, taus, q). */
static char *qr_text(const char *geqrf, const char *orgqr, int b, int m, int n, const char *t) {
  char at[64], tt[64], qt[64];
  int k = m < n ? m : n;
  tensor(at, sizeof at, b, m, n, t);
  tensor(qt, sizeof qt, b, m, k, t);
  snprintf(tt, sizeof tt, "tensor<%dx%dx%s>", b, k, t);
  char *text = malloc(4096);
  assert_non_null(text);
  int len = snprintf(text, 4096,
                     "func.func public @main(%%arg0: %s) -> (%s, %s, %s) {\n"
                     "  %%0:2 = stablehlo.custom_call @%s(%%arg0) {mhlo.backend_config = {}, operand_layouts = "
                     "[dense<[1, 2, 0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<"
                     "output_tuple_indices = [0], operand_index = 0, operand_tuple_indices = []>], result_layouts = "
                     "[dense<[1, 2, 0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>]} : (%s) -> (%s, %s)\n",
                     at, at, tt, qt, geqrf, at, at, tt);
  if (n > m)
    len += snprintf(text + len, 4096 - (size_t)len,
                    "  %%s = stablehlo.slice %%0#0 [0:%d, 0:%d, 0:%d] : (%s) -> %s\n", b, m, m, at, qt);
  snprintf(text + len, 4096 - (size_t)len,
           "  %%1 = stablehlo.custom_call @%s(%s, %%0#1) {mhlo.backend_config = {}, operand_layouts = [dense<[1, 2, "
           "0]> : tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 2, 0]> : "
           "tensor<3xindex>]} : (%s, %s) -> %s\n"
           "  return %%0#0, %%0#1, %%1 : %s, %s, %s\n}\n",
           orgqr, n > m ? "%s" : "%0#0", qt, tt, qt, at, tt, qt);
  return text;
}

/* Runs qr_text on b random m x n matrices (column 0 of batch 0 all zeros
 * when |zero_column|) and checks the results by what Householder QR
 * guarantees: q has orthonormal columns, q R = a (R: the upper triangle
 * of the first result), R's diagonal is real (LAPACK's beta), each tau is
 * 0 (the column below and the diagonal's imaginary part were 0) or within
 * 1 of 1 (real: in [1, 2]), and q is the product of the reflectors the
 * first result and taus hold (I - tau v v^H, v = (1, a[j+1.., j]), built
 * here in double). */
static void qr_case(vkhlo_context_t *ctx, const char *geqrf, const char *orgqr, int b, int m, int n, bool cplx,
                    bool zero_column) {
  int k = m < n ? m : n, w = cplx ? 2 : 1;
  size_t count = (size_t)b * m * n;
  float *a = malloc(sizeof *a * count * w), *f = malloc(sizeof *f * count * w);
  float *tau = malloc(sizeof *tau * (size_t)b * k * w), *q = malloc(sizeof *q * (size_t)b * m * k * w);
  double complex *h = malloc(sizeof *h * (size_t)m * k);
  assert_true(a && f && tau && q && h);
  uint32_t seed = 11u + (unsigned)(m * n);
  for (size_t i = 0; i < count; i++) put(a, i, cplx, test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  if (zero_column)
    for (int i = 0; i < m; i++) put(a, (size_t)i * n, cplx, 0);
  const char *t = cplx ? "complex<f32>" : "f32";
  char *text = qr_text(geqrf, orgqr, b, m, n, t);
  vkhlo_tensor_type_t ty = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, m, n}};
  const void *in[1] = {a};
  void *out[3] = {f, tau, q};
  size_t bytes[3] = {sizeof *f * count * w, sizeof *tau * (size_t)b * k * w, sizeof *q * (size_t)b * m * k * w};
  run(ctx, text, 1, &ty, in, 3, out, bytes);
  for (int p = 0; p < b; p++) {
    const float *ap = a + (size_t)p * m * n * w, *fp = f + (size_t)p * m * n * w, *tp = tau + (size_t)p * k * w;
    const float *qp = q + (size_t)p * m * k * w;
    for (int j = 0; j < k; j++) {
      double complex tj = at(tp, (size_t)j, cplx), d = at(fp, (size_t)j * n + j, cplx);
      if (cimag(d) != 0) fail_msg("%s batch %d: R[%d][%d] = %g%+gi is not real", text, p, j, j, creal(d), cimag(d));
      bool ok = tj == 0 || (cplx ? cabs(tj - 1) <= 1 + 1e-6 : creal(tj) >= 1 - 1e-6 && creal(tj) <= 2 + 1e-6);
      if (!ok) fail_msg("%s batch %d: tau[%d] = %g%+gi", text, p, j, creal(tj), cimag(tj));
      if (p == 0 && j == 0 && zero_column && (tj != 0 || d != 0))
        fail_msg("%s: a zero first column gives tau %g, R %g, want 0 and 0", text, creal(tj), creal(d));
    }
    /* h = H(0) ... H(k-1) I[:, :k], the last reflector first */
    for (int i = 0; i < m; i++)
      for (int c = 0; c < k; c++) h[(size_t)i * k + c] = i == c;
    for (int j = k - 1; j >= 0; j--) {
      double complex tj = at(tp, (size_t)j, cplx);
      for (int c = 0; c < k; c++) {
        double complex s = h[(size_t)j * k + c];
        for (int i = j + 1; i < m; i++) s += conj(at(fp, (size_t)i * n + j, cplx)) * h[(size_t)i * k + c];
        for (int i = j; i < m; i++) h[(size_t)i * k + c] -= tj * (i == j ? 1 : at(fp, (size_t)i * n + j, cplx)) * s;
      }
    }
    for (int i = 0; i < m; i++)
      for (int c = 0; c < k; c++) {
        double complex qv = at(qp, (size_t)i * k + c, cplx);
        if (!(cabs(qv - h[(size_t)i * k + c]) <= 1e-4))
          fail_msg("%s batch %d: q[%d][%d] = %g, the reflectors' product %g", text, p, i, c, creal(qv),
                   creal(h[(size_t)i * k + c]));
      }
    for (int c = 0; c < k; c++) /* q^H q = I */
      for (int d = 0; d < k; d++) {
        double complex s = 0;
        for (int i = 0; i < m; i++) s += conj(at(qp, (size_t)i * k + c, cplx)) * at(qp, (size_t)i * k + d, cplx);
        if (!(cabs(s - (c == d)) <= 1e-5 * m))
          fail_msg("%s batch %d: (q^H q)[%d][%d] = %g", text, p, c, d, cabs(s));
      }
    for (int i = 0; i < m; i++) /* q R = a */
      for (int c = 0; c < n; c++) {
        double complex s = 0;
        double bound = 0;
        for (int j = 0; j <= c && j < k; j++) {
          double complex v = at(qp, (size_t)i * k + j, cplx) * at(fp, (size_t)j * n + c, cplx);
          s += v;
          bound += cabs(v);
        }
        double complex e = at(ap, (size_t)i * n + c, cplx);
        if (!(cabs(s - e) <= 1e-5 * (bound + 1) * sqrt(m)))
          fail_msg("%s batch %d: (q R - a)[%d][%d] = %g", text, p, i, c, cabs(s - e));
      }
  }
  free(text), free(a), free(f), free(tau), free(q), free(h);
}

/* The older TPU export of jnp.linalg.qr: @Qr's tuple through a function
 * that returns it as one value, and @ProductOfElementaryHouseholderReflectors. */
static const char qr_tpu_text[] =
    "func.func public @main(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>) {\n"
    "  %0 = call @xla_fallback_geqrf(%a) : (tensor<2x2xf32>) -> tuple<tensor<2x2xf32>, tensor<2xf32>>\n"
    "  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2x2xf32>, tensor<2xf32>>) -> tensor<2x2xf32>\n"
    "  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<2x2xf32>, tensor<2xf32>>) -> tensor<2xf32>\n"
    "  %3 = stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%1, %2) : (tensor<2x2xf32>, "
    "tensor<2xf32>) -> tensor<2x2xf32>\n"
    "  return %1, %2, %3 : tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>\n}\n"
    "func.func private @xla_fallback_geqrf(%a: tensor<2x2xf32>) -> tuple<tensor<2x2xf32>, tensor<2xf32>> {\n"
    "  %0 = stablehlo.custom_call @Qr(%a) {xla_shape = \"(f32[2,2]{1,0}, f32[2]{0})\"} : (tensor<2x2xf32>) -> "
    "tuple<tensor<2x2xf32>, tensor<2xf32>>\n"
    "  %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2x2xf32>, tensor<2xf32>>) -> tensor<2x2xf32>\n"
    "  %2 = stablehlo.get_tuple_element %0[1] : (tuple<tensor<2x2xf32>, tensor<2xf32>>) -> tensor<2xf32>\n"
    "  %3 = stablehlo.tuple %1, %2 : tuple<tensor<2x2xf32>, tensor<2xf32>>\n"
    "  return %3 : tuple<tensor<2x2xf32>, tensor<2xf32>>\n}\n";

/* LAPACK's sgeqrf and sorgqr on [[3, 1], [4, 2]]: beta = -5, tau = (-5 -
 * 3) / -5 = 1.6, v = (1, 4 / (3 + 5)); H^T on column 1: w = 1 + 0.5 * 2,
 * (1, 2) - 1.6 * 2 * (1, 0.5) = (-2.2, 0.4); the last step has nothing
 * below the diagonal (tau 0).  q = I - 1.6 v v^T.  The same through the
 * LAPACK and the TPU names. */
static void qr_known(void **state) {
  static const float a[4] = {3, 1, 4, 2};
  static const float want_f[4] = {-5, -2.2f, 0.5f, 0.4f}, want_tau[2] = {1.6f, 0}, want_q[4] = {-0.6f, -0.8f, -0.8f, 0.6f};
  char *lapack = qr_text("lapack_sgeqrf_ffi", "lapack_sorgqr_ffi", 1, 2, 2, "f32");
  const char *texts[2] = {lapack, qr_tpu_text};
  for (int v = 0; v < 2; v++) {
    float f[4], tau[2], q[4];
    vkhlo_tensor_type_t t = {.element_type = VKHLO_F32, .rank = 3 - v, .dimensions = {1, 2, 2}};
    if (v) t.dimensions[0] = t.dimensions[2] = 2;
    const void *in[1] = {a};
    void *out[3] = {f, tau, q};
    size_t bytes[3] = {sizeof f, sizeof tau, sizeof q};
    run(*state, texts[v], 1, &t, in, 3, out, bytes);
    for (int i = 0; i < 4; i++) {
      if (fabsf(f[i] - want_f[i]) > 1e-6f) fail_msg("%s: a[%d] = %g, want %g", texts[v], i, f[i], want_f[i]);
      if (fabsf(q[i] - want_q[i]) > 1e-6f) fail_msg("%s: q[%d] = %g, want %g", texts[v], i, q[i], want_q[i]);
    }
    for (int i = 0; i < 2; i++)
      if (fabsf(tau[i] - want_tau[i]) > 1e-6f) fail_msg("%s: tau[%d] = %g, want %g", texts[v], i, tau[i], want_tau[i]);
  }
  free(lapack);
}

/* 150 x 100: five panels of geqrf and four block reflectors of orgqr */
static void qr_blocked(void **state) {
  qr_case(*state, "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi", 2, 150, 100, false, false);
}

/* wider than tall (q from the first 40 columns); the one-kernel form with
 * a zero first column */
static void qr_wide_and_small(void **state) {
  qr_case(*state, "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi", 1, 40, 90, false, false);
  qr_case(*state, "lapack_sgeqrf_ffi", "lapack_sorgqr_ffi", 2, 30, 20, false, true);
}

/* complex64 through cuSOLVER's names: panels of 16 */
static void qr_complex(void **state) {
  qr_case(*state, "cusolver_geqrf_ffi", "cusolver_orgqr_ffi", 2, 45, 40, true, true);
  qr_case(*state, "lapack_cgeqrf_ffi", "lapack_cungqr_ffi", 1, 12, 12, true, false);
}

/* ---------------------------------------------------------------- eigh */

/* syevd (heevd) of b n x n Hermitian matrices whose other triangle holds
 * 1e6 (never read); checks what an eigendecomposition guarantees: the
 * vectors orthonormal, a v = w v for each (value, vector) within the
 * rounding bound, the values ascending, info 0.  |repeated|: eigenvalues
 * 1, 1, 1, 2, 2, 2, ... (q diag q^H of a random q). */
static void eigh_case(vkhlo_context_t *ctx, const char *target, const char *config, int b, int n, bool cplx,
                      bool lower, bool repeated) {
  int w = cplx ? 2 : 1;
  size_t count = (size_t)b * n * n;
  float *a = malloc(sizeof *a * count * w), *v = malloc(sizeof *v * count * w), *val = malloc(sizeof *val * (size_t)b * n);
  int32_t *info = malloc(sizeof *info * (size_t)b);
  double complex *h = malloc(sizeof *h * (size_t)n * n), *q = malloc(sizeof *q * (size_t)n * n);
  assert_true(a && v && val && info && h && q);
  uint32_t seed = 3u + (unsigned)n;
  char at_[64], vt[64], it[64], text[2048];
  tensor(at_, sizeof at_, b, n, n, cplx ? "complex<f32>" : "f32");
  snprintf(vt, sizeof vt, "tensor<%dx%dxf32>", b, n);
  snprintf(it, sizeof it, "tensor<%dxi32>", b);
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: %s) -> (%s, %s, %s) {\n"
           "  %%0:3 = stablehlo.custom_call @%s(%%arg0) {mhlo.backend_config = %s, operand_layouts = [dense<[1, 2, "
           "0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = "
           "[0], operand_index = 0, operand_tuple_indices = []>], result_layouts = [dense<[1, 2, 0]> : "
           "tensor<3xindex>, dense<[1, 0]> : tensor<2xindex>, dense<0> : tensor<1xindex>]} : (%s) -> (%s, %s, %s)\n"
           "  return %%0#0, %%0#1, %%0#2 : %s, %s, %s\n}\n",
           at_, at_, vt, it, target, config, at_, at_, vt, it, at_, vt, it);
  for (int p = 0; p < b; p++) {
    float *ap = a + (size_t)p * n * n * w;
    for (int i = 0; i < n; i++)
      for (int j = 0; j <= i; j++) {
        double complex x = test_uniform(&seed) + (cplx && i != j ? I * test_uniform(&seed) : 0);
        h[(size_t)i * n + j] = x, h[(size_t)j * n + i] = conj(x);
      }
    if (repeated) { /* q: Gram-Schmidt of the random h's columns; h = q diag q^H */
      for (int c = 0; c < n; c++) {
        for (int i = 0; i < n; i++) q[(size_t)i * n + c] = h[(size_t)i * n + c] + (i == c ? 3 : 0);
        for (int d = 0; d < c; d++) {
          double complex s = 0;
          for (int i = 0; i < n; i++) s += conj(q[(size_t)i * n + d]) * q[(size_t)i * n + c];
          for (int i = 0; i < n; i++) q[(size_t)i * n + c] -= s * q[(size_t)i * n + d];
        }
        double norm = 0;
        for (int i = 0; i < n; i++) norm += creal(q[(size_t)i * n + c] * conj(q[(size_t)i * n + c]));
        for (int i = 0; i < n; i++) q[(size_t)i * n + c] /= sqrt(norm);
      }
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
          double complex s = 0;
          for (int c = 0; c < n; c++) s += q[(size_t)i * n + c] * (1 + c / 3) * conj(q[(size_t)j * n + c]);
          h[(size_t)i * n + j] = s;
        }
      for (int i = 0; i < n; i++) h[(size_t)i * n + i] = creal(h[(size_t)i * n + i]);
    }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) put(ap, (size_t)i * n + j, cplx, (lower ? j <= i : j >= i) ? h[(size_t)i * n + j] : 1e6);
  }
  vkhlo_tensor_type_t ty = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, n, n}};
  const void *in[1] = {a};
  void *out[3] = {v, val, info};
  size_t bytes[3] = {sizeof *v * count * w, sizeof *val * (size_t)b * n, sizeof *info * (size_t)b};
  run(ctx, text, 1, &ty, in, 3, out, bytes);
  for (int p = 0; p < b; p++) {
    const float *ap = a + (size_t)p * n * n * w, *vp = v + (size_t)p * n * n * w, *wp = val + (size_t)p * n;
    double norm = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double complex x = (lower ? j <= i : j >= i) ? at(ap, (size_t)i * n + j, cplx) : conj(at(ap, (size_t)j * n + i, cplx));
        h[(size_t)i * n + j] = i == j ? creal(x) : x;
        norm += creal(x * conj(x));
      }
    norm = sqrt(norm);
    if (info[p] != 0) fail_msg("%s batch %d: info %d", text, p, info[p]);
    for (int c = 0; c < n; c++) {
      if (c > 0 && !(wp[c - 1] <= wp[c])) fail_msg("%s batch %d: values %d, %d not ascending", text, p, c - 1, c);
      for (int i = 0; i < n; i++) { /* (a v - w v)[i] */
        double complex s = -wp[c] * at(vp, (size_t)i * n + c, cplx);
        for (int j = 0; j < n; j++) s += h[(size_t)i * n + j] * at(vp, (size_t)j * n + c, cplx);
        if (!(cabs(s) <= 2e-6 * n * norm))
          fail_msg("%s batch %d: |(a v - w v)[%d]| of value %d = %g", text, p, i, c, cabs(s));
      }
      for (int d = 0; d <= c; d++) {
        double complex s = 0;
        for (int i = 0; i < n; i++) s += conj(at(vp, (size_t)i * n + d, cplx)) * at(vp, (size_t)i * n + c, cplx);
        if (!(cabs(s - (c == d)) <= 2e-6 * n)) fail_msg("%s batch %d: (v^H v)[%d][%d] = %g", text, p, d, c, cabs(s));
      }
    }
    if (repeated)
      for (int c = 0; c < n; c++)
        if (fabs(wp[c] - (1 + c / 3)) > 1e-5 * n) fail_msg("%s: value %d is %g, want %d", text, c, wp[c], 1 + c / 3);
  }
  free(a), free(v), free(val), free(info), free(h), free(q);
}

/* [[2, 1], [1, 2]]: values 1 and 3, vectors (1, -1) / sqrt 2 and (1, 1) / sqrt 2 up to sign */
static void eigh_known(void **state) {
  static const float a[4] = {2, 1e6f, 1, 2};
  float v[4], w[2];
  int32_t info;
  const char *text =
      "func.func public @main(%arg0: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>) {\n"
      "  %0:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%arg0) {mhlo.backend_config = {mode = 86 : ui8, uplo = 76 : "
      "ui8}} : (tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<2x2xf32>, tensor<2xf32>, tensor<i32>\n}\n";
  vkhlo_tensor_type_t t = {.element_type = VKHLO_F32, .rank = 2, .dimensions = {2, 2}};
  const void *in[1] = {a};
  void *out[3] = {v, w, &info};
  size_t bytes[3] = {sizeof v, sizeof w, sizeof info};
  run(*state, text, 1, &t, in, 3, out, bytes);
  float r = sqrtf(0.5f);
  if (fabsf(w[0] - 1) > 1e-6f || fabsf(w[1] - 3) > 1e-6f || info != 0)
    fail_msg("values %g, %g, info %d; want 1, 3, 0", w[0], w[1], info);
  /* columns: v[0][c], v[1][c] */
  if (fabsf(fabsf(v[0]) - r) > 1e-6f || fabsf(v[2] + v[0]) > 1e-6f || fabsf(fabsf(v[1]) - r) > 1e-6f ||
      fabsf(v[3] - v[1]) > 1e-6f)
    fail_msg("vectors [[%g, %g], [%g, %g]]", v[0], v[1], v[2], v[3]);
}

/* odd and even sizes (an odd n pairs one index per round with a zero
 * row), both triangles, complex through cuSOLVER, repeated eigenvalues */
static void eigh_sizes(void **state) {
  const char *lapack_l = "{mode = 86 : ui8, uplo = 76 : ui8}", *lapack_u = "{mode = 86 : ui8, uplo = 85 : ui8}";
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_l, 2, 33, false, true, false);
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_u, 1, 64, false, false, false);
  eigh_case(*state, "cusolver_syevd_ffi", "{algorithm = 0 : ui8, lower = false}", 2, 20, true, false, false);
  eigh_case(*state, "lapack_cheevd_ffi", lapack_l, 1, 7, true, true, false);
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_l, 1, 30, false, true, true);
}

/* past 64 x 64 the rounds run as a while loop of eigh_round dispatches
 * (codegen/expand.c): odd and even sizes, a batch, both triangles,
 * complex, repeated eigenvalues */
static void eigh_rounds(void **state) {
  const char *lapack_l = "{mode = 86 : ui8, uplo = 76 : ui8}", *lapack_u = "{mode = 86 : ui8, uplo = 85 : ui8}";
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_l, 2, 65, false, true, false);
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_u, 1, 100, false, false, false);
  eigh_case(*state, "lapack_cheevd_ffi", lapack_l, 1, 71, true, true, false);
  eigh_case(*state, "lapack_ssyevd_ffi", lapack_l, 1, 90, false, true, true);
}

/* ----------------------------------------------------------------- svd */

/* What the second and third results of an SVD call hold */
typedef enum svd_form_e {
  SVD_U_VT,     /* LAPACK gesdd / gesvd, cuSOLVER gesvd: U, V^H */
  SVD_VT_U,     /* cuSOLVER gesvd with transposed = true: V^H, U */
  SVD_U_V,      /* gesvdj: U, V */
} svd_form_t;

typedef enum svd_matrix_e { SVD_RANDOM, SVD_RANK_HALF, SVD_ZERO } svd_matrix_t;

/* An SVD call on b m x n matrices: checks what an SVD guarantees: s
 * descending and >= 0, U^H U = I, V^H V = I (all their columns, the full
 * ones too), U diag(s) V^H = a within the rounding bound, info 0;
 * SVD_RANK_HALF (a product of m x r and r x n, r = min(m, n) / 2): the
 * values past r vanish; SVD_ZERO: all do. */
static void svd_case(vkhlo_context_t *ctx, const char *target, const char *config, svd_form_t form, int b, int m,
                     int n, bool cplx, bool full, svd_matrix_t kind) {
  int w = cplx ? 2 : 1, k = m < n ? m : n, uc = full ? m : k, vr = full ? n : k;
  const char *et = cplx ? "complex<f32>" : "f32";
  char at_[64], st[64], ut[64], vt[64], it[64], text[2048];
  tensor(at_, sizeof at_, b, m, n, et);
  snprintf(st, sizeof st, "tensor<%dx%dxf32>", b, k);
  tensor(ut, sizeof ut, b, m, uc, et);
  tensor(vt, sizeof vt, b, form == SVD_U_V ? n : vr, form == SVD_U_V ? vr : n, et);
  snprintf(it, sizeof it, "tensor<%dxi32>", b);
  const char *r2 = form == SVD_VT_U ? vt : ut, *r3 = form == SVD_VT_U ? ut : vt;
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: %s) -> (%s, %s, %s, %s) {\n"
           "  %%0:5 = stablehlo.custom_call @%s(%%arg0) {mhlo.backend_config = %s, operand_layouts = [dense<[1, 2, "
           "0]> : tensor<3xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = "
           "[0], operand_index = 0, operand_tuple_indices = []>]} : (%s) -> (%s, %s, %s, %s, %s)\n"
           "  return %%0#1, %%0#2, %%0#3, %%0#4 : %s, %s, %s, %s\n}\n",
           at_, st, r2, r3, it, target, config, at_, at_, st, r2, r3, it, st, r2, r3, it);
  size_t count = (size_t)b * m * n, ucount = (size_t)b * m * uc, vcount = (size_t)b * n * vr;
  float *a = malloc(sizeof *a * count * w), *s = malloc(sizeof *s * (size_t)b * k), *u = malloc(sizeof *u * ucount * w),
        *v = malloc(sizeof *v * vcount * w);
  double complex *f = malloc(sizeof *f * (size_t)(m + n) * k);
  int32_t *info = malloc(sizeof *info * (size_t)b);
  assert_true(a && s && u && v && f && info);
  uint32_t seed = 11u + (unsigned)(m * n);
  int r = k / 2 ? k / 2 : 1;
  for (int p = 0; p < b; p++) {
    float *ap = a + (size_t)p * m * n * w;
    for (size_t i = 0; i < (size_t)(m + n) * r; i++) f[i] = test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0);
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double complex x = 0;
        if (kind == SVD_RANDOM) x = test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0);
        if (kind == SVD_RANK_HALF)
          for (int l = 0; l < r; l++) x += f[(size_t)i * r + l] * f[(size_t)(m + j) * r + l];
        put(ap, (size_t)i * n + j, cplx, x);
      }
  }
  vkhlo_tensor_type_t ty = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, m, n}};
  const void *in[1] = {a};
  void *out[4] = {s, form == SVD_VT_U ? v : u, form == SVD_VT_U ? u : v, info};
  size_t bytes[4] = {sizeof *s * (size_t)b * k, sizeof *u * (form == SVD_VT_U ? vcount : ucount) * w,
                     sizeof *u * (form == SVD_VT_U ? ucount : vcount) * w, sizeof *info * (size_t)b};
  run(ctx, text, 1, &ty, in, 4, out, bytes);
  double tol = 3e-6 * (m > n ? m : n);
  for (int p = 0; p < b; p++) {
    const float *ap = a + (size_t)p * m * n * w, *sp = s + (size_t)p * k, *up = u + (size_t)p * m * uc * w,
                *vp = v + (size_t)p * n * vr * w;
    /* V[i][c]: from V^H [vr, n] or V [n, vr] */
#define SVD_V(i, c) (form == SVD_U_V ? at(vp, (size_t)(i) * vr + (c), cplx) : conj(at(vp, (size_t)(c) * n + (i), cplx)))
    double norm = 0;
    for (size_t i = 0; i < (size_t)m * n; i++) norm += creal(at(ap, i, cplx) * conj(at(ap, i, cplx)));
    norm = sqrt(norm);
    if (info[p] != 0) fail_msg("%s batch %d: info %d", text, p, info[p]);
    for (int c = 0; c < k; c++) {
      if (!(sp[c] >= 0) || (c > 0 && !(sp[c - 1] >= sp[c])))
        fail_msg("%s batch %d: values %d (%g) not descending, >= 0", text, p, c, sp[c]);
      if ((kind == SVD_ZERO || (kind == SVD_RANK_HALF && c >= r)) && !(sp[c] <= tol * (norm + 1)))
        fail_msg("%s batch %d: value %d is %g, want 0", text, p, c, sp[c]);
    }
    for (int c = 0; c < uc; c++)
      for (int d = 0; d <= c; d++) {
        double complex x = 0;
        for (int i = 0; i < m; i++) x += conj(at(up, (size_t)i * uc + d, cplx)) * at(up, (size_t)i * uc + c, cplx);
        if (!(cabs(x - (c == d)) <= tol)) fail_msg("%s batch %d: (U^H U)[%d][%d] = %g", text, p, d, c, cabs(x));
      }
    for (int c = 0; c < vr; c++)
      for (int d = 0; d <= c; d++) {
        double complex x = 0;
        for (int i = 0; i < n; i++) x += conj(SVD_V(i, d)) * SVD_V(i, c);
        if (!(cabs(x - (c == d)) <= tol)) fail_msg("%s batch %d: (V^H V)[%d][%d] = %g", text, p, d, c, cabs(x));
      }
    for (int i = 0; i < m; i++)
      for (int j = 0; j < n; j++) {
        double complex x = -at(ap, (size_t)i * n + j, cplx);
        for (int c = 0; c < k; c++) x += at(up, (size_t)i * uc + c, cplx) * sp[c] * conj(SVD_V(j, c));
        if (!(cabs(x) <= tol * (norm + 1))) fail_msg("%s batch %d: |(U s V^H - a)[%d][%d]| = %g", text, p, i, j, cabs(x));
      }
#undef SVD_V
  }
  free(a), free(s), free(u), free(v), free(f), free(info);
}

/* [[3, 0], [4, 5]]: a^T a = [[25, 20], [20, 25]], so s = (3 sqrt 5,
 * sqrt 5), V's columns (1, 1) / sqrt 2 and (1, -1) / sqrt 2, U's (1, 3) /
 * sqrt 10 and (3, -1) / sqrt 10, each pair up to one sign. */
static void svd_known(void **state) {
  static const float a[4] = {3, 0, 4, 5};
  float s[2], u[4], vt[4];
  int32_t info;
  const char *text =
      "func.func public @main(%arg0: tensor<2x2xf32>) -> (tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, "
      "tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%arg0) {mhlo.backend_config = {mode = 65 : ui8}} : "
      "(tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>)\n"
      "  return %0#1, %0#2, %0#3, %0#4 : tensor<2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<i32>\n}\n";
  vkhlo_tensor_type_t t = {.element_type = VKHLO_F32, .rank = 2, .dimensions = {2, 2}};
  const void *in[1] = {a};
  void *out[4] = {s, u, vt, &info};
  size_t bytes[4] = {sizeof s, sizeof u, sizeof vt, sizeof info};
  run(*state, text, 1, &t, in, 4, out, bytes);
  if (fabsf(s[0] - 3 * sqrtf(5)) > 1e-5f || fabsf(s[1] - sqrtf(5)) > 1e-5f || info != 0)
    fail_msg("values %g, %g, info %d; want %g, %g, 0", s[0], s[1], info, 3 * sqrtf(5), sqrtf(5));
  float r2 = sqrtf(0.5f), r10 = sqrtf(0.1f);
  /* column c of U times row c of V^H: the signs cancel */
  float want_u[2][2] = {{r10, 3 * r10}, {3 * r10, -r10}}, want_v[2][2] = {{r2, r2}, {r2, -r2}};
  for (int c = 0; c < 2; c++) {
    float sign = u[c] * want_u[c][0] < 0 ? -1 : 1;
    for (int i = 0; i < 2; i++)
      if (fabsf(u[i * 2 + c] - sign * want_u[c][i]) > 1e-6f || fabsf(vt[c * 2 + i] - sign * want_v[c][i]) > 1e-6f)
        fail_msg("pair %d: U column (%g, %g), V^H row (%g, %g)", c, u[c], u[2 + c], vt[2 * c], vt[2 * c + 1]);
  }
}

/* square odd and even, tall and wide (QR first; the adjoint), full and
 * reduced, complex, rank deficient and zero (U completed), cuSOLVER's
 * transposed gesvd and gesvdj's V */
static void svd_sizes(void **state) {
  const char *full = "{mode = 65 : ui8}", *reduced = "{mode = 83 : ui8}";
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 2, 33, 33, false, true, SVD_RANDOM);
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 64, 64, false, true, SVD_RANDOM);
  svd_case(*state, "lapack_sgesvd_ffi", full, SVD_U_VT, 1, 90, 20, false, true, SVD_RANDOM);
  svd_case(*state, "lapack_sgesdd_ffi", reduced, SVD_U_VT, 2, 90, 20, false, false, SVD_RANDOM);
  svd_case(*state, "lapack_cgesdd_ffi", full, SVD_U_VT, 1, 12, 40, true, true, SVD_RANDOM);
  svd_case(*state, "lapack_cgesdd_ffi", reduced, SVD_U_VT, 2, 12, 40, true, false, SVD_RANDOM);
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 16, 16, false, true, SVD_RANK_HALF);
  svd_case(*state, "lapack_cgesdd_ffi", full, SVD_U_VT, 1, 30, 9, true, true, SVD_RANK_HALF);
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 7, 5, false, true, SVD_ZERO);
  svd_case(*state, "cusolver_gesvd_ffi", "{compute_uv = true, full_matrices = true, transposed = true}", SVD_VT_U, 2,
           6, 15, false, true, SVD_RANDOM);
  svd_case(*state, "cusolver_gesvdj_ffi", "{compute_uv = true, full_matrices = false}", SVD_U_V, 2, 25, 17, true,
           false, SVD_RANDOM);
}

/* past 64 x 64 the rounds run as a while loop of svd_round dispatches
 * (codegen/expand.c): square odd and even, tall (QR first) and wide,
 * complex, rank deficient and zero (U completed from a QR) */
static void svd_rounds(void **state) {
  const char *full = "{mode = 65 : ui8}", *reduced = "{mode = 83 : ui8}";
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 65, 65, false, true, SVD_RANDOM);
  svd_case(*state, "lapack_sgesdd_ffi", reduced, SVD_U_VT, 1, 100, 70, false, false, SVD_RANDOM);
  svd_case(*state, "lapack_cgesdd_ffi", full, SVD_U_VT, 1, 66, 80, true, true, SVD_RANDOM);
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 75, 75, false, true, SVD_RANK_HALF);
  svd_case(*state, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 67, 67, false, true, SVD_ZERO);
}

/* svd_round's two forms (codegen/emit_linalg.c): the cases above take a
 * CPU device's (an invocation per column pair); a GPU's (a workgroup per
 * pair, its Gram sums through shared memory) is forced here with
 * VKHLO_REDUCE=subgroup: real and complex, a batch of two, rank deficient */
static void svd_rounds_workgroups(void **state) {
  (void)state;
  vkhlo_context_t *ctx = test_context_with_env("VKHLO_REDUCE", "subgroup");
  if (!ctx) return;
  const char *full = "{mode = 65 : ui8}";
  svd_case(ctx, "lapack_sgesdd_ffi", full, SVD_U_VT, 2, 65, 65, false, true, SVD_RANDOM);
  svd_case(ctx, "lapack_cgesdd_ffi", full, SVD_U_VT, 1, 66, 80, true, true, SVD_RANDOM);
  svd_case(ctx, "lapack_sgesdd_ffi", full, SVD_U_VT, 1, 75, 75, false, true, SVD_RANK_HALF);
  int messages = vkhlo_context_validation_message_count(ctx);
  vkhlo_context_destroy(ctx);
  assert_int_equal(messages, 0);
}

/* ------------------------------------------------------------------ gtsv */

/* gtsv of b systems of m unknowns and n right-hand sides: |A x - b| within
 * the rounding bound (random diagonals: rows interchanged at many steps),
 * info 0; |singular|: a zero column at 2 (dl[2], d[1] and du[0]... zero),
 * info 2.  cuSPARSE's gtsv2 returns x alone. */
static void gtsv_case(vkhlo_context_t *ctx, const char *target, int b, int m, int n, bool cplx, bool singular) {
  int w = cplx ? 2 : 1;
  bool lapack = strncmp(target, "lapack_", 7) == 0;
  const char *et = cplx ? "complex<f32>" : "f32";
  char dt[64], bt[64], it[64], text[2048];
  snprintf(dt, sizeof dt, "tensor<%dx%dx%s>", b, m, et);
  tensor(bt, sizeof bt, b, m, n, et);
  snprintf(it, sizeof it, "tensor<%dxi32>", b);
  if (lapack)
    snprintf(text, sizeof text,
             "func.func public @main(%%a: %s, %%b: %s, %%c: %s, %%d: %s) -> (%s, %s) {\n"
             "  %%0:5 = stablehlo.custom_call @%s(%%a, %%b, %%c, %%d) {mhlo.backend_config = {}} : (%s, %s, %s, %s) "
             "-> (%s, %s, %s, %s, %s)\n"
             "  return %%0#3, %%0#4 : %s, %s\n}\n",
             dt, dt, dt, bt, bt, it, target, dt, dt, dt, bt, dt, dt, dt, bt, it, bt, it);
  else
    snprintf(text, sizeof text,
             "func.func public @main(%%a: %s, %%b: %s, %%c: %s, %%d: %s) -> %s {\n"
             "  %%0 = stablehlo.custom_call @%s(%%a, %%b, %%c, %%d) {mhlo.backend_config = {}} : (%s, %s, %s, %s) -> %s\n"
             "  return %%0 : %s\n}\n",
             dt, dt, dt, bt, bt, target, dt, dt, dt, bt, bt, bt);
  size_t dn = (size_t)b * m, bn = dn * n;
  float *diag[3], *rhs = malloc(sizeof *rhs * bn * w), *x = malloc(sizeof *x * bn * w);
  int32_t *info = malloc(sizeof *info * (size_t)b);
  uint32_t seed = 5u + (unsigned)m;
  for (int k = 0; k < 3; k++) {
    diag[k] = malloc(sizeof *diag[k] * dn * w);
    assert_true(diag[k]);
    for (size_t i = 0; i < dn; i++) put(diag[k], i, cplx, test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  }
  for (size_t i = 0; i < bn; i++) put(rhs, i, cplx, test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  if (singular) /* column 1 of every system zero: du[0], d[1], dl[2] */
    for (int p = 0; p < b; p++) {
      put(diag[2], (size_t)p * m + 0, cplx, 0);
      put(diag[1], (size_t)p * m + 1, cplx, 0);
      put(diag[0], (size_t)p * m + 2, cplx, 0);
    }
  vkhlo_tensor_type_t tys[4];
  for (int k = 0; k < 4; k++)
    tys[k] = (vkhlo_tensor_type_t){.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = k < 3 ? 2 : 3,
                                   .dimensions = {b, m, n}};
  const void *in[4] = {diag[0], diag[1], diag[2], rhs};
  void *out[2] = {x, info};
  size_t bytes[2] = {sizeof *x * bn * w, sizeof *info * (size_t)b};
  run(ctx, text, 4, tys, in, lapack ? 2 : 1, out, bytes);
  for (int p = 0; p < b; p++) {
    if (lapack && info[p] != (singular ? 2 : 0))
      fail_msg("%s batch %d: info %d, want %d", text, p, info[p], singular ? 2 : 0);
    if (singular) continue;
    const float *dl = diag[0] + (size_t)p * m * w, *d = diag[1] + (size_t)p * m * w, *du = diag[2] + (size_t)p * m * w;
    const float *xp = x + (size_t)p * m * n * w, *bp = rhs + (size_t)p * m * n * w;
    for (int i = 0; i < m; i++)
      for (int c = 0; c < n; c++) {
        double complex r = at(d, (size_t)i, cplx) * at(xp, (size_t)i * n + c, cplx) - at(bp, (size_t)i * n + c, cplx);
        double scale = cabs(at(d, (size_t)i, cplx) * at(xp, (size_t)i * n + c, cplx)) + 1;
        if (i > 0) {
          r += at(dl, (size_t)i, cplx) * at(xp, (size_t)(i - 1) * n + c, cplx);
          scale += cabs(at(dl, (size_t)i, cplx) * at(xp, (size_t)(i - 1) * n + c, cplx));
        }
        if (i + 1 < m) {
          r += at(du, (size_t)i, cplx) * at(xp, (size_t)(i + 1) * n + c, cplx);
          scale += cabs(at(du, (size_t)i, cplx) * at(xp, (size_t)(i + 1) * n + c, cplx));
        }
        if (!(cabs(r) <= 1e-5 * m * scale)) fail_msg("%s batch %d: |(A x - b)[%d][%d]| = %g", text, p, i, c, cabs(r));
      }
  }
  for (int k = 0; k < 3; k++) free(diag[k]);
  free(rhs), free(x), free(info);
}

/* [[2, 1, 0], [1, 2, 1], [0, 1, 2]] x = (1, 2, 3): x = (0.5, 0, 1.5) */
static void gtsv_known(void **state) {
  static const float dl[3] = {0, 1, 1}, d[3] = {2, 2, 2}, du[3] = {1, 1, 0}, b[3] = {1, 2, 3};
  float x[3];
  int32_t info;
  const char *text =
      "func.func public @main(%a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>, %d: tensor<3x1xf32>) -> "
      "(tensor<3x1xf32>, tensor<i32>) {\n"
      "  %0:5 = stablehlo.custom_call @lapack_sgtsv_ffi(%a, %b, %c, %d) {mhlo.backend_config = {}} : "
      "(tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3x1xf32>) -> (tensor<3xf32>, tensor<3xf32>, "
      "tensor<3xf32>, tensor<3x1xf32>, tensor<i32>)\n"
      "  return %0#3, %0#4 : tensor<3x1xf32>, tensor<i32>\n}\n";
  vkhlo_tensor_type_t v = {.element_type = VKHLO_F32, .rank = 1, .dimensions = {3}},
                      m = {.element_type = VKHLO_F32, .rank = 2, .dimensions = {3, 1}};
  vkhlo_tensor_type_t tys[4] = {v, v, v, m};
  const void *in[4] = {dl, d, du, b};
  void *out[2] = {x, &info};
  size_t bytes[2] = {sizeof x, sizeof info};
  run(*state, text, 4, tys, in, 2, out, bytes);
  if (fabsf(x[0] - 0.5f) > 1e-6f || fabsf(x[1]) > 1e-6f || fabsf(x[2] - 1.5f) > 1e-6f || info != 0)
    fail_msg("x = (%g, %g, %g), info %d; want (0.5, 0, 1.5), 0", x[0], x[1], x[2], info);
}

static void gtsv_sizes(void **state) {
  gtsv_case(*state, "lapack_sgtsv_ffi", 3, 50, 5, false, false);
  gtsv_case(*state, "lapack_sgtsv_ffi", 1, 300, 70, false, false);
  gtsv_case(*state, "lapack_cgtsv_ffi", 2, 9, 3, true, false);
  gtsv_case(*state, "lapack_sgtsv_ffi", 2, 6, 2, false, true);
  gtsv_case(*state, "cusparse_gtsv2_ffi", 2, 40, 1, false, false);
}

/* -------------------------------------------------------------- errors */

static void wrong_results_refused(void **state) {
  test_expect_compile_error(*state,
                            "func.func @main(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n"
                            "  %0:2 = stablehlo.custom_call @lapack_sgetrf_ffi(%a) {mhlo.backend_config = {}} : "
                            "(tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4xi32>)\n"
                            "  return %0#0 : tensor<4x4xf32>\n}\n",
                            "getrf.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "getrf.mlir:2:3", "@lapack_sgetrf_ffi",
                            "pivots [batch..., min(m, n)]", NULL);
}

static void solver_wrong_types_refused(void **state) {
  /* LAPACK has no f16 geqrf; orgqr needs k <= n <= m */
  test_expect_compile_error(*state,
                            "func.func @main(%a: tensor<4x4xf16>) -> tensor<4x4xf16> {\n"
                            "  %0:2 = stablehlo.custom_call @cusolver_geqrf_ffi(%a) {mhlo.backend_config = {}} : "
                            "(tensor<4x4xf16>) -> (tensor<4x4xf16>, tensor<4xf16>)\n"
                            "  return %0#0 : tensor<4x4xf16>\n}\n",
                            "qr.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "qr.mlir:2:3", "@cusolver_geqrf_ffi",
                            "f32, f64, complex64 or complex128", NULL);
  test_expect_compile_error(*state,
                            "func.func @main(%a: tensor<3x5xf32>, %t: tensor<3xf32>) -> tensor<3x5xf32> {\n"
                            "  %0 = stablehlo.custom_call @lapack_sorgqr_ffi(%a, %t) {mhlo.backend_config = {}} : "
                            "(tensor<3x5xf32>, tensor<3xf32>) -> tensor<3x5xf32>\n"
                            "  return %0 : tensor<3x5xf32>\n}\n",
                            "orgqr.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "orgqr.mlir:2:3", "@lapack_sorgqr_ffi",
                            "k <= n <= m", NULL);
  /* syevd needs a square matrix and real eigenvalues */
  test_expect_compile_error(*state,
                            "func.func @main(%a: tensor<4x4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {\n"
                            "  %0:3 = stablehlo.custom_call @lapack_cheevd_ffi(%a) {mhlo.backend_config = {}} : "
                            "(tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xcomplex<f32>>, "
                            "tensor<i32>)\n"
                            "  return %0#1 : tensor<4xcomplex<f32>>\n}\n",
                            "eigh.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "eigh.mlir:2:3", "@lapack_cheevd_ffi",
                            "values [batch..., n] of its real type", NULL);
  /* gesdd's U is m x m or m x min(m, n) */
  test_expect_compile_error(*state,
                            "func.func @main(%a: tensor<5x3xf32>) -> tensor<3xf32> {\n"
                            "  %0:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%a) {mhlo.backend_config = {mode = 65 : "
                            "ui8}} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3xf32>, tensor<5x4xf32>, "
                            "tensor<3x3xf32>, tensor<i32>)\n"
                            "  return %0#1 : tensor<3xf32>\n}\n",
                            "svd.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "svd.mlir:2:3", "@lapack_sgesdd_ffi",
                            "U [batch..., m, m or min(m, n)]", NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(getrf_known),          cmocka_unit_test(getrf_blocked),
      cmocka_unit_test(getrf_rectangular),    cmocka_unit_test(getrf_complex),
      cmocka_unit_test(potrf_lower),          cmocka_unit_test(potrf_upper_complex),
      cmocka_unit_test(trsm_right_upper_transposed), cmocka_unit_test(trsm_left_lower_adjoint),
      cmocka_unit_test(pivots_to_permutation), cmocka_unit_test(qr_known),
      cmocka_unit_test(qr_blocked),           cmocka_unit_test(qr_wide_and_small),
      cmocka_unit_test(qr_complex),           cmocka_unit_test(eigh_known),
      cmocka_unit_test(eigh_sizes),           cmocka_unit_test(eigh_rounds),
      cmocka_unit_test(svd_known),
      cmocka_unit_test(svd_sizes),            cmocka_unit_test(svd_rounds),
      cmocka_unit_test(svd_rounds_workgroups),            cmocka_unit_test(gtsv_known),
      cmocka_unit_test(gtsv_sizes),           cmocka_unit_test(wrong_results_refused),
      cmocka_unit_test(solver_wrong_types_refused),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
