/*
 * The public API end to end on small programs: compile, buffers, execute,
 * read back, checks, and the errors a caller can provoke (wrong argument
 * count or type, bad program text, unsupported element type).  Every test
 * runs with the validation layer on and asserts that it said nothing.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"


static const char add_program[] =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
    "  %1 = stablehlo.multiply %0, %a : tensor<2x3xf32>\n"
    "  return %1 : tensor<2x3xf32>\n"
    "}\n";

/* New inputs written into the same argument buffers (vkhlo_buffer_write)
 * give new results and replay the recording (no re-recording). */
static void buffer_write_replays(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, add_program);
  vkhlo_tensor_type_t t = {VKHLO_F32, 2, {2, 3}};
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -1, 2, 0, 10, -6}, out[6];
  vkhlo_buffer_t *args[2], *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, a, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, b, &args[1]));
  expect_ok(vkhlo_buffer_create(ctx, &t, NULL, &res));
  expect_ok(vkhlo_executable_execute_into(exe, 2, args, 1, &res));
  vkhlo_executable_stats_t s0, s1;
  vkhlo_executable_stats(exe, &s0);
  for (int round = 1; round <= 3; round++) {
    for (int i = 0; i < 6; i++) a[i] = (float)(round * 10 + i), b[i] = (float)(i - round);
    expect_ok(vkhlo_buffer_write(args[0], a, sizeof a));
    expect_ok(vkhlo_buffer_write(args[1], b, sizeof b));
    expect_ok(vkhlo_executable_execute_into(exe, 2, args, 1, &res));
    expect_ok(vkhlo_buffer_read(res, out, sizeof out));
    for (int i = 0; i < 6; i++) assert_true(out[i] == (a[i] + b[i]) * a[i]);
  }
  vkhlo_executable_stats(exe, &s1);
  assert_int_equal(s1.recordings, s0.recordings);
  assert_int_equal(s1.executions, s0.executions + 3);
  vkhlo_status_t st = vkhlo_buffer_write(args[0], a, sizeof a - 4);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  vkhlo_status_free(st);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);
}

static void add_multiply_runs(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, add_program);
  assert_int_equal(vkhlo_executable_parameter_count(exe), 2);
  assert_int_equal(vkhlo_executable_result_count(exe), 1);
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  assert_int_equal(t.element_type, VKHLO_F32);
  assert_int_equal(t.rank, 2);
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {0.5f, -1, 2, 0, 10, -6}, out[6];
  vkhlo_buffer_t *args[2], *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, a, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, b, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == (a[i] + b[i]) * a[i]);
  /* a second execution reuses the executable */
  vkhlo_buffer_destroy(res);
  expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  assert_true(out[5] == 0.0f);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);
}

static void execute_rejects_wrong_arguments(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, add_program);
  vkhlo_tensor_type_t t = {VKHLO_S32, 2, {2, 3}};
  vkhlo_buffer_t *arg, *res = (vkhlo_buffer_t *)1;
  expect_ok(vkhlo_buffer_create(ctx, &t, NULL, &arg));
  vkhlo_buffer_t *args[2] = {arg, arg};
  vkhlo_status_t st = vkhlo_executable_execute(exe, 1, args, 1, &res);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(st), "takes 2 arguments"));
  assert_null(res);
  vkhlo_status_free(st);
  st = vkhlo_executable_execute(exe, 2, args, 1, &res);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(st), "argument 0 has type i32"));
  vkhlo_status_free(st);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
}

static void bad_text_gives_located_error(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                     "  %0 = stablehlo.frobnicate %a : tensor<4xf32>\n"
                     "  return %0 : tensor<4xf32>\n}\n";
  test_expect_compile_error(ctx, text, "bad.mlir", VKHLO_STATUS_INVALID_ARGUMENT, "bad.mlir:2:", (const char *)NULL);
}

static void checks_report_pass_and_fail(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main() {\n"
      "  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
      "  %1 = stablehlo.add %0, %0 : tensor<3xi32>\n"
      "  check.expect_eq_const %1, dense<[2, 4, 6]> : tensor<3xi32>\n"
      "  check.expect_eq_const %1, dense<[2, 5, 6]> : tensor<3xi32>\n"
      "  func.return\n}\n";
  vkhlo_executable_t *exe = test_compile(ctx, text);
  assert_int_equal(vkhlo_executable_check_count(exe), 2);
  expect_ok(vkhlo_executable_execute(exe, 0, NULL, 0, NULL));
  vkhlo_check_result_t r;
  expect_ok(vkhlo_executable_check_result(exe, 0, &r));
  assert_true(r.executed && r.passed);
  expect_ok(vkhlo_executable_check_result(exe, 1, &r));
  assert_false(r.passed);
  assert_int_equal(r.mismatches, 1);
  assert_non_null(strstr(r.detail, "[1]"));
  assert_non_null(strstr(r.location, "test.mlir:5:"));
  vkhlo_executable_destroy(exe);
}

static const char while_program[] =
      "func.func @main(%n: tensor<i32>) -> (tensor<i32>, tensor<i32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %acc = %c1) : tensor<i32>, tensor<i32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
      "      %a2 = stablehlo.add %acc, %acc : tensor<i32>\n"
      "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<i32>\n"
      "    }\n"
      "  return %r#0, %r#1 : tensor<i32>, tensor<i32>\n}\n";

static void while_loop_counts(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, while_program);
  vkhlo_tensor_type_t t = {VKHLO_S32, 0, {0}};
  int32_t n = 10, i = -1, acc = -1;
  vkhlo_buffer_t *arg, *res[2];
  expect_ok(vkhlo_buffer_create(ctx, &t, &n, &arg));
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 2, res));
  expect_ok(vkhlo_buffer_read(res[0], &i, 4));
  expect_ok(vkhlo_buffer_read(res[1], &acc, 4));
  assert_int_equal(i, 10);
  assert_int_equal(acc, 1024);
  vkhlo_buffer_destroy(res[0]);
  vkhlo_buffer_destroy(res[1]);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
}

/* A loop of |trips| iterations (x = x * 0.5 + float(i); an inner loop of 3
 * adds 1 to y each time), its bound written in the cond ("%n" a constant:
 * counted, codegen/trip_count.c) or taken from argument %m (read back on
 * the host every iteration). */
static char *counted_loop_program(int trips, bool bound_is_argument) {
  static char text[2048];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<16xf32>, %%y: tensor<16xf32>, %%m: tensor<i32>) -> "
           "(tensor<16xf32>, tensor<16xf32>, tensor<i32>) {\n"
           "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%r:3 = stablehlo.while(%%i = %%c0, %%v = %%x, %%w = %%y) : tensor<i32>, tensor<16xf32>, tensor<16xf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
           "    %%p = stablehlo.compare LT, %%i, %s, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%h = stablehlo.constant dense<0.5> : tensor<16xf32>\n"
           "    %%f = stablehlo.convert %%i : (tensor<i32>) -> tensor<f32>\n"
           "    %%fb = stablehlo.broadcast_in_dim %%f, dims = [] : (tensor<f32>) -> tensor<16xf32>\n"
           "    %%hv = stablehlo.multiply %%v, %%h : tensor<16xf32>\n"
           "    %%a = stablehlo.add %%hv, %%fb : tensor<16xf32>\n"
           "    %%k0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%q:2 = stablehlo.while(%%k = %%k0, %%u = %%w) : tensor<i32>, tensor<16xf32>\n"
           "     cond {\n"
           "      %%three = stablehlo.constant dense<3> : tensor<i32>\n"
           "      %%pk = stablehlo.compare LT, %%k, %%three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "      stablehlo.return %%pk : tensor<i1>\n"
           "    } do {\n"
           "      %%one = stablehlo.constant dense<1.0> : tensor<16xf32>\n"
           "      %%u1 = stablehlo.add %%u, %%one : tensor<16xf32>\n"
           "      %%k1c = stablehlo.constant dense<1> : tensor<i32>\n"
           "      %%k1 = stablehlo.add %%k, %%k1c : tensor<i32>\n"
           "      stablehlo.return %%k1, %%u1 : tensor<i32>, tensor<16xf32>\n"
           "    }\n"
           "    %%c1 = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%j = stablehlo.add %%i, %%c1 : tensor<i32>\n"
           "    stablehlo.return %%j, %%a, %%q#1 : tensor<i32>, tensor<16xf32>, tensor<16xf32>\n"
           "  }\n"
           "  return %%r#1, %%r#2, %%r#0 : tensor<16xf32>, tensor<16xf32>, tensor<i32>\n"
           "}\n",
           bound_is_argument ? 0 : trips, bound_is_argument ? "%m" : "%n");
  return text;
}

/* Loops with a trip count the program fixes run their bodies without
 * reading a predicate back: the program is recorded once and replayed,
 * one submission per execution, with the same results as the loop whose
 * bound comes from an argument (one submission per iteration). */
static void counted_loops_replay(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { TRIPS = 40 };
  vkhlo_tensor_type_t vt = {VKHLO_F32, 1, {16}}, st = {VKHLO_S32, 0, {0}};
  float x[16], y[16], want_x[16], want_y[16];
  for (int e = 0; e < 16; e++) {
    x[e] = want_x[e] = (float)e - 3.25f;
    y[e] = want_y[e] = 0.125f * (float)e;
  }
  for (int i = 0; i < TRIPS; i++)
    for (int e = 0; e < 16; e++) {
      want_x[e] = want_x[e] * 0.5f + (float)i; /* exact in f32: no rounding to differ */
      want_y[e] += 3.0f;
    }
  int32_t m = TRIPS;
  vkhlo_buffer_t *args[3];
  expect_ok(vkhlo_buffer_create(ctx, &vt, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &vt, y, &args[1]));
  expect_ok(vkhlo_buffer_create(ctx, &st, &m, &args[2]));
  float got[2][2][16];
  for (int form = 0; form < 2; form++) {
    vkhlo_executable_t *exe = test_compile(ctx, counted_loop_program(TRIPS, form == 1));
    vkhlo_executable_stats_t s0, s1;
    for (int run = 0; run < 3; run++) {
      vkhlo_buffer_t *res[3];
      expect_ok(vkhlo_executable_execute(exe, 3, args, 3, res));
      if (run == 0) vkhlo_executable_stats(exe, &s0);
      int32_t i = -1;
      expect_ok(vkhlo_buffer_read(res[0], got[form][0], sizeof got[form][0]));
      expect_ok(vkhlo_buffer_read(res[1], got[form][1], sizeof got[form][1]));
      expect_ok(vkhlo_buffer_read(res[2], &i, sizeof i));
      assert_int_equal(i, TRIPS);
      for (int e = 0; e < 16; e++) {
        if (got[form][0][e] != want_x[e] || got[form][1][e] != want_y[e])
          fail_msg("form %d element %d: %g %g, want %g %g", form, e, got[form][0][e], got[form][1][e], want_x[e],
                   want_y[e]);
      }
      for (int k = 0; k < 3; k++) vkhlo_buffer_destroy(res[k]);
    }
    vkhlo_executable_stats(exe, &s1);
    if (form == 0) { /* counted: replayed, one submission (+ the result copy-out) */
      assert_int_equal(s1.recordings, s0.recordings);
      assert_true(s1.submissions >= 1 && s1.submissions <= 2);
    } else { /* every iteration of the outer loop read back (the inner one is counted) */
      assert_int_equal(s1.recordings - s0.recordings, 2);
      assert_true(s1.submissions > TRIPS);
    }
    vkhlo_executable_destroy(exe);
  }
  assert_memory_equal(got[0], got[1], sizeof got[0]);
  for (int k = 0; k < 3; k++) vkhlo_buffer_destroy(args[k]);
}

/* while_program's 10 iterations under $VKHLO_MAX_LOOP_ITERATIONS 9 (too
 * many: DEADLINE_EXCEEDED) and 10 (its results), compiled with
 * $VKHLO_LOOP_BATCH=|batch| (NULL: the default). */
static void iteration_limit(vkhlo_context_t *ctx, const char *batch) {
  vkhlo_tensor_type_t t = {VKHLO_S32, 0, {0}};
  int32_t n = 10;
  vkhlo_buffer_t *arg, *res[2] = {NULL, NULL};
  expect_ok(vkhlo_buffer_create(ctx, &t, &n, &arg));
  for (int limit = 9; limit <= 10; limit++) {
    char value[8];
    snprintf(value, sizeof value, "%d", limit);
    setenv("VKHLO_MAX_LOOP_ITERATIONS", value, 1);
    if (batch) setenv("VKHLO_LOOP_BATCH", batch, 1);
    vkhlo_executable_t *exe = test_compile(ctx, while_program);
    unsetenv("VKHLO_MAX_LOOP_ITERATIONS");
    unsetenv("VKHLO_LOOP_BATCH");
    vkhlo_status_t st = vkhlo_executable_execute(exe, 1, &arg, 2, res);
    assert_int_equal(vkhlo_status_code(st), limit == 9 ? VKHLO_STATUS_DEADLINE_EXCEEDED : VKHLO_STATUS_OK);
    vkhlo_status_free(st);
    if (limit == 10) {
      int32_t i = -1, acc = -1;
      expect_ok(vkhlo_buffer_read(res[0], &i, 4));
      expect_ok(vkhlo_buffer_read(res[1], &acc, 4));
      assert_int_equal(i, 10);
      assert_int_equal(acc, 1024);
    }
    for (int r = 0; r < 2; r++) {
      vkhlo_buffer_destroy(res[r]);
      res[r] = NULL;
    }
    vkhlo_executable_destroy(exe);
  }
  vkhlo_buffer_destroy(arg);
}

/* A loop whose bound is an argument, with loop state in two buffers (x:
 * a transpose is not written in place, api/inplace.c) and copies in its
 * body (a and b swap every iteration). */
static const char batched_loop_program[] =
    "func.func @main(%n: tensor<i32>, %x0: tensor<4x4xf32>, %y0: tensor<3xi32>) -> "
    "(tensor<i32>, tensor<4x4xf32>, tensor<3xi32>, tensor<3xi32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<7> : tensor<3xi32>\n"
    "  %r:4 = stablehlo.while(%i = %c0, %x = %x0, %a = %y0, %b = %z) : tensor<i32>, tensor<4x4xf32>, tensor<3xi32>, "
    "tensor<3xi32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "    %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "    %t = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>\n"
    "    %h = stablehlo.constant dense<1.0> : tensor<4x4xf32>\n"
    "    %x1 = stablehlo.add %t, %h : tensor<4x4xf32>\n"
    "    stablehlo.return %i1, %x1, %b, %a : tensor<i32>, tensor<4x4xf32>, tensor<3xi32>, tensor<3xi32>\n"
    "  }\n"
    "  return %r#0, %r#1, %r#2, %r#3 : tensor<i32>, tensor<4x4xf32>, tensor<3xi32>, tensor<3xi32>\n"
    "}\n";

/* |program| compiled with $VKHLO_LOOP_BATCH=|batch| ("0": unbatched). */
static vkhlo_executable_t *compile_batched(vkhlo_context_t *ctx, const char *program, const char *batch) {
  setenv("VKHLO_LOOP_BATCH", batch, 1);
  vkhlo_executable_t *exe = test_compile(ctx, program);
  unsetenv("VKHLO_LOOP_BATCH");
  return exe;
}

/* Batched iterations (api/execute.c): with conditional rendering a loop
 * whose predicate the host reads runs up to VKHLO_LOOP_BATCH iterations
 * per submission, the device gating each cond and body; the results are
 * the unbatched loop's and the host's for trip counts ending before,
 * inside and at the end of a batch (the state's storage after an odd or
 * even count), in a few submissions instead of one per iteration; the
 * iteration limit holds; and where the gates cannot be mapped
 * (VKHLO_FORCE_STAGING) they are copied back in the same submission. */
static void batched_loops(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  bool has_cr = strncmp(dev.name, "llvmpipe", 8) == 0; /* lavapipe lists VK_EXT_conditional_rendering */
  vkhlo_tensor_type_t nt = {VKHLO_S32, 0, {0}}, xt = {VKHLO_F32, 2, {4, 4}}, yt = {VKHLO_S32, 1, {3}};
  float x0[16];
  for (int e = 0; e < 16; e++) x0[e] = (float)(e * e % 11) - 2.5f;
  int32_t y0[3] = {-4, 9, 1 << 20};
  for (int staged = 0; staged < 2; staged++) {
    vkhlo_context_t *c = ctx;
    if (staged) {
      setenv("VKHLO_FORCE_STAGING", "1", 1);
      vkhlo_context_options_t o;
      memset(&o, 0, sizeof o);
      o.enable_validation = true;
      expect_ok(vkhlo_context_create(&o, &c));
      unsetenv("VKHLO_FORCE_STAGING");
    }
    /* batches of 4, 8, 16, 16, ..; and of 4, 5, 5, .. (odd: the storage
     * map after a batch is not the one after its bodies) */
    for (int odd = 0; odd < 2; odd++) {
    const int most = odd ? 5 : 16;
    vkhlo_executable_t *batched = compile_batched(c, batched_loop_program, odd ? "5" : "16");
    vkhlo_executable_t *plain = compile_batched(c, batched_loop_program, "0");
    static const int32_t counts[] = {0, 1, 3, 4, 5, 11, 12, 13, 28, 29, 45};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
      int32_t n = counts[k];
      vkhlo_buffer_t *args[3];
      expect_ok(vkhlo_buffer_create(c, &nt, &n, &args[0]));
      expect_ok(vkhlo_buffer_create(c, &xt, x0, &args[1]));
      expect_ok(vkhlo_buffer_create(c, &yt, y0, &args[2]));
      struct { int32_t i; float x[16]; int32_t a[3], b[3]; } got[2];
      vkhlo_executable_stats_t s[2];
      for (int form = 0; form < 2; form++) {
        vkhlo_executable_t *exe = form ? plain : batched;
        vkhlo_buffer_t *res[4];
        expect_ok(vkhlo_executable_execute(exe, 3, args, 4, res));
        vkhlo_executable_stats(exe, &s[form]);
        expect_ok(vkhlo_buffer_read(res[0], &got[form].i, 4));
        expect_ok(vkhlo_buffer_read(res[1], got[form].x, sizeof got[form].x));
        expect_ok(vkhlo_buffer_read(res[2], got[form].a, sizeof got[form].a));
        expect_ok(vkhlo_buffer_read(res[3], got[form].b, sizeof got[form].b));
        for (int r = 0; r < 4; r++) vkhlo_buffer_destroy(res[r]);
      }
      /* the host's: n transposes, +1 each; a and b swapped n times */
      for (int form = 0; form < 2; form++) {
        assert_int_equal(got[form].i, n);
        for (int r = 0; r < 4; r++)
          for (int col = 0; col < 4; col++) {
            float want = (n % 2 ? x0[4 * col + r] : x0[4 * r + col]) + (float)n;
            if (got[form].x[4 * r + col] != want)
              fail_msg("n %d form %d x[%d][%d] = %g, want %g", n, form, r, col, got[form].x[4 * r + col], want);
          }
        for (int e = 0; e < 3; e++) {
          assert_int_equal(got[form].a[e], n % 2 ? 7 : y0[e]);
          assert_int_equal(got[form].b[e], n % 2 ? y0[e] : 7);
        }
      }
      assert_true(s[1].submissions > n); /* one per iteration */
      /* n + 1 conds in batches: at most n / most + 3, and the result copies */
      if (has_cr && s[0].submissions > (n + 1) / most + 3 + 2)
        fail_msg("n %d: %lld submissions batched", n, (long long)s[0].submissions);
      for (int a = 0; a < 3; a++) vkhlo_buffer_destroy(args[a]);
    }
    vkhlo_executable_destroy(batched);
    vkhlo_executable_destroy(plain);
    }
    if (staged) {
      assert_int_equal(vkhlo_context_validation_message_count(c), 0);
      vkhlo_context_destroy(c);
    }
  }
  iteration_limit(ctx, "4");
}

/* A counted loop longer than VKHLO_MAX_LOOP_ITERATIONS fails as the host
 * loop does, before it runs; and a counted loop of more thunks than one
 * recording takes (65536) runs in parts, correctly. */
static void counted_loop_limits(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char program[] =
      "func.func @main(%x: tensor<4xi32>) -> tensor<4xi32> {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xi32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<40000> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %c3 = stablehlo.constant dense<3> : tensor<4xi32>\n"
      "    %a = stablehlo.add %v, %c3 : tensor<4xi32>\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    stablehlo.return %j, %a : tensor<i32>, tensor<4xi32>\n"
      "  }\n"
      "  return %r#1 : tensor<4xi32>\n}\n";
  vkhlo_tensor_type_t t = {VKHLO_S32, 1, {4}};
  int32_t x[4] = {0, 1, -5, 100}, out[4];
  vkhlo_buffer_t *arg, *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &arg));
  setenv("VKHLO_MAX_LOOP_ITERATIONS", "39999", 1);
  vkhlo_executable_t *exe = test_compile(ctx, program);
  unsetenv("VKHLO_MAX_LOOP_ITERATIONS");
  vkhlo_status_t st = vkhlo_executable_execute(exe, 1, &arg, 1, &res);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_DEADLINE_EXCEEDED);
  assert_non_null(strstr(vkhlo_status_message(st), "39999"));
  vkhlo_status_free(st);
  vkhlo_executable_destroy(exe);
  exe = test_compile(ctx, program);
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  for (int e = 0; e < 4; e++) assert_int_equal(out[e], x[e] + 3 * 40000);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_true(s.submissions >= 2 && s.submissions <= 4); /* in parts of at most 65536 thunks */
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
}

/* Small side-effect-free conditionals become selects (codegen/expand.c,
 * "conditionals as selects"): the program is straight-line, one
 * submission, and gives the taken branch's values, case indices out of
 * range taking the last branch; a conditional with a dot in a branch stays
 * one (its selector read on the host). */
static void cheap_conditionals_become_selects(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char cheap[] =
      "func.func @main(%x: tensor<4xf32>, %p: tensor<i1>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i32>) {\n"
      "  %a = \"stablehlo.if\"(%p) ({\n"
      "    %n = stablehlo.negate %x : tensor<4xf32>\n"
      "    stablehlo.return %n : tensor<4xf32>\n"
      "  }, {\n"
      "    %e = stablehlo.add %x, %x : tensor<4xf32>\n"
      "    stablehlo.return %e : tensor<4xf32>\n"
      "  }) : (tensor<i1>) -> tensor<4xf32>\n"
      "  %b:2 = \"stablehlo.case\"(%k) ({\n"
      "    %c = stablehlo.constant dense<10> : tensor<i32>\n"
      "    stablehlo.return %x, %c : tensor<4xf32>, tensor<i32>\n"
      "  }, {\n"
      "    %m = stablehlo.multiply %x, %x : tensor<4xf32>\n"
      "    %c = stablehlo.constant dense<20> : tensor<i32>\n"
      "    stablehlo.return %m, %c : tensor<4xf32>, tensor<i32>\n"
      "  }, {\n"
      "    %s = stablehlo.sqrt %x : tensor<4xf32>\n"
      "    %c = stablehlo.constant dense<30> : tensor<i32>\n"
      "    stablehlo.return %s, %c : tensor<4xf32>, tensor<i32>\n"
      "  }) : (tensor<i32>) -> (tensor<4xf32>, tensor<i32>)\n"
      "  return %a, %b#0, %b#1 : tensor<4xf32>, tensor<4xf32>, tensor<i32>\n}\n";
  static const char with_dot[] =
      "func.func @main(%x: tensor<4xf32>, %q: tensor<i1>, %k: tensor<i32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<i32>) {\n"
      "  %t = stablehlo.constant dense<true> : tensor<i1>\n"
      "  %p = stablehlo.compare EQ, %q, %t : (tensor<i1>, tensor<i1>) -> tensor<i1>\n"
      "  %a = \"stablehlo.if\"(%p) ({\n"
      "    %n = stablehlo.negate %x : tensor<4xf32>\n"
      "    stablehlo.return %n : tensor<4xf32>\n"
      "  }, {\n"
      "    %d = stablehlo.dot_general %x, %x, contracting_dims = [0] x [0] : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>\n"
      "    %e = stablehlo.broadcast_in_dim %d, dims = [] : (tensor<f32>) -> tensor<4xf32>\n"
      "    stablehlo.return %e : tensor<4xf32>\n"
      "  }) : (tensor<i1>) -> tensor<4xf32>\n"
      "  %c = stablehlo.constant dense<7> : tensor<i32>\n"
      "  return %a, %x, %c : tensor<4xf32>, tensor<4xf32>, tensor<i32>\n}\n";
  vkhlo_tensor_type_t tx = {VKHLO_F32, 1, {4}}, tp = {VKHLO_PRED, 0, {0}}, tk = {VKHLO_S32, 0, {0}};
  float x[4] = {1, 4, 9, 16};
  for (int form = 0; form < 2; form++) {
    vkhlo_executable_t *exe = test_compile(ctx, form ? with_dot : cheap);
    for (int p = 0; p < 2; p++)
      for (int32_t k = -1; k <= 3; k++) {
        uint8_t pred = (uint8_t)p;
        vkhlo_buffer_t *args[3], *res[3];
        expect_ok(vkhlo_buffer_create(ctx, &tx, x, &args[0]));
        expect_ok(vkhlo_buffer_create(ctx, &tp, &pred, &args[1]));
        expect_ok(vkhlo_buffer_create(ctx, &tk, &k, &args[2]));
        expect_ok(vkhlo_executable_execute(exe, 3, args, 3, res));
        float a[4], b[4];
        int32_t c;
        expect_ok(vkhlo_buffer_read(res[0], a, sizeof a));
        expect_ok(vkhlo_buffer_read(res[1], b, sizeof b));
        expect_ok(vkhlo_buffer_read(res[2], &c, sizeof c));
        int branch = k == 0 ? 0 : k == 1 ? 1 : 2;
        for (int e = 0; e < 4; e++) {
          float want_a = p ? -x[e] : (form ? 354.0f : 2 * x[e]); /* 1 + 16 + 81 + 256 */
          float want_b = form ? x[e] : branch == 0 ? x[e] : branch == 1 ? x[e] * x[e] : sqrtf(x[e]);
          if (a[e] != want_a || b[e] != want_b)
            fail_msg("form %d p %d k %d element %d: %g %g, want %g %g", form, p, (int)k, e, a[e], b[e], want_a, want_b);
        }
        assert_int_equal(c, form ? 7 : 10 * (branch + 1));
        vkhlo_executable_stats_t s;
        vkhlo_executable_stats(exe, &s);
        if (form == 0) assert_true(s.submissions <= 2); /* straight-line */
        else assert_true(s.submissions >= 2);            /* the if's predicate computed, read back */
        for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(res[i]), vkhlo_buffer_destroy(args[i]);
      }
    vkhlo_executable_destroy(exe);
  }
}

/* $VKHLO_MAX_LOOP_ITERATIONS and $VKHLO_MAX_ALLOCATION_BYTES: a bad value
 * fails the compile with INVALID_ARGUMENT naming the variable (it used to
 * become 0: every loop failed, or be ignored); a good one is obeyed. */
static void limits_from_the_environment(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char *const names[] = {"VKHLO_MAX_LOOP_ITERATIONS", "VKHLO_MAX_ALLOCATION_BYTES"};
  static const char *const bad[] = {"", "abc", "12x", " 5", "-1", "0", "18446744073709551616"};
  for (int v = 0; v < 2; v++)
    for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
      setenv(names[v], bad[b], 1);
      vkhlo_executable_t *exe = NULL;
      vkhlo_status_t st = vkhlo_executable_compile(ctx, while_program, strlen(while_program), "t.mlir", NULL, &exe);
      unsetenv(names[v]);
      if (vkhlo_status_code(st) != VKHLO_STATUS_INVALID_ARGUMENT || !strstr(vkhlo_status_message(st), names[v]))
        fail_msg("%s='%s': got %s: %s", names[v], bad[b], vkhlo_status_code_name(vkhlo_status_code(st)),
                 vkhlo_status_message(st));
      assert_null(exe);
      vkhlo_status_free(st);
    }
  setenv("VKHLO_MAX_ALLOCATION_BYTES", "8", 1); /* below any offset alignment */
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, while_program, strlen(while_program), "t.mlir", NULL, &exe);
  unsetenv("VKHLO_MAX_ALLOCATION_BYTES");
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  vkhlo_status_free(st);
  iteration_limit(ctx, NULL); /* a good value is obeyed */
}

/* $VKHLO_GEMM, read when a context is created: an unknown kernel name fails
 * the creation with INVALID_ARGUMENT naming the variable (it used to mean
 * auto without a word); a known one or an empty value is accepted. */
static void gemm_kind_from_the_environment(void **state) {
  (void)state;
  static const char *const values[] = {"bogus", "CPU", "gpu ", "auto", "cpu", "gpu", "off", ""};
  for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
    bool good = i >= 3;
    setenv("VKHLO_GEMM", values[i], 1);
    vkhlo_context_t *ctx = NULL;
    vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
    unsetenv("VKHLO_GEMM");
    if (good ? st != NULL
             : vkhlo_status_code(st) != VKHLO_STATUS_INVALID_ARGUMENT || !strstr(vkhlo_status_message(st), "VKHLO_GEMM"))
      fail_msg("VKHLO_GEMM='%s': got %s: %s", values[i], vkhlo_status_code_name(vkhlo_status_code(st)),
               st ? vkhlo_status_message(st) : "");
    assert_true(good == (ctx != NULL));
    vkhlo_status_free(st);
    vkhlo_context_destroy(ctx);
  }
}

/* A user kernel registered for custom_call @test.axpb: out = in0 * 2 + in1. */
static const char axpb_glsl[] =
    "#version 450\n"
    "layout(local_size_x = 32) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };\n"
    "layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };\n"
    "layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };\n"
    "layout(push_constant) uniform P { uint element_count; };\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i >= element_count) return;\n"
    "  c[i] = a[i] * 2.0 + b[i];\n"
    "}\n";

static void custom_call_runs_user_kernel(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%a: tensor<100xf32>, %b: tensor<100xf32>) -> tensor<100xf32> {\n"
      "  %0 = stablehlo.custom_call @test.axpb(%a, %b) : (tensor<100xf32>, tensor<100xf32>) -> tensor<100xf32>\n"
      "  %1 = stablehlo.add %0, %b : tensor<100xf32>\n"
      "  return %1 : tensor<100xf32>\n}\n";
  test_expect_compile_error(ctx, text, "cc.mlir", VKHLO_STATUS_UNIMPLEMENTED, "cc.mlir:2:", "@test.axpb",
                            (const char *)NULL);

  vkhlo_custom_call_kernel_t k = {"test.axpb", axpb_glsl, NULL, 0, 32};
  expect_ok(vkhlo_context_register_custom_call(ctx, &k));
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {100}};
  float a[100], b[100], out[100];
  for (int i = 0; i < 100; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i - 3.0f;
  }
  vkhlo_buffer_t *args[2], *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, a, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, b, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  for (int i = 0; i < 100; i++) assert_true(out[i] == a[i] * 2.0f + b[i] + b[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);

  /* registration errors */
  vkhlo_custom_call_kernel_t none = {"test.none", NULL, NULL, 0, 0};
  vkhlo_status_t st = vkhlo_context_register_custom_call(ctx, &none);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  vkhlo_status_free(st);
  vkhlo_custom_call_kernel_t bad = {"test.bad", "#version 450\nvoid main() { undefined_thing(); }\n", NULL, 0, 0};
  st = vkhlo_context_register_custom_call(ctx, &bad);
  assert_non_null(st);
  assert_non_null(strstr(vkhlo_status_message(st), "test.bad"));
  vkhlo_status_free(st);
  uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  vkhlo_custom_call_kernel_t spv = {"test.junk", NULL, junk, sizeof junk, 0};
  st = vkhlo_context_register_custom_call(ctx, &spv);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(st), "spirv-val"));
  vkhlo_status_free(st);
}

/* A partitioner annotation that changes the shape (a full array into one
 * device's shard of two) belongs to a program for several devices: refused
 * by name at its position, where the type-preserving ones run as their
 * operands (tests/ops/collectives.mlir). */
static void shard_shape_refused(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char text[] =
      "func.func @main(%x: tensor<8x4xf32>) -> tensor<4x4xf32> {\n"
      "  %0 = stablehlo.custom_call @SPMDFullToShardShape(%x) {mhlo.sharding = \"{manual}\"} :"
      " (tensor<8x4xf32>) -> tensor<4x4xf32>\n"
      "  return %0 : tensor<4x4xf32>\n}\n";
  test_expect_compile_error(ctx, text, "shard.mlir", VKHLO_STATUS_UNIMPLEMENTED,
                            "shard.mlir:2:3: custom_call @SPMDFullToShardShape changing its operand's type",
                            (const char *)NULL);
}

typedef struct feed_log {
  int calls;
  float outfed[4];
  char ops[4][16];
} feed_log_t;

static vkhlo_status_t on_host_call(void *user, const vkhlo_host_call_t *call) {
  feed_log_t *log = user;
  if (log->calls < 4) snprintf(log->ops[log->calls], sizeof log->ops[0], "%s", call->op);
  log->calls++;
  if (strcmp(call->op, "infeed") == 0) {
    if (call->tensor_count != 1 || call->types[0].element_type != VKHLO_F32)
      return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "unexpected infeed");
    float *x = call->data[0];
    for (int i = 0; i < 4; i++) x[i] = 10.0f * (float)(i + 1);
  } else if (strcmp(call->op, "outfeed") == 0) {
    memcpy(log->outfed, call->data[0], sizeof log->outfed);
  }
  return NULL;
}

static void infeed_and_outfeed_reach_the_host(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %r:2 = \"stablehlo.infeed\"(%t) {infeed_config = \"q0\"} : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)\n"
      "  %s = stablehlo.add %r#0, %x : tensor<4xf32>\n"
      "  %t2 = \"stablehlo.outfeed\"(%s, %r#1) {outfeed_config = \"\"} : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token\n"
      "  return %s : tensor<4xf32>\n}\n";
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {4}};
  float x[4] = {1, 2, 3, 4}, out[4];
  vkhlo_buffer_t *arg, *res = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &arg));
  vkhlo_status_t st = vkhlo_executable_execute(exe, 1, &arg, 1, &res);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_UNIMPLEMENTED); /* no callback yet */
  vkhlo_status_free(st);
  feed_log_t log;
  memset(&log, 0, sizeof log);
  vkhlo_context_set_host_callback(ctx, on_host_call, &log);
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  assert_int_equal(log.calls, 2);
  assert_string_equal(log.ops[0], "infeed");
  assert_string_equal(log.ops[1], "outfeed");
  for (int i = 0; i < 4; i++) {
    assert_true(out[i] == 10.0f * (float)(i + 1) + x[i]);
    assert_true(log.outfed[i] == out[i]);
  }
  vkhlo_context_set_host_callback(ctx, NULL, NULL);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
}

/* A while loop whose body has an outfeed is itself an effect: it stays
 * after the infeed before it, although the memory scheduler would rather
 * run the loop first (it frees %big; the infeed allocates as much). */
static void effects_inside_regions_keep_their_order(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %n: tensor<i32>) -> (tensor<i32>, tensor<1024xf32>) {\n"
      "  %big = stablehlo.add %x, %x : tensor<1024xf32>\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %r:2 = \"stablehlo.infeed\"(%t) {infeed_config = \"\"} : (!stablehlo.token) -> (tensor<1024xf32>, !stablehlo.token)\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "  %w = stablehlo.while(%i = %n) : tensor<i32>\n"
      "    cond {\n"
      "      %p = stablehlo.compare GT, %i, %c0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %bt = stablehlo.create_token : !stablehlo.token\n"
      "      %o = \"stablehlo.outfeed\"(%big, %bt) {outfeed_config = \"\"} : (tensor<1024xf32>, !stablehlo.token) -> !stablehlo.token\n"
      "      %j = stablehlo.subtract %i, %c1 : tensor<i32>\n"
      "      stablehlo.return %j : tensor<i32>\n"
      "    }\n"
      "  return %w, %r#0 : tensor<i32>, tensor<1024xf32>\n}\n";
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t tx = {VKHLO_F32, 1, {1024}}, tn = {VKHLO_S32, 0, {0}};
  static float x[1024];
  for (int i = 0; i < 1024; i++) x[i] = (float)i;
  int32_t n = 1;
  vkhlo_buffer_t *args[2], *res[2] = {NULL, NULL};
  expect_ok(vkhlo_buffer_create(ctx, &tx, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &tn, &n, &args[1]));
  feed_log_t log;
  memset(&log, 0, sizeof log);
  vkhlo_context_set_host_callback(ctx, on_host_call, &log);
  expect_ok(vkhlo_executable_execute(exe, 2, args, 2, res));
  vkhlo_context_set_host_callback(ctx, NULL, NULL);
  assert_int_equal(log.calls, 2);
  assert_string_equal(log.ops[0], "infeed");
  assert_string_equal(log.ops[1], "outfeed");
  for (int i = 0; i < 4; i++) assert_true(log.outfed[i] == 2.0f * x[i]);
  for (int i = 0; i < 2; i++) {
    vkhlo_buffer_destroy(res[i]);
    vkhlo_buffer_destroy(args[i]);
  }
  vkhlo_executable_destroy(exe);
}

/* vkhlo_executable_execute's fresh results come from the context's pool:
 * results kept alive are distinct buffers with their own values; destroyed
 * ones go back to the pool; the execute-destroy loop replays one recording
 * and allocates no device memory. */
/* Two products of the same shapes are two kernels of the same code: one
 * pipeline serves both (exe_create_pipelines), compiled and loaded from a
 * serialized executable alike, and each still reads its own operands. */

/* c[16, 32] = a[16, 32] b[32, 32], row-major */
static void host_product_16x32(const float *a, const float *b, float *c) {
  for (int m = 0; m < 16; m++)
    for (int n = 0; n < 32; n++) {
      float s = 0;
      for (int k = 0; k < 32; k++) s += a[m * 32 + k] * b[k * 32 + n];
      c[m * 32 + n] = s;
    }
}

static void layers_share_pipelines(void **state) {
  vkhlo_context_t *ctx = *state;
  static float x[16 * 32], w1[32 * 32], w2[32 * 32], h[16 * 32], want[16 * 32], got[16 * 32];
  /* small integers: every product and sum is exact in f32 */
  for (int i = 0; i < 16 * 32; i++) x[i] = (float)(i % 5 - 2);
  for (int i = 0; i < 32 * 32; i++) w1[i] = (float)(i % 3 - 1), w2[i] = (float)((i * 7) % 5 - 2);
  host_product_16x32(x, w1, h);
  host_product_16x32(h, w2, want);
  vkhlo_executable_t *exe = test_compile(ctx, test_two_products_program);
  vkhlo_executable_t *loaded = test_reload(ctx, exe);
  vkhlo_tensor_type_t tx = {VKHLO_F32, 2, {16, 32}}, tw = {VKHLO_F32, 2, {32, 32}};
  vkhlo_buffer_t *args[3], *res;
  expect_ok(vkhlo_buffer_create(ctx, &tx, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &tw, w1, &args[1]));
  expect_ok(vkhlo_buffer_create(ctx, &tw, w2, &args[2]));
  vkhlo_executable_t *exes[2] = {exe, loaded};
  for (int e = 0; e < 2; e++) {
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exes[e], &s);
    assert_int_equal(s.kernels, 2);
    assert_int_equal(s.pipelines, 1);
    expect_ok(vkhlo_executable_execute(exes[e], 3, args, 1, &res));
    expect_ok(vkhlo_buffer_read(res, got, sizeof got));
    vkhlo_buffer_destroy(res);
    for (int i = 0; i < 16 * 32; i++) assert_true(got[i] == want[i]);
  }
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(args[i]);
  vkhlo_executable_destroy(loaded);
  vkhlo_executable_destroy(exe);
}

static void fresh_results_come_from_the_pool(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, add_program);
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {-1, 0.5f, 2, 8, -3, 1}, out[6];
  vkhlo_buffer_t *ab[2], *ba[2], *r1, *r2;
  expect_ok(vkhlo_buffer_create(ctx, &t, a, &ab[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, b, &ab[1]));
  ba[0] = ab[1];
  ba[1] = ab[0];
  /* two live results: independent */
  expect_ok(vkhlo_executable_execute(exe, 2, ab, 1, &r1));
  expect_ok(vkhlo_executable_execute(exe, 2, ba, 1, &r2));
  assert_ptr_not_equal(r1, r2);
  expect_ok(vkhlo_buffer_read(r1, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == (a[i] + b[i]) * a[i]);
  expect_ok(vkhlo_buffer_read(r2, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == (a[i] + b[i]) * b[i]);
  /* destroying returns the memory to the pool */
  vkhlo_memory_stats_t m0, m1;
  vkhlo_context_memory_stats(ctx, &m0);
  vkhlo_buffer_destroy(r1);
  vkhlo_buffer_destroy(r2);
  vkhlo_context_memory_stats(ctx, &m1);
  assert_int_equal(m1.pooled_buffers, m0.pooled_buffers + 2);
  assert_int_equal(m1.device_allocations_live, m0.device_allocations_live);
  /* the execute-destroy loop: one recording, no new device memory */
  vkhlo_executable_stats_t s0, s1;
  expect_ok(vkhlo_executable_execute(exe, 2, ab, 1, &r1));
  vkhlo_buffer_destroy(r1);
  vkhlo_executable_stats(exe, &s0);
  vkhlo_context_memory_stats(ctx, &m0);
  for (int i = 0; i < 50; i++) {
    expect_ok(vkhlo_executable_execute(exe, 2, ab, 1, &r1));
    if (i < 49) vkhlo_buffer_destroy(r1);
  }
  vkhlo_executable_stats(exe, &s1);
  vkhlo_context_memory_stats(ctx, &m1);
  assert_int_equal(s1.executions - s0.executions, 50);
  assert_int_equal(s1.recordings, s0.recordings); /* replayed every time */
  assert_int_equal(m1.device_allocations_made, m0.device_allocations_made);
  expect_ok(vkhlo_buffer_read(r1, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == (a[i] + b[i]) * a[i]);
  /* a pooled buffer given out by vkhlo_buffer_create without data is zeroed */
  vkhlo_buffer_destroy(r1);
  vkhlo_buffer_t *z;
  expect_ok(vkhlo_buffer_create(ctx, &t, NULL, &z));
  expect_ok(vkhlo_buffer_read(z, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == 0.0f);
  vkhlo_buffer_destroy(z);
  vkhlo_buffer_destroy(ab[0]);
  vkhlo_buffer_destroy(ab[1]);
  vkhlo_executable_destroy(exe);
}

/* IEEE special values survive the device's compiler: -0.0 keeps its sign
 * through sine and multiply, x != x finds NaN, inf - inf is NaN.  Inputs are
 * parameters so that nothing can be folded on the host. */
static const char float_semantics_program[] =
    "func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, "
    "tensor<4xi1>, tensor<4xf32>) {\n"
    "  %s = stablehlo.sine %x : tensor<4xf32>\n"
    "  %m = stablehlo.multiply %x, %y : tensor<4xf32>\n"
    "  %n = stablehlo.compare NE, %x, %x, FLOAT : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>\n"
    "  %d = stablehlo.subtract %x, %y : tensor<4xf32>\n"
    "  return %s, %m, %n, %d : tensor<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<4xf32>\n"
    "}\n";

static uint32_t float_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static bool bits_are_nan(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

static void float_semantics_are_ieee(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = test_compile(ctx, float_semantics_program);
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  const uint32_t neg_zero = 0x80000000u, pos_inf = 0x7f800000u, neg_inf = 0xff800000u;
  uint32_t xb[4] = {neg_zero, 0x7fc00000u, pos_inf, neg_inf};
  float x[4], y[4] = {1.0f, 1.0f, 0, 2.0f};
  memcpy(x, xb, sizeof x);
  memcpy(&y[2], &pos_inf, sizeof pos_inf);
  vkhlo_buffer_t *args[2], *res[4];
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, y, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 4, res));
  uint32_t sine[4], product[4], difference[4];
  uint8_t ne[4];
  expect_ok(vkhlo_buffer_read(res[0], sine, sizeof sine));
  expect_ok(vkhlo_buffer_read(res[1], product, sizeof product));
  expect_ok(vkhlo_buffer_read(res[2], ne, sizeof ne));
  expect_ok(vkhlo_buffer_read(res[3], difference, sizeof difference));
  /* sin(-0) = -0; sin(NaN), sin(+-inf) = NaN */
  assert_int_equal(sine[0], neg_zero);
  assert_true(bits_are_nan(sine[1]) && bits_are_nan(sine[2]) && bits_are_nan(sine[3]));
  /* -0 * 1 = -0; NaN * 1 = NaN; inf * inf = inf; -inf * 2 = -inf */
  assert_int_equal(product[0], neg_zero);
  assert_true(bits_are_nan(product[1]));
  assert_int_equal(product[2], pos_inf);
  assert_int_equal(product[3], neg_inf);
  /* x != x only for NaN */
  assert_int_equal(ne[0], 0);
  assert_int_equal(ne[1], 1);
  assert_int_equal(ne[2], 0);
  assert_int_equal(ne[3], 0);
  /* -0 - 1 = -1; NaN - 1 = NaN; inf - inf = NaN; -inf - 2 = -inf */
  assert_int_equal(difference[0], float_bits(-1.0f));
  assert_true(bits_are_nan(difference[1]));
  assert_true(bits_are_nan(difference[2]));
  assert_int_equal(difference[3], neg_inf);
  for (int i = 0; i < 4; i++) vkhlo_buffer_destroy(res[i]);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_multiply_runs),
      cmocka_unit_test(buffer_write_replays),
      cmocka_unit_test(execute_rejects_wrong_arguments),
      cmocka_unit_test(bad_text_gives_located_error),
      cmocka_unit_test(checks_report_pass_and_fail),
      cmocka_unit_test(while_loop_counts),
      cmocka_unit_test(counted_loops_replay),
      cmocka_unit_test(counted_loop_limits),
      cmocka_unit_test(batched_loops),
      cmocka_unit_test(cheap_conditionals_become_selects),
      cmocka_unit_test(limits_from_the_environment),
      cmocka_unit_test(gemm_kind_from_the_environment),
      cmocka_unit_test(custom_call_runs_user_kernel),
      cmocka_unit_test(shard_shape_refused),
      cmocka_unit_test(infeed_and_outfeed_reach_the_host),
      cmocka_unit_test(effects_inside_regions_keep_their_order),
      cmocka_unit_test(float_semantics_are_ieee),
      cmocka_unit_test(fresh_results_come_from_the_pool),
      cmocka_unit_test(layers_share_pipelines),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
