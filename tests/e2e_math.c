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
#include <stdbool.h>
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

/* StableHLO's float functions against the C library's double ones rounded
 * to float.  On CPU devices with doubles most are evaluated through double
 * and rounded once (elemental.c math_via_double), so they are correctly
 * rounded there: the bound is half an ulp.  exp, logistic and tanh (every
 * element of softmax, SiLU, GELU) and every function on GPUs are the
 * device's float instructions, held to 1e-5 relative (expect_close's f32
 * tolerance; lavapipe's exp is up to 63 ulps, 4e-6, off near |x| = 80),
 * away from the zeros of sin, cos and tan, where GLSL's have only an
 * absolute error bound.  Inputs: 2^16 per function over its interesting
 * range, plus the edges. */
enum { FN_N = 1 << 16 };

typedef struct {
  const char *op; /* stablehlo op (two operands when |binary|) */
  bool binary;
  bool cpu_exact; /* through double on CPU devices: correctly rounded there */
  double lo, hi, lo2, hi2; /* uniform ranges of the operands */
  double (*ref)(double, double);
} float_fn_t;

static double ref_sin(double x, double y) { (void)y; return sin(x); }
static double ref_cos(double x, double y) { (void)y; return cos(x); }
static double ref_tan(double x, double y) { (void)y; return tan(x); }
static double ref_exp(double x, double y) { (void)y; return exp(x); }
static double ref_expm1(double x, double y) { (void)y; return expm1(x); }
static double ref_log(double x, double y) { (void)y; return log(x); }
static double ref_log1p(double x, double y) { (void)y; return log1p(x); }
static double ref_logistic(double x, double y) { (void)y; return 1.0 / (1.0 + exp(-x)); }
static double ref_tanh(double x, double y) { (void)y; return tanh(x); }
static double ref_cbrt(double x, double y) { (void)y; return cbrt(x); }
static double ref_pow(double x, double y) { return pow(x, y); }
static double ref_atan2(double x, double y) { return atan2(x, y); }

static const float_fn_t float_fns[] = {
    {"sine", false, true, -100, 100, 0, 0, ref_sin},
    {"cosine", false, true, -100, 100, 0, 0, ref_cos},
    {"tan", false, true, -10, 10, 0, 0, ref_tan},
    {"exponential", false, false, -104, 89, 0, 0, ref_exp},
    {"exponential_minus_one", false, true, -20, 89, 0, 0, ref_expm1},
    {"log", false, true, 0, 4, 0, 0, ref_log},
    {"log_plus_one", false, true, -1, 4, 0, 0, ref_log1p},
    {"logistic", false, false, -100, 100, 0, 0, ref_logistic},
    {"tanh", false, false, -20, 20, 0, 0, ref_tanh},
    {"cbrt", false, true, -1000, 1000, 0, 0, ref_cbrt},
    {"power", true, true, 0, 10, -10, 10, ref_pow},
    {"atan2", true, true, -10, 10, -10, 10, ref_atan2},
};

/* sin, cos and tan within 1e-3 of a zero: only an absolute bound on GPUs */
static bool near_zero_of(const char *op, double want) {
  return (!strcmp(op, "sine") || !strcmp(op, "cosine") || !strcmp(op, "tan")) && fabs(want) < 1e-3;
}

static void float_functions_round_well(void **state) {
  vkhlo_context_t *ctx = *state;
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  bool cpu = !strcmp(dev.type, "cpu");
  float *x = malloc(sizeof(float) * FN_N), *y = malloc(sizeof(float) * FN_N), *z = malloc(sizeof(float) * FN_N);
  assert_true(x && y && z);
  int failures = 0;
  for (size_t f = 0; f < sizeof float_fns / sizeof float_fns[0]; f++) {
    const float_fn_t *fn = &float_fns[f];
    bool exact = cpu && fn->cpu_exact;
    uint32_t seed = 777 + (uint32_t)f;
    for (int i = 0; i < FN_N; i++) {
      x[i] = (float)(fn->lo + (fn->hi - fn->lo) * (test_uniform(&seed) * 0.5 + 0.5));
      y[i] = (float)(fn->lo2 + (fn->hi2 - fn->lo2) * (test_uniform(&seed) * 0.5 + 0.5));
    }
    /* the edges: overflow and underflow of exp, log near 1, tiny values */
    static const float edges[] = {88.7228317f, 88.7228394f, -87.336f, -103.2f, -103.9f,
                                  0.99991f, 1.00007f, 1e-30f, -1e-30f, 0.0f, -0.0f, 1.0f};
    for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++) {
      if (edges[e] < fn->lo || edges[e] > fn->hi) continue;
      x[e] = edges[e];
    }
    char text[1024];
    if (fn->binary)
      snprintf(text, sizeof text,
               "func.func @main(%%x: tensor<%dxf32>, %%y: tensor<%dxf32>) -> tensor<%dxf32> {\n"
               "  %%z = stablehlo.%s %%x, %%y : tensor<%dxf32>\n  return %%z : tensor<%dxf32>\n}\n",
               FN_N, FN_N, FN_N, fn->op, FN_N, FN_N);
    else
      snprintf(text, sizeof text,
               "func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {\n"
               "  %%z = stablehlo.%s %%x : tensor<%dxf32>\n  return %%z : tensor<%dxf32>\n}\n",
               FN_N, FN_N, fn->op, FN_N, FN_N);
    vkhlo_executable_t *exe = test_compile(ctx, text);
    vkhlo_tensor_type_t t = {VKHLO_F32, 1, {FN_N}};
    vkhlo_buffer_t *in[2] = {NULL, NULL}, *out = NULL;
    expect_ok(vkhlo_buffer_create(ctx, &t, x, &in[0]));
    expect_ok(vkhlo_buffer_create(ctx, &t, y, &in[1]));
    expect_ok(vkhlo_executable_execute(exe, fn->binary ? 2 : 1, in, 1, &out));
    expect_ok(vkhlo_buffer_read(out, z, sizeof(float) * FN_N));
    double worst = 0, worst_rel = 0;
    int at = 0, rounded = 0, counted = 0;
    for (int i = 0; i < FN_N; i++) {
      double want = fn->ref(x[i], y[i]);
      if (isnan(want) || isinf((float)want)) {
        if (isnan(want) ? !isnan(z[i]) : z[i] != (float)want) {
          worst = worst_rel = INFINITY;
          at = i;
        }
        continue;
      }
      if (!exact && near_zero_of(fn->op, want)) continue;
      double e = ulps(z[i], want);
      double rel = want != 0 ? fabs(z[i] - want) / fabs(want) : fabs((double)z[i]);
      if (fabs(want) < 1.2e-38) rel = 0; /* subnormal results: ulps only */
      counted++;
      rounded += z[i] == (float)want;
      if (exact ? e > worst : rel > worst_rel) at = i;
      if (e > worst) worst = e;
      if (rel > worst_rel) worst_rel = rel;
    }
    printf("%-22s max %.3f ulp, %.2g relative (bound %s), %.1f%% correctly rounded, worst at x = %.9g%s%.9g: %.9g, want %.9g\n",
           fn->op, worst, worst_rel, exact ? "0.5 ulp" : "1e-5 relative", 100.0 * rounded / (counted ? counted : 1),
           (double)x[at], fn->binary ? ", y = " : "", fn->binary ? (double)y[at] : 0.0, (double)z[at],
           fn->ref(x[at], y[at]));
    if (exact ? worst > 0.5 + 1e-3 : worst_rel > 1e-5) failures++;
    vkhlo_buffer_destroy(in[0]);
    vkhlo_buffer_destroy(in[1]);
    vkhlo_buffer_destroy(out);
    vkhlo_executable_destroy(exe);
  }
  free(x);
  free(y);
  free(z);
  if (failures) fail_msg("%d functions beyond their bound", failures);
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
      cmocka_unit_test(float_functions_round_well),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
