/*
 * Row reductions read by 64-bit words (codegen/emit_fusion.c,
 * fused_reduce_row): on CPU devices with shaderInt64 a fused reduce along
 * its input's minor-most dimension reads the rows as u64vec4 words whose
 * first and last may stick out of the row, and gives the elements to the
 * reducer in order.  Rows of 8, 9, 13, 79 and 256 elements (bases not
 * multiples of 8), a reduce over two dimensions (the outer one looped), a
 * softmax (its row maximum hoisted out of the row loop) and a layer norm's
 * variance (x - mean squared).
 *
 * Row kernels (elemental.h, "Row fusions"): on CPU devices a softmax or a
 * layer norm whose rows are at most EL_ROW_MAX long is one kernel, one row
 * per invocation (8 rows of 79, 2 of 12: blocks of whole 64-bit words),
 * unrolled along the row: softmax over 6 rows of 79 (per element) with
 * NaN, infinities and -0 among the inputs and over 8 (a block), over 3
 * rows of 512 (attention over 512 keys), layer norms over rows of 13 (40
 * rows: blocks of 8; 41: per element), 12 (blocks of 2), 24, 256 and 768
 * (BERT's hidden size; 64-bit words, with the [C] scale and shift read as
 * words), a log-softmax with x - max as a second
 * output (a row kernel of two outputs), each fused and unfused:
 * bit-identical, and on CPU devices one dispatch (two for the
 * log-softmax, whose max an output needs).
 *
 * Column reductions (the minor-most dimension kept) in wide kernels: 8 or
 * 4 adjacent columns per invocation, read by words (column_reductions).
 *
 * Long reductions (codegen/expand.c splits those over 32768 elements per
 * result into a chain of reduces): sums of 2^20 elements, of a prime
 * length (padded with the init), a column of 70001, two dimensions of 300,
 * and an argmax over 200003 (variadic, padded); integer-valued sums so the
 * results are exact in any order.  Prefix scans (a reduce_window spanning a
 * dimension: JAX's cumsum, cummax), which codegen/expand.c runs in blocks:
 * forward and reverse, along rows and columns, 70000 long, and an init that
 * is not the body's identity (kept direct), against scans computed here.
 * And on lavapipe, whose loops stop after 65535 iterations per invocation,
 * a kernel that needs more is refused.
 *
 * Large windows (a reduce_window of more than 32768 elements per result,
 * in stages: codegen/expand.c) against loops here.
 *
 * select_and_scatter as select_window and scatter_selected (the max
 * pooling gradient, and a min selection scattered by maximum) against the
 * spec's loop computed here, bit for bit.
 *
 * Subgroup reductions (a GPU's default; VKHLO_REDUCE=subgroup here): a
 * subgroup per output element, the lanes' partials combined by butterfly
 * (subgroup_reductions: softmax, layer norm, argmax with ties, a column
 * sum with an init, a whole-matrix maximum, against the serial loop).
 *
 * Each program runs fused and with no_fusion (one kernel per instruction,
 * the per-element loop) on the same seeded inputs, and the results must be
 * bit-identical; sums are also checked against a sequential f32 sum
 * computed here, bit for bit (the order is row-major, as the per-element
 * loop's).  On such a device the fused kernel's GLSL (dump_dir) must read
 * the words, so that the path is known to have run.  The validation layer
 * is on throughout and must stay silent.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

/* Compiles |text| (fused or not), runs it on |x| (|n| floats, parameter
 * 0; any further f32 parameter k gets param_values(k)) and reads its one
 * or two f32 results of equal size into
 * |out| (|m| floats in all, one result after the other).  With
 * |words_dir| the kernels are dumped there.  Returns the dispatches per
 * execution. */
static void fill(float *x, size_t n, uint32_t seed);

/* The values of parameter k > 0 (|n| floats), as run gives them. */
static float *param_values(int k, size_t n) {
  float *v = malloc(n * sizeof *v);
  assert_non_null(v);
  fill(v, n, 1000u + (uint32_t)k);
  return v;
}

static int64_t run(vkhlo_context_t *ctx, const char *text, bool no_fusion, const float *x, size_t n, float *out,
                   size_t m, const char *words_dir) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  o.dump_dir = words_dir;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "reduce_test.mlir", &o, &exe));
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  assert_int_equal(vkhlo_tensor_type_element_count(&t), (int64_t)n);
  vkhlo_buffer_t *args[4], *res[2];
  int nres = vkhlo_executable_result_count(exe), np = vkhlo_executable_parameter_count(exe);
  assert_true(nres == 1 || nres == 2);
  assert_true(np >= 1 && np <= 4);
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &args[0]));
  for (int k = 1; k < np; k++) {
    vkhlo_tensor_type_t tk;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &tk));
    float *v = param_values(k, (size_t)vkhlo_tensor_type_element_count(&tk));
    expect_ok(vkhlo_buffer_create(ctx, &tk, v, &args[k]));
    free(v);
  }
  expect_ok(vkhlo_executable_execute(exe, np, args, nres, res));
  for (int r = 0; r < nres; r++) { /* the results one after another, m floats in all */
    expect_ok(vkhlo_buffer_read(res[r], out + r * (m / (size_t)nres), m / (size_t)nres * sizeof *out));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int k = 0; k < np; k++) vkhlo_buffer_destroy(args[k]);
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  vkhlo_executable_destroy(exe);
  return stats.dispatches;
}

/* Seeded values of mixed magnitudes (so that any change of order shows in
 * the sums' last bits). */
static void fill(float *x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    float u = (float)(seed >> 8) / (1 << 24) - 0.5f;
    x[i] = (i % 5 == 0) ? u * 1000.0f : (i % 7 == 0) ? u * 1e-3f : u;
  }
}

static bool words_expected(vkhlo_context_t *ctx) {
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  return strcmp(d.type, "cpu") == 0;
}

/* Runs |text| fused (checking that the kernel's GLSL holds |needle| where
 * the CPU paths are expected, and that it took |dispatches| dispatches
 * there, unless 0) and unfused; the two results must be identical (NaNs
 * included); returns the fused one. */
static float *fused_equals_unfused(vkhlo_context_t *ctx, const char *text, const float *x, size_t n, size_t m,
                                   const char *needle, int64_t dispatches) {
  float *fused = malloc(m * sizeof *fused), *unfused = malloc(m * sizeof *unfused);
  assert_true(fused && unfused);
  char dir[] = "/tmp/vkhlo_reduce_testXXXXXX";
  assert_non_null(mkdtemp(dir));
  int64_t got = run(ctx, text, false, x, n, fused, m, dir);
  if (words_expected(ctx) && !test_dump_contains(dir, needle))
    fail_msg("the fused kernel has no \"%s\":\n%s", needle, text);
  if (words_expected(ctx) && dispatches && got != dispatches)
    fail_msg("%lld dispatches, want %lld:\n%s", (long long)got, (long long)dispatches, text);
  test_remove_dir(dir);
  run(ctx, text, true, x, n, unfused, m, NULL);
  if (memcmp(fused, unfused, m * sizeof *fused) != 0)
    for (size_t i = 0; i < m; i++)
      if (memcmp(&fused[i], &unfused[i], sizeof(float)) != 0)
        fail_msg("element %zu: fused %.9g, unfused %.9g\n%s", i, fused[i], unfused[i], text);
  free(unfused);
  return fused;
}

/* the word loop's loads: "u64vec4 qN = in<k>w_at(rwM);" */
#define WORD_LOOP "w_at(rw"

/* Row sums of R x L, also against a sequential sum here. */
static void row_sums(void **state) {
  vkhlo_context_t *ctx = *state;
  static const int shapes[][2] = {{8, 8}, {8, 9}, {8, 13}, {24, 79}, {3, 256}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int r = shapes[s][0], l = shapes[s][1];
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<%dx%dxf32>) -> tensor<%dxf32> {\n"
             "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
             "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [1] : "
             "(tensor<%dx%dxf32>, tensor<f32>) -> tensor<%dxf32>\n"
             "  return %%s : tensor<%dxf32>\n"
             "}\n",
             r, l, r, r, l, r, r);
    size_t n = (size_t)r * (size_t)l;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    fill(x, n, 7u + (uint32_t)s);
    float *got = fused_equals_unfused(ctx, text, x, n, (size_t)r, WORD_LOOP, 0);
    for (int i = 0; i < r; i++) {
      volatile float acc = 0.0f; /* f32 adds in row order, no contraction */
      for (int j = 0; j < l; j++) acc = acc + x[(size_t)i * (size_t)l + (size_t)j];
      if (memcmp(&got[i], (const void *)&acc, sizeof(float)) != 0)
        fail_msg("%dx%d row %d: %.9g, want %.9g", r, l, i, got[i], (double)acc);
    }
    free(got);
    free(x);
  }
}

/* A reduce over dimensions [1, 2] of 4x3x16: the outer dimension stays a
 * loop around the row's words. */
static void two_dimensions(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<4x3x16xf32>) -> tensor<4xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1, 2] : "
      "(tensor<4x3x16xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  return %s : tensor<4xf32>\n"
      "}\n";
  float x[192];
  fill(x, 192, 11);
  float *got = fused_equals_unfused(ctx, text, x, 192, 4, WORD_LOOP, 0);
  for (int i = 0; i < 4; i++) {
    volatile float acc = 0.0f;
    for (int j = 0; j < 48; j++) acc = acc + x[i * 48 + j];
    if (memcmp(&got[i], (const void *)&acc, sizeof(float)) != 0)
      fail_msg("row %d: %.9g, want %.9g", i, got[i], (double)acc);
  }
  free(got);
}

/* A layer norm's variance (its mean, a broadcast, is read once per row
 * before the words), and a softmax, a row kernel. */
static void softmax_and_variance(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char softmax[] =
      "func.func @main(%x: tensor<2x4x79xf32>) -> tensor<2x4x79xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [2] : "
      "(tensor<2x4x79xf32>, tensor<f32>) -> tensor<2x4xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x79xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<2x4x79xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<2x4x79xf32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [2] : "
      "(tensor<2x4x79xf32>, tensor<f32>) -> tensor<2x4xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<2x4xf32>) -> tensor<2x4x79xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<2x4x79xf32>\n"
      "  return %y : tensor<2x4x79xf32>\n"
      "}\n";
  static const char variance[] =
      "func.func @main(%x: tensor<16x24xf32>) -> tensor<16xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<24.0> : tensor<16xf32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<16x24xf32>, tensor<f32>) -> tensor<16xf32>\n"
      "  %mean = stablehlo.divide %s, %n : tensor<16xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<16xf32>) -> tensor<16x24xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<16x24xf32>\n"
      "  %d2 = stablehlo.multiply %d, %d : tensor<16x24xf32>\n"
      "  %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<16x24xf32>, tensor<f32>) -> tensor<16xf32>\n"
      "  return %v : tensor<16xf32>\n"
      "}\n";
  float x[632];
  fill(x, 632, 5);
  /* 8 rows of 79: one block of 79 words per invocation, stored by words */
  float *got = fused_equals_unfused(ctx, softmax, x, 632, 632, "out0w.data[int(gid) * 79 + 78]", 1);
  for (int row = 0; row < 8; row++) { /* rows of a softmax sum to 1 */
    double sum = 0;
    for (int j = 0; j < 79; j++) sum += got[row * 79 + j];
    if (sum < 0.9999 || sum > 1.0001) fail_msg("softmax row %d sums to %.9g", row, sum);
  }
  free(got);
  got = fused_equals_unfused(ctx, variance, x, 384, 16, WORD_LOOP, 0);
  free(got);
}

/* The shared start of softmax and log-softmax over rows of 79: %m the row
 * maximum, %d = x - max, %e = exp(%d), %s the row sum of %e. */
#define SUM_OF_EXP_6X79 \
  "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n" \
  "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n" \
  "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : " \
  "(tensor<6x79xf32>, tensor<f32>) -> tensor<6xf32>\n" \
  "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n" \
  "  %d = stablehlo.subtract %x, %mb : tensor<6x79xf32>\n" \
  "  %e = stablehlo.exponential %d : tensor<6x79xf32>\n" \
  "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : " \
  "(tensor<6x79xf32>, tensor<f32>) -> tensor<6xf32>\n"

/* A layer norm over R x C in |text|: mean, variance, normalize, then
 * scale and shift by [C] vectors, which are parameters %g and %b with
 * |gb_parameters| (as models give them), else computed in the program
 * (g[j] = 0.5 * j, b[j] = 0.5 - j). */
static void layer_norm_program(char *text, size_t size, int r, int c, bool gb_parameters) {
  char head[256], gb[512];
  if (gb_parameters) {
    snprintf(head, sizeof head, "%%x: tensor<%1$dx%2$dxf32>, %%g: tensor<%2$dxf32>, %%b: tensor<%2$dxf32>", r, c);
    gb[0] = 0;
  } else {
    snprintf(head, sizeof head, "%%x: tensor<%dx%dxf32>", r, c);
    snprintf(gb, sizeof gb,
             "  %%i = stablehlo.iota dim = 0 : tensor<%1$dxf32>\n"
             "  %%h = stablehlo.constant dense<0.5> : tensor<%1$dxf32>\n"
             "  %%g = stablehlo.multiply %%i, %%h : tensor<%1$dxf32>\n"
             "  %%b = stablehlo.subtract %%h, %%i : tensor<%1$dxf32>\n",
             c);
  }
  snprintf(text, size,
           "func.func @main(%3$s) -> tensor<%1$dx%2$dxf32> {\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%n = stablehlo.constant dense<%2$d.0> : tensor<%1$dxf32>\n"
           "  %%eps = stablehlo.constant dense<1.0e-5> : tensor<%1$dxf32>\n"
           "%4$s"
           "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [1] : "
           "(tensor<%1$dx%2$dxf32>, tensor<f32>) -> tensor<%1$dxf32>\n"
           "  %%mean = stablehlo.divide %%s, %%n : tensor<%1$dxf32>\n"
           "  %%mb = stablehlo.broadcast_in_dim %%mean, dims = [0] : (tensor<%1$dxf32>) -> tensor<%1$dx%2$dxf32>\n"
           "  %%d = stablehlo.subtract %%x, %%mb : tensor<%1$dx%2$dxf32>\n"
           "  %%d2 = stablehlo.multiply %%d, %%d : tensor<%1$dx%2$dxf32>\n"
           "  %%v = stablehlo.reduce(%%d2 init: %%z) applies stablehlo.add across dimensions = [1] : "
           "(tensor<%1$dx%2$dxf32>, tensor<f32>) -> tensor<%1$dxf32>\n"
           "  %%var = stablehlo.divide %%v, %%n : tensor<%1$dxf32>\n"
           "  %%ve = stablehlo.add %%var, %%eps : tensor<%1$dxf32>\n"
           "  %%rs = stablehlo.rsqrt %%ve : tensor<%1$dxf32>\n"
           "  %%rb = stablehlo.broadcast_in_dim %%rs, dims = [0] : (tensor<%1$dxf32>) -> tensor<%1$dx%2$dxf32>\n"
           "  %%y = stablehlo.multiply %%d, %%rb : tensor<%1$dx%2$dxf32>\n"
           "  %%gb = stablehlo.broadcast_in_dim %%g, dims = [1] : (tensor<%2$dxf32>) -> tensor<%1$dx%2$dxf32>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : (tensor<%2$dxf32>) -> tensor<%1$dx%2$dxf32>\n"
           "  %%yg = stablehlo.multiply %%y, %%gb : tensor<%1$dx%2$dxf32>\n"
           "  %%out = stablehlo.add %%yg, %%bb : tensor<%1$dx%2$dxf32>\n"
           "  return %%out : tensor<%1$dx%2$dxf32>\n"
           "}\n",
           r, c, head, gb);
}

/* |got| against the layer norm of |x| computed in double (g, b NULL: the
 * program's computed vectors). */
static void check_layer_norm(const float *got, const float *x, int r, int c, const float *g, const float *b,
                             double tolerance) {
  for (int i = 0; i < r; i++) {
    const float *xi = x + (size_t)i * (size_t)c;
    double mean = 0, var = 0;
    for (int j = 0; j < c; j++) mean += xi[j];
    mean /= c;
    for (int j = 0; j < c; j++) var += (xi[j] - mean) * (xi[j] - mean);
    double rs = 1.0 / sqrt(var / c + 1e-5);
    for (int j = 0; j < c; j++) {
      double gj = g ? g[j] : 0.5 * j, bj = b ? b[j] : 0.5 - j;
      double want = (xi[j] - mean) * rs * gj + bj, have = got[(size_t)i * (size_t)c + (size_t)j];
      if (fabs(have - want) > tolerance * (1.0 + fabs(want)))
        fail_msg("%dx%d layer norm [%d, %d]: %.9g, want %.9g", r, c, i, j, have, want);
    }
  }
}

/* A row kernel folds a maximum over its row in pieces, each its own chain
 * of steps, combined in order (emit_fusion.c, row_reduce_steps): the
 * value of the one chain of the unfused kernel, bit for bit, with NaNs of
 * two payloads in different pieces (the first one wins) and the sign of a
 * zero maximum (+0 in the last piece of a row of -0: x - max shows it). */
static void row_max_in_pieces(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<8x79xf32>) -> tensor<8x79xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
      "(tensor<8x79xf32>, tensor<f32>) -> tensor<8xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<8xf32>) -> tensor<8x79xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<8x79xf32>\n"
      "  return %d : tensor<8x79xf32>\n"
      "}\n";
  float x[632];
  fill(x, 632, 31);
  x[75] = 900.0f; /* row 0: its maximum in the last piece */
  uint32_t nan1 = 0x7fc00001u, nan2 = 0x7fc00002u;
  memcpy(&x[79 + 30], &nan1, 4); /* row 1: two NaNs, in the second and the fourth piece */
  memcpy(&x[79 + 70], &nan2, 4);
  for (int j = 0; j < 79; j++) x[158 + j] = x[237 + j] = -0.0f; /* rows 2, 3: zeros */
  x[158 + 78] = 0.0f; /* row 2: one +0, last */
  float *got = fused_equals_unfused(ctx, text, x, 632, 632, "float pc", 1);
  if (got[75] != 0.0f || got[0] != x[0] - 900.0f) fail_msg("row 0: %g, %g", got[75], got[0]);
  for (int j = 0; j < 79; j++)
    if (got[79 + j] == got[79 + j]) fail_msg("row 1 (NaNs): element %d is %g", j, got[79 + j]);
  if (!signbit(got[158]) || got[158] != 0.0f) fail_msg("row 2: -0 - max is %g, want -0 (the maximum +0)", got[158]);
  if (signbit(got[237]) || got[237] != 0.0f) fail_msg("row 3: -0 - max is %g, want +0 (the maximum -0)", got[237]);
  free(got);
}

/* A layer norm whose scale and shift are parameters (as models give
 * them): on CPU devices with subgroup shuffles the row kernel reads them
 * once per invocation before its row loop, every lane a share of the
 * words, and hands the elements round by subgroupShuffle (emit_fusion.c,
 * shared_vector); bit for bit the --no-fusion result, and the formula. */
static void layer_norm_parameters(void **state) {
  vkhlo_context_t *ctx = *state;
  static const int shapes[][2] = {{37, 256}, {20, 24}, {9, 80}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int r = shapes[s][0], c = shapes[s][1];
    char text[4096];
    layer_norm_program(text, sizeof text, r, c, true);
    size_t n = (size_t)r * (size_t)c;
    float *x = malloc(n * sizeof *x), *g = param_values(1, (size_t)c), *b = param_values(2, (size_t)c);
    assert_non_null(x);
    fill(x, n, 77u + (uint32_t)s);
    float *got = fused_equals_unfused(ctx, text, x, n, n, "= subgroupShuffle(", 1);
    check_layer_norm(got, x, r, c, g, b, 1e-3);
    free(got);
    free(x);
    free(g);
    free(b);
  }
}

/* Layer norms over R x C (mean, variance, normalize, scale and shift by
 * [C] parameters given here as constants of the program), a softmax with
 * NaN, infinities and signed zeros among its inputs, and a log-softmax
 * with two outputs: row kernels. */
static void row_kernels(void **state) {
  vkhlo_context_t *ctx = *state;
  static const int shapes[][2] = {{40, 13}, {41, 13}, {30, 12}, {67, 24}, {9, 256}, {5, 768}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int r = shapes[s][0], c = shapes[s][1];
    char text[4096];
    layer_norm_program(text, sizeof text, r, c, false);
    size_t n = (size_t)r * (size_t)c;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    fill(x, n, 21u + (uint32_t)s);
    /* rows of 8k elements are read and written by words, and so are
     * blocks of g = 8 / gcd(c, 8) rows where g divides the row count (13:
     * 8 rows, 12: 2); 41 rows of 13 go per element */
    int g = c % 2 ? 8 : c % 4 ? 4 : c % 8 ? 2 : 1;
    float *got = fused_equals_unfused(ctx, text, x, n, n, r % g == 0 ? "out0w.data[" : "(rb + ", 1);
    check_layer_norm(got, x, r, c, NULL, NULL, 1e-4); /* against the formula in double */
    free(got);
    free(x);
  }
  static const char softmax[] =
      "func.func @main(%x: tensor<6x79xf32>) -> tensor<6x79xf32> {\n"
      SUM_OF_EXP_6X79
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<6x79xf32>\n"
      "  return %y : tensor<6x79xf32>\n"
      "}\n";
  float x[474];
  fill(x, 474, 3);
  x[79 + 5] = 0.0f / 0.0f;      /* row 1: NaN (the whole row's softmax is NaN) */
  x[158 + 7] = 1.0f / 0.0f;     /* row 2: +inf (NaN from inf - inf) */
  x[237 + 3] = -1.0f / 0.0f;    /* row 3: -inf (its exp is 0) */
  for (int j = 0; j < 79; j++) /* row 4: zeros of both signs */
    x[316 + j] = j % 2 ? -0.0f : 0.0f;
  float *got = fused_equals_unfused(ctx, softmax, x, 474, 474, "(rb + 78)", 1);
  for (int j = 0; j < 79; j++) {
    if (got[79 + j] == got[79 + j]) fail_msg("softmax of a row with a NaN: element %d is %g", j, got[79 + j]);
    if (got[316 + j] != 1.0f / 79.0f && fabsf(got[316 + j] - 1.0f / 79.0f) > 1e-7f)
      fail_msg("softmax of zeros: element %d is %.9g", j, got[316 + j]);
  }
  if (got[237 + 3] != 0.0f) fail_msg("softmax of -inf: %g", got[237 + 3]);
  free(got);
  /* rows of 512 (attention over 512 keys): one kernel, read and written by
   * words; each row sums to 1 */
  static const char softmax512[] =
      "func.func @main(%x: tensor<3x512xf32>) -> tensor<3x512xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<3x512xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<3xf32>) -> tensor<3x512xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<3x512xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<3x512xf32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : (tensor<3x512xf32>, tensor<f32>) -> tensor<3xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<3xf32>) -> tensor<3x512xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<3x512xf32>\n"
      "  return %y : tensor<3x512xf32>\n"
      "}\n";
  float x512[1536];
  fill(x512, 1536, 5);
  got = fused_equals_unfused(ctx, softmax512, x512, 1536, 1536, "out0w.data[", 1);
  for (int i = 0; i < 3; i++) {
    double sum = 0;
    for (int j = 0; j < 512; j++) sum += got[i * 512 + j];
    if (sum < 0.9999 || sum > 1.0001) fail_msg("softmax row %d of 512 sums to %.9g", i, sum);
  }
  free(got);
  /* log-softmax: x - max - log(sum(exp(x - max))), and x - max as a
   * second output: the max, which an output needs, is a kernel of its own,
   * and both outputs come from one row kernel (its sum a row reduce) */
  static const char log_softmax[] =
      "func.func @main(%x: tensor<6x79xf32>) -> (tensor<6x79xf32>, tensor<6x79xf32>) {\n"
      SUM_OF_EXP_6X79
      "  %l = stablehlo.log %s : tensor<6xf32>\n"
      "  %lb = stablehlo.broadcast_in_dim %l, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n"
      "  %y = stablehlo.subtract %d, %lb : tensor<6x79xf32>\n"
      "  return %y, %d : tensor<6x79xf32>, tensor<6x79xf32>\n"
      "}\n";
  fill(x, 474, 4);
  got = fused_equals_unfused(ctx, log_softmax, x, 474, 948, "(rb + 78)", 2);
  for (int i = 0; i < 6; i++) { /* exp of a log-softmax row sums to 1 */
    double sum = 0;
    for (int j = 0; j < 79; j++) sum += exp(got[i * 79 + j]);
    if (sum < 0.9999 || sum > 1.0001) fail_msg("log-softmax row %d: exp sums to %.9g", i, sum);
  }
  free(got);
}

/* test_file_fn: appends the kernel's text without its // comments (heap)
 * to |user|, an array of two, counted in its third entry. */
static bool kernel_code(const char *path, const char *text, size_t size, void *user) {
  (void)path;
  char **code = user;
  intptr_t n = (intptr_t)code[2];
  assert_true(n < 2);
  char *w = malloc(size + 1);
  assert_non_null(w);
  code[n] = w;
  for (const char *r = text; *r;) {
    if (r[0] == '/' && r[1] == '/') {
      while (*r && *r != '\n') r++;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
  code[2] = (char *)(n + 1);
  return true;
}

/* Two softmaxes of the same shape (two layers of a model): their kernels
 * are the same GLSL but for comments, so SPIR-V is compiled once for both
 * (the reducers' functions are named without their computations' numbers). */
static void layers_share_kernels(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<6x79xf32>, %w: tensor<6x79xf32>) -> (tensor<6x79xf32>, tensor<6x79xf32>) {\n"
      SUM_OF_EXP_6X79
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<6x79xf32>\n"
      "  %m2 = stablehlo.reduce(%w init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
      "(tensor<6x79xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "  %mb2 = stablehlo.broadcast_in_dim %m2, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n"
      "  %d2 = stablehlo.subtract %w, %mb2 : tensor<6x79xf32>\n"
      "  %e2 = stablehlo.exponential %d2 : tensor<6x79xf32>\n"
      "  %s2 = stablehlo.reduce(%e2 init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<6x79xf32>, tensor<f32>) -> tensor<6xf32>\n"
      "  %sb2 = stablehlo.broadcast_in_dim %s2, dims = [0] : (tensor<6xf32>) -> tensor<6x79xf32>\n"
      "  %y2 = stablehlo.divide %e2, %sb2 : tensor<6x79xf32>\n"
      "  return %y, %y2 : tensor<6x79xf32>, tensor<6x79xf32>\n"
      "}\n";
  char dir[] = "/tmp/vkhlo_reduce_testXXXXXX";
  vkhlo_executable_t *exe = test_compile_dumped(ctx, text, dir);
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  vkhlo_executable_destroy(exe);
  if (words_expected(ctx)) { /* row kernels: one per softmax */
    assert_int_equal(stats.kernels, 2);
    char *code[3] = {NULL, NULL, NULL};
    assert_int_equal(test_for_each_file(dir, ".comp", kernel_code, code), 2);
    if (strcmp(code[0], code[1]) != 0) fail_msg("the two softmax kernels differ beyond comments");
    free(code[0]);
    free(code[1]);
  }
  test_remove_dir(dir);
}

/* Reductions longer than one kernel loop should run (codegen/expand.c,
 * "long reductions": split into a chain of reduces).  Before the split,
 * lavapipe stopped each invocation's loops after 65535 iterations, so a
 * sum of 2^20 ones came out as 65535 unfused and 524280 fused.  Sums of
 * small integers are exact in any order, so they are checked for equality;
 * lengths with no near factor (prime) take the init-value padding. */
static void long_reductions(void **state) {
  vkhlo_context_t *ctx = *state;
  static const struct {
    const char *shape, *dims, *result;
    int64_t n, m; /* input and result elements */
  } cases[] = {
      {"1048576", "0", "", 1048576, 1},         /* 128 x 8192 */
      {"100003", "0", "", 100003, 1},           /* prime: padded to 13 x 7693 */
      {"70001x3", "0", "3x", 210003, 3},        /* a column sum, padded */
      {"300x2x300", "0, 2", "2x", 180000, 2},   /* two dimensions: two reduces */
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<%sxf32>) -> tensor<%sf32> {\n"
             "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
             "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.add across dimensions = [%s] : "
             "(tensor<%sxf32>, tensor<f32>) -> tensor<%sf32>\n"
             "  return %%s : tensor<%sf32>\n"
             "}\n",
             cases[c].shape, cases[c].result, cases[c].dims, cases[c].shape, cases[c].result, cases[c].result);
    size_t n = (size_t)cases[c].n, m = (size_t)cases[c].m;
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u >> 7) % 7); /* 0..6 */
    float *got = fused_equals_unfused(ctx, text, x, n, m, "", 0);
    double want[3] = {0, 0, 0};
    for (size_t i = 0; i < n; i++) {
      size_t r = c == 2 ? i % 3 : c == 3 ? i / 300 % 2 : 0;
      want[r] += x[i];
    }
    for (size_t r = 0; r < m; r++)
      if ((double)got[r] != want[r]) fail_msg("%s result %zu: %.9g, want %.9g", text, r, got[r], want[r]);
    free(got);
    free(x);
  }
}

/* A group norm with SiLU as diffusion UNets export it (NCHW): x reshaped
 * to [N, groups, C / groups * H * W], mean and variance there, the
 * normalized values reshaped back, then scale, shift and x * logistic(x).
 * Fused and unfused bit-identical; the normalization's wide kernel reads x
 * through both reshapes as its own words ("(p0_0 - ": the elemental
 * emitter's linear_memo); within 1e-4 of a double reference here. */
static void group_norm(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { N = 2, C = 32, HW = 64, G = 8, S = C / G * HW };
  static const char text[] =
      "func.func @main(%x: tensor<2x32x8x8xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x32x8x8xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %n = stablehlo.constant dense<256.0> : tensor<2x8xf32>\n"
      "  %eps = stablehlo.constant dense<1.0e-5> : tensor<2x8xf32>\n"
      "  %r = stablehlo.reshape %x : (tensor<2x32x8x8xf32>) -> tensor<2x8x256xf32>\n"
      "  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x8x256xf32>, tensor<f32>) -> tensor<2x8xf32>\n"
      "  %mean = stablehlo.divide %s, %n : tensor<2x8xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x256xf32>\n"
      "  %d = stablehlo.subtract %r, %mb : tensor<2x8x256xf32>\n"
      "  %d2 = stablehlo.multiply %d, %d : tensor<2x8x256xf32>\n"
      "  %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [2] : (tensor<2x8x256xf32>, tensor<f32>) -> tensor<2x8xf32>\n"
      "  %var = stablehlo.divide %v, %n : tensor<2x8xf32>\n"
      "  %ve = stablehlo.add %var, %eps : tensor<2x8xf32>\n"
      "  %rs = stablehlo.rsqrt %ve : tensor<2x8xf32>\n"
      "  %rb = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<2x8xf32>) -> tensor<2x8x256xf32>\n"
      "  %y = stablehlo.multiply %d, %rb : tensor<2x8x256xf32>\n"
      "  %y4 = stablehlo.reshape %y : (tensor<2x8x256xf32>) -> tensor<2x32x8x8xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<32xf32>) -> tensor<2x32x8x8xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<32xf32>) -> tensor<2x32x8x8xf32>\n"
      "  %yg = stablehlo.multiply %y4, %gb : tensor<2x32x8x8xf32>\n"
      "  %o = stablehlo.add %yg, %bb : tensor<2x32x8x8xf32>\n"
      "  %sg = stablehlo.logistic %o : tensor<2x32x8x8xf32>\n"
      "  %silu = stablehlo.multiply %o, %sg : tensor<2x32x8x8xf32>\n"
      "  return %silu : tensor<2x32x8x8xf32>\n"
      "}\n";
  size_t n = (size_t)N * C * HW;
  float *x = malloc(n * sizeof *x);
  assert_non_null(x);
  fill(x, n, 7u);
  for (size_t i = 0; i < n; i++) x[i] = x[i] > 10.0f || x[i] < -10.0f ? x[i] / 1000.0f : x[i]; /* no outliers */
  float *got = fused_equals_unfused(ctx, text, x, n, n, "(p0_0 - ", 0);
  float *g = param_values(1, C), *b = param_values(2, C);
  for (int i = 0; i < N; i++)
    for (int q = 0; q < G; q++) {
      const float *v = x + (size_t)(i * G + q) * S;
      double mean = 0, var = 0;
      for (int j = 0; j < S; j++) mean += v[j];
      mean /= S;
      for (int j = 0; j < S; j++) var += (v[j] - mean) * (v[j] - mean);
      var /= S;
      for (int j = 0; j < S; j++) {
        int c = q * (C / G) + j / HW;
        double o = (v[j] - mean) / sqrt(var + 1e-5) * g[c] + b[c], want = o / (1 + exp(-o));
        double have = got[(size_t)(i * G + q) * S + (size_t)j];
        if (fabs(have - want) > 1e-4 * (1 + fabs(want)))
          fail_msg("n %d group %d element %d: %.9g, want %.9g", i, q, j, have, want);
      }
    }
  free(g);
  free(b);
  free(got);
  free(x);
}

/* Column reductions (reduces that keep the input's minor-most dimension)
 * in wide kernels (emit_fusion.c, emit_reduce_lanes): on CPU devices an
 * invocation reduces 8 (or 4) adjacent columns, reading each step's
 * elements as one word.  Sums over the rows of 1024 x 512, over the outer
 * dimension of 300 x 4 x 260 (4 lanes: 260 is no multiple of 8), over two
 * dimensions of 6 x 50 x 512, a maximum, a sum of x * y + b (two fused
 * parameters read by words, b broadcast along the columns) times a
 * per-column scale (an epilogue at the lanes' indices); fused and unfused
 * bit-identical, and each against an exact reference here where
 * integer-valued. */
static void column_reductions(void **state) {
  vkhlo_context_t *ctx = *state;
  static const struct {
    const char *shape, *dims, *result, *body;
    int64_t n, m;
  } cases[] = {
      {"1024x512", "0", "512", "add", 1024 * 512, 512},
      {"300x4x260", "0", "4x260", "add", 300 * 4 * 260, 4 * 260},
      {"6x50x512", "0, 1", "512", "add", 6 * 50 * 512, 512},
      {"1024x512", "0", "512", "maximum", 1024 * 512, 512},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<%sxf32>) -> tensor<%sxf32> {\n"
             "  %%z = stablehlo.constant dense<%s> : tensor<f32>\n"
             "  %%s = stablehlo.reduce(%%x init: %%z) applies stablehlo.%s across dimensions = [%s] : "
             "(tensor<%sxf32>, tensor<f32>) -> tensor<%sxf32>\n"
             "  return %%s : tensor<%sxf32>\n"
             "}\n",
             cases[c].shape, cases[c].result, strcmp(cases[c].body, "add") ? "0xFF800000" : "0.0", cases[c].body,
             cases[c].dims, cases[c].shape, cases[c].result, cases[c].result);
    size_t n = (size_t)cases[c].n, m = (size_t)cases[c].m;
    float *x = malloc(n * sizeof *x);
    double *want = calloc(m, sizeof *want);
    assert_true(x && want);
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u >> 7) % 13) - 6.0f; /* -6..6 */
    bool max = strcmp(cases[c].body, "add") != 0;
    for (size_t i = 0; i < m; i++) want[i] = max ? -1e30 : 0;
    for (size_t i = 0; i < n; i++) {
      size_t r = c == 1 ? i % m : i % 512;
      want[r] = max ? (x[i] > want[r] ? x[i] : want[r]) : want[r] + x[i];
    }
    float *got = fused_equals_unfused(ctx, text, x, n, m, c == 1 ? "u64vec2 q" : "u64vec4 q", 1);
    for (size_t r = 0; r < m; r++)
      if ((double)got[r] != want[r]) fail_msg("%s column %zu: %.9g, want %.9g", text, r, got[r], want[r]);
    free(got);
    free(want);
    free(x);
  }
  /* producers (one at the column's index) and an epilogue:
   * sum over rows of (x * y + b[column]), times y[0, :] */
  static const char fused[] =
      "func.func @main(%x: tensor<64x512xf32>, %y: tensor<64x512xf32>, %b: tensor<512xf32>) -> tensor<512xf32> {\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<512xf32>) -> tensor<64x512xf32>\n"
      "  %p = stablehlo.multiply %x, %y : tensor<64x512xf32>\n"
      "  %q = stablehlo.add %p, %bb : tensor<64x512xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%q init: %z) applies stablehlo.add across dimensions = [0] : "
      "(tensor<64x512xf32>, tensor<f32>) -> tensor<512xf32>\n"
      "  %y0 = stablehlo.slice %y [0:1, 0:512] : (tensor<64x512xf32>) -> tensor<1x512xf32>\n"
      "  %y1 = stablehlo.reshape %y0 : (tensor<1x512xf32>) -> tensor<512xf32>\n"
      "  %r = stablehlo.multiply %s, %y1 : tensor<512xf32>\n"
      "  return %r : tensor<512xf32>\n"
      "}\n";
  float *x = malloc(64 * 512 * sizeof *x);
  assert_non_null(x);
  fill(x, 64 * 512, 7);
  float *got = fused_equals_unfused(ctx, fused, x, 64 * 512, 512, "u64vec4 q", 1);
  free(got);
  free(x);
}

/* A long argmax: a variadic reduce (value, index) over 200003 elements,
 * padded with its init values (-inf, 0); the largest value is at two
 * places and the reducer keeps the smaller index, so the first one wins in
 * any schedule. */
/* The reducer of an argmax over (f32 values, i32 indices): the larger
 * value, the lower index on ties. */
#define ARGMAX_REDUCER \
  "   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>) {\n" \
  "    %gt = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" \
  "    %eq = stablehlo.compare EQ, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n" \
  "    %lt = stablehlo.compare LT, %ai, %bi : (tensor<i32>, tensor<i32>) -> tensor<i1>\n" \
  "    %tie = stablehlo.and %eq, %lt : tensor<i1>\n" \
  "    %first = stablehlo.or %gt, %tie : tensor<i1>\n" \
  "    %m = stablehlo.select %first, %a, %b : tensor<i1>, tensor<f32>\n" \
  "    %mi = stablehlo.select %first, %ai, %bi : tensor<i1>, tensor<i32>\n" \
  "    stablehlo.return %m, %mi : tensor<f32>, tensor<i32>\n" \
  "  }\n"

static void long_argmax(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<200003xf32>) -> (tensor<f32>, tensor<i32>) {\n"
      "  %i = stablehlo.iota dim = 0 : tensor<200003xi32>\n"
      "  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %zi = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.reduce(%x init: %z), (%i init: %zi) across dimensions = [0] : "
      "(tensor<200003xf32>, tensor<200003xi32>, tensor<f32>, tensor<i32>) -> (tensor<f32>, tensor<i32>)\n"
      ARGMAX_REDUCER
      "  return %r#0, %r#1 : tensor<f32>, tensor<i32>\n"
      "}\n";
  size_t n = 200003;
  float *x = malloc(n * sizeof *x);
  assert_non_null(x);
  fill(x, n, 21);
  x[150001] = x[190000] = 600.0f; /* fill's largest values are below 500 */
  float *got = fused_equals_unfused(ctx, text, x, n, 2, "", 0);
  int32_t index;
  memcpy(&index, &got[1], sizeof index);
  if (got[0] != 600.0f || index != 150001) fail_msg("argmax: %.9g at %d, want 600 at 150001", got[0], index);
  free(got);
  free(x);
}

/* A reduce_window over one whole dimension padded by n - 1 in front
 * (behind) is a prefix (suffix) scan, JAX's cumsum/cummax; past 256
 * elements codegen/expand.c runs it in blocks of 64 (several dispatches)
 * where the init is the body's identity.  |op| is the body's op, |init|
 * its init value, [rows, cols] the operand, scanned along |dim|. */
static char *scan_text(const char *op, const char *init, int rows, int cols, int dim, bool reverse) {
  char *text = malloc(2048);
  assert_non_null(text);
  int n = dim ? cols : rows;
  char pad[64];
  snprintf(pad, sizeof pad, dim ? "[0, 0], [%d, %d]" : "[%d, %d], [0, 0]", reverse ? 0 : n - 1, reverse ? n - 1 : 0);
  snprintf(text, 2048,
           "func.func @main(%%x: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
           "  %%init = stablehlo.constant dense<%s> : tensor<f32>\n"
           "  %%r = \"stablehlo.reduce_window\"(%%x, %%init) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%s = stablehlo.%s %%a, %%b : tensor<f32>\n"
           "    stablehlo.return %%s : tensor<f32>\n"
           "  }) {window_dimensions = array<i64: %d, %d>, padding = dense<[%s]> : tensor<2x2xi64>} :"
           " (tensor<%dx%dxf32>, tensor<f32>) -> tensor<%dx%dxf32>\n"
           "  return %%r : tensor<%dx%dxf32>\n}\n",
           rows, cols, rows, cols, init, op, dim ? 1 : n, dim ? n : 1, pad, rows, cols, rows, cols, rows, cols);
  return text;
}

/* Runs the scan fused and unfused (bit-identical) and checks it against a
 * sequential scan here, in double (integer-valued sums: exact in any
 * order; maximum exact anyway), with |extra| added to element i of each
 * line (the non-identity init's contribution); returns the dispatches. */
static int64_t check_scan(vkhlo_context_t *ctx, const char *op, const char *init, int rows, int cols, int dim,
                          bool reverse, const float *x, double (*extra)(int n, int i)) {
  char *text = scan_text(op, init, rows, cols, dim, reverse);
  size_t count = (size_t)rows * cols;
  float *got = malloc(count * sizeof *got), *unfused = malloc(count * sizeof *got);
  assert_true(got && unfused);
  int64_t dispatches = run(ctx, text, false, x, count, got, count, NULL);
  run(ctx, text, true, x, count, unfused, count, NULL);
  assert_memory_equal(got, unfused, count * sizeof *got);
  bool max = strcmp(op, "maximum") == 0;
  int n = dim ? cols : rows, lines = dim ? rows : cols;
  for (int l = 0; l < lines; l++) {
    double acc = max ? -INFINITY : 0;
    for (int step = 0; step < n; step++) {
      int i = reverse ? n - 1 - step : step;
      size_t at = dim ? (size_t)l * cols + i : (size_t)i * cols + l;
      acc = max ? fmax(acc, x[at]) : acc + x[at];
      double want = acc + (extra ? extra(n, step) : 0);
      if ((double)got[at] != want) fail_msg("%s line %d element %d: %.9g, want %.9g", text, l, i, got[at], want);
    }
  }
  free(text), free(got), free(unfused);
  return dispatches;
}

static double init_one(int n, int step) { return n - step; } /* the init once, n - 1 - step padding inits */

static void prefix_scans(void **state) {
  vkhlo_context_t *ctx = *state;
  size_t count = 70000 * 2;
  float *x = malloc(count * sizeof *x);
  assert_non_null(x);
  uint32_t seed = 5;
  for (size_t i = 0; i < count; i++) x[i] = (float)((int)((seed = seed * 1664525u + 1013904223u) >> 28) - 8);
  /* cumsum along rows of 5000 (blocks, blocks of block totals) */
  assert_true(check_scan(ctx, "add", "0.0", 3, 5000, 1, false, x, NULL) > 1);
  /* a reverse cumsum down columns of 3000 */
  assert_true(check_scan(ctx, "add", "0.0", 3000, 2, 0, true, x, NULL) > 1);
  /* 70000 long: the direct window was refused on lavapipe */
  assert_true(check_scan(ctx, "add", "0.0", 2, 70000, 1, false, x, NULL) > 1);
  /* reverse cummax (init -inf) of values of mixed magnitudes */
  fill(x, count, 17);
  assert_true(check_scan(ctx, "maximum", "0xFF800000", 2, 4000, 1, true, x, NULL) > 1);
  /* an init that is not the identity: the direct window, one dispatch */
  for (size_t i = 0; i < count; i++) x[i] = (float)(i % 7) - 3;
  assert_int_equal(check_scan(ctx, "add", "1.0", 2, 300, 1, false, x, init_one), 1);
  free(x);
}

/* select_and_scatter (JAX's max-pooling gradient), which codegen/expand.c
 * runs as select_window (each window's selection once) and
 * scatter_selected: overlapping 3 x 3 windows of stride 2 with padding
 * over an NHWC operand full of ties (the first of equal maxima is the
 * selected one), summed into the covering elements, and a min selection
 * (LE) scattered by maximum from an init of -1, both against the spec's
 * loop here (each window's selection, then the scatter in row-major
 * source order): bit for bit, and the two kernels in the dump. */
static void check_select_and_scatter(vkhlo_context_t *ctx, const char *select, const char *scatter, float init,
                                     int C) {
  enum { N = 2, H = 9, W = 12, SH = 5, SW = 6 };
  char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%dx%dx%dxf32>, %%s: tensor<%dx%dx%dx%dxf32>) -> tensor<%dx%dx%dx%dxf32> {\n"
           "  %%i = stablehlo.constant dense<%.9g> : tensor<f32>\n"
           "  %%r = \"stablehlo.select_and_scatter\"(%%x, %%s, %%i) ({\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%c = stablehlo.compare %s, %%a, %%b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
           "    stablehlo.return %%c : tensor<i1>\n"
           "  }, {\n"
           "  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n"
           "    %%c = stablehlo.%s %%a, %%b : tensor<f32>\n"
           "    stablehlo.return %%c : tensor<f32>\n"
           "  }) {window_dimensions = array<i64: 1, 3, 3, 1>, window_strides = array<i64: 1, 2, 2, 1>,"
           " padding = dense<[[0, 0], [1, 1], [1, 0], [0, 0]]> : tensor<4x2xi64>}"
           " : (tensor<%dx%dx%dx%dxf32>, tensor<%dx%dx%dx%dxf32>, tensor<f32>) -> tensor<%dx%dx%dx%dxf32>\n"
           "  return %%r : tensor<%dx%dx%dx%dxf32>\n}\n",
           N, H, W, C, N, SH, SW, C, N, H, W, C, init, select, scatter, N, H, W, C, N, SH, SW, C, N, H, W, C, N, H, W,
           C);
  size_t n = (size_t)N * H * W * C, ns = (size_t)N * SH * SW * C;
  float *x = malloc(n * sizeof *x), *got = malloc(n * sizeof *got), *want = malloc(n * sizeof *want);
  float *src = param_values(1, ns);
  assert_true(x && got && want);
  for (size_t i = 0; i < n; i++) x[i] = (float)((i * 7 + i / 13) % 5) - 2.0f; /* ties in every window */
  for (size_t i = 0; i < n; i++) want[i] = init;
  bool ge = strcmp(select, "GE") == 0, add = strcmp(scatter, "add") == 0;
  for (int b = 0; b < N; b++)
    for (int sy = 0; sy < SH; sy++)
      for (int sx = 0; sx < SW; sx++)
        for (int c = 0; c < C; c++) {
          long sel = -1;
          for (int wy = 0; wy < 3; wy++)
            for (int wx = 0; wx < 3; wx++) {
              int y = sy * 2 + wy - 1, xx = sx * 2 + wx - 1;
              if (y < 0 || y >= H || xx < 0 || xx >= W) continue;
              long e = (((long)b * H + y) * W + xx) * C + c;
              bool keep = sel >= 0 && (ge ? x[sel] >= x[e] : x[sel] <= x[e]);
              if (!keep) sel = e;
            }
          if (sel < 0) continue;
          float v = src[(((size_t)b * SH + sy) * SW + sx) * C + c];
          want[sel] = add ? want[sel] + v : (want[sel] > v ? want[sel] : v);
        }
  char dir[] = "/tmp/vkhlo_reduce_testXXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_int_equal(run(ctx, text, false, x, n, got, n, dir), 2);
  assert_true(test_dump_contains(dir, "select_window") && test_dump_contains(dir, "scatter_selected"));
  /* 8 channels: on CPU devices the scatter reads words of 8 */
  if (words_expected(ctx) && C % 8 == 0 && !test_dump_contains(dir, "in0w_at("))
    fail_msg("scatter_selected reads no words:\n%s", text);
  test_remove_dir(dir);
  for (size_t i = 0; i < n; i++)
    if (memcmp(&got[i], &want[i], sizeof(float)) != 0)
      fail_msg("element %zu: %.9g, want %.9g\n%s", i, got[i], want[i], text);
  free(x);
  free(got);
  free(want);
  free(src);
}

static void select_and_scatter(void **state) {
  check_select_and_scatter(*state, "GE", "add", 0.0f, 5);
  check_select_and_scatter(*state, "LE", "maximum", -1.0f, 5);
  check_select_and_scatter(*state, "GE", "add", 0.0f, 8);
  check_select_and_scatter(*state, "LE", "maximum", -1.0f, 16);
}

/* Large windows (codegen/expand.c, "large windows"): a max pool with a
 * 200 x 150 window (30000 elements per result, in two stages), strided
 * and padded, and a sum of 100000 integer-valued floats in one window
 * (two stages of factors, exact in any order), against loops here; on
 * lavapipe both were refused (65535 iterations per invocation). */
static void large_windows(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { N = 2, H = 300, W = 300, C = 3, OH = 3, OW = 3, L = 100000 };
  static const char pool[] =
      "func.func @main(%x: tensor<2x300x300x3xf32>) -> tensor<2x3x3x3xf32> {\n"
      "  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %r = \"stablehlo.reduce_window\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.maximum %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 1, 200, 150, 1>, window_strides = array<i64: 1, 100, 100, 1>,"
      " padding = dense<[[0, 0], [0, 100], [50, 0], [0, 0]]> : tensor<4x2xi64>}"
      " : (tensor<2x300x300x3xf32>, tensor<f32>) -> tensor<2x3x3x3xf32>\n"
      "  return %r : tensor<2x3x3x3xf32>\n}\n";
  size_t n = (size_t)N * H * W * C;
  float *x = malloc(n * sizeof *x), got[N * OH * OW * C];
  assert_non_null(x);
  fill(x, n, 31);
  run(ctx, pool, false, x, n, got, N * OH * OW * C, NULL);
  for (int b = 0; b < N; b++)
    for (int oy = 0; oy < OH; oy++)
      for (int ox = 0; ox < OW; ox++)
        for (int c = 0; c < C; c++) {
          float m = -INFINITY;
          for (int y = oy * 100; y < oy * 100 + 200; y++)
            for (int xx = ox * 100 - 50; xx < ox * 100 + 100; xx++)
              if (y < H && xx >= 0 && xx < W) m = fmaxf(m, x[(((size_t)b * H + y) * W + xx) * C + c]);
          float g = got[((b * OH + oy) * OW + ox) * C + c];
          if (memcmp(&g, &m, sizeof g) != 0) fail_msg("pool at (%d, %d, %d, %d): %.9g, want %.9g", b, oy, ox, c, g, m);
        }
  static const char sum[] =
      "func.func @main(%x: tensor<100000xf32>) -> tensor<1xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = \"stablehlo.reduce_window\"(%x, %z) ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) {window_dimensions = array<i64: 100000>, window_strides = array<i64: 100000>}"
      " : (tensor<100000xf32>, tensor<f32>) -> tensor<1xf32>\n"
      "  return %r : tensor<1xf32>\n}\n";
  double want = 0;
  for (int i = 0; i < L; i++) want += x[i] = (float)(i % 37) - 18.0f;
  float total;
  run(ctx, sum, false, x, L, &total, 1, NULL);
  if ((double)total != want) fail_msg("window sum %.9g, want %.9g", total, want);
  free(x);
}

/* Kernels whose loops would run longer than the device allows are refused
 * by name: on lavapipe (65535 iterations per invocation in all) an fft of
 * the prime length 65537 (no four-step split: a direct transform, one loop
 * over the input per output) compiles to UNIMPLEMENTED instead of wrong
 * values; on other devices it compiles.  (A cholesky of 100 x 100, the
 * earlier example, now runs in blocks: tests/e2e_linalg.c.) */
static void loop_limit_refused(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%a: tensor<65537xcomplex<f32>>) -> tensor<65537xcomplex<f32>> {\n"
      "  %r = stablehlo.fft %a, type = FFT, length = [65537] : (tensor<65537xcomplex<f32>>) -> "
      "tensor<65537xcomplex<f32>>\n"
      "  return %r : tensor<65537xcomplex<f32>>\n"
      "}\n";
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  if (strncmp(d.name, "llvmpipe", 8) != 0) {
    vkhlo_executable_destroy(test_compile(ctx, text));
    return;
  }
  test_expect_compile_error(ctx, text, "limit.mlir", VKHLO_STATUS_UNIMPLEMENTED,
                            "limit.mlir:2:3: stablehlo.fft runs 65537 loop iterations per invocation", (const char *)NULL);
}

/* Subgroup reductions (codegen/emit_fusion.c, "Subgroup reductions"; a
 * GPU's default, forced here with VKHLO_REDUCE=subgroup): a subgroup per
 * output element, each lane folding every S-th element, the lanes'
 * partials combined by butterfly.  A softmax and a layer norm over rows of
 * 300 and 768 (two kernels each: no row kernels then), a row argmax with
 * ties (variadic: the lowest index must win), a column sum with an init
 * of 2.5 over 40 columns and a maximum over a whole [5, 40] matrix, each
 * fused in that
 * context against the unfused program (the per-element loop) in the
 * default one: maxima, argmax and the softmax's max exact, sums within
 * f32 rounding of another order; the layer norm also against the formula.
 * A column sum over 9000 columns keeps one invocation per output (its
 * neighbours' loads are side by side already): bit for bit the loop's.
 * On CPU devices (lavapipe has subgroup shuffles) the kernels must hold
 * the lanes' butterfly (subgroupShuffleXor). */
static vkhlo_context_t *subgroup_context(void) { return test_context_with_env("VKHLO_REDUCE", "subgroup"); }

/* |text| fused in |sg| (on CPU devices its kernels must split a reduce
 * over the lanes, or with !|lanes_wanted| must not) against unfused in
 * |ctx|: within |tol| relative (0: identical). */
static float *lanes_match_serial(vkhlo_context_t *sg, vkhlo_context_t *ctx, const char *text, const float *x,
                                 size_t n, size_t m, double tol, bool lanes_wanted) {
  float *fused = malloc(m * sizeof *fused), *serial = malloc(m * sizeof *serial);
  assert_true(fused && serial);
  char dir[] = "/tmp/vkhlo_reduce_testXXXXXX";
  assert_non_null(mkdtemp(dir));
  run(sg, text, false, x, n, fused, m, dir);
  bool lanes = test_dump_contains(dir, "subgroupShuffleXor(");
  test_remove_dir(dir);
  if (lanes != lanes_wanted && words_expected(ctx))
    fail_msg("%s reduce split over a subgroup's lanes:\n%s", lanes ? "a" : "no", text);
  run(ctx, text, true, x, n, serial, m, NULL);
  for (size_t i = 0; i < m; i++) {
    bool same = memcmp(&fused[i], &serial[i], sizeof(float)) == 0;
    if (!same && (tol == 0 || !(fabs((double)fused[i] - serial[i]) <= tol * (1.0 + fabs((double)serial[i])))))
      fail_msg("element %zu: subgroup lanes %.9g, serial %.9g\n%s", i, fused[i], serial[i], text);
  }
  free(serial);
  return fused;
}

static void subgroup_reductions(void **state) {
  vkhlo_context_t *ctx = *state, *sg = subgroup_context();
  static const char softmax[] =
      "func.func @main(%x: tensor<64x300xf32>) -> tensor<64x300xf32> {\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [1] : "
      "(tensor<64x300xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x300xf32>\n"
      "  %d = stablehlo.subtract %x, %mb : tensor<64x300xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<64x300xf32>\n"
      "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] : "
      "(tensor<64x300xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x300xf32>\n"
      "  %y = stablehlo.divide %e, %sb : tensor<64x300xf32>\n"
      "  return %y : tensor<64x300xf32>\n"
      "}\n";
  float *x = malloc(40 * 768 * sizeof *x);
  assert_non_null(x);
  fill(x, 64 * 300, 9);
  free(lanes_match_serial(sg, ctx, softmax, x, 64 * 300, 64 * 300, 1e-6, true));
  char text[4096];
  layer_norm_program(text, sizeof text, 40, 768, false);
  fill(x, 40 * 768, 10);
  float *got = lanes_match_serial(sg, ctx, text, x, 40 * 768, 40 * 768, 1e-3, true); /* y * g + b cancels */
  check_layer_norm(got, x, 40, 768, NULL, NULL, 1e-3);
  free(got);
  static const char argmax[] =
      "func.func @main(%x: tensor<16x1000xf32>) -> (tensor<16xf32>, tensor<16xi32>) {\n"
      "  %i = stablehlo.iota dim = 1 : tensor<16x1000xi32>\n"
      "  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %zi = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.reduce(%x init: %z), (%i init: %zi) across dimensions = [1] : "
      "(tensor<16x1000xf32>, tensor<16x1000xi32>, tensor<f32>, tensor<i32>) -> (tensor<16xf32>, tensor<16xi32>)\n"
      ARGMAX_REDUCER
      "  return %r#0, %r#1 : tensor<16xf32>, tensor<16xi32>\n"
      "}\n";
  fill(x, 16 * 1000, 11);
  for (int r = 0; r < 16; r++) /* the row's maximum twice: at 3r + 5 and later */
    x[r * 1000 + 3 * r + 5] = x[r * 1000 + 999 - 7 * r] = 600.0f;
  got = lanes_match_serial(sg, ctx, argmax, x, 16 * 1000, 32, 0, true);
  for (int r = 0; r < 16; r++) {
    int32_t index;
    memcpy(&index, &got[16 + r], sizeof index);
    if (got[r] != 600.0f || index != 3 * r + 5) fail_msg("row %d: %.9g at %d, want 600 at %d", r, got[r], index, 3 * r + 5);
  }
  free(got);
  static const char columns[] =
      "func.func @main(%x: tensor<300x40xf32>) -> tensor<40xf32> {\n"
      "  %z = stablehlo.constant dense<2.5> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : "
      "(tensor<300x40xf32>, tensor<f32>) -> tensor<40xf32>\n"
      "  return %s : tensor<40xf32>\n"
      "}\n";
  fill(x, 300 * 40, 12);
  got = lanes_match_serial(sg, ctx, columns, x, 300 * 40, 40, 1e-5, true);
  for (int j = 0; j < 40; j++) {
    double want = 2.5;
    for (int i = 0; i < 300; i++) want += x[i * 40 + j];
    if (fabs(got[j] - want) > 1e-5 * (1 + fabs(want))) fail_msg("column %d: %.9g, want %.9g", j, got[j], want);
  }
  free(got);
  static const char many_columns[] = /* 9000 columns: one invocation each, loads side by side */
      "func.func @main(%x: tensor<40x9000xf32>) -> tensor<9000xf32> {\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : "
      "(tensor<40x9000xf32>, tensor<f32>) -> tensor<9000xf32>\n"
      "  return %s : tensor<9000xf32>\n"
      "}\n";
  float *xl = malloc(40 * 9000 * sizeof *xl);
  assert_non_null(xl);
  fill(xl, 40 * 9000, 14);
  free(lanes_match_serial(sg, ctx, many_columns, xl, 40 * 9000, 9000, 0, false));
  free(xl);
  static const char whole[] =
      "func.func @main(%x: tensor<5x40xf32>) -> tensor<f32> {\n"
      "  %z = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.maximum across dimensions = [0, 1] : "
      "(tensor<5x40xf32>, tensor<f32>) -> tensor<f32>\n"
      "  return %s : tensor<f32>\n"
      "}\n";
  fill(x, 200, 13);
  x[137] = 777.0f;
  got = lanes_match_serial(sg, ctx, whole, x, 200, 1, 0, true);
  if (got[0] != 777.0f) fail_msg("maximum %.9g, want 777", got[0]);
  free(got);
  free(x);
  int messages = vkhlo_context_validation_message_count(sg);
  vkhlo_context_destroy(sg);
  assert_int_equal(messages, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(row_sums),
      cmocka_unit_test(two_dimensions),
      cmocka_unit_test(softmax_and_variance),
      cmocka_unit_test(row_kernels),
      cmocka_unit_test(row_max_in_pieces),
      cmocka_unit_test(layer_norm_parameters),
      cmocka_unit_test(layers_share_kernels),
      cmocka_unit_test(column_reductions),
      cmocka_unit_test(long_reductions),
      cmocka_unit_test(group_norm),
      cmocka_unit_test(long_argmax),
      cmocka_unit_test(prefix_scans),
      cmocka_unit_test(select_and_scatter),
      cmocka_unit_test(large_windows),
      cmocka_unit_test(loop_limit_refused),
      cmocka_unit_test(subgroup_reductions),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
