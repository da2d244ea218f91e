/*
 * Convolution through the library kernels (shaders/conv2d_cpu.comp,
 * conv_depthwise_cpu.comp, and conv_gpu.glsl through a context created
 * with $VKHLO_CONV_KERNEL=gpu; codegen/emit_conv.c) against the per-element kernel
 * (a context created with $VKHLO_CONV_KERNEL=elemental) on the same seeded inputs,
 * and against hand-computed values: NCHW/OIHW and NHWC/HWIO layouts, 1-D,
 * strides, padding (negative too), lhs and rhs dilation (lhs dilation
 * also against an explicitly zero-padded input), window reversal,
 * feature groups, depthwise, 1x1, odd sizes, batch 2, 3-D (against a
 * direct sum), fused epilogues
 * (bias + relu, batch-norm scale/shift, residual add), f16 and bf16
 * (within an ulp of the per-element kernel), integers (exactly) and
 * programs the kernel must
 * leave to the per-element path (batch groups), NHWC 1x1 convolutions of
 * 32+ features taken by the GEMM kernel (pointwise_as_gemm) and depthwise
 * and grouped weight gradients (against direct sums).  On CPU
 * devices each program is also checked to have taken the kernel (or not).
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "api/internal.h"
#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

/* The contexts: the default one, one with the per-element kernel
 * ($VKHLO_CONV_KERNEL=elemental when it was created), one with the
 * general kernel only (generic: bench_conv's baseline) and one with the
 * GPU kernel on any device (gpu). */
typedef struct contexts {
  vkhlo_context_t *ctx, *elemental, *generic, *gpu;
} contexts_t;

static int with_env(void **ctx, const char *kernel) {
  setenv("VKHLO_CONV_KERNEL", kernel, 1);
  int r = validated_context_setup(ctx);
  unsetenv("VKHLO_CONV_KERNEL");
  return r;
}

static int setup(void **state) {
  contexts_t *c = calloc(1, sizeof *c);
  void *p = NULL, *q = NULL, *r = NULL, *u = NULL;
  if (!c || validated_context_setup(&p) || with_env(&q, "elemental") || with_env(&r, "generic") ||
      with_env(&u, "gpu"))
    return -1;
  c->ctx = p, c->elemental = q, c->generic = r, c->gpu = u;
  *state = c;
  return 0;
}

static int teardown(void **state) {
  contexts_t *c = *state;
  void *p[4] = {c->ctx, c->elemental, c->generic, c->gpu};
  int r = 0;
  for (int i = 0; i < 4; i++) r |= validated_context_teardown(&p[i]);
  free(c);
  return r;
}

static vkhlo_executable_t *compile(vkhlo_context_t *ctx, const char *text) {
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "conv_test.mlir", NULL, &exe));
  return exe;
}

/* How many of |exe|'s kernels are made from shaders/|file|. */
static int kernels_from(const vkhlo_executable_t *exe, const char *file) {
  char needle[64];
  snprintf(needle, sizeof needle, "shaders/%s", file);
  int n = 0;
  for (int i = 0; i < exe->kernel_count; i++)
    if (strstr(exe->kernels[i].glsl, needle)) n++;
  return n;
}

/* How many of |exe|'s kernels are library convolution kernels. */
static int library_kernels(const vkhlo_executable_t *exe) {
  return kernels_from(exe, "conv2d_cpu.comp") + kernels_from(exe, "conv_depthwise_cpu.comp") +
         kernels_from(exe, "conv_gpu.glsl");
}

static bool on_cpu(vkhlo_context_t *ctx) {
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  return strcmp(d.type, "cpu") == 0;
}

/* Whether the weights of the cases below (16 or 32 output features per
 * tile) can be shared as 64-bit words: emit_conv.c needs the tile's
 * features to be a multiple of 2 x the subgroup size, which holds for
 * lavapipe's 8 lanes (256-bit) but not for 16 (LP_NATIVE_VECTOR_WIDTH=512).
 * Where it does not, the needles that name the weight words are not
 * expected (said on stdout) and the results are still compared. */
static bool weight_words_expected(vkhlo_context_t *ctx, const char *needle) {
  bool named = strstr(needle, "RHS_WORDS") || strstr(needle, "in1t;") || strstr(needle, "conv_word_half");
  if (!named || ctx->target.subgroup_size <= 8) return true;
  printf("e2e_conv: subgroup size %u: no weight words expected, '%s' not checked\n", ctx->target.subgroup_size,
         needle);
  return false;
}

/* Runs |exe| on |args|, returning result 0 as floats (heap) and its count. */
static float *run(vkhlo_executable_t *exe, int nargs, vkhlo_buffer_t **args, int64_t *count) {
  vkhlo_buffer_t *res = NULL;
  expect_ok(vkhlo_executable_execute(exe, nargs, args, 1, &res));
  vkhlo_tensor_type_t t;
  vkhlo_buffer_type(res, &t);
  *count = vkhlo_tensor_type_element_count(&t);
  float *out = malloc((size_t)*count * sizeof *out + 4);
  expect_ok(vkhlo_buffer_read(res, out, (size_t)*count * sizeof *out));
  vkhlo_buffer_destroy(res);
  return out;
}

/* |text| compiled on |ctx| (taking the library kernel or not, |taken|, on
 * a CPU device) against the per-element kernel. */
static void compare_executables(vkhlo_executable_t *a, vkhlo_context_t *ctx, vkhlo_executable_t *b,
                                vkhlo_context_t *bctx, const char *text);

static void compare_on(const contexts_t *c, vkhlo_context_t *ctx, const char *text, bool taken) {
  vkhlo_executable_t *a = compile(ctx, text), *b = compile(c->elemental, text);
  if (on_cpu(ctx)) { /* the gpu context takes conv_gpu.glsl, the others a CPU kernel */
    assert_int_equal(library_kernels(a), taken ? 1 : 0);
    assert_int_equal(kernels_from(a, "conv_gpu.glsl"), taken && ctx == c->gpu ? 1 : 0);
  }
  assert_int_equal(library_kernels(b), 0);
  compare_executables(a, ctx, b, c->elemental, text);
}

/* Runs |a| (compiled on |ctx|) and |b| (on |bctx|) on the same seeded
 * inputs and compares their first results: f32 within 1e-5 of the largest
 * magnitude, integers exactly, f16 / bf16 within an ulp; destroys both. */
static void compare_executables(vkhlo_executable_t *a, vkhlo_context_t *ctx, vkhlo_executable_t *b,
                                vkhlo_context_t *bctx, const char *text) {
  int np = vkhlo_executable_parameter_count(a);
  vkhlo_buffer_t *args[8], *eargs[8]; /* the same values on each context */
  assert_true(np <= 8);
  uint64_t seed = 12345;
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(a, i, &t));
    int64_t n = vkhlo_tensor_type_element_count(&t);
    size_t bytes = vkhlo_tensor_type_size_bytes(&t);
    unsigned char *data = malloc(bytes + 4);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      float v = (float)((double)(seed >> 40) / (1 << 24) - 0.5);
      size_t es = vkhlo_element_type_size_bytes(t.element_type);
      if (t.element_type == VKHLO_F32) ((float *)data)[k] = v;
      else if (t.element_type != VKHLO_F16 && t.element_type != VKHLO_BF16) /* integers: random bits */
        memcpy(data + (size_t)k * es, (const uint8_t *)&(uint32_t){(uint32_t)(seed >> 32)}, es);
      else if (t.element_type == VKHLO_BF16) /* bf16 in (-0.25, -0.125] and [0.125, 0.25) */
        ((uint16_t *)data)[k] = (uint16_t)((seed >> 63) << 15 | (0x3E00 + (seed >> 56 & 0x7F)));
      else /* f16 in (-0.25, -0.125] and [0.125, 0.25) */
        ((uint16_t *)data)[k] = (uint16_t)((seed >> 63) << 15 | (0x3000 + (seed >> 53 & 0x3FF)));
    }
    expect_ok(vkhlo_buffer_create(ctx, &t, data, &args[i]));
    expect_ok(vkhlo_buffer_create(bctx, &t, data, &eargs[i]));
    free(data);
  }
  int64_t na, nb;
  vkhlo_tensor_type_t rt;
  expect_ok(vkhlo_executable_result_type(a, 0, &rt));
  if (rt.element_type == VKHLO_F32) {
    float *x = run(a, np, args, &na), *y = run(b, np, eargs, &nb);
    assert_int_equal(na, nb);
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < na; i++) scale = scale > (double)y[i] && scale > -(double)y[i] ? scale : (y[i] < 0 ? -y[i] : y[i]);
    for (int64_t i = 0; i < na; i++) {
      double d = (double)x[i] - (double)y[i];
      if (d < 0) d = -d;
      if (d > worst) worst = d;
    }
    if (!(worst <= 1e-5 * scale)) fail_msg("results differ by %g (scale %g):\n%s", worst, scale, text);
    assert_true(scale > 0); /* the comparison saw real values */
    free(x);
    free(y);
  } else if (rt.element_type != VKHLO_F16 && rt.element_type != VKHLO_BF16) { /* integers: exactly */
    vkhlo_buffer_t *r1 = NULL, *r2 = NULL;
    expect_ok(vkhlo_executable_execute(a, np, args, 1, &r1));
    expect_ok(vkhlo_executable_execute(b, np, eargs, 1, &r2));
    size_t bytes = vkhlo_tensor_type_size_bytes(&rt);
    uint8_t *x = malloc(bytes + 4), *y = malloc(bytes + 4);
    expect_ok(vkhlo_buffer_read(r1, x, bytes));
    expect_ok(vkhlo_buffer_read(r2, y, bytes));
    if (memcmp(x, y, bytes) != 0) fail_msg("library kernel differs from the per-element one:\n%s", text);
    size_t zeros = 0;
    for (size_t i = 0; i < bytes; i++) zeros += y[i] == 0;
    assert_true(zeros * 2 < bytes); /* real values */
    free(x);
    free(y);
    vkhlo_buffer_destroy(r1);
    vkhlo_buffer_destroy(r2);
  } else { /* f16 / bf16: both sum in f32 (in other orders) and round once */
    bool half = rt.element_type == VKHLO_F16;
    assert_true(half || rt.element_type == VKHLO_BF16);
    vkhlo_buffer_t *r1 = NULL, *r2 = NULL;
    expect_ok(vkhlo_executable_execute(a, np, args, 1, &r1));
    expect_ok(vkhlo_executable_execute(b, np, eargs, 1, &r2));
    int64_t n = vkhlo_tensor_type_element_count(&rt);
    uint16_t *x = malloc((size_t)n * 2 + 4), *y = malloc((size_t)n * 2 + 4);
    expect_ok(vkhlo_buffer_read(r1, x, (size_t)n * 2));
    expect_ok(vkhlo_buffer_read(r2, y, (size_t)n * 2));
    /* each within one unit in the last place of the other's magnitude */
    int64_t equal = 0;
    for (int64_t i = 0; i < n; i++) {
      double xv = test_16bit_value(half, x[i]), yv = test_16bit_value(half, y[i]);
      double mag = yv < 0 ? -yv : yv, ulp = ldexp(1.0, (mag > 0 ? ilogb(mag) : -24) - (half ? 10 : 7));
      if (!((xv - yv <= ulp) && (yv - xv <= ulp)))
        fail_msg("element %lld: library kernel %.9g, per-element kernel %.9g", (long long)i, xv, yv);
      equal += x[i] == y[i];
    }
    /* the same f32 sums but for their last bits: all but a rare one round alike */
    if (equal * 100 < n * 99) fail_msg("only %lld of %lld results equal the per-element kernel's", (long long)equal, (long long)n);
    free(x);
    free(y);
    vkhlo_buffer_destroy(r1);
    vkhlo_buffer_destroy(r2);
  }
  for (int i = 0; i < np; i++) {
    vkhlo_buffer_destroy(args[i]);
    vkhlo_buffer_destroy(eargs[i]);
  }
  vkhlo_executable_destroy(a);
  vkhlo_executable_destroy(b);
}

/* |text| on the default context and through conv_gpu.glsl, each
 * against the per-element kernel. */
static void compare(void **state, const char *text, bool taken) {
  const contexts_t *c = *state;
  compare_on(c, c->ctx, text, taken);
  compare_on(c, c->gpu, text, taken);
}

/* In |text| (2048 bytes), a program computing one convolution of
 * parameters %x and %w. */
static void conv_program(char text[2048], const char *x, const char *w, const char *y, const char *dims,
                         const char *window, int fgc, int bgc) {
  snprintf(text, 2048,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = %s, window = {%s}"
           " {batch_group_count = %d : i64, feature_group_count = %d : i64} : (%s, %s) -> %s\n"
           "  return %%y : %s\n}\n",
           x, w, y, dims, window, bgc, fgc, x, w, y, y);
}

static void conv_case(void **state, const char *x, const char *w, const char *y, const char *dims, const char *window,
                      int fgc, int bgc, bool taken) {
  char text[2048];
  conv_program(text, x, w, y, dims, window, fgc, bgc);
  compare(state, text, taken);
}

#define NCHW "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]"
#define NHWC "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]"

static void nchw_3x3_pad_odd(void **state) {
  conv_case(state, "tensor<1x5x9x7xf32>", "tensor<12x5x3x3xf32>", "tensor<1x12x9x7xf32>", NCHW,
            "pad = [[1, 1], [1, 1]]", 1, 1, true);
}

static void nhwc_stride2_asymmetric_pad(void **state) {
  conv_case(state, "tensor<2x11x10x6xf32>", "tensor<3x3x6x8xf32>", "tensor<2x6x5x8xf32>", NHWC,
            "stride = [2, 2], pad = [[1, 1], [0, 1]]", 1, 1, true);
}

static void nchw_stride2_7x7_stem(void **state) {
  conv_case(state, "tensor<1x3x23x23xf32>", "tensor<16x3x7x7xf32>", "tensor<1x16x12x12xf32>", NCHW,
            "stride = [2, 2], pad = [[3, 3], [3, 3]]", 1, 1, true);
}

static void rhs_and_lhs_dilation(void **state) {
  conv_case(state, "tensor<1x4x10x9xf32>", "tensor<8x4x3x2xf32>", "tensor<1x8x6x8xf32>", NCHW,
            "rhs_dilate = [2, 1]", 1, 1, true);
  /* lhs dilation 2 on H: 9 -> 17, padded 19, window 3 -> 17; W: 9 + 1, window 3, stride 2 -> 4 */
  conv_case(state, "tensor<1x4x9x9xf32>", "tensor<8x4x3x3xf32>", "tensor<1x8x17x4xf32>", NCHW,
            "pad = [[1, 1], [1, 0]], lhs_dilate = [2, 1], stride = [1, 2]", 1, 1, true);
}

/* Lhs dilation with unit strides (transposed convolutions; codegen/expand.c
 * splits them by output phase into plain convolutions, interleaved): the
 * program against the same convolution of the input padded with zeros
 * between its elements (stablehlo.pad's interior padding, |interior|
 * its list, |xp| its type) and no lhs dilation, on the same inputs; on a
 * CPU device the program must take |kernels| library kernels (one per
 * phase; 0 where the per-element kernel computes them); also on the
 * context with the GPU kernel. */
static void phases_case(void **state, const char *x, const char *w, const char *y, const char *xp, const char *dims,
                        const char *pad, const char *lhs_dilate, const char *interior, int fgc, int kernels) {
  const contexts_t *c = *state;
  char text[2048], window[256], ref[2048];
  snprintf(window, sizeof window, "pad = %s, lhs_dilate = %s", pad, lhs_dilate);
  conv_program(text, x, w, y, dims, window, fgc, 1);
  char zeros[64] = "0";
  for (const char *p = interior + 1; *p; p++)
    if (*p == ',') strcat(zeros, ", 0");
  snprintf(ref, sizeof ref,
           "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %%xp = stablehlo.pad %%x, %%z, low = [%s], high = [%s], interior = %s : (%s, tensor<f32>) -> %s\n"
           "  %%y = stablehlo.convolution(%%xp, %%w) dim_numbers = %s, window = {pad = %s}"
           " {batch_group_count = 1 : i64, feature_group_count = %d : i64} : (%s, %s) -> %s\n"
           "  return %%y : %s\n}\n",
           x, w, y, zeros, zeros, interior, x, xp, dims, pad, fgc, xp, w, y, y);
  vkhlo_executable_t *a = compile(c->ctx, text), *b = compile(c->ctx, ref);
  if (on_cpu(c->ctx)) assert_int_equal(library_kernels(a), kernels);
  compare_executables(a, c->ctx, b, c->ctx, text);
  /* the phases through conv_gpu.glsl where it takes them (16 output features or more), per element else */
  compare_executables(compile(c->gpu, text), c->gpu, compile(c->gpu, ref), c->gpu, text);
}

static void lhs_dilation_phases(void **state) {
  /* 3x3 over a 2x dilated NHWC input, padded (1, 2): 13 + 3 - 2 = 14 rows, 11 + 3 - 2 = 12 columns */
  phases_case(state, "tensor<1x7x6x5xf32>", "tensor<3x3x5x4xf32>", "tensor<1x14x12x4xf32>", "tensor<1x13x11x5xf32>",
              NHWC, "[[1, 2], [1, 2]]", "[2, 2]", "[0, 1, 1, 0]", 1, 4);
  /* PyTorch's ConvTranspose2d(3, 6, 4, stride=2, padding=1), NCHW: 5 -> 10 */
  phases_case(state, "tensor<1x3x5x5xf32>", "tensor<6x3x4x4xf32>", "tensor<1x6x10x10xf32>", "tensor<1x3x9x9xf32>",
              NCHW, "[[2, 2], [2, 2]]", "[2, 2]", "[0, 0, 1, 1]", 1, 4);
  /* 1-D, dilation 3, window 5, padded (0, 4), batch 2: 22 outputs */
  phases_case(state, "tensor<2x8x3xf32>", "tensor<5x3x2xf32>", "tensor<2x22x2xf32>", "tensor<2x22x3xf32>",
              "[b, 0, f]x[0, i, o]->[b, 0, f]", "[[0, 4]]", "[3]", "[0, 2, 0]", 1, 3);
  /* a 1x1 window: the odd output rows and columns have no tap (zeros) */
  phases_case(state, "tensor<1x4x4x3xf32>", "tensor<1x1x3x2xf32>", "tensor<1x8x8x2xf32>", "tensor<1x7x7x3xf32>",
              NHWC, "[[0, 1], [0, 1]]", "[2, 2]", "[0, 1, 1, 0]", 1, 1);
  /* negative padding: 11 - 1 - 3 + 1 = 8 rows, 11 - 2 - 3 + 1 = 7 columns */
  phases_case(state, "tensor<1x6x6x2xf32>", "tensor<3x3x2x3xf32>", "tensor<1x8x7x3xf32>", "tensor<1x11x11x2xf32>",
              NHWC, "[[-1, 0], [0, -2]]", "[2, 2]", "[0, 1, 1, 0]", 1, 4);
  /* 2 feature groups, rows dilated only */
  phases_case(state, "tensor<1x5x5x4xf32>", "tensor<3x3x2x6xf32>", "tensor<1x9x5x6xf32>", "tensor<1x9x5x4xf32>",
              NHWC, "[[1, 1], [1, 1]]", "[2, 1]", "[0, 1, 0, 0]", 2, 2);
  /* 3-D (the per-element kernel): 8 phases */
  phases_case(state, "tensor<1x3x3x3x2xf32>", "tensor<2x2x2x2x2xf32>", "tensor<1x6x6x6x2xf32>",
              "tensor<1x5x5x5x2xf32>", "[b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f]",
              "[[1, 1], [1, 1], [1, 1]]", "[2, 2, 2]", "[0, 1, 1, 1, 0]", 1, 0);
}

/* Operands that other ops make (the weights transposed from OIHW, the
 * input padded by stablehlo.pad) stay out of the convolution's fusion, so
 * that the library kernel still reads them (fused, the convolution would
 * run one invocation per output element). */
static void produced_operands(void **state) {
  compare(state,
          "func.func @main(%x: tensor<1x6x7x5xf32>, %w: tensor<4x5x3x3xf32>) -> tensor<1x6x7x4xf32> {\n"
          "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
          "  %xp = stablehlo.pad %x, %z, low = [0, 1, 1, 0], high = [0, 1, 1, 0], interior = [0, 0, 0, 0] :"
          " (tensor<1x6x7x5xf32>, tensor<f32>) -> tensor<1x8x9x5xf32>\n"
          "  %wt = stablehlo.transpose %w, dims = [2, 3, 1, 0] : (tensor<4x5x3x3xf32>) -> tensor<3x3x5x4xf32>\n"
          "  %y = stablehlo.convolution(%xp, %wt) dim_numbers = " NHWC ", window = {}"
          " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
          " (tensor<1x8x9x5xf32>, tensor<3x3x5x4xf32>) -> tensor<1x6x7x4xf32>\n"
          "  return %y : tensor<1x6x7x4xf32>\n}\n",
          true);
}

/* A weight gradient as JAX's transpose of an NHWC convolution writes it
 * (the output gradient slid over the padded input: 3 x 3 positions of a
 * large window; codegen/expand.c stacks the windows and takes one
 * dot_general) against one dot_general per position of strided slices,
 * concatenated: n x h x w x c input, gradient n x gh x gw x o, the
 * forward stride |d| (the rhs dilation here), padding (lo, hi). */
static void weight_gradient_case(void **state, int n, int h, int w, int c, int o, int gh, int gw, int d, int lo,
                                 int hi) {
  const contexts_t *cs = *state;
  char x[64], g[64], y[64], xp[64], window[128], text[2048];
  snprintf(x, sizeof x, "tensor<%dx%dx%dx%dxf32>", n, h, w, c);
  snprintf(g, sizeof g, "tensor<%dx%dx%dx%dxf32>", n, gh, gw, o);
  snprintf(y, sizeof y, "tensor<3x3x%dx%dxf32>", c, o);
  snprintf(xp, sizeof xp, "tensor<%dx%dx%dx%dxf32>", n, h + lo + hi, w + lo + hi, c);
  snprintf(window, sizeof window, "pad = [[%d, %d], [%d, %d]], rhs_dilate = [%d, %d]", lo, hi, lo, hi, d, d);
  conv_program(text, x, g, y, "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]", window, 1, 1);
  size_t cap = 16384, len = 0;
  char *ref = malloc(cap);
  len += (size_t)snprintf(ref + len, cap - len,
                          "func.func @main(%%x: %s, %%w: %s) -> %s {\n"
                          "  %%z = stablehlo.constant dense<0.0> : tensor<f32>\n"
                          "  %%xp = stablehlo.pad %%x, %%z, low = [0, %d, %d, 0], high = [0, %d, %d, 0], interior = "
                          "[0, 0, 0, 0] : (%s, tensor<f32>) -> %s\n",
                          x, g, y, lo, lo, hi, hi, x, xp);
  for (int ky = 0; ky < 3; ky++) {
    for (int kx = 0; kx < 3; kx++)
      len += (size_t)snprintf(
          ref + len, cap - len,
          "  %%s%d%d = \"stablehlo.slice\"(%%xp) {start_indices = array<i64: 0, %d, %d, 0>, limit_indices = "
          "array<i64: %d, %d, %d, %d>, strides = array<i64: 1, %d, %d, 1>} : (%s) -> tensor<%dx%dx%dx%dxf32>\n"
          "  %%d%d%d = stablehlo.dot_general %%s%d%d, %%w, contracting_dims = [0, 1, 2] x [0, 1, 2] : "
          "(tensor<%dx%dx%dx%dxf32>, %s) -> tensor<%dx%dxf32>\n"
          "  %%r%d%d = stablehlo.reshape %%d%d%d : (tensor<%dx%dxf32>) -> tensor<1x1x%dx%dxf32>\n",
          ky, kx, ky, kx, n, ky + (gh - 1) * d + 1, kx + (gw - 1) * d + 1, c, d, d, xp, n, gh, gw, c, ky, kx, ky, kx,
          n, gh, gw, c, g, c, o, ky, kx, ky, kx, c, o, c, o);
    len += (size_t)snprintf(ref + len, cap - len,
                            "  %%row%d = stablehlo.concatenate %%r%d0, %%r%d1, %%r%d2, dim = 1 : (tensor<1x1x%dx%dxf32>, "
                            "tensor<1x1x%dx%dxf32>, tensor<1x1x%dx%dxf32>) -> tensor<1x3x%dx%dxf32>\n",
                            ky, ky, ky, ky, c, o, c, o, c, o, c, o);
  }
  snprintf(ref + len, cap - len,
           "  %%y = stablehlo.concatenate %%row0, %%row1, %%row2, dim = 0 : (tensor<1x3x%dx%dxf32>, "
           "tensor<1x3x%dx%dxf32>, tensor<1x3x%dx%dxf32>) -> %s\n  return %%y : %s\n}\n",
           c, o, c, o, c, o, y, y);
  vkhlo_executable_t *a = compile(cs->ctx, text), *b = compile(cs->ctx, ref);
  if (on_cpu(cs->ctx)) assert_int_equal(kernels_from(a, "conv2d_cpu.comp"), 0); /* a dot_general now */
  compare_executables(a, cs->ctx, b, cs->ctx, text);
  free(ref);
}

static void weight_gradients(void **state) {
  weight_gradient_case(state, 2, 10, 9, 6, 5, 10, 9, 1, 1, 1); /* a 3x3 stride-1 layer's, batch 2 */
  weight_gradient_case(state, 1, 20, 20, 4, 3, 10, 10, 2, 1, 0); /* a 3x3 stride-2 layer's */
}

/* Runs |exe| (compiled on |ctx|) on the f32 host arrays |x| and |w|
 * (parameters 0 and 1) and returns result 0 (heap), its count in *count. */
static float *run_xw(vkhlo_context_t *ctx, vkhlo_executable_t *exe, const float *x, const float *w, int64_t *count) {
  vkhlo_tensor_type_t t;
  vkhlo_buffer_t *args[2];
  expect_ok(vkhlo_executable_parameter_type(exe, 0, &t));
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &args[0]));
  expect_ok(vkhlo_executable_parameter_type(exe, 1, &t));
  expect_ok(vkhlo_buffer_create(ctx, &t, w, &args[1]));
  float *y = run(exe, 2, args, count);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  return y;
}

/* Fails unless |worst| is within 1e-5 of |scale| (> 0). */
static void expect_close(double worst, double scale, const char *what, const char *text) {
  if (!(worst <= 1e-5 * scale)) fail_msg("%s differs by %g (scale %g):\n%s", what, worst, scale, text);
  assert_true(scale > 0);
}

/* 3-D convolutions (codegen/expand.c splits them along depth into 2-D
 * ones, the taps' results summed) against a direct sum in double:
 * NDHWC/DHWIO (|cl|) or NCDHW/OIDHW, n x c x d x h x w input, o outputs,
 * a k^3 window, stride, padding (lo, hi) and rhs dilation per dimension,
 * depth reversed where |rev|. */
typedef struct conv3d_case {
  bool cl;
  int n, c, d, h, w, o, k;
  int st[3], lo[3], hi[3], dil[3];
  bool rev;
} conv3d_case_t;

static void conv3d_case(void **state, const conv3d_case_t *q) {
  const contexts_t *cs = *state;
  int in[3] = {q->d, q->h, q->w}, out[3];
  for (int i = 0; i < 3; i++) out[i] = (in[i] + q->lo[i] + q->hi[i] - ((q->k - 1) * q->dil[i] + 1)) / q->st[i] + 1;
  char xt[96], wt[96], yt[96], text[2048];
  if (q->cl) {
    snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dx%dxf32>", q->n, q->d, q->h, q->w, q->c);
    snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%dx%dxf32>", q->k, q->k, q->k, q->c, q->o);
    snprintf(yt, sizeof yt, "tensor<%dx%dx%dx%dx%dxf32>", q->n, out[0], out[1], out[2], q->o);
  } else {
    snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dx%dxf32>", q->n, q->c, q->d, q->h, q->w);
    snprintf(wt, sizeof wt, "tensor<%dx%dx%dx%dx%dxf32>", q->o, q->c, q->k, q->k, q->k);
    snprintf(yt, sizeof yt, "tensor<%dx%dx%dx%dx%dxf32>", q->n, q->o, out[0], out[1], out[2]);
  }
  char window[256];
  snprintf(window, sizeof window,
           "stride = [%d, %d, %d], pad = [[%d, %d], [%d, %d], [%d, %d]], rhs_dilate = [%d, %d, %d], reverse = [%s, "
           "false, false]",
           q->st[0], q->st[1], q->st[2], q->lo[0], q->hi[0], q->lo[1], q->hi[1], q->lo[2], q->hi[2], q->dil[0],
           q->dil[1], q->dil[2], q->rev ? "true" : "false");
  conv_program(text, xt, wt, yt,
               q->cl ? "[b, 0, 1, 2, f]x[0, 1, 2, i, o]->[b, 0, 1, 2, f]" : "[b, f, 0, 1, 2]x[o, i, 0, 1, 2]->[b, f, 0, 1, 2]",
               window, 1, 1);
  size_t nx = (size_t)q->n * q->c * q->d * q->h * q->w, nw = (size_t)q->o * q->c * q->k * q->k * q->k;
  size_t ny = (size_t)q->n * q->o * out[0] * out[1] * out[2];
  float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w);
  uint32_t seed = 7;
  for (size_t i = 0; i < nx; i++) x[i] = (float)test_uniform(&seed);
  for (size_t i = 0; i < nw; i++) w[i] = (float)test_uniform(&seed);
  vkhlo_executable_t *exe = compile(cs->ctx, text);
  if (on_cpu(cs->ctx)) assert_int_equal(library_kernels(exe), q->k); /* one 2-D kernel per depth tap */
  int64_t count;
  float *y = run_xw(cs->ctx, exe, x, w, &count);
  assert_int_equal(count, (int64_t)ny);
  double worst = 0, scale = 0;
  for (int b = 0; b < q->n; b++)
    for (int o = 0; o < q->o; o++)
      for (int z = 0; z < out[0]; z++)
        for (int r = 0; r < out[1]; r++)
          for (int s = 0; s < out[2]; s++) {
            double acc = 0;
            for (int c = 0; c < q->c; c++)
              for (int kz = 0; kz < q->k; kz++)
                for (int kr = 0; kr < q->k; kr++)
                  for (int ks = 0; ks < q->k; ks++) {
                    int p[3] = {z * q->st[0] + kz * q->dil[0] - q->lo[0], r * q->st[1] + kr * q->dil[1] - q->lo[1],
                                s * q->st[2] + ks * q->dil[2] - q->lo[2]};
                    if (p[0] < 0 || p[0] >= q->d || p[1] < 0 || p[1] >= q->h || p[2] < 0 || p[2] >= q->w) continue;
                    int wz = q->rev ? q->k - 1 - kz : kz;
                    size_t xi = q->cl ? ((((size_t)b * q->d + p[0]) * q->h + p[1]) * q->w + p[2]) * q->c + c
                                      : ((((size_t)b * q->c + c) * q->d + p[0]) * q->h + p[1]) * q->w + p[2];
                    size_t wi = q->cl ? ((((size_t)wz * q->k + kr) * q->k + ks) * q->c + c) * q->o + o
                                      : ((((size_t)o * q->c + c) * q->k + wz) * q->k + kr) * q->k + ks;
                    acc += (double)x[xi] * w[wi];
                  }
            size_t yi = q->cl ? ((((size_t)b * out[0] + z) * out[1] + r) * out[2] + s) * q->o + o
                              : ((((size_t)b * q->o + o) * out[0] + z) * out[1] + r) * out[2] + s;
            double d = fabs(acc - y[yi]);
            worst = d > worst ? d : worst;
            scale = fabs(acc) > scale ? fabs(acc) : scale;
          }
  expect_close(worst, scale, "3-D convolution", text);
  free(x);
  free(w);
  free(y);
  vkhlo_executable_destroy(exe);
}

static void three_d(void **state) {
  static const conv3d_case_t cases[] = {
      {true, 1, 4, 5, 6, 7, 8, 3, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, false},   /* NDHWC, same size */
      {false, 2, 3, 9, 7, 6, 5, 3, {2, 1, 2}, {1, 0, 1}, {0, 1, 2}, {2, 1, 1}, false},  /* NCDHW, strided, dilated */
      {true, 1, 3, 6, 5, 5, 4, 2, {1, 2, 1}, {-1, 0, 1}, {2, 1, 0}, {1, 1, 2}, true},   /* depth reversed, cropped */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) conv3d_case(state, &cases[i]);
}

/* A depthwise weight gradient (JAX's transpose of a depthwise convolution
 * in its rhs: batch_group_count = channels; codegen/expand.c multiplies
 * each position's window by the gradient and reduces) against a direct
 * sum in double: NHWC as JAX writes it ([f, 0, 1, b]x[i, 0, 1, o]->[0, 1,
 * b, f]) or NCHW ([f, b, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]); n x c input of
 * h x w, gradient of gh x gw, the forward stride |d| (the rhs dilation
 * here), padding (lo, hi); a k x k result. */
static void depthwise_grad_case(void **state, bool nhwc, int n, int c, int h, int w, int gh, int gw, int d, int lo,
                                int hi) {
  const contexts_t *cs = *state;
  int kh = h + lo + hi - (gh - 1) * d, kw = w + lo + hi - (gw - 1) * d;
  char xt[64], gt[64], yt[64], window[128], text[2048];
  if (nhwc) {
    snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dxf32>", n, h, w, c);
    snprintf(gt, sizeof gt, "tensor<%dx%dx%dx%dxf32>", n, gh, gw, c);
    snprintf(yt, sizeof yt, "tensor<%dx%dx1x%dxf32>", kh, kw, c);
  } else {
    snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dxf32>", n, c, h, w);
    snprintf(gt, sizeof gt, "tensor<%dx%dx%dx%dxf32>", n, c, gh, gw);
    snprintf(yt, sizeof yt, "tensor<1x%dx%dx%dxf32>", c, kh, kw);
  }
  snprintf(window, sizeof window, "pad = [[%d, %d], [%d, %d]], rhs_dilate = [%d, %d]", lo, hi, lo, hi, d, d);
  conv_program(text, xt, gt, yt,
               nhwc ? "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]" : "[f, b, 0, 1]x[i, o, 0, 1]->[b, f, 0, 1]", window, 1,
               c);
  size_t nx = (size_t)n * c * h * w, ng = (size_t)n * c * gh * gw;
  float *x = malloc(nx * sizeof *x), *g = malloc(ng * sizeof *g);
  uint32_t seed = 11;
  for (size_t i = 0; i < nx; i++) x[i] = (float)test_uniform(&seed);
  for (size_t i = 0; i < ng; i++) g[i] = (float)test_uniform(&seed);
  vkhlo_executable_t *exe = compile(cs->ctx, text);
  for (int i = 0; i < exe->kernel_count; i++) /* no per-element convolution left */
    if (strstr(exe->kernels[i].name, "convolution")) fail_msg("kernel %s in:\n%s", exe->kernels[i].name, text);
  int64_t count;
  float *y = run_xw(cs->ctx, exe, x, g, &count);
  assert_int_equal(count, (int64_t)kh * kw * c);
  double worst = 0, scale = 0;
  for (int ch = 0; ch < c; ch++)
    for (int ky = 0; ky < kh; ky++)
      for (int kx = 0; kx < kw; kx++) {
        double acc = 0;
        for (int b = 0; b < n; b++)
          for (int gy = 0; gy < gh; gy++)
            for (int gx = 0; gx < gw; gx++) {
              int py = ky + gy * d - lo, px = kx + gx * d - lo;
              if (py < 0 || py >= h || px < 0 || px >= w) continue;
              size_t xi = nhwc ? (((size_t)b * h + py) * w + px) * c + ch : (((size_t)b * c + ch) * h + py) * w + px;
              size_t gi = nhwc ? (((size_t)b * gh + gy) * gw + gx) * c + ch : (((size_t)b * c + ch) * gh + gy) * gw + gx;
              acc += (double)x[xi] * g[gi];
            }
        size_t yi = nhwc ? ((size_t)ky * kw + kx) * c + ch : ((size_t)ch * kh + ky) * kw + kx;
        double e = fabs(acc - y[yi]);
        worst = e > worst ? e : worst;
        scale = fabs(acc) > scale ? fabs(acc) : scale;
      }
  expect_close(worst, scale, "depthwise weight gradient", text);
  free(x);
  free(g);
  free(y);
  vkhlo_executable_destroy(exe);
}

/* A grouped weight gradient (batch_group_count G with B/G lhs "batches"
 * and O/G output features per group; codegen/expand.c runs a batched
 * dot_general per position) against a direct sum in double: NHWC as JAX
 * writes it, n x h x w x (G * bg) input, n x gh x gw x (G * og) gradient,
 * a 3 x 3 result per group pair. */
static void grouped_gradient(void **state) {
  const contexts_t *cs = *state;
  enum { N = 2, H = 10, W = 9, G = 4, BG = 2, OG = 3, C = G * BG, O = G * OG, K = 3 };
  char xt[64], gt[64], yt[64], text[2048];
  snprintf(xt, sizeof xt, "tensor<%dx%dx%dx%dxf32>", N, H, W, C);
  snprintf(gt, sizeof gt, "tensor<%dx%dx%dx%dxf32>", N, H, W, O);
  snprintf(yt, sizeof yt, "tensor<%dx%dx%dx%dxf32>", K, K, BG, O);
  conv_program(text, xt, gt, yt, "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]", "pad = [[1, 1], [1, 1]]", 1, G);
  float *x = malloc(sizeof(float) * N * H * W * C), *g = malloc(sizeof(float) * N * H * W * O);
  uint32_t seed = 13;
  for (int i = 0; i < N * H * W * C; i++) x[i] = (float)test_uniform(&seed);
  for (int i = 0; i < N * H * W * O; i++) g[i] = (float)test_uniform(&seed);
  vkhlo_executable_t *exe = compile(cs->ctx, text);
  for (int i = 0; i < exe->kernel_count; i++) /* no per-element convolution left */
    if (strstr(exe->kernels[i].name, "convolution")) fail_msg("kernel %s in:\n%s", exe->kernels[i].name, text);
  int64_t count;
  float *y = run_xw(cs->ctx, exe, x, g, &count);
  assert_int_equal(count, K * K * BG * O);
  double worst = 0, scale = 0;
  for (int ky = 0; ky < K; ky++)
    for (int kx = 0; kx < K; kx++)
      for (int b = 0; b < BG; b++)
        for (int o = 0; o < O; o++) {
          double acc = 0;
          for (int n = 0; n < N; n++)
            for (int gy = 0; gy < H; gy++)
              for (int gx = 0; gx < W; gx++) {
                int py = ky + gy - 1, px = kx + gx - 1;
                if (py < 0 || py >= H || px < 0 || px >= W) continue;
                acc += (double)x[((n * H + py) * W + px) * C + (o / OG) * BG + b] * g[((n * H + gy) * W + gx) * O + o];
              }
          double e = fabs(acc - y[((ky * K + kx) * BG + b) * O + o]);
          worst = e > worst ? e : worst;
          scale = fabs(acc) > scale ? fabs(acc) : scale;
        }
  expect_close(worst, scale, "grouped weight gradient", text);
  free(x);
  free(g);
  free(y);
  vkhlo_executable_destroy(exe);
}

static void depthwise_gradients(void **state) {
  depthwise_grad_case(state, true, 2, 16, 12, 11, 12, 11, 1, 1, 1);  /* a 3x3 stride-1 layer's */
  depthwise_grad_case(state, false, 3, 5, 13, 13, 6, 6, 2, 1, 0);   /* NCHW, a 3x3 stride-2 layer's */
  depthwise_grad_case(state, true, 1, 8, 9, 10, 7, 8, 1, 0, -1);    /* cropped: 2x2 taps */
  /* f16: summed in f32 and rounded once, as the f32 convolution of the
   * same values converted is (expanded the same way, checked above) */
  char text[2048], ref[2048];
  conv_program(text, "tensor<2x10x10x8xf16>", "tensor<2x10x10x8xf16>", "tensor<3x3x1x8xf16>",
               "[f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f]", "pad = [[1, 1], [1, 1]]", 1, 8);
  snprintf(ref, sizeof ref,
           "func.func @main(%%x: tensor<2x10x10x8xf16>, %%w: tensor<2x10x10x8xf16>) -> tensor<3x3x1x8xf16> {\n"
           "  %%a = stablehlo.convert %%x : (tensor<2x10x10x8xf16>) -> tensor<2x10x10x8xf32>\n"
           "  %%b = stablehlo.convert %%w : (tensor<2x10x10x8xf16>) -> tensor<2x10x10x8xf32>\n"
           "  %%y = stablehlo.convolution(%%a, %%b) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = "
           "{pad = [[1, 1], [1, 1]]} {batch_group_count = 8 : i64, feature_group_count = 1 : i64} : "
           "(tensor<2x10x10x8xf32>, tensor<2x10x10x8xf32>) -> tensor<3x3x1x8xf32>\n"
           "  %%r = stablehlo.convert %%y : (tensor<3x3x1x8xf32>) -> tensor<3x3x1x8xf16>\n"
           "  return %%r : tensor<3x3x1x8xf16>\n}\n");
  const contexts_t *cs = *state;
  compare_executables(compile(cs->ctx, text), cs->ctx, compile(cs->ctx, ref), cs->ctx, text);
}

/* A convolution whose result is reshaped (squeezing a batch of one, as a
 * model returning y[0] does; with a bias add between) keeps its library
 * kernel: the convolution is not fused into a cluster whose root has
 * other dimensions, whose epilogue the kernel could not take. */
static void squeezed(void **state) {
  compare(state,
          "func.func @main(%x: tensor<1x6x6x5xf32>, %w: tensor<3x3x5x16xf32>, %b: tensor<1x6x6x16xf32>) -> "
          "tensor<6x6x16xf32> {\n"
          "  %y = stablehlo.convolution(%x, %w) dim_numbers = " NHWC ", window = {pad = [[1, 1], [1, 1]]}"
          " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
          " (tensor<1x6x6x5xf32>, tensor<3x3x5x16xf32>) -> tensor<1x6x6x16xf32>\n"
          "  %s = stablehlo.add %y, %b : tensor<1x6x6x16xf32>\n"
          "  %r = stablehlo.reshape %s : (tensor<1x6x6x16xf32>) -> tensor<6x6x16xf32>\n"
          "  return %r : tensor<6x6x16xf32>\n}\n",
          true);
}

static void negative_padding_and_reversal(void **state) {
  conv_case(state, "tensor<1x3x10x10xf32>", "tensor<4x3x3x3xf32>", "tensor<1x4x6x9xf32>", NCHW,
            "pad = [[-1, -1], [1, 0]], reverse = [true, false]", 1, 1, true);
}

static void feature_groups_and_depthwise(void **state) {
  /* 2 groups: 6 input features, 3 per group; 4 outputs, 2 per group */
  conv_case(state, "tensor<2x6x7x7xf32>", "tensor<4x3x3x3xf32>", "tensor<2x4x7x7xf32>", NCHW,
            "pad = [[1, 1], [1, 1]]", 2, 1, true);
  /* depthwise (JAX: NHWC, HWIO with I = 1), channel multiplier 1 and 2 */
  conv_case(state, "tensor<1x9x9x8xf32>", "tensor<3x3x1x8xf32>", "tensor<1x5x5x8xf32>", NHWC,
            "stride = [2, 2], pad = [[1, 1], [1, 1]]", 8, 1, true);
  conv_case(state, "tensor<1x8x6x6xf32>", "tensor<16x1x3x3xf32>", "tensor<1x16x6x6xf32>", NCHW,
            "pad = [[1, 1], [1, 1]]", 8, 1, true);
  /* depthwise with rhs dilation and an odd width (11: a full segment of 8
   * and an overlapping last one), lhs dilation and reversal */
  conv_case(state, "tensor<2x6x11x13xf32>", "tensor<6x1x3x3xf32>", "tensor<2x6x9x11xf32>", NCHW,
            "pad = [[1, 1], [1, 1]], rhs_dilate = [2, 2]", 6, 1, true);
  conv_case(state, "tensor<1x4x5x5xf32>", "tensor<4x1x3x3xf32>", "tensor<1x4x9x3xf32>", NCHW,
            "pad = [[1, 1], [0, 0]], lhs_dilate = [2, 1], stride = [1, 1], reverse = [false, true]", 4, 1, true);
}

static void one_by_one_and_1d(void **state) {
  conv_case(state, "tensor<1x16x7x7xf32>", "tensor<24x16x1x1xf32>", "tensor<1x24x7x7xf32>", NCHW, "", 1, 1, true);
  conv_case(state, "tensor<1x16x13x13xf32>", "tensor<20x16x1x1xf32>", "tensor<1x20x7x7xf32>", NCHW,
            "stride = [2, 2]", 1, 1, true);
  conv_case(state, "tensor<2x17x5xf32>", "tensor<3x5x6xf32>", "tensor<2x17x6xf32>", "[b, 0, f]x[0, i, o]->[b, 0, f]",
            "pad = [[1, 1]]", 1, 1, true);
}

/* Whether some kernel of |exe| has |define| (e.g. "#define CONV_ROWS 1"). */
static bool kernel_has(const vkhlo_executable_t *exe, const char *define) {
  for (int i = 0; i < exe->kernel_count; i++)
    if (strstr(exe->kernels[i].glsl, define)) return true;
  return false;
}

/* conv_case, then (on CPU devices) checks that the kernel took the variant
 * of conv2d_cpu.comp named by each of |defines| (NULL-terminated), and
 * that the general kernel ($VKHLO_CONV_KERNEL=generic, the baseline of
 * bench_conv) agrees with the per-element one too. */
static void variant_case(void **state, const char *x, const char *w, const char *y, const char *dims,
                         const char *window, const char *const *defines) {
  conv_case(state, x, w, y, dims, window, 1, 1, true);
  const contexts_t *c = *state;
  vkhlo_context_t *ctx = c->ctx;
  if (!on_cpu(ctx)) return;
  char text[2048];
  conv_program(text, x, w, y, dims, window, 1, 1);
  vkhlo_executable_t *exe = compile(ctx, text);
  /* the word variants need 64-bit integers (and RHS_WORDS shuffles): not
   * in restricted mode ($VKHLO_RESTRICTED=1), where the cases that expect
   * them are only compared */
  bool words = ctx->target.shader_int64 && ctx->target.subgroup_shuffle, check = true;
  for (int i = 0; defines[i]; i++) check = check && (words || !strstr(defines[i], "WORDS"));
  for (int i = 0; check && defines[i]; i++)
    if (weight_words_expected(ctx, defines[i]) && !kernel_has(exe, defines[i]))
      fail_msg("%s: the kernel lacks '%s'", x, defines[i]);
  vkhlo_executable_destroy(exe);
  exe = compile(c->generic, text);
  for (int i = 0; defines[i]; i++)
    if (strstr(defines[i], "WORDS") && kernel_has(exe, defines[i])) fail_msg("generic kernel with '%s'", defines[i]);
  vkhlo_executable_destroy(exe);
  compare_on(c, c->generic, text, true);
}

/* The layer-specific variants of conv2d_cpu.comp (emit_conv.c picks
 * them from the shapes and layouts): row tiles, 64-bit words for NHWC
 * inputs, weights and results and for NCHW 1x1 inputs, tiles of 7 pixels,
 * partial and overlapping tiles. */
static void layer_variants(void **state) {
  /* NHWC 1x1, 8-feature words in and out, weights as shuffled words;
   * 36 pixels: the last tile of 8 is partial */
  static const char *const nhwc_1x1[] = {"#define LHS_WORDS 1", "#define RHS_WORDS 1", "#define OUT_WORDS 1", NULL};
  variant_case(state, "tensor<2x6x6x16xf32>", "tensor<1x1x16x16xf32>", "tensor<2x6x6x16xf32>", NHWC, "", nhwc_1x1);
  /* NHWC 3x3 padded, rows of 11: a tile of 8 and an overlapping one */
  static const char *const nhwc_3x3[] = {"#define CONV_ROWS 1", "#define RHS_WORDS 1", "#define OUT_WORDS 1",
                                         "#define CONV_CHECK 1", NULL};
  variant_case(state, "tensor<1x10x11x8xf32>", "tensor<3x3x8x16xf32>", "tensor<1x10x11x16xf32>", NHWC,
               "pad = [[1, 1], [1, 1]]", nhwc_3x3);
  /* NHWC 3x3 without padding (no tap checks), rows of 7 */
  static const char *const nhwc_valid[] = {"#define CONV_ROWS 1", "#define CONV_CHECK 0", "#define TILE_P 7", NULL};
  variant_case(state, "tensor<1x9x9x8xf32>", "tensor<3x3x8x16xf32>", "tensor<1x7x7x16xf32>", NHWC, "", nhwc_valid);
  /* NCHW 1x1 of stride 1 over 8x8: 8 consecutive pixels per load */
  static const char *const nchw_1x1[] = {"#define LHS_WORDS 2", "#define OUT_WORDS 2", NULL};
  variant_case(state, "tensor<1x12x8x8xf32>", "tensor<16x12x1x1xf32>", "tensor<1x16x8x8xf32>", NCHW, "", nchw_1x1);
  /* NCHW 1x1 over 6x6 (36 pixels, a multiple of 4 but not of 8): 4 per load */
  static const char *const nchw_36[] = {"#define LHS_WORDS 2", "#define LHS_PXW 4", "#define TILE_P 4",
                                        "#define OUT_WORDS 2", NULL};
  variant_case(state, "tensor<2x8x6x6xf32>", "tensor<32x8x1x1xf32>", "tensor<2x32x6x6xf32>", NCHW, "", nchw_36);
  /* NCHW 3x3 stride 2 on 14x14 -> 7x7: rows of 7 */
  static const char *const nchw_s2[] = {"#define CONV_ROWS 1", "#define TILE_P 7", NULL};
  variant_case(state, "tensor<1x8x14x14xf32>", "tensor<16x8x3x3xf32>", "tensor<1x16x7x7xf32>", NCHW,
               "stride = [2, 2], pad = [[1, 1], [1, 1]]", nchw_s2);
  /* NCHW 1x1 over 7x7 (49 pixels): flattened tiles of 7 */
  static const char *const nchw_49[] = {"#define CONV_ROWS 0", "#define TILE_P 7", NULL};
  variant_case(state, "tensor<1x16x7x7xf32>", "tensor<32x16x1x1xf32>", "tensor<1x32x7x7xf32>", NCHW, "", nchw_49);
  /* rows with rhs dilation, lhs dilation and reversal */
  static const char *const rows[] = {"#define CONV_ROWS 1", NULL};
  variant_case(state, "tensor<1x9x12x8xf32>", "tensor<3x3x8x16xf32>", "tensor<1x9x8x16xf32>", NHWC,
               "pad = [[2, 2], [0, 0]], rhs_dilate = [2, 2]", rows);
  variant_case(state, "tensor<1x4x6x9xf32>", "tensor<16x4x3x3xf32>", "tensor<1x16x11x9xf32>", NCHW,
               "pad = [[1, 1], [1, 1]], lhs_dilate = [2, 1], reverse = [true, true]", rows);
}

/* One convolution (|fgc| feature groups) compared against the per-element
 * kernel; on CPU devices whose target reads kernels through texel views
 * (codegen_declare_word_view; not under $VKHLO_TEXEL_WORDS=0, the
 * e2e_conv_storage_words run, nor in restricted mode) the library kernel
 * must also declare each of |views|, otherwise no texel view at all. */
/* conv_case (the library kernel taken), then, on CPU devices, the same
 * program compiled on the default context for its kernels' text (NULL
 * elsewhere). */
static vkhlo_executable_t *compared_then_compiled(void **state, const char *x, const char *w, const char *y,
                                                  const char *dims, const char *window, int fgc) {
  conv_case(state, x, w, y, dims, window, fgc, 1, true);
  const contexts_t *c = *state;
  if (!on_cpu(c->ctx)) return NULL;
  char text[2048];
  conv_program(text, x, w, y, dims, window, fgc, 1);
  return compile(c->ctx, text);
}

static void texel_case(void **state, const char *x, const char *w, const char *y, const char *dims,
                       const char *window, int fgc, const char *const *views) {
  const contexts_t *c = *state;
  vkhlo_executable_t *exe = compared_then_compiled(state, x, w, y, dims, window, fgc);
  if (!exe) return;
  if (c->ctx->target.texel_words) {
    for (int i = 0; views[i]; i++)
      if (weight_words_expected(c->ctx, views[i]) && !kernel_has(exe, views[i]))
        fail_msg("%s: the kernel lacks '%s'", x, views[i]);
  } else if (kernel_has(exe, "usamplerBuffer")) {
    fail_msg("%s: a texel view without texel_words", x);
  }
  vkhlo_executable_destroy(exe);
}

/* The input and the weights read through texel views (declare_conv_views
 * in emit_conv.c): words through RGBA32UI views, scalar reads through
 * R32UI views, bound after the storage bindings in operand order. */
static void texel_views(void **state) {
  /* NHWC 1x1: input words (two texels each), the weights' uint64_t words
   * as halves of u64vec2 texels */
  static const char *const nhwc_words[] = {"uniform usamplerBuffer in0t;", "uniform usamplerBuffer in1t;",
                                           "conv_word_half(in1w_at(", NULL};
  texel_case(state, "tensor<2x6x6x16xf32>", "tensor<1x1x16x16xf32>", "tensor<2x6x6x16xf32>", NHWC, "", 1,
             nhwc_words);
  /* NCHW 3x3 padded: scalar reads of both, taps in the padding included */
  static const char *const nchw_elements[] = {"layout(set = 0, binding = 3) uniform usamplerBuffer in0s;",
                                              "layout(set = 0, binding = 4) uniform usamplerBuffer in1s;", NULL};
  texel_case(state, "tensor<1x5x9x7xf32>", "tensor<12x5x3x3xf32>", "tensor<1x12x9x7xf32>", NCHW,
             "pad = [[1, 1], [1, 1]]", 1, nchw_elements);
  /* NCHW 1x1 over 6x6: 4 pixels per u64vec2 word, one texel each; the
   * weights by elements, bound after the word view */
  static const char *const nchw_pairs[] = {"#define in0w_at(i) VK_TEXEL_WORD2(in0t, i)",
                                           "layout(set = 0, binding = 4) uniform usamplerBuffer in1s;", NULL};
  texel_case(state, "tensor<2x8x6x6xf32>", "tensor<32x8x1x1xf32>", "tensor<2x32x6x6xf32>", NCHW, "", 1, nchw_pairs);
  /* depthwise, padded */
  static const char *const depthwise[] = {"uniform usamplerBuffer in0s;", "uniform usamplerBuffer in1s;", NULL};
  texel_case(state, "tensor<1x8x9x9xf32>", "tensor<8x1x3x3xf32>", "tensor<1x8x9x9xf32>", NCHW,
             "pad = [[1, 1], [1, 1]]", 8, depthwise);
}

static void left_to_the_old_path(void **state) {
  /* batch groups */
  conv_case(state, "tensor<4x3x5x5xf32>", "tensor<4x3x3x3xf32>", "tensor<2x4x3x3xf32>", NCHW, "", 1, 2, false);
  /* f16 with batch groups */
  conv_case(state, "tensor<4x3x5x5xf16>", "tensor<4x3x3x3xf16>", "tensor<2x4x3x3xf16>", NCHW, "", 1, 2, false);
}

/* A depthwise convolution (|fgc| groups) compared against the per-element
 * kernel; on CPU devices with 64-bit integers its kernel must move the
 * features as words (conv_depthwise_cpu.comp's CONV_WORDS) exactly when
 * |words|, through texel views where the target has them. */
static void depthwise_case(void **state, const char *x, const char *w, const char *y, const char *dims,
                           const char *window, int fgc, bool words) {
  const contexts_t *c = *state;
  vkhlo_executable_t *exe = compared_then_compiled(state, x, w, y, dims, window, fgc);
  if (!exe) return;
  assert_int_equal(kernels_from(exe, "conv_depthwise_cpu.comp"), 1);
  bool expect = words && c->ctx->target.shader_int64;
  if (!kernel_has(exe, expect ? "#define CONV_WORDS 1" : "#define CONV_WORDS 0"))
    fail_msg("%s x %s: expected CONV_WORDS %d", x, w, expect);
  if (expect && c->ctx->target.texel_words &&
      !(kernel_has(exe, "#define CONV_LHS_W_AT(i) in0w_at(i)") && kernel_has(exe, "#define CONV_RHS_W_AT(i) in1w_at(i)")))
    fail_msg("%s x %s: words not read through texel views", x, w);
  vkhlo_executable_destroy(exe);
}

/* Depthwise convolutions as JAX exports them (NHWC, HWIO weights [KH, KW,
 * 1, C]) with 8 | C take 8 features per word: padded, stride 2 (MobileNet's
 * downsampling), an odd width (a full tile and an overlapping one), rhs
 * and lhs dilation with reversal, batch 2, 1-D; a channel multiplier of 2,
 * C = 12 and NCHW keep the scalar kernel. */
static void depthwise_words(void **state) {
  static const struct {
    const char *x, *w, *y, *dims, *window;
    int groups;
    bool words;
  } cases[] = {
      {"1x9x9x16", "3x3x1x16", "1x9x9x16", NHWC, "pad = [[1, 1], [1, 1]]", 16, true},
      {"1x12x12x24", "3x3x1x24", "1x6x6x24", NHWC, "stride = [2, 2], pad = [[0, 1], [0, 1]]", 24, true},
      {"2x7x11x8", "3x3x1x8", "2x7x11x8", NHWC, "pad = [[1, 1], [1, 1]]", 8, true},
      {"1x8x10x8", "3x3x1x8", "1x4x6x8", NHWC, "rhs_dilate = [2, 2]", 8, true},
      {"1x5x5x16", "3x3x1x16", "1x9x3x16", NHWC, "pad = [[1, 1], [0, 0]], lhs_dilate = [2, 1], reverse = [false, true]",
       16, true},
      {"2x17x8", "5x1x8", "2x17x8", "[b, 0, f]x[0, i, o]->[b, 0, f]", "pad = [[2, 2]]", 8, true},
      {"1x6x6x8", "3x3x1x16", "1x6x6x16", NHWC, "pad = [[1, 1], [1, 1]]", 8, false},
      {"1x6x6x12", "3x3x1x12", "1x6x6x12", NHWC, "pad = [[1, 1], [1, 1]]", 12, false},
      {"1x16x6x6", "16x1x3x3", "1x16x6x6", NCHW, "pad = [[1, 1], [1, 1]]", 16, false},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char x[64], w[64], y[64];
    snprintf(x, sizeof x, "tensor<%sxf32>", cases[i].x);
    snprintf(w, sizeof w, "tensor<%sxf32>", cases[i].w);
    snprintf(y, sizeof y, "tensor<%sxf32>", cases[i].y);
    depthwise_case(state, x, w, y, cases[i].dims, cases[i].window, cases[i].groups, cases[i].words);
  }
  /* a fused epilogue (folded batch norm and ReLU6, as in MobileNet) on the words */
  static const char fused[] =
      "func.func @main(%x: tensor<1x10x10x16xf32>, %w: tensor<3x3x1x16xf32>, %s: tensor<16xf32>, %b: tensor<16xf32>)"
      " -> tensor<1x5x5x16xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [2, 2], pad = [[0, 1], [0, 1]]} {batch_group_count = 1 : i64, feature_group_count = 16 : i64}"
      " : (tensor<1x10x10x16xf32>, tensor<3x3x1x16xf32>) -> tensor<1x5x5x16xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [3] : (tensor<16xf32>) -> tensor<1x5x5x16xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [3] : (tensor<16xf32>) -> tensor<1x5x5x16xf32>\n"
      "  %m = stablehlo.multiply %y, %sb : tensor<1x5x5x16xf32>\n"
      "  %a = stablehlo.add %m, %bb : tensor<1x5x5x16xf32>\n"
      "  %lo = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %hi = stablehlo.constant dense<0.125> : tensor<f32>\n"
      "  %r = stablehlo.clamp %lo, %a, %hi : (tensor<f32>, tensor<1x5x5x16xf32>, tensor<f32>) -> tensor<1x5x5x16xf32>\n"
      "  return %r : tensor<1x5x5x16xf32>\n}\n";
  compare(state, fused, true);
  const contexts_t *c = *state;
  if (on_cpu(c->ctx) && c->ctx->target.shader_int64) {
    vkhlo_executable_t *exe = compile(c->ctx, fused);
    assert_true(kernel_has(exe, "#define CONV_WORDS 1"));
    assert_true(kernel_has(exe, "vk_conv_epilogue"));
    vkhlo_executable_destroy(exe);
  }
}

/* A 3x3 NCHW convolution with a fused bias add and relu, all of element
 * type |t|, written into |text| (2048 bytes). */
static const char *bias_relu(char *text, const char *t) {
  snprintf(text, 2048,
           "func.func @main(%%x: tensor<1x6x9x9x%s>, %%w: tensor<16x6x3x3x%s>, %%b: tensor<16x%s>) -> tensor<1x16x9x9x%s> {\n"
           "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],"
           " window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
           " : (tensor<1x6x9x9x%s>, tensor<16x6x3x3x%s>) -> tensor<1x16x9x9x%s>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : (tensor<16x%s>) -> tensor<1x16x9x9x%s>\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<1x16x9x9x%s>\n"
           "  %%s = stablehlo.add %%y, %%bb : tensor<1x16x9x9x%s>\n"
           "  %%r = stablehlo.maximum %%s, %%z : tensor<1x16x9x9x%s>\n"
           "  return %%r : tensor<1x16x9x9x%s>\n}\n",
           t, t, t, t, t, t, t, t, t, t, t, t, t);
  return text;
}

/* f16 and bf16 convolutions take the kernels by elements (emit_conv.c
 * "16-bit convolutions"): NCHW 3x3, NHWC stride 2, a 1x1 NHWC (which in
 * f32 reads words), depthwise, f16 operands into f32, and a fused bias +
 * relu in bf16; every result within one ulp of the per-element kernel's. */
static void sixteen_bit(void **state) {
  conv_case(state, "tensor<1x6x9x9xf16>", "tensor<16x6x3x3xf16>", "tensor<1x16x9x9xf16>", NCHW,
            "pad = [[1, 1], [1, 1]]", 1, 1, true);
  conv_case(state, "tensor<1x9x9x8xbf16>", "tensor<3x3x8x16xbf16>", "tensor<1x4x4x16xbf16>", NHWC,
            "stride = [2, 2]", 1, 1, true);
  conv_case(state, "tensor<1x6x6x16xf16>", "tensor<1x1x16x16xf16>", "tensor<1x6x6x16xf16>", NHWC, "", 1, 1, true);
  conv_case(state, "tensor<1x8x9x9xbf16>", "tensor<8x1x3x3xbf16>", "tensor<1x8x9x9xbf16>", NCHW,
            "pad = [[1, 1], [1, 1]]", 8, 1, true);
  conv_case(state, "tensor<1x6x9x9xf16>", "tensor<16x6x3x3xf16>", "tensor<1x16x7x7xf32>", NCHW, "", 1, 1, true);
  char text[2048];
  compare(state, bias_relu(text, "bf16"), true);
}

/* On CPU devices whose target has texel views, |text|'s kernels declare
 * every one of |views|. */
static void expect_views(void **state, const char *text, const char *const *views) {
  const contexts_t *c = *state;
  if (!on_cpu(c->ctx) || !c->ctx->target.texel_words) return;
  vkhlo_executable_t *exe = compile(c->ctx, text);
  for (int i = 0; views[i]; i++)
    if (!kernel_has(exe, views[i])) fail_msg("the kernel lacks '%s':\n%s", views[i], text);
  vkhlo_executable_destroy(exe);
}

/* Output fusions: the epilogue runs inside the kernel. */
/* A 1x1 NHWC convolution of at least 32 output features is a GEMM on CPU
 * devices (codegen/expand.c, "pointwise convolutions"): one kernel from
 * gemm_cpu.comp with the batch-norm and relu epilogue fused, no conv
 * kernel, against the per-element convolution, also with stride 2; with
 * 16 features (and in NCHW, layer_variants) the conv kernel stays.  A 3x3
 * window over at most 256 output pixels is nine products summed. */
static void pointwise_as_gemm(void **state) {
  const contexts_t *c = *state;
  static const char text[] =
      "func.func @main(%x: tensor<2x7x9x24xf32>, %w: tensor<1x1x24x48xf32>, %g: tensor<48xf32>, %h: tensor<48xf32>)"
      " -> tensor<2x7x9x48xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<2x7x9x24xf32>, tensor<1x1x24x48xf32>) -> tensor<2x7x9x48xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [3] : (tensor<48xf32>) -> tensor<2x7x9x48xf32>\n"
      "  %hb = stablehlo.broadcast_in_dim %h, dims = [3] : (tensor<48xf32>) -> tensor<2x7x9x48xf32>\n"
      "  %m = stablehlo.multiply %y, %gb : tensor<2x7x9x48xf32>\n"
      "  %s = stablehlo.add %m, %hb : tensor<2x7x9x48xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<2x7x9x48xf32>\n"
      "  %o = stablehlo.maximum %s, %z : tensor<2x7x9x48xf32>\n"
      "  return %o : tensor<2x7x9x48xf32>\n}\n";
  vkhlo_executable_t *a = compile(c->ctx, text), *b = compile(c->elemental, text);
  if (on_cpu(c->ctx)) {
    assert_int_equal(a->kernel_count, 1);
    assert_int_equal(kernels_from(a, "gemm_cpu.comp"), 1);
    assert_int_equal(library_kernels(a), 0);
  }
  assert_int_equal(library_kernels(b), 0);
  compare_executables(a, c->ctx, b, c->elemental, text);
  /* a projection shortcut's stride 2 (odd sizes): the lhs's strided view */
  static const char strided[] =
      "func.func @main(%x: tensor<1x9x11x16xf32>, %w: tensor<1x1x16x32xf32>) -> tensor<1x5x6x32xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x9x11x16xf32>, tensor<1x1x16x32xf32>) -> tensor<1x5x6x32xf32>\n"
      "  return %y : tensor<1x5x6x32xf32>\n}\n";
  a = compile(c->ctx, strided), b = compile(c->elemental, strided);
  if (on_cpu(c->ctx)) {
    assert_int_equal(a->kernel_count, 1);
    assert_int_equal(kernels_from(a, "gemm_cpu.comp"), 1);
  }
  compare_executables(a, c->ctx, b, c->elemental, strided);
  /* 3x3 windows over few pixels: a product per tap, summed (padded; then
   * strided with padding on one side, and rhs-dilated) */
  static const char *const windows[] = {
      "pad = [[1, 1], [1, 1]]", "stride = [2, 2], pad = [[0, 1], [0, 1]]", "pad = [[2, 2], [2, 2]], rhs_dilate = [2, 2]"};
  static const char *const outs[] = {"tensor<1x7x9x40xf32>", "tensor<1x6x7x40xf32>", "tensor<1x7x9x40xf32>"};
  for (int i = 0; i < 3; i++) {
    char text3[2048];
    conv_program(text3, i == 1 ? "tensor<1x13x15x24xf32>" : "tensor<1x7x9x24xf32>", "tensor<3x3x24x40xf32>", outs[i],
                 NHWC, windows[i], 1, 1);
    a = compile(c->ctx, text3), b = compile(c->elemental, text3);
    if (on_cpu(c->ctx)) {
      assert_int_equal(kernels_from(a, "gemm_cpu.comp"), 9);
      assert_int_equal(library_kernels(a), 0);
    }
    compare_executables(a, c->ctx, b, c->elemental, text3);
  }
}

static void fused_epilogues(void **state) {
  char text[2048];
  compare(state, bias_relu(text, "f32"), true);
  /* batch-norm scale/shift and a residual add, NHWC (the conv's operands
   * are not the fusion's first parameters) */
  static const char bn_residual[] =
      "func.func @main(%r: tensor<1x7x7x8xf32>, %g: tensor<8xf32>, %x: tensor<1x7x7x4xf32>, %h: tensor<8xf32>,"
      " %w: tensor<3x3x4x8xf32>) -> tensor<1x7x7x8xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x7x7x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x7x7x8xf32>\n"
      "  %gb = stablehlo.broadcast_in_dim %g, dims = [3] : (tensor<8xf32>) -> tensor<1x7x7x8xf32>\n"
      "  %hb = stablehlo.broadcast_in_dim %h, dims = [3] : (tensor<8xf32>) -> tensor<1x7x7x8xf32>\n"
      "  %m = stablehlo.multiply %y, %gb : tensor<1x7x7x8xf32>\n"
      "  %s = stablehlo.add %m, %hb : tensor<1x7x7x8xf32>\n"
      "  %t = stablehlo.add %s, %r : tensor<1x7x7x8xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<1x7x7x8xf32>\n"
      "  %o = stablehlo.maximum %t, %z : tensor<1x7x7x8xf32>\n"
      "  return %o : tensor<1x7x7x8xf32>\n}\n";
  compare(state, bn_residual, true);
  /* the epilogue's operands read through R32UI texel views where the
   * target has them (epilogue_reads in emit_conv.c): %r, %g, %h */
  static const char *const bn_views[] = {"uniform usamplerBuffer in0s;", "uniform usamplerBuffer in1s;",
                                         "uniform usamplerBuffer in3s;", NULL};
  expect_views(state, bn_residual, bn_views);
  /* NHWC 1x1 adding its own input: the input read in words by the
   * convolution and element by element by the epilogue (a view of each) */
  static const char self_residual[] =
      "func.func @main(%x: tensor<1x6x6x16xf32>, %w: tensor<1x1x16x16xf32>) -> tensor<1x6x6x16xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x6x6x16xf32>, tensor<1x1x16x16xf32>) -> tensor<1x6x6x16xf32>\n"
      "  %t = stablehlo.add %y, %x : tensor<1x6x6x16xf32>\n"
      "  return %t : tensor<1x6x6x16xf32>\n}\n";
  compare(state, self_residual, true);
  static const char *const self_views[] = {"uniform usamplerBuffer in0t;", "uniform usamplerBuffer in0s;", NULL};
  expect_views(state, self_residual, self_views);
  /* NCHW 1x1 with a residual add: the epilogue under the word stores of
   * consecutive pixels (OUT_WORDS 2) */
  static const char nchw_1x1_residual[] =
      "func.func @main(%x: tensor<1x8x8x8xf32>, %w: tensor<16x8x1x1xf32>, %r: tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],"
      " window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x8x8x8xf32>, tensor<16x8x1x1xf32>) -> tensor<1x16x8x8xf32>\n"
      "  %t = stablehlo.add %y, %r : tensor<1x16x8x8xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<1x16x8x8xf32>\n"
      "  %o = stablehlo.maximum %t, %z : tensor<1x16x8x8xf32>\n"
      "  return %o : tensor<1x16x8x8xf32>\n}\n";
  compare(state, nchw_1x1_residual, true);
}

/* Values worked out by hand: x = 1..16 as a 4x4 NCHW image, w = [[1, 0],
 * [0, -1]] for output 0 and all ones for output 1, stride 2, then + bias
 * [10, 0] and relu.  Output 0 is x[i][j] - x[i+1][j+1] = -5 everywhere
 * (+10 = 5); output 1 sums 2x2 blocks: 14, 22, 46, 54. */
static void hand_computed_on(vkhlo_context_t *ctx) {
  static const char text[] =
      "func.func @main(%x: tensor<1x1x4x4xf32>, %w: tensor<2x1x2x2xf32>, %b: tensor<2xf32>) -> tensor<1x2x2x2xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],"
      " window = {stride = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x1x4x4xf32>, tensor<2x1x2x2xf32>) -> tensor<1x2x2x2xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<2xf32>) -> tensor<1x2x2x2xf32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<1x2x2x2xf32>\n"
      "  %s = stablehlo.add %y, %bb : tensor<1x2x2x2xf32>\n"
      "  %r = stablehlo.maximum %s, %z : tensor<1x2x2x2xf32>\n"
      "  return %r : tensor<1x2x2x2xf32>\n}\n";
  vkhlo_executable_t *exe = compile(ctx, text);
  if (on_cpu(ctx)) assert_int_equal(library_kernels(exe), 1);
  float x[16], w[8] = {1, 0, 0, -1, 1, 1, 1, 1}, b[2] = {10, 0};
  for (int i = 0; i < 16; i++) x[i] = (float)(i + 1);
  const float *data[3] = {x, w, b};
  vkhlo_buffer_t *args[3];
  for (int i = 0; i < 3; i++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, data[i], &args[i]));
  }
  int64_t n;
  float *y = run(exe, 3, args, &n);
  static const float want[8] = {5, 5, 5, 5, 14, 22, 46, 54};
  assert_int_equal(n, 8);
  for (int i = 0; i < 8; i++)
    if (y[i] != want[i]) fail_msg("element %d: %g, want %g", i, y[i], want[i]);
  free(y);
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(args[i]);
  vkhlo_executable_destroy(exe);
}

/* ... with the default kernel and with conv_gpu.glsl */
static void hand_computed(void **state) {
  const contexts_t *c = *state;
  hand_computed_on(c->ctx);
  hand_computed_on(c->gpu);
}

/* Integer convolutions (CONV_INT): byte for byte the per-element
 * kernel's on random bits (sums that wrap): i8 into i32 NHWC, ui8 into
 * ui16 NCHW with stride and padding, i32 depthwise, i16 1x1, and a
 * quantized layer's epilogue (i8 into i32, converted to f32, scaled and
 * biased). */
static void integers(void **state) {
  conv_case(state, "tensor<1x9x9x8xi8>", "tensor<3x3x8x16xi8>", "tensor<1x9x9x16xi32>", NHWC,
            "pad = [[1, 1], [1, 1]]", 1, 1, true);
  conv_case(state, "tensor<1x6x9x9xui8>", "tensor<16x6x3x3xui8>", "tensor<1x16x4x4xui16>", NCHW,
            "stride = [2, 2]", 1, 1, true);
  conv_case(state, "tensor<1x8x9x9xi32>", "tensor<8x1x3x3xi32>", "tensor<1x8x9x9xi32>", NCHW,
            "pad = [[1, 1], [1, 1]]", 8, 1, true);
  conv_case(state, "tensor<1x6x6x16xi16>", "tensor<1x1x16x16xi16>", "tensor<1x6x6x16xi8>", NHWC, "", 1, 1, true);
  static const char quantized[] =
      "func.func @main(%x: tensor<1x6x9x9xi8>, %w: tensor<16x6x3x3xi8>, %s: tensor<16xf32>, %b: tensor<16xf32>)"
      " -> tensor<1x16x9x9xf32> {\n"
      "  %y = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],"
      " window = {pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64}"
      " : (tensor<1x6x9x9xi8>, tensor<16x6x3x3xi8>) -> tensor<1x16x9x9xi32>\n"
      "  %f = stablehlo.convert %y : (tensor<1x16x9x9xi32>) -> tensor<1x16x9x9xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<16xf32>) -> tensor<1x16x9x9xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<16xf32>) -> tensor<1x16x9x9xf32>\n"
      "  %m = stablehlo.multiply %f, %sb : tensor<1x16x9x9xf32>\n"
      "  %r = stablehlo.add %m, %bb : tensor<1x16x9x9xf32>\n"
      "  return %r : tensor<1x16x9x9xf32>\n}\n";
  compare(state, quantized, true);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(nchw_3x3_pad_odd),
      cmocka_unit_test(nhwc_stride2_asymmetric_pad),
      cmocka_unit_test(nchw_stride2_7x7_stem),
      cmocka_unit_test(rhs_and_lhs_dilation),
      cmocka_unit_test(negative_padding_and_reversal),
      cmocka_unit_test(lhs_dilation_phases),
      cmocka_unit_test(produced_operands),
      cmocka_unit_test(weight_gradients),
      cmocka_unit_test(three_d),
      cmocka_unit_test(depthwise_gradients),
      cmocka_unit_test(grouped_gradient),
      cmocka_unit_test(pointwise_as_gemm),
      cmocka_unit_test(squeezed),
      cmocka_unit_test(feature_groups_and_depthwise),
      cmocka_unit_test(depthwise_words),
      cmocka_unit_test(one_by_one_and_1d),
      cmocka_unit_test(layer_variants),
      cmocka_unit_test(texel_views),
      cmocka_unit_test(left_to_the_old_path),
      cmocka_unit_test(sixteen_bit),
      cmocka_unit_test(integers),
      cmocka_unit_test(fused_epilogues),
      cmocka_unit_test(hand_computed),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
