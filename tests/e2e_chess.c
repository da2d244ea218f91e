/*
 * End-to-end: the searchless-chess 9M transformer from ../shared/models,
 * run through the public API with seeded random weights and a random
 * token batch.  Its result is a log_softmax over the last axis, so every
 * one of the 33x79 rows must satisfy |logsumexp(row)| <= 1e-4; two runs
 * must give bit-identical output; no validation message may appear.
 * Skips (and says so) when ../shared is absent.
 */
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

#define MODEL VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir"

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static void *run_model(vkhlo_context_t *ctx, vkhlo_executable_t *exe, size_t *out_size) {
  int np = vkhlo_executable_parameter_count(exe);
  vkhlo_buffer_t **args = calloc((size_t)np, sizeof *args);
  uint64_t state = 42;
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
    int64_t n = vkhlo_tensor_type_element_count(&t);
    void *data = malloc(vkhlo_tensor_type_size_bytes(&t) + 4);
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = splitmix64(&state);
      if (t.element_type == VKHLO_F32) {
        ((float *)data)[k] = (float)((double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0) * 0.5f;
      } else {
        assert_int_equal(t.element_type, VKHLO_S32);
        ((int32_t *)data)[k] = (int32_t)(r % 1968); /* token ids 0..1967 */
      }
    }
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &args[i]));
    free(data);
  }
  assert_int_equal(vkhlo_executable_result_count(exe), 1);
  vkhlo_buffer_t *result = NULL;
  expect_ok(vkhlo_executable_execute(exe, np, args, 1, &result));
  vkhlo_tensor_type_t rt;
  vkhlo_buffer_type(result, &rt);
  assert_int_equal(rt.element_type, VKHLO_F32);
  assert_int_equal(rt.rank, 3);
  assert_int_equal(rt.dimensions[0], 33);
  assert_int_equal(rt.dimensions[1], 79);
  assert_int_equal(rt.dimensions[2], 128);
  *out_size = vkhlo_tensor_type_size_bytes(&rt);
  void *out = malloc(*out_size);
  expect_ok(vkhlo_buffer_read(result, out, *out_size));
  vkhlo_buffer_destroy(result);
  for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args[i]);
  free(args);
  return out;
}

static void chess_rows_are_log_probabilities(void **state) {
  (void)state;
  size_t len = 0;
  char *text = test_read_file(MODEL, &len);
  if (!text) {
    printf("SKIPPED: %s not found (../shared is absent)\n", MODEL);
    skip();
  }
  vkhlo_context_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.enable_validation = true;
  vkhlo_context_t *ctx;
  expect_ok(vkhlo_context_create(&copts, &ctx));
  vkhlo_executable_t *exe;
  expect_ok(vkhlo_executable_compile(ctx, text, len, MODEL, NULL, &exe));
  free(text);
  size_t size1, size2;
  float *a = run_model(ctx, exe, &size1);
  float *b = run_model(ctx, exe, &size2);
  assert_int_equal(size1, size2);
  assert_memory_equal(a, b, size1);
  double worst = 0;
  for (int row = 0; row < 33 * 79; row++) {
    const float *x = a + row * 128;
    double m = -INFINITY;
    for (int k = 0; k < 128; k++) {
      assert_true(isfinite(x[k]));
      if (x[k] > m) m = x[k];
    }
    double s = 0;
    for (int k = 0; k < 128; k++) s += exp(x[k] - m);
    double lse = m + log(s);
    if (fabs(lse) > worst) worst = fabs(lse);
  }
  printf("chess-9M: max |logsumexp(row)| over 2607 rows = %.3g\n", worst);
  assert_true(worst <= 1e-4);
  free(a);
  free(b);
  vkhlo_executable_destroy(exe);
  assert_int_equal(vkhlo_context_validation_message_count(ctx), 0);
  vkhlo_context_destroy(ctx);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(chess_rows_are_log_probabilities),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
