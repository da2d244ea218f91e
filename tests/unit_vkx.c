/*
 * Compiled executables as files (.vkx, api/vkx.h): a program saved and
 * loaded gives the same bytes as the compiled one and compiles no shader;
 * malformed files give INVALID_ARGUMENT with a byte offset; a device that
 * lacks a feature the code needs gives UNIMPLEMENTED naming it; and a fuzz
 * of 10^5 mutated files (bit flips, byte changes, truncations, length and
 * count fields changed; most with the checksum recomputed so that the
 * structural checks, not the checksum, must catch them) through vkx_parse,
 * plus a few hundred through the whole load, gives errors, never a crash,
 * a hang or a leak (run under ASan in the unit leg).  Deterministic seed.
 */
#define _POSIX_C_SOURCE 200809L

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "api/vkx.h"
#include "test_support.h"

/* A while loop (with a constant inside its body), dispatches before and
 * after it: every thunk kind but host/conditional, constants, two results. */
static const char program[] =
    "func.func @main(%n: tensor<i32>, %x: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %x2 = stablehlo.multiply %x, %x : tensor<4xf32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %acc = %x2) : tensor<i32>, tensor<4xf32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
    "      %w = stablehlo.constant dense<[1.5, 2.5, -3.0, 4.25]> : tensor<4xf32>\n"
    "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
    "      %a2 = stablehlo.add %acc, %w : tensor<4xf32>\n"
    "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<4xf32>\n"
    "    }\n"
    "  %y = stablehlo.subtract %r#1, %x : tensor<4xf32>\n"
    "  return %r#0, %y : tensor<i32>, tensor<4xf32>\n}\n";

static const char int64_program[] =
    "func.func @main(%a: tensor<4xi64>) -> tensor<4xi64> {\n"
    "  %0 = stablehlo.add %a, %a : tensor<4xi64>\n"
    "  return %0 : tensor<4xi64>\n}\n";

static vkhlo_executable_t *compile(vkhlo_context_t *ctx, const char *text) {
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "t.mlir", NULL, &exe));
  return exe;
}

/* Runs |exe| on n=5, x=[1,-2,0.5,3]; the results' bytes into out (4 + 16). */
static void run(vkhlo_context_t *ctx, vkhlo_executable_t *exe, uint8_t out[20]) {
  vkhlo_tensor_type_t tn = {VKHLO_S32, 0, {0}}, tx = {VKHLO_F32, 1, {4}};
  int32_t n = 5;
  float x[4] = {1, -2, 0.5f, 3};
  vkhlo_buffer_t *args[2], *res[2];
  expect_ok(vkhlo_buffer_create(ctx, &tn, &n, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &tx, x, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 2, res));
  expect_ok(vkhlo_buffer_read(res[0], out, 4));
  expect_ok(vkhlo_buffer_read(res[1], out + 4, 16));
  for (int i = 0; i < 2; i++) vkhlo_buffer_destroy(res[i]), vkhlo_buffer_destroy(args[i]);
}

static void serialized(vkhlo_context_t *ctx, const char *text, uint8_t **out, size_t *size) {
  vkhlo_executable_t *exe = compile(ctx, text);
  void *data;
  expect_ok(vkhlo_executable_serialize(exe, &data, size));
  *out = data;
  vkhlo_executable_destroy(exe);
}

static void load_runs_like_compile(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, program);
  uint8_t want[20], got[20];
  run(ctx, exe, want);
  int32_t count;
  memcpy(&count, want, 4);
  assert_int_equal(count, 5);
  float y0;
  memcpy(&y0, want + 4, 4);
  assert_true(y0 == 1.0f + 5 * 1.5f - 1.0f);
  void *data;
  size_t size;
  expect_ok(vkhlo_executable_serialize(exe, &data, &size));
  vkhlo_executable_destroy(exe);
  vkhlo_executable_t *loaded = NULL;
  expect_ok(vkhlo_executable_load(ctx, data, size, NULL, &loaded));
  free(data);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(loaded, &s);
  assert_int_equal(s.spirv_compiled, 0);
  assert_int_equal(s.spirv_cache_hits, 0);
  assert_true(s.kernels > 0);
  run(ctx, loaded, got);
  assert_memory_equal(want, got, sizeof want);
  /* a loaded executable saves again to the same bytes */
  void *again;
  size_t again_size;
  expect_ok(vkhlo_executable_serialize(loaded, &again, &again_size));
  vkhlo_executable_destroy(loaded);
  expect_ok(vkhlo_executable_load(ctx, again, again_size, NULL, &loaded));
  run(ctx, loaded, got);
  assert_memory_equal(want, got, sizeof want);
  vkhlo_executable_destroy(loaded);
  free(again);
}

typedef struct feed_log {
  int calls;
  float outfed[4];
  char config[16];
} feed_log_t;

static vkhlo_status_t on_host_call(void *user, const vkhlo_host_call_t *call) {
  feed_log_t *log = user;
  log->calls++;
  if (strcmp(call->op, "infeed") == 0) {
    snprintf(log->config, sizeof log->config, "%s", call->config);
    float *x = call->data[0];
    for (int i = 0; i < 4; i++) x[i] = 10.0f * (float)(i + 1);
  } else if (strcmp(call->op, "outfeed") == 0) {
    memcpy(log->outfed, call->data[0], sizeof log->outfed);
  }
  return NULL;
}

/* Host thunks (infeed/outfeed with their config) and a conditional
 * survive the file: the loaded program calls the host alike. */
static void host_calls_and_conditionals(void **state) {
  vkhlo_context_t *ctx = *state;
  const char *text =
      "func.func @main(%x: tensor<4xf32>, %p: tensor<i1>) -> tensor<4xf32> {\n"
      "  %t = stablehlo.create_token : !stablehlo.token\n"
      "  %r:2 = \"stablehlo.infeed\"(%t) {infeed_config = \"q0\"} : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)\n"
      "  %c = \"stablehlo.if\"(%p) ({\n"
      "    %a = stablehlo.add %r#0, %x : tensor<4xf32>\n"
      "    stablehlo.return %a : tensor<4xf32>\n"
      "  }, {\n"
      "    %m0 = stablehlo.multiply %r#0, %x : tensor<4xf32>\n"
      /* an identity window sum (init -0.0): not cheap, so the if stays one
       * (codegen/expand.c turns cheap ones into selects) */
      "    %z0 = stablehlo.constant dense<-0.0> : tensor<f32>\n"
      "    %m = \"stablehlo.reduce_window\"(%m0, %z0) ({\n"
      "    ^bb0(%u: tensor<f32>, %v: tensor<f32>):\n"
      "      %w = stablehlo.add %u, %v : tensor<f32>\n"
      "      stablehlo.return %w : tensor<f32>\n"
      "    }) {window_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "    stablehlo.return %m : tensor<4xf32>\n"
      "  }) : (tensor<i1>) -> tensor<4xf32>\n"
      "  %t2 = \"stablehlo.outfeed\"(%c, %r#1) {outfeed_config = \"\"} : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token\n"
      "  return %c : tensor<4xf32>\n}\n";
  vkhlo_executable_t *compiled = compile(ctx, text), *exe = test_reload(ctx, compiled);
  vkhlo_executable_destroy(compiled);
  int conditionals = 0;
  for (int i = 0; i < exe->main.count; i++) conditionals += exe->main.thunks[i].kind == EXE_THUNK_CONDITIONAL;
  assert_int_equal(conditionals, 1);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {4}}, tp = {VKHLO_PRED, 0, {0}};
  float x[4] = {1, 2, 3, 4}, out[4];
  feed_log_t log;
  vkhlo_context_set_host_callback(ctx, on_host_call, &log);
  for (uint8_t pred = 0; pred < 2; pred++) {
    memset(&log, 0, sizeof log);
    vkhlo_buffer_t *args[2], *res;
    expect_ok(vkhlo_buffer_create(ctx, &t, x, &args[0]));
    expect_ok(vkhlo_buffer_create(ctx, &tp, &pred, &args[1]));
    expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &res));
    expect_ok(vkhlo_buffer_read(res, out, sizeof out));
    assert_int_equal(log.calls, 2);
    assert_string_equal(log.config, "q0");
    for (int i = 0; i < 4; i++) {
      float in = 10.0f * (float)(i + 1);
      assert_true(out[i] == (pred ? in + x[i] : in * x[i]));
      assert_true(log.outfed[i] == out[i]);
    }
    vkhlo_buffer_destroy(res);
    vkhlo_buffer_destroy(args[0]);
    vkhlo_buffer_destroy(args[1]);
  }
  vkhlo_executable_destroy(exe);
  /* host calls alone (no loop, no conditional) make a program that is not
   * straight-line either: the loader agrees (it used to call such a file's
   * straight_line flag wrong) */
  exe = compile(ctx,
                "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                "  %t = stablehlo.create_token : !stablehlo.token\n"
                "  %y = stablehlo.negate %x : tensor<4xf32>\n"
                "  %t2 = \"stablehlo.outfeed\"(%y, %t) {outfeed_config = \"\"} : (tensor<4xf32>, !stablehlo.token) -> !stablehlo.token\n"
                "  return %y : tensor<4xf32>\n}\n");
  compiled = exe;
  exe = test_reload(ctx, compiled);
  vkhlo_executable_destroy(compiled);
  memset(&log, 0, sizeof log);
  vkhlo_buffer_t *arg, *res;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &arg));
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  assert_int_equal(log.calls, 1);
  for (int i = 0; i < 4; i++) assert_true(out[i] == -x[i] && log.outfed[i] == -x[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(arg);
  vkhlo_context_set_host_callback(ctx, NULL, NULL);
  vkhlo_executable_destroy(exe);
}

static void side_weights_file(void **state) {
  vkhlo_context_t *ctx = *state;
  char dir[] = "/tmp/unit_vkx.XXXXXX";
  assert_non_null(mkdtemp(dir));
  char vkx[256], weights[256], moved[256];
  snprintf(vkx, sizeof vkx, "%s/p.vkx", dir);
  snprintf(weights, sizeof weights, "%s/p.weights", dir);
  snprintf(moved, sizeof moved, "%s/q.weights", dir);
  vkhlo_executable_t *exe = compile(ctx, program);
  uint8_t want[20], got[20];
  run(ctx, exe, want);
  expect_ok(vkhlo_executable_save(exe, vkx, weights));
  vkhlo_executable_destroy(exe);
  vkhlo_executable_t *loaded = NULL;
  expect_ok(vkhlo_executable_load_file(ctx, vkx, NULL, &loaded));
  run(ctx, loaded, got);
  assert_memory_equal(want, got, sizeof want);
  vkhlo_executable_destroy(loaded);
  /* moved: found with the option, missing without it */
  assert_int_equal(rename(weights, moved), 0);
  vkhlo_status_t st = vkhlo_executable_load_file(ctx, vkx, NULL, &loaded);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_NOT_FOUND);
  assert_null(loaded);
  vkhlo_status_free(st);
  vkhlo_load_options_t o = {moved};
  expect_ok(vkhlo_executable_load_file(ctx, vkx, &o, &loaded));
  vkhlo_executable_destroy(loaded);
  /* a different weights file: rejected by its checksum */
  FILE *f = fopen(moved, "r+b");
  assert_non_null(f);
  fputc(0x5a, f);
  fclose(f);
  st = vkhlo_executable_load_file(ctx, vkx, &o, &loaded);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(vkhlo_status_message(st), "checksum"));
  vkhlo_status_free(st);
  remove(moved);
  remove(vkx);
  rmdir(dir);
}

static void expect_malformed(vkhlo_context_t *ctx, const uint8_t *data, size_t size, const char *needle) {
  vkhlo_executable_t *exe = (vkhlo_executable_t *)1;
  vkhlo_status_t st = vkhlo_executable_load(ctx, data, size, NULL, &exe);
  assert_null(exe);
  if (vkhlo_status_code(st) != VKHLO_STATUS_INVALID_ARGUMENT || !strstr(vkhlo_status_message(st), needle))
    fail_msg("expected INVALID_ARGUMENT with '%s', got %s: %s", needle,
             vkhlo_status_code_name(vkhlo_status_code(st)), vkhlo_status_message(st));
  vkhlo_status_free(st);
}

static void put64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
/* Makes |size| bytes look intact to the header checks. */
static void reseal(uint8_t *data, size_t size) {
  if (size < VKX_HEADER_BYTES) return;
  put64(data + 16, size);
  put64(data + 24, vkx_checksum(data + VKX_HEADER_BYTES, size - VKX_HEADER_BYTES));
}

static void malformed_files(void **state) {
  vkhlo_context_t *ctx = *state;
  uint8_t *data;
  size_t size;
  serialized(ctx, program, &data, &size);
  uint8_t *copy = malloc(size);
  memcpy(copy, data, size);
  expect_malformed(ctx, copy, 7, "at byte 0: not a vkhlo executable");
  expect_malformed(ctx, copy, size - 1, "at byte 16");
  copy[8] = 9;
  expect_malformed(ctx, copy, size, "version 9");
  copy[8] = data[8];
  copy[size - 1] ^= 1;
  expect_malformed(ctx, copy, size, "checksum mismatch");
  copy[size - 1] ^= 1;
  /* a section size past the end, sealed */
  put64(copy + VKX_HEADER_BYTES + 8, 1ull << 40);
  reseal(copy, size);
  expect_malformed(ctx, copy, size, "at byte 56: section REQS");
  memcpy(copy, data, size);
  /* truncated and resealed: a section runs past the end */
  reseal(copy, size / 2);
  expect_malformed(ctx, copy, size / 2, "at byte");
  free(copy);
  free(data);
}

/* Two products of the same shapes run one SPIR-V module: the file stores
 * it once (the second kernel's spirv_of names the first), the loaded
 * kernels share it, and a reference that is not to an earlier kernel's
 * own module is refused. */

static void modules_stored_once(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_executable_t *exe = compile(ctx, test_two_products_program);
  assert_int_equal(exe->kernel_count, 2);
  assert_true(exe->kernels[1].spirv_shared && exe->kernels[1].spirv == exe->kernels[0].spirv);
  size_t module = exe->kernels[0].spirv_size_bytes;
  void *data;
  size_t size;
  expect_ok(vkhlo_executable_serialize(exe, &data, &size));
  vkhlo_executable_destroy(exe);
  vkx_parsed_t parsed;
  expect_ok(vkx_parse(NULL, data, size, &parsed));
  const vkhlo_executable_t *p = parsed.exe;
  assert_true(!p->kernels[0].spirv_shared && p->kernels[1].spirv_shared);
  assert_ptr_equal(p->kernels[1].spirv, p->kernels[0].spirv);
  /* kernel 1's entry ends at its spirv_of: str name, u32 bindings, u32
   * group_count[3], u32 flags, u32 push constant, u64 views x 2 */
  size_t spirv_of = parsed.kernel_at[1] + 4 + strlen(p->kernels[1].name) + 4 * 6 + 16;
  assert_true(size < 2 * module); /* one module in the file, not two */
  vkx_parsed_free(&parsed);
  uint8_t *copy = malloc(size);
  for (int bad = 1; bad <= 2; bad++) { /* itself; a later kernel */
    memcpy(copy, data, size);
    copy[spirv_of] = (uint8_t)bad;
    reseal(copy, size);
    expect_malformed(ctx, copy, size, "runs the SPIR-V of kernel");
  }
  free(copy);
  free(data);
}

/* A PROG section of while loops nested |depth| deep (empty bodies),
 * spliced into a valid file and sealed. */
static uint8_t *nested_program(const uint8_t *valid, size_t size, int depth, size_t *out_size) {
  size_t pos = VKX_HEADER_BYTES, prog = 0, prog_end = 0;
  while (pos + 16 <= size) {
    size_t n = (size_t)get64(valid + pos + 8), end = pos + 16 + (n + 7) / 8 * 8;
    if (!memcmp(valid + pos, "PROG", 4)) prog = pos, prog_end = end;
    pos = end;
  }
  assert_true(prog > 0);
  size_t payload = 8 + (size_t)depth * 36 + 4 + (size_t)depth * 4, padded = (payload + 7) / 8 * 8;
  *out_size = size - (prog_end - prog) + 16 + padded;
  uint8_t *out = calloc(1, *out_size), *p = out;
  memcpy(p, valid, prog);
  p += prog;
  memcpy(p, "PROG", 4);
  put64(p + 8, payload);
  p += 16;
  uint32_t words[4096];
  int n = 0;
  words[n++] = 1; /* position_count */
  words[n++] = 0; /* not straight-line */
  for (int d = 0; d < depth; d++) {
    words[n++] = 1;                 /* one thunk: */
    words[n++] = EXE_THUNK_WHILE;   /* kind */
    words[n++] = 0;                 /* position */
    words[n++] = 0;                 /* pred_buffer 0 */
    words[n++] = 0xFFFFFFFFu;       /* trip count -1: read back */
    words[n++] = 0xFFFFFFFFu;
    words[n++] = 0;                 /* no rotated state */
    words[n++] = 0xFFFFFFFFu;       /* no gate kernel */
    words[n++] = 0xFFFFFFFFu;       /* no copy kernel; then cond: */
  }
  words[n++] = 0; /* the innermost cond is empty; bodies unwind: */
  for (int d = 0; d < depth; d++) words[n++] = 0;
  for (int i = 0; i < n; i++)
    for (int b = 0; b < 4; b++) p[4 * i + b] = (uint8_t)(words[i] >> (8 * b));
  p += padded;
  memcpy(p, valid + prog_end, size - prog_end);
  reseal(out, *out_size);
  return out;
}

static void nesting_depth(void **state) {
  vkhlo_context_t *ctx = *state;
  uint8_t *valid;
  size_t size, n;
  serialized(ctx, program, &valid, &size);
  /* 32 deep parses (the structure is sound), 33 does not */
  uint8_t *ok = nested_program(valid, size, VKX_MAX_DEPTH, &n);
  vkx_parsed_t parsed;
  expect_ok(vkx_parse(NULL, ok, n, &parsed));
  vkx_parsed_free(&parsed);
  free(ok);
  uint8_t *deep = nested_program(valid, size, VKX_MAX_DEPTH + 1, &n);
  vkhlo_status_t st = vkx_parse(NULL, deep, n, &parsed);
  if (vkhlo_status_code(st) != VKHLO_STATUS_INVALID_ARGUMENT || !strstr(vkhlo_status_message(st), "nest deeper"))
    fail_msg("expected a nesting error, got %s", vkhlo_status_message(st));
  vkhlo_status_free(st);
  free(deep);
  free(valid);
}

/* A loop whose trip count the program fixes keeps it through the file:
 * the loaded program is straight-line (one submission per execution) and
 * computes the same; a file whose trip count is below -1 is malformed. */
static void counted_loops_survive_the_file(void **state) {
  vkhlo_context_t *ctx = *state;
  static const char counted[] =
      "func.func @main(%n: tensor<i32>, %x: tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>) {\n"
      "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %r:2 = stablehlo.while(%i = %c0, %acc = %x) : tensor<i32>, tensor<4xf32>\n"
      "    cond {\n"
      "      %c5 = stablehlo.constant dense<5> : tensor<i32>\n"
      "      %p = stablehlo.compare LT, %i, %c5 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
      "      stablehlo.return %p : tensor<i1>\n"
      "    } do {\n"
      "      %one = stablehlo.constant dense<1> : tensor<i32>\n"
      "      %w = stablehlo.constant dense<[1.5, 2.5, -3.0, 4.25]> : tensor<4xf32>\n"
      "      %i1 = stablehlo.add %i, %one : tensor<i32>\n"
      "      %a2 = stablehlo.add %acc, %w : tensor<4xf32>\n"
      "      stablehlo.return %i1, %a2 : tensor<i32>, tensor<4xf32>\n"
      "    }\n"
      "  return %r#0, %r#1 : tensor<i32>, tensor<4xf32>\n}\n";
  vkhlo_executable_t *exe = compile(ctx, counted);
  assert_true(exe->straight_line);
  uint8_t want[20], got[20];
  run(ctx, exe, want);
  int32_t count;
  memcpy(&count, want, 4);
  assert_int_equal(count, 5);
  void *data;
  size_t size;
  expect_ok(vkhlo_executable_serialize(exe, &data, &size));
  vkhlo_executable_destroy(exe);
  expect_ok(vkhlo_executable_load(ctx, data, size, NULL, &exe));
  assert_true(exe->straight_line);
  const exe_thunk_t *loop = NULL;
  for (int i = 0; i < exe->main.count; i++)
    if (exe->main.thunks[i].kind == EXE_THUNK_WHILE) loop = &exe->main.thunks[i];
  assert_non_null(loop);
  assert_true(loop->has_trip_count);
  assert_int_equal(loop->trip_count, 5);
  bool table = false; /* the counter's next value copied from its table (api/lower.c) */
  for (int i = 0; i < loop->body->count; i++)
    table |= loop->body->thunks[i].kind == EXE_THUNK_COPY && loop->body->thunks[i].src_stride == 4;
  assert_true(table);
  run(ctx, exe, got);
  assert_memory_equal(want, got, sizeof want);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_true(s.submissions >= 1 && s.submissions <= 2);
  vkhlo_executable_destroy(exe);
  /* a counter table's stride past its table is malformed */
  bool stepped = false;
  for (size_t at = VKX_HEADER_BYTES; at + 32 <= size && !stepped; at++) {
    uint32_t kind;
    uint64_t bytes, stride;
    memcpy(&kind, (uint8_t *)data + at, 4);
    memcpy(&bytes, (uint8_t *)data + at + 16, 8);
    memcpy(&stride, (uint8_t *)data + at + 24, 8);
    if (kind == EXE_THUNK_COPY && bytes == 4 && stride == 4) { /* kind, position, src, dst, size, stride */
      put64((uint8_t *)data + at + 24, 4096);
      stepped = true;
    }
  }
  assert_true(stepped);
  reseal(data, size);
  expect_malformed(ctx, data, size, "copy stepping");
  /* the uncounted program's file says -1; make it -2 */
  uint8_t *file;
  size_t file_size;
  serialized(ctx, program, &file, &file_size);
  bool found = false;
  for (size_t at = VKX_HEADER_BYTES; at + 20 <= file_size && !found; at++) {
    uint32_t kind;
    memcpy(&kind, file + at, 4);
    uint64_t trips;
    memcpy(&trips, file + at + 12, 8);
    if (kind == EXE_THUNK_WHILE && trips == ~0ull) { /* kind, position, pred_buffer, trip count */
      put64(file + at + 12, ~0ull - 1);
      found = true;
    }
  }
  assert_true(found);
  reseal(file, file_size);
  expect_malformed(ctx, file, file_size, "trip count -2");
  free(file);
  /* the uncounted loop's gate and copy kernels (api/execute.c, "Batched
   * iterations") come back from the file; a gate naming no such kernel,
   * or one without its copy kernel, is malformed */
  serialized(ctx, program, &file, &file_size);
  vkhlo_executable_t *loaded = NULL;
  expect_ok(vkhlo_executable_load(ctx, file, file_size, NULL, &loaded));
  const exe_thunk_t *uncounted = NULL;
  for (int i = 0; i < loaded->main.count; i++)
    if (loaded->main.thunks[i].kind == EXE_THUNK_WHILE) uncounted = &loaded->main.thunks[i];
  assert_non_null(uncounted);
  assert_true(uncounted->gate_kernel >= 0 && uncounted->copy_kernel >= 0 && uncounted->rotate_count == 0);
  assert_string_equal(loaded->kernels[uncounted->gate_kernel].name, "loop_gate");
  assert_string_equal(loaded->kernels[uncounted->copy_kernel].name, "copy_words");
  int32_t gate = uncounted->gate_kernel, copy = uncounted->copy_kernel;
  vkhlo_executable_destroy(loaded);
  static const int32_t bad[][2] = {{999, 0}, {0, -1}, {-1, 0}};
  for (int b = 0; b < 3; b++) {
    uint8_t *f = malloc(file_size);
    memcpy(f, file, file_size);
    found = false;
    for (size_t at = VKX_HEADER_BYTES; at + 32 <= file_size && !found; at++) {
      uint32_t kind, rotates;
      uint64_t trips;
      int32_t g, c;
      memcpy(&kind, f + at, 4);
      memcpy(&trips, f + at + 12, 8);
      memcpy(&rotates, f + at + 20, 4);
      memcpy(&g, f + at + 24, 4);
      memcpy(&c, f + at + 28, 4);
      /* kind, position, pred_buffer, trip count, rotate count 0, gate, copy */
      if (kind == EXE_THUNK_WHILE && trips == ~0ull && rotates == 0 && g == gate && c == copy) {
        int32_t v[2] = {bad[b][0] == 0 ? gate : bad[b][0], bad[b][1] == 0 ? copy : bad[b][1]};
        memcpy(f + at + 24, v, 8);
        found = true;
      }
    }
    assert_true(found);
    reseal(f, file_size);
    expect_malformed(ctx, f, file_size, b == 0 ? "gate or copy kernel is not one" : "one of its gate and copy");
    free(f);
  }
  free(file);
  free(data);
}

static void missing_feature(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.restricted = true;
  vkhlo_context_t *restricted;
  expect_ok(vkhlo_context_create(&o, &restricted));
  uint8_t *data;
  size_t size;
  serialized(ctx, int64_program, &data, &size); /* native i64: shaderInt64 */
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_load(restricted, data, size, NULL, &exe);
  if (vkhlo_status_code(st) != VKHLO_STATUS_UNIMPLEMENTED || !strstr(vkhlo_status_message(st), "shaderInt64"))
    fail_msg("expected UNIMPLEMENTED naming shaderInt64, got %s", vkhlo_status_message(st));
  assert_null(exe);
  vkhlo_status_free(st);
  free(data);
  /* compiled in restricted mode (emulated i64), it loads on both */
  serialized(restricted, int64_program, &data, &size);
  expect_ok(vkhlo_executable_load(ctx, data, size, NULL, &exe));
  vkhlo_executable_destroy(exe);
  expect_ok(vkhlo_executable_load(restricted, data, size, NULL, &exe));
  vkhlo_executable_destroy(exe);
  free(data);
  vkhlo_context_destroy(restricted);
}

/* The pipeline cache: written to the cache directory when the context
 * goes, named after the device, read back by the next context, and not
 * rewritten when nothing changed. */
static void pipeline_cache_file(void **state) {
  (void)state;
  char dir[] = "/tmp/unit_vkx_cache.XXXXXX";
  assert_non_null(mkdtemp(dir));
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.cache_dir = dir;
  for (int round = 0; round < 2; round++) {
    vkhlo_context_t *ctx;
    expect_ok(vkhlo_context_create(&o, &ctx));
    vkhlo_executable_t *exe = compile(ctx, program);
    vkhlo_executable_destroy(exe);
    vkhlo_context_destroy(ctx);
  }
  char cmd[512];
  snprintf(cmd, sizeof cmd, "ls %s | grep -c '^pipelines-[0-9a-f]*-[0-9a-f]*-[0-9a-f]*-[0-9a-f]\\{32\\}$'", dir);
  FILE *f = popen(cmd, "r");
  assert_non_null(f);
  int files = 0;
  assert_int_equal(fscanf(f, "%d", &files), 1);
  pclose(f);
  assert_int_equal(files, 1);
  /* a foreign or broken file is ignored (the driver never sees it) */
  snprintf(cmd, sizeof cmd, "for f in %s/pipelines-*; do printf 'garbage' > \"$f\"; done", dir);
  assert_int_equal(system(cmd), 0);
  vkhlo_context_t *ctx;
  expect_ok(vkhlo_context_create(&o, &ctx));
  vkhlo_executable_t *exe = compile(ctx, program);
  vkhlo_executable_destroy(exe);
  vkhlo_context_destroy(ctx);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* ------------------------------------------------------------- fuzzing */

static uint64_t next(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

typedef struct layout {
  size_t field[64]; /* offsets of section size fields and first counts */
  int fields;
  size_t kern_begin, kern_end; /* the KERN payload */
} layout_t;

static void find_layout(const uint8_t *data, size_t size, layout_t *l) {
  memset(l, 0, sizeof *l);
  size_t pos = VKX_HEADER_BYTES;
  while (pos + 16 <= size && l->fields < 60) {
    uint64_t n = get64(data + pos + 8);
    l->field[l->fields++] = pos + 8;  /* section size */
    l->field[l->fields++] = pos + 16; /* its first word (a count in most) */
    if (!memcmp(data + pos, "KERN", 4)) l->kern_begin = pos + 16, l->kern_end = pos + 16 + (size_t)n;
    pos += 16 + (size_t)((n + 7) / 8 * 8);
  }
}

/* One mutation of |valid| into |buf|; returns the new size.  |*in_kern|:
 * whether a KERN byte changed. */
static size_t mutate(const uint8_t *valid, size_t size, const layout_t *l, uint64_t *seed, uint8_t *buf,
                     bool *in_kern) {
  memcpy(buf, valid, size);
  size_t n = size, at = 0, lo = size, hi = 0;
  uint64_t r = next(seed);
  switch (r % 6) {
    case 0: /* bit flips */
      for (int k = 0; k <= (int)(next(seed) % 3); k++) {
        at = next(seed) % size;
        buf[at] ^= (uint8_t)(1u << (next(seed) % 8));
        if (at < lo) lo = at;
        if (at > hi) hi = at;
      }
      break;
    case 1: /* a byte set */
      at = next(seed) % size;
      buf[at] = (uint8_t)next(seed);
      break;
    case 2: /* truncation */
      n = (size_t)(next(seed) % size);
      at = n;
      break;
    case 3: { /* a section size or count changed */
      static const uint64_t values[] = {0, 1, 2, 3, 4, 7, 8, 0xff, 0xffff, 0x7fffffff, 0xffffffff,
                                        0x100000000ull, 0xffffffffffffffffull};
      at = l->field[next(seed) % (uint64_t)l->fields];
      uint64_t v = next(seed) % 2 ? values[next(seed) % (sizeof values / sizeof *values)]
                                  : get64(valid + at) + (next(seed) % 9) - 4;
      for (int i = 0; i < 4 && at + i < size; i++) buf[at + i] = (uint8_t)(v >> (8 * i));
      break;
    }
    case 4: { /* an aligned word set to a small or edge value */
      at = (next(seed) % (size / 4)) * 4;
      static const uint32_t words[] = {0, 1, 2, 3, 0xffffffffu, 0x80000000u, 64, 1000};
      uint32_t v = words[next(seed) % 8];
      for (int i = 0; i < 4; i++) buf[at + i] = (uint8_t)(v >> (8 * i));
      break;
    }
    default: /* a run of random bytes */
      at = next(seed) % size;
      hi = at + next(seed) % 16;
      for (size_t i = at; i < size && i <= hi; i++) buf[i] = (uint8_t)next(seed);
      break;
  }
  if (at < lo) lo = at;
  if (at + 3 > hi) hi = at + 3;
  *in_kern = lo < l->kern_end && hi >= l->kern_begin;
  return n;
}

static void fuzz_parse(void **state) {
  vkhlo_context_t *ctx = *state;
  uint8_t *valid;
  size_t size;
  serialized(ctx, program, &valid, &size);
  layout_t l;
  find_layout(valid, size, &l);
  assert_true(l.fields >= 20 && l.kern_end > l.kern_begin);
  uint8_t *buf = malloc(size);
  uint64_t seed = 20261123;
  int accepted = 0, rejected = 0, structural = 0;
  enum { ITERATIONS = 100000 };
  for (int it = 0; it < ITERATIONS; it++) {
    bool in_kern;
    size_t n = mutate(valid, size, &l, &seed, buf, &in_kern);
    if (it % 4) reseal(buf, n); /* 3 in 4: the checksum cannot catch it */
    vkx_parsed_t parsed;
    vkhlo_status_t st = vkx_parse(NULL, buf, n, &parsed);
    if (!st) {
      accepted++;
      vkx_parsed_free(&parsed);
      continue;
    }
    rejected++;
    if (vkhlo_status_code(st) != VKHLO_STATUS_INVALID_ARGUMENT ||
        !strstr(vkhlo_status_message(st), "malformed .vkx file: at byte "))
      fail_msg("iteration %d: %s: %s", it, vkhlo_status_code_name(vkhlo_status_code(st)), vkhlo_status_message(st));
    if (!strstr(vkhlo_status_message(st), "checksum") && !strstr(vkhlo_status_message(st), "the file has"))
      structural++;
    vkhlo_status_free(st);
  }
  printf("fuzz_parse: %d mutated files: %d rejected (%d by structural checks), %d accepted (harmless changes)\n",
         ITERATIONS, rejected, structural, accepted);
  assert_int_equal(accepted + rejected, ITERATIONS);
  assert_true(structural > ITERATIONS / 4);
  free(buf);
  free(valid);
}

static void count_message(void *user, const char *message) {
  (void)message;
  ++*(int *)user;
}

/* Mutations through the whole load (pipelines, allocations, uploads).
 * The checksum is recomputed unless a SPIR-V byte changed: drivers trust
 * SPIR-V (vkhlo validated it when it compiled it), so corrupt modules are
 * the checksum's to stop.  Validation messages about changed fields (a
 * push constant flag that no longer matches the shader) are expected. */
static void fuzz_load(void **state) {
  vkhlo_context_t *ctx = *state;
  uint8_t *valid;
  size_t size;
  serialized(ctx, program, &valid, &size);
  layout_t l;
  find_layout(valid, size, &l);
  int messages = 0;
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.message_fn = count_message;
  o.message_user = &messages;
  vkhlo_context_t *quiet;
  expect_ok(vkhlo_context_create(&o, &quiet));
  uint8_t *buf = malloc(size);
  uint64_t seed = 7;
  int loaded = 0;
  enum { ITERATIONS = 1000 };
  for (int it = 0; it < ITERATIONS; it++) {
    bool in_kern;
    size_t n = mutate(valid, size, &l, &seed, buf, &in_kern);
    if (!in_kern) reseal(buf, n);
    vkhlo_executable_t *exe = NULL;
    vkhlo_status_t st = vkhlo_executable_load(quiet, buf, n, NULL, &exe);
    if (!st) {
      loaded++;
      vkhlo_executable_destroy(exe);
      continue;
    }
    assert_null(exe);
    vkhlo_status_code_t code = vkhlo_status_code(st);
    if (code != VKHLO_STATUS_INVALID_ARGUMENT && code != VKHLO_STATUS_UNIMPLEMENTED &&
        code != VKHLO_STATUS_RESOURCE_EXHAUSTED)
      fail_msg("iteration %d: %s: %s", it, vkhlo_status_code_name(code), vkhlo_status_message(st));
    vkhlo_status_free(st);
  }
  printf("fuzz_load: %d mutated files through the whole load: %d loaded, %d rejected\n", ITERATIONS, loaded,
         ITERATIONS - loaded);
  free(buf);
  free(valid);
  vkhlo_context_destroy(quiet);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(load_runs_like_compile), cmocka_unit_test(host_calls_and_conditionals),
      cmocka_unit_test(side_weights_file),
      cmocka_unit_test(modules_stored_once),
      cmocka_unit_test(malformed_files),        cmocka_unit_test(nesting_depth),
      cmocka_unit_test(counted_loops_survive_the_file),
      cmocka_unit_test(missing_feature),        cmocka_unit_test(pipeline_cache_file),
      cmocka_unit_test(fuzz_parse),             cmocka_unit_test(fuzz_load),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
