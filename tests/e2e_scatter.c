/*
 * scatter (spec 'scatter'; codegen/emit_scatter.c, and codegen/expand.c
 * "long scatters") against the spec's sequential loop computed here, bit
 * for bit: every update element in row-major order of the updates, its
 * window skipped when any part of it is out of bounds.
 *
 *   - an embedding gradient: 700 rows of 96 f32 added into a 1000 x 96
 *     table at indices with duplicates and out-of-range ones (an
 *     invocation per window element, each looping over the 700 rows in
 *     order: 67200 update elements, which lavapipe refused in one
 *     invocation);
 *   - rows of 8 x 16 written by a computation that returns the update
 *     (the last write wins: the order shows);
 *   - 200000 scalar updates into 4096 bins (a bincount, i32, and a
 *     segment sum, f32 of mixed magnitudes): chunks of 32768 positions,
 *     one scatter each;
 *   - windows of 4 at varying, overlapping starts of a 1-D operand (two
 *     windows may meet: one invocation over every update element), 10000
 *     of them (one kernel) and 20000 (chunks of 8192).
 *
 * The validation layer is on throughout and must stay silent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

/* Compiles |text|, runs it once on three parameters (host arrays |in|)
 * and reads its result into |out|; returns its dispatches per execution. */
static int64_t run(vkhlo_context_t *ctx, const char *text, const void *const *in, void *out) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_buffer_t *args[3], *res = NULL;
  assert_int_equal(vkhlo_executable_parameter_count(exe), 3);
  for (int k = 0; k < 3; k++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, in[k], &args[k]));
  }
  expect_ok(vkhlo_executable_execute(exe, 3, args, 1, &res));
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_result_type(exe, 0, &t));
  expect_ok(vkhlo_buffer_read(res, out, (size_t)vkhlo_tensor_type_size_bytes(&t)));
  vkhlo_buffer_destroy(res);
  for (int k = 0; k < 3; k++) vkhlo_buffer_destroy(args[k]);
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  vkhlo_executable_destroy(exe);
  return stats.dispatches;
}

/* Seeded floats of mixed magnitudes (sums show any change of order). */
static void fill(float *x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    float u = (float)test_uniform(&seed);
    x[i] = i % 5 == 0 ? u * 1000.0f : i % 7 == 0 ? u * 1e-3f : u;
  }
}

/* Indices in [lo, hi) (some out of range when lo < 0 or hi past the end). */
static void fill_indices(int32_t *v, size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    v[i] = lo + (int32_t)((seed >> 8) % (uint32_t)(hi - lo));
  }
}

static void expect_same(const void *got, const void *want, size_t n, size_t size, const char *text) {
  for (size_t i = 0; i < n; i++)
    if (memcmp((const char *)got + i * size, (const char *)want + i * size, size) != 0) {
      if (size == 4 && strstr(text, "f32>"))
        fail_msg("element %zu: %.9g, want %.9g\n%s", i, ((const float *)got)[i], ((const float *)want)[i], text);
      fail_msg("element %zu differs\n%s", i, text);
    }
}

static const char *const add_body =
    "  ^bb0(%a: tensor<T>, %b: tensor<T>):\n"
    "    %s = stablehlo.add %a, %b : tensor<T>\n"
    "    stablehlo.return %s : tensor<T>\n";

/* |body| with every "T" replaced by |t| into |out|. */
static void typed(char *out, size_t size, const char *body, const char *t) {
  size_t o = 0;
  for (const char *p = body; *p && o + 8 < size; p++) {
    if (*p == 'T') o += (size_t)snprintf(out + o, size - o, "%s", t);
    else out[o++] = *p;
  }
  out[o] = 0;
}

static void embedding_gradient(void **state) {
  enum { V = 1000, D = 96, R = 700 };
  char body[256], text[2048];
  typed(body, sizeof body, add_body, "f32");
  snprintf(text, sizeof text,
           "func.func @main(%%t: tensor<%dx%dxf32>, %%i: tensor<%dx1xi32>, %%u: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%r = \"stablehlo.scatter\"(%%t, %%i, %%u) ({\n%s  }) {scatter_dimension_numbers = #stablehlo.scatter<"
           "update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
           "index_vector_dim = 1>} : (tensor<%dx%dxf32>, tensor<%dx1xi32>, tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  return %%r : tensor<%dx%dxf32>\n}\n",
           V, D, R, R, D, V, D, body, V, D, R, R, D, V, D, V, D);
  float *t = malloc(sizeof(float) * V * D), *u = malloc(sizeof(float) * R * D);
  float *got = malloc(sizeof(float) * V * D), *want = malloc(sizeof(float) * V * D);
  int32_t *idx = malloc(sizeof(int32_t) * R);
  assert_true(t && u && got && want && idx);
  fill(t, (size_t)V * D, 1);
  fill(u, (size_t)R * D, 2);
  fill_indices(idx, R, -3, 300, 3); /* rows 0..299: duplicates; some out of range */
  memcpy(want, t, sizeof(float) * V * D);
  for (int r = 0; r < R; r++)
    if (idx[r] >= 0 && idx[r] < V)
      for (int c = 0; c < D; c++) want[idx[r] * D + c] += u[r * D + c];
  const void *in[3] = {t, idx, u};
  assert_int_equal(run(*state, text, in, got), 1);
  expect_same(got, want, (size_t)V * D, 4, text);
  free(t);
  free(u);
  free(got);
  free(want);
  free(idx);
}

static void last_write_wins(void **state) {
  enum { B = 50, H = 8, W = 16, R = 300 };
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%t: tensor<%dx%dx%dxf32>, %%i: tensor<%dxi32>, %%u: tensor<%dx%dx%dxf32>) -> "
           "tensor<%dx%dx%dxf32> {\n"
           "  %%r = \"stablehlo.scatter\"(%%t, %%i, %%u) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n    stablehlo.return %%b : tensor<f32>\n"
           "  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2], inserted_window_dims = "
           "[0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>} : (tensor<%dx%dx%dxf32>, tensor<%dxi32>, "
           "tensor<%dx%dx%dxf32>) -> tensor<%dx%dx%dxf32>\n  return %%r : tensor<%dx%dx%dxf32>\n}\n",
           B, H, W, R, R, H, W, B, H, W, B, H, W, R, R, H, W, B, H, W, B, H, W);
  size_t nt = (size_t)B * H * W, nu = (size_t)R * H * W;
  float *t = malloc(nt * 4), *u = malloc(nu * 4), *got = malloc(nt * 4), *want = malloc(nt * 4);
  int32_t *idx = malloc(sizeof(int32_t) * R);
  assert_true(t && u && got && want && idx);
  fill(t, nt, 4);
  fill(u, nu, 5);
  fill_indices(idx, R, -1, B + 1, 6);
  memcpy(want, t, nt * 4);
  for (int r = 0; r < R; r++)
    if (idx[r] >= 0 && idx[r] < B) memcpy(want + (size_t)idx[r] * H * W, u + (size_t)r * H * W, (size_t)H * W * 4);
  const void *in[3] = {t, idx, u};
  run(*state, text, in, got);
  expect_same(got, want, nt, 4, text);
  free(t);
  free(u);
  free(got);
  free(want);
  free(idx);
}

/* 200000 scalar updates into 4096 bins of type |t| (i32 or f32). */
static void bins(void **state, bool f32) {
  enum { BINS = 4096, N = 200000 };
  const char *t = f32 ? "f32" : "i32";
  char body[256], text[2048];
  typed(body, sizeof body, add_body, t);
  snprintf(text, sizeof text,
           "func.func @main(%%t: tensor<%dx%s>, %%i: tensor<%dx1xi32>, %%u: tensor<%dx%s>) -> tensor<%dx%s> {\n"
           "  %%r = \"stablehlo.scatter\"(%%t, %%i, %%u) ({\n%s  }) {scatter_dimension_numbers = #stablehlo.scatter<"
           "update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
           "index_vector_dim = 1>} : (tensor<%dx%s>, tensor<%dx1xi32>, tensor<%dx%s>) -> tensor<%dx%s>\n"
           "  return %%r : tensor<%dx%s>\n}\n",
           BINS, t, N, N, t, BINS, t, body, BINS, t, N, N, t, BINS, t, BINS, t);
  int32_t *idx = malloc(sizeof(int32_t) * N);
  uint32_t *tv = malloc(4 * BINS), *uv = malloc(4 * (size_t)N), *got = malloc(4 * BINS), *want = malloc(4 * BINS);
  assert_true(idx && tv && uv && got && want);
  fill_indices(idx, N, -5, BINS + 5, 7);
  if (f32) {
    fill((float *)tv, BINS, 8);
    fill((float *)uv, N, 9);
  } else {
    for (int i = 0; i < BINS; i++) tv[i] = (uint32_t)i;
    for (int i = 0; i < N; i++) uv[i] = (uint32_t)(i % 13);
  }
  memcpy(want, tv, 4 * BINS);
  for (int i = 0; i < N; i++) {
    if (idx[i] < 0 || idx[i] >= BINS) continue;
    if (f32) ((float *)want)[idx[i]] += ((const float *)uv)[i];
    else want[idx[i]] += uv[i];
  }
  const void *in[3] = {tv, idx, uv};
  assert_true(run(*state, text, in, got) >= (N + 32767) / 32768); /* a scatter per chunk */
  expect_same(got, want, BINS, 4, text);
  free(idx);
  free(tv);
  free(uv);
  free(got);
  free(want);
}

static void bincount_and_segment_sum(void **state) {
  bins(state, false);
  bins(state, true);
}

/* |n| windows of 4 of a 1-D operand of 64 at starts in [-1, 62): one
 * invocation over every update element (windows meet). */
static void sliding_windows_case(void **state, int n) {
  enum { L = 64, K = 4 };
  char body[256], text[2048];
  typed(body, sizeof body, add_body, "f32");
  snprintf(text, sizeof text,
           "func.func @main(%%t: tensor<%dxf32>, %%i: tensor<%dx1xi32>, %%u: tensor<%dx%dxf32>) -> tensor<%dxf32> {\n"
           "  %%r = \"stablehlo.scatter\"(%%t, %%i, %%u) ({\n%s  }) {scatter_dimension_numbers = #stablehlo.scatter<"
           "update_window_dims = [1], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], "
           "index_vector_dim = 1>} : (tensor<%dxf32>, tensor<%dx1xi32>, tensor<%dx%dxf32>) -> tensor<%dxf32>\n"
           "  return %%r : tensor<%dxf32>\n}\n",
           L, n, n, K, L, body, L, n, n, K, L, L);
  float *t = malloc(4 * L), *u = malloc(4 * (size_t)n * K), *got = malloc(4 * L), *want = malloc(4 * L);
  int32_t *idx = malloc(sizeof(int32_t) * (size_t)n);
  assert_true(t && u && got && want && idx);
  fill(t, L, 10);
  fill(u, (size_t)n * K, 11);
  fill_indices(idx, (size_t)n, -1, L - K + 2, 12);
  memcpy(want, t, 4 * L);
  for (int i = 0; i < n; i++)
    if (idx[i] >= 0 && idx[i] <= L - K)
      for (int k = 0; k < K; k++) want[idx[i] + k] += u[i * K + k];
  const void *in[3] = {t, idx, u};
  run(*state, text, in, got);
  expect_same(got, want, L, 4, text);
  free(t);
  free(u);
  free(got);
  free(want);
  free(idx);
}

static void sliding_windows(void **state) {
  sliding_windows_case(state, 10000);
  sliding_windows_case(state, 20000);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(embedding_gradient),
      cmocka_unit_test(last_write_wins),
      cmocka_unit_test(bincount_and_segment_sum),
      cmocka_unit_test(sliding_windows),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
