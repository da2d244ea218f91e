/*
 * The GEMM kernels of shaders/ (codegen/emit_gemm.c) against the elemental
 * dot: every program runs in three contexts, the default kernel choice
 * (gemm_cpu on lavapipe), VKHLO_GEMM=gpu (the shared-memory GPU kernel,
 * forced onto whatever device this is) and VKHLO_GEMM=off (one invocation
 * per element, the reference), on the same seeded inputs, and the results
 * must agree to f32 rounding.  Sizes that are not multiples of the tiles
 * (1x1x1, 7x13x5, 33x65x17), batch dimensions, permuted and multiple
 * contracting dimensions, a transposed operand fused as a prologue, a bias
 * + residual + relu epilogue, and the 64-bit-word loads (K and N multiples
 * of 8 but not of the tile).  Each case also says whether the GEMM kernel
 * must have been chosen, checked in the kernels' GLSL (dump_dir).  One
 * product is also checked against values computed here.  Integer products
 * and integer weights of float products must match the elemental dot
 * byte for byte on inputs of random bits.  All contexts run with the
 * validation layer on; any message fails.
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

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

enum { MODE_AUTO, MODE_GPU, MODE_OFF, MODES };
static const char *const mode_env[MODES] = {NULL, "gpu", "off"};

typedef struct fixture {
  vkhlo_context_t *ctx[MODES];
  /* when set, the default mode's GLSL must contain it on CPU devices (a
   * kernel path) */
  const char *cpu_needle, *cpu_needle2; /* the second one too, when set */
  /* 1: under VKHLO_GEMM=gpu the product must run as shaders/gemm_gpu.comp
   * split along k (codegen/expand.c, "split-K": a reduce of the parts,
   * whose add body is named expand_add_<type>); -1: whole; 0: not checked.
   * Checked with it: products of at most 16 rows take gemm_gpu.comp's
   * 16 x 256 tile (GEMM_TY 4), others the 64 x 64 one. */
  int gpu_split;
  bool gpu_skinny;
  /* when set, the VKHLO_GEMM=gpu kernels' GLSL must contain it */
  const char *gpu_needle;
  /* integer inputs: random bits of the whole range (integer products),
   * else the start indices of seeded_element */
  bool int_bits;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  const char *old = getenv("VKHLO_GEMM");
  char *saved = old ? strdup(old) : NULL;
  for (int m = 0; m < MODES; m++) {
    if (mode_env[m]) setenv("VKHLO_GEMM", mode_env[m], 1);
    else unsetenv("VKHLO_GEMM");
    vkhlo_context_options_t o;
    memset(&o, 0, sizeof o);
    o.enable_validation = true;
    vkhlo_status_t st = vkhlo_context_create(&o, &f->ctx[m]);
    if (st) {
      fprintf(stderr, "%s\n", vkhlo_status_message(st));
      vkhlo_status_free(st);
      return -1;
    }
  }
  if (saved) setenv("VKHLO_GEMM", saved, 1);
  else unsetenv("VKHLO_GEMM");
  free(saved);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  int messages = 0;
  for (int m = 0; m < MODES; m++) {
    messages += vkhlo_context_validation_message_count(f->ctx[m]);
    vkhlo_context_destroy(f->ctx[m]);
  }
  free(f);
  return messages == 0 ? 0 : -1;
}

/* Seeded input element |k| of type |t| into |dst|: f32 in [-0.5, 0.5);
 * f16 and bf16 as bit patterns of magnitude below 1 (random sign,
 * exponent and mantissa), and with |specials| every 11th element one of
 * NaN, +-infinity, the largest finite value, the smallest subnormal and
 * -0; integers with |int_bits| random bits (every value of the type,
 * products and sums that wrap), else start indices. */
static void seeded_element(vkhlo_element_type_t t, uint32_t *seed, int64_t k, bool specials, bool int_bits,
                           uint8_t *dst) {
  uint32_t r = (*seed = *seed * 1664525u + 1013904223u) >> 8;
  if (int_bits && (t == VKHLO_S4 || t == VKHLO_U4)) { /* a byte holding the 4-bit value */
    *dst = (uint8_t)(t == VKHLO_S4 ? (int8_t)((int)(r % 16) - 8) : (int8_t)(r % 16));
    return;
  }
  if (int_bits && t != VKHLO_F32 && t != VKHLO_F16 && t != VKHLO_BF16) {
    uint32_t v = r * 2654435761u;
    memcpy(dst, &v, vkhlo_element_type_size_bytes(t)); /* little-endian: the low bytes */
    return;
  }
  if (t == VKHLO_S32 || t == VKHLO_S64 || t == VKHLO_U32) { /* start indices: inside, at the edges, past them */
    static const int64_t starts[] = {-3, 0, 1, 2, 7, 1000};
    int64_t v = starts[r % 6];
    if (t == VKHLO_U32 && v < 0) v = 4000000000ll; /* past the end as an unsigned number */
    memcpy(dst, &v, t == VKHLO_S64 ? 8 : 4); /* little-endian */
    return;
  }
  if (t == VKHLO_F32) {
    float v = (float)r / (1 << 24) - 0.5f;
    memcpy(dst, &v, 4);
    return;
  }
  assert_true(t == VKHLO_F16 || t == VKHLO_BF16);
  bool half = t == VKHLO_F16;
  static const uint16_t special_f16[] = {0x7E00, 0x7C00, 0xFC00, 0x7BFF, 0x0001, 0x8000};
  static const uint16_t special_bf16[] = {0x7FC0, 0x7F80, 0xFF80, 0x7F7F, 0x0001, 0x8000};
  uint16_t bits;
  if (specials && k % 11 == 5) bits = (half ? special_f16 : special_bf16)[r % 6];
  else if (half) bits = (uint16_t)((r & 0x8000) | ((r >> 4) % 15) << 10 | (r & 0x3FF)); /* exponent 0..14 */
  else bits = (uint16_t)((r & 0x8000) | (118 + (r >> 4) % 9) << 7 | (r & 0x7F)); /* exponent 118..126 */
  memcpy(dst, &bits, 2);
}

/* Runs |text| in every mode on seeded inputs (seeded_element); results'
 * host bytes, every result one after another, in out[mode] (heap), their
 * size in *bytes; the default mode's inputs in inputs[i] (heap) for the
 * first *ninputs parameters when |inputs| is set.  Asserts whether the
 * default mode used GEMM. */
static void run_modes_raw(fixture_t *f, const char *text, bool expect_gemm, bool specials, uint8_t *out[MODES],
                          size_t *bytes, void **inputs, int *ninputs) {
  for (int m = 0; m < MODES; m++) {
    char dir[] = "/tmp/vkhlo_gemm_testXXXXXX";
    vkhlo_compile_options_t o;
    memset(&o, 0, sizeof o);
    bool dump = m == MODE_AUTO || (m == MODE_GPU && (f->gpu_split || f->gpu_needle));
    if (dump) {
      assert_non_null(mkdtemp(dir));
      o.dump_dir = dir;
    }
    vkhlo_executable_t *exe = NULL;
    expect_ok(vkhlo_executable_compile(f->ctx[m], text, strlen(text), "gemm_test.mlir", &o, &exe));
    if (m == MODE_AUTO) {
      assert_int_equal(test_dump_contains(dir, "as shaders/gemm_"), expect_gemm);
      vkhlo_device_description_t d;
      vkhlo_context_device(f->ctx[m], &d);
      const char *needles[2] = {f->cpu_needle, f->cpu_needle2};
      for (int i = 0; i < 2; i++)
        if (needles[i] && strcmp(d.type, "cpu") == 0 && !test_dump_contains(dir, needles[i]))
          fail_msg("the kernel has no %s:\n%s", needles[i], text);
      test_remove_dir(dir);
    } else if (dump && !f->gpu_split) {
      if (!test_dump_contains(dir, f->gpu_needle)) fail_msg("VKHLO_GEMM=gpu: the kernel has no %s:\n%s", f->gpu_needle, text);
      test_remove_dir(dir);
    } else if (dump) {
      if (!test_dump_contains(dir, "as shaders/gemm_gpu") ||
          test_dump_file_contains(dir, ".mlir", "@expand_add_") != (f->gpu_split > 0))
        fail_msg("VKHLO_GEMM=gpu: not %s on shaders/gemm_gpu.comp:\n%s", f->gpu_split > 0 ? "split" : "whole", text);
      if (test_dump_contains(dir, "#define GEMM_TY 4") != f->gpu_skinny)
        fail_msg("VKHLO_GEMM=gpu: %s the 16 x 256 tile:\n%s", f->gpu_skinny ? "not" : "unexpectedly", text);
      test_remove_dir(dir);
    }
    int np = vkhlo_executable_parameter_count(exe);
    vkhlo_buffer_t *args[8];
    assert_true(np <= 8);
    uint32_t seed = 99;
    for (int i = 0; i < np; i++) {
      vkhlo_tensor_type_t t;
      expect_ok(vkhlo_executable_parameter_type(exe, i, &t));
      int64_t n = vkhlo_tensor_type_element_count(&t);
      size_t es = vkhlo_element_type_size_bytes(t.element_type);
      uint8_t *data = malloc((size_t)n * es + 4);
      for (int64_t k = 0; k < n; k++) seeded_element(t.element_type, &seed, k, specials, f->int_bits, data + k * es);
      expect_ok(vkhlo_buffer_create(f->ctx[m], &t, data, &args[i]));
      if (m == 0 && inputs && i < *ninputs) inputs[i] = data;
      else free(data);
    }
    if (m == 0 && ninputs) *ninputs = np;
    /* every result, one after another */
    int nr = vkhlo_executable_result_count(exe);
    vkhlo_buffer_t *res[4];
    assert_true(nr >= 1 && nr <= 4);
    expect_ok(vkhlo_executable_execute(exe, np, args, nr, res));
    size_t sizes[4], total = 0;
    for (int r = 0; r < nr; r++) {
      vkhlo_tensor_type_t rt;
      expect_ok(vkhlo_executable_result_type(exe, r, &rt));
      sizes[r] = vkhlo_tensor_type_size_bytes(&rt);
      total += sizes[r];
    }
    *bytes = total;
    out[m] = malloc(total + 4);
    for (int r = 0, at = 0; r < nr; at += (int)sizes[r], r++) {
      expect_ok(vkhlo_buffer_read(res[r], out[m] + at, sizes[r]));
      vkhlo_buffer_destroy(res[r]);
    }
    for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args[i]);
    vkhlo_executable_destroy(exe);
  }
}

/* run_modes_raw for f32 programs: f32 results (out[mode], *count
 * elements) and inputs. */
static void run_modes(fixture_t *f, const char *text, bool expect_gemm, float *out[MODES], size_t *count,
                      float **inputs, int *ninputs) {
  uint8_t *raw[MODES];
  size_t bytes = 0;
  run_modes_raw(f, text, expect_gemm, false, raw, &bytes, (void **)inputs, ninputs);
  for (int m = 0; m < MODES; m++) out[m] = (float *)(void *)raw[m];
  *count = bytes / sizeof(float);
}

/* |got| equals |want| to f32 rounding of sums of |k| products of values in
 * [-0.5, 0.5) (plus epilogue terms). */
static void assert_close(const float *got, const float *want, size_t n, int k, const char *what) {
  double tol = 1e-6 * (k + 4);
  for (size_t i = 0; i < n; i++) {
    if (fabs((double)got[i] - want[i]) > tol) {
      fail_msg("%s: element %zu is %.9g, want %.9g", what, i, (double)got[i], (double)want[i]);
    }
  }
}

static void check(void **state, const char *text, bool expect_gemm, int k) {
  fixture_t *f = *state;
  float *out[MODES];
  size_t n = 0;
  run_modes(f, text, expect_gemm, out, &n, NULL, NULL);
  assert_true(n > 0);
  assert_close(out[MODE_AUTO], out[MODE_OFF], n, k, "default kernel vs elemental");
  assert_close(out[MODE_GPU], out[MODE_OFF], n, k, "VKHLO_GEMM=gpu vs elemental");
  for (int m = 0; m < MODES; m++) free(out[m]);
}

#define DOT2(M, K, N)                                                                                        \
  "func.func @main(%a: tensor<" #M "x" #K "xf32>, %b: tensor<" #K "x" #N "xf32>) -> tensor<" #M "x" #N        \
  "xf32> {\n"                                                                                                \
  "  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<" #M "x" #K "xf32>, tensor<" #K \
  "x" #N "xf32>) -> tensor<" #M "x" #N "xf32>\n"                                                             \
  "  return %c : tensor<" #M "x" #N "xf32>\n}\n"

static void one_by_one(void **state) { check(state, DOT2(1, 1, 1), true, 1); }
static void odd_33x65x17(void **state) { check(state, DOT2(33, 17, 65), true, 17); }
/* K and N multiples of 8 (64-bit-word loads), N not a multiple of 16 */
static void words_24x40x48(void **state) { check(state, DOT2(24, 48, 40), true, 48); }
static void wide_70x200x64(void **state) { check(state, DOT2(70, 64, 200), true, 64); }
/* The subgroup kernel on CPU devices ("Subgroups" in gemm_cpu.comp): M not
 * a multiple of a workgroup's rows (some subgroups wholly past the end), K
 * past two barriers and not a multiple of their spacing, N past one
 * workgroup's columns and not a multiple of them. */
static void subgroups_300x280x264(void **state) {
  /* under $VKHLO_GEMM_TILE=8x16 (the e2e_gemm_tile_8x16 run) that tile */
  const char *tile = getenv("VKHLO_GEMM_TILE");
  if (tile && strcmp(tile, "8x16") == 0) ((fixture_t *)*state)->cpu_needle = "#define TN 16";
  check(state, DOT2(300, 264, 280), true, 264);
  ((fixture_t *)*state)->cpu_needle = NULL;
}
/* The element loads of an operand not read by words go through an R32UI
 * texel view on CPU devices (codegen_declare_element_view), unless
 * $VKHLO_TEXEL_WORDS=0 (the test's storage_words run): |needle| is the
 * view's declaration. */
static void expect_texel_view(fixture_t *f, const char *needle) {
  const char *env = getenv("VKHLO_TEXEL_WORDS");
  f->cpu_needle = env && strcmp(env, "0") == 0 ? NULL : needle;
}

/* the lhs read element by element (k stride 40), through its texel view */
static void subgroups_lhs_transposed(void **state) {
  expect_texel_view(*state, "uniform usamplerBuffer in0s;");
  check(state,
        "func.func @main(%a: tensor<48x40xf32>, %b: tensor<48x24xf32>) -> tensor<40x24xf32> {\n"
        "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<48x40xf32>) -> tensor<40x48xf32>\n"
        "  %c = stablehlo.dot_general %t, %b, contracting_dims = [1] x [0] :"
        " (tensor<40x48xf32>, tensor<48x24xf32>) -> tensor<40x24xf32>\n"
        "  return %c : tensor<40x24xf32>\n}\n",
        true, 48);
  ((fixture_t *)*state)->cpu_needle = NULL;
}
static void subgroups_batched(void **state) {
  check(state,
        "func.func @main(%a: tensor<3x45x136xf32>, %b: tensor<3x136x24xf32>) -> tensor<3x45x24xf32> {\n"
        "  %c = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] :"
        " (tensor<3x45x136xf32>, tensor<3x136x24xf32>) -> tensor<3x45x24xf32>\n"
        "  return %c : tensor<3x45x24xf32>\n}\n",
        true, 136);
}

/* 7x13x5 also against values computed here. */
static void hand_7x13x5(void **state) {
  fixture_t *f = *state;
  float *out[MODES], *in[2] = {NULL, NULL};
  int nin = 2;
  size_t n = 0;
  run_modes(f, DOT2(7, 5, 13), true, out, &n, in, &nin);
  assert_int_equal(n, 7 * 13);
  assert_int_equal(nin, 2);
  float want[7 * 13];
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 13; j++) {
      double s = 0;
      for (int k = 0; k < 5; k++) s += (double)in[0][i * 5 + k] * in[1][k * 13 + j];
      want[i * 13 + j] = (float)s;
    }
  for (int m = 0; m < MODES; m++) assert_close(out[m], want, n, 5, mode_env[m] ? mode_env[m] : "default");
  for (int m = 0; m < MODES; m++) free(out[m]);
  free(in[0]);
  free(in[1]);
}

static void batched(void **state) {
  check(state,
        "func.func @main(%a: tensor<3x33x17xf32>, %b: tensor<3x17x65xf32>) -> tensor<3x33x65xf32> {\n"
        "  %c = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] :"
        " (tensor<3x33x17xf32>, tensor<3x17x65xf32>) -> tensor<3x33x65xf32>\n"
        "  return %c : tensor<3x33x65xf32>\n}\n",
        true, 17);
}

/* contracting first in the lhs, last in the rhs; batch in the middle */
static void permuted_dims(void **state) {
  check(state,
        "func.func @main(%a: tensor<17x2x33xf32>, %b: tensor<65x2x17xf32>) -> tensor<2x33x65xf32> {\n"
        "  %c = stablehlo.dot_general %a, %b, batching_dims = [1] x [1], contracting_dims = [0] x [2] :"
        " (tensor<17x2x33xf32>, tensor<65x2x17xf32>) -> tensor<2x33x65xf32>\n"
        "  return %c : tensor<2x33x65xf32>\n}\n",
        true, 17);
}

/* two contracting dimensions that merge into one stride, two free ones */
static void two_contracting(void **state) {
  check(state,
        "func.func @main(%a: tensor<5x4x6xf32>, %b: tensor<4x6x3x7xf32>) -> tensor<5x3x7xf32> {\n"
        "  %c = stablehlo.dot_general %a, %b, contracting_dims = [1, 2] x [0, 1] :"
        " (tensor<5x4x6xf32>, tensor<4x6x3x7xf32>) -> tensor<5x3x7xf32>\n"
        "  return %c : tensor<5x3x7xf32>\n}\n",
        true, 24);
}

/* contracting dimensions paired in an order the rhs strides cannot merge:
 * the pairs reordered and the smaller operand transposed
 * (codegen/simplify.c, contracting_runs), then the GEMM kernel */
static void paired_contracting_transposed(void **state) {
  check(state,
        "func.func @main(%a: tensor<4x6x9xf32>, %b: tensor<6x4x10xf32>) -> tensor<9x10xf32> {\n"
        "  %c = stablehlo.dot_general %a, %b, contracting_dims = [0, 1] x [1, 0] :"
        " (tensor<4x6x9xf32>, tensor<6x4x10xf32>) -> tensor<9x10xf32>\n"
        "  return %c : tensor<9x10xf32>\n}\n",
        true, 24);
}

/* contracting dimensions with a free one between them in the lhs and a
 * batch one between them in the rhs, paired in the other order: both
 * operands transposed, the batch dimension renumbered.  Checked against
 * sums computed here (the rewrite is upstream of every mode). */
static void scattered_contracting(void **state) {
  fixture_t *f = *state;
  float *out[MODES], *in[2] = {NULL, NULL};
  int nin = 2;
  size_t n = 0;
  run_modes(f,
            "func.func @main(%a: tensor<3x5x2x4xf32>, %b: tensor<4x2x3x7xf32>) -> tensor<2x5x7xf32> {\n"
            "  %c = stablehlo.dot_general %a, %b, batching_dims = [2] x [1], contracting_dims = [3, 0] x [0, 2] :"
            " (tensor<3x5x2x4xf32>, tensor<4x2x3x7xf32>) -> tensor<2x5x7xf32>\n"
            "  return %c : tensor<2x5x7xf32>\n}\n",
            true, out, &n, in, &nin);
  assert_int_equal(n, 2 * 5 * 7);
  assert_int_equal(nin, 2);
  float want[2 * 5 * 7];
  for (int bt = 0; bt < 2; bt++)
    for (int i = 0; i < 5; i++)
      for (int j = 0; j < 7; j++) {
        double s = 0; /* a[p, i, bt, q] * b[q, bt, p, j] */
        for (int p = 0; p < 3; p++)
          for (int q = 0; q < 4; q++)
            s += (double)in[0][((p * 5 + i) * 2 + bt) * 4 + q] * in[1][((q * 2 + bt) * 3 + p) * 7 + j];
        want[(bt * 5 + i) * 7 + j] = (float)s;
      }
  for (int m = 0; m < MODES; m++) assert_close(out[m], want, n, 12, mode_env[m] ? mode_env[m] : "default");
  for (int m = 0; m < MODES; m++) free(out[m]);
  free(in[0]);
  free(in[1]);
}

/* a transpose that would leave the product's contracting dimensions apart
 * in its operand: stored transposed instead of fused (codegen/fusion.c,
 * splits_contraction), then the GEMM kernel */
static void transposed_contracting_stored(void **state) {
  check(state,
        "func.func @main(%a: tensor<9x4x6xf32>, %b: tensor<10x6x4xf32>) -> tensor<9x10xf32> {\n"
        "  %t = stablehlo.transpose %b, dims = [0, 2, 1] : (tensor<10x6x4xf32>) -> tensor<10x4x6xf32>\n"
        "  %c = stablehlo.dot_general %a, %t, contracting_dims = [1, 2] x [1, 2] :"
        " (tensor<9x4x6xf32>, tensor<10x4x6xf32>) -> tensor<9x10xf32>\n"
        "  return %c : tensor<9x10xf32>\n}\n",
        true, 24);
}

/* attention's output projection: the heads' results [b, h, d, m] transposed
 * to [b, m, h, d] and reshaped to [b, m, h * d]: a strided view (h and d
 * merge, stride d's), no copy */
static void reshape_of_transpose(void **state) {
  expect_texel_view(*state, "uniform usamplerBuffer in0s;"); /* both operands by element */
  check(state,
        "func.func @main(%a: tensor<2x3x4x5xf32>, %w: tensor<12x7xf32>) -> tensor<2x5x7xf32> {\n"
        "  %t = stablehlo.transpose %a, dims = [0, 3, 1, 2] : (tensor<2x3x4x5xf32>) -> tensor<2x5x3x4xf32>\n"
        "  %r = stablehlo.reshape %t : (tensor<2x5x3x4xf32>) -> tensor<2x5x12xf32>\n"
        "  %c = stablehlo.dot_general %r, %w, contracting_dims = [2] x [0] :"
        " (tensor<2x5x12xf32>, tensor<12x7xf32>) -> tensor<2x5x7xf32>\n"
        "  return %c : tensor<2x5x7xf32>\n}\n",
        true, 12);
  ((fixture_t *)*state)->cpu_needle = NULL;
}

/* a reshape of a transposed view that no strides express: elemental */
static void reshape_unmergeable_falls_back(void **state) {
  check(state,
        "func.func @main(%a: tensor<4x6xf32>, %w: tensor<12x5xf32>) -> tensor<2x5xf32> {\n"
        "  %t = stablehlo.transpose %a, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>\n"
        "  %r = stablehlo.reshape %t : (tensor<6x4xf32>) -> tensor<2x12xf32>\n"
        "  %c = stablehlo.dot_general %r, %w, contracting_dims = [1] x [0] :"
        " (tensor<2x12xf32>, tensor<12x5xf32>) -> tensor<2x5xf32>\n"
        "  return %c : tensor<2x5xf32>\n}\n",
        false, 12);
}

/* slices as operands, no copy: the start an offset into the binding, the
 * steps scaling the strides (the blocked triangular_solve's M[rows, block]
 * times a solved block, codegen/expand.c).  Element loads from an odd
 * offset 3 * 30 + 5 = 95 with every second row, an rhs taking every third
 * column from column 2 of row 1; then a block of rows from row 8 (offset
 * 384, a multiple of 8) read in words. */
static void sliced_operands(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "#define LHS_AT(b, m) (95 + int(uint(m)) * 60)";
  f->cpu_needle2 = "#define RHS_AT_0(b, n) (52 + int(uint(n)) * 3)";
  check(state,
        "func.func @main(%a: tensor<40x30xf32>, %b: tensor<20x50xf32>) -> tensor<12x16xf32> {\n"
        "  %s = stablehlo.slice %a [3:27:2, 5:22] : (tensor<40x30xf32>) -> tensor<12x17xf32>\n"
        "  %t = stablehlo.slice %b [1:18, 2:50:3] : (tensor<20x50xf32>) -> tensor<17x16xf32>\n"
        "  %c = stablehlo.dot_general %s, %t, contracting_dims = [1] x [0] :"
        " (tensor<12x17xf32>, tensor<17x16xf32>) -> tensor<12x16xf32>\n"
        "  return %c : tensor<12x16xf32>\n}\n",
        true, 17);
  f->cpu_needle = "#define LHS_AT(b, m) (384 + int(uint(m)) * 48)";
  f->cpu_needle2 = "#define LHS_LOADW(off)";
  check(state,
        "func.func @main(%a: tensor<64x48xf32>, %b: tensor<48x40xf32>) -> tensor<32x40xf32> {\n"
        "  %s = stablehlo.slice %a [8:40, 0:48] : (tensor<64x48xf32>) -> tensor<32x48xf32>\n"
        "  %c = stablehlo.dot_general %s, %b, contracting_dims = [1] x [0] :"
        " (tensor<32x48xf32>, tensor<48x40xf32>) -> tensor<32x40xf32>\n"
        "  return %c : tensor<32x40xf32>\n}\n",
        true, 48);
  f->cpu_needle = f->cpu_needle2 = NULL;
}

/* Operands made by a pad, a reverse or a concatenate, which the kernel
 * cannot read by strides, or a slice it could read only element by
 * element: stored first (codegen/fusion.c gemm_unreadable),
 * then read by the GEMM kernel; a product of one row keeps its concatenate
 * fused (its elements are read once: a decode step's KV cache). */
static void produced_operands(void **state) {
  check(state,
        "func.func @main(%a: tensor<40x27xf32>, %b: tensor<32x36xf32>) -> tensor<40x36xf32> {\n"
        "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
        "  %p = stablehlo.pad %a, %z, low = [0, 2], high = [0, 3], interior = [0, 0] :"
        " (tensor<40x27xf32>, tensor<f32>) -> tensor<40x32xf32>\n"
        "  %c = stablehlo.dot_general %p, %b, contracting_dims = [1] x [0] :"
        " (tensor<40x32xf32>, tensor<32x36xf32>) -> tensor<40x36xf32>\n"
        "  return %c : tensor<40x36xf32>\n}\n",
        true, 32);
  check(state,
        "func.func @main(%a: tensor<40x32xf32>, %b: tensor<32x36xf32>) -> tensor<40x36xf32> {\n"
        "  %r = stablehlo.reverse %b, dims = [0, 1] : tensor<32x36xf32>\n"
        "  %c = stablehlo.dot_general %a, %r, contracting_dims = [1] x [0] :"
        " (tensor<40x32xf32>, tensor<32x36xf32>) -> tensor<40x36xf32>\n"
        "  return %c : tensor<40x36xf32>\n}\n",
        true, 32);
  check(state,
        "func.func @main(%a: tensor<24x32xf32>, %a2: tensor<17x32xf32>, %b: tensor<32x36xf32>) -> tensor<41x36xf32> {\n"
        "  %s = stablehlo.concatenate %a, %a2, dim = 0 : (tensor<24x32xf32>, tensor<17x32xf32>) -> tensor<41x32xf32>\n"
        "  %c = stablehlo.dot_general %s, %b, contracting_dims = [1] x [0] :"
        " (tensor<41x32xf32>, tensor<32x36xf32>) -> tensor<41x36xf32>\n"
        "  return %c : tensor<41x36xf32>\n}\n",
        true, 32);
  /* a slice off the words of its operand (column 20 of rows 300 long),
   * whole words itself: stored, then read by words (CPU devices) */
  fixture_t *f = *state;
  f->cpu_needle = "#define LHS_LOADW(off)";
  check(state,
        "func.func @main(%a: tensor<40x300xf32>, %b: tensor<256x36xf32>) -> tensor<40x36xf32> {\n"
        "  %s = stablehlo.slice %a [0:40, 20:276] : (tensor<40x300xf32>) -> tensor<40x256xf32>\n"
        "  %c = stablehlo.dot_general %s, %b, contracting_dims = [1] x [0] :"
        " (tensor<40x256xf32>, tensor<256x36xf32>) -> tensor<40x36xf32>\n"
        "  return %c : tensor<40x36xf32>\n}\n",
        true, 256);
  f->cpu_needle = NULL;
  check(state,
        "func.func @main(%q: tensor<4x1x32xf32>, %k: tensor<4x40x32xf32>, %k1: tensor<4x1x32xf32>) -> "
        "tensor<4x1x41xf32> {\n"
        "  %s = stablehlo.concatenate %k, %k1, dim = 1 : (tensor<4x40x32xf32>, tensor<4x1x32xf32>) -> "
        "tensor<4x41x32xf32>\n"
        "  %c = stablehlo.dot_general %q, %s, batching_dims = [0] x [0], contracting_dims = [2] x [2] :"
        " (tensor<4x1x32xf32>, tensor<4x41x32xf32>) -> tensor<4x1x41xf32>\n"
        "  return %c : tensor<4x1x41xf32>\n}\n",
        false, 32);
}

/* Operands that are dynamic_slices of parameters (a scan over stacked
 * layer weights: w[layer]): the start, read by the kernel and clamped as
 * the spec says, moves the view's offset; start indices inside, at the
 * edges, negative and past the end (seeded_element's picks), of 32 and 64
 * bits and unsigned, on the lhs, the rhs and a dimension that is not the
 * leading one, with a bias dynamic_sliced in the epilogue. */
static void dynamic_sliced_operands(void **state) {
  fixture_t *f = *state;
  static const char *const programs[] = {
      "func.func @main(%a: tensor<3x24x48xf32>, %i: tensor<i32>, %w: tensor<4x56x40xf32>, %j: tensor<i32>, %k: tensor<i32>,"
      " %b: tensor<4x40xf32>) -> tensor<24x40xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %a1 = stablehlo.dynamic_slice %a, %i, %z, %z, sizes = [1, 24, 48] : (tensor<3x24x48xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x24x48xf32>\n"
      "  %a2 = stablehlo.reshape %a1 : (tensor<1x24x48xf32>) -> tensor<24x48xf32>\n"
      "  %w1 = stablehlo.dynamic_slice %w, %j, %k, %z, sizes = [1, 48, 40] : (tensor<4x56x40xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x48x40xf32>\n"
      "  %w2 = stablehlo.reshape %w1 : (tensor<1x48x40xf32>) -> tensor<48x40xf32>\n"
      "  %c = stablehlo.dot_general %a2, %w2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x40xf32>) -> tensor<24x40xf32>\n"
      "  %b1 = stablehlo.dynamic_slice %b, %j, %z, sizes = [1, 40] : (tensor<4x40xf32>, tensor<i32>, tensor<i32>) -> tensor<1x40xf32>\n"
      "  %bb = stablehlo.broadcast_in_dim %b1, dims = [0, 1] : (tensor<1x40xf32>) -> tensor<24x40xf32>\n"
      "  %r = stablehlo.add %c, %bb : tensor<24x40xf32>\n"
      "  return %r : tensor<24x40xf32>\n}\n",
      "func.func @main(%a: tensor<24x48xf32>, %w: tensor<4x48x40xf32>, %j: tensor<i64>) -> tensor<24x40xf32> {\n"
      "  %z = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %w1 = stablehlo.dynamic_slice %w, %j, %z, %z, sizes = [1, 48, 40] : (tensor<4x48x40xf32>, tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<1x48x40xf32>\n"
      "  %w2 = stablehlo.reshape %w1 : (tensor<1x48x40xf32>) -> tensor<48x40xf32>\n"
      "  %c = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x40xf32>) -> tensor<24x40xf32>\n"
      "  return %c : tensor<24x40xf32>\n}\n",
      "func.func @main(%a: tensor<24x48xf32>, %w: tensor<4x48x40xf32>, %j: tensor<ui32>, %k: tensor<ui32>) -> (tensor<24x40xf32>, tensor<24x40xf32>) {\n"
      "  %z = stablehlo.constant dense<0> : tensor<ui32>\n"
      "  %w1 = stablehlo.dynamic_slice %w, %j, %z, %z, sizes = [1, 48, 40] : (tensor<4x48x40xf32>, tensor<ui32>, tensor<ui32>, tensor<ui32>) -> tensor<1x48x40xf32>\n"
      "  %w2 = stablehlo.reshape %w1 : (tensor<1x48x40xf32>) -> tensor<48x40xf32>\n"
      "  %c = stablehlo.dot_general %a, %w2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x40xf32>) -> tensor<24x40xf32>\n"
      "  %v1 = stablehlo.dynamic_slice %w, %k, %z, %z, sizes = [1, 48, 40] : (tensor<4x48x40xf32>, tensor<ui32>, tensor<ui32>, tensor<ui32>) -> tensor<1x48x40xf32>\n"
      "  %v2 = stablehlo.reshape %v1 : (tensor<1x48x40xf32>) -> tensor<48x40xf32>\n"
      "  %d = stablehlo.dot_general %a, %v2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x40xf32>) -> tensor<24x40xf32>\n"
      "  return %c, %d : tensor<24x40xf32>, tensor<24x40xf32>\n}\n",
  };
  /* (bindings are the fusion's operands) */
  static const char *const needles[][2] = {
      {"#define RHS_AT_0(b, n) (0 + int(clamp(in3.data[0], int(0), int(3))) * 2240 + int(clamp(in4.data[0], int(0), int(8))) * 40",
       "#define LHS_AT(b, m) (0 + int(clamp(in1.data[0], int(0), int(2))) * 1152"},
      {"int(clamp(in1.data[0], int64_t(0), int64_t(3))) * 1920", NULL},
      {"uint(3))) * 1920", "int(min(in"},
  };
  for (size_t p = 0; p < sizeof programs / sizeof programs[0]; p++) {
    f->cpu_needle = needles[p][0];
    f->cpu_needle2 = needles[p][1];
    check(state, programs[p], true, 48);
  }
  f->cpu_needle = f->cpu_needle2 = NULL;
}

/* PyTorch's attention output projection: the heads' results [h, s, d]
 * transposed to [s, h, d] and reshaped to [s, h * d]: h and d do not merge
 * (strides s * d and 1), so the contracting dimension is split in two
 * (LHS_KOFF); the product then reshaped to [1, s, n] and given a bias and
 * a residual in its epilogue.  Head size 8 (words) and 5 (elements). */
static void split_contracting(void **state, int h, int d) {
  char text[2048];
  int s = 21, n = 19, k = h * d;
  snprintf(text, sizeof text,
           "func.func @main(%%x: tensor<%dx%dx%dxf32>, %%w: tensor<%dx%dxf32>, %%bias: tensor<%dxf32>,"
           " %%r: tensor<1x%dx%dxf32>) -> tensor<1x%dx%dxf32> {\n"
           "  %%t = stablehlo.transpose %%x, dims = [1, 0, 2] : (tensor<%dx%dx%dxf32>) -> tensor<%dx%dx%dxf32>\n"
           "  %%m = stablehlo.reshape %%t : (tensor<%dx%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%p = stablehlo.dot_general %%m, %%w, contracting_dims = [1] x [0] :"
           " (tensor<%dx%dxf32>, tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "  %%q = stablehlo.reshape %%p : (tensor<%dx%dxf32>) -> tensor<1x%dx%dxf32>\n"
           "  %%bb = stablehlo.broadcast_in_dim %%bias, dims = [2] : (tensor<%dxf32>) -> tensor<1x%dx%dxf32>\n"
           "  %%y = stablehlo.add %%q, %%bb : tensor<1x%dx%dxf32>\n"
           "  %%z = stablehlo.add %%y, %%r : tensor<1x%dx%dxf32>\n"
           "  return %%z : tensor<1x%dx%dxf32>\n}\n",
           h, s, d, k, n, n, s, n, s, n, h, s, d, s, h, d, s, h, d, s, k, s, k, k, n, s, n, s, n, s, n, n, s, n, s,
           n, s, n, s, n);
  ((fixture_t *)*state)->cpu_needle = "#define LHS_KOFF(k) (int(uint(k) / ";
  check(state, text, true, k + 2);
  ((fixture_t *)*state)->cpu_needle = NULL;
}
static void split_contracting_words(void **state) { split_contracting(state, 3, 8); }
static void split_contracting_elements(void **state) { split_contracting(state, 4, 5); }

/* The epilogue of the two cases below: relu(%d + bias + %r), 37x72. */
#define BIAS_RESIDUAL_RELU_37x72                                                                        \
  "  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<72xf32>) -> tensor<37x72xf32>\n"      \
  "  %s = stablehlo.add %d, %bb : tensor<37x72xf32>\n"                                                  \
  "  %t = stablehlo.add %s, %r : tensor<37x72xf32>\n"                                                   \
  "  %z = stablehlo.constant dense<0.0> : tensor<37x72xf32>\n"                                          \
  "  %y = stablehlo.maximum %t, %z : tensor<37x72xf32>\n"                                               \
  "  return %y : tensor<37x72xf32>\n}\n"

/* relu(x @ transpose(w) + bias + residual): the transpose is an operand
 * prologue (strides), the rest the epilogue */
static void fused_epilogue(void **state) {
  check(state,
        "func.func @main(%x: tensor<37x32xf32>, %w: tensor<72x32xf32>, %bias: tensor<72xf32>,"
        " %r: tensor<37x72xf32>) -> tensor<37x72xf32> {\n"
        "  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<72x32xf32>) -> tensor<32x72xf32>\n"
        "  %d = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0] :"
        " (tensor<37x32xf32>, tensor<32x72xf32>) -> tensor<37x72xf32>\n"
        BIAS_RESIDUAL_RELU_37x72,
        true, 36);
}

/* The same epilogue with the rhs read in words along n (N = 72, a
 * multiple of 8): the results are stored 8 at a time (gemm_epilogue8 in
 * codegen/emit_gemm.c), the residual, read at each output's own position,
 * 8 at a time too, and the bias, read at the output's column, also as
 * one word per 8 outputs: word (idx / 8) % 9 of its 9. */
static void fused_epilogue_words(void **state) {
  fixture_t *f = *state;
  /* p3 and p2 are gemm_epilogue8's words of the residual and the bias
   * (emitted with the word stores only) */
  f->cpu_needle2 = "u64vec4 p3 = in3w_at(idx >> 3);";
  f->cpu_needle = "u64vec4 p2 = in2w_at(int(uint(idx >> 3) % 9u));";
  check(state,
        "func.func @main(%x: tensor<37x32xf32>, %w: tensor<32x72xf32>, %bias: tensor<72xf32>,"
        " %r: tensor<37x72xf32>) -> tensor<37x72xf32> {\n"
        "  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] :"
        " (tensor<37x32xf32>, tensor<32x72xf32>) -> tensor<37x72xf32>\n"
        BIAS_RESIDUAL_RELU_37x72,
        true, 36);
  f->cpu_needle = f->cpu_needle2 = NULL;
}

/* lavapipe runs 16 lanes under LP_NATIVE_VECTOR_WIDTH=512 (the
 * e2e_gemm_lanes16 run), where a GEMM fusion takes several products of
 * one lhs (NDOT, codegen_target_multi_dots); at 8 lanes each product is a
 * fusion of its own. */
static bool lanes16(void) {
  const char *w = getenv("LP_NATIVE_VECTOR_WIDTH");
  return w && atoi(w) >= 512;
}

/* Two results of GEMM fusions (sibling products of the same lhs, one with
 * a residual), each result stored 8 at a time: one fusion (NDOT = 2) at
 * 16 lanes, two at 8. */
static void two_results_words(void **state) {
  ((fixture_t *)*state)->cpu_needle = lanes16() ? "out1w.data[idx >> 3] = u64vec4(" : "out0w.data[idx >> 3] = u64vec4(";
  ((fixture_t *)*state)->cpu_needle2 = lanes16() ? "#define NDOT 2" : "#define NDOT 1";
  check(state,
        "func.func @main(%x: tensor<40x24xf32>, %w: tensor<24x48xf32>, %w2: tensor<24x48xf32>,"
        " %r: tensor<40x48xf32>) -> (tensor<40x48xf32>, tensor<40x48xf32>) {\n"
        "  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] :"
        " (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>\n"
        "  %t = stablehlo.add %d, %r : tensor<40x48xf32>\n"
        "  %e = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] :"
        " (tensor<40x24xf32>, tensor<24x48xf32>) -> tensor<40x48xf32>\n"
        "  return %t, %e : tensor<40x48xf32>, tensor<40x48xf32>\n}\n",
        true, 24);
  ((fixture_t *)*state)->cpu_needle = ((fixture_t *)*state)->cpu_needle2 = NULL;
}

/* attention-like: q k^T with the rhs contracted on its last dimension */
static void scores_transposed_rhs(void **state) {
  check(state,
        "func.func @main(%q: tensor<6x19x16xf32>, %k: tensor<6x23x16xf32>) -> tensor<6x19x23xf32> {\n"
        "  %c = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] :"
        " (tensor<6x19x16xf32>, tensor<6x23x16xf32>) -> tensor<6x19x23xf32>\n"
        "  return %c : tensor<6x19x23xf32>\n}\n",
        true, 16);
}

/* attention's scores at chess-9M's sizes (79 positions, heads of 32): k^T
 * has n stride 32 and k stride 1, so on CPU devices the subgroup kernel
 * reads it in words along k (RHS_LOADWK); 4 columns per invocation */
static void scores_rhs_words_along_k(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "#define RHS_LOADWK_0";
  check(state,
        "func.func @main(%q: tensor<3x79x32xf32>, %k: tensor<3x79x32xf32>) -> tensor<3x79x79xf32> {\n"
        "  %c = stablehlo.dot_general %q, %k, batching_dims = [0] x [0], contracting_dims = [2] x [2] :"
        " (tensor<3x79x32xf32>, tensor<3x79x32xf32>) -> tensor<3x79x79xf32>\n"
        "  return %c : tensor<3x79x79xf32>\n}\n",
        true, 32);
  f->cpu_needle = NULL;
}

/* attention's probabilities x values as exported (chess-9M): dot_general(v,
 * p) gives [b, h, d, s] and a transpose makes it [b, s, h, d].  The
 * simplifier swaps the operands (p x v, then a transpose that keeps d
 * minor), so on CPU devices the narrow product (N = d = 32, K = 17 not a
 * multiple of 8) keeps 16 columns in words and stacks row tiles down the
 * workgroup (GEMM_SGR).  Checked against sums computed here in every mode. */
static void attention_values_transposed(void **state) {
  fixture_t *f = *state;
  enum { B = 2, H = 3, S = 19, T = 17, D = 32 };
  f->cpu_needle = "#define GEMM_SGR";
  f->cpu_needle2 = "#define GEMM_STORE8";
  float *out[MODES], *in[2] = {NULL, NULL};
  int nin = 2;
  size_t n = 0;
  run_modes(f,
            "func.func @main(%v: tensor<2x17x3x32xf32>, %p: tensor<2x3x19x17xf32>) -> tensor<2x19x3x32xf32> {\n"
            "  %o = stablehlo.dot_general %v, %p, batching_dims = [0, 2] x [0, 1], contracting_dims = [1] x [3] :"
            " (tensor<2x17x3x32xf32>, tensor<2x3x19x17xf32>) -> tensor<2x3x32x19xf32>\n"
            "  %r = stablehlo.transpose %o, dims = [0, 3, 1, 2] : (tensor<2x3x32x19xf32>) -> tensor<2x19x3x32xf32>\n"
            "  return %r : tensor<2x19x3x32xf32>\n}\n",
            true, out, &n, in, &nin);
  f->cpu_needle = f->cpu_needle2 = NULL;
  assert_int_equal(n, B * S * H * D);
  assert_int_equal(nin, 2);
  float *want = malloc(n * sizeof *want);
  for (int b = 0; b < B; b++)
    for (int s = 0; s < S; s++)
      for (int h = 0; h < H; h++)
        for (int d = 0; d < D; d++) {
          double sum = 0;
          for (int t = 0; t < T; t++)
            sum += (double)in[0][((b * T + t) * H + h) * D + d] * in[1][((b * H + h) * S + s) * T + t];
          want[((b * S + s) * H + h) * D + d] = (float)sum;
        }
  for (int m = 0; m < MODES; m++) assert_close(out[m], want, n, T, mode_env[m] ? mode_env[m] : "default");
  for (int m = 0; m < MODES; m++) free(out[m]);
  free(want);
  free(in[0]);
  free(in[1]);
}

/* two products of the same lhs (a SwiGLU MLP's gate and up projections),
 * epilogue silu(g) * u: one fusion (NDOT = 2) at 16 lanes; at 8 the gate's
 * fusion reads u as an operand at its own position */
static void swiglu_two_dots(void **state) {
  ((fixture_t *)*state)->cpu_needle = lanes16() ? "#define NDOT 2" : "#define NDOT 1";
  check(state,
        "func.func @main(%x: tensor<3x11x32xf32>, %w1: tensor<32x48xf32>, %w2: tensor<32x48xf32>)"
        " -> tensor<3x11x48xf32> {\n"
        "  %g = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] :"
        " (tensor<3x11x32xf32>, tensor<32x48xf32>) -> tensor<3x11x48xf32>\n"
        "  %u = stablehlo.dot_general %x, %w2, contracting_dims = [2] x [0] :"
        " (tensor<3x11x32xf32>, tensor<32x48xf32>) -> tensor<3x11x48xf32>\n"
        "  %n = stablehlo.negate %g : tensor<3x11x48xf32>\n"
        "  %e = stablehlo.exponential %n : tensor<3x11x48xf32>\n"
        "  %one = stablehlo.constant dense<1.0> : tensor<3x11x48xf32>\n"
        "  %d = stablehlo.add %one, %e : tensor<3x11x48xf32>\n"
        "  %s = stablehlo.divide %g, %d : tensor<3x11x48xf32>\n"
        "  %y = stablehlo.multiply %s, %u : tensor<3x11x48xf32>\n"
        "  return %y : tensor<3x11x48xf32>\n}\n",
        true, 32);
  ((fixture_t *)*state)->cpu_needle = NULL;
}

/* two products of different lhs combined elementwise: separate GEMM
 * fusions at any lane count (the GEMM kernel takes one lhs; a fusion of
 * both ran one invocation per output at 16 lanes) */
static void two_dots_two_lhs(void **state) {
  check(state,
        "func.func @main(%x: tensor<3x11x32xf32>, %x2: tensor<3x11x32xf32>, %w1: tensor<32x48xf32>,"
        " %w2: tensor<32x48xf32>) -> tensor<3x11x48xf32> {\n"
        "  %g = stablehlo.dot_general %x, %w1, contracting_dims = [2] x [0] :"
        " (tensor<3x11x32xf32>, tensor<32x48xf32>) -> tensor<3x11x48xf32>\n"
        "  %u = stablehlo.dot_general %x2, %w2, contracting_dims = [2] x [0] :"
        " (tensor<3x11x32xf32>, tensor<32x48xf32>) -> tensor<3x11x48xf32>\n"
        "  %y = stablehlo.multiply %g, %u : tensor<3x11x48xf32>\n"
        "  return %y : tensor<3x11x48xf32>\n}\n",
        true, 32);
}

/* three products of the same lhs in words (q, k, v projections), an
 * epilogue over all three: NDOT = 3 in the subgroup kernel at 16 lanes */
static void three_dots_words(void **state) {
  ((fixture_t *)*state)->cpu_needle = lanes16() ? "#define NDOT 3" : "#define NDOT 1";
  check(state,
        "func.func @main(%x: tensor<70x144xf32>, %a: tensor<144x40xf32>, %b: tensor<144x40xf32>,"
        " %c: tensor<144x40xf32>) -> tensor<70x40xf32> {\n"
        "  %p = stablehlo.dot_general %x, %a, contracting_dims = [1] x [0] :"
        " (tensor<70x144xf32>, tensor<144x40xf32>) -> tensor<70x40xf32>\n"
        "  %q = stablehlo.dot_general %x, %b, contracting_dims = [1] x [0] :"
        " (tensor<70x144xf32>, tensor<144x40xf32>) -> tensor<70x40xf32>\n"
        "  %r = stablehlo.dot_general %x, %c, contracting_dims = [1] x [0] :"
        " (tensor<70x144xf32>, tensor<144x40xf32>) -> tensor<70x40xf32>\n"
        "  %s = stablehlo.add %p, %q : tensor<70x40xf32>\n"
        "  %t = stablehlo.multiply %s, %r : tensor<70x40xf32>\n"
        "  return %t : tensor<70x40xf32>\n}\n",
        true, 3 * 144);
  ((fixture_t *)*state)->cpu_needle = NULL;
}

/* three products of the same lhs (q, k, v projections), summed: NDOT = 3,
 * one of them through a transposed weight */
static void three_dots(void **state) {
  check(state,
        "func.func @main(%x: tensor<21x16xf32>, %a: tensor<16x19xf32>, %b: tensor<16x19xf32>, %c: tensor<19x16xf32>)"
        " -> tensor<21x19xf32> {\n"
        "  %p = stablehlo.dot_general %x, %a, contracting_dims = [1] x [0] :"
        " (tensor<21x16xf32>, tensor<16x19xf32>) -> tensor<21x19xf32>\n"
        "  %q = stablehlo.dot_general %x, %b, contracting_dims = [1] x [0] :"
        " (tensor<21x16xf32>, tensor<16x19xf32>) -> tensor<21x19xf32>\n"
        "  %ct = stablehlo.transpose %c, dims = [1, 0] : (tensor<19x16xf32>) -> tensor<16x19xf32>\n"
        "  %r = stablehlo.dot_general %x, %ct, contracting_dims = [1] x [0] :"
        " (tensor<21x16xf32>, tensor<16x19xf32>) -> tensor<21x19xf32>\n"
        "  %s = stablehlo.add %p, %q : tensor<21x19xf32>\n"
        "  %t = stablehlo.multiply %s, %r : tensor<21x19xf32>\n"
        "  return %t : tensor<21x19xf32>\n}\n",
        true, 64);
}

/* The bits of element |i| of |p|, elements of |size| bytes (2 or 4). */
static uint32_t element_bits(const uint8_t *p, size_t i, size_t size) {
  uint16_t h;
  uint32_t w;
  if (size == 2) return memcpy(&h, p + 2 * i, 2), h;
  return memcpy(&w, p + 4 * i, 4), w;
}

/* 16-bit operands (f16, bf16: read as f32, products exact in f32, sums
 * rounded once in the epilogue): every mode's result (one, of type
 * |result|) has the elemental dot's bits, infinities, overflow and
 * subnormals included (|specials|); a NaN matches any NaN (which NaN an
 * operation returns, sign included, is not specified, and LLVM may swap
 * the operands of an add). */
static void check_bits(void **state, const char *text, bool expect_gemm, bool specials, vkhlo_element_type_t result) {
  fixture_t *f = *state;
  uint8_t *out[MODES];
  size_t bytes = 0, size = vkhlo_element_type_size_bytes(result);
  uint32_t nan_above = result == VKHLO_F16 ? 0x7C00 : result == VKHLO_BF16 ? 0x7F80 : 0x7F800000;
  uint32_t abs_mask = size == 2 ? 0x7FFF : 0x7FFFFFFF;
  run_modes_raw(f, text, expect_gemm, specials, out, &bytes, NULL, NULL);
  assert_true(bytes > 0 && bytes % size == 0);
  int nans = 0;
  for (int m = 0; m < MODES; m++) {
    if (m == MODE_OFF) continue;
    for (size_t i = 0; i < bytes / size; i++) {
      uint32_t got = element_bits(out[m], i, size), want = element_bits(out[MODE_OFF], i, size);
      bool nan = (want & abs_mask) > nan_above;
      nans += nan;
      if (nan ? (got & abs_mask) <= nan_above : got != want)
        fail_msg("%s: element %zu is 0x%x, the elemental dot's 0x%x", m == MODE_AUTO ? "default kernel" : "VKHLO_GEMM=gpu",
                 i, got, want);
    }
  }
  if (specials) assert_true(nans > 0);
  for (int m = 0; m < MODES; m++) free(out[m]);
}

#define DOT2T(M, K, N, A, R)                                                                                 \
  "func.func @main(%a: tensor<" #M "x" #K "x" A ">, %b: tensor<" #K "x" #N "x" A ">) -> tensor<" #M "x" #N  \
  "x" R "> {\n"                                                                                             \
  "  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<" #M "x" #K "x" A ">, tensor<" #K \
  "x" #N "x" A ">) -> tensor<" #M "x" #N "x" R ">\n"                                                          \
  "  return %c : tensor<" #M "x" #N "x" R ">\n}\n"

/* both operands in words of 8 halves (K, N multiples of 8; the lhs shared
 * by subgroup shuffles: M >= 16) */
static void f16_words(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "gemm_f16x8(in0w_at(";
  f->cpu_needle2 = "gemm_f16x8(in1w_at(";
  check_bits(state, DOT2T(40, 48, 64, "f16", "f16"), true, true, VKHLO_F16);
  f->cpu_needle = f->cpu_needle2 = NULL;
}

static void bf16_words(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "gemm_bf16x8(in1w_at(";
  check_bits(state, DOT2T(24, 32, 40, "bf16", "bf16"), true, true, VKHLO_BF16);
  f->cpu_needle = NULL;
}

/* sizes off the tiles and the words: element loads */
static void bf16_odd(void **state) { check_bits(state, DOT2T(33, 17, 65, "bf16", "bf16"), true, true, VKHLO_BF16); }
static void f16_odd(void **state) { check_bits(state, DOT2T(7, 13, 5, "f16", "f16"), true, true, VKHLO_F16); }

/* f16 operands, an f32 result (each f16 value exact in f32): also against
 * sums computed here in double */
static void f16_to_f32(void **state) {
  fixture_t *f = *state;
  void *in[2] = {NULL, NULL};
  int nin = 2;
  uint8_t *out[MODES];
  size_t bytes = 0;
  const char *text = DOT2T(24, 40, 32, "f16", "f32");
  run_modes_raw(f, text, true, false, out, &bytes, in, &nin);
  assert_int_equal(bytes, 24 * 32 * 4);
  const uint16_t *a = in[0], *b = in[1];
  const float *got = (const float *)(void *)out[MODE_AUTO];
  for (int i = 0; i < 24; i++)
    for (int j = 0; j < 32; j++) {
      double want = 0;
      for (int k = 0; k < 40; k++) want += test_16bit_value(true, a[i * 40 + k]) * test_16bit_value(true, b[k * 32 + j]);
      if (fabs(got[i * 32 + j] - want) > 1e-6 * 44) fail_msg("(%d, %d) is %.9g, want %.9g", i, j, got[i * 32 + j], want);
    }
  for (int m = 0; m < MODES; m++) {
    if (memcmp(out[m], out[MODE_OFF], bytes) != 0) fail_msg("mode %d differs from the elemental dot", m);
    free(out[m]);
  }
  free(in[0]);
  free(in[1]);
}

/* f16 parameters converted to f32 in the fusion (an exact convert is a
 * view of the parameter), then a bias and a relu */
static void f16_convert_prologue(void **state) {
  check_bits(state,
        "func.func @main(%x: tensor<32x24xf16>, %w: tensor<24x16xf16>, %bias: tensor<16xf32>)"
        " -> tensor<32x16xf32> {\n"
        "  %xf = stablehlo.convert %x : (tensor<32x24xf16>) -> tensor<32x24xf32>\n"
        "  %wf = stablehlo.convert %w : (tensor<24x16xf16>) -> tensor<24x16xf32>\n"
        "  %d = stablehlo.dot_general %xf, %wf, contracting_dims = [1] x [0] :"
        " (tensor<32x24xf32>, tensor<24x16xf32>) -> tensor<32x16xf32>\n"
        "  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<16xf32>) -> tensor<32x16xf32>\n"
        "  %s = stablehlo.add %d, %bb : tensor<32x16xf32>\n"
        "  %z = stablehlo.constant dense<0.0> : tensor<32x16xf32>\n"
        "  %y = stablehlo.maximum %s, %z : tensor<32x16xf32>\n"
        "  return %y : tensor<32x16xf32>\n}\n",
        true, false, VKHLO_F32);
}

/* an f16 product's epilogue sees its rounded value: bias add and relu in
 * f16 */
static void f16_epilogue(void **state) {
  check_bits(state,
        "func.func @main(%x: tensor<20x16xf16>, %w: tensor<16x24xf16>, %bias: tensor<24xf16>)"
        " -> tensor<20x24xf16> {\n"
        "  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] :"
        " (tensor<20x16xf16>, tensor<16x24xf16>) -> tensor<20x24xf16>\n"
        "  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<24xf16>) -> tensor<20x24xf16>\n"
        "  %s = stablehlo.add %d, %bb : tensor<20x24xf16>\n"
        "  %z = stablehlo.constant dense<0.0> : tensor<20x24xf16>\n"
        "  %y = stablehlo.maximum %s, %z : tensor<20x24xf16>\n"
        "  return %y : tensor<20x24xf16>\n}\n",
        true, true, VKHLO_F16);
}

/* f32 operands into an f16 result: the elemental dot rounds each operand
 * to f16 first, which the kernels do not; it keeps the elemental path */
static void f32_to_f16_falls_back(void **state) {
  check_bits(state, DOT2T(16, 8, 8, "f32", "f16"), false, false, VKHLO_F16);
}

/* Split-K (codegen/expand.c): under VKHLO_GEMM=gpu a product of few
 * 64 x 64 tiles and a long k runs as S products of K / S each and a reduce
 * of their f32 partials (the epilogue in the reduce's kernel); the same
 * sums in another order, so the modes agree to f32 rounding. */
static void check_split(void **state, const char *text, int k, int split) {
  fixture_t *f = *state;
  f->gpu_split = split;
  f->gpu_skinny = true; /* every case here has at most 16 rows */
  check(state, text, true, k);
  f->gpu_split = 0;
  f->gpu_skinny = false;
}

/* a classifier head: 1 x 4096 x 1000 (S = 16) with a bias and a relu */
static void split_k_head(void **state) {
  check_split(state,
              "func.func @main(%x: tensor<1x4096xf32>, %w: tensor<4096x1000xf32>, %bias: tensor<1000xf32>)"
              " -> tensor<1x1000xf32> {\n"
              "  %d = stablehlo.dot_general %x, %w, contracting_dims = [1] x [0] :"
              " (tensor<1x4096xf32>, tensor<4096x1000xf32>) -> tensor<1x1000xf32>\n"
              "  %bb = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<1000xf32>) -> tensor<1x1000xf32>\n"
              "  %s = stablehlo.add %d, %bb : tensor<1x1000xf32>\n"
              "  %z = stablehlo.constant dense<0.0> : tensor<1x1000xf32>\n"
              "  %y = stablehlo.maximum %s, %z : tensor<1x1000xf32>\n"
              "  return %y : tensor<1x1000xf32>\n}\n",
              4096, 1);
}

/* stablehlo.dot (S = 4) */
static void split_k_dot(void **state) {
  check_split(state,
              "func.func @main(%a: tensor<2x1024xf32>, %b: tensor<1024x300xf32>) -> tensor<2x300xf32> {\n"
              "  %c = stablehlo.dot %a, %b : (tensor<2x1024xf32>, tensor<1024x300xf32>) -> tensor<2x300xf32>\n"
              "  return %c : tensor<2x300xf32>\n}\n",
              1024, 1);
}

/* contracting first in the lhs and last in the rhs, a batch dimension in
 * the middle of the lhs: the split dimension moves the others */
static void split_k_batched(void **state) {
  check_split(state,
              "func.func @main(%a: tensor<1024x2x3xf32>, %b: tensor<2x70x1024xf32>) -> tensor<2x3x70xf32> {\n"
              "  %c = stablehlo.dot_general %a, %b, batching_dims = [1] x [0], contracting_dims = [0] x [2] :"
              " (tensor<1024x2x3xf32>, tensor<2x70x1024xf32>) -> tensor<2x3x70xf32>\n"
              "  return %c : tensor<2x3x70xf32>\n}\n",
              1024, 1);
}

/* k shorter than two parts of 256 stays whole */
static void split_k_short(void **state) { check_split(state, DOT2(1, 511, 64), 511, -1); }

/* 16 rows, a transposed lhs (a view), 520 columns: three 16 x 256 tiles,
 * the last one partial; k too short to split.  17 rows take the 64 x 64
 * tile. */
static void skinny_tile(void **state) {
  check_split(state,
              "func.func @main(%a: tensor<40x16xf32>, %b: tensor<40x520xf32>) -> tensor<16x520xf32> {\n"
              "  %c = stablehlo.dot_general %a, %b, contracting_dims = [0] x [0] :"
              " (tensor<40x16xf32>, tensor<40x520xf32>) -> tensor<16x520xf32>\n"
              "  return %c : tensor<16x520xf32>\n}\n",
              40, -1);
  fixture_t *f = *state;
  f->gpu_split = -1;
  check(state, DOT2(17, 40, 300), true, 40);
  f->gpu_split = 0;
}

/* f16 operands and result (S = 8): f32 partials, rounded to f16 once
 * after the reduce.  Each mode's result is the sum computed here in
 * double, rounded: within one f16 ulp (half an ulp for rounding, a little
 * more for the f32 sums' own rounding in any order). */
static void split_k_f16(void **state) {
  fixture_t *f = *state;
  void *in[2] = {NULL, NULL};
  int nin = 2;
  uint8_t *out[MODES];
  size_t bytes = 0;
  f->gpu_split = 1;
  f->gpu_skinny = true;
  run_modes_raw(f, DOT2T(1, 2048, 64, "f16", "f16"), true, false, out, &bytes, in, &nin);
  f->gpu_split = 0;
  f->gpu_skinny = false;
  assert_int_equal(bytes, 64 * 2);
  const uint16_t *a = in[0], *b = in[1];
  for (int j = 0; j < 64; j++) {
    double want = 0;
    for (int k = 0; k < 2048; k++) want += test_16bit_value(true, a[k]) * test_16bit_value(true, b[k * 64 + j]);
    double ulp = ldexp(1, (fabs(want) < ldexp(1, -14) ? -14 : ilogb(want)) - 10);
    for (int m = 0; m < MODES; m++) {
      uint16_t h;
      memcpy(&h, out[m] + 2 * j, 2);
      if (fabs(test_16bit_value(true, h) - want) > ulp)
        fail_msg("%s: element %d is %.9g, want %.9g", mode_env[m] ? mode_env[m] : "default", j, test_16bit_value(true, h), want);
    }
  }
  for (int m = 0; m < MODES; m++) free(out[m]);
  free(in[0]);
  free(in[1]);
}

/* ------------------------------------------------ integer products */

/* Integer products (GEMM_INT): every mode's results byte for byte the
 * elemental dot's, on inputs of random bits (sums that wrap). */
static void check_exact(void **state, const char *text, bool expect_gemm) {
  fixture_t *f = *state;
  uint8_t *out[MODES];
  size_t bytes = 0;
  f->int_bits = true;
  run_modes_raw(f, text, expect_gemm, false, out, &bytes, NULL, NULL);
  f->int_bits = false;
  assert_true(bytes > 0);
  for (int m = 0; m < MODES; m++)
    if (memcmp(out[m], out[MODE_OFF], bytes) != 0)
      fail_msg("%s differs from the elemental dot:\n%s", mode_env[m] ? mode_env[m] : "default kernel", text);
  for (int m = 0; m < MODES; m++) free(out[m]);
}

/* Skinny integer products split along k under VKHLO_GEMM=gpu: partials
 * of the product's own type, whose wrapping sums add up to the whole
 * sum's low bits (f32 partials would round past 2^24 and not wrap) */
static void int_split_k(void **state) {
  fixture_t *f = *state;
  f->gpu_split = 1;
  f->gpu_skinny = true;
  check_exact(state, DOT2T(2, 4096, 64, "i16", "i16"), true);
  check_exact(state, DOT2T(1, 2048, 64, "i32", "i32"), true);
  f->gpu_split = 0;
  f->gpu_skinny = false;
}

/* i8 operands in words (8 of them in half a 16-byte texel: K, N
 * multiples of 8, the lhs shared by subgroup shuffles) into i32: summed in
 * f32 where every partial sum is exact (K x 2^14 <= 2^24 for i8, K x
 * 255^2 for ui8: int_sums_exact_in_f32), as ints past that */
static void int8_words(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in0w_at(";
  f->cpu_needle2 = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in1w_at(";
  check_exact(state, DOT2T(40, 48, 64, "i8", "i32"), true);
  f->cpu_needle = "gemm_u8x8(GEMM_HALF8(in1w_at(";
  f->cpu_needle2 = "#define GEMM_INT 1";
  check_exact(state, DOT2T(24, 264, 40, "ui8", "ui32"), true); /* 264 > 2^24 / 255^2 */
  f->cpu_needle = "gemm_s8x8(GEMM_HALF8(in0w_at(";
  check_exact(state, DOT2T(16, 1032, 16, "i8", "i32"), true); /* 1032 > 2^10 */
  f->cpu_needle = "gemm_i2f8(gemm_u8x8(GEMM_HALF8(in1w_at(";
  f->cpu_needle2 = "uint gemm_v0 = uint(int(gemm_f0));";
  check_exact(state, DOT2T(24, 256, 40, "ui8", "ui32"), true); /* 256 x 255^2 < 2^24 */
  f->cpu_needle = f->cpu_needle2 = NULL;
}

/* 16-bit integers in words; 8-bit operands in words only where their
 * binding is whole 16-byte words (9 x 24 bytes is not: elements) */
static void int16_words(void **state) {
  fixture_t *f = *state;
  f->cpu_needle = "gemm_s16x8(in1w_at(";
  check_exact(state, DOT2T(24, 32, 40, "i16", "i32"), true);
  f->cpu_needle = "gemm_u16x8(in1w_at(";
  check_exact(state, DOT2T(16, 16, 16, "ui16", "i32"), true);
  f->cpu_needle = NULL;
  check_exact(state, DOT2T(9, 8, 24, "i8", "i32"), true); /* the rhs, 8 x 24 = 192 bytes: words */
  check_exact(state, DOT2T(9, 24, 8, "i8", "i32"), true); /* the lhs, 9 x 24 = 216 bytes: elements */
}

/* Sizes off the tiles and words, element loads: an operand widened by a
 * convert (read through), operands converted to the result's type (spec
 * 'dot_general'),
 * results of 8 and 16 bits (the low bits of the sums), and 32-bit
 * operands whose products and sums wrap. */
static void int_odd_mixed(void **state) {
  check_exact(state,
              "func.func @main(%a: tensor<33x17xui8>, %b: tensor<17x65xi16>) -> tensor<33x65xi32> {\n"
              "  %a16 = stablehlo.convert %a : (tensor<33x17xui8>) -> tensor<33x17xi16>\n"
              "  %c = stablehlo.dot_general %a16, %b, contracting_dims = [1] x [0] : (tensor<33x17xi16>, tensor<17x65xi16>)"
              " -> tensor<33x65xi32>\n  return %c : tensor<33x65xi32>\n}\n",
              true);
  check_exact(state, DOT2T(7, 13, 5, "i32", "i32"), true);
  check_exact(state, DOT2T(33, 17, 65, "ui32", "ui32"), true);
  check_exact(state, DOT2T(33, 17, 65, "i8", "i8"), true);
  check_exact(state, DOT2T(24, 40, 32, "ui8", "ui16"), true);
  /* an 8-bit product's value used in the epilogue: its low bits */
  check_exact(state,
              "func.func @main(%a: tensor<9x17xi8>, %b: tensor<17x24xi8>) -> tensor<9x24xf32> {\n"
              "  %c = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<9x17xi8>, tensor<17x24xi8>)"
              " -> tensor<9x24xi8>\n"
              "  %f = stablehlo.convert %c : (tensor<9x24xi8>) -> tensor<9x24xf32>\n"
              "  return %f : tensor<9x24xf32>\n}\n",
              true);
  check_exact(state,
              "func.func @main(%a: tensor<3x33x17xi8>, %b: tensor<3x65x17xi8>) -> tensor<3x33x65xi16> {\n"
              "  %c = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [2] :"
              " (tensor<3x33x17xi8>, tensor<3x65x17xi8>) -> tensor<3x33x65xi16>\n"
              "  return %c : tensor<3x33x65xi16>\n}\n",
              true);
}

/* 7x13x5 of i32 also against sums computed here, wrapping modulo 2^32 */
static void int_hand(void **state) {
  fixture_t *f = *state;
  uint8_t *out[MODES];
  void *in[2] = {NULL, NULL};
  int nin = 2;
  size_t bytes = 0;
  f->int_bits = true;
  run_modes_raw(f, DOT2T(7, 5, 13, "i32", "i32"), true, false, out, &bytes, in, &nin);
  f->int_bits = false;
  assert_int_equal(bytes, 7 * 13 * 4);
  const uint32_t *a = in[0], *b = in[1];
  int wraps = 0;
  for (int i = 0; i < 7; i++)
    for (int j = 0; j < 13; j++) {
      uint32_t s = 0;
      double exact = 0; /* the unwrapped sum's magnitude: past 2^31 it wrapped */
      for (int k = 0; k < 5; k++) {
        s += a[i * 5 + k] * b[k * 13 + j];
        exact += (double)(int32_t)a[i * 5 + k] * (int32_t)b[k * 13 + j];
      }
      wraps += fabs(exact) > 2147483647.0;
      for (int m = 0; m < MODES; m++) {
        uint32_t got;
        memcpy(&got, out[m] + 4 * (i * 13 + j), 4);
        if (got != s) fail_msg("%s: [%d, %d] is %u, want %u", mode_env[m] ? mode_env[m] : "default", i, j, got, s);
      }
    }
  assert_true(wraps > 0); /* the inputs exercise the wrapping */
  for (int m = 0; m < MODES; m++) free(out[m]);
  free(in[0]);
  free(in[1]);
}

/* A quantized layer: i8 x i8 into i32 with widening converts before it
 * (read through: gemm_s8x8), the sums converted to f32, scaled per output
 * column and given a bias in the epilogue, stored 8 at a time (K = 64:
 * f32 sums into gemm_epilogue8; K = 1040: ivec4 accumulators); and a
 * narrowing convert, which the kernel cannot read through (the elemental
 * path). */
static void int_quantized_layer(void **state) {
  fixture_t *f = *state;
  static const int ks[] = {64, 1040};
  for (int i = 0; i < 2; i++) {
    int k = ks[i];
    char text[2048];
    snprintf(text, sizeof text,
             "func.func @main(%%a: tensor<32x%dxi8>, %%w: tensor<%dx48xi8>, %%s: tensor<48xf32>, %%bias: tensor<48xf32>)"
             " -> tensor<32x48xf32> {\n"
             "  %%a32 = stablehlo.convert %%a : (tensor<32x%dxi8>) -> tensor<32x%dxi32>\n"
             "  %%w32 = stablehlo.convert %%w : (tensor<%dx48xi8>) -> tensor<%dx48xi32>\n"
             "  %%c = stablehlo.dot_general %%a32, %%w32, contracting_dims = [1] x [0] : (tensor<32x%dxi32>, tensor<%dx48xi32>)"
             " -> tensor<32x48xi32>\n"
             "  %%cf = stablehlo.convert %%c : (tensor<32x48xi32>) -> tensor<32x48xf32>\n"
             "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [1] : (tensor<48xf32>) -> tensor<32x48xf32>\n"
             "  %%bb = stablehlo.broadcast_in_dim %%bias, dims = [1] : (tensor<48xf32>) -> tensor<32x48xf32>\n"
             "  %%y = stablehlo.multiply %%cf, %%sb : tensor<32x48xf32>\n"
             "  %%z = stablehlo.add %%y, %%bb : tensor<32x48xf32>\n"
             "  return %%z : tensor<32x48xf32>\n}\n",
             k, k, k, k, k, k, k, k);
    f->cpu_needle = "gemm_s8x8(GEMM_HALF8(in1w_at(";
    f->cpu_needle2 = i ? "void gemm_epilogue8(int idx, ivec4 gemm_a0" : "void gemm_epilogue8(int idx, vec4 gemm_a0";
    check_exact(state, text, true);
  }
  f->cpu_needle = f->cpu_needle2 = NULL;
  check_exact(state,
              "func.func @main(%a: tensor<16x24xi32>, %w: tensor<24x16xi8>) -> tensor<16x16xi32> {\n"
              "  %a8 = stablehlo.convert %a : (tensor<16x24xi32>) -> tensor<16x24xi8>\n"
              "  %c = stablehlo.dot_general %a8, %w, contracting_dims = [1] x [0] : (tensor<16x24xi8>, tensor<24x16xi8>)"
              " -> tensor<16x16xi32>\n"
              "  return %c : tensor<16x16xi32>\n}\n",
              false);
}

/* x [m, k] of |xt| @ convert(w [k, n] of |wt|) to |ct|, the product into
 * |rt|, into |buf|: integer weights read through their convert. */
static const char *converted_rhs(char *buf, size_t size, int m, int k, int n, const char *xt, const char *wt,
                                 const char *ct, const char *rt) {
  snprintf(buf, size,
           "func.func @main(%%x: tensor<%dx%dx%s>, %%w: tensor<%dx%dx%s>) -> tensor<%dx%dx%s> {\n"
           "  %%wf = stablehlo.convert %%w : (tensor<%dx%dx%s>) -> tensor<%dx%dx%s>\n"
           "  %%c = stablehlo.dot_general %%x, %%wf, contracting_dims = [1] x [0] : (tensor<%dx%dx%s>, tensor<%dx%dx%s>)"
           " -> tensor<%dx%dx%s>\n"
           "  return %%c : tensor<%dx%dx%s>\n}\n",
           m, k, xt, k, n, wt, m, n, rt, k, n, wt, k, n, ct, m, k, xt, k, n, ct, m, n, rt, m, n, rt);
  return buf;
}

/* x [m, k] @ (convert(w [k, n] of |wt|) * broadcast(s [n])), all in float
 * type |ft|, into |buf|: integer weights with a scale per column. */
static const char *column_scaled(char *buf, size_t size, int m, int k, int n, const char *ft, const char *wt) {
  snprintf(buf, size,
           "func.func @main(%%x: tensor<%dx%dx%s>, %%w: tensor<%dx%dx%s>, %%s: tensor<%dx%s>) -> tensor<%dx%dx%s> {\n"
           "  %%wf = stablehlo.convert %%w : (tensor<%dx%dx%s>) -> tensor<%dx%dx%s>\n"
           "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [1] : (tensor<%dx%s>) -> tensor<%dx%dx%s>\n"
           "  %%ws = stablehlo.multiply %%wf, %%sb : tensor<%dx%dx%s>\n"
           "  %%c = stablehlo.dot_general %%x, %%ws, contracting_dims = [1] x [0] : (tensor<%dx%dx%s>, tensor<%dx%dx%s>)"
           " -> tensor<%dx%dx%s>\n"
           "  return %%c : tensor<%dx%dx%s>\n}\n",
           m, k, ft, k, n, wt, n, ft, m, n, ft, k, n, wt, k, n, ft, n, ft, k, n, ft, k, n, ft, m, k, ft, k, n, ft, m, n, ft,
           m, n, ft);
  return buf;
}

/* Integer weights of a float product (the scale applied after it, as
 * torchao's int8 weight-only linear does): the convert to the float type
 * is exact, so the kernel reads the integers (words: gemm_i2f8) and every
 * mode gives the elemental dot's bits.  i8 [K, N] with words, ui8 [N, K]
 * contracted on its last dimension (PyTorch's Linear layout) for a
 * decode row and a prompt, i8 into a bf16 product, i16 into f32 words;
 * i16 into bf16 is not exact (the elemental path). */
static void int_weights_float_product(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  f->cpu_needle = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in";
  check_bits(state,
             "func.func @main(%x: tensor<40x48xf32>, %w: tensor<48x64xi8>, %s: tensor<64xf32>) -> tensor<40x64xf32> {\n"
             "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
             "  %c = stablehlo.dot_general %x, %wf, contracting_dims = [1] x [0] : (tensor<40x48xf32>, tensor<48x64xf32>)"
             " -> tensor<40x64xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<40x64xf32>\n"
             "  %y = stablehlo.multiply %c, %sb : tensor<40x64xf32>\n"
             "  return %y : tensor<40x64xf32>\n}\n",
             true, false, VKHLO_F32);
  f->cpu_needle = NULL;
  static const char *const linear =
      "func.func @main(%x: tensor<MROWSx48xf32>, %w: tensor<40x48xui8>) -> tensor<MROWSx40xf32> {\n"
      "  %wf = stablehlo.convert %w : (tensor<40x48xui8>) -> tensor<40x48xf32>\n"
      "  %c = stablehlo.dot_general %x, %wf, contracting_dims = [1] x [1] : (tensor<MROWSx48xf32>, tensor<40x48xf32>)"
      " -> tensor<MROWSx40xf32>\n"
      "  return %c : tensor<MROWSx40xf32>\n}\n";
  static const char *const rows[] = {"1", "24"};
  for (int r = 0; r < 2; r++) {
    char text[1024];
    size_t o = 0;
    for (const char *q = linear; *q; q++) {
      if (strncmp(q, "MROWS", 5) == 0) {
        o += (size_t)snprintf(text + o, sizeof text - o, "%s", rows[r]);
        q += 4;
      } else {
        text[o++] = *q;
      }
    }
    text[o] = 0;
    check_bits(state, text, true, false, VKHLO_F32);
  }
  char prog[1024];
  check_bits(state, converted_rhs(prog, sizeof prog, 24, 32, 40, "bf16", "i8", "bf16", "bf16"), true, false, VKHLO_BF16);
  f->cpu_needle = "gemm_i2f8(gemm_s16x8(in";
  check_bits(state, converted_rhs(prog, sizeof prog, 24, 32, 40, "f32", "i16", "f32", "f32"), true, false, VKHLO_F32);
  f->cpu_needle = NULL;
  check_bits(state, converted_rhs(prog, sizeof prog, 24, 32, 40, "bf16", "i16", "bf16", "bf16"), false, false,
             VKHLO_BF16);
  f->int_bits = false;
}

/* Integer weights dequantized before the product (convert(q) * a scale
 * per column, JAX's w.astype(f32) * s): one kernel reads the integers and
 * scales them (RHS_SCALE_AT; fused by codegen_gemm_scaled_operand), every
 * mode gives the bits of the program's f32 products (VKHLO_GEMM=off
 * materializes the multiply).  Each path of gemm_cpu.comp that loads
 * the rhs: words along n with subgroups (40 rows) and without (4 rows),
 * words along k (ui8 [N, K], PyTorch's layout, 24 rows) and elements (1
 * row); an f16 scale.  A scale that changes at every step of k (one per row
 * of the weights) is materialized, the product still a GEMM. */
static void int_scaled_weights(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  static const int rows[] = {40, 4}, cols[] = {64, 128}; /* 128: 16 invocations of 8 columns (words) */
  for (int r = 0; r < 2; r++) {
    char text[1024];
    column_scaled(text, sizeof text, rows[r], 48, cols[r], "f32", "i8");
    f->cpu_needle = "#define RHS_SCALE_AT_0";
    f->cpu_needle2 = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in";
    f->gpu_needle = "#define RHS_SCALE_AT(b, n)";
    check_bits(state, text, true, false, VKHLO_F32);
  }
  static const int linear_rows[] = {24, 1};
  for (int r = 0; r < 2; r++) {
    char text[1024];
    snprintf(text, sizeof text,
             "func.func @main(%%x: tensor<%dx48xf32>, %%w: tensor<40x48xui8>, %%s: tensor<40xf16>) -> tensor<%dx40xf32> {\n"
             "  %%wf = stablehlo.convert %%w : (tensor<40x48xui8>) -> tensor<40x48xf32>\n"
             "  %%s32 = stablehlo.convert %%s : (tensor<40xf16>) -> tensor<40xf32>\n"
             "  %%sb = stablehlo.broadcast_in_dim %%s32, dims = [0] : (tensor<40xf32>) -> tensor<40x48xf32>\n"
             "  %%ws = stablehlo.multiply %%sb, %%wf : tensor<40x48xf32>\n"
             "  %%c = stablehlo.dot_general %%x, %%ws, contracting_dims = [1] x [1] : (tensor<%dx48xf32>, tensor<40x48xf32>)"
             " -> tensor<%dx40xf32>\n"
             "  return %%c : tensor<%dx40xf32>\n}\n",
             linear_rows[r], linear_rows[r], linear_rows[r], linear_rows[r], linear_rows[r]);
    f->cpu_needle = "#define RHS_SCALE_AT_0";
    f->cpu_needle2 = linear_rows[r] > 1 ? "#define RHS_LOADWK_0(off) gemm_i2f8(gemm_u8x8(" : NULL;
    check_bits(state, text, true, false, VKHLO_F32);
  }
  f->cpu_needle = f->cpu_needle2 = f->gpu_needle = NULL;
  /* a scaled and a plain rhs of one lhs (one kernel where the target
   * takes several products per kernel: the plain one's scale is 1) */
  check_bits(state,
             "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %s: tensor<64xf32>, %v: tensor<48x64xf32>)"
             " -> tensor<24x64xf32> {\n"
             "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<48x64xf32>\n"
             "  %ws = stablehlo.multiply %wf, %sb : tensor<48x64xf32>\n"
             "  %c = stablehlo.dot_general %x, %ws, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
             " -> tensor<24x64xf32>\n"
             "  %d = stablehlo.dot_general %x, %v, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
             " -> tensor<24x64xf32>\n"
             "  %y = stablehlo.multiply %c, %d : tensor<24x64xf32>\n"
             "  return %y : tensor<24x64xf32>\n}\n",
             true, false, VKHLO_F32);
  f->int_bits = false;
  /* a scale per row of the weights (along k): materialized */
  fixture_t *g = *state;
  g->int_bits = true;
  check_bits(state,
             "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %s: tensor<48xf32>) -> tensor<24x64xf32> {\n"
             "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<48xf32>) -> tensor<48x64xf32>\n"
             "  %ws = stablehlo.multiply %wf, %sb : tensor<48x64xf32>\n"
             "  %c = stablehlo.dot_general %x, %ws, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
             " -> tensor<24x64xf32>\n"
             "  return %c : tensor<24x64xf32>\n}\n",
             true, false, VKHLO_F32);
  g->int_bits = false;
}

/* x [m, k] @ reshape(q3 * broadcast(s), [k, n]) into |buf|, in float
 * type |ft| (x, s and the dequantization; the product into f32): integer
 * weights w [k, n] of |wtype| converted and reshaped [k / g, g, n], minus
 * a zero point z [k / g, n] of |ztype| (converted where not |ft|; none
 * where NULL), times a scale s [k / g, n], one per group of g steps of k
 * and column. */
static const char *grouped_weights(char *buf, size_t size, int m, int k, int n, int g, const char *ft, const char *wtype,
                                   const char *ztype) {
  char w3[48], q[48], w2[48];
  snprintf(w3, sizeof w3, "tensor<%dx%dx%dx%s>", k / g, g, n, ft);
  snprintf(q, sizeof q, "tensor<%dx%dx%s>", k / g, n, ft);
  snprintf(w2, sizeof w2, "tensor<%dx%dx%s>", k, n, ft);
  bool zconv = ztype && strcmp(ztype, ft) != 0;
  size_t o = (size_t)snprintf(buf, size, "func.func @main(%%x: tensor<%dx%dx%s>, %%w: tensor<%dx%dx%s>, %%s: %s", m, k, ft,
                              k, n, wtype, q);
  if (ztype) o += (size_t)snprintf(buf + o, size - o, ", %%z: tensor<%dx%dx%s>", k / g, n, ztype);
  o += (size_t)snprintf(buf + o, size - o,
                        ") -> tensor<%dx%dxf32> {\n"
                        "  %%wf = stablehlo.convert %%w : (tensor<%dx%dx%s>) -> %s\n"
                        "  %%w3 = stablehlo.reshape %%wf : (%s) -> %s\n",
                        m, n, k, n, wtype, w2, w2, w3);
  if (ztype) {
    if (zconv)
      o += (size_t)snprintf(buf + o, size - o, "  %%zf = stablehlo.convert %%z : (tensor<%dx%dx%s>) -> %s\n", k / g, n,
                            ztype, q);
    o += (size_t)snprintf(buf + o, size - o,
                          "  %%zb = stablehlo.broadcast_in_dim %s, dims = [0, 2] : (%s) -> %s\n"
                          "  %%wz = stablehlo.subtract %%w3, %%zb : %s\n",
                          zconv ? "%zf" : "%z", q, w3, w3);
  }
  snprintf(buf + o, size - o,
           "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0, 2] : (%s) -> %s\n"
           "  %%ws = stablehlo.multiply %s, %%sb : %s\n"
           "  %%w2 = stablehlo.reshape %%ws : (%s) -> %s\n"
           "  %%c = stablehlo.dot_general %%x, %%w2, contracting_dims = [1] x [0] : (tensor<%dx%dx%s>, %s)"
           " -> tensor<%dx%dxf32>\n"
           "  return %%c : tensor<%dx%dxf32>\n}\n",
           q, w3, ztype ? "%wz" : "%w3", w3, w3, w2, m, k, ft, w2, m, n, m, n);
  return buf;
}

/* Does a kernel of |text| compiled in mode |m| (MODE_AUTO: the default
 * device's own kernels) contain |needle|? */
static bool kernel_has(fixture_t *f, int m, const char *text, const char *needle) {
  char dir[] = "/tmp/vkhlo_gemm_testXXXXXX";
  vkhlo_executable_t *exe = test_compile_dumped(f->ctx[m], text, dir);
  bool has = test_dump_contains(dir, needle);
  vkhlo_executable_destroy(exe);
  test_remove_dir(dir);
  return has;
}

/* Weights dequantized in a 16-bit type (w.astype(bf16) * s in a bf16
 * model): the program's subtract and multiply round to that type, and so
 * do the kernels (RHS_QROUND), every value the elemental dot's. */
static void int_scaled_16bit(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  f->cpu_needle = "#define RHS_QROUND_0(x) gemm_round_bf16(x)";
  f->gpu_needle = "#define RHS_QROUND(x) gemm_round_bf16(x)";
  char text[2048];
  check_bits(state, column_scaled(text, sizeof text, 24, 48, 64, "bf16", "i8"), true, false, VKHLO_BF16);
  /* f16, ui4 weights and zero points per group of 32, into f32 */
  f->cpu_needle = "#define RHS_QROUND_0(x) gemm_round_f16(x)";
  f->gpu_needle = "#define RHS_QROUND(x) gemm_round_f16(x)";
  check_bits(state, grouped_weights(text, sizeof text, 40, 64, 48, 32, "f16", "ui4", "ui4"), true, false, VKHLO_F32);
  f->cpu_needle = f->gpu_needle = NULL;
  f->int_bits = false;
}

/* Scaled weights split along k on GPUs (split-K): the split's reshape of
 * the rhs is one more view of the integers and their scales (per column,
 * or per group: reshape_qparam), which the kernel reads (no f32 weights
 * written). */
static void split_k_scaled(void **state) {
  fixture_t *f = *state;
  char text[1024];
  column_scaled(text, sizeof text, 1, 1024, 64, "f32", "i8");
  f->int_bits = true;
  check_split(state, text, 1024, 1);
  assert_true(kernel_has(f, MODE_GPU, text, "#define RHS_SCALE_AT(b, n)"));
  /* grouped, with zero points: the split's reshape [8, 128, 64] -> [S,
   * 1024 / S, 64] keeps the groups along each part's k, and moves the
   * scales and zero points by 1024 / S / 128 groups per part */
  char grouped[2048];
  grouped_weights(grouped, sizeof grouped, 1, 1024, 64, 128, "f32", "i8", "f32");
  check_split(state, grouped, 1024, 1);
  assert_true(kernel_has(f, MODE_GPU, grouped, "#define RHS_ZERO_KOFF(k) ((k) / 128 * 64)"));
  assert_true(kernel_has(f, MODE_GPU, grouped, "#define RHS_SCALE_KOFF(k) ((k) / 128 * 64)"));
  f->int_bits = false;
}

/* 4-bit integer weights (a byte per element holding the value) are read
 * as 8-bit ones: int4 weights with a scale per group, unsigned ones
 * converted into a float product, and signed ones widened into an int8
 * product; they took the per-element kernel before. */
static void int4_weights(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  f->cpu_needle = "#define RHS_SCALE_KOFF_0(k) ((k) / 32 * 48)";
  f->cpu_needle2 = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in";
  f->gpu_needle = "#define RHS_SCALE_KOFF(k) ((k) / 32 * 48)";
  char text[2048];
  check_bits(state, grouped_weights(text, sizeof text, 40, 64, 48, 32, "f32", "i4", NULL), true, false, VKHLO_F32);
  f->cpu_needle = "gemm_i2f8(gemm_u8x8(GEMM_HALF8(in";
  f->cpu_needle2 = f->gpu_needle = NULL;
  check_bits(state, converted_rhs(text, sizeof text, 24, 32, 16, "f32", "ui4", "f32", "f32"), true, false, VKHLO_F32);
  f->cpu_needle = NULL;
  check_bits(state, converted_rhs(text, sizeof text, 24, 32, 16, "i8", "i4", "i8", "i32"), true, false, VKHLO_S32);
  f->int_bits = false;
}

/* Zero points (asymmetric quantization): x @ ((convert(q) - z) * s), z
 * per column or per group, a float or integers converted, the subtract
 * the multiply's operand.  The GEMM kernels subtract and scale each loaded
 * weight, the program's f32 subtract then multiply; a zero point on the
 * left, or without a scale, stays materialized. */
static void int_zero_points(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  /* ui4 weights, groups of 32, ui4 zero points */
  f->cpu_needle = "#define RHS_ZERO_KOFF_0(k) ((k) / 32 * 48)";
  f->cpu_needle2 = "#define RHS_SCALE_KOFF_0(k) ((k) / 32 * 48)";
  f->gpu_needle = "#define RHS_ZERO_AT(b, n)";
  char text[2048];
  check_bits(state, grouped_weights(text, sizeof text, 40, 64, 48, 32, "f32", "ui4", "ui4"), true, false, VKHLO_F32);
  /* f32 zero points per column, the scale the multiply's first operand,
   * a grouped scale beside a per-column zero point, and a plain-scaled
   * product of the same lhs (one kernel where the target takes several:
   * its zero point 0) */
  f->cpu_needle = "#define RHS_ZERO_AT_0(b, n)";
  f->cpu_needle2 = "#define RHS_ZERO_KOFF_0(k) 0\n#define RHS_SCALE_NEW_0(k) ((k) % 16 == 0)";
  f->gpu_needle = NULL;
  check_bits(state,
             "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %s: tensor<3x64xf32>, %z: tensor<64xf32>,"
             " %v: tensor<48x64xi8>, %t: tensor<64xf32>) -> tensor<24x64xf32> {\n"
             "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
             "  %w3 = stablehlo.reshape %wf : (tensor<48x64xf32>) -> tensor<3x16x64xf32>\n"
             "  %zb = stablehlo.broadcast_in_dim %z, dims = [2] : (tensor<64xf32>) -> tensor<3x16x64xf32>\n"
             "  %wz = stablehlo.subtract %w3, %zb : tensor<3x16x64xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 2] : (tensor<3x64xf32>) -> tensor<3x16x64xf32>\n"
             "  %ws = stablehlo.multiply %sb, %wz : tensor<3x16x64xf32>\n"
             "  %w2 = stablehlo.reshape %ws : (tensor<3x16x64xf32>) -> tensor<48x64xf32>\n"
             "  %vf = stablehlo.convert %v : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
             "  %tb = stablehlo.broadcast_in_dim %t, dims = [1] : (tensor<64xf32>) -> tensor<48x64xf32>\n"
             "  %vs = stablehlo.multiply %vf, %tb : tensor<48x64xf32>\n"
             "  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
             " -> tensor<24x64xf32>\n"
             "  %d = stablehlo.dot_general %x, %vs, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
             " -> tensor<24x64xf32>\n"
             "  %y = stablehlo.add %c, %d : tensor<24x64xf32>\n"
             "  return %y : tensor<24x64xf32>\n}\n",
             true, false, VKHLO_F32);
  f->cpu_needle = f->cpu_needle2 = NULL;
  /* z - q, and q - z without a scale: materialized */
  static const char *const materialized[] = {
      "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %s: tensor<64xf32>, %z: tensor<64xf32>)"
      " -> tensor<24x64xf32> {\n"
      "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
      "  %zb = stablehlo.broadcast_in_dim %z, dims = [1] : (tensor<64xf32>) -> tensor<48x64xf32>\n"
      "  %wz = stablehlo.subtract %zb, %wf : tensor<48x64xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<64xf32>) -> tensor<48x64xf32>\n"
      "  %ws = stablehlo.multiply %wz, %sb : tensor<48x64xf32>\n"
      "  %c = stablehlo.dot_general %x, %ws, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
      " -> tensor<24x64xf32>\n"
      "  return %c : tensor<24x64xf32>\n}\n",
      "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %z: tensor<64xf32>) -> tensor<24x64xf32> {\n"
      "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
      "  %zb = stablehlo.broadcast_in_dim %z, dims = [1] : (tensor<64xf32>) -> tensor<48x64xf32>\n"
      "  %wz = stablehlo.subtract %wf, %zb : tensor<48x64xf32>\n"
      "  %c = stablehlo.dot_general %x, %wz, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
      " -> tensor<24x64xf32>\n"
      "  return %c : tensor<24x64xf32>\n}\n",
  };
  for (int i = 0; i < 2; i++) {
    assert_false(kernel_has(f, MODE_AUTO, materialized[i], "#define RHS_ZERO_AT"));
    check_bits(state, materialized[i], true, false, VKHLO_F32);
  }
  f->int_bits = false;
}

/* Dots of one lhs whose rhs differ in layout: one kernel takes several
 * products of one lhs only with the same dimension numbers and shapes
 * (codegen_gemm_same_product), so where the target fuses several
 * (LP_NATIVE_VECTOR_WIDTH=512, e2e_gemm_lanes16) the third one, its rhs
 * [k, n] where the others' are [n, k], gets a kernel of its own instead of
 * sending all three to the per-element path. */
static void dots_of_one_lhs_two_layouts(void **state) {
  check_bits(state,
             "func.func @main(%x: tensor<24x64xf32>, %w: tensor<40x64xf32>, %v: tensor<40x64xf32>,"
             " %u: tensor<64x40xf32>) -> tensor<24x40xf32> {\n"
             "  %c = stablehlo.dot_general %x, %w, contracting_dims = [1] x [1] : (tensor<24x64xf32>, tensor<40x64xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %d = stablehlo.dot_general %x, %v, contracting_dims = [1] x [1] : (tensor<24x64xf32>, tensor<40x64xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %e = stablehlo.dot_general %x, %u, contracting_dims = [1] x [0] : (tensor<24x64xf32>, tensor<64x40xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %cd = stablehlo.multiply %c, %d : tensor<24x40xf32>\n"
             "  %y = stablehlo.add %cd, %e : tensor<24x40xf32>\n"
             "  return %y : tensor<24x40xf32>\n}\n",
             true, false, VKHLO_F32);
}

/* Group-wise scales: x @ reshape(q3 * broadcast(s)), q3 the integer
 * weights [k / G, G, n] (reshaped before or after their convert) and s a
 * scale per group of G steps of k and column.  The GEMM kernels read the
 * integers and each group's scales (RHS_SCALE_KOFF); every value equals
 * the elemental dot's on the materialized weights.  Groups the kernels do
 * not take (not a multiple of 8, or along n) stay materialized. */
static void int_grouped_scales(void **state) {
  fixture_t *f = *state;
  f->int_bits = true;
  /* [48 = 3 x 16, 64]: words along n, the lhs shared by subgroups (40 rows) */
  f->cpu_needle = "#define RHS_SCALE_KOFF_0(k) ((k) / 16 * 64)";
  f->cpu_needle2 = "gemm_i2f8(gemm_s8x8(GEMM_HALF8(in";
  f->gpu_needle = "#define RHS_SCALE_KOFF(k) ((k) / 16 * 64)";
  char text[2048];
  check_bits(state, grouped_weights(text, sizeof text, 40, 48, 64, 16, "f32", "i8", NULL), true, false, VKHLO_F32);
  /* ui8 reshaped before its convert, an f16 scale [3, 1, 20] (a unit
   * dimension broadcast), 20 columns (element loads), 4 rows, groups of 8 */
  f->cpu_needle = "#define RHS_SCALE_KOFF_0(k) ((k) / 8 * 20)";
  f->cpu_needle2 = NULL;
  f->gpu_needle = "#define RHS_SCALE_KOFF(k) ((k) / 8 * 20)";
  check_bits(state,
             "func.func @main(%x: tensor<4x24xf32>, %w: tensor<24x20xui8>, %s: tensor<3x1x20xf16>) -> tensor<4x20xf32> {\n"
             "  %w3 = stablehlo.reshape %w : (tensor<24x20xui8>) -> tensor<3x8x20xui8>\n"
             "  %wf = stablehlo.convert %w3 : (tensor<3x8x20xui8>) -> tensor<3x8x20xf32>\n"
             "  %s32 = stablehlo.convert %s : (tensor<3x1x20xf16>) -> tensor<3x1x20xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s32, dims = [0, 1, 2] : (tensor<3x1x20xf32>) -> tensor<3x8x20xf32>\n"
             "  %ws = stablehlo.multiply %sb, %wf : tensor<3x8x20xf32>\n"
             "  %w2 = stablehlo.reshape %ws : (tensor<3x8x20xf32>) -> tensor<24x20xf32>\n"
             "  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<4x24xf32>, tensor<24x20xf32>)"
             " -> tensor<4x20xf32>\n"
             "  return %c : tensor<4x20xf32>\n}\n",
             true, false, VKHLO_F32);
  /* a linear layer's [n, k] weights, groups along its last dimension (the
   * rhs read in words along k), two such products of one lhs and a plain
   * one beside them */
  f->cpu_needle = "#define RHS_SCALE_KOFF_0(k) ((k) / 32 * 1)";
  f->cpu_needle2 = "#define RHS_LOADWK_0(off)";
  f->gpu_needle = NULL;
  check_bits(state,
             "func.func @main(%x: tensor<24x64xf32>, %w: tensor<40x64xi8>, %s: tensor<40x2xf32>, %v: tensor<40x64xi8>,"
             " %t: tensor<40x2xf32>, %u: tensor<64x40xf32>) -> tensor<24x40xf32> {\n"
             "  %w3 = stablehlo.reshape %w : (tensor<40x64xi8>) -> tensor<40x2x32xi8>\n"
             "  %wf = stablehlo.convert %w3 : (tensor<40x2x32xi8>) -> tensor<40x2x32xf32>\n"
             "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1] : (tensor<40x2xf32>) -> tensor<40x2x32xf32>\n"
             "  %ws = stablehlo.multiply %wf, %sb : tensor<40x2x32xf32>\n"
             "  %w2 = stablehlo.reshape %ws : (tensor<40x2x32xf32>) -> tensor<40x64xf32>\n"
             "  %v3 = stablehlo.reshape %v : (tensor<40x64xi8>) -> tensor<40x2x32xi8>\n"
             "  %vf = stablehlo.convert %v3 : (tensor<40x2x32xi8>) -> tensor<40x2x32xf32>\n"
             "  %tb = stablehlo.broadcast_in_dim %t, dims = [0, 1] : (tensor<40x2xf32>) -> tensor<40x2x32xf32>\n"
             "  %vs = stablehlo.multiply %vf, %tb : tensor<40x2x32xf32>\n"
             "  %v2 = stablehlo.reshape %vs : (tensor<40x2x32xf32>) -> tensor<40x64xf32>\n"
             "  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [1] : (tensor<24x64xf32>, tensor<40x64xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %d = stablehlo.dot_general %x, %v2, contracting_dims = [1] x [1] : (tensor<24x64xf32>, tensor<40x64xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %e = stablehlo.dot_general %x, %u, contracting_dims = [1] x [0] : (tensor<24x64xf32>, tensor<64x40xf32>)"
             " -> tensor<24x40xf32>\n"
             "  %cd = stablehlo.multiply %c, %d : tensor<24x40xf32>\n"
             "  %y = stablehlo.add %cd, %e : tensor<24x40xf32>\n"
             "  return %y : tensor<24x40xf32>\n}\n",
             true, false, VKHLO_F32);
  f->cpu_needle = f->cpu_needle2 = f->gpu_needle = NULL;
  /* groups of 4 steps of k, and groups along n: the weights materialized */
  static const char along_n[] =
      "func.func @main(%x: tensor<24x48xf32>, %w: tensor<48x64xi8>, %s: tensor<4xf32>) -> tensor<24x64xf32> {\n"
      "  %wf = stablehlo.convert %w : (tensor<48x64xi8>) -> tensor<48x64xf32>\n"
      "  %w3 = stablehlo.reshape %wf : (tensor<48x64xf32>) -> tensor<48x4x16xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<4xf32>) -> tensor<48x4x16xf32>\n"
      "  %ws = stablehlo.multiply %w3, %sb : tensor<48x4x16xf32>\n"
      "  %w2 = stablehlo.reshape %ws : (tensor<48x4x16xf32>) -> tensor<48x64xf32>\n"
      "  %c = stablehlo.dot_general %x, %w2, contracting_dims = [1] x [0] : (tensor<24x48xf32>, tensor<48x64xf32>)"
      " -> tensor<24x64xf32>\n"
      "  return %c : tensor<24x64xf32>\n}\n";
  const char *materialized[2] = {grouped_weights(text, sizeof text, 24, 48, 64, 4, "f32", "i8", NULL), along_n};
  for (int i = 0; i < 2; i++) {
    assert_false(kernel_has(f, MODE_AUTO, materialized[i], "#define RHS_SCALE_AT"));
    check_bits(state, materialized[i], true, false, VKHLO_F32);
  }
  f->int_bits = false;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(one_by_one),         cmocka_unit_test(hand_7x13x5),
      cmocka_unit_test(odd_33x65x17),       cmocka_unit_test(words_24x40x48),
      cmocka_unit_test(wide_70x200x64),     cmocka_unit_test(batched),
      cmocka_unit_test(permuted_dims),      cmocka_unit_test(two_contracting),
      cmocka_unit_test(paired_contracting_transposed), cmocka_unit_test(fused_epilogue),
      cmocka_unit_test(scattered_contracting), cmocka_unit_test(transposed_contracting_stored),
      cmocka_unit_test(dynamic_sliced_operands),
      cmocka_unit_test(fused_epilogue_words), cmocka_unit_test(two_results_words),
      cmocka_unit_test(scores_transposed_rhs), cmocka_unit_test(scores_rhs_words_along_k),
      cmocka_unit_test(swiglu_two_dots),    cmocka_unit_test(two_dots_two_lhs),
      cmocka_unit_test(attention_values_transposed),
      cmocka_unit_test(three_dots),         cmocka_unit_test(three_dots_words),
      cmocka_unit_test(subgroups_300x280x264), cmocka_unit_test(subgroups_batched),
      cmocka_unit_test(subgroups_lhs_transposed),
      cmocka_unit_test(reshape_of_transpose), cmocka_unit_test(reshape_unmergeable_falls_back),
      cmocka_unit_test(sliced_operands),
      cmocka_unit_test(produced_operands),
      cmocka_unit_test(split_contracting_words), cmocka_unit_test(split_contracting_elements),
      cmocka_unit_test(f16_words),          cmocka_unit_test(bf16_words),
      cmocka_unit_test(bf16_odd),           cmocka_unit_test(f16_odd),
      cmocka_unit_test(f16_to_f32),         cmocka_unit_test(f16_convert_prologue),
      cmocka_unit_test(f16_epilogue),       cmocka_unit_test(f32_to_f16_falls_back),
      cmocka_unit_test(split_k_head),       cmocka_unit_test(split_k_dot),
      cmocka_unit_test(split_k_batched),    cmocka_unit_test(split_k_short),
      cmocka_unit_test(split_k_f16),        cmocka_unit_test(skinny_tile),
      cmocka_unit_test(int8_words),         cmocka_unit_test(int16_words),
      cmocka_unit_test(int_odd_mixed),      cmocka_unit_test(int_hand),
      cmocka_unit_test(int_quantized_layer), cmocka_unit_test(int_weights_float_product),
      cmocka_unit_test(int_split_k),        cmocka_unit_test(int_scaled_weights),
      cmocka_unit_test(int_grouped_scales), cmocka_unit_test(dots_of_one_lhs_two_layouts),
      cmocka_unit_test(int4_weights),       cmocka_unit_test(int_zero_points),
      cmocka_unit_test(split_k_scaled),     cmocka_unit_test(int_scaled_16bit),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
