/*
 * Accuracy of the float special functions computed in float on the device,
 * against the C library's double-precision ones rounded to float: chlo.erf
 * (shaders/float.glsl's vk_erff) on 2^20 + 1 inputs spread over the float
 * bit patterns of [0, 5] and their negatives, at most 2 ulp (the fit is 1.2
 * ulp with a correctly rounded exp; the device's exp adds a little), plus
 * the exact cases: signed zeros, +-1 from 4 on and at infinity, NaN.  With
 * the validation layer on.
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

#define SWEEP (1 << 19)                /* inputs per sign */
#define SPECIALS 8
#define COUNT (2 * SWEEP + SPECIALS)

static float from_bits(uint32_t b) {
  float f;
  memcpy(&f, &b, sizeof f);
  return f;
}

static uint32_t bits_of(float f) {
  uint32_t b;
  memcpy(&b, &f, sizeof b);
  return b;
}

/* |got| - |want| in units of the float spacing at |want|. */
static double ulps(float got, double want) {
  float w = (float)want;
  double spacing = w == 0 ? 1.4e-45 : (double)nextafterf(fabsf(w), INFINITY) - fabs((double)w);
  return fabs((double)got - want) / spacing;
}

static void erf_f32_within_2_ulp(void **state) {
  vkhlo_context_t *ctx = *state;
  char text[512];
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {\n"
           "  %%y = chlo.erf %%x : tensor<%dxf32> -> tensor<%dxf32>\n"
           "  return %%y : tensor<%dxf32>\n}\n",
           COUNT, COUNT, COUNT, COUNT, COUNT);
  float *x = malloc(sizeof(float) * COUNT), *y = malloc(sizeof(float) * COUNT);
  assert_non_null(x);
  assert_non_null(y);
  /* bit patterns from 0 to 5.0f in equal steps: every binade down to the
   * denormals, densest where the values are */
  uint32_t top = bits_of(5.0f);
  for (int i = 0; i < SWEEP; i++) {
    x[i] = from_bits((uint32_t)((uint64_t)top * (uint64_t)i / (SWEEP - 1)));
    x[SWEEP + i] = -x[i];
  }
  const float specials[SPECIALS] = {0.0f, -0.0f, 4.0f, -4.0f, INFINITY, -INFINITY, NAN, 1.0f};
  memcpy(x + 2 * SWEEP, specials, sizeof specials);
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {VKHLO_F32, 1, {COUNT}};
  vkhlo_buffer_t *in = NULL, *out = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &in));
  expect_ok(vkhlo_executable_execute(exe, 1, &in, 1, &out));
  expect_ok(vkhlo_buffer_read(out, y, sizeof(float) * COUNT));
  double worst = 0;
  int at = 0;
  for (int i = 0; i < 2 * SWEEP; i++) {
    double e = ulps(y[i], erf((double)x[i]));
    if (e > worst) worst = e, at = i;
  }
  printf("erf f32: max error %.3f ulp at x = %.9g (%.9g, want %.9g)\n", worst, (double)x[at], (double)y[at],
         erf((double)x[at]));
  if (worst > 2.0) fail_msg("erf is %.3f ulp off at x = %.9g", worst, (double)x[at]);
  const float *s = y + 2 * SWEEP;
  assert_true(s[0] == 0.0f && !signbit(s[0]));
  assert_true(s[1] == 0.0f && signbit(s[1]));
  assert_true(s[2] == 1.0f && s[3] == -1.0f && s[4] == 1.0f && s[5] == -1.0f);
  assert_true(isnan(s[6]));
  assert_true(ulps(s[7], erf(1.0)) <= 2.0);
  vkhlo_buffer_destroy(in);
  vkhlo_buffer_destroy(out);
  vkhlo_executable_destroy(exe);
  free(x);
  free(y);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(erf_f32_within_2_ulp),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
