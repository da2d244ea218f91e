/*
 * Arguments larger than a binding may be (maxStorageBufferRange; 128 MiB
 * on lavapipe, where GPT-2's 154 MB embedding table was refused):
 * codegen/expand.c splits such an entry parameter into contiguous pieces
 * that lowering binds as views of the argument (api/inplace.c,
 * exe_view_offset).  On a context whose range is lowered to 64 KiB
 * ($VKHLO_MAX_BINDING_BYTES) a program over a 1000 x 40 f32 table (160 KB:
 * three pieces at offsets that are multiples of 256 bytes) and a 1000 x 64
 * f16 one (two pieces) compiles, and every result matches the same
 * program on the default context (unsplit): a gather of rows (bit for
 * bit), a dot_general over the table's rows as a free dimension (pieces
 * concatenated), as a contracting one (pieces summed), through a
 * transpose and through a convert (moved onto the pieces), within 1e-5 of
 * the largest magnitude, and the table itself as a result (kept whole: a
 * copy, which no binding limits).  The split executable also survives a .vkx
 * round trip (views at their offsets), and a larger value made and
 * consumed inside one kernel still fuses.
 *
 * Results and intermediates larger than a binding (codegen/expand.c,
 * "results larger than a binding"): computed in pieces of rows that
 * lowering copies into place.  On the 64 KiB context a softmax over 64 x
 * 1000 f32 logits of a product (256 KB, the probabilities a result, the
 * row maxima another), their sum with the logits, and a transposed table
 * as a result compile and match the default context (within 1e-6 of the
 * largest magnitude; the transpose bit for bit), also after a .vkx round
 * trip (the copies' offsets); likewise an embedding lookup of 512 tokens
 * (a gather split along its indices) through a reshape into heads, a
 * transpose and a product, and a batch_norm_inference whose expansion
 * makes the large values.  The validation layer is on throughout and
 * must stay silent.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

enum { RESULTS = 6, PARAMS = 5 };

static const char program[] =
    "func.func @main(%w: tensor<1000x40xf32>, %ids: tensor<8xi32>, %h: tensor<8x40xf32>, %v: tensor<1000x16xf32>,\n"
    "                %w16: tensor<1000x64xf16>) -> (tensor<8x40xf32>, tensor<8x1000xf32>, tensor<40x16xf32>,\n"
    "                tensor<8x1000xf32>, tensor<8x1000xf32>, tensor<1000x40xf32>) {\n"
    "  %e = \"stablehlo.gather\"(%w, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [1],\n"
    "    collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 40>}\n"
    "    : (tensor<1000x40xf32>, tensor<8xi32>) -> tensor<8x40xf32>\n"
    "  %l = stablehlo.dot_general %h, %w, contracting_dims = [1] x [1] : (tensor<8x40xf32>, tensor<1000x40xf32>)\n"
    "    -> tensor<8x1000xf32>\n"
    "  %c = stablehlo.dot_general %w, %v, contracting_dims = [0] x [0] : (tensor<1000x40xf32>, tensor<1000x16xf32>)\n"
    "    -> tensor<40x16xf32>\n"
    "  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<1000x40xf32>) -> tensor<40x1000xf32>\n"
    "  %l2 = stablehlo.dot_general %h, %wt, contracting_dims = [1] x [0] : (tensor<8x40xf32>, tensor<40x1000xf32>)\n"
    "    -> tensor<8x1000xf32>\n"
    "  %w32 = stablehlo.convert %w16 : (tensor<1000x64xf16>) -> tensor<1000x64xf32>\n"
    "  %h64 = stablehlo.concatenate %h, %h, dim = 1 : (tensor<8x40xf32>, tensor<8x40xf32>) -> tensor<8x80xf32>\n"
    "  %h2 = stablehlo.slice %h64 [0:8, 0:64] : (tensor<8x80xf32>) -> tensor<8x64xf32>\n"
    "  %l3 = stablehlo.dot_general %h2, %w32, contracting_dims = [1] x [1] : (tensor<8x64xf32>, tensor<1000x64xf32>)\n"
    "    -> tensor<8x1000xf32>\n"
    "  return %e, %l, %c, %l2, %l3, %w : tensor<8x40xf32>, tensor<8x1000xf32>, tensor<40x16xf32>,\n"
    "    tensor<8x1000xf32>, tensor<8x1000xf32>, tensor<1000x40xf32>\n"
    "}\n";

/* Runs |exe| on |args|, the results as floats into out[r] (heap). */
static void run(vkhlo_executable_t *exe, vkhlo_buffer_t **args, float **out, int64_t *counts) {
  vkhlo_buffer_t *res[RESULTS];
  assert_int_equal(vkhlo_executable_result_count(exe), RESULTS);
  expect_ok(vkhlo_executable_execute(exe, PARAMS, args, RESULTS, res));
  for (int r = 0; r < RESULTS; r++) {
    vkhlo_tensor_type_t t;
    vkhlo_buffer_type(res[r], &t);
    counts[r] = vkhlo_tensor_type_element_count(&t);
    out[r] = malloc((size_t)counts[r] * sizeof(float));
    assert_non_null(out[r]);
    expect_ok(vkhlo_buffer_read(res[r], out[r], (size_t)counts[r] * sizeof(float)));
    vkhlo_buffer_destroy(res[r]);
  }
}

/* The seeded arguments of |exe| on |ctx|. */
static void arguments(vkhlo_context_t *ctx, vkhlo_executable_t *exe, vkhlo_buffer_t **args) {
  uint32_t seed = 21;
  for (int k = 0; k < PARAMS; k++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
    int64_t n = vkhlo_tensor_type_element_count(&t);
    void *data = malloc((size_t)vkhlo_tensor_type_size_bytes(&t) + 4);
    assert_non_null(data);
    for (int64_t i = 0; i < n; i++) {
      double u = test_uniform(&seed);
      if (t.element_type == VKHLO_F32) ((float *)data)[i] = (float)u;
      else if (t.element_type == VKHLO_S32) ((int32_t *)data)[i] = (int32_t)((u + 1) * 500) % 1000; /* rows */
      else ((uint16_t *)data)[i] = (uint16_t)(0x3000 + ((uint32_t)((u + 1) * 1000) & 0x3FF)); /* f16 in [0.125, 0.25) */
    }
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &args[k]));
    free(data);
  }
}

/* The split program's results |got| against the whole one's |want|: within
 * |tol| of each result's largest magnitude (which is not 0), the results in
 * |exact| (bit r: result r) bit for bit, and after the .vkx round trip
 * (|again|) the same bits as before it; frees all three. */
static void check_split(float **want, float **got, float **again, const int64_t *counts, int nr, double tol,
                        unsigned exact) {
  for (int r = 0; r < nr; r++) {
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < counts[r]; i++) scale = fmax(scale, fabs(want[r][i]));
    for (int64_t i = 0; i < counts[r]; i++) worst = fmax(worst, fabs((double)got[r][i] - want[r][i]));
    if (!(worst <= tol * scale) || !(scale > 0)) fail_msg("split: result %d differs by %g (scale %g)", r, worst, scale);
    if ((exact >> r & 1) && memcmp(got[r], want[r], (size_t)counts[r] * sizeof(float)) != 0)
      fail_msg("split: result %d differs in its bits", r);
    if (memcmp(again[r], got[r], (size_t)counts[r] * sizeof(float)) != 0) fail_msg("loaded: result %d differs", r);
    free(want[r]);
    free(got[r]);
    free(again[r]);
  }
}

static void split_arguments(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_context_t *small = test_context_with_env("VKHLO_MAX_BINDING_BYTES", "65536");
  vkhlo_executable_t *whole = test_compile(ctx, program), *split = test_compile(small, program);
  vkhlo_buffer_t *args[PARAMS], *sargs[PARAMS];
  arguments(ctx, whole, args);
  arguments(small, split, sargs);
  float *want[RESULTS], *got[RESULTS], *again[RESULTS];
  int64_t counts[RESULTS], scounts[RESULTS];
  run(whole, args, want, counts);
  run(split, sargs, got, scounts);
  for (int r = 0; r < RESULTS; r++) assert_int_equal(counts[r], scounts[r]);
  /* the .vkx round trip keeps the views */
  vkhlo_executable_t *loaded = test_reload(small, split);
  run(loaded, sargs, again, scounts);
  /* the gathered rows and the table itself bit for bit */
  check_split(want, got, again, counts, RESULTS, 1e-5, 1u | 1u << (RESULTS - 1));
  for (int k = 0; k < PARAMS; k++) {
    vkhlo_buffer_destroy(args[k]);
    vkhlo_buffer_destroy(sargs[k]);
  }
  vkhlo_executable_destroy(loaded);
  vkhlo_executable_destroy(whole);
  vkhlo_executable_destroy(split);
  assert_int_equal(vkhlo_context_validation_message_count(small), 0);
  vkhlo_context_destroy(small);
}

/* A value larger than a binding computed and consumed inside one kernel
 * (a broadcast summed away) is never bound: it still compiles on the
 * 64 KiB context, one kernel, and sums right (integer-valued floats). */
static void intermediates_fuse(void **state) {
  (void)state;
  static const char text[] =
      "func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {\n"
      "  %b = stablehlo.broadcast_in_dim %x, dims = [1] : (tensor<64xf32>) -> tensor<2048x64xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %r = stablehlo.reduce(%b init: %z) applies stablehlo.add across dimensions = [0]"
      " : (tensor<2048x64xf32>, tensor<f32>) -> tensor<64xf32>\n"
      "  return %r : tensor<64xf32>\n}\n";
  vkhlo_context_t *small = test_context_with_env("VKHLO_MAX_BINDING_BYTES", "65536");
  vkhlo_executable_t *exe = test_compile(small, text);
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  assert_int_equal(stats.dispatches, 1);
  float x[64], y[64];
  for (int i = 0; i < 64; i++) x[i] = (float)(i - 20);
  vkhlo_tensor_type_t t;
  vkhlo_buffer_t *arg, *res = NULL;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  expect_ok(vkhlo_buffer_create(small, &t, x, &arg));
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, y, sizeof y));
  for (int i = 0; i < 64; i++) assert_true(y[i] == 2048.0f * x[i]);
  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
  assert_int_equal(vkhlo_context_validation_message_count(small), 0);
  vkhlo_context_destroy(small);
}

static const char results_program[] =
    "func.func @main(%h: tensor<64x16xf32>, %w: tensor<16x1000xf32>, %t: tensor<1000x64xf32>)\n"
    "    -> (tensor<64x1000xf32>, tensor<64xf32>, tensor<64x1000xf32>, tensor<64x1000xf32>) {\n"
    "  %l = stablehlo.dot_general %h, %w, contracting_dims = [1] x [0] : (tensor<64x16xf32>, tensor<16x1000xf32>)\n"
    "    -> tensor<64x1000xf32>\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%l init: %ninf) applies stablehlo.maximum across dimensions = [1]"
    " : (tensor<64x1000xf32>, tensor<f32>) -> tensor<64xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<64xf32>) -> tensor<64x1000xf32>\n"
    "  %d = stablehlo.subtract %l, %mb : tensor<64x1000xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<64x1000xf32>\n"
    "  %s = stablehlo.reduce(%e init: %zero) applies stablehlo.add across dimensions = [1]"
    " : (tensor<64x1000xf32>, tensor<f32>) -> tensor<64xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<64xf32>) -> tensor<64x1000xf32>\n"
    "  %p = stablehlo.divide %e, %sb : tensor<64x1000xf32>\n"
    "  %q = stablehlo.add %p, %l : tensor<64x1000xf32>\n"
    "  %tt = stablehlo.transpose %t, dims = [1, 0] : (tensor<1000x64xf32>) -> tensor<64x1000xf32>\n"
    "  return %p, %m, %q, %tt : tensor<64x1000xf32>, tensor<64xf32>, tensor<64x1000xf32>, tensor<64x1000xf32>\n"
    "}\n";

/* Results of |exe| on seeded arguments (f32 uniform in [-1, 1), i32 in
 * [0, 100)), as floats. */
static void run_results(vkhlo_context_t *ctx, vkhlo_executable_t *exe, float **out) {
  enum { MAX_PARAMS = 8 };
  vkhlo_buffer_t *args[MAX_PARAMS], *res[4];
  uint32_t seed = 5;
  int N = vkhlo_executable_parameter_count(exe);
  assert_true(N <= MAX_PARAMS);
  for (int k = 0; k < N; k++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
    int64_t n = vkhlo_tensor_type_element_count(&t);
    float *data = malloc((size_t)n * sizeof(float));
    assert_non_null(data);
    for (int64_t i = 0; i < n; i++) {
      double u = test_uniform(&seed);
      if (t.element_type == VKHLO_S32) ((int32_t *)(void *)data)[i] = (int32_t)((u + 1) * 50) % 100;
      else data[i] = (float)u;
    }
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &args[k]));
    free(data);
  }
  int nr = vkhlo_executable_result_count(exe);
  assert_true(nr <= 4);
  expect_ok(vkhlo_executable_execute(exe, N, args, nr, res));
  for (int r = 0; r < nr; r++) {
    vkhlo_tensor_type_t t;
    vkhlo_buffer_type(res[r], &t);
    size_t bytes = (size_t)vkhlo_tensor_type_size_bytes(&t);
    out[r] = malloc(bytes);
    assert_non_null(out[r]);
    expect_ok(vkhlo_buffer_read(res[r], out[r], bytes));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int k = 0; k < N; k++) vkhlo_buffer_destroy(args[k]);
}

/* An embedding lookup of 512 tokens (1 x 512 x 64 f32, 128 KB: a gather
 * split along its indices), reshaped into heads, transposed, squared and
 * projected (1 x 4 x 512 x 32, 256 KB). */
static const char lookup_program[] =
    "func.func @main(%ids: tensor<1x512xi32>, %wte: tensor<100x64xf32>, %w: tensor<16x32xf32>)\n"
    "    -> (tensor<1x4x512x32xf32>, tensor<1x512x64xf32>) {\n"
    "  %x = \"stablehlo.gather\"(%wte, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [2],\n"
    "    collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, slice_sizes = array<i64: 1, 64>}\n"
    "    : (tensor<100x64xf32>, tensor<1x512xi32>) -> tensor<1x512x64xf32>\n"
    "  %r = stablehlo.reshape %x : (tensor<1x512x64xf32>) -> tensor<1x512x4x16xf32>\n"
    "  %t = stablehlo.transpose %r, dims = [0, 2, 1, 3] : (tensor<1x512x4x16xf32>) -> tensor<1x4x512x16xf32>\n"
    "  %y = stablehlo.multiply %t, %t : tensor<1x4x512x16xf32>\n"
    "  %z = stablehlo.dot_general %y, %w, contracting_dims = [3] x [0] : (tensor<1x4x512x16xf32>, tensor<16x32xf32>)\n"
    "    -> tensor<1x4x512x32xf32>\n"
    "  return %z, %x : tensor<1x4x512x32xf32>, tensor<1x512x64xf32>\n"
    "}\n";

/* |text| on the 64 KiB context (and after a .vkx round trip) against the
 * default context: within 1e-6 of each result's largest magnitude, and
 * result |exact| (-1: none) bit for bit. */
static void compare_split(vkhlo_context_t *ctx, const char *text, const int64_t *counts, int nr, int exact) {
  vkhlo_context_t *small = test_context_with_env("VKHLO_MAX_BINDING_BYTES", "65536");
  vkhlo_executable_t *whole = test_compile(ctx, text), *split = test_compile(small, text);
  vkhlo_executable_t *loaded = test_reload(small, split);
  float *want[4], *got[4], *again[4];
  assert_int_equal(vkhlo_executable_result_count(split), nr);
  run_results(ctx, whole, want);
  run_results(small, split, got);
  run_results(small, loaded, again);
  check_split(want, got, again, counts, nr, 1e-6, exact >= 0 ? 1u << exact : 0u);
  vkhlo_executable_destroy(loaded);
  vkhlo_executable_destroy(whole);
  vkhlo_executable_destroy(split);
  assert_int_equal(vkhlo_context_validation_message_count(small), 0);
  vkhlo_context_destroy(small);
}

static void split_results(void **state) {
  static const int64_t counts[4] = {64000, 64, 64000, 64000};
  compare_split(*state, results_program, counts, 4, 3); /* the transposed table exact */
}

/* A batch_norm_inference over 1 x 200 x 100 f32 (80 KB): the expand pass
 * writes it as elementwise ops of that shape, which its second round
 * (values larger than a binding that expansions made) computes in pieces. */
static const char batch_norm_program[] =
    "func.func @main(%x: tensor<1x200x100xf32>, %s: tensor<100xf32>, %o: tensor<100xf32>, %m: tensor<100xf32>,\n"
    "                %v: tensor<100xf32>) -> tensor<1x200x100xf32> {\n"
    "  %v2 = stablehlo.multiply %v, %v : tensor<100xf32>\n"
    "  %y = \"stablehlo.batch_norm_inference\"(%x, %s, %o, %m, %v2) {epsilon = 0.001 : f32, feature_index = 2 : i64}\n"
    "    : (tensor<1x200x100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>, tensor<100xf32>)\n"
    "    -> tensor<1x200x100xf32>\n"
    "  return %y : tensor<1x200x100xf32>\n"
    "}\n";

static void split_expansion(void **state) {
  static const int64_t counts[1] = {20000};
  compare_split(*state, batch_norm_program, counts, 1, -1);
}

static void split_lookup(void **state) {
  static const int64_t counts[2] = {65536, 32768};
  compare_split(*state, lookup_program, counts, 2, 1); /* the gathered rows exact */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(split_arguments),
      cmocka_unit_test(intermediates_fuse),
      cmocka_unit_test(split_results),
      cmocka_unit_test(split_lookup),
      cmocka_unit_test(split_expansion),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
