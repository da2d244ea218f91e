/*
 * CHLO ops that codegen/expand.c rewrites into StableHLO, end to end with
 * the validation layer on, against references computed here:
 *
 *   chlo.ragged_dot  the three modes (ragged non-contracting with a batch
 *                    dimension, a group dimension that is not the rhs's
 *                    first, per-batch group sizes with empty groups and
 *                    rows past the last group; ragged contracting; ragged
 *                    batch), and a group_sizes of the wrong shape refused
 *                    with the verifier's message; jax.lax.ragged_dot's
 *                    form ([m, k] x [g, k, n], with a batch dimension or
 *                    not), which the CPU GEMM kernel computes as a grouped
 *                    product (checked in its GLSL on CPU devices): groups
 *                    straddling its row tiles, empty groups, rows past the
 *                    last group, sizes past m, i32 and i64 sizes, products
 *                    with the rhs read by words and not;
 *   chlo.scan        a running sum along the minor dimension, a reverse scan
 *                    with two carries whose outputs differ from them, and a
 *                    body of the wrong type refused.
 *
 * Values are small integers, so every sum is exact and the results are
 * compared for equality.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

static float small_int(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (float)((int)(*state >> 28) - 8); /* -8 .. 7 */
}

static void fill(float *v, int n, uint32_t seed) {
  for (int i = 0; i < n; i++) v[i] = small_int(&seed);
}

/* Runs |text| on f32 operands |lhs| (|ln| elements), |rhs| and the i32
 * group sizes, reads |outn| f32 results into |out|. */
static void run_ragged(vkhlo_context_t *ctx, const char *text, const vkhlo_tensor_type_t *lt, const float *lhs,
                       const vkhlo_tensor_type_t *rt, const float *rhs, const vkhlo_tensor_type_t *gt,
                       const int32_t *gs, float *out, size_t outn) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_buffer_t *in[3] = {NULL, NULL, NULL}, *res = NULL;
  expect_ok(vkhlo_buffer_create(ctx, lt, lhs, &in[0]));
  expect_ok(vkhlo_buffer_create(ctx, rt, rhs, &in[1]));
  expect_ok(vkhlo_buffer_create(ctx, gt, gs, &in[2]));
  expect_ok(vkhlo_executable_execute(exe, 3, in, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof(float) * outn));
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(in[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
}

/* The group of position |i| for group sizes |g| (|n| groups); n when past
 * the last group. */
static int group_of(const int32_t *g, int n, int i) {
  int end = 0;
  for (int j = 0; j < n; j++) {
    end += g[j];
    if (i < end) return j;
  }
  return n;
}

/* Mode 1: lhs [b=2, x=3, m=10, k=4] ragged in m, rhs [b, k, n=5, g=3]
 * (group dimension last), group sizes [b, x, g] per (b, x) row block:
 * some groups empty, some blocks ending before m. */
static void ragged_dot_noncontracting(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { B = 2, X = 3, M = 10, K = 4, N = 5, G = 3 };
  static const char text[] =
      "func.func @main(%l: tensor<2x3x10x4xf32>, %r: tensor<2x4x5x3xf32>, %g: tensor<2x3x3xi32>) -> "
      "tensor<2x3x10x5xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],\n"
      "      lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [1],\n"
      "      lhs_ragged_dimensions = [2], rhs_group_dimensions = [3]>,\n"
      "      precision_config = [#chlo<precision DEFAULT>, #chlo<precision DEFAULT>]}\n"
      "      : (tensor<2x3x10x4xf32>, tensor<2x4x5x3xf32>, tensor<2x3x3xi32>) -> tensor<2x3x10x5xf32>\n"
      "  return %0 : tensor<2x3x10x5xf32>\n}\n";
  static float lhs[B][X][M][K], rhs[B][K][N][G], out[B][X][M][N];
  static const int32_t gs[B][X][G] = {{{4, 4, 2}, {0, 7, 3}, {3, 0, 2}}, {{10, 0, 0}, {1, 1, 1}, {0, 0, 9}}};
  fill(&lhs[0][0][0][0], B * X * M * K, 1);
  fill(&rhs[0][0][0][0], B * K * N * G, 2);
  vkhlo_tensor_type_t lt = {VKHLO_F32, 4, {B, X, M, K}}, rt = {VKHLO_F32, 4, {B, K, N, G}},
                      gt = {VKHLO_S32, 3, {B, X, G}};
  run_ragged(ctx, text, &lt, &lhs[0][0][0][0], &rt, &rhs[0][0][0][0], &gt, &gs[0][0][0], &out[0][0][0][0],
             B * X * M * N);
  int zeros = 0;
  for (int b = 0; b < B; b++)
    for (int x = 0; x < X; x++)
      for (int i = 0; i < M; i++) {
        int j = group_of(gs[b][x], G, i);
        zeros += j == G;
        for (int n = 0; n < N; n++) {
          float want = 0;
          for (int k = 0; j < G && k < K; k++) want += lhs[b][x][i][k] * rhs[b][k][n][j];
          if (out[b][x][i][n] != want)
            fail_msg("[%d, %d, %d, %d] (group %d): got %g, want %g", b, x, i, n, j, (double)out[b][x][i][n],
                     (double)want);
        }
      }
  assert_int_equal(zeros, 5 + 7 + 1); /* rows past the last group: blocks (0, 2), (1, 1), (1, 2) */
}

/* jax.lax.ragged_dot: lhs [batch, m, k] (no batch dimension when
 * |batch| is 0) ragged in m, rhs [g, batch, k, n], group sizes [g] of
 * |gtype| (s32 or s64; |gs| as int64): compiled with a dump, its result
 * checked against the product of each row with its group's rhs (zeros
 * past the last group), and on CPU devices the kernel checked to be the
 * grouped GEMM. */
static void check_grouped(vkhlo_context_t *ctx, int batch, int m, int k, int n, int g, vkhlo_element_type_t gtype,
                          const int64_t *gs) {
  int b = batch ? batch : 1;
  char bdim[16] = "", text[2048], lty[64], rty[64], oty[64], gty[32];
  if (batch) snprintf(bdim, sizeof bdim, "%dx", batch);
  const char *gname = gtype == VKHLO_S64 ? "i64" : "i32";
  snprintf(lty, sizeof lty, "tensor<%s%dx%dxf32>", bdim, m, k);
  snprintf(rty, sizeof rty, "tensor<%dx%s%dx%dxf32>", g, bdim, k, n);
  snprintf(oty, sizeof oty, "tensor<%s%dx%dxf32>", bdim, m, n);
  snprintf(gty, sizeof gty, "tensor<%dx%s>", g, gname);
  snprintf(text, sizeof text,
           "func.func @main(%%l: %s, %%r: %s, %%g: %s) -> %s {\n"
           "  %%0 = \"chlo.ragged_dot\"(%%l, %%r, %%g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
           "      lhs_batching_dimensions = [%s], rhs_batching_dimensions = [%s],\n"
           "      lhs_contracting_dimensions = [%d], rhs_contracting_dimensions = [%d],\n"
           "      lhs_ragged_dimensions = [%d], rhs_group_dimensions = [0]>}\n"
           "      : (%s, %s, %s) -> %s\n"
           "  return %%0 : %s\n}\n",
           lty, rty, gty, oty, batch ? "0" : "", batch ? "1" : "", batch ? 2 : 1, batch ? 2 : 1, batch ? 1 : 0, lty,
           rty, gty, oty, oty);
  size_t ln = (size_t)b * m * k, rn = (size_t)g * b * k * n, on = (size_t)b * m * n;
  float *lhs = malloc(sizeof(float) * ln), *rhs = malloc(sizeof(float) * rn), *out = malloc(sizeof(float) * on);
  int32_t gs32[16];
  assert_true(lhs && rhs && out && g <= 16);
  fill(lhs, (int)ln, 3);
  fill(rhs, (int)rn, 4);
  for (int j = 0; j < g; j++) gs32[j] = (int32_t)gs[j];
  char dir[] = "/tmp/vkhlo_ragged_testXXXXXX";
  vkhlo_executable_t *exe = test_compile_dumped(ctx, text, dir);
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  if (strcmp(d.type, "cpu") == 0 && !test_dump_contains(dir, "#define GEMM_GROUPS"))
    fail_msg("not the grouped GEMM kernel:\n%s", text);
  test_remove_dir(dir);
  vkhlo_tensor_type_t lt = {VKHLO_F32, batch ? 3 : 2, {0}}, rt = {VKHLO_F32, batch ? 4 : 3, {0}},
                      gt = {gtype, 1, {g}};
  int li = 0, ri = 0;
  rt.dimensions[ri++] = g;
  if (batch) lt.dimensions[li++] = rt.dimensions[ri++] = batch;
  lt.dimensions[li++] = m;
  lt.dimensions[li] = rt.dimensions[ri++] = k;
  rt.dimensions[ri] = n;
  vkhlo_buffer_t *in[3] = {NULL, NULL, NULL}, *res = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &lt, lhs, &in[0]));
  expect_ok(vkhlo_buffer_create(ctx, &rt, rhs, &in[1]));
  expect_ok(vkhlo_buffer_create(ctx, &gt, gtype == VKHLO_S64 ? (const void *)gs : (const void *)gs32, &in[2]));
  expect_ok(vkhlo_executable_execute(exe, 3, in, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof(float) * on));
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(in[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
  for (int bb = 0; bb < b; bb++)
    for (int i = 0; i < m; i++) {
      int64_t end = 0;
      int j = 0;
      while (j < g && i >= (end += gs[j])) j++; /* the row's group; g past the last */
      for (int c = 0; c < n; c++) {
        float want = 0;
        for (int kk = 0; j < g && kk < k; kk++)
          want += lhs[((size_t)bb * m + i) * k + kk] * rhs[(((size_t)j * b + bb) * k + kk) * n + c];
        float got = out[((size_t)bb * m + i) * n + c];
        if (got != want)
          fail_msg("%s[%d, %d, %d] (group %d): got %g, want %g", text, bb, i, c, j, (double)got, (double)want);
      }
    }
  free(lhs);
  free(rhs);
  free(out);
}

static void ragged_dot_grouped(void **state) {
  vkhlo_context_t *ctx = *state;
  /* groups straddling tiles, an empty group, 13 rows past the last; N a
   * multiple of 8 (the rhs by words, the lhs shared by subgroup shuffles) */
  static const int64_t a[] = {13, 0, 30, 1, 20};
  check_grouped(ctx, 0, 77, 24, 40, 5, VKHLO_S32, a);
  /* fewer rows than a tile */
  static const int64_t b[] = {2, 0, 3};
  check_grouped(ctx, 0, 5, 8, 16, 3, VKHLO_S32, b);
  /* N = 13: the rhs element by element; sizes past m (i64, one past 2^32) */
  static const int64_t c[] = {20, 5, (int64_t)1 << 33, 7};
  check_grouped(ctx, 0, 37, 16, 13, 4, VKHLO_S64, c);
  /* a batch dimension, several row tiles and workgroups per group */
  static const int64_t e[] = {100, 150, 50};
  check_grouped(ctx, 2, 300, 64, 96, 3, VKHLO_S64, e);
}

/* Mode 2: lhs [b=2, m=3, k=12] ragged in k, rhs [b, k, n=4], group sizes
 * [b, g=4] -> [g, b, m, n]: each group's k positions only. */
static void ragged_dot_contracting(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { B = 2, M = 3, K = 12, N = 4, G = 4 };
  static const char text[] =
      "func.func @main(%l: tensor<2x3x12xf32>, %r: tensor<2x12x4xf32>, %g: tensor<2x4xi32>) -> "
      "tensor<4x2x3x4xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],\n"
      "      lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1],\n"
      "      lhs_ragged_dimensions = [2], rhs_group_dimensions = []>}\n"
      "      : (tensor<2x3x12xf32>, tensor<2x12x4xf32>, tensor<2x4xi32>) -> tensor<4x2x3x4xf32>\n"
      "  return %0 : tensor<4x2x3x4xf32>\n}\n";
  static float lhs[B][M][K], rhs[B][K][N], out[G][B][M][N];
  static const int32_t gs[B][G] = {{3, 0, 5, 4}, {2, 2, 2, 2}}; /* batch 1 leaves 4 positions out */
  fill(&lhs[0][0][0], B * M * K, 3);
  fill(&rhs[0][0][0], B * K * N, 4);
  vkhlo_tensor_type_t lt = {VKHLO_F32, 3, {B, M, K}}, rt = {VKHLO_F32, 3, {B, K, N}}, gt = {VKHLO_S32, 2, {B, G}};
  run_ragged(ctx, text, &lt, &lhs[0][0][0], &rt, &rhs[0][0][0], &gt, &gs[0][0], &out[0][0][0][0], G * B * M * N);
  for (int j = 0; j < G; j++)
    for (int b = 0; b < B; b++)
      for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
          float want = 0;
          for (int k = 0; k < K; k++)
            if (group_of(gs[b], G, k) == j) want += lhs[b][m][k] * rhs[b][k][n];
          if (out[j][b][m][n] != want)
            fail_msg("[%d, %d, %d, %d]: got %g, want %g", j, b, m, n, (double)out[j][b][m][n], (double)want);
        }
}

/* Mode 3: ragged batch dimension, no rhs groups: the batched product. */
static void ragged_dot_batch(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { B = 3, M = 2, K = 4, N = 5 };
  static const char text[] =
      "func.func @main(%l: tensor<3x2x4xf32>, %r: tensor<3x4x5xf32>, %g: tensor<2xi32>) -> tensor<3x2x5xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [0], rhs_batching_dimensions = [0],\n"
      "      lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1],\n"
      "      lhs_ragged_dimensions = [0], rhs_group_dimensions = []>}\n"
      "      : (tensor<3x2x4xf32>, tensor<3x4x5xf32>, tensor<2xi32>) -> tensor<3x2x5xf32>\n"
      "  return %0 : tensor<3x2x5xf32>\n}\n";
  static float lhs[B][M][K], rhs[B][K][N], out[B][M][N];
  static const int32_t gs[2] = {1, 2};
  fill(&lhs[0][0][0], B * M * K, 5);
  fill(&rhs[0][0][0], B * K * N, 6);
  vkhlo_tensor_type_t lt = {VKHLO_F32, 3, {B, M, K}}, rt = {VKHLO_F32, 3, {B, K, N}}, gt = {VKHLO_S32, 1, {2}};
  run_ragged(ctx, text, &lt, &lhs[0][0][0], &rt, &rhs[0][0][0], &gt, gs, &out[0][0][0], B * M * N);
  for (int b = 0; b < B; b++)
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        float want = 0;
        for (int k = 0; k < K; k++) want += lhs[b][m][k] * rhs[b][k][n];
        assert_true(out[b][m][n] == want);
      }
}

static void ragged_dot_bad_group_sizes(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%l: tensor<2x3x10x4xf32>, %r: tensor<3x2x4x5xf32>, %g: tensor<2x10x3xi32>) -> "
      "tensor<2x3x10x5xf32> {\n"
      "  %0 = \"chlo.ragged_dot\"(%l, %r, %g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
      "      lhs_batching_dimensions = [0], rhs_batching_dimensions = [1],\n"
      "      lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2],\n"
      "      lhs_ragged_dimensions = [2], rhs_group_dimensions = [0]>}\n"
      "      : (tensor<2x3x10x4xf32>, tensor<3x2x4x5xf32>, tensor<2x10x3xi32>) -> tensor<2x3x10x5xf32>\n"
      "  return %0 : tensor<2x3x10x5xf32>\n}\n";
  test_expect_compile_error(ctx, text, "ragged.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "group_sizes", "[2, 3]", ":2:",
                            (const char *)NULL);
}

/* Runs a one-operand program on |x| (f32 [rows, cols]), reads |outs|
 * results of |counts| floats each. */
static void run_scan(vkhlo_context_t *ctx, const char *text, const float *x, int rows, int cols, int outs,
                     float **res, const size_t *counts) {
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {VKHLO_F32, 2, {rows, cols}};
  vkhlo_buffer_t *in = NULL, *out[4] = {NULL};
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &in));
  expect_ok(vkhlo_executable_execute(exe, 1, &in, outs, out));
  for (int i = 0; i < outs; i++) {
    expect_ok(vkhlo_buffer_read(out[i], res[i], sizeof(float) * counts[i]));
    vkhlo_buffer_destroy(out[i]);
  }
  vkhlo_buffer_destroy(in);
  vkhlo_executable_destroy(exe);
}

/* Running sums of each row of [3, 50]: output i = init + x[0] + .. + x[i]. */
static void scan_running_sum(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<3x50xf32>) -> (tensor<3x50xf32>, tensor<3xf32>) {\n"
      "  %init = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>\n"
      "  %0:2 = chlo.scan(%x) inits(%init) dimension=1 {\n"
      "  ^bb0(%a: tensor<3xf32>, %c: tensor<3xf32>):\n"
      "    %s = stablehlo.add %c, %a : tensor<3xf32>\n"
      "    stablehlo.return %s, %s : tensor<3xf32>, tensor<3xf32>\n"
      "  } : (tensor<3x50xf32>, tensor<3xf32>) -> (tensor<3x50xf32>, tensor<3xf32>)\n"
      "  return %0#0, %0#1 : tensor<3x50xf32>, tensor<3xf32>\n}\n";
  static float x[3][50], y[3][50], last[3];
  fill(&x[0][0], 150, 7);
  float *res[2] = {&y[0][0], last};
  size_t counts[2] = {150, 3};
  run_scan(ctx, text, &x[0][0], 3, 50, 2, res, counts);
  for (int r = 0; r < 3; r++) {
    float acc = (float)(r + 1);
    for (int i = 0; i < 50; i++) {
      acc += x[r][i];
      if (y[r][i] != acc) fail_msg("[%d, %d]: got %g, want %g", r, i, (double)y[r][i], (double)acc);
    }
    assert_true(last[r] == acc);
  }
}

/* From the end of dimension 0 of [6, 4], carries (sum, count of positive
 * elements) and the output sum * 2 - x: outputs are not the carries. */
static void scan_reverse_two_carries(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<6x4xf32>) -> (tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>) {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
      "  %0:3 = chlo.scan(%x) inits(%z, %z) dimension=0 attributes {is_reverse = true} {\n"
      "  ^bb0(%a: tensor<4xf32>, %s: tensor<4xf32>, %n: tensor<4xf32>):\n"
      "    %s1 = stablehlo.add %s, %a : tensor<4xf32>\n"
      "    %zero = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
      "    %one = stablehlo.constant dense<1.0> : tensor<4xf32>\n"
      "    %pos = stablehlo.compare GT, %a, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
      "    %inc = stablehlo.select %pos, %one, %zero : tensor<4xi1>, tensor<4xf32>\n"
      "    %n1 = stablehlo.add %n, %inc : tensor<4xf32>\n"
      "    %two = stablehlo.add %s1, %s1 : tensor<4xf32>\n"
      "    %o = stablehlo.subtract %two, %a : tensor<4xf32>\n"
      "    stablehlo.return %o, %s1, %n1 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>\n"
      "  } : (tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>)\n"
      "  return %0#0, %0#1, %0#2 : tensor<6x4xf32>, tensor<4xf32>, tensor<4xf32>\n}\n";
  static float x[6][4], y[6][4], sums[4], counts_pos[4];
  fill(&x[0][0], 24, 8);
  float *res[3] = {&y[0][0], sums, counts_pos};
  size_t counts[3] = {24, 4, 4};
  run_scan(ctx, text, &x[0][0], 6, 4, 3, res, counts);
  for (int c = 0; c < 4; c++) {
    float s = 0, n = 0;
    for (int i = 5; i >= 0; i--) {
      s += x[i][c];
      n += x[i][c] > 0;
      if (y[i][c] != 2 * s - x[i][c]) fail_msg("[%d, %d]: got %g, want %g", i, c, (double)y[i][c], (double)(2 * s - x[i][c]));
    }
    assert_true(sums[c] == s);
    assert_true(counts_pos[c] == n);
  }
}

static void scan_bad_body(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<3x50xf32>) -> (tensor<3x50xf32>, tensor<3xf32>) {\n"
      "  %init = stablehlo.constant dense<0.0> : tensor<3xf32>\n"
      "  %0:2 = chlo.scan(%x) inits(%init) dimension=0 {\n"
      "  ^bb0(%a: tensor<3xf32>, %c: tensor<3xf32>):\n"
      "    %s = stablehlo.add %c, %a : tensor<3xf32>\n"
      "    stablehlo.return %s, %s : tensor<3xf32>, tensor<3xf32>\n"
      "  } : (tensor<3x50xf32>, tensor<3xf32>) -> (tensor<3x50xf32>, tensor<3xf32>)\n"
      "  return %0#0, %0#1 : tensor<3x50xf32>, tensor<3xf32>\n}\n";
  test_expect_compile_error(ctx, text, "scan.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "scan.mlir:3:", "body parameter 0",
                            (const char *)NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(ragged_dot_noncontracting),
      cmocka_unit_test(ragged_dot_contracting),
      cmocka_unit_test(ragged_dot_batch),
      cmocka_unit_test(ragged_dot_grouped),
      cmocka_unit_test(ragged_dot_bad_group_sizes),
      cmocka_unit_test(scan_running_sum),
      cmocka_unit_test(scan_reverse_two_carries),
      cmocka_unit_test(scan_bad_body),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
