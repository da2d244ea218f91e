/*
 * Attention kernels (codegen/elemental.h, el_attention_match; emitted by
 * codegen/emit_fusion.c): softmax(q k^T * scale [+ mask]) v as one kernel
 * on CPU devices with subgroup shuffles.  Each program runs fused and with
 * no_fusion (one kernel per instruction), and both results are checked
 * against a softmax attention computed here in double precision, to f32
 * rounding.  Shapes: chess-9M's layout (heads split from the model width by
 * a reshape, keys not a multiple of the subgroup size, K and V read by
 * words), and one without batch dimensions with fewer keys than lanes, a
 * value width that is not a multiple of the subgroup size and an additive
 * mask.  The fused kernel computes each sum in the unfused kernels' order
 * (scores along the head, the row reduces and P x V along the keys), so
 * the two must also agree bit for bit.  On CPU devices the fused program must be one dispatch whose GLSL
 * holds the lanes' keys ("int kk0"), so that the path is known to have
 * run.  The validation layer is on throughout and must stay silent.
 */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

static void fill(float *x, size_t n, uint32_t seed) {
  for (size_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = (float)(seed >> 8) / (1 << 24) * 2.0f - 1.0f;
  }
}

/* Compiles and runs |text| on parameters |in| (|np| of them) into |out|
 * (|m| floats); returns the dispatches per execution.  With |dir| the
 * kernels are dumped there. */
static int64_t run(vkhlo_context_t *ctx, const char *text, bool no_fusion, float **in, int np, float *out,
                   size_t m, const char *dir) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  o.dump_dir = dir;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "attention_test.mlir", &o, &exe));
  assert_int_equal(vkhlo_executable_parameter_count(exe), np);
  vkhlo_buffer_t *args[4], *res = NULL;
  for (int k = 0; k < np; k++) {
    vkhlo_tensor_type_t t;
    expect_ok(vkhlo_executable_parameter_type(exe, k, &t));
    expect_ok(vkhlo_buffer_create(ctx, &t, in[k], &args[k]));
  }
  expect_ok(vkhlo_executable_execute(exe, np, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, m * sizeof *out));
  vkhlo_buffer_destroy(res);
  for (int k = 0; k < np; k++) vkhlo_buffer_destroy(args[k]);
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  vkhlo_executable_destroy(exe);
  return stats.dispatches;
}

static bool cpu_device(vkhlo_context_t *ctx) {
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  return strcmp(d.type, "cpu") == 0;
}

/* Runs |text| fused and unfused; both must be within f32 rounding of
 * |want| (|m| values); on CPU devices the fused one is one dispatch with
 * the attention kernel's lanes' keys and holds every string of |needles|
 * (NULL-terminated; NULL: none) too. */
static void check(vkhlo_context_t *ctx, const char *text, float **in, int np, const double *want, size_t m,
                  const char *const *needles) {
  float *got = malloc(m * sizeof *got), *fused = malloc(m * sizeof *fused);
  assert_non_null(got);
  assert_non_null(fused);
  for (int mode = 0; mode < 2; mode++) {
    char dir[] = "/tmp/vkhlo_attention_testXXXXXX";
    assert_non_null(mkdtemp(dir));
    int64_t dispatches = run(ctx, text, mode == 1, in, np, got, m, mode == 0 ? dir : NULL);
    if (mode == 0 && cpu_device(ctx)) {
      if (dispatches != 1) fail_msg("%lld dispatches fused, want 1:\n%s", (long long)dispatches, text);
      if (!test_dump_contains(dir, "int kk0")) fail_msg("no attention kernel:\n%s", text);
      for (int i = 0; needles && needles[i]; i++)
        if (!test_dump_contains(dir, needles[i])) fail_msg("the attention kernel has no %s:\n%s", needles[i], text);
    }
    test_remove_dir(dir);
    for (size_t i = 0; i < m; i++)
      if (!(fabs(got[i] - want[i]) <= 1e-5 * (1.0 + fabs(want[i]))))
        fail_msg("%s, element %zu: %.9g, want %.9g", mode ? "unfused" : "fused", i, got[i], want[i]);
    if (mode == 0) memcpy(fused, got, m * sizeof *got);
  }
  /* the same sums in the same order: the fused kernel gives the unfused
   * kernels' bits */
  for (size_t i = 0; i < m; i++)
    if (memcmp(&fused[i], &got[i], sizeof(float)) != 0)
      fail_msg("element %zu: fused %.9g, unfused %.9g:\n%s", i, fused[i], got[i], text);
  free(fused);
  free(got);
}

/* softmax(s) v for one query row: |s| the L scores, |v| at v[j * vs]
 * (key j) + column offset, E columns with stride |es|; into |out|. */
static void reference_row(const double *s, int L, const float *v, int64_t ks, int64_t es, int E, double *out) {
  double mx = -INFINITY, sum = 0;
  for (int j = 0; j < L; j++) mx = s[j] > mx ? s[j] : mx;
  double p[256];
  for (int j = 0; j < L; j++) sum += p[j] = exp(s[j] - mx);
  for (int e = 0; e < E; e++) {
    double o = 0;
    for (int j = 0; j < L; j++) o += p[j] / sum * v[j * ks + e * es];
    out[e] = o;
  }
}

/* Chess-9M's attention at a smaller size: [b, s, h * d] activations
 * reshaped to heads, scores scaled by 1/sqrt(d), softmax over 19 keys,
 * result [b, h, s, d]. */
static void heads_from_width(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { B = 2, S = 19, H = 3, D = 16 };
  static const char text[] =
      "func.func @main(%q: tensor<2x19x48xf32>, %k: tensor<2x19x48xf32>, %v: tensor<2x19x48xf32>)"
      " -> tensor<2x3x19x16xf32> {\n"
      "  %qr = stablehlo.reshape %q : (tensor<2x19x48xf32>) -> tensor<2x19x3x16xf32>\n"
      "  %kr = stablehlo.reshape %k : (tensor<2x19x48xf32>) -> tensor<2x19x3x16xf32>\n"
      "  %vr = stablehlo.reshape %v : (tensor<2x19x48xf32>) -> tensor<2x19x3x16xf32>\n"
      "  %s = stablehlo.dot_general %qr, %kr, batching_dims = [0, 2] x [0, 2], contracting_dims = [3] x [3] :"
      " (tensor<2x19x3x16xf32>, tensor<2x19x3x16xf32>) -> tensor<2x3x19x19xf32>\n"
      "  %c = stablehlo.constant dense<0.25> : tensor<2x3x19x19xf32>\n"
      "  %sc = stablehlo.multiply %s, %c : tensor<2x3x19x19xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%sc init: %ninf) applies stablehlo.maximum across dimensions = [3] :"
      " (tensor<2x3x19x19xf32>, tensor<f32>) -> tensor<2x3x19xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x19xf32>) -> tensor<2x3x19x19xf32>\n"
      "  %d = stablehlo.subtract %sc, %mb : tensor<2x3x19x19xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<2x3x19x19xf32>\n"
      "  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] :"
      " (tensor<2x3x19x19xf32>, tensor<f32>) -> tensor<2x3x19xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<2x3x19xf32>) -> tensor<2x3x19x19xf32>\n"
      "  %p = stablehlo.divide %e, %sb : tensor<2x3x19x19xf32>\n"
      "  %o = stablehlo.dot_general %p, %vr, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] :"
      " (tensor<2x3x19x19xf32>, tensor<2x19x3x16xf32>) -> tensor<2x3x19x16xf32>\n"
      "  return %o : tensor<2x3x19x16xf32>\n"
      "}\n";
  size_t n = B * S * H * D, m = B * H * S * D;
  float *in[3];
  for (int k = 0; k < 3; k++) {
    in[k] = malloc(n * sizeof(float));
    assert_non_null(in[k]);
    fill(in[k], n, 7u + (uint32_t)k);
  }
  double *want = malloc(m * sizeof *want);
  assert_non_null(want);
  for (int b = 0; b < B; b++)
    for (int h = 0; h < H; h++)
      for (int i = 0; i < S; i++) {
        double s[S];
        for (int j = 0; j < S; j++) {
          double acc = 0;
          for (int d = 0; d < D; d++)
            acc += (double)in[0][((b * S + i) * H + h) * D + d] * in[1][((b * S + j) * H + h) * D + d];
          s[j] = acc * 0.25;
        }
        reference_row(s, S, in[2] + (b * S * H + h) * D, H * D, 1, D, want + ((b * H + h) * S + i) * D);
      }
  /* V and Q read by words (16 columns of a head: two words), each lane's
   * 2 output columns stored as one 64-bit word, the row maximum's lanes
   * joined by butterfly, the next row's scores computed in the loop */
  static const char *const needles[] = {"int voff", "u64vec4 qw", "out0w.data[", "subgroupShuffleXor(", "int mn = ",
                                        NULL};
  check(ctx, text, in, 3, want, m, needles);
  for (int k = 0; k < 3; k++) free(in[k]);
  free(want);
}

/* No batch dimensions, 7 keys (fewer than the lanes), 12 value columns
 * (not a multiple of the lanes), an additive mask: [5, 8] queries, [7, 8]
 * keys, [7, 12] values, [5, 7] mask. */
static void masked_few_keys(void **state) {
  vkhlo_context_t *ctx = *state;
  enum { M = 5, L = 7, K = 8, E = 12 };
  static const char text[] =
      "func.func @main(%q: tensor<5x8xf32>, %k: tensor<7x8xf32>, %v: tensor<7x12xf32>, %mask: tensor<5x7xf32>)"
      " -> tensor<5x12xf32> {\n"
      "  %s = stablehlo.dot_general %q, %k, contracting_dims = [1] x [1] :"
      " (tensor<5x8xf32>, tensor<7x8xf32>) -> tensor<5x7xf32>\n"
      "  %sm = stablehlo.add %s, %mask : tensor<5x7xf32>\n"
      "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
      "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %m = stablehlo.reduce(%sm init: %ninf) applies stablehlo.maximum across dimensions = [1] :"
      " (tensor<5x7xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  %mb = stablehlo.broadcast_in_dim %m, dims = [0] : (tensor<5xf32>) -> tensor<5x7xf32>\n"
      "  %d = stablehlo.subtract %sm, %mb : tensor<5x7xf32>\n"
      "  %e = stablehlo.exponential %d : tensor<5x7xf32>\n"
      "  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [1] :"
      " (tensor<5x7xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  %sb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<5xf32>) -> tensor<5x7xf32>\n"
      "  %p = stablehlo.divide %e, %sb : tensor<5x7xf32>\n"
      "  %o = stablehlo.dot_general %p, %v, contracting_dims = [1] x [0] :"
      " (tensor<5x7xf32>, tensor<7x12xf32>) -> tensor<5x12xf32>\n"
      "  return %o : tensor<5x12xf32>\n"
      "}\n";
  float q[M * K], k[L * K], v[L * E], mask[M * L];
  fill(q, M * K, 1);
  fill(k, L * K, 2);
  fill(v, L * E, 3);
  fill(mask, M * L, 4);
  for (int i = 0; i < M * L; i++) mask[i] = mask[i] < -0.5f ? -1e9f : 0.0f; /* some keys masked out */
  float *in[4] = {q, k, v, mask};
  double want[M * E];
  for (int i = 0; i < M; i++) {
    double s[L];
    for (int j = 0; j < L; j++) {
      double acc = 0;
      for (int d = 0; d < K; d++) acc += (double)q[i * K + d] * k[j * K + d];
      s[j] = (double)(float)acc + mask[i * L + j];
    }
    reference_row(s, L, v, E, 1, E, want + i * E);
  }
  /* 7 keys on 8 lanes: the lane past them holds key 6 again, which the
   * maximum's butterfly takes twice */
  static const char *const needles[] = {"subgroupShuffleXor(", NULL};
  check(ctx, text, in, 4, want, M * E, needles);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(heads_from_width),
      cmocka_unit_test(masked_few_keys),
  };
  return cmocka_run_group_tests(tests, validated_context_setup, validated_context_teardown);
}
