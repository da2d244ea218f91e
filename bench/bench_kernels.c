/*
 * bench_kernels: GFLOP/s of vkhlo's dot_general kernels (shaders/gemm_*.comp,
 * see codegen/emit_gemm.c) on the default device next to OpenBLAS sgemm on
 * the host CPU, in the same run:
 *
 *   gemm_1024          1024x1024 @ 1024x1024 f32
 *   gemm_4096          4096x4096 @ 4096x4096 f32 (only with --big)
 *   ffn_up             2607x256 @ 256x1024 f32 (a transformer's MLP)
 *   ffn_down           2607x1024 @ 1024x256 f32
 *   attn_scores        264 x (79x32 @ (79x32)^T) f32 (batch 264, rhs contracted
 *                      on its last dimension: q k^T)
 *   attn_values        264 x (79x79 @ 79x32) f32
 *   attn_values_heads  the same as chess-9M reads it: batch 33 x 8 heads, the
 *                      values a [33, 79, 256] activation reshaped to
 *                      [33, 79, 8, 32] (rhs rows 256 apart)
 *   skinny             1x4096 @ 4096x4096 f32 (decode)
 *   ffn_gated          (2607x256 @ 256x1024) * (2607x256 @ 256x1024): two
 *                      products of the same lhs and their elementwise
 *                      product, one fused kernel (a SwiGLU's gate and up
 *                      projections, as in chess-9M); OpenBLAS: two sgemm
 *                      calls (the flops count both products)
 *   gemm_1024_f16, gemm_1024_bf16, ffn_up_f16, gemm_4096_f16 (--big)
 *                      the same products in f16 / bf16 (operands and
 *                      result; vkhlo sums in f32 and rounds once); the
 *                      reference is still cblas_sgemm, in f32, on the
 *                      16-bit inputs' values (OpenBLAS 0.3.21 has no f16
 *                      GEMM), and max_err includes the result's rounding
 *   gemm_1024_i8, ffn_up_i8, skinny_i8
 *                      integer products: i8 operands into i32 (GEMM_INT,
 *                      sums wrapping modulo 2^32); inputs in [-8, 8), so
 *                      that cblas_sgemm on their f32 values, the reference,
 *                      is exact (max_err 0); --before shows the elemental
 *                      path, which every integer dot took before
 *   w8_1024, w8_skinny  integer weights dequantized before an f32 product:
 *                      x @ (convert(w) * s), w i8 [K, N] in [-8, 8), s a
 *                      scale per column (the CPU GEMM reads the bytes and
 *                      scales them, "Scaled weights" in gemm_cpu.comp); the
 *                      reference cblas_sgemm on the dequantized f32 weights
 *                      (the dequantization not timed), --before the
 *                      elemental path (with the multiply materialized)
 *   w8g_1024, w8g_rows16, w8g_skinny, w4g_skinny, w4gz_skinny
 *                      group-wise int8 (w4g: int4; w4gz: with a zero
 *                      point, (w - z) * s) weights: a scale per column and
 *                      group of 128 rows (GPTQ/AWQ-style), the weights
 *                      reshaped [k / 128, 128, n] to apply it and back to
 *                      [k, n] for the product; against the same program
 *                      with the dequantized weights behind an
 *                      optimization_barrier (materialized in f32, as before
 *                      the GEMM kernels took groups), and OpenBLAS on the
 *                      dequantized f32 weights
 *   cholesky_64, cholesky_256, cholesky_1024
 *                      stablehlo.cholesky (lower) of an f32 symmetric positive
 *                      definite matrix: 64 is one block kernel, larger ones
 *                      run blocked (codegen/expand.c: 64 x 64 block kernels,
 *                      triangular solves and GEMMs); the reference is LAPACK's
 *                      spotrf from OpenBLAS; flops n^3 / 3
 *   trsm_256, trsm_1024  stablehlo.triangular_solve (left, lower) of k x k with k
 *                      right-hand sides; the reference cblas_strsm; flops k^3
 *   getrf_64, getrf_256, getrf_1024
 *                      custom_call @lapack_sgetrf_ffi (LU with partial
 *                      pivoting, as jax.export writes it for CPUs; blocked
 *                      past 64 columns) of a general f32 matrix; the
 *                      reference LAPACK's sgetrf; flops 2 n^3 / 3
 *   geqrf_64, geqrf_256, geqrf_1024
 *                      custom_call @lapack_sgeqrf_ffi (Householder QR, blocked
 *                      past 32 columns); the reference LAPACK's sgeqrf (the
 *                      same reflectors); flops 4 n^3 / 3
 *   syevd_32, syevd_64, syevd_128
 *                      custom_call @lapack_ssyevd_ffi (Jacobi, one workgroup;
 *                      128: the while loop of eigh_round dispatches); its
 *                      eigenvalues against LAPACK's ssyevd; flops 9 n^3
 *                      nominal (LAPACK's count with vectors)
 *   moe_up, moe_down, moe64_up
 *                      chlo.ragged_dot as a mixture of experts routes tokens
 *                      (jax.lax.ragged_dot): 2048 rows in 8 (64) uneven
 *                      groups times their expert's 256x1024, 1024x256
 *                      (256x512) weights; the CPU GEMM's grouped product,
 *                      timed in the same rounds against the expansion
 *                      (VKHLO_RAGGED_GEMM=0: the product with every
 *                      expert's weights) and one cblas_sgemm per group;
 *                      flops 2 m n k (the useful product) for all three
 *   gesdd_32, gesdd_64, gesdd_128
 *                      custom_call @lapack_sgesdd_ffi (one-sided Jacobi, one
 *                      workgroup; 128: the while loop of svd_round
 *                      dispatches; U and V^H computed too, mode 'A'); its
 *                      singular values against LAPACK's sgesdd; flops 8 n^3
 *                      nominal
 *   layers_scan        a counted while loop over L = 4 stacked layers,
 *                      h = tanh(h @ w[i]) with h [256, 512] and w [4, 512, 512]
 *                      (a scan over layers as JAX exports it: the weight a
 *                      dynamic_slice of the stack, read in place by the GEMM
 *                      through the loop counter), timed in the same rounds
 *                      against the same layers unrolled with static slices
 *                      and L cblas_sgemm calls (without the tanh)
 *
 * Each round runs, back to back: vkhlo (one execution into the same result
 * buffers, wall time), vkhlo with profiling on (one execution, summed device
 * timestamps of its dispatches), and cblas_sgemm on the same shapes (one
 * call per batch element).  The table gives the medians over the rounds,
 * GFLOP/s = 2 * B * M * N * K / time (vkhlo's from device time), and the
 * median of the per-round ratios vkhlo device GFLOP/s / OpenBLAS GFLOP/s.
 * With --before, each case is also compiled with VKHLO_GEMM=off (the
 * elemental dot: one invocation per output element, or emit_fusion.c's
 * wide kernels) and timed in the same rounds: the "elem" columns.
 * Ratios, not absolute times, are what to read: the machine is shared.
 *
 *   bench_kernels [--rounds=N] [--big] [--before] [CASE]
 *       (default 3 rounds; CASE is a substring of the case names)
 */
#define _POSIX_C_SOURCE 200809L
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/internal.h"
#include "support/float_format.h"
#include "vkhlo/vkhlo.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The benchmarks' seeded values: the next 24 bits of a linear
 * congruential generator, and them as a float in [-0.5, 0.5). */
static uint32_t lcg_next(uint32_t *seed) { return (*seed = *seed * 1664525u + 1013904223u) >> 8; }
static float lcg_uniform(uint32_t *seed) { return (float)lcg_next(seed) / (1 << 24) - 0.5f; }

/* A table's header: the shape column's name and the two columns after
 * "ratio" ("" where the table has none). */
static void table_header(const char *shape, const char *col1, const char *col2) {
  printf("%-18s %20s %9s %9s %9s %9s %9s %7s %9s %9s %8s\n", "case", shape, "wall_ms", "dev_ms", "GFLOP/s", "blas_ms",
         "blasGF/s", "ratio", col1, col2, "max_err");
}

static void die(vkhlo_status_t st, const char *what) {
  fprintf(stderr, "bench_kernels: %s: %s\n", what, vkhlo_status_message(st));
  exit(2);
}

typedef struct gemm_case {
  const char *name;
  int b, m, n, k;
  bool rhs_t; /* rhs given as [b, n, k] (contracted on its last dimension) */
  bool big;   /* only with --big */
  bool gated; /* two products of the same lhs, multiplied (a SwiGLU's gate and up) */
  int heads;  /* > 0: batch = b / heads x heads, rhs [b / heads, k, heads * n] (attention's values) */
  const char *type; /* operand and result element type: NULL for f32, "f16" or "bf16"; "i8": i8 into i32 */
} gemm_case_t;

static const gemm_case_t cases[] = {
    {"gemm_1024", 1, 1024, 1024, 1024, false, false, false, 0, NULL},
    {"gemm_4096", 1, 4096, 4096, 4096, false, true, false, 0, NULL},
    {"ffn_up", 1, 2607, 1024, 256, false, false, false, 0, NULL},
    {"ffn_down", 1, 2607, 256, 1024, false, false, false, 0, NULL},
    {"attn_scores", 264, 79, 79, 32, true, false, false, 0, NULL},
    {"attn_values", 264, 79, 32, 79, false, false, false, 0, NULL},
    {"attn_values_heads", 264, 79, 32, 79, false, false, false, 8, NULL},
    {"skinny", 1, 1, 4096, 4096, false, false, false, 0, NULL},
    {"ffn_gated", 1, 2607, 1024, 256, false, false, true, 0, NULL},
    {"gemm_1024_f16", 1, 1024, 1024, 1024, false, false, false, 0, "f16"},
    {"gemm_1024_bf16", 1, 1024, 1024, 1024, false, false, false, 0, "bf16"},
    {"ffn_up_f16", 1, 2607, 1024, 256, false, false, false, 0, "f16"},
    {"gemm_4096_f16", 1, 4096, 4096, 4096, false, true, false, 0, "f16"},
    {"gemm_1024_i8", 1, 1024, 1024, 1024, false, false, false, 0, "i8"},
    {"ffn_up_i8", 1, 2607, 1024, 256, false, false, false, 0, "i8"},
    {"skinny_i8", 1, 1, 4096, 4096, false, false, false, 0, "i8"},
    {"w8_1024", 1, 1024, 1024, 1024, false, false, false, 0, "w8"},
    {"w8_skinny", 1, 1, 4096, 4096, false, false, false, 0, "w8"},
};

static bool is_i8(const char *type) { return type && strcmp(type, "i8") == 0; }
static bool is_w8(const char *type) { return type && strcmp(type, "w8") == 0; }

/* f32 to f16 / bf16 bits, rounded to nearest even (support/float_format.h,
 * as the compiler rounds literals), and back. */
static uint16_t to_16bit(bool half, float f) {
  static const float_format_t f16 = {5, 10, 15, FLOAT_STYLE_IEEE}, bf16 = {8, 7, 127, FLOAT_STYLE_IEEE};
  return (uint16_t)float_format_encode(half ? &f16 : &bf16, f);
}

static float from_16bit(bool half, uint16_t h) {
  int64_t ordered;
  return (float)exe_element_value(&h, half ? VKHLO_F16 : VKHLO_BF16, 0, 0, &ordered); /* exact in f32 */
}

/* The StableHLO program of |c|. */
static char *program(const gemm_case_t *c) {
  char lt[64], rt[64], ot[64], dims[128];
  if (c->b > 1) {
    snprintf(lt, sizeof lt, "tensor<%dx%dx%dxf32>", c->b, c->m, c->k);
    if (c->rhs_t) snprintf(rt, sizeof rt, "tensor<%dx%dx%dxf32>", c->b, c->n, c->k);
    else snprintf(rt, sizeof rt, "tensor<%dx%dx%dxf32>", c->b, c->k, c->n);
    snprintf(ot, sizeof ot, "tensor<%dx%dx%dxf32>", c->b, c->m, c->n);
    snprintf(dims, sizeof dims, "batching_dims = [0] x [0], contracting_dims = [2] x [%d]", c->rhs_t ? 2 : 1);
  } else {
    snprintf(lt, sizeof lt, "tensor<%dx%dxf32>", c->m, c->k);
    if (c->rhs_t) snprintf(rt, sizeof rt, "tensor<%dx%dxf32>", c->n, c->k);
    else snprintf(rt, sizeof rt, "tensor<%dx%dxf32>", c->k, c->n);
    snprintf(ot, sizeof ot, "tensor<%dx%dxf32>", c->m, c->n);
    snprintf(dims, sizeof dims, "contracting_dims = [1] x [%d]", c->rhs_t ? 1 : 0);
  }
  size_t size = 2048;
  char *text = malloc(size);
  if (is_w8(c->type)) { /* i8 weights times a scale per column, then the product */
    snprintf(text, size,
             "func.func @main(%%x: tensor<%dx%dxf32>, %%w: tensor<%dx%dxi8>, %%s: tensor<%dxf32>) -> tensor<%dx%dxf32> {\n"
             "  %%wf = stablehlo.convert %%w : (tensor<%dx%dxi8>) -> tensor<%dx%dxf32>\n"
             "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [1] : (tensor<%dxf32>) -> tensor<%dx%dxf32>\n"
             "  %%ws = stablehlo.multiply %%wf, %%sb : tensor<%dx%dxf32>\n"
             "  %%c = stablehlo.dot_general %%x, %%ws, contracting_dims = [1] x [0] :"
             " (tensor<%dx%dxf32>, tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
             "  return %%c : tensor<%dx%dxf32>\n}\n",
             c->m, c->k, c->k, c->n, c->n, c->m, c->n, c->k, c->n, c->k, c->n, c->n, c->k, c->n, c->k, c->n, c->m, c->k,
             c->k, c->n, c->m, c->n, c->m, c->n);
    return text;
  }
  if (c->type) { /* a plain product (the cases above) in the 16-bit type (i8: the operands, the result i32) */
    char *t = program(&(gemm_case_t){c->name, c->b, c->m, c->n, c->k, c->rhs_t, c->big, false, 0, NULL});
    size_t o = 0;
    int seen = 0; /* types in order: the signature's lhs, rhs, result, the dot's, the return's */
    for (const char *q = t; *q && o + 8 < size; q++) {
      if (strncmp(q, "xf32>", 5) == 0) {
        bool result = seen == 2 || seen >= 5;
        seen++;
        o += (size_t)snprintf(text + o, size - o, "x%s>", is_i8(c->type) && result ? "i32" : c->type);
        q += 4;
      } else {
        text[o++] = *q;
      }
    }
    text[o] = 0;
    free(t);
    return text;
  }
  if (c->heads) {
    int b0 = c->b / c->heads, h = c->heads;
    snprintf(text, size,
             "func.func @main(%%a: tensor<%dx%dx%dx%dxf32>, %%b: tensor<%dx%dx%dxf32>) -> tensor<%dx%dx%dx%dxf32> {\n"
             "  %%v = stablehlo.reshape %%b : (tensor<%dx%dx%dxf32>) -> tensor<%dx%dx%dx%dxf32>\n"
             "  %%c = stablehlo.dot_general %%a, %%v, batching_dims = [0, 1] x [0, 2], contracting_dims = [3] x [1] :"
             " (tensor<%dx%dx%dx%dxf32>, tensor<%dx%dx%dx%dxf32>) -> tensor<%dx%dx%dx%dxf32>\n"
             "  return %%c : tensor<%dx%dx%dx%dxf32>\n}\n",
             b0, h, c->m, c->k, b0, c->k, h * c->n, b0, h, c->m, c->n, b0, c->k, h * c->n, b0, c->k, h, c->n, b0, h,
             c->m, c->k, b0, c->k, h, c->n, b0, h, c->m, c->n, b0, h, c->m, c->n);
    return text;
  }
  if (c->gated) {
    snprintf(text, size,
             "func.func @main(%%a: %s, %%b: %s, %%b2: %s) -> %s {\n"
             "  %%c = stablehlo.dot_general %%a, %%b, %s : (%s, %s) -> %s\n"
             "  %%c2 = stablehlo.dot_general %%a, %%b2, %s : (%s, %s) -> %s\n"
             "  %%y = stablehlo.multiply %%c, %%c2 : %s\n"
             "  return %%y : %s\n}\n",
             lt, rt, rt, ot, dims, lt, rt, ot, dims, lt, rt, ot, ot, ot);
    return text;
  }
  snprintf(text, size,
           "func.func @main(%%a: %s, %%b: %s) -> %s {\n"
           "  %%c = stablehlo.dot_general %%a, %%b, %s : (%s, %s) -> %s\n"
           "  return %%c : %s\n}\n",
           lt, rt, ot, dims, lt, rt, ot, ot);
  return text;
}

typedef struct prepared {
  vkhlo_executable_t *exe;
  int nargs;
  vkhlo_buffer_t *args[4], *res[1];
} prepared_t;

/* Compiles |text| and makes its parameters from |a|, |b|, |c| and |d|
 * (NULL: the second's data, as ffn_gated's second rhs) and a result
 * buffer; a compile error is returned (*p untouched), any other ends the
 * run. */
static vkhlo_status_t try_prepare4(vkhlo_context_t *ctx, const char *text, const void *a, const void *b, const void *c,
                                   const void *d, prepared_t *p) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, strlen(text), "bench.mlir", &o, &p->exe);
  if (st) return st;
  p->nargs = vkhlo_executable_parameter_count(p->exe);
  const void *data[4] = {a, b, c ? c : b, d ? d : b};
  for (int i = 0; i < p->nargs && i < 4; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(p->exe, i, &t);
    if ((st = vkhlo_buffer_create(ctx, &t, data[i], &p->args[i]))) die(st, "buffer");
  }
  vkhlo_tensor_type_t t;
  vkhlo_executable_result_type(p->exe, 0, &t);
  if ((st = vkhlo_buffer_create(ctx, &t, NULL, &p->res[0]))) die(st, "result buffer");
  return NULL;
}

static vkhlo_status_t try_prepare(vkhlo_context_t *ctx, const char *text, const void *a, const void *b, const void *c,
                                  prepared_t *p) {
  return try_prepare4(ctx, text, a, b, c, NULL, p);
}

static void prepare4(vkhlo_context_t *ctx, const char *text, const void *a, const void *b, const void *c, const void *d,
                     prepared_t *p) {
  vkhlo_status_t st = try_prepare4(ctx, text, a, b, c, d, p);
  if (st) die(st, "compile");
}

static void prepare(vkhlo_context_t *ctx, const char *text, const void *a, const void *b, const void *c, prepared_t *p) {
  vkhlo_status_t st = try_prepare(ctx, text, a, b, c, p);
  if (st) die(st, "compile");
}

static void release(prepared_t *p) {
  for (int i = 0; i < p->nargs; i++) vkhlo_buffer_destroy(p->args[i]);
  vkhlo_buffer_destroy(p->res[0]);
  vkhlo_executable_destroy(p->exe);
}

static double run_wall(prepared_t *p) {
  double t0 = now_ms();
  vkhlo_status_t st = vkhlo_executable_execute_into(p->exe, p->nargs, p->args, 1, p->res);
  if (st) die(st, "execute");
  return now_ms() - t0;
}

static double run_device(prepared_t *p) {
  vkhlo_executable_set_profiling(p->exe, true);
  vkhlo_status_t st = vkhlo_executable_execute_into(p->exe, p->nargs, p->args, 1, p->res);
  if (st) die(st, "execute (profiled)");
  vkhlo_kernel_profile_t prof[64];
  int n = vkhlo_executable_profile(p->exe, prof, 64);
  double ms = 0;
  for (int i = 0; i < n && i < 64; i++) ms += prof[i].device_ms;
  vkhlo_executable_set_profiling(p->exe, false);
  return ms;
}

static double run_blas(const gemm_case_t *c, const float *a, const float *b, float *out) {
  double t0 = now_ms();
  for (int i = 0; i < c->b; i++) {
    const float *ai = a + (size_t)i * c->m * c->k, *bi = b + (size_t)i * c->k * c->n;
    int ldb = c->rhs_t ? c->k : c->n;
    if (c->heads) { /* head i % heads of batch i / heads: columns 32 h .. of rows heads * n apart */
      bi = b + (size_t)(i / c->heads) * c->k * c->heads * c->n + (size_t)(i % c->heads) * c->n;
      ldb = c->heads * c->n;
    }
    float *ci = out + (size_t)i * c->m * c->n;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, c->rhs_t ? CblasTrans : CblasNoTrans, c->m, c->n, c->k, 1.0f, ai, c->k,
                bi, ldb, 0.0f, ci, c->n);
  }
  if (c->gated) { /* the second product (the same rhs data) and the elementwise product */
    size_t n = (size_t)c->b * c->m * c->n;
    float *tmp = malloc(n * sizeof *tmp);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, c->m, c->n, c->k, 1.0f, a, c->k, b, c->n, 0.0f, tmp, c->n);
    for (size_t i = 0; i < n; i++) out[i] *= tmp[i];
    free(tmp);
  }
  return now_ms() - t0;
}

/* Largest relative difference between vkhlo's result and OpenBLAS's. */
static double compare(prepared_t *p, const float *ref, size_t n, const char *type) {
  float *got = malloc(n * sizeof *got);
  vkhlo_status_t st;
  if (is_i8(type)) {
    int32_t *v = malloc(n * sizeof *v);
    if ((st = vkhlo_buffer_read(p->res[0], v, n * sizeof *v))) die(st, "read");
    for (size_t i = 0; i < n; i++) got[i] = (float)v[i];
    free(v);
  } else if (type) {
    uint16_t *bits = malloc(n * sizeof *bits);
    if ((st = vkhlo_buffer_read(p->res[0], bits, n * sizeof *bits))) die(st, "read");
    for (size_t i = 0; i < n; i++) got[i] = from_16bit(strcmp(type, "f16") == 0, bits[i]);
    free(bits);
  } else if ((st = vkhlo_buffer_read(p->res[0], got, n * sizeof *got))) {
    die(st, "read");
  }
  double worst = 0, scale = 1e-6;
  for (size_t i = 0; i < n; i++) scale = scale > (ref[i] < 0 ? -ref[i] : ref[i]) ? scale : (ref[i] < 0 ? -ref[i] : ref[i]);
  for (size_t i = 0; i < n; i++) {
    double d = (double)got[i] - ref[i];
    d = d < 0 ? -d : d;
    if (d / scale > worst) worst = d / scale;
  }
  free(got);
  return worst;
}

/* ---------------------------- cholesky, triangular_solve and getrf */

typedef enum { CHOLESKY, TRSM, GETRF, GEQRF, SYEVD, GESDD } linalg_kind_t;

typedef struct linalg_case {
  const char *name;
  linalg_kind_t kind; /* TRSM: n right-hand sides */
  int n;
} linalg_case_t;

static const linalg_case_t linalg_cases[] = {
    {"cholesky_64", CHOLESKY, 64}, {"cholesky_256", CHOLESKY, 256}, {"cholesky_1024", CHOLESKY, 1024},
    {"trsm_256", TRSM, 256},       {"trsm_1024", TRSM, 1024},       {"getrf_64", GETRF, 64},
    {"getrf_256", GETRF, 256},     {"getrf_1024", GETRF, 1024},     {"geqrf_64", GEQRF, 64},
    {"geqrf_256", GEQRF, 256},     {"geqrf_1024", GEQRF, 1024},     {"syevd_32", SYEVD, 32},
    {"syevd_64", SYEVD, 64},       {"syevd_128", SYEVD, 128},       {"gesdd_32", GESDD, 32},
    {"gesdd_64", GESDD, 64},       {"gesdd_128", GESDD, 128},
};

/* LAPACK's Cholesky factorization (Fortran interface, column-major; OpenBLAS
 * exports it, Debian ships no header for it beside cblas.h) */
void spotrf_(const char *uplo, const int *n, float *a, const int *lda, int *info);
void sgetrf_(const int *m, const int *n, float *a, const int *lda, int *ipiv, int *info);
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork, int *info);
void ssyevd_(const char *jobz, const char *uplo, const int *n, float *a, const int *lda, float *w, float *work,
             const int *lwork, int *iwork, const int *liwork, int *info);
void sgesdd_(const char *jobz, const int *m, const int *n, float *a, const int *lda, float *s, float *u,
             const int *ldu, float *vt, const int *ldvt, float *work, const int *lwork, int *iwork, int *info);

static char *linalg_program(const linalg_case_t *c) {
  char *text = malloc(1024);
  int n = c->n;
  if (c->kind == CHOLESKY)
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
             "  %%r = stablehlo.cholesky %%a, lower = true : tensor<%dx%dxf32>\n"
             "  return %%r : tensor<%dx%dxf32>\n}\n",
             n, n, n, n, n, n, n, n);
  else if (c->kind == GETRF) /* as jax.export writes jax.scipy.linalg.lu_factor for CPUs */
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
             "  %%r:3 = stablehlo.custom_call @lapack_sgetrf_ffi(%%a) {mhlo.backend_config = {}, operand_layouts = "
             "[dense<[0, 1]> : tensor<2xindex>]} : (tensor<%dx%dxf32>) -> (tensor<%dx%dxf32>, tensor<%dxi32>, "
             "tensor<i32>)\n"
             "  return %%r#0 : tensor<%dx%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n, n, n);
  else if (c->kind == GEQRF) /* the packed factorization of jnp.linalg.qr's export for CPUs */
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
             "  %%r:2 = stablehlo.custom_call @lapack_sgeqrf_ffi(%%a) {mhlo.backend_config = {}} : "
             "(tensor<%dx%dxf32>) -> (tensor<%dx%dxf32>, tensor<%dxf32>)\n"
             "  return %%r#0 : tensor<%dx%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n, n, n);
  else if (c->kind == SYEVD) /* jnp.linalg.eigh's export for CPUs; its eigenvalues */
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dxf32> {\n"
             "  %%r:3 = stablehlo.custom_call @lapack_ssyevd_ffi(%%a) {mhlo.backend_config = {mode = 86 : ui8, uplo = "
             "76 : ui8}} : (tensor<%dx%dxf32>) -> (tensor<%dx%dxf32>, tensor<%dxf32>, tensor<i32>)\n"
             "  return %%r#1 : tensor<%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n);
  else if (c->kind == GESDD) /* jnp.linalg.svd's export for CPUs; its singular values */
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>) -> tensor<%dxf32> {\n"
             "  %%r:5 = stablehlo.custom_call @lapack_sgesdd_ffi(%%a) {mhlo.backend_config = {mode = 65 : ui8}} : "
             "(tensor<%dx%dxf32>) -> (tensor<%dx%dxf32>, tensor<%dxf32>, tensor<%dx%dxf32>, tensor<%dx%dxf32>, "
             "tensor<i32>)\n"
             "  return %%r#1 : tensor<%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n, n, n, n, n);
  else
    snprintf(text, 1024,
             "func.func @main(%%a: tensor<%dx%dxf32>, %%b: tensor<%dx%dxf32>) -> tensor<%dx%dxf32> {\n"
             "  %%r = \"stablehlo.triangular_solve\"(%%a, %%b) {left_side = true, lower = true, unit_diagonal = false,"
             " transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<%dx%dxf32>, tensor<%dx%dxf32>) -> "
             "tensor<%dx%dxf32>\n"
             "  return %%r : tensor<%dx%dxf32>\n}\n",
             n, n, n, n, n, n, n, n, n, n, n, n, n, n);
  return text;
}

/* The reference into |out| (row-major, the upper triangle zero for
 * cholesky): spotrf on a copy (row-major lower is column-major upper),
 * cblas_strsm, or sgetrf on a transposed copy (column-major), transposed
 * back. */
static double run_linalg_blas(const linalg_case_t *c, const float *a, const float *b, float *out) {
  int n = c->n, info = 0;
  size_t nn = (size_t)n * n;
  double t0 = now_ms();
  if (c->kind == CHOLESKY) {
    memcpy(out, a, nn * sizeof *out);
    spotrf_("U", &n, out, &n, &info);
  } else if (c->kind == GETRF) {
    float *t = malloc(nn * sizeof *t);
    int *ipiv = malloc((size_t)n * sizeof *ipiv);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) t[(size_t)j * n + i] = a[(size_t)i * n + j];
    t0 = now_ms();
    sgetrf_(&n, &n, t, &n, ipiv, &info);
    double ms = now_ms() - t0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) out[(size_t)i * n + j] = t[(size_t)j * n + i];
    free(t), free(ipiv);
    if (info < 0) fprintf(stderr, "sgetrf: info %d\n", info);
    return ms;
  } else if (c->kind == GESDD) { /* the singular values of a^T are a's */
    float *t = malloc(nn * sizeof *t), *u = malloc(nn * sizeof *u), *vt = malloc(nn * sizeof *vt), query = 0;
    int *iwork = malloc(sizeof *iwork * 8 * (size_t)n), lwork = -1;
    memcpy(t, a, nn * sizeof *t);
    sgesdd_("A", &n, &n, t, &n, out, u, &n, vt, &n, &query, &lwork, iwork, &info);
    lwork = (int)query;
    float *work = malloc(sizeof *work * (size_t)(lwork > 1 ? lwork : 1));
    t0 = now_ms();
    sgesdd_("A", &n, &n, t, &n, out, u, &n, vt, &n, work, &lwork, iwork, &info);
    double ms = now_ms() - t0;
    free(t), free(u), free(vt), free(work), free(iwork);
    if (info != 0) fprintf(stderr, "sgesdd: info %d\n", info);
    return ms;
  } else if (c->kind == GEQRF || c->kind == SYEVD) { /* column-major: a transposed copy */
    float *t = malloc(nn * sizeof *t), query = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) t[(size_t)j * n + i] = a[(size_t)i * n + j];
    int lwork = -1, liwork = -1, iquery = 0;
    if (c->kind == GEQRF) sgeqrf_(&n, &n, t, &n, out, &query, &lwork, &info);
    else ssyevd_("V", "U", &n, t, &n, out, &query, &lwork, &iquery, &liwork, &info);
    lwork = (int)query, liwork = iquery;
    float *work = malloc(sizeof *work * (size_t)(lwork > 1 ? lwork : 1));
    int *iwork = malloc(sizeof *iwork * (size_t)(liwork > 1 ? liwork : 1));
    t0 = now_ms();
    if (c->kind == GEQRF) sgeqrf_(&n, &n, t, &n, out, work, &lwork, &info);
    else ssyevd_("V", "U", &n, t, &n, out, work, &lwork, iwork, &liwork, &info); /* a's lower is t's upper */
    double ms = now_ms() - t0;
    if (c->kind == GEQRF)
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) out[(size_t)i * n + j] = t[(size_t)j * n + i];
    free(t), free(work), free(iwork);
    if (info != 0) fprintf(stderr, "%s: info %d\n", c->kind == GEQRF ? "sgeqrf" : "ssyevd", info);
    return ms;
  } else {
    memcpy(out, b, nn * sizeof *out);
    cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, n, n, 1.0f, a, n, out, n);
  }
  double ms = now_ms() - t0;
  if (info != 0) fprintf(stderr, "spotrf: info %d\n", info);
  if (c->kind == CHOLESKY)
    for (int i = 0; i < n; i++)
      for (int j = i + 1; j < n; j++) out[(size_t)i * n + j] = 0;
  return ms;
}

static void bench_linalg(vkhlo_context_t *ctx, const char *only, int rounds) {
  bool header = false;
  for (size_t ci = 0; ci < sizeof linalg_cases / sizeof linalg_cases[0]; ci++) {
    const linalg_case_t *c = &linalg_cases[ci];
    if (only && !strstr(c->name, only)) continue;
    if (!header) {
      printf("\n");
      table_header("n", "", "");
      header = true;
    }
    int n = c->n;
    size_t nn = (size_t)n * n;
    float *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *g = malloc(nn * sizeof *g),
          *ref = malloc(nn * sizeof *ref);
    uint32_t seed = 12345;
    for (size_t i = 0; i < nn; i++) g[i] = lcg_uniform(&seed);
    for (size_t i = 0; i < nn; i++) b[i] = lcg_uniform(&seed);
    if (c->kind == GETRF || c->kind == GEQRF || c->kind == GESDD) { /* a general matrix */
      memcpy(a, g, nn * sizeof *a);
    } else if (c->kind == SYEVD) { /* symmetric */
      for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) a[(size_t)i * n + j] = g[(size_t)(i > j ? i : j) * n + (i > j ? j : i)];
    } else if (c->kind == CHOLESKY) { /* g g^T / n + I: positive definite, well conditioned */
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f / (float)n, g, n, g, n, 0.0f, a, n);
      for (int i = 0; i < n; i++) a[(size_t)i * n + i] += 1.0f;
    } else { /* small entries, 2 on the diagonal */
      for (size_t i = 0; i < nn; i++) a[i] = 0.1f * g[i];
      for (int i = 0; i < n; i++) a[(size_t)i * n + i] += 2.0f;
    }
    char *text = linalg_program(c);
    prepared_t p;
    prepare(ctx, text, a, b, NULL, &p);
    run_wall(&p); /* warm-up (lavapipe compiles each pipeline at its first dispatch) */
    run_linalg_blas(c, a, b, ref);
    double err = compare(&p, ref, c->kind == SYEVD || c->kind == GESDD ? (size_t)n : nn, NULL);
    double *wall = calloc((size_t)rounds, sizeof *wall), *dev = calloc((size_t)rounds, sizeof *dev),
           *blas = calloc((size_t)rounds, sizeof *blas), *ratio = calloc((size_t)rounds, sizeof *ratio);
    for (int r = 0; r < rounds; r++) {
      wall[r] = run_wall(&p);
      dev[r] = run_device(&p);
      blas[r] = run_linalg_blas(c, a, b, ref);
      ratio[r] = blas[r] / dev[r];
    }
    /* LAPACK's operation counts; syevd with vectors about 9 n^3 (tridiagonal form and divide and conquer) */
    double flop = (double)n * n * n *
                  (c->kind == CHOLESKY ? 1.0 / 3 : c->kind == GETRF ? 2.0 / 3 : c->kind == GEQRF ? 4.0 / 3
                   : c->kind == SYEVD ? 9 : c->kind == GESDD ? 8 : 1);
    double md = median(dev, rounds), mb = median(blas, rounds);
    char shape[32];
    snprintf(shape, sizeof shape, "%d", n);
    printf("%-18s %20s %9.2f %9.2f %9.2f %9.2f %9.2f %6.1f%% %9s %9s %8.1e\n", c->name, shape, median(wall, rounds), md,
           flop / md / 1e6, mb, flop / mb / 1e6, 100 * median(ratio, rounds), "", "", err);
    fflush(stdout);
    free(wall), free(dev), free(blas), free(ratio);
    release(&p);
    free(text), free(a), free(b), free(g), free(ref);
  }
}

/* ------------------------------------------------------- ragged dot */

/* jax.lax.ragged_dot as a mixture of experts routes tokens: rows [m, k]
 * in groups of the experts' sizes, rhs [g, k, n] (one expert's weights
 * per group), result [m, n]. */
typedef struct ragged_case {
  const char *name;
  int m, n, k, g;
} ragged_case_t;

static const ragged_case_t ragged_cases[] = {
    {"moe_up", 2048, 1024, 256, 8},
    {"moe_down", 2048, 256, 1024, 8},
    {"moe64_up", 2048, 512, 256, 64},
};

/* Group sizes summing to m, uneven (0 .. 2 m / g, none on a tile edge
 * in general), some empty where g is large. */
static void ragged_sizes(const ragged_case_t *c, int32_t *gs) {
  int left = c->m;
  uint32_t seed = 777;
  for (int j = 0; j < c->g; j++) {
    int s = (int)lcg_next(&seed) % (2 * c->m / c->g + 1);
    if (j == c->g - 1 || s > left) s = left; /* the last takes the rest */
    gs[j] = s;
    left -= s;
  }
}

static char *ragged_program(const ragged_case_t *c) {
  char *text = malloc(1024);
  snprintf(text, 1024,
           "func.func @main(%%a: tensor<%dx%dxf32>, %%b: tensor<%dx%dx%dxf32>, %%g: tensor<%dxi32>) -> "
           "tensor<%dx%dxf32> {\n"
           "  %%c = \"chlo.ragged_dot\"(%%a, %%b, %%g) {ragged_dot_dimension_numbers = #chlo.ragged_dot<\n"
           "      lhs_batching_dimensions = [], rhs_batching_dimensions = [],\n"
           "      lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1],\n"
           "      lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]>}\n"
           "      : (tensor<%dx%dxf32>, tensor<%dx%dx%dxf32>, tensor<%dxi32>) -> tensor<%dx%dxf32>\n"
           "  return %%c : tensor<%dx%dxf32>\n}\n",
           c->m, c->k, c->g, c->k, c->n, c->g, c->m, c->n, c->m, c->k, c->g, c->k, c->n, c->g, c->m, c->n, c->m, c->n);
  return text;
}

/* Each group's rows times its expert's weights, one cblas_sgemm per
 * group (rows past the last group stay zero: none here). */
static double run_ragged_blas(const ragged_case_t *c, const int32_t *gs, const float *a, const float *b, float *out) {
  double t0 = now_ms();
  int row = 0;
  for (int j = 0; j < c->g; j++) {
    if (gs[j] > 0)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gs[j], c->n, c->k, 1.0f, a + (size_t)row * c->k, c->k,
                  b + (size_t)j * c->k * c->n, c->n, 0.0f, out + (size_t)row * c->n, c->n);
    row += gs[j];
  }
  return now_ms() - t0;
}

/* The grouped GEMM (default) against the expansion of the same program
 * ($VKHLO_RAGGED_GEMM=0: the product with every expert's weights, each
 * row's kept) and OpenBLAS, in the same rounds; GFLOP/s count the useful
 * product (2 m n k) for all three. */
static void bench_ragged(vkhlo_context_t *ctx, vkhlo_context_t *expand_ctx, const char *only, int rounds) {
  bool header = false;
  for (size_t ci = 0; ci < sizeof ragged_cases / sizeof ragged_cases[0]; ci++) {
    const ragged_case_t *c = &ragged_cases[ci];
    if (only && !strstr(c->name, only)) continue;
    if (!header) {
      printf("\n");
      table_header("MxNxK/groups", "expand_ms", "speedup");
      header = true;
    }
    size_t na = (size_t)c->m * c->k, nb = (size_t)c->g * c->k * c->n, no = (size_t)c->m * c->n;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *ref = calloc(no, sizeof *ref);
    int32_t gs[64];
    ragged_sizes(c, gs);
    uint32_t seed = 12345;
    for (size_t i = 0; i < na; i++) a[i] = lcg_uniform(&seed);
    for (size_t i = 0; i < nb; i++) b[i] = lcg_uniform(&seed);
    char *text = ragged_program(c);
    prepared_t p, e;
    prepare(ctx, text, a, b, gs, &p);
    /* the expansion's product with every expert may not fit the device
     * (moe64_up's [2048, 64 x 512] f32 on lavapipe: 256 MiB against a
     * 128 MiB maxStorageBufferRange): then its columns say so */
    vkhlo_status_t est = try_prepare(expand_ctx, text, a, b, gs, &e);
    run_wall(&p); /* warm-up */
    if (!est) run_wall(&e);
    run_ragged_blas(c, gs, a, b, ref);
    double err = compare(&p, ref, no, NULL);
    double *wall = calloc((size_t)rounds, sizeof *wall), *dev = calloc((size_t)rounds, sizeof *dev),
           *blas = calloc((size_t)rounds, sizeof *blas), *ratio = calloc((size_t)rounds, sizeof *ratio),
           *exp_ms = calloc((size_t)rounds, sizeof *exp_ms), *speedup = calloc((size_t)rounds, sizeof *speedup);
    for (int r = 0; r < rounds; r++) {
      wall[r] = run_wall(&p);
      dev[r] = run_device(&p);
      blas[r] = run_ragged_blas(c, gs, a, b, ref);
      exp_ms[r] = est ? 0 : run_device(&e);
      ratio[r] = blas[r] / dev[r];
      speedup[r] = exp_ms[r] / dev[r];
    }
    double flop = 2.0 * c->m * c->n * (double)c->k, md = median(dev, rounds), mb = median(blas, rounds);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d/%d", c->m, c->n, c->k, c->g);
    printf("%-18s %20s %9.2f %9.2f %9.2f %9.2f %9.2f %6.1f%% ", c->name, shape, median(wall, rounds), md,
           flop / md / 1e6, mb, flop / mb / 1e6, 100 * median(ratio, rounds));
    if (est) printf("%9s %9s", "fails", "-");
    else printf("%9.2f %8.1fx", median(exp_ms, rounds), median(speedup, rounds));
    printf(" %8.1e\n", err);
    if (est) printf("  expansion: %s\n", vkhlo_status_message(est));
    fflush(stdout);
    vkhlo_status_free(est);
    free(wall), free(dev), free(blas), free(ratio), free(exp_ms), free(speedup);
    release(&p);
    if (!est) release(&e);
    free(text), free(a), free(b), free(ref);
  }
}

/* Group-wise int8 weights (GPTQ/AWQ-style: a scale per column and group
 * of G rows): x @ reshape(reshape(convert(w)) * broadcast(s)), w i8
 * [K, N], s [K / G, N].  The GEMM kernels read the bytes and each group's
 * scales ("Scaled weights" in gemm_cpu.comp); the baseline is the same
 * program with the dequantized weights behind an optimization_barrier:
 * materialized in f32, then the f32 product (how every such program ran
 * before the kernels took groups). */
typedef struct grouped_case {
  const char *name;
  int m, n, k, g;
  const char *wtype; /* the weights' element type: i8, or i4 (a byte per element holding the value) */
  bool zero;         /* (w - z) * s: a zero point per group and column too */
} grouped_case_t;

static const grouped_case_t grouped_cases[] = {
    {"w8g_1024", 1024, 1024, 1024, 128, "i8", false},
    {"w8g_rows16", 16, 4096, 4096, 128, "i8", false},
    {"w8g_skinny", 1, 4096, 4096, 128, "i8", false},
    {"w4g_skinny", 1, 4096, 4096, 128, "i4", false},
    {"w4gz_skinny", 1, 4096, 4096, 128, "i4", true},
};

static char *grouped_program(const grouped_case_t *c, bool barrier) {
  size_t size = 4096, o = 0;
  char *t = malloc(size), w2[48], w3[48], q[48], x[48], out[48];
  int gs = c->k / c->g;
  snprintf(w2, sizeof w2, "tensor<%dx%dxf32>", c->k, c->n);
  snprintf(w3, sizeof w3, "tensor<%dx%dx%dxf32>", gs, c->g, c->n);
  snprintf(q, sizeof q, "tensor<%dx%dxf32>", gs, c->n); /* a scale or zero point per group and column */
  snprintf(x, sizeof x, "tensor<%dx%dxf32>", c->m, c->k);
  snprintf(out, sizeof out, "tensor<%dx%dxf32>", c->m, c->n);
  o += (size_t)snprintf(t + o, size - o, "func.func @main(%%x: %s, %%w: tensor<%dx%dx%s>, %%s: %s", x, c->k, c->n, c->wtype, q);
  if (c->zero) o += (size_t)snprintf(t + o, size - o, ", %%z: %s", q);
  o += (size_t)snprintf(t + o, size - o,
                        ") -> %s {\n"
                        "  %%wf = stablehlo.convert %%w : (tensor<%dx%dx%s>) -> %s\n"
                        "  %%w3 = stablehlo.reshape %%wf : (%s) -> %s\n",
                        out, c->k, c->n, c->wtype, w2, w2, w3);
  const char *ints = "%w3";
  if (c->zero) {
    o += (size_t)snprintf(t + o, size - o,
                          "  %%zb = stablehlo.broadcast_in_dim %%z, dims = [0, 2] : (%s) -> %s\n"
                          "  %%wz = stablehlo.subtract %%w3, %%zb : %s\n",
                          q, w3, w3);
    ints = "%wz";
  }
  o += (size_t)snprintf(t + o, size - o,
                        "  %%sb = stablehlo.broadcast_in_dim %%s, dims = [0, 2] : (%s) -> %s\n"
                        "  %%ws = stablehlo.multiply %s, %%sb : %s\n"
                        "  %%%s = stablehlo.reshape %%ws : (%s) -> %s\n",
                        q, w3, ints, w3, barrier ? "w2m" : "w2", w3, w2);
  if (barrier) o += (size_t)snprintf(t + o, size - o, "  %%w2 = stablehlo.optimization_barrier %%w2m : %s\n", w2);
  snprintf(t + o, size - o,
           "  %%c = stablehlo.dot_general %%x, %%w2, contracting_dims = [1] x [0] : (%s, %s) -> %s\n"
           "  return %%c : %s\n}\n",
           x, w2, out, out);
  return t;
}

static void bench_grouped(vkhlo_context_t *ctx, const char *only, int rounds) {
  bool header = false;
  for (size_t ci = 0; ci < sizeof grouped_cases / sizeof grouped_cases[0]; ci++) {
    const grouped_case_t *c = &grouped_cases[ci];
    if (only && !strstr(c->name, only)) continue;
    if (!header) {
      printf("\n");
      table_header("MxNxK/group", "f32w_ms", "speedup");
      header = true;
    }
    size_t na = (size_t)c->m * c->k, nb = (size_t)c->k * c->n, no = (size_t)c->m * c->n, ns = nb / (size_t)c->g;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *ref = malloc(no * sizeof *ref);
    float *scale = malloc(ns * sizeof *scale), *zero = calloc(ns, sizeof *zero);
    int8_t *w = malloc(nb);
    uint32_t seed = 12345;
    for (size_t i = 0; i < na; i++) a[i] = lcg_uniform(&seed);
    for (size_t i = 0; i < ns; i++) {
      scale[i] = (float)(1 + i % 13) / 256.0f;
      if (c->zero) zero[i] = (float)((int)(i % 5) - 2);
    }
    /* weights in [-8, 8) (i4's range too); b the exact f32 values (w - z)
     * * s that the program makes */
    for (size_t i = 0; i < nb; i++) {
      w[i] = (int8_t)((int)(lcg_next(&seed) % 16) - 8);
      size_t q = (i / (size_t)c->n / (size_t)c->g) * (size_t)c->n + i % (size_t)c->n;
      b[i] = ((float)w[i] - zero[q]) * scale[q];
    }
    char *text = grouped_program(c, false), *base_text = grouped_program(c, true);
    prepared_t p, e;
    prepare4(ctx, text, a, w, scale, zero, &p);
    prepare4(ctx, base_text, a, w, scale, zero, &e);
    gemm_case_t bc = {c->name, 1, c->m, c->n, c->k, false, false, false, 0, NULL};
    run_wall(&p); /* warm-up */
    run_wall(&e);
    run_blas(&bc, a, b, ref);
    double err = compare(&p, ref, no, NULL);
    double *wall = calloc((size_t)rounds, sizeof *wall), *dev = calloc((size_t)rounds, sizeof *dev),
           *blas = calloc((size_t)rounds, sizeof *blas), *ratio = calloc((size_t)rounds, sizeof *ratio),
           *base = calloc((size_t)rounds, sizeof *base), *speedup = calloc((size_t)rounds, sizeof *speedup);
    for (int r = 0; r < rounds; r++) {
      wall[r] = run_wall(&p);
      dev[r] = run_device(&p);
      blas[r] = run_blas(&bc, a, b, ref);
      base[r] = run_device(&e);
      ratio[r] = blas[r] / dev[r];
      speedup[r] = base[r] / dev[r];
    }
    double flop = 2.0 * c->m * c->n * (double)c->k, md = median(dev, rounds), mb = median(blas, rounds);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%d/%d", c->m, c->n, c->k, c->g);
    printf("%-18s %20s %9.2f %9.2f %9.2f %9.2f %9.2f %6.1f%% %9.2f %8.1fx %8.1e\n", c->name, shape,
           median(wall, rounds), md, flop / md / 1e6, mb, flop / mb / 1e6, 100 * median(ratio, rounds),
           median(base, rounds), median(speedup, rounds), err);
    fflush(stdout);
    free(wall), free(dev), free(blas), free(ratio), free(base), free(speedup);
    release(&p);
    release(&e);
    free(text), free(base_text), free(a), free(b), free(ref), free(scale), free(zero), free(w);
  }
}

/* The scan over L stacked layers (|unrolled|: the same layers one after
 * another through static slices): h = tanh(h @ w[i]). */
static char *layers_program(int m, int k, int layers, bool unrolled) {
  size_t size = 8192 + (size_t)layers * 1024;
  char *t = malloc(size);
  if (!t) return NULL;
  int n = snprintf(t, size, "func.func @main(%%x: tensor<%dx%dxf32>, %%w: tensor<%dx%dx%dxf32>) -> tensor<%dx%dxf32> {\n",
                   m, k, layers, k, k, m, k);
  if (unrolled) {
    for (int l = 0; l < layers; l++) {
      char prev[16];
      snprintf(prev, sizeof prev, l ? "%%h%d" : "%%x", l - 1);
      n += snprintf(t + n, size - n,
                    "  %%s%d = stablehlo.slice %%w [%d:%d, 0:%d, 0:%d] : (tensor<%dx%dx%dxf32>) -> tensor<1x%dx%dxf32>\n"
                    "  %%w%d = stablehlo.reshape %%s%d : (tensor<1x%dx%dxf32>) -> tensor<%dx%dxf32>\n"
                    "  %%d%d = stablehlo.dot_general %s, %%w%d, contracting_dims = [1] x [0] : (tensor<%dx%dxf32>, tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
                    "  %%h%d = stablehlo.tanh %%d%d : tensor<%dx%dxf32>\n",
                    l, l, l + 1, k, k, layers, k, k, k, k, l, l, k, k, k, k, l, prev, l, m, k, k, k, m, k, l, l, m, k);
    }
    snprintf(t + n, size - n, "  return %%h%d : tensor<%dx%dxf32>\n}\n", layers - 1, m, k);
    return t;
  }
  snprintf(t + n, size - n,
           "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%r:2 = stablehlo.while(%%i = %%c0, %%h = %%x) : tensor<i32>, tensor<%dx%dxf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
           "    %%p = stablehlo.compare LT, %%i, %%n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%z = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%wi = stablehlo.dynamic_slice %%w, %%i, %%z, %%z, sizes = [1, %d, %d] : (tensor<%dx%dx%dxf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x%dx%dxf32>\n"
           "    %%w2 = stablehlo.reshape %%wi : (tensor<1x%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%d = stablehlo.dot_general %%h, %%w2, contracting_dims = [1] x [0] : (tensor<%dx%dxf32>, tensor<%dx%dxf32>) -> tensor<%dx%dxf32>\n"
           "    %%t = stablehlo.tanh %%d : tensor<%dx%dxf32>\n"
           "    %%c1 = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%j = stablehlo.add %%i, %%c1 : tensor<i32>\n"
           "    stablehlo.return %%j, %%t : tensor<i32>, tensor<%dx%dxf32>\n"
           "  }\n"
           "  return %%r#1 : tensor<%dx%dxf32>\n}\n",
           m, k, layers, k, k, layers, k, k, k, k, k, k, k, k, m, k, k, k, m, k, m, k, m, k, m, k);
  return t;
}

static void bench_layers(vkhlo_context_t *ctx, const char *only, int rounds) {
  if (only && !strstr("layers_scan", only)) return;
  enum { M = 256, K = 512, L = 4 };
  size_t nx = (size_t)M * K, nw = (size_t)L * K * K;
  float *x = malloc(nx * sizeof *x), *w = malloc(nw * sizeof *w), *h = malloc(nx * sizeof *h), *o = malloc(nx * sizeof *o);
  uint32_t seed = 777;
  for (size_t i = 0; i < nx; i++) x[i] = lcg_uniform(&seed);
  for (size_t i = 0; i < nw; i++) w[i] = (lcg_uniform(&seed)) / 8;
  char *scan = layers_program(M, K, L, false), *unrolled = layers_program(M, K, L, true);
  prepared_t p, u;
  prepare(ctx, scan, x, w, NULL, &p);
  prepare(ctx, unrolled, x, w, NULL, &u);
  run_wall(&p), run_wall(&u); /* warm-up */
  double *wall = calloc((size_t)rounds, sizeof *wall), *dev = calloc((size_t)rounds, sizeof *dev),
         *uwall = calloc((size_t)rounds, sizeof *uwall), *blas = calloc((size_t)rounds, sizeof *blas),
         *ratio = calloc((size_t)rounds, sizeof *ratio);
  for (int r = 0; r < rounds; r++) {
    wall[r] = run_wall(&p);
    dev[r] = run_device(&p);
    uwall[r] = run_wall(&u);
    double t0 = now_ms();
    memcpy(h, x, nx * sizeof *h);
    for (int l = 0; l < L; l++) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, K, K, 1.0f, h, K, w + (size_t)l * K * K, K, 0.0f, o, K);
      memcpy(h, o, nx * sizeof *h);
    }
    blas[r] = now_ms() - t0;
    ratio[r] = uwall[r] / wall[r];
  }
  /* the scan's result against the unrolled program's (the same kernels' sums) */
  float *a = malloc(nx * sizeof *a), *b = malloc(nx * sizeof *b);
  vkhlo_status_t st = vkhlo_buffer_read(p.res[0], a, nx * sizeof *a);
  if (!st) st = vkhlo_buffer_read(u.res[0], b, nx * sizeof *b);
  if (st) die(st, "read");
  double err = 0;
  for (size_t i = 0; i < nx; i++) err = fmax(err, fabs((double)a[i] - b[i]));
  double flop = 2.0 * M * K * (double)K * L, mw = median(wall, rounds), md = median(dev, rounds);
  printf("\n%-18s %20s %9s %9s %9s %9s %9s %9s %9s %8s\n", "case", "MxKxK/layers", "wall_ms", "dev_ms", "GFLOP/s",
         "blas_ms", "blasGF/s", "unroll_ms", "unroll/scan", "diff");
  printf("%-18s %20s %9.2f %9.2f %9.2f %9.2f %9.2f %9.2f %8.2fx %8.1e\n", "layers_scan", "256x512x512/4", mw, md,
         flop / md / 1e6, median(blas, rounds), flop / median(blas, rounds) / 1e6, median(uwall, rounds),
         median(ratio, rounds), err);
  fflush(stdout);
  free(a), free(b), free(wall), free(dev), free(uwall), free(blas), free(ratio);
  release(&p);
  release(&u);
  free(scan), free(unrolled), free(x), free(w), free(h), free(o);
}

int main(int argc, char **argv) {
  int rounds = 3;
  bool big = false, before = false;
  const char *only = NULL;

  for (int i = 1; i < argc; i++) {
    if (strncmp(argv[i], "--rounds=", 9) == 0) rounds = atoi(argv[i] + 9);
    else if (strcmp(argv[i], "--big") == 0) big = true;
    else if (strcmp(argv[i], "--before") == 0) before = true;
    else if (argv[i][0] != '-') only = argv[i];
    else {
      fprintf(stderr, "usage: bench_kernels [--rounds=N] [--big] [--before] [CASE]\n");
      return 2;
    }
  }
  if (rounds < 1 || rounds > 100) rounds = 3;
  vkhlo_context_t *ctx = NULL, *elem_ctx = NULL;
  vkhlo_context_options_t co;
  memset(&co, 0, sizeof co);
  vkhlo_status_t st = vkhlo_context_create(&co, &ctx);
  if (st) die(st, "context");
  if (before) { /* the target reads VKHLO_GEMM when the context is made */
    const char *old = getenv("VKHLO_GEMM");
    char *saved = old ? strdup(old) : NULL;
    setenv("VKHLO_GEMM", "off", 1);
    if ((st = vkhlo_context_create(&co, &elem_ctx))) die(st, "context (VKHLO_GEMM=off)");
    if (saved) setenv("VKHLO_GEMM", saved, 1);
    else unsetenv("VKHLO_GEMM");
    free(saved);
  }
  printf("device: %s; OpenBLAS %s, %d threads; %d rounds, medians\n", vkrt_device_info(ctx->device)->name,
         openblas_get_config(), openblas_get_num_threads(), rounds);
  table_header("BxMxNxK", before ? "elem_ms" : "", before ? "elemGF/s" : "");
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const gemm_case_t *c = &cases[ci];
    if (only ? !strstr(c->name, only) : (c->big && !big)) continue;
    size_t na = (size_t)c->b * c->m * c->k, nb = (size_t)c->b * c->k * c->n, no = (size_t)c->b * c->m * c->n;
    float *a = malloc(na * sizeof *a), *b = malloc(nb * sizeof *b), *ref = malloc(no * sizeof *ref);
    uint32_t seed = 12345;
    for (size_t i = 0; i < na; i++) a[i] = lcg_uniform(&seed);
    for (size_t i = 0; i < nb; i++) b[i] = lcg_uniform(&seed);
    char *text = program(c);
    /* 16-bit cases: vkhlo gets the bits, OpenBLAS their f32 values */
    uint16_t *a16 = NULL, *b16 = NULL;
    int8_t *a8 = NULL, *b8 = NULL;
    float *scale = NULL;
    if (is_w8(c->type)) { /* weights in [-8, 8), scales (1 + j % 7) / 64: b the exact f32 products */
      b8 = malloc(nb), scale = malloc((size_t)c->n * sizeof *scale);
      for (int j = 0; j < c->n; j++) scale[j] = (float)(1 + j % 7) / 64.0f;
      for (size_t i = 0; i < nb; i++) b[i] = (float)(b8[i] = (int8_t)((int)(b[i] * 16.0f))) * scale[i % (size_t)c->n];
    } else if (is_i8(c->type)) { /* [-8, 8): sums of at most 64 K, exact in f32 */
      a8 = malloc(na), b8 = malloc(nb);
      for (size_t i = 0; i < na; i++) a[i] = a8[i] = (int8_t)((int)(a[i] * 16.0f));
      for (size_t i = 0; i < nb; i++) b[i] = b8[i] = (int8_t)((int)(b[i] * 16.0f));
    } else if (c->type) {
      bool half = strcmp(c->type, "f16") == 0;
      a16 = malloc(na * sizeof *a16), b16 = malloc(nb * sizeof *b16);
      for (size_t i = 0; i < na; i++) a[i] = from_16bit(half, a16[i] = to_16bit(half, a[i]));
      for (size_t i = 0; i < nb; i++) b[i] = from_16bit(half, b16[i] = to_16bit(half, b[i]));
    }
    const void *va = a8 ? (const void *)a8 : a16 ? (const void *)a16 : a;
    const void *vb = b8 ? (const void *)b8 : b16 ? (const void *)b16 : b;
    prepared_t p, e;
    prepare(ctx, text, va, vb, scale, &p);
    if (before) prepare(elem_ctx, text, va, vb, scale, &e);

    run_wall(&p); /* warm-up */
    run_blas(c, a, b, ref);
    double err = compare(&p, ref, no, is_w8(c->type) ? NULL : c->type);
    double *wall = calloc((size_t)rounds, sizeof *wall), *dev = calloc((size_t)rounds, sizeof *dev),
           *blas = calloc((size_t)rounds, sizeof *blas), *ratio = calloc((size_t)rounds, sizeof *ratio),
           *elem = calloc((size_t)rounds, sizeof *elem);
    for (int r = 0; r < rounds; r++) {
      wall[r] = run_wall(&p);
      dev[r] = run_device(&p);
      blas[r] = run_blas(c, a, b, ref);
      if (before) elem[r] = run_device(&e);
      ratio[r] = blas[r] / dev[r];

    }
    double flop = 2.0 * c->b * c->m * c->n * (double)c->k * (c->gated ? 2 : 1);
    double mw = median(wall, rounds), md = median(dev, rounds), mb = median(blas, rounds), mr = median(ratio, rounds);
    char shape[64];
    snprintf(shape, sizeof shape, "%dx%dx%dx%d", c->b, c->m, c->n, c->k);
    printf("%-18s %20s %9.2f %9.2f %9.2f %9.2f %9.2f %6.1f%%", c->name, shape, mw, md, flop / md / 1e6, mb,
           flop / mb / 1e6, 100 * mr);
    if (before) {
      double me = median(elem, rounds);
      printf(" %9.2f %9.2f", me, flop / me / 1e6);
    } else {
      printf(" %9s %9s", "", "");
    }
    printf(" %8.1e\n", err);

    fflush(stdout);
    free(wall), free(dev), free(blas), free(ratio), free(elem);
    release(&p);
    if (before) release(&e);
    free(text), free(a), free(b), free(ref), free(a16), free(b16), free(a8), free(b8), free(scale);
  }
  bench_grouped(ctx, only, rounds);
  bench_linalg(ctx, only, rounds);
  bench_layers(ctx, only, rounds);
  /* the ragged products' baseline: the expansion ($VKHLO_RAGGED_GEMM=0,
   * read when the context is made) */
  bool ragged = !only;
  for (size_t ci = 0; ci < sizeof ragged_cases / sizeof ragged_cases[0]; ci++)
    ragged |= only && strstr(ragged_cases[ci].name, only);
  if (ragged) {
    vkhlo_context_t *expand_ctx = NULL;
    setenv("VKHLO_RAGGED_GEMM", "0", 1);
    if ((st = vkhlo_context_create(&co, &expand_ctx))) die(st, "context (VKHLO_RAGGED_GEMM=0)");
    unsetenv("VKHLO_RAGGED_GEMM");
    bench_ragged(ctx, expand_ctx, only, rounds);
    vkhlo_context_destroy(expand_ctx);
  }
  if (elem_ctx) vkhlo_context_destroy(elem_ctx);
  vkhlo_context_destroy(ctx);
  return 0;
}
