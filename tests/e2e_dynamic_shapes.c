/*
 * Programs with dynamic shapes (tensor<?x...>) through the public API: the
 * compile option parameter_types refines them for the arguments' types
 * (hlo/refine.h).  Checked:
 *   - a jax.export-style program (a public @main that computes the batch
 *     size with get_dimension_size, asserts it with custom_call
 *     @shape_assertion and calls a private function with a dynamic
 *     signature, which builds its shapes with dynamic_broadcast_in_dim and
 *     dynamic_iota) compiled for batches of 3 and 5: static parameter and
 *     result types, results against sums computed here;
 *   - an embedding lookup of a dynamic number of tokens (dynamic_reshape,
 *     gather, reduce, a while loop carrying a dynamic value, if,
 *     real_dynamic_slice, dynamic_pad, a convolution with a dynamic batch),
 *     element by element against values computed here;
 *   - errors: no parameter_types, a type that does not fit the declared
 *     one, a failing shape assertion (its message with the value filled
 *     in), a bounded dimension over its bound, a size computed from an
 *     argument's values.
 */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <setjmp.h>
#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

static vkhlo_tensor_type_t tensor_type(vkhlo_element_type_t et, int rank, ...) {
  vkhlo_tensor_type_t t;
  memset(&t, 0, sizeof t);
  t.element_type = et;
  t.rank = rank;
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) t.dimensions[i] = va_arg(ap, int64_t);
  va_end(ap);
  return t;
}

static vkhlo_status_t compile_for(vkhlo_context_t *ctx, const char *text, const vkhlo_tensor_type_t *types, int n,
                                  vkhlo_executable_t **exe) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.parameter_types = types;
  o.parameter_type_count = n;
  return vkhlo_executable_compile(ctx, text, strlen(text), "dyn.mlir", &o, exe);
}

/* Runs |exe| on |n| host arrays of |types|; results into |out| (each
 * malloc'd, the caller frees). */
static void run(vkhlo_context_t *ctx, vkhlo_executable_t *exe, const vkhlo_tensor_type_t *types, void *const *args,
                int n, void **out, int nout) {
  vkhlo_buffer_t *in[8] = {0}, *res[8] = {0};
  for (int i = 0; i < n; i++) expect_ok(vkhlo_buffer_create(ctx, &types[i], args[i], &in[i]));
  assert_int_equal(vkhlo_executable_result_count(exe), nout);
  expect_ok(vkhlo_executable_execute(exe, n, in, nout, res));
  for (int i = 0; i < nout; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_buffer_type(res[i], &t);
    size_t size = vkhlo_tensor_type_size_bytes(&t);
    out[i] = malloc(size ? size : 1);
    expect_ok(vkhlo_buffer_read(res[i], out[i], size));
    vkhlo_buffer_destroy(res[i]);
  }
  for (int i = 0; i < n; i++) vkhlo_buffer_destroy(in[i]);
}

static void expect_type(const vkhlo_tensor_type_t *t, vkhlo_element_type_t et, int rank, const int64_t *dims) {
  assert_int_equal(t->element_type, et);
  assert_int_equal(t->rank, rank);
  for (int i = 0; i < rank; i++) assert_int_equal(t->dimensions[i], dims[i]);
}

/* As jax.export writes f(x, w) = (x @ w + 1) * row index - row maximum
 * for x: f32[b, 4] with b even. */
static const char jax_program[] =
    "module @jit_f attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32} {\n"
    "  func.func public @main(%arg0: tensor<?x4xf32> {mhlo.sharding = \"{replicated}\"}, %arg1: tensor<4x8xf32>)\n"
    "      -> (tensor<?x8xf32> {jax.result_info = \"\"}) {\n"
    "    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>\n"
    "    %1 = stablehlo.convert %0 : (tensor<i32>) -> tensor<i64>\n"
    "    %c = stablehlo.constant dense<2> : tensor<i64>\n"
    "    %r = stablehlo.remainder %1, %c : tensor<i64>\n"
    "    %z = stablehlo.constant dense<0> : tensor<i64>\n"
    "    %ok = stablehlo.compare EQ, %r, %z, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "    stablehlo.custom_call @shape_assertion(%ok, %r) {api_version = 2 : i32, error_message = \"Division had "
    "remainder {0} when computing the value of 'b'.\", has_side_effect = true} : (tensor<i1>, tensor<i64>) -> ()\n"
    "    %2 = call @_wrapped_jax_export_main(%1, %arg0, %arg1) : (tensor<i64>, tensor<?x4xf32>, tensor<4x8xf32>) "
    "-> tensor<?x8xf32>\n"
    "    return %2 : tensor<?x8xf32>\n"
    "  }\n"
    "  func.func private @_wrapped_jax_export_main(%arg0: tensor<i64> {jax.global_constant = \"b\"}, "
    "%arg1: tensor<?x4xf32>, %arg2: tensor<4x8xf32>) -> tensor<?x8xf32> {\n"
    "    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>\n"
    "    %0 = stablehlo.convert %arg0 : (tensor<i64>) -> tensor<i32>\n"
    "    %1 = stablehlo.reshape %0 : (tensor<i32>) -> tensor<1xi32>\n"
    "    %c = stablehlo.constant dense<8> : tensor<1xi32>\n"
    "    %2 = stablehlo.concatenate %1, %c, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "    %3 = stablehlo.dynamic_broadcast_in_dim %cst, %2, dims = [] : (tensor<f32>, tensor<2xi32>) -> "
    "tensor<?x8xf32>\n"
    "    %4 = stablehlo.dot_general %arg1, %arg2, contracting_dims = [1] x [0] : (tensor<?x4xf32>, "
    "tensor<4x8xf32>) -> tensor<?x8xf32>\n"
    "    %5 = stablehlo.add %4, %3 : tensor<?x8xf32>\n"
    "    %6 = stablehlo.dynamic_iota %2, dim = 0 : (tensor<2xi32>) -> tensor<?x8xf32>\n"
    "    %7 = stablehlo.multiply %5, %6 : tensor<?x8xf32>\n"
    "    %m = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "    %8 = stablehlo.reduce(%7 init: %m) applies stablehlo.maximum across dimensions = [1] : "
    "(tensor<?x8xf32>, tensor<f32>) -> tensor<?xf32>\n"
    "    %9 = stablehlo.dynamic_broadcast_in_dim %8, %2, dims = [0] : (tensor<?xf32>, tensor<2xi32>) -> "
    "tensor<?x8xf32>\n"
    "    %10 = stablehlo.subtract %7, %9 : tensor<?x8xf32>\n"
    "    return %10 : tensor<?x8xf32>\n"
    "  }\n"
    "}\n";

static void test_jax_export(void **state) {
  vkhlo_context_t *ctx = *state;
  static const int batches[] = {4, 6};
  for (int bi = 0; bi < 2; bi++) {
    int b = batches[bi];
    vkhlo_tensor_type_t types[2] = {tensor_type(VKHLO_F32, 2, (int64_t)b, (int64_t)4),
                                    tensor_type(VKHLO_F32, 2, (int64_t)4, (int64_t)8)};
    vkhlo_executable_t *exe = NULL;
    expect_ok(compile_for(ctx, jax_program, types, 2, &exe));
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
    expect_type(&t, VKHLO_F32, 2, (int64_t[]){b, 4});
    expect_ok(vkhlo_executable_result_type(exe, 0, &t));
    expect_type(&t, VKHLO_F32, 2, (int64_t[]){b, 8});
    float x[6 * 4], w[4 * 8];
    uint32_t seed = 7u + (uint32_t)b;
    for (int i = 0; i < b * 4; i++) x[i] = (float)test_uniform(&seed);
    for (int i = 0; i < 32; i++) w[i] = (float)test_uniform(&seed);
    void *args[2] = {x, w}, *out[1];
    run(ctx, exe, types, args, 2, out, 1);
    const float *y = out[0];
    for (int i = 0; i < b; i++) {
      double row[8], mx = -INFINITY;
      for (int j = 0; j < 8; j++) {
        double s = 0;
        for (int k = 0; k < 4; k++) s += (double)x[i * 4 + k] * w[k * 8 + j];
        row[j] = (s + 1) * i;
        if (row[j] > mx) mx = row[j];
      }
      for (int j = 0; j < 8; j++) assert_true(fabs(y[i * 8 + j] - (row[j] - mx)) <= 1e-5 * (1 + fabs(row[j])));
    }
    free(out[0]);
    vkhlo_executable_destroy(exe);
  }
}

static const char lookup_program[] =
    "func.func public @main(%tok: tensor<?xi32>, %table: tensor<10x3xf32>, %p: tensor<i1>)\n"
    "    -> (tensor<?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x2xf32>, tensor<?xf32>) {\n"
    "  %n = stablehlo.get_dimension_size %tok, dim = 0 : (tensor<?xi32>) -> tensor<i32>\n"
    "  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<1xi32>\n"
    "  %s2 = stablehlo.concatenate %n1, %c1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %ti = stablehlo.dynamic_reshape %tok, %s2 : (tensor<?xi32>, tensor<2xi32>) -> tensor<?x1xi32>\n"
    "  %g = \"stablehlo.gather\"(%table, %ti) {dimension_numbers = #stablehlo.gather<offset_dims = [1], "
    "collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>} "
    ": (tensor<10x3xf32>, tensor<?x1xi32>) -> tensor<?x3xf32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %sum = stablehlo.reduce(%g init: %z) applies stablehlo.add across dimensions = [1] : "
    "(tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>\n"
    "  %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %i0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %i0, %acc = %sum) : tensor<i32>, tensor<?xf32>\n"
    "    cond {\n"
    "      %lt = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %lt : tensor<i1>\n"
    "    } do {\n"
    "      %a2 = stablehlo.add %acc, %acc : tensor<?xf32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<?xf32>\n"
    "    }\n"
    "  %sel = \"stablehlo.if\"(%p) ({\n"
    "    stablehlo.return %r#1 : tensor<?xf32>\n"
    "  }, {\n"
    "    %neg = stablehlo.negate %sum : tensor<?xf32>\n"
    "    stablehlo.return %neg : tensor<?xf32>\n"
    "  }) : (tensor<i1>) -> tensor<?xf32>\n"
    "  %st = stablehlo.constant dense<[0, 0]> : tensor<2xi32>\n"
    "  %c3 = stablehlo.constant dense<3> : tensor<1xi32>\n"
    "  %lim = stablehlo.concatenate %n1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>\n"
    "  %str = stablehlo.constant dense<[1, 2]> : tensor<2xi32>\n"
    "  %sl = stablehlo.real_dynamic_slice %g, %st, %lim, %str : (tensor<?x3xf32>, tensor<2xi32>, "
    "tensor<2xi32>, tensor<2xi32>) -> tensor<?x2xf32>\n"
    "  %v = stablehlo.constant dense<-1.0> : tensor<f32>\n"
    "  %lo = stablehlo.constant dense<[1]> : tensor<1xi32>\n"
    "  %in = stablehlo.constant dense<[1]> : tensor<1xi32>\n"
    "  %pad = stablehlo.dynamic_pad %sum, %v, %lo, %n1, %in : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, "
    "tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>\n"
    "  return %g, %r#1, %sel, %sl, %pad : tensor<?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x2xf32>, "
    "tensor<?xf32>\n"
    "}\n";

static void test_lookup(void **state) {
  vkhlo_context_t *ctx = *state;
  int32_t tok[5] = {2, 0, 9, 9, 4};
  float table[30];
  for (int i = 0; i < 30; i++) table[i] = (float)i * 0.5f;
  for (int n = 1; n <= 5; n += 4) {
    for (int pi = 0; pi < 2; pi++) {
      bool pred = pi == 1;
      vkhlo_tensor_type_t types[3] = {tensor_type(VKHLO_S32, 1, (int64_t)n),
                                      tensor_type(VKHLO_F32, 2, (int64_t)10, (int64_t)3), tensor_type(VKHLO_PRED, 0)};
      vkhlo_executable_t *exe = NULL;
      expect_ok(compile_for(ctx, lookup_program, types, 3, &exe));
      vkhlo_tensor_type_t t;
      expect_ok(vkhlo_executable_result_type(exe, 4, &t));
      expect_type(&t, VKHLO_F32, 1, (int64_t[]){1 + n + (n - 1) + n});
      uint8_t p = pred;
      void *args[3] = {tok, table, &p}, *out[5];
      run(ctx, exe, types, args, 3, out, 5);
      const float *g = out[0], *loop = out[1], *sel = out[2], *sl = out[3], *pad = out[4];
      double scale = ldexp(1.0, n); /* the loop doubles n times */
      for (int i = 0; i < n; i++) {
        double s = 0;
        for (int j = 0; j < 3; j++) {
          assert_true(g[i * 3 + j] == table[tok[i] * 3 + j]);
          s += table[tok[i] * 3 + j];
        }
        assert_true(loop[i] == (float)(s * scale));
        assert_true(sel[i] == (float)(pred ? s * scale : -s));
        assert_true(sl[i * 2] == table[tok[i] * 3] && sl[i * 2 + 1] == table[tok[i] * 3 + 2]);
        assert_true(pad[1 + 2 * i] == (float)s);
        if (i + 1 < n) assert_true(pad[2 + 2 * i] == -1.0f);
      }
      assert_true(pad[0] == -1.0f);
      for (int k = 0; k < n; k++) assert_true(pad[2 * n + k] == -1.0f);
      for (int i = 0; i < 5; i++) free(out[i]);
      vkhlo_executable_destroy(exe);
    }
  }
}

/* Compiling |text| for |types| fails with INVALID_ARGUMENT whose message
 * holds |message|, and makes no executable. */
static void expect_refused(vkhlo_context_t *ctx, const char *text, const vkhlo_tensor_type_t *types, int n,
                           const char *message) {
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = compile_for(ctx, text, types, n, &exe);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  if (!strstr(vkhlo_status_message(st), message)) fprintf(stderr, "got: %s\n", vkhlo_status_message(st));
  assert_non_null(strstr(vkhlo_status_message(st), message));
  vkhlo_status_free(st);
  assert_null(exe);
}

static void test_errors(void **state) {
  vkhlo_context_t *ctx = *state;
  /* no types */
  expect_refused(ctx, jax_program, NULL, 0, "dyn.mlir:2:26: parameter 0 of '@main' has the dynamic type");
  /* a type that does not fit: 5 columns where 4 are declared */
  vkhlo_tensor_type_t bad[2] = {tensor_type(VKHLO_F32, 2, (int64_t)4, (int64_t)5),
                                tensor_type(VKHLO_F32, 2, (int64_t)4, (int64_t)8)};
  expect_refused(ctx, jax_program, bad, 2, "is tensor<4x5xf32>, which does not fit its type tensor<?x4xf32>");
  /* an odd batch: the program's own assertion, its {0} filled in */
  vkhlo_tensor_type_t odd[2] = {tensor_type(VKHLO_F32, 2, (int64_t)3, (int64_t)4),
                                tensor_type(VKHLO_F32, 2, (int64_t)4, (int64_t)8)};
  expect_refused(ctx, jax_program, odd, 2,
                 "dyn.mlir:10:5: shape assertion failed: Division had remainder 1 when computing the value of 'b'.");
  /* a bounded dimension (#stablehlo.bounds): up to its bound */
  static const char bounded[] =
      "func.func @main(%a: tensor<?x2xf32, #stablehlo.bounds<8, ?>>) -> tensor<?x2xf32, #stablehlo.bounds<8, ?>> {\n"
      "  %0 = stablehlo.add %a, %a : tensor<?x2xf32, #stablehlo.bounds<8, ?>>\n"
      "  return %0 : tensor<?x2xf32, #stablehlo.bounds<8, ?>>\n"
      "}\n";
  vkhlo_tensor_type_t at_bound = tensor_type(VKHLO_F32, 2, (int64_t)8, (int64_t)2),
                      over = tensor_type(VKHLO_F32, 2, (int64_t)9, (int64_t)2);
  vkhlo_executable_t *exe = NULL;
  expect_ok(compile_for(ctx, bounded, &at_bound, 1, &exe));
  vkhlo_executable_destroy(exe);
  expect_refused(ctx, bounded, &over, 1,
                 "dyn.mlir:1:17: parameter 0 of '@main' is tensor<9x2xf32>, over the bound 8 of its dimension 0");
  /* a size that depends on an argument's values */
  static const char by_value[] =
      "func.func @main(%a: tensor<4xf32>, %n: tensor<1xi32>) -> tensor<?xf32> {\n"
      "  %0 = stablehlo.dynamic_broadcast_in_dim %a, %n, dims = [0] : (tensor<4xf32>, tensor<1xi32>) -> tensor<?xf32>\n"
      "  return %0 : tensor<?xf32>\n"
      "}\n";
  expect_refused(ctx, by_value, NULL, 0,
                 "dyn.mlir:2:3: stablehlo.dynamic_broadcast_in_dim: its output shape is not a value the compiler "
                 "can compute");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_jax_export),
      cmocka_unit_test(test_lookup),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
