/*
 * Tuning (vkhlo_compile_options_t's tune; api/tune.c): on a CPU device a
 * program with a subgroup-path GEMM, a one-row GEMM and a convolution has
 * three kernel shapes with choices; tuning times every candidate of each,
 * records the fastest in the cache directory's tuning file, and compiles
 * with it.  Checked: the report (candidates timed, the choice no slower
 * than the default), the file's lines, results equal to an untuned
 * context's, a later context taking the file's choices without timing,
 * retune timing again (keeping lines another process added), a hand-edited choice reaching the kernel's GLSL
 * (and malformed lines skipped), tuning with the cache off, and a program
 * that cannot run on zero arguments failing with a clear error.  Every
 * context runs with the validation layer on; any message fails.  On a GPU
 * no kernel has choices yet: those tests are skipped, saying so.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
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

static const char program[] =
    "func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %v: tensor<1x256xf32>,\n"
    "                %m: tensor<256x256xf32>, %x: tensor<1x8x8x16xf32>, %w: tensor<3x3x16x16xf32>)\n"
    "    -> (tensor<64x64xf32>, tensor<1x256xf32>, tensor<1x8x8x16xf32>) {\n"
    "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
    " : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  %1 = stablehlo.dot_general %v, %m, contracting_dims = [1] x [0]"
    " : (tensor<1x256xf32>, tensor<256x256xf32>) -> tensor<1x256xf32>\n"
    "  %2 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
    " window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
    " : (tensor<1x8x8x16xf32>, tensor<3x3x16x16xf32>) -> tensor<1x8x8x16xf32>\n"
    "  return %0, %1, %2 : tensor<64x64xf32>, tensor<1x256xf32>, tensor<1x8x8x16xf32>\n}\n";

#define RESULTS 3

static vkhlo_context_t *context_on(const char *cache_dir) {
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.enable_validation = true;
  o.cache_dir = cache_dir;
  vkhlo_context_t *ctx = NULL;
  expect_ok(vkhlo_context_create(&o, &ctx));
  return ctx;
}

static void destroy_context(vkhlo_context_t *ctx) {
  assert_int_equal(vkhlo_context_validation_message_count(ctx), 0);
  vkhlo_context_destroy(ctx);
}

/* A context on |cache_dir|; on a device that is not a CPU the test is
 * skipped (no kernel has choices on GPUs yet), after removing the
 * directories |dir1| and |dir2| (NULL: none). */
static vkhlo_context_t *cpu_context(const char *cache_dir, const char *dir1, const char *dir2) {
  vkhlo_context_t *ctx = context_on(cache_dir);
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  if (strcmp(d.type, "cpu") == 0) return ctx;
  destroy_context(ctx);
  if (dir1) test_remove_dir(dir1);
  if (dir2) test_remove_dir(dir2);
  skip();
  return NULL;
}

static vkhlo_executable_t *compile(vkhlo_context_t *ctx, const char *text, bool tune, bool retune,
                                   const char *dump_dir) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.tune = tune;
  o.retune = retune;
  o.dump_dir = dump_dir;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "tune_test.mlir", &o, &exe));
  return exe;
}

/* Runs |exe| on seeded inputs in [-0.5, 0.5); out[r] (heap) gets result r. */
static void run(vkhlo_context_t *ctx, vkhlo_executable_t *exe, float *out[RESULTS], size_t count[RESULTS]) {
  int np = vkhlo_executable_parameter_count(exe), nr = vkhlo_executable_result_count(exe);
  assert_true(np <= 8 && nr <= RESULTS);
  vkhlo_buffer_t *args[8], *res[RESULTS];
  uint32_t seed = 7;
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
    int64_t n = vkhlo_tensor_type_element_count(&t);
    float *data = malloc((size_t)n * sizeof *data + 4);
    for (int64_t k = 0; k < n; k++) data[k] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / (1 << 24) - 0.5f;
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &args[i]));
    free(data);
  }
  expect_ok(vkhlo_executable_execute(exe, np, args, nr, res));
  for (int r = 0; r < nr; r++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_result_type(exe, r, &t));
    count[r] = (size_t)vkhlo_tensor_type_element_count(&t);
    out[r] = malloc(count[r] * sizeof(float) + 4);
    expect_ok(vkhlo_buffer_read(res[r], out[r], count[r] * sizeof(float)));
    vkhlo_buffer_destroy(res[r]);
  }
  for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args[i]);
}

/* |exe|'s results equal those of |text| compiled without tuning on a
 * context with the cache off (the default configurations), to f32
 * rounding of 256-term sums. */
static void assert_same_results(vkhlo_context_t *ctx, vkhlo_executable_t *exe, const char *text) {
  vkhlo_context_t *ref_ctx = context_on("off");
  vkhlo_executable_t *ref = compile(ref_ctx, text, false, false, NULL);
  float *got[RESULTS], *want[RESULTS];
  size_t n[RESULTS], m[RESULTS];
  int nr = vkhlo_executable_result_count(exe);
  run(ctx, exe, got, n);
  run(ref_ctx, ref, want, m);
  for (int r = 0; r < nr; r++) {
    assert_int_equal(n[r], m[r]);
    for (size_t i = 0; i < n[r]; i++)
      if (fabsf(got[r][i] - want[r][i]) > 1e-4f)
        fail_msg("result %d element %zu: %.9g with tuning, %.9g without", r, i, (double)got[r][i],
                 (double)want[r][i]);
    free(got[r]);
    free(want[r]);
  }
  vkhlo_executable_destroy(ref);
  destroy_context(ref_ctx);
}

/* The tuning report of |exe| (heap, caller frees), its length in *n. */
static vkhlo_kernel_tuning_t *report(const vkhlo_executable_t *exe, int *n) {
  *n = vkhlo_executable_tuning(exe, NULL, 0);
  vkhlo_kernel_tuning_t *t = calloc((size_t)*n + 1, sizeof *t);
  assert_int_equal(vkhlo_executable_tuning(exe, t, *n), *n);
  return t;
}

/* The path of the tuning file in |dir| (tuning-*.txt) into |path|. */
static bool tuning_file(const char *dir, char *path, size_t size) {
  DIR *d = opendir(dir);
  if (!d) return false;
  struct dirent *e;
  bool found = false;
  while (!found && (e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "tuning-", 7) == 0 && strstr(e->d_name, ".txt")) {
      snprintf(path, size, "%s/%s", dir, e->d_name);
      found = true;
    }
  closedir(d);
  return found;
}

static void tune_times_records_and_reuses(void **state) {
  (void)state;
  char dir[] = "/tmp/vkhlo_tune_testXXXXXX";
  assert_non_null(mkdtemp(dir));
  vkhlo_context_t *ctx = cpu_context(dir, dir, NULL);
  vkhlo_executable_t *exe = compile(ctx, program, true, false, NULL);
  int n;
  vkhlo_kernel_tuning_t *t = report(exe, &n);
  assert_int_equal(n, 3);
  const char *prefixes[3] = {"gemm_cpu sg b=1 m=64 n=64 k=64 ", "gemm_cpu b=1 m=1 n=256 k=256 ", "conv_cpu n=1 c=16 "};
  for (int p = 0; p < 3; p++) {
    int found = 0;
    for (int i = 0; i < n; i++) found += strncmp(t[i].key, prefixes[p], strlen(prefixes[p])) == 0;
    if (found != 1) fail_msg("%d tuning entries start with '%s'", found, prefixes[p]);
  }
  char path[1024];
  assert_true(tuning_file(dir, path, sizeof path));
  size_t size;
  char *file = test_read_file(path, &size);
  assert_non_null(file);
  for (int i = 0; i < n; i++) {
    assert_true(t[i].tuned);
    assert_int_equal(t[i].kernels, 1);
    assert_true(t[i].candidates_timed >= 3); /* the default and at least two others */
    assert_true(t[i].default_us > 0 && t[i].chosen_us > 0);
    assert_true(t[i].chosen_us <= t[i].default_us);
    char line[300];
    snprintf(line, sizeof line, "\n%d %d %s\n", t[i].a, t[i].b, t[i].key);
    if (!strstr(file, line)) fail_msg("the tuning file lacks '%s':\n%s", line + 1, file);
  }
  free(file);
  /* the report's keys belong to the executable: copies for later */
  char keys[3][256];
  int choice[3][2];
  for (int i = 0; i < n; i++) {
    snprintf(keys[i], sizeof keys[i], "%s", t[i].key);
    choice[i][0] = t[i].a;
    choice[i][1] = t[i].b;
  }
  free(t);
  assert_same_results(ctx, exe, program);
  vkhlo_executable_destroy(exe);
  destroy_context(ctx);

  /* a new context on the same directory takes the choices without timing */
  ctx = context_on(dir);
  exe = compile(ctx, program, false, false, NULL);
  int n2;
  vkhlo_kernel_tuning_t *t2 = report(exe, &n2);
  assert_int_equal(n2, n);
  for (int i = 0; i < n2; i++) {
    assert_true(t2[i].tuned);
    assert_int_equal(t2[i].candidates_timed, 0);
    int same = 0;
    for (int j = 0; j < n; j++)
      same += strcmp(keys[j], t2[i].key) == 0 && choice[j][0] == t2[i].a && choice[j][1] == t2[i].b;
    assert_int_equal(same, 1);
  }
  free(t2);
  vkhlo_executable_destroy(exe);
  /* tune times nothing already recorded; retune times everything again */
  exe = compile(ctx, program, true, false, NULL);
  t2 = report(exe, &n2);
  for (int i = 0; i < n2; i++) assert_int_equal(t2[i].candidates_timed, 0);
  free(t2);
  vkhlo_executable_destroy(exe);
  /* a line another process added since this context read the file stays */
  FILE *f = fopen(path, "a");
  assert_non_null(f);
  fputs("4 4 gemm_cpu b=1 m=3 n=5 k=7 ndot=1 w=00\n", f);
  fclose(f);
  exe = compile(ctx, program, false, true, NULL);
  t2 = report(exe, &n2);
  assert_int_equal(n2, 3);
  for (int i = 0; i < n2; i++) assert_true(t2[i].tuned && t2[i].candidates_timed >= 3);
  free(t2);
  vkhlo_executable_destroy(exe);
  file = test_read_file(path, &size);
  assert_non_null(file);
  assert_non_null(strstr(file, "\n4 4 gemm_cpu b=1 m=3 n=5 k=7 ndot=1 w=00\n"));
  free(file);
  destroy_context(ctx);
  test_remove_dir(dir);
}

static const char one_gemm[] =
    "func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {\n"
    "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
    " : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  return %0 : tensor<64x64xf32>\n}\n";

static void tuning_file_choice_reaches_the_kernel(void **state) {
  (void)state;
  char dir[] = "/tmp/vkhlo_tune_testXXXXXX", dump[] = "/tmp/vkhlo_tune_dumpXXXXXX";
  assert_non_null(mkdtemp(dir));
  assert_non_null(mkdtemp(dump));
  vkhlo_context_t *ctx = cpu_context(dir, dir, dump);
  vkhlo_executable_t *exe = compile(ctx, one_gemm, true, false, NULL);
  int n;
  vkhlo_kernel_tuning_t *t = report(exe, &n);
  assert_int_equal(n, 1);
  char key[256];
  snprintf(key, sizeof key, "%s", t[0].key);
  free(t);
  vkhlo_executable_destroy(exe);
  destroy_context(ctx);
  /* 8 rows per invocation (the default takes 16 for one 64-row product);
   * malformed lines are skipped */
  char path[1024];
  assert_true(tuning_file(dir, path, sizeof path));
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "# edited by e2e_tune\nnot a choice\n-1 8 %s-negative\n8 8 %s\n", key, key);
  fclose(f);
  ctx = context_on(dir);
  exe = compile(ctx, one_gemm, false, false, dump);
  t = report(exe, &n);
  assert_int_equal(n, 1);
  assert_true(t[0].tuned);
  assert_int_equal(t[0].a, 8);
  assert_int_equal(t[0].b, 8);
  assert_true(test_dump_contains(dump, "#define TM 8\n"));
  free(t);
  assert_same_results(ctx, exe, one_gemm);
  vkhlo_executable_destroy(exe);
  destroy_context(ctx);
  test_remove_dir(dump);
  test_remove_dir(dir);
}

static void tuning_with_the_cache_off(void **state) {
  (void)state;
  vkhlo_context_t *ctx = cpu_context("off", NULL, NULL);
  vkhlo_executable_t *exe = compile(ctx, one_gemm, true, false, NULL);
  int n;
  vkhlo_kernel_tuning_t *t = report(exe, &n);
  assert_int_equal(n, 1);
  assert_true(t[0].tuned && t[0].candidates_timed >= 3);
  free(t);
  vkhlo_executable_destroy(exe);
  /* the context keeps the choice */
  exe = compile(ctx, one_gemm, false, false, NULL);
  t = report(exe, &n);
  assert_int_equal(n, 1);
  assert_true(t[0].tuned);
  assert_int_equal(t[0].candidates_timed, 0);
  free(t);
  vkhlo_executable_destroy(exe);
  destroy_context(ctx);
}

/* A loop that ends for n > 0 and never for n = 0, next to a GEMM. */
static const char loops_on_zero[] =
    "func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %n: tensor<i32>)\n"
    "    -> (tensor<64x64xf32>, tensor<i32>) {\n"
    "  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0]"
    " : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %w = stablehlo.while(%i = %c0) : tensor<i32>\n"
    "    cond {\n"
    "      %p = stablehlo.compare LE, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "      stablehlo.return %p : tensor<i1>\n"
    "    } do {\n"
    "      %j = stablehlo.add %i, %n : tensor<i32>\n"
    "      stablehlo.return %j : tensor<i32>\n"
    "    }\n"
    "  return %0, %w : tensor<64x64xf32>, tensor<i32>\n}\n";

static void untunable_program_fails_clearly(void **state) {
  (void)state;
  vkhlo_context_t *ctx = cpu_context("off", NULL, NULL); /* on GPUs nothing would run */
  setenv("VKHLO_MAX_LOOP_ITERATIONS", "1000", 1);
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.tune = true;
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, loops_on_zero, strlen(loops_on_zero), "loop.mlir", &o, &exe);
  unsetenv("VKHLO_MAX_LOOP_ITERATIONS");
  assert_non_null(st);
  assert_null(exe);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_DEADLINE_EXCEEDED);
  if (!strstr(vkhlo_status_message(st), "tuning loop.mlir: running the program on zero-filled arguments"))
    fail_msg("unexpected message: %s", vkhlo_status_message(st));
  vkhlo_status_free(st);
  /* without tuning it compiles (and runs for n > 0) */
  exe = compile(ctx, loops_on_zero, false, false, NULL);
  vkhlo_executable_destroy(exe);
  destroy_context(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(tune_times_records_and_reuses),
      cmocka_unit_test(tuning_file_choice_reaches_the_kernel),
      cmocka_unit_test(tuning_with_the_cache_off),
      cmocka_unit_test(untunable_program_fails_clearly),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
