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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

/* Compiles |text| (fused or not), runs it on |x| (|n| floats, the only
 * parameter) and reads the single f32 result into |out| (|m| floats).
 * With |words_dir| the kernels are dumped there. */
static void run(vkhlo_context_t *ctx, const char *text, bool no_fusion, const float *x, size_t n, float *out,
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
  vkhlo_buffer_t *arg, *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &arg));
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, m * sizeof *out));
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
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

/* Runs |text| fused (checking the word path ran where expected) and
 * unfused; the two results must be identical; returns the fused one. */
static float *fused_equals_unfused(vkhlo_context_t *ctx, const char *text, const float *x, size_t n, size_t m) {
  float *fused = malloc(m * sizeof *fused), *unfused = malloc(m * sizeof *unfused);
  assert_true(fused && unfused);
  char dir[] = "/tmp/vkhlo_reduce_testXXXXXX";
  assert_non_null(mkdtemp(dir));
  run(ctx, text, false, x, n, fused, m, dir);
  /* the word loop's loads: "u64vec4 qN = in<k>w.data[rwM];" */
  if (words_expected(ctx) && !test_dump_contains(dir, "w.data[rw"))
    fail_msg("the fused reduce did not read words:\n%s", text);
  test_remove_dir(dir);
  run(ctx, text, true, x, n, unfused, m, NULL);
  if (memcmp(fused, unfused, m * sizeof *fused) != 0)
    for (size_t i = 0; i < m; i++)
      if (memcmp(&fused[i], &unfused[i], sizeof(float)) != 0)
        fail_msg("element %zu: fused %.9g, unfused %.9g\n%s", i, fused[i], unfused[i], text);
  free(unfused);
  return fused;
}

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
    float *got = fused_equals_unfused(ctx, text, x, n, (size_t)r);
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
  float *got = fused_equals_unfused(ctx, text, x, 192, 4);
  for (int i = 0; i < 4; i++) {
    volatile float acc = 0.0f;
    for (int j = 0; j < 48; j++) acc = acc + x[i * 48 + j];
    if (memcmp(&got[i], (const void *)&acc, sizeof(float)) != 0)
      fail_msg("row %d: %.9g, want %.9g", i, got[i], (double)acc);
  }
  free(got);
}

/* Softmax over rows of 79 (the row maximum, a broadcast, is read once per
 * row before the words), and a layer norm's variance. */
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
  float *got = fused_equals_unfused(ctx, softmax, x, 632, 632);
  for (int row = 0; row < 8; row++) { /* rows of a softmax sum to 1 */
    double sum = 0;
    for (int j = 0; j < 79; j++) sum += got[row * 79 + j];
    if (sum < 0.9999 || sum > 1.0001) fail_msg("softmax row %d sums to %.9g", row, sum);
  }
  free(got);
  got = fused_equals_unfused(ctx, variance, x, 384, 16);
  free(got);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(row_sums),
      cmocka_unit_test(two_dimensions),
      cmocka_unit_test(softmax_and_variance),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
