/*
 * Allocation-failure tests (SQLite's fault simulator, Lua's memerr.lua):
 * a context whose host allocator (vkhlo_context_options_t.host_allocator)
 * fails the N-th allocation from a chosen moment on.  For N = 1, 2, 3, ...
 * a call is repeated until it succeeds; every failing call must return a
 * status (RESOURCE_EXHAUSTED), never crash, and leave the allocator's live
 * block count where it was (nothing leaked, nothing freed twice); under
 * ASan the same run also proves no out-of-bounds use on the error paths.
 *
 * - compile_conformance_files: vkhlo_executable_compile of the first
 *   ALLOC_TEST_FILES files of tests/conformance_passing.txt (from
 *   ../shared/conformance/testdata; skipped, and said so, when ../shared is
 *   absent: the program then exits 77, ctest's SKIP_RETURN_CODE).  Every N
 *   up to ALLOC_TEST_EVERY_N, then every ALLOC_TEST_STRIDE-th N (the
 *   allocations of a compile with a warm SPIR-V cache number in the
 *   thousands for the larger files, and every compile costs milliseconds),
 *   always ending with the successful compile.  The SPIR-V cache is on
 *   (in a temporary directory) so glslang runs once per kernel.
 *   Then the same for a few more files of the list whose ops take other
 *   paths (sort, gather/scatter, reduce_window, FFT, RNG, triangular
 *   solve, top_k, a convolution from shaders/, a while loop): the first 50
 *   are all elementwise.
 * - execute_with_failures: a small program with a while loop and a check,
 *   executed with allocation N failing during the execution.
 * - compile_with_dumps: the same program compiled with a dump directory.
 * - context_create_with_failures: vkhlo_context_create itself.
 *
 * The test allocator puts a header with a magic number before each block:
 * a block freed with the C library's free() (or one from malloc() handed
 * to the allocator's free) is caught (ASan: bad-free; here: a failed
 * magic check).  Statuses stay on the C library (vkhlo/allocator.h).
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

#define ALLOC_TEST_FILES 50
#define ALLOC_TEST_EVERY_N 300
#define ALLOC_TEST_STRIDE 7
#define SHARED_TESTDATA VKHLO_SOURCE_DIR "/../shared/conformance/testdata/"
#define PASSING_LIST VKHLO_SOURCE_DIR "/tests/conformance_passing.txt"

/* ------------------------------------------------------ the allocator */

#define MAGIC 0x7a11c0de5eedf00dull

typedef struct header {
  uint64_t magic;
  uint64_t size;
} header_t;

typedef struct counting_allocator {
  long calls;     /* malloc + realloc calls since arming */
  long fail_at;   /* the call that fails (1-based); 0 = none */
  long failures;  /* calls failed so far */
  long live;      /* blocks allocated and not freed */
  long total;     /* malloc + realloc calls ever */
  long bad_frees; /* frees of blocks that are not ours */
} counting_allocator_t;

static void *t_malloc(void *user, size_t size) {
  counting_allocator_t *a = user;
  a->total++;
  if (a->fail_at && ++a->calls == a->fail_at) {
    a->failures++;
    return NULL;
  }
  assert_true(size > 0);
  header_t *h = malloc(sizeof *h + size);
  if (!h) return NULL;
  h->magic = MAGIC;
  h->size = size;
  a->live++;
  return h + 1;
}

static void *t_realloc(void *user, void *ptr, size_t size) {
  counting_allocator_t *a = user;
  a->total++;
  assert_non_null(ptr);
  header_t *h = (header_t *)ptr - 1;
  if (h->magic != MAGIC) {
    a->bad_frees++;
    return NULL;
  }
  if (a->fail_at && ++a->calls == a->fail_at) {
    a->failures++;
    return NULL;
  }
  assert_true(size > 0);
  header_t *n = realloc(h, sizeof *n + size);
  if (!n) return NULL;
  n->size = size;
  return n + 1;
}

static void t_free(void *user, void *ptr) {
  counting_allocator_t *a = user;
  assert_non_null(ptr);
  header_t *h = (header_t *)ptr - 1;
  if (h->magic != MAGIC) {
    a->bad_frees++;
    return;
  }
  h->magic = 0;
  a->live--;
  free(h);
}

/* Fail call |n| (1-based) from now on; 0 = never. */
static void arm(counting_allocator_t *a, long n) {
  a->calls = 0;
  a->fail_at = n;
}

typedef struct fixture {
  counting_allocator_t counts;
  vkhlo_allocator_t allocator;
  vkhlo_context_t *ctx;
  char cache_dir[64];
} fixture_t;

static vkhlo_context_options_t context_options(fixture_t *f) {
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.enable_validation = true;
  o.cache_dir = f->cache_dir;
  o.host_allocator = &f->allocator;
  return o;
}

static void fixture_init(fixture_t *f) {
  memset(f, 0, sizeof *f);
  f->allocator = (vkhlo_allocator_t){&f->counts, t_malloc, t_realloc, t_free};
  snprintf(f->cache_dir, sizeof f->cache_dir, "/tmp/vkhlo-alloc-test-XXXXXX");
  assert_non_null(mkdtemp(f->cache_dir));
}

static int setup(void **state) {
  fixture_t *f = malloc(sizeof *f);
  if (!f) return -1;
  fixture_init(f);
  vkhlo_context_options_t o = context_options(f);
  vkhlo_status_t st = vkhlo_context_create(&o, &f->ctx);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    free(f);
    return -1;
  }
  /* The context creates its SPIR-V compiler on the first compile and keeps
   * it: compile once here so the tests' live-block baselines include it
   * (its creation under failing allocations is first_compile_with_failures'). */
  static const char tiny[] = "func.func @main() -> tensor<2xf32> {\n"
                             "  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                             "  return %0 : tensor<2xf32>\n}\n";
  vkhlo_executable_t *exe = NULL;
  st = vkhlo_executable_compile(f->ctx, tiny, strlen(tiny), "tiny.mlir", NULL, &exe);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    vkhlo_context_destroy(f->ctx);
    free(f);
    return -1;
  }
  vkhlo_executable_destroy(exe);
  *state = f;
  return 0;
}

/* A fresh context's first compile, which also creates the SPIR-V compiler:
 * every failing allocation gives RESOURCE_EXHAUSTED, and destroying the
 * context afterwards returns every block. */
static long fresh_compile(long fail_at, vkhlo_status_t *out_status, long *out_allocations) {
  static const char tiny[] = "func.func @main() -> tensor<2xf32> {\n"
                             "  %0 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
                             "  return %0 : tensor<2xf32>\n}\n";
  fixture_t f;
  fixture_init(&f);
  vkhlo_context_options_t o = context_options(&f);
  expect_ok(vkhlo_context_create(&o, &f.ctx));
  long total0 = f.counts.total;
  arm(&f.counts, fail_at);
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(f.ctx, tiny, strlen(tiny), "tiny.mlir", NULL, &exe);
  arm(&f.counts, 0);
  *out_allocations = f.counts.total - total0;
  if (!st) {
    /* a second compile on the same context: no compiler to create */
    long total1 = f.counts.total;
    vkhlo_executable_destroy(exe);
    exe = NULL;
    expect_ok(vkhlo_executable_compile(f.ctx, tiny, strlen(tiny), "tiny.mlir", NULL, &exe));
    *out_allocations -= f.counts.total - total1;
    vkhlo_executable_destroy(exe);
  }
  long failures = f.counts.failures;
  vkhlo_context_destroy(f.ctx);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f.cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f.cache_dir);
  assert_int_equal(f.counts.live, 0);
  assert_int_equal(f.counts.bad_frees, 0);
  *out_status = st;
  return failures;
}

static void first_compile_with_failures(void **state) {
  (void)state;
  /* the compiler's own allocations: a fresh context's first compile minus
   * its second (the compiler is made before anything else of a compile) */
  vkhlo_status_t st;
  long compiler_allocations;
  fresh_compile(0, &st, &compiler_allocations);
  expect_ok(st);
  assert_true(compiler_allocations > 0);
  long failed = 0;
  for (long n = 1; n <= compiler_allocations; n++) {
    long ignored;
    assert_int_equal(fresh_compile(n, &st, &ignored), 1);
    assert_non_null(st);
    assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_RESOURCE_EXHAUSTED);
    vkhlo_status_free(st);
    failed++;
  }
  printf("first compile: the compiler makes %ld allocations, %ld failing compiles checked\n",
         compiler_allocations, failed);
}

static int teardown(void **state) {
  fixture_t *f = *state;
  int messages = vkhlo_context_validation_message_count(f->ctx);
  vkhlo_context_destroy(f->ctx);
  long live = f->counts.live, bad = f->counts.bad_frees;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->cache_dir);
  free(f);
  if (live != 0 || bad != 0 || messages != 0) {
    fprintf(stderr, "after vkhlo_context_destroy: %ld live blocks, %ld bad frees, %d validation messages\n",
            live, bad, messages);
    return -1;
  }
  return 0;
}

/* A failed call: a non-NULL status, RESOURCE_EXHAUSTED, and the live count
 * back where it was. */
static void expect_failure(fixture_t *f, vkhlo_status_t st, long live_before, const char *what, long n) {
  if (!st) fail_msg("%s: allocation %ld failed but the call returned OK", what, n);
  if (vkhlo_status_code(st) != VKHLO_STATUS_RESOURCE_EXHAUSTED)
    fail_msg("%s: allocation %ld failed: status %d, not RESOURCE_EXHAUSTED: %s", what, n,
             (int)vkhlo_status_code(st), vkhlo_status_message(st));
  vkhlo_status_free(st);
  if (f->counts.live != live_before)
    fail_msg("%s: allocation %ld failed: %ld blocks leaked", what, n, f->counts.live - live_before);
  assert_int_equal(f->counts.bad_frees, 0);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ------------------------------------------------- compile failures */

static bool shared_absent;

/* Compiles |text| with allocation N failing for N = 1, 2, ... until it
 * succeeds; returns the number of allocations of the successful compile. */
static long compile_until_success(fixture_t *f, const char *name, const char *text, size_t length,
                                  long *out_failed_compiles) {
  long live_before = f->counts.live;
  /* A plain compile first: warms the SPIR-V cache and counts the calls. */
  arm(&f->counts, 0);
  long total_before = f->counts.total;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(f->ctx, text, length, name, NULL, &exe));
  long allocations = f->counts.total - total_before;
  vkhlo_executable_destroy(exe);
  assert_int_equal(f->counts.live, live_before);
  long failed = 0;
  for (long n = 1;; n = n < ALLOC_TEST_EVERY_N ? n + 1 : n + ALLOC_TEST_STRIDE) {
    arm(&f->counts, n);
    exe = NULL;
    long failures_before = f->counts.failures;
    vkhlo_status_t st = vkhlo_executable_compile(f->ctx, text, length, name, NULL, &exe);
    arm(&f->counts, 0);
    if (!st) {
      assert_non_null(exe);
      vkhlo_executable_destroy(exe);
      assert_int_equal(f->counts.live, live_before);
      /* Done when no allocation failed; a failure that the compile
       * absorbed (a SPIR-V cache read, an optional table) goes on. */
      if (f->counts.failures == failures_before) break;
      continue;
    }
    assert_null(exe);
    expect_failure(f, st, live_before, name, n);
    failed++;
    if (n > 4 * allocations + 1000) fail_msg("%s: still failing at allocation %ld", name, n);
  }
  *out_failed_compiles = failed;
  return allocations;
}

/* Files beyond the first ALLOC_TEST_FILES, for the emitters those miss. */
static const char *const extra_files[] = {
    "sort_bfloat16_5_7.mlir",
    "dot_general_bfloat16_4_3_float32_3_6.mlir",
    "reduce_window_add_bfloat16_4_6.mlir",
    "scatter_add_bfloat16_1_125_bfloat16_1.mlir",
    "gather_float32_10_10_10.mlir",
    "select_and_scatter_add_bfloat16_1_3_5_bfloat16_2_4_6.mlir",
    "fft_complex128_14_15_0_17.mlir",
    "rng_bit_generator_uint64_2.mlir",
    "triangular_solve_bfloat16_4_4_bfloat16_4_1.mlir",
    "top_k_bool_5_3_chlo.mlir",
    "cumsum_bfloat16_8_9.mlir",
    "conv_general_dilated_float32_1_16_16_2_float32_2_3_2_2.mlir",
    "igamma_float32_20_20_float32_20_20_chlo.mlir",
};

static void compile_conformance_files(void **state) {
  fixture_t *f = *state;
  size_t list_size = 0;
  char *list = test_read_file(PASSING_LIST, &list_size);
  assert_non_null(list);
  int files = 0;
  long total_allocations = 0, max_allocations = 0, total_failed = 0;
  const char *max_name = "";
  static char max_name_buf[256];
  double t0 = now_s();
  int extra = 0, extra_count = (int)(sizeof extra_files / sizeof extra_files[0]);
  bool first = true;
  for (;;) {
    const char *line;
    if (files >= ALLOC_TEST_FILES) line = extra < extra_count ? extra_files[extra++] : NULL;
    else line = strtok(first ? list : NULL, "\n");
    first = false;
    if (!line) break;
    if (!*line || *line == '#') continue;
    char path[1024];
    snprintf(path, sizeof path, "%s%s", SHARED_TESTDATA, line);
    size_t length = 0;
    char *text = test_read_file(path, &length);
    if (!text) {
      if (files == 0) {
        printf("SKIPPED: %s not found (../shared is absent): no conformance files to compile\n", path);
        shared_absent = true;
        free(list);
        skip();
      }
      fail_msg("%s listed in conformance_passing.txt is missing", path);
    }
    long failed = 0;
    long allocations = compile_until_success(f, line, text, length, &failed);
    free(text);
    if (allocations > ALLOC_TEST_EVERY_N)
      printf("  %s: %ld allocations per compile, %ld failing compiles checked\n", line, allocations, failed);
    total_allocations += allocations;
    total_failed += failed;
    if (allocations > max_allocations) {
      max_allocations = allocations;
      snprintf(max_name_buf, sizeof max_name_buf, "%s", line);
      max_name = max_name_buf;
    }
    files++;
  }
  free(list);
  printf("alloc failure: %d files (the first %d of conformance_passing.txt and %d more), %ld allocations per compile on average (max %ld, %s), "
         "%ld failing compiles checked (every N up to %d, then every %d-th), %.1f s\n",
         files, ALLOC_TEST_FILES, extra_count, files ? total_allocations / files : 0, max_allocations, max_name, total_failed,
         ALLOC_TEST_EVERY_N, ALLOC_TEST_STRIDE, now_s() - t0);
  assert_true(files > 0);
}

/* ----------------------------------------------- execution failures */

/* A while loop (the host reads the predicate back each iteration), a
 * check (evaluated on the host after the run) and plain kernels. */
static const char loop_program[] =
    "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %c3 = stablehlo.constant dense<3> : tensor<i32>\n"
    "  %r:2 = stablehlo.while(%i = %c0, %v = %x) : tensor<i32>, tensor<4xf32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LT, %i, %c3 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %j = stablehlo.add %i, %c1 : tensor<i32>\n"
    "      %w = stablehlo.add %v, %v : tensor<4xf32>\n"
    "      stablehlo.return %j, %w : tensor<i32>, tensor<4xf32>\n"
    "    }\n"
    "  %e = stablehlo.constant dense<[8.0, 16.0, 24.0, 32.0]> : tensor<4xf32>\n"
    "  stablehlo.custom_call @check.expect_eq(%r#1, %e) {has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> ()\n"
    "  %y = stablehlo.multiply %r#1, %r#1 : tensor<4xf32>\n"
    "  return %y : tensor<4xf32>\n"
    "}\n";

static void execute_with_failures(void **state) {
  fixture_t *f = *state;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(f->ctx, loop_program, strlen(loop_program), "loop.mlir", NULL, &exe));
  vkhlo_tensor_type_t t;
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  float x[4] = {1, 2, 3, 4}, y[4];
  vkhlo_buffer_t *arg = NULL, *res = NULL;
  expect_ok(vkhlo_buffer_create(f->ctx, &t, x, &arg));
  /* Warm up: the buffer pool and the executable's lazily made state. */
  for (int i = 0; i < 2; i++) {
    expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
    vkhlo_buffer_destroy(res);
  }
  long live_before = f->counts.live;
  arm(&f->counts, 0);
  long total_before = f->counts.total;
  expect_ok(vkhlo_executable_execute(exe, 1, &arg, 1, &res));
  long allocations = f->counts.total - total_before;
  vkhlo_buffer_destroy(res);
  assert_true(allocations > 0);
  assert_int_equal(f->counts.live, live_before);
  long failed = 0;
  for (long n = 1;; n++) {
    arm(&f->counts, n);
    res = NULL;
    long failures_before = f->counts.failures;
    vkhlo_status_t st = vkhlo_executable_execute(exe, 1, &arg, 1, &res);
    arm(&f->counts, 0);
    if (!st) {
      expect_ok(vkhlo_buffer_read(res, y, sizeof y));
      for (int i = 0; i < 4; i++) assert_true(y[i] == (8 * x[i]) * (8 * x[i]));
      assert_int_equal(vkhlo_executable_check_count(exe), 1);
      vkhlo_buffer_destroy(res);
      assert_int_equal(f->counts.live, live_before);
      if (f->counts.failures == failures_before) break;
      continue;
    }
    expect_failure(f, st, live_before, "execute", n);
    failed++;
    assert_true(n <= allocations);
  }
  printf("execute: %ld allocations per execution, %ld failing executions checked\n", allocations, failed);
  assert_true(failed > 0 && failed <= allocations);
  vkhlo_buffer_destroy(arg);
  vkhlo_executable_destroy(exe);
}

/* The dumps (--dump-dir): the printer, the fusion plan, the GLSL and the
 * SPIR-V disassembly, the buffer and thunk tables. */
static void compile_with_dumps(void **state) {
  fixture_t *f = *state;
  char dir[128];
  snprintf(dir, sizeof dir, "%s/dumps", f->cache_dir);
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.dump_dir = dir;
  long live_before = f->counts.live, failed = 0;
  for (long n = 1;; n++) {
    arm(&f->counts, n);
    long failures_before = f->counts.failures;
    vkhlo_executable_t *exe = NULL;
    vkhlo_status_t st = vkhlo_executable_compile(f->ctx, loop_program, strlen(loop_program), "loop.mlir", &o, &exe);
    arm(&f->counts, 0);
    if (!st) {
      vkhlo_executable_destroy(exe);
      assert_int_equal(f->counts.live, live_before);
      if (f->counts.failures == failures_before) break;
      continue;
    }
    expect_failure(f, st, live_before, "compile with dumps", n);
    failed++;
    assert_true(n < 100000);
  }
  printf("dumps: %ld failing compiles checked\n", failed);
  assert_true(failed > 0);
}

/* ------------------------------------------ context creation failures */

static void context_create_with_failures(void **state) {
  (void)state;
  fixture_t f;
  fixture_init(&f);
  vkhlo_context_options_t o = context_options(&f);
  long failed = 0;
  for (long n = 1;; n++) {
    arm(&f.counts, n);
    vkhlo_context_t *ctx = NULL;
    long failures_before = f.counts.failures;
    vkhlo_status_t st = vkhlo_context_create(&o, &ctx);
    arm(&f.counts, 0);
    if (!st) {
      assert_non_null(ctx);
      vkhlo_context_destroy(ctx);
      assert_int_equal(f.counts.live, 0);
      if (f.counts.failures == failures_before) break;
      continue;
    }
    assert_null(ctx);
    expect_failure(&f, st, 0, "vkhlo_context_create", n);
    failed++;
    assert_true(n < 10000);
  }
  printf("context: %ld failing creations checked\n", failed);
  assert_true(failed > 0);
  assert_int_equal(f.counts.bad_frees, 0);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f.cache_dir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f.cache_dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(context_create_with_failures),
      cmocka_unit_test(first_compile_with_failures),
      cmocka_unit_test_setup_teardown(execute_with_failures, setup, teardown),
      cmocka_unit_test_setup_teardown(compile_with_dumps, setup, teardown),
      cmocka_unit_test_setup_teardown(compile_conformance_files, setup, teardown),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  return rc == 0 && shared_absent ? 77 : rc;
}
