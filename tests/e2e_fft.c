/*
 * Long and multi-dimensional fft (codegen/expand.c, "fft": one 1-D
 * transform per dimension, four-step Cooley-Tukey for long lengths) end to
 * end with the validation layer on, against transforms computed here in
 * double precision:
 *
 *   FFT and IFFT of 5000 (50 x 100, the 100 split again), FFT of 2^17
 *   (256 x 512), RFFT of 5000, IRFFT to 5000 and to 5001 (3 x 1667: the
 *   last factor prime, direct), a 2-D FFT of 120 x 200, a 2-D RFFT and
 *   IRFFT of 100 x 300, a 3-D IFFT of 4 x 8 x 16, and a prime length
 *   (4099: one direct kernel).
 *
 * The references are direct DFTs in double (a radix-2 FFT for 2^17), the
 * multi-dimensional ones one dimension after another.  Errors are relative
 * to the largest reference value; f32 transforms of these sizes agree to
 * a few 1e-7, a wrong twiddle or order gives errors of order 1.  The long
 * transforms must run as several dispatches (the rewrite ran), the prime
 * one as one.
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

enum { FFT, IFFT, RFFT, IRFFT };
#define TWO_PI 6.283185307179586476925286766559
static const char *const type_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

static double uniform(uint32_t *state) { /* [-1, 1) */
  *state = *state * 1664525u + 1013904223u;
  return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

/* ------------------------------------------------------- references */

/* In place: the DFT (sign -1) or the unnormalized inverse (+1) of |n|
 * values |stride| apart. */
static void dft(double complex *v, int64_t n, int64_t stride, int sign) {
  double complex *out = malloc(sizeof *out * (size_t)n);
  assert_non_null(out);
  if ((n & (n - 1)) == 0 && n > 1) { /* radix 2, decimation in time */
    double complex *even = malloc(sizeof *even * (size_t)n);
    assert_non_null(even);
    for (int64_t i = 0; i < n / 2; i++) even[i] = v[2 * i * stride], even[n / 2 + i] = v[(2 * i + 1) * stride];
    dft(even, n / 2, 1, sign);
    dft(even + n / 2, n / 2, 1, sign);
    for (int64_t k = 0; k < n / 2; k++) {
      double complex w = cexp(sign * TWO_PI * I * (double)k / (double)n) * even[n / 2 + k];
      out[k] = even[k] + w;
      out[k + n / 2] = even[k] - w;
    }
    free(even);
  } else {
    for (int64_t k = 0; k < n; k++) {
      double complex s = 0;
      for (int64_t j = 0; j < n; j++) s += v[j * stride] * cexp(sign * TWO_PI * I * (double)(j * k % n) / (double)n);
      out[k] = s;
    }
  }
  for (int64_t k = 0; k < n; k++) v[k * stride] = out[k];
  free(out);
}

/* In place: the transform (dft's sign) along dimension |d| of |v|, an
 * array of |rank| dimensions |dims|. */
static void along(double complex *v, const int64_t *dims, int rank, int d, int sign) {
  int64_t inner = 1, outer = 1;
  for (int i = d + 1; i < rank; i++) inner *= dims[i];
  for (int i = 0; i < d; i++) outer *= dims[i];
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) dft(v + o * dims[d] * inner + i, dims[d], inner, sign);
}

/* ------------------------------------------------------------- runs */

static void dims_text(char *buf, size_t size, int64_t batch, const int64_t *dims, int q, const char *et) {
  int at = snprintf(buf, size, "tensor<%lld", (long long)batch);
  for (int j = 0; j < q; j++) at += snprintf(buf + at, size - (size_t)at, "x%lld", (long long)dims[j]);
  snprintf(buf + at, size - (size_t)at, "x%s>", et);
}

/* Runs an fft of |type| with fft_length |len| (q values) on [batch,
 * len...] operands (the last one n / 2 + 1 for IRFFT) of seeded values,
 * checks the result against reference() and returns the dispatches. */
static int64_t check_fft(vkhlo_context_t *ctx, int type, int64_t batch, const int64_t *len, int q) {
  int64_t in_dims[4], out_dims[4], in_count = batch, out_count = batch, total = 1;
  for (int j = 0; j < q; j++) {
    in_dims[j] = out_dims[j] = len[j];
    total *= len[j];
  }
  if (type == RFFT) out_dims[q - 1] = len[q - 1] / 2 + 1;
  if (type == IRFFT) in_dims[q - 1] = len[q - 1] / 2 + 1;
  for (int j = 0; j < q; j++) in_count *= in_dims[j], out_count *= out_dims[j];
  bool real_in = type == RFFT, real_out = type == IRFFT;
  char it[128], ot[128], lengths[64] = "", text[1024];
  dims_text(it, sizeof it, batch, in_dims, q, real_in ? "f32" : "complex<f32>");
  dims_text(ot, sizeof ot, batch, out_dims, q, real_out ? "f32" : "complex<f32>");
  for (int j = 0, at = 0; j < q; j++)
    at += snprintf(lengths + at, sizeof lengths - (size_t)at, "%s%lld", j ? ", " : "", (long long)len[j]);
  snprintf(text, sizeof text,
           "func.func @main(%%x: %s) -> %s {\n"
           "  %%r = stablehlo.fft %%x, type = %s, length = [%s] : (%s) -> %s\n"
           "  return %%r : %s\n}\n",
           it, ot, type_names[type], lengths, it, ot, ot);

  /* inputs; the reference transforms them in v ([batch, len...]) */
  float *in = malloc(sizeof *in * (size_t)in_count * 2), *got = malloc(sizeof *got * (size_t)out_count * 2);
  double complex *v = malloc(sizeof *v * (size_t)(batch * total)), *u = malloc(sizeof *u * (size_t)in_count);
  assert_true(in && got && v && u);
  uint32_t seed = 3u + (uint32_t)total;
  for (int64_t i = 0; i < in_count * (real_in ? 1 : 2); i++) in[i] = (float)uniform(&seed);
  for (int64_t i = 0; i < in_count; i++) u[i] = real_in ? in[i] : in[2 * i] + I * in[2 * i + 1];
  int64_t dims[4] = {batch}, n = len[q - 1], h = n / 2 + 1;
  for (int j = 0; j < q; j++) dims[j + 1] = in_dims[j];
  int sign = type == IFFT || type == IRFFT ? 1 : -1;
  if (type == IRFFT) {
    /* the leading dimensions' inverses, then each row's inverse, the row
     * completed by X[n - k] = conj X[k]; its real part is compared (the
     * imaginary parts of the self-conjugate X[0] and X[n / 2] drop out) */
    for (int j = 0; j < q - 1; j++) along(u, dims, q + 1, j + 1, sign);
    for (int64_t row = 0; row < in_count / h; row++)
      for (int64_t k = 0; k < n; k++) {
        v[row * n + k] = k < h ? u[row * h + k] : conj(u[row * h + n - k]);
      }
    dims[q] = n;
    along(v, dims, q + 1, q, sign);
  } else {
    memcpy(v, u, sizeof *v * (size_t)in_count);
    for (int j = 0; j < q; j++) along(v, dims, q + 1, j + 1, sign);
  }
  if (sign > 0)
    for (int64_t i = 0; i < batch * total; i++) v[i] /= (double)total;

  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {.element_type = real_in ? VKHLO_F32 : VKHLO_C64, .rank = q + 1};
  t.dimensions[0] = batch;
  for (int j = 0; j < q; j++) t.dimensions[j + 1] = in_dims[j];
  vkhlo_buffer_t *arg = NULL, *res = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &t, in, &arg));
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, got, sizeof *got * (size_t)out_count * (real_out ? 1 : 2)));
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);

  /* RFFT keeps the first n / 2 + 1 of the last dimension */
  int64_t kept = out_dims[q - 1];
  double top = 0, worst = 0;
  int64_t worst_at = 0;
  for (int64_t i = 0; i < out_count; i++) top = fmax(top, cabs(v[i / kept * n + i % kept]));
  for (int64_t i = 0; i < out_count; i++) {
    double complex want = v[i / kept * n + i % kept];
    double complex g = real_out ? got[i] : got[2 * i] + I * got[2 * i + 1];
    double e = cabs(g - (real_out ? creal(want) : want));
    if (!(e <= worst)) worst = e, worst_at = i;
  }
  if (!(worst <= 1e-5 * top))
    fail_msg("%s: element %lld off by %g (largest value %g)", text, (long long)worst_at, worst, top);
  free(in), free(got), free(v), free(u);
  return stats.dispatches;
}

static void fft_1d(void **state) {
  int64_t n = 5000;
  assert_true(check_fft(*state, FFT, 2, &n, 1) > 1);
  assert_true(check_fft(*state, IFFT, 2, &n, 1) > 1);
  n = 1 << 17;
  assert_true(check_fft(*state, FFT, 1, &n, 1) > 1);
}

static void real_1d(void **state) {
  int64_t n = 5000;
  assert_true(check_fft(*state, RFFT, 2, &n, 1) > 1);
  assert_true(check_fft(*state, IRFFT, 2, &n, 1) > 1);
  n = 5001;
  assert_true(check_fft(*state, IRFFT, 2, &n, 1) > 1);
}

static void multi_dimensional(void **state) {
  int64_t l2[2] = {120, 200}, r2[2] = {100, 300}, l3[3] = {4, 8, 16};
  assert_true(check_fft(*state, FFT, 2, l2, 2) > 1);
  assert_true(check_fft(*state, RFFT, 3, r2, 2) > 1);
  assert_true(check_fft(*state, IRFFT, 3, r2, 2) > 1);
  assert_true(check_fft(*state, IFFT, 2, l3, 3) > 1);
}

/* a prime length has no factors: one direct kernel */
static void prime_length(void **state) {
  int64_t n = 4099;
  assert_int_equal(check_fft(*state, FFT, 2, &n, 1), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(fft_1d),
      cmocka_unit_test(real_1d),
      cmocka_unit_test(multi_dimensional),
      cmocka_unit_test(prime_length),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
