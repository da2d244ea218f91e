/*
 * Buffer assignment, in-place reuse, reshape aliasing, scheduling and
 * command-buffer replay (api/lower.c, api/buffer_assignment.c,
 * api/execute.c), through small programs with interesting live ranges:
 * elementwise chains, a while loop with a captured value, a conditional,
 * dynamic_update_slice and scatter.  Each program is compiled with and
 * without fusion, its assignment is proven safe by
 * exe_verify_buffer_assignment, its peak memory is compared with the
 * liveness lower bound, and it is run and its result compared with the
 * host's.  Negative tests corrupt an assignment and expect the checker to
 * say so.  The validation layer (with synchronization validation) is on:
 * a missing barrier would be reported.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/internal.h"
#include "tests/test_support.h"

#define N 1024

static vkhlo_executable_t *compile(vkhlo_context_t *ctx, const char *text, bool no_fusion) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "test.mlir", &o, &exe));
  expect_ok(exe_verify_buffer_assignment(exe));
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  /* best fit by size reaches the lower bound on these up to alignment */
  assert_true((double)s.peak_intermediate_bytes <= 1.2 * (double)s.liveness_lower_bound_bytes + 4096.0);
  assert_true(s.barriers >= 0);
  return exe;
}

static int count_inplace(const vkhlo_executable_t *exe) {
  int n = 0;
  for (int i = 0; i < exe->buffer_count; i++) n += exe->buffers[i].inplace_of >= 0;
  return n;
}

/* Copies in |seq| (at any depth), but not the counter-table copies of
 * counted loops (src_stride, api/lower.c "Counter table"). */
static int count_copies(const exe_sequence_t *seq) {
  int n = 0;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    n += t->kind == EXE_THUNK_COPY && !t->src_stride;
    if (t->cond) n += count_copies(t->cond);
    if (t->body) n += count_copies(t->body);
    for (int b = 0; b < t->branch_count; b++) n += count_copies(t->branches[b]);
  }
  return n;
}

/* Runs |exe| on f32 arguments and returns result 0 (heap, N floats max). */
static void run(vkhlo_context_t *ctx, vkhlo_executable_t *exe, int argc, const void *const *host_args,
                float *out, size_t out_count) {
  vkhlo_buffer_t *args[4];
  for (int i = 0; i < argc; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, host_args[i], &args[i]));
  }
  vkhlo_buffer_t *res;
  expect_ok(vkhlo_executable_execute(exe, argc, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, out_count * sizeof(float)));
  vkhlo_buffer_destroy(res);
  for (int i = 0; i < argc; i++) vkhlo_buffer_destroy(args[i]);
}

static int count_result_allocations(const vkhlo_executable_t *exe) {
  int n = 0;
  for (int i = 0; i < exe->allocation_count; i++) n += exe->allocations[i].kind == EXE_ALLOCATION_RESULT;
  return n;
}

static float xs[N];

static void fill_inputs(void) {
  for (int i = 0; i < N; i++) xs[i] = (float)(i % 37) * 0.25f - 3.0f;
}

/* ------------------------------------------------------- elementwise */

static const char chain_program[] =
    "func.func @main(%x: tensor<1024xf32>) -> tensor<32x32xf32> {\n"
    "  %a = stablehlo.add %x, %x : tensor<1024xf32>\n"
    "  %b = stablehlo.multiply %a, %a : tensor<1024xf32>\n"
    "  %c = stablehlo.negate %b : tensor<1024xf32>\n"
    "  %r = stablehlo.reshape %c : (tensor<1024xf32>) -> tensor<32x32xf32>\n"
    "  return %r : tensor<32x32xf32>\n"
    "}\n";

static void elementwise_chain_in_place(void **state) {
  vkhlo_context_t *ctx = *state;
  fill_inputs();
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, chain_program, !fused);
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exe, &s);
    /* the chain's storage (a, b, c and the reshape) is the caller's result
     * buffer: no temp memory, no copy-out */
    assert_int_equal(count_result_allocations(exe), 1);
    assert_int_equal(s.peak_intermediate_bytes, 0);
    assert_int_equal(s.liveness_lower_bound_bytes, 0);
    if (!fused) {
      assert_int_equal(s.dispatches, 3); /* the reshape is no dispatch */
      assert_int_equal(count_inplace(exe), 2); /* b over a, c over b */
      /* a chain: each dispatch reads what the previous one wrote */
      assert_int_equal(s.barriers, 2);
    }
    float out[N];
    const void *args[1] = {xs};
    for (int rep = 0; rep < 3; rep++) { /* recorded once, replayed */
      run(ctx, exe, 1, args, out, N);
      for (int i = 0; i < N; i++) assert_true(out[i] == -(2 * xs[i]) * (2 * xs[i]));
    }
    vkhlo_executable_destroy(exe);
  }
}

/* Two independent chains need no barrier between them. */
static void independent_dispatches_share_no_barrier(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {\n"
      "  %a = stablehlo.negate %x : tensor<1024xf32>\n"
      "  %b = stablehlo.negate %y : tensor<1024xf32>\n"
      "  %c = stablehlo.add %a, %b : tensor<1024xf32>\n"
      "  return %c : tensor<1024xf32>\n"
      "}\n";
  vkhlo_executable_t *exe = compile(ctx, text, true);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_int_equal(s.dispatches, 3);
  /* a and b together, then c (which writes the caller's buffer) */
  assert_int_equal(s.barriers, 1);
  fill_inputs();
  float ys[N], out[N];
  for (int i = 0; i < N; i++) ys[i] = (float)i;
  const void *args[2] = {xs, ys};
  run(ctx, exe, 2, args, out, N);
  for (int i = 0; i < N; i++) assert_true(out[i] == -xs[i] - ys[i]);
  vkhlo_executable_destroy(exe);
}

/* Replay follows the arguments: new buffers, a destroyed and re-created one. */
static void replay_follows_arguments(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, chain_program, true);
  assert_true(exe->straight_line);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {N}};
  float data[N], out[N];
  for (int round = 0; round < 4; round++) {
    for (int i = 0; i < N; i++) data[i] = (float)(i + round);
    vkhlo_buffer_t *arg, *res;
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &arg));
    for (int rep = 0; rep < 2; rep++) {
      expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
      expect_ok(vkhlo_buffer_read(res, out, sizeof out));
      for (int i = 0; i < N; i++) assert_true(out[i] == -(2 * data[i]) * (2 * data[i]));
      vkhlo_buffer_destroy(res);
    }
    vkhlo_buffer_destroy(arg);
  }
  vkhlo_executable_destroy(exe);
}

/* execute_into: results land in the caller's buffers; the recording is
 * replayed while the argument and result buffers stay the same and
 * re-recorded when either changes; aliasing arguments is refused. */
static void execute_into_replays_per_buffers(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, chain_program, false);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {N}}, rt = {VKHLO_F32, 2, {32, 32}};
  float d0[N], d1[N], out[N];
  for (int i = 0; i < N; i++) {
    d0[i] = (float)i;
    d1[i] = (float)(N - i) * 0.5f;
  }
  vkhlo_buffer_t *args[2], *res[2];
  expect_ok(vkhlo_buffer_create(ctx, &t, d0, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, d1, &args[1]));
  expect_ok(vkhlo_buffer_create(ctx, &rt, NULL, &res[0]));
  expect_ok(vkhlo_buffer_create(ctx, &rt, NULL, &res[1]));
  /* (argument, result) per run: same, same, new argument, new result */
  const int plan[5][2] = {{0, 0}, {0, 0}, {1, 0}, {1, 1}, {0, 1}};
  for (int k = 0; k < 5; k++) {
    const float *d = plan[k][0] ? d1 : d0;
    expect_ok(vkhlo_executable_execute_into(exe, 1, &args[plan[k][0]], 1, &res[plan[k][1]]));
    assert_true(exe->recorded);
    assert_int_equal(exe->recorded_serials[0], args[plan[k][0]]->serial);
    assert_int_equal(exe->recorded_serials[1], res[plan[k][1]]->serial);
    expect_ok(vkhlo_buffer_read(res[plan[k][1]], out, sizeof out));
    for (int i = 0; i < N; i++) assert_true(out[i] == -(2 * d[i]) * (2 * d[i]));
  }
  /* a result of the wrong type */
  vkhlo_status_t st = vkhlo_executable_execute_into(exe, 1, &args[0], 1, &args[1]);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(st), "result 0 has type"));
  vkhlo_status_free(st);
  for (int i = 0; i < 2; i++) {
    vkhlo_buffer_destroy(args[i]);
    vkhlo_buffer_destroy(res[i]);
  }
  vkhlo_executable_destroy(exe);
}

/* The same value returned twice: the first result is written in place,
 * the second copied from it. */
static void result_returned_twice(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {\n"
      "  %a = stablehlo.negate %x : tensor<1024xf32>\n"
      "  return %a, %a : tensor<1024xf32>, tensor<1024xf32>\n"
      "}\n";
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    assert_int_equal(count_result_allocations(exe), 1);
    fill_inputs();
    vkhlo_tensor_type_t t = {VKHLO_F32, 1, {N}};
    vkhlo_buffer_t *arg, *res[2];
    expect_ok(vkhlo_buffer_create(ctx, &t, xs, &arg));
    /* results that alias an argument or each other are refused */
    vkhlo_buffer_t *aliased[2][2] = {{arg, arg}, {NULL, NULL}};
    expect_ok(vkhlo_buffer_create(ctx, &t, NULL, &aliased[1][0]));
    aliased[1][1] = aliased[1][0];
    for (int k = 0; k < 2; k++) {
      vkhlo_status_t st = vkhlo_executable_execute_into(exe, 1, &arg, 2, aliased[k]);
      assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
      assert_non_null(strstr(vkhlo_status_message(st), k ? "the same buffer" : "must not alias"));
      vkhlo_status_free(st);
    }
    vkhlo_buffer_destroy(aliased[1][0]);
    for (int rep = 0; rep < 2; rep++) {
      expect_ok(vkhlo_executable_execute(exe, 1, &arg, 2, res));
      for (int r = 0; r < 2; r++) {
        float out[N];
        expect_ok(vkhlo_buffer_read(res[r], out, sizeof out));
        for (int i = 0; i < N; i++) assert_true(out[i] == -xs[i]);
        vkhlo_buffer_destroy(res[r]);
      }
    }
    vkhlo_buffer_destroy(arg);
    vkhlo_executable_destroy(exe);
  }
}

/* A result that is a parameter (through a reshape) and one that is a constant. */
static void results_alias_parameters_and_constants(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<4x4xf32>) -> (tensor<16xf32>, tensor<2xf32>) {\n"
      "  %r = stablehlo.reshape %x : (tensor<4x4xf32>) -> tensor<16xf32>\n"
      "  %c = stablehlo.constant dense<[1.5, 2.5]> : tensor<2xf32>\n"
      "  return %r, %c : tensor<16xf32>, tensor<2xf32>\n"
      "}\n";
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exe, &s);
    assert_int_equal(s.dispatches, 0);
    vkhlo_tensor_type_t t = {VKHLO_F32, 2, {4, 4}};
    float x[16], r[16], c[2];
    for (int i = 0; i < 16; i++) x[i] = (float)i * 3;
    vkhlo_buffer_t *arg, *res[2];
    expect_ok(vkhlo_buffer_create(ctx, &t, x, &arg));
    for (int rep = 0; rep < 2; rep++) {
      expect_ok(vkhlo_executable_execute(exe, 1, &arg, 2, res));
      expect_ok(vkhlo_buffer_read(res[0], r, sizeof r));
      expect_ok(vkhlo_buffer_read(res[1], c, sizeof c));
      assert_memory_equal(r, x, sizeof r);
      assert_true(c[0] == 1.5f && c[1] == 2.5f);
      vkhlo_buffer_destroy(res[0]);
      vkhlo_buffer_destroy(res[1]);
    }
    vkhlo_buffer_destroy(arg);
    vkhlo_executable_destroy(exe);
  }
}

/* ---------------------------------------------------------- control flow */

static const char loop_program[] =
    "func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %n = stablehlo.constant dense<5> : tensor<i32>\n"
    "  %h = stablehlo.constant dense<0.5> : tensor<1024xf32>\n"
    "  %y2 = stablehlo.multiply %y, %h : tensor<1024xf32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<1024xf32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %i1 = stablehlo.add %i, %c1 : tensor<i32>\n"
    "      %t = stablehlo.multiply %v, %h : tensor<1024xf32>\n"
    "      %u = stablehlo.add %t, %y2 : tensor<1024xf32>\n"
    "      %w = stablehlo.negate %u : tensor<1024xf32>\n"
    "      stablehlo.return %i1, %w : tensor<i32>, tensor<1024xf32>\n"
    "    }\n"
    "  %z = stablehlo.add %r#1, %y2 : tensor<1024xf32>\n"
    "  return %z : tensor<1024xf32>\n"
    "}\n";

static void loop_keeps_captures_alive(void **state) {
  vkhlo_context_t *ctx = *state;
  fill_inputs();
  float ys[N], want[N], out[N];
  for (int i = 0; i < N; i++) {
    ys[i] = (float)(i % 11);
    float v = xs[i], y2 = ys[i] * 0.5f;
    for (int k = 0; k < 5; k++) v = -(v * 0.5f + y2);
    want[i] = v + y2;
  }
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, loop_program, !fused);
    assert_true(exe->straight_line); /* 5 trips, counted: unrolled into one recording */
    /* y2 is read inside the loop and after it: it must outlive the loop */
    const void *args[2] = {xs, ys};
    for (int rep = 0; rep < 2; rep++) {
      run(ctx, exe, 2, args, out, N);
      for (int i = 0; i < N; i++) assert_true(out[i] == want[i]);
    }
    if (!fused) assert_true(count_inplace(exe) >= 1); /* w over u inside the body */
    vkhlo_executable_destroy(exe);
  }
}

static const char if_program[] =
    "func.func @main(%x: tensor<1024xf32>, %p: tensor<i1>) -> tensor<1024xf32> {\n"
    "  %e = stablehlo.exponential %x : tensor<1024xf32>\n"
    "  %z = \"stablehlo.if\"(%p) ({\n"
    "    %a = stablehlo.add %x, %x : tensor<1024xf32>\n"
    "    %b = stablehlo.multiply %a, %a : tensor<1024xf32>\n"
    "    stablehlo.return %b : tensor<1024xf32>\n"
    "  }, {\n"
    "    %n = stablehlo.negate %e : tensor<1024xf32>\n"
    "    %m0 = stablehlo.multiply %n, %x : tensor<1024xf32>\n"
    /* an identity window sum (init -0.0): not cheap, so the if stays one
     * (codegen/expand.c turns cheap ones into selects) */
    "    %z0 = stablehlo.constant dense<-0.0> : tensor<f32>\n"
    "    %m = \"stablehlo.reduce_window\"(%m0, %z0) ({\n"
    "    ^bb0(%u: tensor<f32>, %v: tensor<f32>):\n"
    "      %w = stablehlo.add %u, %v : tensor<f32>\n"
    "      stablehlo.return %w : tensor<f32>\n"
    "    }) {window_dimensions = array<i64: 1>} : (tensor<1024xf32>, tensor<f32>) -> tensor<1024xf32>\n"
    "    stablehlo.return %m : tensor<1024xf32>\n"
    "  }) : (tensor<i1>) -> tensor<1024xf32>\n"
    "  %s = stablehlo.subtract %z, %e : tensor<1024xf32>\n"
    "  return %s : tensor<1024xf32>\n"
    "}\n";

static void conditional_branches(void **state) {
  vkhlo_context_t *ctx = *state;
  fill_inputs();
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, if_program, !fused);
    int conditionals = 0;
    for (int t = 0; t < exe->main.count; t++) conditionals += exe->main.thunks[t].kind == EXE_THUNK_CONDITIONAL;
    assert_int_equal(conditionals, 1);
    for (int branch = 0; branch < 2; branch++) {
      bool pred = branch == 0;
      float out[N];
      const void *args[2] = {xs, &pred};
      run(ctx, exe, 2, args, out, N);
      vkhlo_tensor_type_t t = {VKHLO_F32, 1, {N}};
      float e[N];
      { /* the device's exp, through a tiny program, to compare exactly */
        const char *exp_text = "func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n"
                               "  %e = stablehlo.exponential %x : tensor<1024xf32>\n"
                               "  return %e : tensor<1024xf32>\n}\n";
        vkhlo_executable_t *ex = compile(ctx, exp_text, true);
        const void *a1[1] = {xs};
        run(ctx, ex, 1, a1, e, N);
        vkhlo_executable_destroy(ex);
        (void)t;
      }
      for (int i = 0; i < N; i++) {
        float z = pred ? (2 * xs[i]) * (2 * xs[i]) : -e[i] * xs[i];
        assert_true(out[i] == z - e[i]);
      }
    }
    vkhlo_executable_destroy(exe);
  }
}

/* ------------------------------------------- dynamic_update_slice, scatter */

/* A loop whose body reads its state whole while writing the next value
 * (h = h @ W, as an RNN or a scan over layers): the value and the state
 * trade storage after every iteration (exe_thunk_t.rotate) instead of a
 * copy per iteration, the state copied home after an odd number of them.
 * Counted loops of even and odd trip counts, one whose bound is an
 * argument, and an inner loop run 3 times by an outer one; integer-valued
 * f32, so the host's products are exact. */
static const char *rotation_program(const char *bound, bool nested) {
  static char text[4096];
  const char *inner =
      "    %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "    %%r:2 = stablehlo.while(%%i = %%c0, %%h = %%h0) : tensor<i32>, tensor<1x8xf32>\n"
      "     cond {\n"
      "      %%n = stablehlo.constant dense<%s> : tensor<i32>\n"
      "      %%p = stablehlo.compare LT, %%i, %s, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %%p : tensor<i1>\n"
      "    } do {\n"
      "      %%d = stablehlo.dot_general %%h, %%w, contracting_dims = [1] x [0] : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>\n"
      "      %%c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %%j = stablehlo.add %%i, %%c1 : tensor<i32>\n"
      "      stablehlo.return %%j, %%d : tensor<i32>, tensor<1x8xf32>\n"
      "    }\n";
  char body[2048];
  bool arg = bound[0] == '%';
  snprintf(body, sizeof body, inner, arg ? "0" : bound, arg ? "%t" : "%n");
  if (!nested) {
    snprintf(text, sizeof text,
             "func.func @main(%%h0: tensor<1x8xf32>, %%w: tensor<8x8xf32>, %%t: tensor<i32>) -> tensor<1x8xf32> {\n%s"
             "  return %%r#1 : tensor<1x8xf32>\n}\n",
             body);
    return text;
  }
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<1x8xf32>, %%w: tensor<8x8xf32>, %%t: tensor<i32>) -> tensor<1x8xf32> {\n"
           "  %%k0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%o:2 = stablehlo.while(%%k = %%k0, %%h0 = %%x) : tensor<i32>, tensor<1x8xf32>\n"
           "   cond {\n"
           "    %%three = stablehlo.constant dense<3> : tensor<i32>\n"
           "    %%q = stablehlo.compare LT, %%k, %%three, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%q : tensor<i1>\n"
           "  } do {\n%s"
           "    %%one = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%k1 = stablehlo.add %%k, %%one : tensor<i32>\n"
           "    stablehlo.return %%k1, %%r#1 : tensor<i32>, tensor<1x8xf32>\n"
           "  }\n"
           "  return %%o#1 : tensor<1x8xf32>\n}\n",
           body);
  return text;
}

/* The innermost while thunk of |seq|, its depth in *depth (0: none). */
static const exe_thunk_t *innermost_loop(const exe_sequence_t *seq, int *depth) {
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind != EXE_THUNK_WHILE) continue;
    int d = *depth + 1;
    const exe_thunk_t *inner = innermost_loop(t->body, &d);
    *depth = d;
    return inner ? inner : t;
  }
  return NULL;
}

static void loop_state_rotates(void **state) {
  vkhlo_context_t *ctx = *state;
  float w[64], h0[8];
  for (int j = 0; j < 8; j++) {
    h0[j] = (float)(j % 3) - 1.0f;
    for (int k = 0; k < 8; k++) w[j * 8 + k] = (j + 2 * k) % 3 == 0 ? 1.0f : (j == k ? -1.0f : 0.0f);
  }
  static const struct {
    const char *bound;
    bool nested;
    int trips; /* applications of W */
    int loops;
  } cases[] = {{"6", false, 6, 1}, {"7", false, 7, 1}, {"%t", false, 7, 1}, {"5", true, 15, 2}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
    for (int fused = 0; fused < 2; fused++) {
      vkhlo_executable_t *exe = compile(ctx, rotation_program(cases[c].bound, cases[c].nested), !fused);
      int depth = 0, copies = 0;
      const exe_thunk_t *loop = innermost_loop(&exe->main, &depth);
      assert_non_null(loop);
      int tables = 0; /* the counter's next value from a table in a counted loop, no dispatch */
      for (int j = 0; j < loop->body->count; j++) {
        copies += loop->body->thunks[j].kind == EXE_THUNK_COPY && !loop->body->thunks[j].src_stride;
        tables += loop->body->thunks[j].kind == EXE_THUNK_COPY && loop->body->thunks[j].src_stride;
      }
      assert_int_equal(tables, loop->has_trip_count);
      /* h rotates, the counter is in place; every loop counted but the one with an argument bound */
      if (depth != cases[c].loops || copies != 0 || loop->rotate_count != 1 || loop->has_trip_count != (c != 2))
        fail_msg("case %zu fused %d: depth %d, %d copies, %d rotated pairs", c, fused, depth, copies, loop->rotate_count);
      float want[8], next[8];
      memcpy(want, h0, sizeof want);
      for (int t = 0; t < cases[c].trips; t++) {
        for (int k = 0; k < 8; k++) {
          next[k] = 0;
          for (int j = 0; j < 8; j++) next[k] += want[j] * w[j * 8 + k];
        }
        memcpy(want, next, sizeof want);
      }
      int32_t trips = cases[c].trips;
      const void *args[3] = {h0, w, &trips};
      float out[8];
      run(ctx, exe, 3, args, out, 8);
      for (int k = 0; k < 8; k++)
        if (out[k] != want[k])
          fail_msg("case %zu fused %d element %d: %g, want %g", c, fused, k, out[k], want[k]);
      vkhlo_executable_destroy(exe);
    }
}


/* The loop's state written in place (exe_alias_loop_state): a scan whose
 * carry h, counter i, dynamic_update_slice'd rows ys and scatter-added
 * counts c are written by the body's dispatches straight into the state
 * buffers (no copy per step), while a swap of two values (a, b) = (b,
 * a + 1), whose old b is read after a + 1 is computed, keeps its copies,
 * and so does m = broadcast(sum(m)) / 2, whose kernel reads all of m for
 * each element it writes.
 * Results against the host's, fused and unfused, counted and read back. */
static const char *scan_state_program(bool counted) {
  static char text[3072];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<1024xf32>, %%h0: tensor<128xf32>, %%t: tensor<i32>) -> (tensor<8x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<4xf32>, tensor<128xf32>) {\n"
           "  %%xs = stablehlo.reshape %%x : (tensor<1024xf32>) -> tensor<8x128xf32>\n"
           "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<8x128xf32>\n"
           "  %%zb = stablehlo.constant dense<0.0> : tensor<128xf32>\n"
           "  %%zc = stablehlo.constant dense<0.0> : tensor<4xf32>\n"
           "  %%r:7 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%ys = %%z, %%a = %%h0, %%b = %%zb, %%c = %%zc, %%m = %%h0)"
           " : tensor<i32>, tensor<128xf32>, tensor<8x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<4xf32>, tensor<128xf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<8> : tensor<i32>\n"
           "    %%p = stablehlo.compare LT, %%i, %s, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%c00 = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%row2 = stablehlo.dynamic_slice %%xs, %%i, %%c00, sizes = [1, 128] : (tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<1x128xf32>\n"
           "    %%row = stablehlo.reshape %%row2 : (tensor<1x128xf32>) -> tensor<128xf32>\n"
           "    %%half = stablehlo.constant dense<0.5> : tensor<128xf32>\n"
           "    %%hh = stablehlo.multiply %%h, %%half : tensor<128xf32>\n"
           "    %%hn = stablehlo.add %%hh, %%row : tensor<128xf32>\n"
           "    %%hn2 = stablehlo.reshape %%hn : (tensor<128xf32>) -> tensor<1x128xf32>\n"
           "    %%ysn = stablehlo.dynamic_update_slice %%ys, %%hn2, %%i, %%c00 : (tensor<8x128xf32>, tensor<1x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>\n"
           "    %%one = stablehlo.constant dense<1.0> : tensor<128xf32>\n"
           "    %%a1 = stablehlo.add %%a, %%one : tensor<128xf32>\n"
           "    %%four = stablehlo.constant dense<4> : tensor<i32>\n"
           "    %%slot = stablehlo.remainder %%i, %%four : tensor<i32>\n"
           "    %%idx = stablehlo.reshape %%slot : (tensor<i32>) -> tensor<1x1xi32>\n"
           "    %%upd = stablehlo.constant dense<[1.5]> : tensor<1xf32>\n"
           "    %%cn = \"stablehlo.scatter\"(%%c, %%idx, %%upd) ({\n"
           "    ^bb0(%%u: tensor<f32>, %%v: tensor<f32>):\n"
           "      %%s = stablehlo.add %%u, %%v : tensor<f32>\n"
           "      stablehlo.return %%s : tensor<f32>\n"
           "    }) {scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}"
           " : (tensor<4xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<4xf32>\n"
           "    %%zs = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "    %%ms = stablehlo.reduce(%%m init: %%zs) applies stablehlo.add across dimensions = [0] : (tensor<128xf32>, tensor<f32>) -> tensor<f32>\n"
           "    %%mb = stablehlo.broadcast_in_dim %%ms, dims = [] : (tensor<f32>) -> tensor<128xf32>\n"
           "    %%mn = stablehlo.multiply %%mb, %%half : tensor<128xf32>\n"
           "    %%c1 = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%j = stablehlo.add %%i, %%c1 : tensor<i32>\n"
           "    stablehlo.return %%j, %%hn, %%ysn, %%b, %%a1, %%cn, %%mn"
           " : tensor<i32>, tensor<128xf32>, tensor<8x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<4xf32>, tensor<128xf32>\n"
           "  }\n"
           "  return %%r#2, %%r#3, %%r#4, %%r#5, %%r#6 : tensor<8x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<4xf32>, tensor<128xf32>\n"
           "}\n",
           counted ? "%n" : "%t");
  return text;
}

static void loop_state_written_in_place(void **state) {
  vkhlo_context_t *ctx = *state;
  fill_inputs();
  float h0[128], want_ys[8][128], h[128], a[128], b[128], want_c[4] = {0, 0, 0, 0}, m = 0;
  for (int e = 0; e < 128; e++) h0[e] = h[e] = a[e] = (float)(e % 5) - 1.0f, b[e] = 0, m += h0[e];
  m *= 0.5f; /* every element of m after the first step (sums of integers times powers of 2: exact) */
  for (int k = 1; k < 8; k++) m = 128.0f * m * 0.5f;
  for (int i = 0; i < 8; i++) {
    for (int e = 0; e < 128; e++) {
      h[e] = h[e] * 0.5f + xs[i * 128 + e];
      want_ys[i][e] = h[e];
      float a1 = a[e] + 1.0f;
      a[e] = b[e];
      b[e] = a1;
    }
    want_c[i % 4] += 1.5f;
  }
  int32_t trips = 8;
  for (int form = 0; form < 4; form++) {
    bool fused = form & 1, counted = form < 2;
    vkhlo_executable_t *exe = compile(ctx, scan_state_program(counted), !fused);
    const exe_thunk_t *loop = NULL;
    for (int i = 0; i < exe->main.count; i++)
      if (exe->main.thunks[i].kind == EXE_THUNK_WHILE) loop = &exe->main.thunks[i];
    assert_non_null(loop);
    assert_int_equal(loop->has_trip_count, counted);
    /* h, ys and c in place, i from its counter table; of the swap's three
     * copies the one of a + 1 into b trades storage instead, and so does
     * m's where one kernel reads m whole to write it (fused; unfused the
     * sum may be scheduled as a dispatch of its own before m is written,
     * which then goes in place): the two others (b staged, the staged b
     * into a) stay */
    assert_int_equal(count_copies(loop->body), 2);
    if (fused) assert_int_equal(loop->rotate_count, 2);
    else assert_true(loop->rotate_count >= 1 && loop->rotate_count <= 2);
    vkhlo_buffer_t *args[3], *res[5];
    const void *host[3] = {xs, h0, &trips};
    for (int k = 0; k < 3; k++) {
      vkhlo_tensor_type_t t;
      expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
      expect_ok(vkhlo_buffer_create(ctx, &t, host[k], &args[k]));
    }
    expect_ok(vkhlo_executable_execute(exe, 3, args, 5, res));
    float ys[8][128], ga[128], gb[128], gc[4], gm[128];
    expect_ok(vkhlo_buffer_read(res[0], ys, sizeof ys));
    expect_ok(vkhlo_buffer_read(res[1], ga, sizeof ga));
    expect_ok(vkhlo_buffer_read(res[2], gb, sizeof gb));
    expect_ok(vkhlo_buffer_read(res[3], gc, sizeof gc));
    expect_ok(vkhlo_buffer_read(res[4], gm, sizeof gm));
    for (int e = 0; e < 128; e++)
      if (gm[e] != m) fail_msg("form %d m[%d] = %g, want %g", form, e, gm[e], m);
    for (int i = 0; i < 8; i++)
      for (int e = 0; e < 128; e++)
        if (ys[i][e] != want_ys[i][e]) fail_msg("form %d ys[%d][%d] = %g, want %g", form, i, e, ys[i][e], want_ys[i][e]);
    assert_memory_equal(ga, a, sizeof ga);
    assert_memory_equal(gb, b, sizeof gb);
    assert_memory_equal(gc, want_c, sizeof gc);
    for (int k = 0; k < 5; k++) vkhlo_buffer_destroy(res[k]);
    for (int k = 0; k < 3; k++) vkhlo_buffer_destroy(args[k]);
    vkhlo_executable_destroy(exe);
  }
}


static void dynamic_update_slice_in_place(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %u: tensor<16xf32>, %i: tensor<i32>) -> tensor<1024xf32> {\n"
      "  %a = stablehlo.add %x, %x : tensor<1024xf32>\n"
      "  %d = \"stablehlo.dynamic_update_slice\"(%a, %u, %i) : (tensor<1024xf32>, tensor<16xf32>, tensor<i32>)"
      " -> tensor<1024xf32>\n"
      "  %n = stablehlo.negate %d : tensor<1024xf32>\n"
      "  return %n : tensor<1024xf32>\n"
      "}\n";
  fill_inputs();
  float us[16];
  for (int i = 0; i < 16; i++) us[i] = 100.0f + (float)i;
  int32_t start = 40;
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    if (!fused) assert_int_equal(count_inplace(exe), 2); /* d over a, n over d */
    float out[N];
    const void *args[3] = {xs, us, &start};
    run(ctx, exe, 3, args, out, N);
    for (int i = 0; i < N; i++) {
      float v = i >= start && i < start + 16 ? us[i - start] : 2 * xs[i];
      assert_true(out[i] == -v);
    }
    vkhlo_executable_destroy(exe);
  }
}

/* Whether a dispatch of |seq| (at any depth) runs a dynamic_update_slice
 * window kernel (codegen_emit_dus_in_place, which says so in a comment),
 * and whether one runs a whole dynamic_update_slice kernel. */
static void find_dus_kernels(const vkhlo_executable_t *exe, const exe_sequence_t *seq, bool *window, bool *whole) {
  for (int i = 0; seq && i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    find_dus_kernels(exe, t->cond, window, whole);
    find_dus_kernels(exe, t->body, window, whole);
    if (t->kind != EXE_THUNK_DISPATCH) continue;
    const char *g = exe->kernels[t->kernel].glsl;
    if (!g || !strstr(g, "dynamic_update_slice")) continue;
    if (strstr(g, "only the update's elements are written")) *window = true;
    else *whole = true;
  }
}

/* The host's dynamic_update_slice of [32, 32] |a| by [4, 8] |u| at the
 * spec's clamped start (i, j). */
static void host_dus(float *a, const float *u, int i, int j) {
  i = i < 0 ? 0 : i > 28 ? 28 : i;
  j = j < 0 ? 0 : j > 24 ? 24 : j;
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 8; c++) a[(i + r) * 32 + j + c] = u[r * 8 + c];
}

/* A dynamic_update_slice whose operand dies there writes only its update,
 * in place (the window kernel), at the clamped start; one whose operand
 * lives on computes the whole result; in a loop the fused update goes
 * straight into the loop state at starts clamped at both ends. */
static void dynamic_update_slice_window_kernel(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char dies[] =
      "func.func @main(%x: tensor<1024xf32>, %u: tensor<32xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<32x32xf32> {\n"
      "  %x2 = stablehlo.reshape %x : (tensor<1024xf32>) -> tensor<32x32xf32>\n"
      "  %a = stablehlo.multiply %x2, %x2 : tensor<32x32xf32>\n"
      "  %u2 = stablehlo.reshape %u : (tensor<32xf32>) -> tensor<4x8xf32>\n"
      "  %d = stablehlo.dynamic_update_slice %a, %u2, %i, %j : (tensor<32x32xf32>, tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<32x32xf32>\n"
      "  return %d : tensor<32x32xf32>\n}\n";
  static const char lives[] =
      "func.func @main(%x: tensor<1024xf32>, %u: tensor<32xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<32x32xf32> {\n"
      "  %x2 = stablehlo.reshape %x : (tensor<1024xf32>) -> tensor<32x32xf32>\n"
      "  %a = stablehlo.multiply %x2, %x2 : tensor<32x32xf32>\n"
      "  %u2 = stablehlo.reshape %u : (tensor<32xf32>) -> tensor<4x8xf32>\n"
      "  %d = stablehlo.dynamic_update_slice %a, %u2, %i, %j : (tensor<32x32xf32>, tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<32x32xf32>\n"
      "  %s = stablehlo.subtract %d, %a : tensor<32x32xf32>\n"
      "  return %s : tensor<32x32xf32>\n}\n";
  fill_inputs();
  float us[32];
  for (int k = 0; k < 32; k++) us[k] = 100.0f + (float)k;
  static const int starts[][2] = {{0, 0}, {5, 7}, {28, 24}, {40, 100}, {-3, -9}, {31, 2}};
  for (int form = 0; form < 2; form++) {
    vkhlo_executable_t *exe = compile(ctx, form ? lives : dies, true);
    bool window = false, whole = false;
    find_dus_kernels(exe, &exe->main, &window, &whole);
    assert_int_equal(window, form == 0);
    assert_int_equal(whole, form == 1);
    for (size_t k = 0; k < sizeof starts / sizeof starts[0]; k++) {
      float out[N], want[N];
      for (int e = 0; e < N; e++) want[e] = xs[e] * xs[e];
      host_dus(want, us, starts[k][0], starts[k][1]);
      if (form) for (int e = 0; e < N; e++) want[e] -= xs[e] * xs[e];
      const void *args[4] = {xs, us, &starts[k][0], &starts[k][1]};
      run(ctx, exe, 4, args, out, N);
      for (int e = 0; e < N; e++)
        if (out[e] != want[e]) fail_msg("form %d start (%d, %d) element %d: %g, want %g", form, starts[k][0],
                                        starts[k][1], e, out[e], want[e]);
    }
    vkhlo_executable_destroy(exe);
  }
  /* in a counted loop: row start 7 i - 5 (clamped to 0 and to 28), column 3 */
  static const char loop[] =
      "func.func @main(%x: tensor<1024xf32>, %u: tensor<32xf32>) -> tensor<32x32xf32> {\n"
      "  %x2 = stablehlo.reshape %x : (tensor<1024xf32>) -> tensor<32x32xf32>\n"
      "  %u2 = stablehlo.reshape %u : (tensor<32xf32>) -> tensor<4x8xf32>\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %ys = %x2) : tensor<i32>, tensor<32x32xf32>\n"
      "   cond {\n"
      "    %n = stablehlo.constant dense<7> : tensor<i32>\n"
      "    %p = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %f = stablehlo.convert %i : (tensor<i32>) -> tensor<f32>\n"
      "    %fb = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<4x8xf32>\n"
      "    %upd = stablehlo.multiply %u2, %fb : tensor<4x8xf32>\n"
      "    %c7 = stablehlo.constant dense<7> : tensor<i32>\n"
      "    %c5 = stablehlo.constant dense<5> : tensor<i32>\n"
      "    %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %i7 = stablehlo.multiply %i, %c7 : tensor<i32>\n"
      "    %row = stablehlo.subtract %i7, %c5 : tensor<i32>\n"
      "    %ysn = stablehlo.dynamic_update_slice %ys, %upd, %row, %c3 : (tensor<32x32xf32>, tensor<4x8xf32>, tensor<i32>, tensor<i32>) -> tensor<32x32xf32>\n"
      "    %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
      "    %j = stablehlo.add %i, %c1 : tensor<i32>\n"
      "    stablehlo.return %j, %ysn : tensor<i32>, tensor<32x32xf32>\n"
      "  }\n"
      "  return %r#1 : tensor<32x32xf32>\n}\n";
  float want[N];
  memcpy(want, xs, sizeof want);
  for (int i = 0; i < 7; i++) {
    float upd[32];
    for (int k = 0; k < 32; k++) upd[k] = us[k] * (float)i;
    host_dus(want, upd, 7 * i - 5, 3);
  }
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, loop, !fused);
    bool window = false, whole = false;
    find_dus_kernels(exe, &exe->main, &window, &whole);
    assert_true(window && !whole);
    float out[N];
    const void *args[2] = {xs, us};
    run(ctx, exe, 2, args, out, N);
    for (int e = 0; e < N; e++)
      if (out[e] != want[e]) fail_msg("loop, fused %d, element %d: %g, want %g", fused, e, out[e], want[e]);
    vkhlo_executable_destroy(exe);
  }
}

static void scatter_drops_its_copy(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<1024xf32> {\n"
      "  %a = stablehlo.add %x, %x : tensor<1024xf32>\n"
      "  %s = \"stablehlo.scatter\"(%a, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<"
      "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    %r = stablehlo.add %p, %q : tensor<f32>\n"
      "    stablehlo.return %r : tensor<f32>\n"
      "  }) : (tensor<1024xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<1024xf32>\n"
      "  return %s : tensor<1024xf32>\n"
      "}\n";
  fill_inputs();
  int32_t idx[2] = {7, 7};
  float us[2] = {1.0f, 2.0f};
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    assert_int_equal(count_copies(&exe->main), 0);
    assert_true(count_inplace(exe) >= 1);
    float out[N];
    const void *args[3] = {xs, idx, us};
    run(ctx, exe, 3, args, out, N);
    for (int i = 0; i < N; i++) assert_true(out[i] == 2 * xs[i] + (i == 7 ? 3.0f : 0.0f));
    vkhlo_executable_destroy(exe);
  }
}

/* A scatter whose input lives on must keep the copy. */
static void scatter_keeps_copy_of_live_input(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %i: tensor<1x1xi32>, %u: tensor<1xf32>) -> tensor<1024xf32> {\n"
      "  %a = stablehlo.add %x, %x : tensor<1024xf32>\n"
      "  %s = \"stablehlo.scatter\"(%a, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<"
      "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>}> ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    stablehlo.return %q : tensor<f32>\n"
      "  }) : (tensor<1024xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<1024xf32>\n"
      "  %z = stablehlo.subtract %s, %a : tensor<1024xf32>\n"
      "  return %z : tensor<1024xf32>\n"
      "}\n";
  fill_inputs();
  int32_t idx[1] = {9};
  float us[1] = {50.0f};
  vkhlo_executable_t *exe = compile(ctx, text, true);
  assert_int_equal(count_copies(&exe->main), 1);
  float out[N];
  const void *args[3] = {xs, idx, us};
  run(ctx, exe, 3, args, out, N);
  for (int i = 0; i < N; i++) assert_true(out[i] == (i == 9 ? 50.0f - 2 * xs[i] : 0.0f));
  vkhlo_executable_destroy(exe);
}

/* ------------------------------------------------------- wide kernels */

/* Kernels of |exe| whose GLSL contains |needle|. */
static int kernels_containing(const vkhlo_executable_t *exe, const char *needle) {
  int n = 0;
  for (int i = 0; i < exe->kernel_count; i++) n += exe->kernels[i].glsl && strstr(exe->kernels[i].glsl, needle);
  return n;
}

/* Runs |exe| on |nargs| host arrays and reads result |r| (|bytes|) back. */
static void run_any(vkhlo_context_t *ctx, vkhlo_executable_t *exe, int nargs, const void *const *host_args,
                    int nres, void **outs) {
  vkhlo_buffer_t *args[8], *res[8];
  assert_true(nargs <= 8 && nres <= 8);
  for (int i = 0; i < nargs; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, host_args[i], &args[i]));
  }
  expect_ok(vkhlo_executable_execute(exe, nargs, args, nres, res));
  for (int r = 0; r < nres; r++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_result_type(exe, r, &t));
    expect_ok(vkhlo_buffer_read(res[r], outs[r], vkhlo_tensor_type_size_bytes(&t)));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int i = 0; i < nargs; i++) vkhlo_buffer_destroy(args[i]);
}

/* On CPU devices a loop fusion of 32-bit values handles 8 consecutive
 * elements per invocation through 64-bit word views; operands read at
 * other positions (a broadcast, a transpose, a reshaped parameter) still
 * load per element.  Results must equal the host's, fused or not. */
static void wide_kernel_mixes_word_and_element_loads(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<64x64xf32>, %b: tensor<64xf32>, %z: tensor<64x64xf32>, %r: tensor<4096xf32>)"
      " -> tensor<64x64xf32> {\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<64xf32>) -> tensor<64x64xf32>\n"
      "  %zt = stablehlo.transpose %z, dims = [1, 0] : (tensor<64x64xf32>) -> tensor<64x64xf32>\n"
      "  %rr = stablehlo.reshape %r : (tensor<4096xf32>) -> tensor<64x64xf32>\n"
      "  %m = stablehlo.constant dense<-1.0> : tensor<64x64xf32>\n"
      "  %0 = stablehlo.multiply %x, %bb : tensor<64x64xf32>\n"
      "  %1 = stablehlo.add %0, %zt : tensor<64x64xf32>\n"
      "  %2 = stablehlo.maximum %1, %m : tensor<64x64xf32>\n"
      "  %3 = stablehlo.subtract %2, %rr : tensor<64x64xf32>\n"
      "  return %3 : tensor<64x64xf32>\n"
      "}\n";
  static float x[4096], b[64], z[4096], r[4096], out[4096];
  for (int i = 0; i < 4096; i++) {
    x[i] = (float)(i % 97) * 0.5f - 20.0f;
    z[i] = (float)(i % 13) - 6.0f;
    r[i] = (float)(i % 29) * 0.25f;
  }
  for (int i = 0; i < 64; i++) b[i] = (float)(i % 7) - 3.0f;
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    if (fused && ctx->target.is_cpu && ctx->target.shader_int64) {
      assert_int_equal(exe->kernel_count, 1);
      assert_int_equal(kernels_containing(exe, "u64vec4"), 1);
    }
    const void *args[4] = {x, b, z, r};
    void *outs[1] = {out};
    run_any(ctx, exe, 4, args, 1, outs);
    for (int i = 0; i < 64; i++)
      for (int j = 0; j < 64; j++) {
        float v = x[i * 64 + j] * b[j] + z[j * 64 + i];
        v = v > -1.0f ? v : -1.0f;
        assert_true(out[i * 64 + j] == v - r[i * 64 + j]);
      }
    vkhlo_executable_destroy(exe);
  }
}

/* A lone elementwise op is a loop fusion of one instruction on CPU
 * devices, so it gets the wide kernel too; without fusion it stays one
 * element per invocation. */
static void wide_kernel_for_a_lone_op(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>, %y: tensor<1024xf32>) -> tensor<1024xf32> {\n"
      "  %0 = stablehlo.atan2 %x, %y : tensor<1024xf32>\n"
      "  return %0 : tensor<1024xf32>\n"
      "}\n";
  fill_inputs();
  float ys[N], out[2][N];
  for (int i = 0; i < N; i++) ys[i] = (float)(i % 13) - 6.0f;
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    bool wide = ctx->target.is_cpu && ctx->target.shader_int64;
    assert_int_equal(kernels_containing(exe, "u64vec4"), fused && wide ? 1 : 0);
    const void *args[2] = {xs, ys};
    void *o[1] = {out[fused]};
    run_any(ctx, exe, 2, args, 1, o);
    vkhlo_executable_destroy(exe);
  }
  /* the same kernel code per element either way: bit-identical */
  assert_memory_equal(out[0], out[1], sizeof out[0]);
  for (int i = 0; i < N; i++) assert_true(fabsf(out[1][i] - atan2f(xs[i], ys[i])) <= 1e-5f);
}

/* Integer results, 4 and 2 lanes (element counts divisible by 4 and 2 but
 * not 8), two results of one fusion, and a fused output written in place
 * over a dying sort result. */
static void wide_kernel_lanes_and_types(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%a: tensor<1028xi32>, %b: tensor<1028xi32>, %u: tensor<1030xui32>, %s: tensor<4096xf32>)"
      " -> (tensor<1028xi32>, tensor<1028xi32>, tensor<1030xui32>, tensor<4096xf32>) {\n"
      "  %0 = stablehlo.add %a, %b : tensor<1028xi32>\n"
      "  %1 = stablehlo.multiply %a, %b : tensor<1028xi32>\n"
      "  %2 = stablehlo.subtract %1, %a : tensor<1028xi32>\n"
      "  %k = stablehlo.constant dense<3> : tensor<1030xui32>\n"
      "  %3 = stablehlo.shift_right_logical %u, %k : tensor<1030xui32>\n"
      "  %4 = stablehlo.xor %3, %u : tensor<1030xui32>\n"
      "  %5 = \"stablehlo.sort\"(%s) ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n"
      "    %c = stablehlo.compare LT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) {dimension = 0 : i64, is_stable = false} : (tensor<4096xf32>) -> tensor<4096xf32>\n"
      "  %two = stablehlo.constant dense<2.0> : tensor<4096xf32>\n"
      "  %6 = stablehlo.multiply %5, %two : tensor<4096xf32>\n"
      "  %7 = stablehlo.add %6, %two : tensor<4096xf32>\n"
      "  return %0, %2, %4, %7 : tensor<1028xi32>, tensor<1028xi32>, tensor<1030xui32>, tensor<4096xf32>\n"
      "}\n";
  static int32_t a[1028], b[1028], o0[1028], o1[1028];
  static uint32_t u[1030], o2[1030];
  static float sv[4096], o3[4096], sorted[4096];
  for (int i = 0; i < 1028; i++) {
    a[i] = i * 7919 - 4000000;
    b[i] = (i % 61) - 30;
  }
  for (int i = 0; i < 1030; i++) u[i] = 0x9E3779B9u * (uint32_t)i;
  for (int i = 0; i < 4096; i++) sv[i] = sorted[i] = (float)((i * 37) % 4096) - 2048.0f;
  /* the sorted order: the values are a permutation of -2048..2047 */
  for (int i = 0; i < 4096; i++) sorted[i] = (float)i - 2048.0f;
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    if (fused && ctx->target.is_cpu && ctx->target.shader_int64) {
      assert_true(kernels_containing(exe, "u64vec2") >= 1);  /* 1028: 4 lanes */
      assert_true(kernels_containing(exe, "uint64_t w") >= 1); /* 1030: 2 lanes */
      assert_true(count_inplace(exe) >= 1);                    /* %6.. over the sort */
    }
    const void *args[4] = {a, b, u, sv};
    void *outs[4] = {o0, o1, o2, o3};
    run_any(ctx, exe, 4, args, 4, outs);
    for (int i = 0; i < 1028; i++) {
      assert_int_equal(o0[i], (int32_t)((uint32_t)a[i] + (uint32_t)b[i]));
      assert_int_equal(o1[i], (int32_t)((uint32_t)a[i] * (uint32_t)b[i] - (uint32_t)a[i]));
    }
    for (int i = 0; i < 1030; i++) assert_int_equal(o2[i], (u[i] >> 3) ^ u[i]);
    for (int i = 0; i < 4096; i++) assert_true(o3[i] == sorted[i] * 2.0f + 2.0f);
    vkhlo_executable_destroy(exe);
  }
}

/* maximum/minimum against splat constants take a shorter form where the
 * constant is neither NaN nor the signed zero that matters; every form
 * must keep the spec's semantics bit for bit: NaN in, NaN out; -0 < +0. */
static uint32_t bits_of(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

static float spec_max(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}

static float spec_min(float a, float b) {
  if (a != a) return a;
  if (b != b) return b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

static void max_min_with_constants_keep_semantics(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>,"
      " tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {\n"
      "  %pz = stablehlo.constant dense<0.0> : tensor<1024xf32>\n"
      "  %nz = stablehlo.constant dense<-0.0> : tensor<1024xf32>\n"
      "  %c = stablehlo.constant dense<2.5> : tensor<1024xf32>\n"
      "  %0 = stablehlo.maximum %x, %pz : tensor<1024xf32>\n"
      "  %1 = stablehlo.minimum %x, %pz : tensor<1024xf32>\n"
      "  %2 = stablehlo.maximum %x, %nz : tensor<1024xf32>\n"
      "  %3 = stablehlo.minimum %x, %nz : tensor<1024xf32>\n"
      "  %4 = stablehlo.maximum %c, %x : tensor<1024xf32>\n"
      "  %5 = stablehlo.minimum %c, %x : tensor<1024xf32>\n"
      "  return %0, %1, %2, %3, %4, %5 : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>,"
      " tensor<1024xf32>, tensor<1024xf32>\n"
      "}\n";
  static const float special[] = {0.0f, -0.0f, 2.5f, -2.5f, 1.0f, -7.0f, 3e38f, -3e38f};
  static float x[1024], outs[6][1024];
  for (int i = 0; i < 1024; i++) x[i] = special[i % 8];
  x[8] = NAN;
  x[9] = -NAN;
  x[10] = INFINITY;
  x[11] = -INFINITY;
  const float consts[6] = {0.0f, 0.0f, -0.0f, -0.0f, 2.5f, 2.5f};
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    const void *args[1] = {x};
    void *o[6] = {outs[0], outs[1], outs[2], outs[3], outs[4], outs[5]};
    run_any(ctx, exe, 1, args, 6, o);
    for (int r = 0; r < 6; r++)
      for (int i = 0; i < 1024; i++) {
        bool is_max = r % 2 == 0, const_first = r >= 4;
        float a = const_first ? consts[r] : x[i], b = const_first ? x[i] : consts[r];
        float want = is_max ? spec_max(a, b) : spec_min(a, b);
        if (want != want) {
          if (outs[r][i] == outs[r][i]) fail_msg("result %d element %d: want NaN, got %g", r, i, outs[r][i]);
        } else if (bits_of(outs[r][i]) != bits_of(want)) {
          fail_msg("result %d element %d (x = %g): want %g (0x%08x), got %g (0x%08x)", r, i, x[i], want,
                   bits_of(want), outs[r][i], bits_of(outs[r][i]));
        }
      }
    vkhlo_executable_destroy(exe);
  }
}

/* Profiling: every dispatch is timed and counted per kernel, loop
 * iterations included; the program's results do not change. */
static void profiling_counts_every_dispatch(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, loop_program, true);
  fill_inputs();
  float ys[N], out[N], ref[N];
  for (int i = 0; i < N; i++) ys[i] = (float)(i % 11);
  const void *args[2] = {xs, ys};
  run(ctx, exe, 2, args, ref, N);
  vkhlo_executable_set_profiling(exe, true);
  for (int rep = 0; rep < 2; rep++) {
    run(ctx, exe, 2, args, out, N);
    assert_memory_equal(out, ref, sizeof out);
  }
  int n = vkhlo_executable_profile(exe, NULL, 0);
  assert_int_equal(n, exe->kernel_count);
  vkhlo_kernel_profile_t p[64];
  assert_true(n <= 64);
  vkhlo_executable_profile(exe, p, 64);
  int64_t dispatches = 0;
  for (int i = 0; i < n; i++) {
    assert_non_null(p[i].kernel);
    assert_true(p[i].dispatches % 2 == 0); /* the same count in both runs */
    assert_true(p[i].dispatches == 0 || p[i].device_ms > 0);
    dispatches += p[i].dispatches;
  }
  /* y2 once, then per iteration (5) the cond's compare and the body's
   * kernels: at least 1 + 5 * 2 per run */
  assert_true(dispatches >= 2 * (1 + 5 * 2));
  vkhlo_executable_set_profiling(exe, false);
  run(ctx, exe, 2, args, out, N);
  assert_memory_equal(out, ref, sizeof out);
  vkhlo_executable_destroy(exe);
}

/* Dots of one lhs: in GEMM kernels, one per dot or, where the target
 * takes several per kernel, one for the two of the same layout (w1, w2)
 * and one for w3 (contracted on its minor dimension); and a lone dot in a
 * wide kernel (one loop computes 8 consecutive results of the last
 * dimension). */
static void wide_kernel_dots(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<4x8x64xf32>, %w1: tensor<64x96xf32>, %w2: tensor<64x96xf32>, %b: tensor<96xf32>,"
      " %w3: tensor<96x64xf32>) -> (tensor<4x8x96xf32>, tensor<4x8x96xf32>) {\n"
      "  %d1 = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] : (tensor<4x8x64xf32>, tensor<64x96xf32>)"
      " -> tensor<4x8x96xf32>\n"
      "  %d2 = stablehlo.dot_general %x, %w2, contracting_dims = [2] x [0] : (tensor<4x8x64xf32>, tensor<64x96xf32>)"
      " -> tensor<4x8x96xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<96xf32>) -> tensor<4x8x96xf32>\n"
      "  %s = stablehlo.add %d1, %bb : tensor<4x8x96xf32>\n"
      "  %m = stablehlo.multiply %s, %d2 : tensor<4x8x96xf32>\n"
      "  %d3 = stablehlo.dot_general %x, %w3, contracting_dims = [2] x [1] : (tensor<4x8x64xf32>, tensor<96x64xf32>)"
      " -> tensor<4x8x96xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<4x8x96xf32>\n"
      "  %r = stablehlo.maximum %d3, %z : tensor<4x8x96xf32>\n"
      "  return %m, %r : tensor<4x8x96xf32>, tensor<4x8x96xf32>\n"
      "}\n";
  static float x[4 * 8 * 64], w1[64 * 96], w2[64 * 96], b[96], w3[96 * 64], m[4 * 8 * 96], r[4 * 8 * 96];
  for (int i = 0; i < 4 * 8 * 64; i++) x[i] = (float)((i * 37) % 101) / 50.0f - 1.0f;
  for (int i = 0; i < 64 * 96; i++) {
    w1[i] = (float)((i * 13) % 29) / 14.0f - 1.0f;
    w2[i] = (float)((i * 7) % 31) / 15.0f - 1.0f;
    w3[i] = (float)((i * 11) % 23) / 11.0f - 1.0f;
  }
  for (int i = 0; i < 96; i++) b[i] = (float)(i % 5) - 2.0f;
  for (int fused = 0; fused < 2; fused++) {
    vkhlo_executable_t *exe = compile(ctx, text, !fused);
    if (fused && ctx->target.is_cpu && ctx->target.shader_int64 && !codegen_target_multi_dots(&ctx->target)) {
      /* one fusion per dot (codegen/fusion.c): d1 and d2 in the GEMM kernel */
      assert_int_equal(exe->kernel_count, 3);
      assert_true(kernels_containing(exe, "as shaders/gemm_cpu.comp") >= 2);
    } else if (fused && ctx->target.is_cpu && ctx->target.shader_int64) {
      /* several dots per kernel: d1 and d2 (one lhs, the same layout) in
       * one GEMM kernel, d3 (its rhs [n, k]) in one of its own, not the
       * three in one per-element kernel (codegen_gemm_same_product) */
      assert_int_equal(exe->kernel_count, 2);
      assert_int_equal(kernels_containing(exe, "as shaders/gemm_cpu.comp"), 2);
      assert_int_equal(kernels_containing(exe, "#define NDOT 2\n"), 1);
    }
    const void *args[5] = {x, w1, w2, b, w3};
    void *outs[2] = {m, r};
    run_any(ctx, exe, 5, args, 2, outs);
    for (int i = 0; i < 32; i++)
      for (int n = 0; n < 96; n++) {
        double a1 = 0, a2 = 0, a3 = 0, mag = 0;
        for (int k = 0; k < 64; k++) {
          a1 += (double)x[i * 64 + k] * w1[k * 96 + n];
          a2 += (double)x[i * 64 + k] * w2[k * 96 + n];
          a3 += (double)x[i * 64 + k] * w3[n * 64 + k];
          mag += fabs((double)x[i * 64 + k]) * 2.0;
        }
        double want_m = (a1 + b[n]) * a2, want_r = a3 > 0 ? a3 : 0;
        double tol = 1e-5 * (mag + 1) * (fabs(a1 + b[n]) + fabs(a2) + 1);
        if (fabs(m[i * 96 + n] - want_m) > tol || fabs(r[i * 96 + n] - want_r) > 1e-5 * (mag + 1))
          fail_msg("fused=%d at (%d, %d): got %g, %g; want %g, %g", fused, i, n, m[i * 96 + n], r[i * 96 + n],
                   want_m, want_r);
      }
    vkhlo_executable_destroy(exe);
  }
  /* a lone dot is a fusion of one on CPU devices, and wide, with rows of
   * 4 x 8 results per invocation; 21 rows: the last invocation's rows past
   * the end are computed on the last row and not stored */
  const char *lone =
      "func.func @main(%x: tensor<3x7x64xf32>, %w: tensor<64x128xf32>) -> tensor<3x7x128xf32> {\n"
      "  %d = stablehlo.dot_general %x, %w, contracting_dims = [2] x [0] : (tensor<3x7x64xf32>, tensor<64x128xf32>)"
      " -> tensor<3x7x128xf32>\n"
      "  return %d : tensor<3x7x128xf32>\n"
      "}\n";
  static float w[64 * 128], d[21 * 128];
  for (int i = 0; i < 64 * 128; i++) w[i] = (float)((i * 13) % 29) / 14.0f - 1.0f;
  vkhlo_executable_t *exe = compile(ctx, lone, false);
  if (ctx->target.is_cpu && ctx->target.shader_int64 && ctx->target.gemm == CODEGEN_GEMM_OFF) {
    assert_int_equal(kernels_containing(exe, "int row3 = min(rb * 4 + 3, 20);"), 1);
    assert_int_equal(kernels_containing(exe, "if (rb * 4 + 1 < 21) out0w"), 1);
  } else if (ctx->target.is_cpu && ctx->target.gemm != CODEGEN_GEMM_GPU) {
    /* f32 dots take the GEMM kernel (codegen/emit_gemm.c) unless VKHLO_GEMM=off */
    assert_int_equal(kernels_containing(exe, "as shaders/gemm_cpu.comp"), 1);
  }
  for (int i = 0; i < 21 * 128; i++) d[i] = -12345.0f; /* overwritten */
  const void *args[2] = {x, w};
  void *outs[1] = {d};
  run_any(ctx, exe, 2, args, 1, outs);
  for (int i = 0; i < 21; i++)
    for (int n = 0; n < 128; n++) {
      double a1 = 0, mag = 0;
      for (int k = 0; k < 64; k++) {
        a1 += (double)x[i * 64 + k] * w[k * 128 + n];
        mag += fabs((double)x[i * 64 + k]);
      }
      if (fabs(d[i * 128 + n] - a1) > 1e-5 * (mag + 1)) fail_msg("lone dot at (%d, %d): got %g, want %g", i, n, d[i * 128 + n], a1);
    }
  vkhlo_executable_destroy(exe);
}

/* ------------------------------------------------- several allocations */

static void small_allocations_split_the_pool(void **state) {
  vkhlo_context_t *ctx = *state;
  setenv("VKHLO_MAX_ALLOCATION_BYTES", "4096", 1);
  vkhlo_executable_t *exe = compile(ctx, loop_program, true);
  unsetenv("VKHLO_MAX_ALLOCATION_BYTES");
  int temps = 0;
  for (int i = 0; i < exe->allocation_count; i++) {
    assert_true(exe->allocations[i].size <= 4096);
    temps += exe->allocations[i].kind == EXE_ALLOCATION_TEMP;
  }
  assert_true(temps >= 3);
  fill_inputs();
  float ys[N], out[N];
  for (int i = 0; i < N; i++) ys[i] = (float)(i % 11);
  const void *args[2] = {xs, ys};
  run(ctx, exe, 2, args, out, N);
  for (int i = 0; i < N; i++) {
    float v = xs[i], y2 = ys[i] * 0.5f;
    for (int k = 0; k < 5; k++) v = -(v * 0.5f + y2);
    assert_true(out[i] == v + y2);
  }
  vkhlo_executable_destroy(exe);
}

/* ------------------------------------------------------------ negative */

static void expect_violation(const vkhlo_executable_t *exe, const char *what) {
  vkhlo_status_t st = exe_verify_buffer_assignment(exe);
  if (!st) fail_msg("the checker missed: %s", what);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INTERNAL);
  if (!strstr(vkhlo_status_message(st), what)) fail_msg("expected '%s' in: %s", what, vkhlo_status_message(st));
  vkhlo_status_free(st);
}

static void checker_catches_corruption(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, loop_program, true);
  /* two temps live at once in different storage */
  int a = -1, b = -1;
  for (int i = 0; i < exe->buffer_count && b < 0; i++) {
    const exe_buffer_t *x = &exe->buffers[i];
    if (x->kind != EXE_BUFFER_TEMP) continue;
    for (int j = i + 1; j < exe->buffer_count; j++) {
      const exe_buffer_t *y = &exe->buffers[j];
      if (y->kind == EXE_BUFFER_TEMP && y->allocation == x->allocation && x->inplace_of != j &&
          y->inplace_of != i && x->offset_bytes != y->offset_bytes && x->def_position <= y->last_use_position &&
          y->def_position <= x->last_use_position) {
        a = i;
        b = j;
        break;
      }
    }
  }
  assert_true(a >= 0 && b >= 0);
  exe_buffer_t saved = exe->buffers[b];
  exe->buffers[b].offset_bytes = exe->buffers[a].offset_bytes;
  exe->buffers[b].inplace_of = -1;
  expect_violation(exe, "overlap");
  exe->buffers[b] = saved;
  expect_ok(exe_verify_buffer_assignment(exe));
  /* a misaligned offset */
  exe->buffers[a].offset_bytes += 4;
  expect_violation(exe, "not aligned");
  exe->buffers[a].offset_bytes -= 4;
  /* outside its allocation */
  uint64_t off = exe->buffers[a].offset_bytes;
  exe->buffers[a].offset_bytes = exe->allocations[exe->buffers[a].allocation].size;
  expect_violation(exe, "outside allocation");
  exe->buffers[a].offset_bytes = off;
  /* a live range cut short: a use falls outside it */
  int last = exe->buffers[a].last_use_position;
  exe->buffers[a].last_use_position = exe->buffers[a].def_position;
  if (last != exe->buffers[a].def_position) expect_violation(exe, "live range");
  exe->buffers[a].last_use_position = last;
  /* a value read inside the loop (y2) whose range is cut to end inside it */
  const exe_thunk_t *w = NULL;
  for (int k = 0; k < exe->main.count; k++)
    if (exe->main.thunks[k].kind == EXE_THUNK_WHILE) w = &exe->main.thunks[k];
  assert_non_null(w);
  int y2 = -1;
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *x = &exe->buffers[i];
    if (x->kind == EXE_BUFFER_TEMP && x->last_use_position > w->position &&
        (y2 < 0 || x->def_position < exe->buffers[y2].def_position))
      y2 = i;
  }
  assert_true(y2 >= 0);
  int keep = exe->buffers[y2].last_use_position;
  exe->buffers[y2].last_use_position = w->position - 1;
  expect_violation(exe, "inside the loop");
  exe->buffers[y2].last_use_position = keep;
  /* an in-place link the dispatch does not justify */
  for (int i = 0; i < exe->buffer_count; i++) {
    exe_buffer_t *x = &exe->buffers[i];
    if (x->inplace_of < 0) continue;
    exe->buffers[x->inplace_of].last_use_position++;
    expect_violation(exe, "in place");
    exe->buffers[x->inplace_of].last_use_position--;
    break;
  }
  /* a result allocation bigger than the caller's buffer, or naming a
   * result that does not exist */
  int ra = -1;
  for (int i = 0; i < exe->allocation_count; i++)
    if (exe->allocations[i].kind == EXE_ALLOCATION_RESULT) ra = i;
  assert_true(ra >= 0);
  exe->allocations[ra].size += 16;
  expect_violation(exe, "needs");
  exe->allocations[ra].size -= 16;
  exe->allocations[ra].result_number = exe->result_count;
  expect_violation(exe, "names result");
  exe->allocations[ra].result_number = 0;
  expect_ok(exe_verify_buffer_assignment(exe));
  vkhlo_executable_destroy(exe);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(elementwise_chain_in_place, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(independent_dispatches_share_no_barrier, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(replay_follows_arguments, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(execute_into_replays_per_buffers, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(result_returned_twice, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(results_alias_parameters_and_constants, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(loop_keeps_captures_alive, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(conditional_branches, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(dynamic_update_slice_in_place, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(loop_state_written_in_place, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(loop_state_rotates, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(dynamic_update_slice_window_kernel, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(scatter_drops_its_copy, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(scatter_keeps_copy_of_live_input, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(wide_kernel_mixes_word_and_element_loads, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(wide_kernel_lanes_and_types, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(wide_kernel_for_a_lone_op, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(max_min_with_constants_keep_semantics, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(profiling_counts_every_dispatch, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(wide_kernel_dots, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(small_allocations_split_the_pool, validated_context_setup, validated_context_teardown),
      cmocka_unit_test_setup_teardown(checker_catches_corruption, validated_context_setup, validated_context_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
