/*
 * Long sorts (codegen/expand.c, "long sorts"): a sort whose rows are
 * longer than 1024 elements runs as merge passes (sort_runs,
 * codegen/emit_sort.c), and chlo.top_k of such rows as a sort of (operand,
 * iota) and a slice.  Before, lavapipe refused rows over 65535 (its loop
 * limit) and took seconds for shorter ones.
 *
 *   - 100003 f32 keys with an i32 payload, ascending in total order:
 *     duplicates, -0 and +0, NaNs of both signs and infinities; the
 *     payload shows that equal keys keep their order (stable);
 *   - a 3000 x 3 pair of operands sorted along dimension 0 (not the
 *     minor-most) by a two-key comparator (i32 descending, then f32
 *     ascending), each column on its own;
 *   - 2049 elements (one past a power of two: a last run of one element),
 *     also with dimension = -1 (the spec's count from the end);
 *   - chlo.top_k of long rows with NaN, infinity and ties: k = 9 of 5000,
 *     40 of 50000, 1 of 1500 and all 3000 of 3000 (the passes keep only
 *     the first k of each merged run);
 *   - custom_call @ApproxTopK (jax.lax.approx_max_k / approx_min_k) along
 *     either dimension, answered exactly (codegen/expand.c).
 *
 * Each result is compared bit for bit with a sort computed here (qsort on
 * the keys with the original position as the last key, which is the stable
 * order).  The validation layer is on throughout and must stay silent.
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

/* Compiles |text|, runs it once on |np| parameters (host arrays |in|) and
 * reads its |nr| results into |out| (each buffer big enough). */
static void run(vkhlo_context_t *ctx, const char *text, int np, const void *const *in, int nr, void *const *out) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_buffer_t *args[4], *res[4];
  assert_true(np <= 4 && nr <= 4);
  assert_int_equal(vkhlo_executable_parameter_count(exe), np);
  assert_int_equal(vkhlo_executable_result_count(exe), nr);
  for (int k = 0; k < np; k++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, in[k], &args[k]));
  }
  expect_ok(vkhlo_executable_execute(exe, np, args, nr, res));
  for (int r = 0; r < nr; r++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_result_type(exe, r, &t));
    expect_ok(vkhlo_buffer_read(res[r], out[r], (size_t)vkhlo_tensor_type_size_bytes(&t)));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int k = 0; k < np; k++) vkhlo_buffer_destroy(args[k]);
  vkhlo_executable_destroy(exe);
}

/* The total order of the spec's compare TOTALORDER as an integer:
 * -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN. */
static int32_t total_key(float f) {
  int32_t b;
  memcpy(&b, &f, sizeof b);
  return b < 0 ? b ^ 0x7FFFFFFF : b;
}

static uint32_t next(uint32_t *seed) {
  *seed = *seed * 1664525u + 1013904223u;
  return *seed >> 8;
}

static float bits_float(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

/* Keys with many duplicates and every special value. */
static float key_value(uint32_t *seed) {
  uint32_t u = next(seed);
  switch (u % 16) {
    case 0: return bits_float(0x7FC00000u);  /* NaN */
    case 1: return bits_float(0xFFC00001u);  /* -NaN */
    case 2: return 1.0f / 0.0f;
    case 3: return -1.0f / 0.0f;
    case 4: return 0.0f;
    case 5: return -0.0f;
    default: return (float)((int)(u >> 4) % 200 - 100) * 0.25f;
  }
}

typedef struct {
  int64_t key[2];
  int32_t at; /* original position: the stable order's last key */
} entry_t;

static int entry_cmp(const void *pa, const void *pb) {
  const entry_t *a = pa, *b = pb;
  for (int k = 0; k < 2; k++)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return (a->at > b->at) - (a->at < b->at);
}

static void sort_1d(int n, int dimension, void **state) {
  vkhlo_context_t *ctx = *state;
  char text[1024];
  snprintf(text, sizeof text,
           "func.func @main(%%k: tensor<%dxf32>, %%v: tensor<%dxi32>) -> (tensor<%dxf32>, tensor<%dxi32>) {\n"
           "  %%s:2 = \"stablehlo.sort\"(%%k, %%v) <{dimension = %d : i64, is_stable = true}> ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>, %%c: tensor<i32>, %%d: tensor<i32>):\n"
           "    %%lt = stablehlo.compare LT, %%a, %%b, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    stablehlo.return %%lt : tensor<i1>\n"
           "  }) : (tensor<%dxf32>, tensor<%dxi32>) -> (tensor<%dxf32>, tensor<%dxi32>)\n"
           "  return %%s#0, %%s#1 : tensor<%dxf32>, tensor<%dxi32>\n"
           "}\n",
           n, n, n, n, dimension, n, n, n, n, n, n);
  float *k = malloc((size_t)n * sizeof *k), *got_k = malloc((size_t)n * sizeof *got_k);
  int32_t *v = malloc((size_t)n * sizeof *v), *got_v = malloc((size_t)n * sizeof *got_v);
  entry_t *e = malloc((size_t)n * sizeof *e);
  assert_true(k && got_k && v && got_v && e);
  uint32_t seed = (uint32_t)n;
  for (int i = 0; i < n; i++) {
    k[i] = key_value(&seed);
    v[i] = i * 7 + 3;
    e[i] = (entry_t){{total_key(k[i]), 0}, i};
  }
  qsort(e, (size_t)n, sizeof *e, entry_cmp);
  const void *in[2] = {k, v};
  void *out[2] = {got_k, got_v};
  run(ctx, text, 2, in, 2, out);
  for (int i = 0; i < n; i++) {
    if (memcmp(&got_k[i], &k[e[i].at], sizeof(float)) != 0 || got_v[i] != v[e[i].at])
      fail_msg("sort of %d, position %d: (%g, %d), want (%g, %d)", n, i, got_k[i], got_v[i],
               k[e[i].at], v[e[i].at]);
  }
  free(k);
  free(got_k);
  free(v);
  free(got_v);
  free(e);
}

static void long_sort(void **state) { sort_1d(100003, 0, state); }
static void sort_one_past_power_of_two(void **state) { sort_1d(2049, 0, state); }
/* dimension -1: the last, counted from the end */
static void long_sort_negative_dimension(void **state) { sort_1d(2049, -1, state); }

/* Two operands of 3000 x 3 along dimension 0: the i32 key descending, then
 * the f32 key ascending (no NaN: a strict weak order in FLOAT compare). */
static void long_sort_two_keys(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%p: tensor<3000x3xi32>, %q: tensor<3000x3xf32>) -> (tensor<3000x3xi32>, tensor<3000x3xf32>) {\n"
      "  %s:2 = \"stablehlo.sort\"(%p, %q) <{dimension = 0 : i64}> ({\n"
      "  ^bb0(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<f32>, %d: tensor<f32>):\n"
      "    %gt = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %eq = stablehlo.compare EQ, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    %lt = stablehlo.compare LT, %c, %d, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    %both = stablehlo.and %eq, %lt : tensor<i1>\n"
      "    %r = stablehlo.or %gt, %both : tensor<i1>\n"
      "    stablehlo.return %r : tensor<i1>\n"
      "  }) : (tensor<3000x3xi32>, tensor<3000x3xf32>) -> (tensor<3000x3xi32>, tensor<3000x3xf32>)\n"
      "  return %s#0, %s#1 : tensor<3000x3xi32>, tensor<3000x3xf32>\n"
      "}\n";
  enum { R = 3000, C = 3 };
  static int32_t p[R * C], got_p[R * C];
  static float q[R * C], got_q[R * C];
  static entry_t e[R];
  uint32_t seed = 5;
  for (int i = 0; i < R * C; i++) {
    p[i] = (int32_t)(next(&seed) % 40) - 20;
    q[i] = (float)(next(&seed) % 16) * 0.5f - 4.0f; /* ties of both keys: the stable order shows */
  }
  const void *in[2] = {p, q};
  void *out[2] = {got_p, got_q};
  run(ctx, text, 2, in, 2, out);
  for (int c = 0; c < C; c++) {
    for (int i = 0; i < R; i++) e[i] = (entry_t){{-(int64_t)p[i * C + c], (int64_t)(q[i * C + c] * 2)}, i};
    qsort(e, R, sizeof *e, entry_cmp);
    for (int i = 0; i < R; i++) {
      int w = e[i].at * C + c;
      if (got_p[i * C + c] != p[w] || got_q[i * C + c] != q[w])
        fail_msg("column %d, row %d: (%d, %g), want (%d, %g)", c, i, got_p[i * C + c], got_q[i * C + c],
                 p[w], q[w]);
    }
  }
}

/* chlo.top_k(k) of R rows of N: the k largest in descending total order,
 * ties in index order, with their indices.  Row 1 (when there is one) has
 * only the values -8..0, many ties, and one -0 (below +0). */
static void top_k_case(vkhlo_context_t *ctx, int R, int N, int K) {
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%dxf32>) -> (tensor<%dx%dxf32>, tensor<%dx%dxi32>) {\n"
           "  %%v, %%i = chlo.top_k(%%x, k = %d) : tensor<%dx%dxf32> -> (tensor<%dx%dxf32>, tensor<%dx%dxi32>)\n"
           "  return %%v, %%i : tensor<%dx%dxf32>, tensor<%dx%dxi32>\n"
           "}\n",
           R, N, R, K, R, K, K, R, N, R, K, R, K, R, K, R, K);
  float *x = malloc((size_t)R * N * sizeof *x), *got_v = malloc((size_t)R * K * sizeof *got_v);
  int32_t *got_i = malloc((size_t)R * K * sizeof *got_i);
  entry_t *e = malloc((size_t)N * sizeof *e);
  assert_true(x && got_v && got_i && e);
  uint32_t seed = (uint32_t)(N + K);
  for (int i = 0; i < R * N; i++) x[i] = key_value(&seed);
  if (R > 1) {
    for (int i = 0; i < N; i++) x[N + i] = (float)((int)(next(&seed) % 9) - 8);
    x[N + N * 4 / 5] = -0.0f;
  }
  const void *in[1] = {x};
  void *out[2] = {got_v, got_i};
  run(ctx, text, 1, in, 2, out);
  for (int r = 0; r < R; r++) {
    for (int i = 0; i < N; i++) e[i] = (entry_t){{-(int64_t)total_key(x[r * N + i]), 0}, i};
    qsort(e, (size_t)N, sizeof *e, entry_cmp);
    for (int i = 0; i < K; i++)
      if (got_i[r * K + i] != e[i].at || memcmp(&got_v[r * K + i], &x[r * N + e[i].at], sizeof(float)) != 0)
        fail_msg("top %d of %d, row %d, %d-th largest: %g at %d, want %g at %d", K, N, r, i, got_v[r * K + i],
                 got_i[r * K + i], x[r * N + e[i].at], e[i].at);
  }
  free(x);
  free(got_v);
  free(got_i);
  free(e);
}

/* Long rows keep the first k of each merged run once runs are k long:
 * k below the first pass's groups of 8, above them (40 of 50000: the rows
 * shrink pass by pass), 1, and k = N (nothing dropped). */
static void long_top_k(void **state) {
  vkhlo_context_t *ctx = *state;
  top_k_case(ctx, 2, 5000, 9);
  top_k_case(ctx, 3, 50000, 40);
  top_k_case(ctx, 2, 1500, 1);
  top_k_case(ctx, 1, 3000, 3000);
}

/* custom_call @ApproxTopK as jax.lax.approx_max_k / approx_min_k export it
 * (operand, iota, init values; a GT or LT comparator of the values): the
 * exact top K of R rows of N along |dim| (0: the operand is [N, R]),
 * values with ties and both zeros (equal for the comparator: index order
 * among them), against a stable sort here. */
static void approx_top_k_case(vkhlo_context_t *ctx, int R, int N, int K, bool max, int dim) {
  char ts[32], rs[32], text[2048];
  if (dim == 1) {
    snprintf(ts, sizeof ts, "%dx%d", R, N);
    snprintf(rs, sizeof rs, "%dx%d", R, K);
  } else {
    snprintf(ts, sizeof ts, "%dx%d", N, R);
    snprintf(rs, sizeof rs, "%dx%d", K, R);
  }
  snprintf(text, sizeof text,
           "func.func public @main(%%arg0: tensor<%sxf32>) -> (tensor<%sxf32>, tensor<%sxi32>) {\n"
           "  %%0 = stablehlo.iota dim = %d : tensor<%sxi32>\n"
           "  %%c = stablehlo.constant dense<-1> : tensor<i32>\n"
           "  %%cst = stablehlo.constant dense<%s> : tensor<f32>\n"
           "  %%1:2 = stablehlo.custom_call @ApproxTopK(%%arg0, %%0, %%cst, %%c) {called_computations = "
           "[@top_k_cmp], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = "
           "0.949999988 : f32, reduction_dim = %d : i64, reduction_input_size_override = -1 : i64, top_k = %d : "
           "i64}} : (tensor<%sxf32>, tensor<%sxi32>, tensor<f32>, tensor<i32>) -> (tensor<%sxf32>, tensor<%sxi32>)\n"
           "  return %%1#0, %%1#1 : tensor<%sxf32>, tensor<%sxi32>\n"
           "}\n"
           "func.func private @top_k_cmp(%%a: tensor<f32>, %%b: tensor<f32>, %%i: tensor<i32>, %%j: tensor<i32>) "
           "-> tensor<i1> {\n"
           "  %%0 = stablehlo.compare %s, %%a, %%b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "  return %%0 : tensor<i1>\n"
           "}\n",
           ts, rs, rs, dim, ts, max ? "0xFF800000" : "0x7F800000", dim, K, ts, ts, rs, rs, rs, rs,
           max ? "GT" : "LT");
  float *x = malloc((size_t)R * N * sizeof *x), *got_v = malloc((size_t)R * K * sizeof *got_v);
  int32_t *got_i = malloc((size_t)R * K * sizeof *got_i);
  entry_t *e = malloc((size_t)N * sizeof *e);
  assert_true(x && got_v && got_i && e);
  uint32_t seed = (uint32_t)(N * 3 + K);
  for (int i = 0; i < R * N; i++) {
    uint32_t u = next(&seed);
    x[i] = u % 50 == 0 ? -0.0f : (float)((int)(u >> 4) % 200 - 100) * 0.25f;
  }
  const void *in[1] = {x};
  void *out[2] = {got_v, got_i};
  run(ctx, text, 1, in, 2, out);
  for (int r = 0; r < R; r++) {
    /* element i of row r, and of result row r */
#define X_AT(i) (dim == 1 ? r * N + (i) : (i) * R + r)
#define GOT_AT(i) (dim == 1 ? r * K + (i) : (i) * R + r)
    for (int i = 0; i < N; i++) {
      int64_t q = (int64_t)(x[X_AT(i)] * 4); /* -0 and +0 alike, as for the comparator */
      e[i] = (entry_t){{max ? -q : q, 0}, i};
    }
    qsort(e, (size_t)N, sizeof *e, entry_cmp);
    for (int i = 0; i < K; i++)
      if (got_i[GOT_AT(i)] != e[i].at || memcmp(&got_v[GOT_AT(i)], &x[X_AT(e[i].at)], sizeof(float)) != 0)
        fail_msg("ApproxTopK %d of %d, row %d, %d-th: %g at %d, want %g at %d", K, N, r, i, got_v[GOT_AT(i)],
                 got_i[GOT_AT(i)], x[X_AT(e[i].at)], e[i].at);
#undef X_AT
#undef GOT_AT
  }
  free(x);
  free(got_v);
  free(got_i);
  free(e);
}

/* rows past SORT_MERGE_ABOVE (merge passes keeping k) and short columns
 * (one sort and a slice), max and min */
static void approx_top_k(void **state) {
  approx_top_k_case(*state, 2, 5000, 9, true, 1);
  approx_top_k_case(*state, 3, 700, 16, false, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(long_sort),
      cmocka_unit_test(sort_one_past_power_of_two),
      cmocka_unit_test(long_sort_negative_dimension),
      cmocka_unit_test(long_sort_two_keys),
      cmocka_unit_test(long_top_k),
      cmocka_unit_test(approx_top_k),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
