/*
 * cholesky and triangular_solve past one block (codegen/expand.c,
 * "blocked linear algebra": block kernels, triangular solves and GEMMs),
 * end to end with the validation layer on, against references computed
 * here in double precision:
 *
 *   cholesky          a batch of two 150 x 150 f32 matrices, lower and
 *                     upper; a batch of two 130 x 130 complex64 ones, upper
 *                     (a^H of a block, conjugated products);
 *   triangular_solve  k = 150 and 200 with every side, triangle and
 *                     transpose_a (ADJOINT on complex64), with a unit
 *                     diagonal too, and 37 right-hand sides.
 *
 * The triangle the op does not read (and a unit diagonal) holds NaNs, so
 * a block that read it would poison the result.  The matrices are well
 * conditioned (a Gram matrix plus the identity; a triangle of small values
 * with 2 on the diagonal), so f32 results agree with the double-precision
 * ones to a few ULPs of the largest value; 1e-4 relative leaves room for
 * the sums' order and nothing for a wrong block.  On lavapipe each of these
 * sizes was refused before (an unblocked kernel would run past its loop
 * limiter: ~n^3 / 6 iterations for cholesky, ~k^2 / 2 per right-hand side).
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


/* Runs |text| (one result) on |n| operands of element type |t| and shapes
 * |types|, values |in| (interleaved re, im for complex64), reads |outn|
 * values into |out|. */
static void run(vkhlo_context_t *ctx, const char *text, int n, const vkhlo_tensor_type_t *types, float *const *in,
                float *out, size_t outn) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_buffer_t *args[2] = {NULL, NULL}, *res = NULL;
  for (int i = 0; i < n; i++) expect_ok(vkhlo_buffer_create(ctx, &types[i], in[i], &args[i]));
  expect_ok(vkhlo_executable_execute(exe, n, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof(float) * outn));
  for (int i = 0; i < n; i++) vkhlo_buffer_destroy(args[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
}

static void to_floats(const double complex *v, size_t n, bool cplx, float *out) {
  for (size_t i = 0; i < n; i++) {
    if (cplx) {
      out[2 * i] = (float)creal(v[i]);
      out[2 * i + 1] = (float)cimag(v[i]);
    } else {
      out[i] = (float)creal(v[i]);
    }
  }
}

/* |got| (floats as to_floats lays them out) against |want|, relative to
 * want's largest magnitude; NaN fails. */
static void assert_close(const float *got, const double complex *want, size_t n, bool cplx, const char *what) {
  double top = 0;
  for (size_t i = 0; i < n; i++) top = fmax(top, cabs(want[i]));
  for (size_t i = 0; i < n; i++) {
    double complex g = cplx ? got[2 * i] + I * got[2 * i + 1] : got[i];
    if (!(cabs(g - want[i]) <= 1e-4 * top))
      fail_msg("%s: element %zu is %g%+gi, want %g%+gi", what, i, creal(g), cimag(g), creal(want[i]),
               cimag(want[i]));
  }
}

/* ------------------------------------------------------------ cholesky */


static void cholesky_case(vkhlo_context_t *ctx, int b, int n, bool lower, bool cplx) {
  const char *et = cplx ? "complex<f32>" : "f32";
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%a: tensor<%dx%dx%dx%s>) -> tensor<%dx%dx%dx%s> {\n"
           "  %%r = stablehlo.cholesky %%a, lower = %s : tensor<%dx%dx%dx%s>\n"
           "  return %%r : tensor<%dx%dx%dx%s>\n}\n",
           b, n, n, et, b, n, n, et, lower ? "true" : "false", b, n, n, et, b, n, n, et);
  size_t count = (size_t)b * n * n, floats = count * (cplx ? 2 : 1);
  double complex *a = malloc(sizeof *a * count), *l = malloc(sizeof *l * count), *want = malloc(sizeof *l * count);
  float *in = malloc(sizeof *in * floats), *got = malloc(sizeof *got * floats);
  assert_true(a && l && want && in && got);
  test_hpd(b, n, cplx, 7u + (unsigned)n, a, l);
  for (int q = 0; q < b; q++)
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        size_t at = ((size_t)q * n + i) * n + j, tr = ((size_t)q * n + j) * n + i;
        /* lower: L; upper: U = L^H; zeros in the other triangle */
        want[at] = lower ? l[at] : conj(l[tr]);
        if (lower ? j > i : j < i) a[at] = NAN; /* not read */
      }
  to_floats(a, count, cplx, in);
  vkhlo_tensor_type_t t = {.element_type = cplx ? VKHLO_C64 : VKHLO_F32, .rank = 3, .dimensions = {b, n, n}};
  run(ctx, text, 1, &t, &in, got, floats);
  assert_close(got, want, count, cplx, text);
  free(a), free(l), free(want), free(in), free(got);
}

static void cholesky_lower(void **state) { cholesky_case(*state, 2, 150, true, false); }
static void cholesky_upper(void **state) { cholesky_case(*state, 2, 150, false, false); }
static void cholesky_complex_upper(void **state) { cholesky_case(*state, 2, 130, false, true); }

/* ---------------------------------------------------- triangular_solve */

/* Solves op(a) x = b (left) or x op(a) = b in double for a [k, k] (its
 * |lower| triangle, unit diagonal when |unit|) and b [rows, cols]:
 * x = b column by column (left) or row by row, by substitution on the
 * explicit system matrix S (op(a), or op(a)^T for the right side). */
static void reference_solve(const double complex *a, int k, bool left, bool lower, int ta, bool unit,
                            const double complex *b, int rows, int cols, double complex *x) {
  double complex *s = malloc(sizeof *s * (size_t)k * k);
  assert_non_null(s);
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) {
      bool in = lower ? j <= i : j >= i;
      double complex v = i == j && unit ? 1 : in ? a[i * k + j] : 0; /* the triangle read */
      /* op(a)[i][j] */
      int oi = ta ? j : i, oj = ta ? i : j;
      double complex o = ta == 2 ? conj(v) : v;
      if (left) s[oi * k + oj] = o;
      else s[oj * k + oi] = o; /* op(a)^T */
    }
  bool s_lower = true; /* S is triangular: which way, after the transposes? */
  for (int i = 0; i < k; i++)
    for (int j = i + 1; j < k; j++) s_lower = s_lower && s[i * k + j] == 0;
  int problems = left ? cols : rows;
  for (int p = 0; p < problems; p++) {
    /* element i of problem p in b and x */
#define AT(i) (left ? (size_t)(i) * cols + p : (size_t)p * cols + (i))
    for (int i = 0; i < k; i++) x[AT(i)] = b[AT(i)];
    for (int step = 0; step < k; step++) {
      int i = s_lower ? step : k - 1 - step;
      double complex v = x[AT(i)];
      for (int j = 0; j < k; j++)
        if (j != i && (s_lower ? j < i : j > i)) v -= s[i * k + j] * x[AT(j)];
      x[AT(i)] = v / s[i * k + i];
    }
#undef AT
  }
  free(s);
}

static void solve_case(vkhlo_context_t *ctx, int k, bool left, bool lower, int ta, bool unit, bool cplx) {
  enum { B = 2, NR = 37 };
  static const char *const names[3] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  const char *et = cplx ? "complex<f32>" : "f32";
  int rows = left ? k : NR, cols = left ? NR : k;
  char at[64], bt[64], text[1024];
  snprintf(at, sizeof at, "tensor<%dx%dx%dx%s>", B, k, k, et);
  snprintf(bt, sizeof bt, "tensor<%dx%dx%dx%s>", B, rows, cols, et);
  snprintf(text, sizeof text,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%r = \"stablehlo.triangular_solve\"(%%a, %%b) {left_side = %s, lower = %s, unit_diagonal = %s,"
           " transpose_a = #stablehlo<transpose %s>} : (%s, %s) -> %s\n"
           "  return %%r : %s\n}\n",
           at, bt, bt, left ? "true" : "false", lower ? "true" : "false", unit ? "true" : "false", names[ta], at, bt,
           bt, bt);
  size_t an = (size_t)B * k * k, bn = (size_t)B * rows * cols, w = cplx ? 2 : 1;
  double complex *a = malloc(sizeof *a * an), *b = malloc(sizeof *b * bn), *want = malloc(sizeof *b * bn);
  float *ain = malloc(sizeof *ain * an * w), *bin = malloc(sizeof *bin * bn * w), *got = malloc(sizeof *got * bn * w);
  assert_true(a && b && want && ain && bin && got);
  uint32_t seed = 11u + (unsigned)k;
  for (size_t i = 0; i < an; i++) a[i] = 0.1 * (test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0));
  for (size_t i = 0; i < bn; i++) b[i] = test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0);
  for (int q = 0; q < B; q++) {
    double complex *aq = a + (size_t)q * k * k;
    for (int i = 0; i < k; i++) aq[i * k + i] += 2;
    reference_solve(aq, k, left, lower, ta, unit, b + (size_t)q * rows * cols, rows, cols,
                    want + (size_t)q * rows * cols);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++)
        if ((lower ? j > i : j < i) || (unit && i == j)) aq[i * k + j] = NAN; /* not read */
  }
  to_floats(a, an, cplx, ain);
  to_floats(b, bn, cplx, bin);
  vkhlo_element_type_t e = cplx ? VKHLO_C64 : VKHLO_F32;
  vkhlo_tensor_type_t t[2] = {{.element_type = e, .rank = 3, .dimensions = {B, k, k}},
                              {.element_type = e, .rank = 3, .dimensions = {B, rows, cols}}};
  float *in[2] = {ain, bin};
  run(ctx, text, 2, t, in, got, bn * w);
  assert_close(got, want, bn, cplx, text);
  free(a), free(b), free(want), free(ain), free(bin), free(got);
}

/* every side x triangle x transpose_a: the substitution runs down or up */
static void solve_left(void **state) {
  for (int ta = 0; ta < 2; ta++) {
    solve_case(*state, 150, true, true, ta, false, false);
    solve_case(*state, 150, true, false, ta, false, false);
  }
}

static void solve_right(void **state) {
  for (int ta = 0; ta < 2; ta++) {
    solve_case(*state, 200, false, true, ta, false, false);
    solve_case(*state, 200, false, false, ta, false, false);
  }
}

static void solve_unit_diagonal(void **state) {
  solve_case(*state, 150, true, false, 0, true, false);
  solve_case(*state, 150, false, true, 1, true, false);
}

static void solve_complex_adjoint(void **state) {
  solve_case(*state, 130, true, true, 2, false, true);
  solve_case(*state, 130, false, false, 2, true, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(cholesky_lower),      cmocka_unit_test(cholesky_upper),
      cmocka_unit_test(cholesky_complex_upper), cmocka_unit_test(solve_left),
      cmocka_unit_test(solve_right),         cmocka_unit_test(solve_unit_diagonal),
      cmocka_unit_test(solve_complex_adjoint),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
