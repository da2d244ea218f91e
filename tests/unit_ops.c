/*
 * The op tests: every self-checking program in tests/ops/ (the .mlir
 * files), split on `// -----` lines as the CLI and StableHLO's interpret tests do, compiled,
 * executed and required to pass every check, through the public API.
 *
 * Each file covers one op (or one family: collectives, dynamic shapes, the
 * small float types); the expected values in the files come from the spec's
 * examples, hand computation or published known-answer vectors, never from
 * vkhlo itself.  Every split runs twice: with the fusion pass and with one
 * kernel per instruction (no_fusion), so a fusion bug shows up as a
 * difference between the two runs.
 *
 * Adding a file: put it in tests/ops/ and its name in |op_files| below.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "vkhlo/vkhlo.h"
#include "tests/test_support.h"

static const char *const op_files[] = {
    "batch_norm.mlir",  "cholesky.mlir",        "collectives.mlir", "complex_ops.mlir",
    "composite.mlir",   "dynamic_shapes.mlir",  "f8.mlir",          "fft.mlir",
    "mulhi.mlir",       "rng_bit_generator.mlir", "triangular_solve.mlir", "probe.mlir",
    "control_flow.mlir", "chlo_special.mlir", "run_parallel.mlir", "dot_int.mlir",
    "multi_output_fusion.mlir", "reduce_precision.mlir", "quantized.mlir", "chlo_broadcasting.mlir",
    "top_k_calls.mlir", "sort.mlir",
};

static int setup(void **state) {
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return -1;
  }
  *state = ctx;
  return 0;
}

static int teardown(void **state) {
  vkhlo_context_destroy(*state);
  return 0;
}

/* Compiles and runs one split; returns the number of failures (printed). */
static int run_split(vkhlo_context_t *ctx, const char *name, const char *text, size_t length,
                     bool no_fusion) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, length, name, &o, &exe);
  if (st) {
    print_error("%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return 1;
  }
  int failures = 0;
  int nres = vkhlo_executable_result_count(exe);
  vkhlo_buffer_t **results = calloc((size_t)(nres > 0 ? nres : 1), sizeof *results);
  if (vkhlo_executable_parameter_count(exe) != 0 || !results) {
    print_error("%s: op tests take no parameters\n", name);
    failures++;
  } else if ((st = vkhlo_executable_execute(exe, 0, NULL, nres, results))) {
    print_error("%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    failures++;
  } else {
    int checks = vkhlo_executable_check_count(exe);
    if (checks == 0) {
      print_error("%s: a split without checks\n", name);
      failures++;
    }
    for (int i = 0; i < checks; i++) {
      vkhlo_check_result_t r;
      st = vkhlo_executable_check_result(exe, i, &r);
      if (st) {
        vkhlo_status_free(st);
        failures++;
      } else if (!r.executed || !r.passed) {
        print_error("%s: check.%s at %s failed%s: %s\n", name, r.kind, r.location,
                    no_fusion ? " (no fusion)" : "", r.detail);
        failures++;
      }
    }
    for (int i = 0; i < nres; i++) vkhlo_buffer_destroy(results[i]);
  }
  free(results);
  vkhlo_executable_destroy(exe);
  return failures;
}

/* Runs every split of tests/ops/<file>.  Each split keeps its line numbers
 * (the text before it is replaced by newlines), so messages point into
 * the file. */
static void run_file(void **state, const char *file) {
  vkhlo_context_t *ctx = *state;
  char path[1024];
  snprintf(path, sizeof path, "%s/tests/ops/%s", VKHLO_SOURCE_DIR, file);
  size_t size;
  char *text = test_read_file(path, &size);
  if (!text) fail_msg("cannot read %s", path);
  char *split = malloc(size + 1);
  if (!split) {
    free(text);
    fail_msg("out of memory");
  }
  int failures = 0, splits = 0;
  size_t start = 0;
  int lines_before = 0;
  while (start <= size) {
    /* the split ends at the next line that starts with "// -----" */
    size_t end = start;
    int lines = 0;
    for (;;) {
      if (end >= size) break;
      if ((end == 0 || text[end - 1] == '\n') && strncmp(text + end, "// -----", 8) == 0) break;
      if (text[end] == '\n') lines++;
      end++;
    }
    memset(split, '\n', (size_t)lines_before);
    memcpy(split + lines_before, text + start, end - start);
    size_t length = (size_t)lines_before + (end - start);
    split[length] = 0;
    if (strstr(split, "func.func")) {
      splits++;
      failures += run_split(ctx, path, split, length, false);
      failures += run_split(ctx, path, split, length, true);
    }
    if (end >= size) break;
    /* skip the separator line */
    lines_before += lines;
    while (end < size && text[end] != '\n') end++;
    if (end < size) {
      end++;
      lines_before++;
    }
    start = end;
  }
  free(split);
  free(text);
  if (splits == 0) fail_msg("%s has no programs", file);
  if (failures) fail_msg("%s: %d failures in %d splits", file, failures, splits);
}

#define OP_TEST(fn, index) \
  static void fn(void **state) { run_file(state, op_files[index]); }
OP_TEST(test_batch_norm, 0)
OP_TEST(test_cholesky, 1)
OP_TEST(test_collectives, 2)
OP_TEST(test_complex_ops, 3)
OP_TEST(test_composite, 4)
OP_TEST(test_dynamic_shapes, 5)
OP_TEST(test_f8, 6)
OP_TEST(test_fft, 7)
OP_TEST(test_mulhi, 8)
OP_TEST(test_rng_bit_generator, 9)
OP_TEST(test_triangular_solve, 10)
OP_TEST(test_probe, 11)
OP_TEST(test_control_flow, 12)
OP_TEST(test_chlo_special, 13)
OP_TEST(test_run_parallel, 14)
OP_TEST(test_dot_int, 15)
OP_TEST(test_multi_output_fusion, 16)
OP_TEST(test_reduce_precision, 17)
OP_TEST(test_quantized, 18)
OP_TEST(test_chlo_broadcasting, 19)
OP_TEST(test_top_k_calls, 20)
OP_TEST(test_sort, 21)
#undef OP_TEST

int main(void) {
  _Static_assert(sizeof op_files / sizeof op_files[0] == 22, "one test per file in op_files");
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch_norm),     cmocka_unit_test(test_cholesky),
      cmocka_unit_test(test_collectives),    cmocka_unit_test(test_complex_ops),
      cmocka_unit_test(test_composite),      cmocka_unit_test(test_dynamic_shapes),
      cmocka_unit_test(test_f8),             cmocka_unit_test(test_fft),
      cmocka_unit_test(test_mulhi),          cmocka_unit_test(test_rng_bit_generator),
      cmocka_unit_test(test_triangular_solve), cmocka_unit_test(test_probe),
      cmocka_unit_test(test_control_flow),   cmocka_unit_test(test_chlo_special),
      cmocka_unit_test(test_run_parallel),   cmocka_unit_test(test_dot_int),
      cmocka_unit_test(test_multi_output_fusion), cmocka_unit_test(test_reduce_precision),
      cmocka_unit_test(test_quantized),      cmocka_unit_test(test_chlo_broadcasting),
      cmocka_unit_test(test_top_k_calls),    cmocka_unit_test(test_sort),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
