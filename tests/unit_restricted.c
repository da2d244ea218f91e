/*
 * Restricted devices (no shaderInt64, no 8/16-bit storage, no f64): the
 * emulated forms of glsl_types.h run the same programs as the native ones.
 *
 * Every test compiles and runs a small program twice, on a native context
 * and on a restricted one (vkhlo_context_options_t.restricted), and compares
 * both against expected values computed here in C with XLA's semantics:
 *   - i64/ui64 arithmetic at the edges: overflow, x / 0, INT64_MIN / -1,
 *     x % 0, shifts by 63/64/100 and negative amounts, pow, clz, popcnt;
 *   - conversions f32 <-> i64/ui64 at the saturation edges (NaN, +-inf,
 *     2^63, 2^64) and i64 -> f32 rounding to nearest even;
 *   - i1/i8/ui8/i16/f16/bf16 results written by neighbouring invocations
 *     (the packed stores of the restricted mode share 32-bit words);
 *   - sort with i64 keys carrying i8 values, scatter with i64 indices and
 *     updates, dynamic_slice with an i64 start, dot_general and reduce in
 *     i64, iota in i64;
 *   - f64 on a restricted device fails with a clear UNIMPLEMENTED unless
 *     VKHLO_DEMOTE_F64=1, which computes it as f32;
 *   - every f16 <-> f32 conversion edge, natively and in integer code
 *     (VKHLO_F16_SOFT=1, the f16 quirk of lavapipe on aarch64).
 * The validation layer is on throughout and must stay silent.
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

#include "vkhlo/vkhlo.h"

typedef struct fixture {
  vkhlo_context_t *ctx[2]; /* [0] native, [1] restricted */
} fixture_t;

static const char *const mode_name[2] = {"native", "restricted"};

static vkhlo_context_t *make_context(bool restricted) {
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.enable_validation = true;
  o.restricted = restricted;
  vkhlo_context_t *ctx = NULL;
  vkhlo_status_t st = vkhlo_context_create(&o, &ctx);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return NULL;
  }
  return ctx;
}

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  if (!f) return -1;
  for (int m = 0; m < 2; m++)
    if (!(f->ctx[m] = make_context(m == 1))) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  int messages = 0;
  for (int m = 0; m < 2; m++) {
    if (!f->ctx[m]) continue;
    messages += vkhlo_context_validation_message_count(f->ctx[m]);
    vkhlo_context_destroy(f->ctx[m]);
  }
  free(f);
  return messages == 0 ? 0 : -1;
}

static void expect_ok(vkhlo_status_t st, const char *what, int mode) {
  if (st) fail_msg("%s (%s): %s", what, mode_name[mode], vkhlo_status_message(st));
}

/* Compiles |text| on context |mode|, runs it on |args| (host data in the
 * parameter types) and reads every result into |results|. */
static void run(fixture_t *f, int mode, const char *text, int nargs, const void *const *args,
                int nres, void *const *results) {
  vkhlo_context_t *ctx = f->ctx[mode];
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "restricted.mlir", NULL, &exe),
            "compile", mode);
  assert_int_equal(vkhlo_executable_parameter_count(exe), nargs);
  assert_int_equal(vkhlo_executable_result_count(exe), nres);
  vkhlo_buffer_t *in[8], *out[16];
  for (int i = 0; i < nargs; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t), "parameter type", mode);
    expect_ok(vkhlo_buffer_create(ctx, &t, args[i], &in[i]), "buffer", mode);
  }
  expect_ok(vkhlo_executable_execute(exe, nargs, in, nres, out), "execute", mode);
  for (int r = 0; r < nres; r++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_result_type(exe, r, &t), "result type", mode);
    expect_ok(vkhlo_buffer_read(out[r], results[r], vkhlo_tensor_type_size_bytes(&t)), "read",
              mode);
    vkhlo_buffer_destroy(out[r]);
  }
  for (int i = 0; i < nargs; i++) vkhlo_buffer_destroy(in[i]);
  vkhlo_executable_destroy(exe);
}

static void check_i64(const char *what, int mode, const int64_t *got, const int64_t *want, int n,
                      const int64_t *a, const int64_t *b) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i])
      fail_msg("%s (%s) [%d]: a=%lld b=%lld: got %lld (0x%llx), want %lld (0x%llx)", what,
               mode_name[mode], i, (long long)a[i], b ? (long long)b[i] : 0LL, (long long)got[i],
               (unsigned long long)got[i], (long long)want[i], (unsigned long long)want[i]);
}

/* ------------------------------------------------ XLA reference semantics */

static int64_t wrap_mul(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
static int64_t ref_div(int64_t a, int64_t b) {
  if (b == 0) return -1;
  if (a == INT64_MIN && b == -1) return INT64_MIN;
  return a / b;
}
static int64_t ref_rem(int64_t a, int64_t b) {
  if (b == 0) return a;
  if (b == -1) return 0;
  return a % b;
}
static uint64_t ref_udiv(uint64_t a, uint64_t b) { return b ? a / b : UINT64_MAX; }
static uint64_t ref_urem(uint64_t a, uint64_t b) { return b ? a % b : a; }
static int64_t ref_shl(int64_t a, int64_t b) {
  return (uint64_t)b >= 64 ? 0 : (int64_t)((uint64_t)a << b);
}
static int64_t ref_shra(int64_t a, int64_t b) {
  if ((uint64_t)b >= 64) return a < 0 ? -1 : 0;
  return a < 0 ? ~(~a >> b) : a >> b;
}
static int64_t ref_shrl(int64_t a, int64_t b) {
  return (uint64_t)b >= 64 ? 0 : (int64_t)((uint64_t)a >> b);
}
static int64_t ref_pow(int64_t a, int64_t b) {
  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  uint64_t r = 1, x = (uint64_t)a, e = (uint64_t)b;
  while (e) {
    if (e & 1) r *= x;
    x *= x;
    e >>= 1;
  }
  return (int64_t)r;
}
static int64_t ref_clz(int64_t a) { return a ? __builtin_clzll((uint64_t)a) : 64; }
static int64_t ref_sign(int64_t a) { return a > 0 ? 1 : a < 0 ? -1 : 0; }
static int64_t ref_f32_to_i64(float x) {
  if (isnan(x)) return 0;
  if (x >= 9223372036854775808.0f) return INT64_MAX;
  if (x <= -9223372036854775808.0f) return INT64_MIN;
  return (int64_t)x;
}
static uint64_t ref_f32_to_u64(float x) {
  if (isnan(x) || x <= 0.0f) return 0;
  if (x >= 18446744073709551616.0f) return UINT64_MAX;
  return (uint64_t)x;
}

static const int64_t edge64[] = {
    0, 1, -1, 2, -7, 63, 64, 100, INT64_MAX, INT64_MIN, 0xFFFFFFFFll, 0x100000000ll,
    -0x100000000ll, 0x123456789ABCDEF0ll, -0x0FEDCBA987654321ll, 3000000000ll,
};
#define NEDGE ((int)(sizeof edge64 / sizeof edge64[0]))
#define NPAIR (NEDGE * NEDGE)

/* ------------------------------------------------------------- i64 */

static const char i64_binary_program[] =
    "func.func @main(%a: tensor<256xi64>, %b: tensor<256xi64>) -> (tensor<256xi64>, "
    "tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, "
    "tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, "
    "tensor<256xi1>, tensor<256xi1>, tensor<256xi64>) {\n"
    "  %0 = stablehlo.add %a, %b : tensor<256xi64>\n"
    "  %1 = stablehlo.subtract %a, %b : tensor<256xi64>\n"
    "  %2 = stablehlo.multiply %a, %b : tensor<256xi64>\n"
    "  %3 = stablehlo.divide %a, %b : tensor<256xi64>\n"
    "  %4 = stablehlo.remainder %a, %b : tensor<256xi64>\n"
    "  %5 = stablehlo.shift_left %a, %b : tensor<256xi64>\n"
    "  %6 = stablehlo.shift_right_arithmetic %a, %b : tensor<256xi64>\n"
    "  %7 = stablehlo.shift_right_logical %a, %b : tensor<256xi64>\n"
    "  %8 = stablehlo.maximum %a, %b : tensor<256xi64>\n"
    "  %9 = stablehlo.minimum %a, %b : tensor<256xi64>\n"
    "  %10 = stablehlo.power %a, %b : tensor<256xi64>\n"
    "  %11 = stablehlo.compare LT, %a, %b, SIGNED : (tensor<256xi64>, tensor<256xi64>) -> "
    "tensor<256xi1>\n"
    "  %12 = stablehlo.compare GE, %a, %b, SIGNED : (tensor<256xi64>, tensor<256xi64>) -> "
    "tensor<256xi1>\n"
    "  %13 = stablehlo.xor %a, %b : tensor<256xi64>\n"
    "  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13 : tensor<256xi64>, "
    "tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, "
    "tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, tensor<256xi64>, "
    "tensor<256xi1>, tensor<256xi1>, tensor<256xi64>\n"
    "}\n";

static void i64_binary_ops(void **state) {
  fixture_t *f = *state;
  int64_t a[NPAIR], b[NPAIR], want[11][NPAIR], got[12][NPAIR];
  uint8_t lt[NPAIR], ge[NPAIR];
  for (int i = 0; i < NEDGE; i++)
    for (int j = 0; j < NEDGE; j++) {
      int k = i * NEDGE + j;
      a[k] = edge64[i];
      b[k] = edge64[j];
      want[0][k] = (int64_t)((uint64_t)a[k] + (uint64_t)b[k]);
      want[1][k] = (int64_t)((uint64_t)a[k] - (uint64_t)b[k]);
      want[2][k] = wrap_mul(a[k], b[k]);
      want[3][k] = ref_div(a[k], b[k]);
      want[4][k] = ref_rem(a[k], b[k]);
      want[5][k] = ref_shl(a[k], b[k]);
      want[6][k] = ref_shra(a[k], b[k]);
      want[7][k] = ref_shrl(a[k], b[k]);
      want[8][k] = a[k] > b[k] ? a[k] : b[k];
      want[9][k] = a[k] < b[k] ? a[k] : b[k];
      want[10][k] = ref_pow(a[k], b[k]);
    }
  static const char *names[] = {"add", "subtract", "multiply", "divide", "remainder",
                                "shift_left", "shift_right_arithmetic", "shift_right_logical",
                                "maximum", "minimum", "power"};
  for (int m = 0; m < 2; m++) {
    const void *args[] = {a, b};
    void *res[14];
    for (int r = 0; r < 11; r++) res[r] = got[r];
    res[11] = lt;
    res[12] = ge;
    res[13] = got[11];
    run(f, m, i64_binary_program, 2, args, 14, res);
    for (int r = 0; r < 11; r++) check_i64(names[r], m, got[r], want[r], NPAIR, a, b);
    for (int k = 0; k < NPAIR; k++) {
      if (lt[k] != (a[k] < b[k]) || ge[k] != (a[k] >= b[k]))
        fail_msg("compare (%s) [%d]: %lld vs %lld: lt %d ge %d", mode_name[m], k,
                 (long long)a[k], (long long)b[k], lt[k], ge[k]);
      if (got[11][k] != (a[k] ^ b[k])) fail_msg("xor (%s) [%d]", mode_name[m], k);
    }
  }
}

static const char u64_binary_program[] =
    "func.func @main(%a: tensor<256xui64>, %b: tensor<256xui64>) -> (tensor<256xui64>, "
    "tensor<256xui64>, tensor<256xui64>, tensor<256xi1>, tensor<256xui64>) {\n"
    "  %0 = stablehlo.divide %a, %b : tensor<256xui64>\n"
    "  %1 = stablehlo.remainder %a, %b : tensor<256xui64>\n"
    "  %2 = stablehlo.maximum %a, %b : tensor<256xui64>\n"
    "  %3 = stablehlo.compare LT, %a, %b, UNSIGNED : (tensor<256xui64>, tensor<256xui64>) -> "
    "tensor<256xi1>\n"
    "  %4 = stablehlo.shift_right_arithmetic %a, %b : tensor<256xui64>\n"
    "  return %0, %1, %2, %3, %4 : tensor<256xui64>, tensor<256xui64>, tensor<256xui64>, "
    "tensor<256xi1>, tensor<256xui64>\n"
    "}\n";

static void u64_binary_ops(void **state) {
  fixture_t *f = *state;
  uint64_t a[NPAIR], b[NPAIR], got[4][NPAIR];
  uint8_t lt[NPAIR];
  for (int k = 0; k < NPAIR; k++) {
    a[k] = (uint64_t)edge64[k / NEDGE];
    b[k] = (uint64_t)edge64[k % NEDGE];
  }
  for (int m = 0; m < 2; m++) {
    const void *args[] = {a, b};
    void *res[] = {got[0], got[1], got[2], lt, got[3]};
    run(f, m, u64_binary_program, 2, args, 5, res);
    for (int k = 0; k < NPAIR; k++) {
      uint64_t x = a[k], y = b[k];
      uint64_t shra = (uint64_t)ref_shra((int64_t)x, (int64_t)y);
      if (got[0][k] != ref_udiv(x, y) || got[1][k] != ref_urem(x, y) ||
          got[2][k] != (x > y ? x : y) || lt[k] != (x < y) || got[3][k] != shra)
        fail_msg("ui64 (%s) [%d]: a=%llu b=%llu: div %llu rem %llu max %llu lt %d shra %llx",
                 mode_name[m], k, (unsigned long long)x, (unsigned long long)y,
                 (unsigned long long)got[0][k], (unsigned long long)got[1][k],
                 (unsigned long long)got[2][k], lt[k], (unsigned long long)got[3][k]);
    }
  }
}

static const int64_t unary64[24] = {
    0, 1, -1, INT64_MAX, INT64_MIN, 0xFFFFFFFFll, 0x100000000ll, -0x100000000ll,
    0x123456789ABCDEF0ll, -0x0FEDCBA987654321ll, (1ll << 24) + 1, (1ll << 53) + 1,
    (1ll << 40) + (1ll << 16) + 1, -((1ll << 60) + (1ll << 36) + 1), (1ll << 25) + 3,
    (1ll << 62) + (1ll << 38), 3000000000ll, -3000000000ll, 255, -129, 65537, 1ll << 63 >> 1,
    0x7FFFFF8000000000ll, 12345,
};

static const char i64_unary_program[] =
    "func.func @main(%a: tensor<24xi64>) -> (tensor<24xi64>, tensor<24xi64>, tensor<24xi64>, "
    "tensor<24xi64>, tensor<24xi64>, tensor<24xi64>, tensor<24xf32>, tensor<24xi32>, "
    "tensor<24xui8>, tensor<24xi1>, tensor<24xf32>) {\n"
    "  %0 = stablehlo.negate %a : tensor<24xi64>\n"
    "  %1 = stablehlo.abs %a : tensor<24xi64>\n"
    "  %2 = stablehlo.sign %a : tensor<24xi64>\n"
    "  %3 = stablehlo.popcnt %a : tensor<24xi64>\n"
    "  %4 = stablehlo.count_leading_zeros %a : tensor<24xi64>\n"
    "  %5 = stablehlo.not %a : tensor<24xi64>\n"
    "  %6 = stablehlo.convert %a : (tensor<24xi64>) -> tensor<24xf32>\n"
    "  %7 = stablehlo.convert %a : (tensor<24xi64>) -> tensor<24xi32>\n"
    "  %8 = stablehlo.convert %a : (tensor<24xi64>) -> tensor<24xui8>\n"
    "  %9 = stablehlo.convert %a : (tensor<24xi64>) -> tensor<24xi1>\n"
    "  %10 = stablehlo.bitcast_convert %a : (tensor<24xi64>) -> tensor<24x2xf32>\n"
    "  %11 = stablehlo.slice %10 [0:24, 1:2] : (tensor<24x2xf32>) -> tensor<24x1xf32>\n"
    "  %12 = stablehlo.reshape %11 : (tensor<24x1xf32>) -> tensor<24xf32>\n"
    "  return %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %12 : tensor<24xi64>, tensor<24xi64>, "
    "tensor<24xi64>, tensor<24xi64>, tensor<24xi64>, tensor<24xi64>, tensor<24xf32>, "
    "tensor<24xi32>, tensor<24xui8>, tensor<24xi1>, tensor<24xf32>\n"
    "}\n";

static void i64_unary_ops(void **state) {
  fixture_t *f = *state;
  int64_t got[6][24];
  float fl[24], hi[24];
  int32_t i32[24];
  uint8_t u8[24], pred[24];
  for (int m = 0; m < 2; m++) {
    const void *args[] = {unary64};
    void *res[] = {got[0], got[1], got[2], got[3], got[4], got[5], fl, i32, u8, pred, hi};
    run(f, m, i64_unary_program, 1, args, 11, res);
    for (int k = 0; k < 24; k++) {
      int64_t a = unary64[k];
      int64_t want[6] = {(int64_t)(0 - (uint64_t)a), a < 0 ? (int64_t)(0 - (uint64_t)a) : a,
                         ref_sign(a), __builtin_popcountll((uint64_t)a), ref_clz(a), ~a};
      for (int r = 0; r < 6; r++)
        if (got[r][k] != want[r])
          fail_msg("unary %d (%s) a=%lld: got %lld want %lld", r, mode_name[m], (long long)a,
                   (long long)got[r][k], (long long)want[r]);
      uint32_t hb = (uint32_t)((uint64_t)a >> 32), gb;
      memcpy(&gb, &hi[k], 4);
      if (fl[k] != (float)a || i32[k] != (int32_t)(uint32_t)a || u8[k] != (uint8_t)a ||
          pred[k] != (a != 0) || gb != hb)
        fail_msg("convert (%s) a=%lld: f32 %.9g (want %.9g) i32 %d ui8 %u i1 %u hi 0x%x", mode_name[m],
                 (long long)a, fl[k], (float)a, i32[k], u8[k], pred[k], gb);
    }
  }
}

static const char f32_to_64_program[] =
    "func.func @main(%x: tensor<22xf32>, %i: tensor<22xi32>) -> (tensor<22xi64>, "
    "tensor<22xui64>, tensor<22xi64>, tensor<22xui64>) {\n"
    "  %0 = stablehlo.convert %x : (tensor<22xf32>) -> tensor<22xi64>\n"
    "  %1 = stablehlo.convert %x : (tensor<22xf32>) -> tensor<22xui64>\n"
    "  %2 = stablehlo.convert %i : (tensor<22xi32>) -> tensor<22xi64>\n"
    "  %3 = stablehlo.convert %i : (tensor<22xi32>) -> tensor<22xui64>\n"
    "  return %0, %1, %2, %3 : tensor<22xi64>, tensor<22xui64>, tensor<22xi64>, tensor<22xui64>\n"
    "}\n";

static void f32_to_i64_saturates(void **state) {
  fixture_t *f = *state;
  float x[22] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0.5f, -0.5f, 1.5f, -1.5f, 2147483648.0f,
                 4294967808.0f, 9223372036854775808.0f, 9223371487098961920.0f,
                 -9223372036854775808.0f, -9223373136366403584.0f, 18446744073709551616.0f,
                 18446742974197923840.0f, 123456.78f, -98765.4f, 1e10f, -1e10f, 1e30f};
  int32_t i[22];
  for (int k = 0; k < 22; k++) i[k] = (int32_t)(k * 97531 - 1000000) * (k & 1 ? -1 : 1);
  i[0] = INT32_MIN;
  i[1] = INT32_MAX;
  int64_t s[22], si[22];
  uint64_t u[22], ui[22];
  for (int m = 0; m < 2; m++) {
    const void *args[] = {x, i};
    void *res[] = {s, u, si, ui};
    run(f, m, f32_to_64_program, 2, args, 4, res);
    for (int k = 0; k < 22; k++) {
      if (s[k] != ref_f32_to_i64(x[k]) || u[k] != ref_f32_to_u64(x[k]))
        fail_msg("f32 -> 64 (%s) x=%.9g: i64 %lld (want %lld) ui64 %llu (want %llu)",
                 mode_name[m], x[k], (long long)s[k], (long long)ref_f32_to_i64(x[k]),
                 (unsigned long long)u[k], (unsigned long long)ref_f32_to_u64(x[k]));
      if (si[k] != (int64_t)i[k] || ui[k] != (uint64_t)(int64_t)i[k])
        fail_msg("i32 -> 64 (%s) %d: %lld %llu", mode_name[m], i[k], (long long)si[k],
                 (unsigned long long)ui[k]);
    }
  }
}

/* ------------------------------------------------- packed narrow stores */

static uint16_t f16_bits_of_int(int v) { /* exact for |v| <= 2048 */
  if (v == 0) return 0;
  uint16_t sign = v < 0 ? 0x8000 : 0;
  unsigned a = (unsigned)(v < 0 ? -v : v);
  int e = 31 - __builtin_clz(a);
  unsigned man = (a << (10 - e)) & 0x3FF;
  return (uint16_t)(sign | ((unsigned)(e + 15) << 10) | man);
}

static uint16_t bf16_bits_of_int(int v) {
  float fv = (float)v;
  uint32_t b;
  memcpy(&b, &fv, 4);
  return (uint16_t)(b >> 16);
}

static const char narrow_program[] =
    "func.func @main(%x: tensor<37xi8>, %y: tensor<37xi16>, %h: tensor<37xf16>, "
    "%g: tensor<37xbf16>, %u: tensor<37xui8>, %r: tensor<5x7xi8>) -> (tensor<37xi8>, "
    "tensor<37xi16>, tensor<37xf16>, tensor<37xbf16>, tensor<37xui8>, tensor<37xi1>, "
    "tensor<5xi8>, tensor<7x5xi8>) {\n"
    "  %c3 = stablehlo.constant dense<3> : tensor<37xi8>\n"
    "  %0 = stablehlo.multiply %x, %c3 : tensor<37xi8>\n"
    "  %c5 = stablehlo.constant dense<-5> : tensor<37xi16>\n"
    "  %1 = stablehlo.multiply %y, %c5 : tensor<37xi16>\n"
    "  %2 = stablehlo.add %h, %h : tensor<37xf16>\n"
    "  %3 = stablehlo.add %g, %g : tensor<37xbf16>\n"
    "  %c200 = stablehlo.constant dense<200> : tensor<37xui8>\n"
    "  %4 = stablehlo.add %u, %c200 : tensor<37xui8>\n"
    "  %z = stablehlo.constant dense<0> : tensor<37xi8>\n"
    "  %5 = stablehlo.compare GT, %x, %z, SIGNED : (tensor<37xi8>, tensor<37xi8>) -> "
    "tensor<37xi1>\n"
    "  %z0 = stablehlo.constant dense<0> : tensor<i8>\n"
    "  %6 = stablehlo.reduce(%r init: %z0) applies stablehlo.add across dimensions = [1] : "
    "(tensor<5x7xi8>, tensor<i8>) -> tensor<5xi8>\n"
    "  %7 = stablehlo.transpose %r, dims = [1, 0] : (tensor<5x7xi8>) -> tensor<7x5xi8>\n"
    "  return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<37xi8>, tensor<37xi16>, tensor<37xf16>, "
    "tensor<37xbf16>, tensor<37xui8>, tensor<37xi1>, tensor<5xi8>, tensor<7x5xi8>\n"
    "}\n";

static void narrow_stores_from_neighbours(void **state) {
  fixture_t *f = *state;
  int8_t x[37], r[35];
  int16_t y[37];
  uint16_t h[37], g[37];
  uint8_t u[37];
  for (int k = 0; k < 37; k++) {
    x[k] = (int8_t)(k * 7 - 120);
    y[k] = (int16_t)(k * 1013 - 17000);
    h[k] = f16_bits_of_int(k * 50 - 900);
    g[k] = bf16_bits_of_int(k * 3 - 50);
    u[k] = (uint8_t)(k * 9);
  }
  for (int k = 0; k < 35; k++) r[k] = (int8_t)(k * 29 - 100);
  for (int m = 0; m < 2; m++) {
    int8_t ox[37], ored[5], otr[35];
    int16_t oy[37];
    uint16_t oh[37], og[37];
    uint8_t ou[37], op[37];
    const void *args[] = {x, y, h, g, u, r};
    void *res[] = {ox, oy, oh, og, ou, op, ored, otr};
    run(f, m, narrow_program, 6, args, 8, res);
    for (int k = 0; k < 37; k++) {
      if (ox[k] != (int8_t)(x[k] * 3) || oy[k] != (int16_t)(y[k] * -5) ||
          oh[k] != f16_bits_of_int(2 * (k * 50 - 900)) ||
          og[k] != bf16_bits_of_int(2 * (k * 3 - 50)) || ou[k] != (uint8_t)(u[k] + 200) ||
          op[k] != (x[k] > 0))
        fail_msg("narrow (%s) [%d]: i8 %d i16 %d f16 0x%x bf16 0x%x ui8 %u i1 %u", mode_name[m],
                 k, ox[k], oy[k], oh[k], og[k], ou[k], op[k]);
    }
    for (int i = 0; i < 5; i++) {
      int s = 0;
      for (int j = 0; j < 7; j++) s += r[i * 7 + j];
      if (ored[i] != (int8_t)s) fail_msg("reduce i8 (%s) [%d]: %d want %d", mode_name[m], i, ored[i], (int8_t)s);
      for (int j = 0; j < 7; j++)
        if (otr[j * 5 + i] != r[i * 7 + j]) fail_msg("transpose i8 (%s)", mode_name[m]);
    }
  }
}

/* ------------------------------------------ sort / scatter / indices */

static const char sort_program[] =
    "func.func @main(%k: tensor<16xi64>, %v: tensor<16xi8>) -> (tensor<16xi64>, tensor<16xi8>) {\n"
    "  %s:2 = \"stablehlo.sort\"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({\n"
    "  ^bb0(%a0: tensor<i64>, %a1: tensor<i64>, %b0: tensor<i8>, %b1: tensor<i8>):\n"
    "    %c = stablehlo.compare LT, %a0, %a1, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
    "    stablehlo.return %c : tensor<i1>\n"
    "  }) : (tensor<16xi64>, tensor<16xi8>) -> (tensor<16xi64>, tensor<16xi8>)\n"
    "  return %s#0, %s#1 : tensor<16xi64>, tensor<16xi8>\n"
    "}\n";

static void sort_i64_keys(void **state) {
  fixture_t *f = *state;
  int64_t keys[16];
  int8_t vals[16];
  for (int k = 0; k < 16; k++) {
    keys[k] = edge64[(k * 5) % NEDGE];
    vals[k] = (int8_t)(k - 8);
  }
  keys[3] = keys[9] = 0x100000000ll; /* ties keep their order */
  /* expected: stable insertion sort */
  int64_t wk[16];
  int8_t wv[16];
  memcpy(wk, keys, sizeof wk);
  memcpy(wv, vals, sizeof wv);
  for (int i = 1; i < 16; i++)
    for (int j = i; j > 0 && wk[j] < wk[j - 1]; j--) {
      int64_t t = wk[j];
      wk[j] = wk[j - 1];
      wk[j - 1] = t;
      int8_t tv = wv[j];
      wv[j] = wv[j - 1];
      wv[j - 1] = tv;
    }
  for (int m = 0; m < 2; m++) {
    int64_t ok[16];
    int8_t ov[16];
    const void *args[] = {keys, vals};
    void *res[] = {ok, ov};
    run(f, m, sort_program, 2, args, 2, res);
    check_i64("sort keys", m, ok, wk, 16, keys, NULL);
    for (int k = 0; k < 16; k++)
      if (ov[k] != wv[k]) fail_msg("sort values (%s) [%d]: %d want %d", mode_name[m], k, ov[k], wv[k]);
  }
}

static const char scatter_program[] =
    "func.func @main(%o: tensor<8xi64>, %i: tensor<6x1xi64>, %u: tensor<6xi64>, "
    "%o8: tensor<8xi8>, %u8: tensor<6xi8>) -> (tensor<8xi64>, tensor<8xi8>) {\n"
    "  %0 = \"stablehlo.scatter\"(%o, %i, %u) <{scatter_dimension_numbers = "
    "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
    "index_vector_dim = 1>}> ({\n"
    "  ^bb0(%p: tensor<i64>, %q: tensor<i64>):\n"
    "    %s = stablehlo.add %p, %q : tensor<i64>\n"
    "    stablehlo.return %s : tensor<i64>\n"
    "  }) : (tensor<8xi64>, tensor<6x1xi64>, tensor<6xi64>) -> tensor<8xi64>\n"
    "  %1 = \"stablehlo.scatter\"(%o8, %i, %u8) <{scatter_dimension_numbers = "
    "#stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], "
    "index_vector_dim = 1>}> ({\n"
    "  ^bb0(%p: tensor<i8>, %q: tensor<i8>):\n"
    "    stablehlo.return %q : tensor<i8>\n"
    "  }) : (tensor<8xi8>, tensor<6x1xi64>, tensor<6xi8>) -> tensor<8xi8>\n"
    "  return %0, %1 : tensor<8xi64>, tensor<8xi8>\n"
    "}\n";

static void scatter_i64_indices(void **state) {
  fixture_t *f = *state;
  int64_t o[8] = {0, 10, 20, 30, 40, 50, 60, INT64_MAX};
  int64_t idx[6] = {1, 3, 1, 7, -1, 0x100000001ll}; /* -1 and 2^32 + 1 are skipped */
  int64_t u[6] = {INT64_MAX, -0x100000000ll, 5, 1, 1000, 1000};
  int8_t o8[8] = {1, 2, 3, 4, 5, 6, 7, 8}, u8[6] = {-1, -3, -5, -7, -9, -11};
  int64_t want[8] = {0, (int64_t)((uint64_t)10 + (uint64_t)INT64_MAX + 5), 20,
                     30 - 0x100000000ll, 40, 50, 60, INT64_MIN};
  int8_t want8[8] = {1, -5, 3, -3, 5, 6, 7, -7};
  for (int m = 0; m < 2; m++) {
    int64_t got[8];
    int8_t got8[8];
    const void *args[] = {o, idx, u, o8, u8};
    void *res[] = {got, got8};
    run(f, m, scatter_program, 5, args, 2, res);
    check_i64("scatter", m, got, want, 8, o, NULL);
    for (int k = 0; k < 8; k++)
      if (got8[k] != want8[k]) fail_msg("scatter i8 (%s) [%d]: %d want %d", mode_name[m], k, got8[k], want8[k]);
  }
}

static const char index_program[] =
    "func.func @main(%x: tensor<6xi32>, %s: tensor<i64>, %a: tensor<2x3xi64>, "
    "%b: tensor<3x2xi64>) -> (tensor<2xi32>, tensor<2x2xi64>, tensor<i64>) {\n"
    "  %0 = stablehlo.dynamic_slice %x, %s, sizes = [2] : (tensor<6xi32>, tensor<i64>) -> "
    "tensor<2xi32>\n"
    "  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<2x3xi64>, "
    "tensor<3x2xi64>) -> tensor<2x2xi64>\n"
    "  %2 = stablehlo.iota dim = 0 : tensor<100xi64>\n"
    "  %c = stablehlo.constant dense<1152921504606846976> : tensor<100xi64>\n"
    "  %3 = stablehlo.multiply %2, %c : tensor<100xi64>\n"
    "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
    "  %4 = stablehlo.reduce(%3 init: %z) applies stablehlo.add across dimensions = [0] : "
    "(tensor<100xi64>, tensor<i64>) -> tensor<i64>\n"
    "  return %0, %1, %4 : tensor<2xi32>, tensor<2x2xi64>, tensor<i64>\n"
    "}\n";

static void i64_indices_dot_reduce(void **state) {
  fixture_t *f = *state;
  int32_t x[6] = {10, 11, 12, 13, 14, 15};
  int64_t starts[4] = {-5, 3, 0x10000000000ll, INT64_MIN};
  int32_t want_first[4] = {10, 13, 14, 10};
  int64_t a[6] = {1, -2, 0x100000000ll, INT64_MAX, 3, -1};
  int64_t b[6] = {0x7FFFFFFFll, 5, -7, 0x100000000ll, 2, INT64_MIN};
  int64_t wdot[4];
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      uint64_t s = 0;
      for (int k = 0; k < 3; k++) s += (uint64_t)a[i * 3 + k] * (uint64_t)b[k * 2 + j];
      wdot[i * 2 + j] = (int64_t)s;
    }
  uint64_t wsum = 0;
  for (uint64_t i = 0; i < 100; i++) wsum += i * (1ull << 60);
  for (int m = 0; m < 2; m++)
    for (int s = 0; s < 4; s++) {
      int32_t ds[2];
      int64_t dot[4], sum;
      const void *args[] = {x, &starts[s], a, b};
      void *res[] = {ds, dot, &sum};
      run(f, m, index_program, 4, args, 3, res);
      if (ds[0] != want_first[s] || ds[1] != want_first[s] + 1)
        fail_msg("dynamic_slice (%s) start %lld: %d %d", mode_name[m], (long long)starts[s], ds[0],
                 ds[1]);
      check_i64("dot_general", m, dot, wdot, 4, a, b);
      if ((uint64_t)sum != wsum) fail_msg("reduce (%s): %lld", mode_name[m], (long long)sum);
    }
}

/* ----------------------------------------------------------------- f64 */

static const char f64_program[] =
    "func.func @main(%x: tensor<4xf64>) -> tensor<4xf64> {\n"
    "  %0 = stablehlo.multiply %x, %x : tensor<4xf64>\n"
    "  return %0 : tensor<4xf64>\n"
    "}\n";

static void f64_needs_opt_in(void **state) {
  fixture_t *f = *state;
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(f->ctx[1], f64_program, strlen(f64_program),
                                               "f64.mlir", NULL, &exe);
  assert_non_null(st);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_UNIMPLEMENTED);
  assert_non_null(strstr(vkhlo_status_message(st), "f64"));
  assert_non_null(strstr(vkhlo_status_message(st), "VKHLO_DEMOTE_F64=1"));
  vkhlo_status_free(st);
  assert_null(exe);

  /* opted in: computed in f32, stored as f64 */
  setenv("VKHLO_DEMOTE_F64", "1", 1);
  vkhlo_context_t *demoted = make_context(true);
  unsetenv("VKHLO_DEMOTE_F64");
  assert_non_null(demoted);
  fixture_t g = *f;
  g.ctx[1] = demoted;
  double x[4] = {1.5, -3.0, 1e10, 0.1}, y[4];
  for (int m = 0; m < 2; m++) {
    const void *args[] = {x};
    void *res[] = {y};
    run(&g, m, f64_program, 1, args, 1, res);
    for (int k = 0; k < 4; k++) {
      double want = x[k] * x[k];
      double tol = m == 0 ? 0.0 : fabs(want) * 1e-6;
      if (fabs(y[k] - want) > tol) fail_msg("f64 (%s) [%d]: %.17g want %.17g", mode_name[m], k, y[k], want);
    }
  }
  int messages = vkhlo_context_validation_message_count(demoted);
  vkhlo_context_destroy(demoted);
  assert_int_equal(messages, 0);
}

/* ------------------------------------------- f16 conversions, all of them */

/* Every f16 bit pattern converted to f32, and f32 values around every f16
 * (each finite f16, the midpoints between neighbours: ties to even, and
 * just above and below them; overflow edges, infinities, NaN) converted to
 * f16, on the native and restricted contexts and on one with the f16
 * conversions in integer code (VKHLO_F16_SOFT=1, the lavapipe-on-aarch64
 * quirk).  The reference is computed here from the formats' definitions. */
static const char f16_program[] =
    "func.func @main(%b: tensor<65536xui16>, %x: tensor<196616xf32>) -> (tensor<65536xf32>, "
    "tensor<196616xui16>) {\n"
    "  %h = stablehlo.bitcast_convert %b : (tensor<65536xui16>) -> tensor<65536xf16>\n"
    "  %f = stablehlo.convert %h : (tensor<65536xf16>) -> tensor<65536xf32>\n"
    "  %y = stablehlo.convert %x : (tensor<196616xf32>) -> tensor<196616xf16>\n"
    "  %yb = stablehlo.bitcast_convert %y : (tensor<196616xf16>) -> tensor<196616xui16>\n"
    "  return %f, %yb : tensor<65536xf32>, tensor<196616xui16>\n"
    "}\n";
#define F16_NX 196616

static double ref_f16_value(uint16_t h) { /* finite or infinite, not NaN */
  int e = (h >> 10) & 0x1F, m = h & 0x3FF;
  double mag = e == 0x1F ? INFINITY : e == 0 ? ldexp(m, -24) : ldexp(m | 0x400, e - 25);
  return (h & 0x8000) ? -mag : mag;
}

/* f32 -> f16 bits, round to nearest even (x not NaN), by search: the two
 * neighbouring f16 magnitudes and the exact midpoint between them. */
static uint16_t ref_f16_bits(float x) {
  uint16_t sign = signbit(x) ? 0x8000 : 0;
  double a = fabs((double)x);
  if (a >= 65520.0) return sign | 0x7C00;
  uint16_t lo = 0;
  for (int step = 0x4000; step; step >>= 1) /* largest magnitude <= a */
    if (lo + step < 0x7C00 && ref_f16_value((uint16_t)(lo + step)) <= a) lo = (uint16_t)(lo + step);
  double vlo = ref_f16_value(lo), vhi = ref_f16_value((uint16_t)(lo + 1));
  if (a == vlo) return sign | lo;
  double mid = 0.5 * (vlo + vhi); /* exact in double */
  uint16_t r = a < mid ? lo : a > mid ? (uint16_t)(lo + 1) : (lo & 1) ? (uint16_t)(lo + 1) : lo;
  return sign | r;
}

static void f16_conversions_all_values(void **state) {
  fixture_t *f = *state;
  setenv("VKHLO_F16_SOFT", "1", 1);
  vkhlo_context_t *soft = make_context(false);
  unsetenv("VKHLO_F16_SOFT");
  assert_non_null(soft);
  uint16_t *bits = malloc(65536 * sizeof *bits), *got_bits = malloc(F16_NX * sizeof *got_bits);
  float *x = malloc(F16_NX * sizeof *x), *got_f = malloc(65536 * sizeof *got_f);
  assert_true(bits && got_bits && x && got_f);
  for (int i = 0; i < 65536; i++) bits[i] = (uint16_t)i;
  int n = 0;
  for (int h = 0; h < 0x7C00; h++) { /* positive finite f16 and its neighbourhood */
    float v = (float)ref_f16_value((uint16_t)h);
    float mid = (float)(0.5 * (ref_f16_value((uint16_t)h) + ref_f16_value((uint16_t)(h + 1))));
    x[n++] = (h & 1) ? -v : v;
    x[n++] = (h & 1) ? mid : -mid;
    x[n++] = nextafterf(mid, (h & 2) ? INFINITY : 0.0f);
  }
  const float edges[] = {65519.99f, 65520.0f, 1e30f, INFINITY, -INFINITY, 1e-30f, -0.0f,
                         2.9802322e-08f /* 2^-25: ties to zero */, 8.940697e-08f};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) x[n++] = edges[i];
  while (n < F16_NX - 1) x[n++] = 1.0f;
  x[n++] = NAN;
  assert_int_equal(n, F16_NX);

  fixture_t g = *f;
  g.ctx[1] = soft; /* mode 1 here: integer-code conversions */
  for (int m = 0; m < 2; m++) {
    const void *args[] = {bits, x};
    void *res[] = {got_f, got_bits};
    run(&g, m, f16_program, 2, args, 2, res);
    const char *mode = m ? "f16 soft" : "native";
    for (int i = 0; i < 65536; i++) {
      bool nan_in = ((i >> 10) & 0x1F) == 0x1F && (i & 0x3FF);
      if (nan_in) {
        if (!isnan(got_f[i])) fail_msg("f16 0x%04x (%s): %g, want NaN", i, mode, got_f[i]);
      } else if (got_f[i] != (float)ref_f16_value((uint16_t)i) ||
                 (signbit(got_f[i]) != 0) != ((i & 0x8000) != 0)) {
        fail_msg("f16 0x%04x (%s): %.9g, want %.9g", i, mode, got_f[i], ref_f16_value((uint16_t)i));
      }
    }
    for (int i = 0; i < F16_NX; i++) {
      if (isnan(x[i])) {
        if ((got_bits[i] & 0x7C00) != 0x7C00 || !(got_bits[i] & 0x3FF))
          fail_msg("f32 NaN -> f16 (%s): 0x%04x", mode, got_bits[i]);
      } else if (got_bits[i] != ref_f16_bits(x[i])) {
        fail_msg("f32 %.9g -> f16 (%s) [%d]: 0x%04x, want 0x%04x", x[i], mode, i, got_bits[i],
                 ref_f16_bits(x[i]));
      }
    }
  }
  int messages = vkhlo_context_validation_message_count(soft);
  vkhlo_context_destroy(soft);
  free(bits), free(got_bits), free(x), free(got_f);
  assert_int_equal(messages, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(i64_binary_ops),
      cmocka_unit_test(u64_binary_ops),
      cmocka_unit_test(i64_unary_ops),
      cmocka_unit_test(f32_to_i64_saturates),
      cmocka_unit_test(narrow_stores_from_neighbours),
      cmocka_unit_test(sort_i64_keys),
      cmocka_unit_test(scatter_i64_indices),
      cmocka_unit_test(i64_indices_dot_reduce),
      cmocka_unit_test(f64_needs_opt_in),
      cmocka_unit_test(f16_conversions_all_values),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
