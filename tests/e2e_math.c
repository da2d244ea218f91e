/*
 * Accuracy of the float special functions computed in float on the device,
 * against the C library's double-precision ones rounded to float: chlo.erf
 * (shaders/float.glsl's vk_erff) on 2^20 + 1 inputs spread over the float
 * bit patterns of [0, 5] and their negatives, at most 2 ulp (the fit is 1.2
 * ulp with a correctly rounded exp; the device's exp adds a little), plus
 * the exact cases: signed zeros, +-1 from 4 on and at infinity, NaN.  And
 * complex multiplication: each part one product rounded and the other fused
 * into it (vk_cmul), bit for bit against the C library's fmaf also where
 * the device splits fma (lavapipe: computed through double there).  With
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

/* xorshift32 in [-1, 1) */
static float unit_random(uint32_t *state) {
  uint32_t x = *state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  *state = x;
  return (float)((double)x / 2147483648.0 - 1.0);
}

/* (a + bi)(c + di) = (fma(a, c, -(b d)), fma(a, d, b c)), the form of
 * XLA's CPU backend that the conformance files' expectations hold.  The
 * operands are drawn so that the parts cancel (c + di near a multiple of
 * conj(a + bi) turned by 90 degrees, so ac ~ bd and ad ~ -bc): there
 * the two roundings of an unfused form show. */
static void complex_multiply_rounds_once(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { N = 4096 };
  static const char text[] =
      "func.func @main(%x: tensor<4096xcomplex<f32>>, %y: tensor<4096xcomplex<f32>>) -> tensor<4096xcomplex<f32>> {\n"
      "  %z = stablehlo.multiply %x, %y : tensor<4096xcomplex<f32>>\n"
      "  return %z : tensor<4096xcomplex<f32>>\n}\n";
  float *x = malloc(sizeof(float) * 2 * N), *y = malloc(sizeof(float) * 2 * N), *z = malloc(sizeof(float) * 2 * N);
  assert_true(x && y && z);
  uint32_t seed = 12345;
  for (int i = 0; i < N; i++) {
    float a = unit_random(&seed) * 1000.0f, b = unit_random(&seed) * 1000.0f;
    float s = unit_random(&seed) * 3.0f;
    x[2 * i] = a;
    x[2 * i + 1] = b;
    /* c ~ s b, d ~ s a: ac - bd ~ 0 and ad + bc ~ s (a^2 + b^2), perturbed */
    y[2 * i] = s * b * (1.0f + unit_random(&seed) * 1e-4f);
    y[2 * i + 1] = s * a * (1.0f + unit_random(&seed) * 1e-4f);
  }
  vkhlo_executable_t *exe = test_compile(ctx, text);
  vkhlo_tensor_type_t t = {VKHLO_C64, 1, {N}};
  vkhlo_buffer_t *in[2] = {NULL, NULL}, *out = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &in[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, y, &in[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, in, 1, &out));
  expect_ok(vkhlo_buffer_read(out, z, sizeof(float) * 2 * N));
  int unfused_differs = 0;
  for (int i = 0; i < N; i++) {
    float a = x[2 * i], b = x[2 * i + 1], c = y[2 * i], d = y[2 * i + 1];
    volatile float ac = a * c, bd = b * d, ad = a * d, bc = b * c; /* each rounded */
    float re = fmaf(a, c, -bd), im = fmaf(a, d, bc);
    unfused_differs += (ac - bd != re) + (ad + bc != im);
    if (bits_of(z[2 * i]) != bits_of(re) || bits_of(z[2 * i + 1]) != bits_of(im))
      fail_msg("element %d: (%.9g, %.9g) * (%.9g, %.9g) = (%.9g, %.9g), want (%.9g, %.9g)", i, (double)a, (double)b,
               (double)c, (double)d, (double)z[2 * i], (double)z[2 * i + 1], (double)re, (double)im);
  }
  /* the inputs do tell the forms apart */
  printf("complex multiply: %d of %d parts differ between the fused and the unfused form\n", unfused_differs, 2 * N);
  assert_true(unfused_differs > N / 4);
  vkhlo_buffer_destroy(in[0]);
  vkhlo_buffer_destroy(in[1]);
  vkhlo_buffer_destroy(out);
  vkhlo_executable_destroy(exe);
  free(x);
  free(y);
  free(z);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(erf_f32_within_2_ulp),
      cmocka_unit_test(complex_multiply_rounds_once),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
