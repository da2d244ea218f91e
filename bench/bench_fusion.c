/*
 * bench_fusion: fused vs unfused (--no-fusion) on the default device, in
 * the same run, for the memory-bound cases of the fusion issue and the
 * chess model:
 *
 *   layer_norm    2607x256 f32 (mean, variance, normalize, scale, shift)
 *   softmax       33x8x79x79 f32 over the last axis
 *   column_sum    4096x4096 f32 summed over the rows (dimension 0)
 *   row_sum       the same over the columns (dimension 1)
 *   elementwise8  a chain of 8 elementwise ops over 16M f32
 *   group_norm    GroupNorm (32 groups) and SiLU over 1x320x64x64 f32, NCHW
 *                 (a diffusion UNet's block at a 64x64 latent)
 *   adam_4m       an Adam update of 4M f32 parameters (new moments m, v and
 *                 parameters p, all three results: 4 arrays read, 3 written)
 *   lstm_100      100 steps of an LSTM cell (hidden 256) in a while loop,
 *                 the new c and h carried (one GEMV, then the gates)
 *   chess_9m      ../shared/models/searchless_chess_9m.mlir (when present)
 *
 * Each program is compiled twice (fused and --no-fusion) and both are
 * executed REPEAT rounds, back to back within each round, into the same
 * result buffers (vkhlo_executable_execute_into, as a program run in a
 * loop would be), after one warm-up round; the table reports the median
 * wall time of one execution and the median of the per-round speedups.
 * For layer_norm, softmax, the sums, group_norm and adam_4m each round also runs vkCmdCopyBuffer
 * over as many bytes as the program must read and write (input once,
 * output once; the row kernels' small enough to stay in the CPU's caches on
 * lavapipe) and over 256 MiB
 * (memory bandwidth: the "copy reference for the memory-bound
 * rows"), and the fused program's effective bandwidth is reported against
 * both.  layer_norm and softmax also run the two-op kernel below over
 * their input's shape in the same rounds: on lavapipe a compiled kernel's
 * stores are a loop over the SIMD lanes, 8 bytes each, and writing more
 * than the CPU's caches hold is what bounds these kernels, so that kernel
 * (next to no arithmetic) is the ceiling to read their ratio against.
 * For the elementwise chain each round also runs the device's own
 * vkCmdCopyBuffer over the same bytes (64 MiB read, 64 MiB written), and
 * the effective bandwidth (bytes the program must read + write / time) is
 * reported next to the copy's, with the median per-round ratio, and next
 * to a two-op fused kernel (abs of negate) over the same bytes, about the
 * most a compiled elementwise kernel can move on the device.  Ratios,
 * not absolute times, are what to read: this machine is shared and noisy.
 *
 *   bench_fusion [REPEAT [CASE]]   (default 5 runs, every case; CASE is a
 *                                  substring of the case names to run)
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/internal.h"
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

static void die(vkhlo_status_t st, const char *what) {
  fprintf(stderr, "bench_fusion: %s: %s\n", what, vkhlo_status_message(st));
  exit(2);
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A compiled program with its arguments (seeded random) and result
 * buffers, ready to run. */
typedef struct prepared {
  vkhlo_executable_t *exe;
  int np, nr;
  vkhlo_buffer_t **args, **res;
  vkhlo_executable_stats_t stats;
} prepared_t;

static void prepare(vkhlo_context_t *ctx, const char *text, size_t len, bool no_fusion, prepared_t *p) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, len, "bench.mlir", &o, &p->exe);
  if (st) die(st, "compile");
  p->np = vkhlo_executable_parameter_count(p->exe);
  p->nr = vkhlo_executable_result_count(p->exe);
  p->args = calloc((size_t)p->np + 1, sizeof *p->args);
  p->res = calloc((size_t)p->nr + 1, sizeof *p->res);
  uint64_t seed = 7;
  for (int i = 0; i < p->np; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(p->exe, i, &t);
    int64_t n = vkhlo_tensor_type_element_count(&t);
    void *data = malloc(vkhlo_tensor_type_size_bytes(&t) + 4);
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = splitmix64(&seed);
      if (t.element_type == VKHLO_F32) ((float *)data)[k] = (float)((double)(r >> 40) / (1 << 24) - 0.5);
      else ((int32_t *)data)[k] = (int32_t)(r % 1968);
    }
    if ((st = vkhlo_buffer_create(ctx, &t, data, &p->args[i]))) die(st, "buffer");
    free(data);
  }
  for (int i = 0; i < p->nr; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_result_type(p->exe, i, &t);
    if ((st = vkhlo_buffer_create(ctx, &t, NULL, &p->res[i]))) die(st, "result buffer");
  }
  vkhlo_executable_stats(p->exe, &p->stats);
}

static void release(prepared_t *p) {
  for (int i = 0; i < p->np; i++) vkhlo_buffer_destroy(p->args[i]);
  for (int i = 0; i < p->nr; i++) vkhlo_buffer_destroy(p->res[i]);
  free(p->args);
  free(p->res);
  vkhlo_executable_destroy(p->exe);
}

/* One execution into the same result buffers (replayed), in ms. */
static double run_once(prepared_t *p) {
  double t0 = now_ms();
  vkhlo_status_t st = vkhlo_executable_execute_into(p->exe, p->np, p->args, p->nr, p->res);
  if (st) die(st, "execute");
  return now_ms() - t0;
}

/* One vkCmdCopyBuffer of |size| bytes between two device buffers, in ms. */
typedef struct copier {
  vkrt_buffer_t *a, *b;
  vkrt_cmd_t *cmd;
  uint64_t size;
  /* about the least a fused kernel can do over the same bytes (abs of a
   * negate: two ops, one loop fusion), the device's ceiling for compiled
   * elementwise kernels */
  prepared_t negate;
  bool has_negate;
} copier_t;

/* The two-op program (abs of negate) over a tensor of |shape| ("16777216xf32"). */
static void two_op_program(char *text, size_t size, const char *shape) {
  snprintf(text, size,
           "func.func @main(%%x: tensor<%s>) -> tensor<%s> {\n"
           "  %%y = stablehlo.negate %%x : tensor<%s>\n"
           "  %%z = stablehlo.abs %%y : tensor<%s>\n"
           "  return %%z : tensor<%s>\n"
           "}\n",
           shape, shape, shape, shape, shape);
}

/* |negate|: the two-op program to time beside the copy (NULL: none) */
static void copier_create(vkhlo_context_t *ctx, uint64_t size, const char *negate, copier_t *c) {
  vkhlo_status_t st;
  c->size = size;
  c->has_negate = negate != NULL;
  if (negate) prepare(ctx, negate, strlen(negate), false, &c->negate);
  if ((st = vkrt_buffer_create(ctx->device, size, &c->a)) || (st = vkrt_buffer_create(ctx->device, size, &c->b)) ||
      (st = vkrt_cmd_create(ctx->device, &c->cmd)))
    die(st, "copy buffers");
}

static double copy_once(copier_t *c) {
  double t0 = now_ms();
  vkhlo_status_t st;
  if ((st = vkrt_cmd_begin(c->cmd)) || (st = vkrt_cmd_copy(c->cmd, c->a, 0, c->b, 0, c->size)) ||
      (st = vkrt_cmd_submit_and_wait(c->cmd)))
    die(st, "copy");
  return now_ms() - t0;
}

static void copier_destroy(copier_t *c) {
  if (c->has_negate) release(&c->negate);
  vkrt_cmd_destroy(c->cmd);
  vkrt_buffer_destroy(c->a);
  vkrt_buffer_destroy(c->b);
}

/* Medians over |repeat| rounds, each running the unfused program, the
 * fused one and (with |copy|) the copy back to back, after one warm-up
 * round: per-round ratios cancel the machine's slow drifts. */
typedef struct result {
  double unfused_ms, fused_ms, speedup; /* speedup: median of per-round ratios */
  double copy_ms, fused_over_copy;      /* copy time / fused time, per round */
  double negate_ms, negate_over_copy;   /* the two-op kernel, and copy / it */
  double fused_over_negate;             /* the two-op kernel's time / fused time, per round */
  double best_fused_over_copy, best_negate_over_copy; /* the best round's */
  /* with a 256 MiB copy in the rounds: its time, and the fused program's
   * effective bandwidth (|bytes| / time) over the copy's, per round */
  double big_copy_ms, fused_over_big;
  vkhlo_executable_stats_t unfused_stats, fused_stats;
} result_t;

static result_t measure(vkhlo_context_t *ctx, const char *text, size_t len, int repeat, copier_t *copy,
                        copier_t *big, double bytes) {
  prepared_t u, f;
  prepare(ctx, text, len, true, &u);
  prepare(ctx, text, len, false, &f);
  double *tu = calloc((size_t)repeat, sizeof *tu), *tf = calloc((size_t)repeat, sizeof *tf);
  double *ratio = calloc((size_t)repeat, sizeof *ratio), *tc = calloc((size_t)repeat, sizeof *tc);
  double *cratio = calloc((size_t)repeat, sizeof *cratio);
  double *tn = calloc((size_t)repeat, sizeof *tn), *nratio = calloc((size_t)repeat, sizeof *nratio);
  double *fnratio = calloc((size_t)repeat, sizeof *fnratio);
  double *tb = calloc((size_t)repeat, sizeof *tb), *bratio = calloc((size_t)repeat, sizeof *bratio);
  for (int r = -1; r < repeat; r++) {
    double a = run_once(&u), b = run_once(&f), c = copy ? copy_once(copy) : 0;
    double g = big ? copy_once(big) : 1;
    if (r >= 0) {
      tb[r] = g;
      bratio[r] = (bytes / b) / (2.0 * (double)(big ? big->size : 1) / g);
    }
    double n = copy && copy->has_negate ? run_once(&copy->negate) : 1;
    if (r < 0) continue;
    tu[r] = a;
    tf[r] = b;
    ratio[r] = a / b;
    tc[r] = c;
    cratio[r] = c / b;
    tn[r] = n;
    nratio[r] = c / n;
    fnratio[r] = n / b;
  }
  result_t out;
  out.unfused_ms = median(tu, repeat);
  out.fused_ms = median(tf, repeat);
  out.speedup = median(ratio, repeat);
  out.copy_ms = median(tc, repeat);
  out.fused_over_copy = median(cratio, repeat);
  out.negate_ms = median(tn, repeat);
  out.negate_over_copy = median(nratio, repeat);
  out.fused_over_negate = median(fnratio, repeat);
  free(fnratio);
  out.best_fused_over_copy = cratio[repeat - 1]; /* median() sorted them */
  out.best_negate_over_copy = nratio[repeat - 1];
  out.big_copy_ms = median(tb, repeat);
  out.fused_over_big = median(bratio, repeat);
  free(tb);
  free(bratio);
  free(tn);
  free(nratio);
  out.unfused_stats = u.stats;
  out.fused_stats = f.stats;
  free(tu);
  free(tf);
  free(ratio);
  free(tc);
  free(cratio);
  release(&u);
  release(&f);
  return out;
}

static const char layer_norm[] =
    "func.func @main(%x: tensor<2607x256xf32>, %g: tensor<256xf32>, %b: tensor<256xf32>) -> tensor<2607x256xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %n = stablehlo.constant dense<256.0> : tensor<2607xf32>\n"
    "  %eps = stablehlo.constant dense<1.0e-5> : tensor<2607xf32>\n"
    "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2607x256xf32>, tensor<f32>) -> tensor<2607xf32>\n"
    "  %mean = stablehlo.divide %s, %n : tensor<2607xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0] : (tensor<2607xf32>) -> tensor<2607x256xf32>\n"
    "  %d = stablehlo.subtract %x, %mb : tensor<2607x256xf32>\n"
    "  %d2 = stablehlo.multiply %d, %d : tensor<2607x256xf32>\n"
    "  %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [1] : (tensor<2607x256xf32>, tensor<f32>) -> tensor<2607xf32>\n"
    "  %var = stablehlo.divide %v, %n : tensor<2607xf32>\n"
    "  %ve = stablehlo.add %var, %eps : tensor<2607xf32>\n"
    "  %r = stablehlo.rsqrt %ve : tensor<2607xf32>\n"
    "  %rb = stablehlo.broadcast_in_dim %r, dims = [0] : (tensor<2607xf32>) -> tensor<2607x256xf32>\n"
    "  %y = stablehlo.multiply %d, %rb : tensor<2607x256xf32>\n"
    "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<256xf32>) -> tensor<2607x256xf32>\n"
    "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<256xf32>) -> tensor<2607x256xf32>\n"
    "  %yg = stablehlo.multiply %y, %gb : tensor<2607x256xf32>\n"
    "  %out = stablehlo.add %yg, %bb : tensor<2607x256xf32>\n"
    "  return %out : tensor<2607x256xf32>\n"
    "}\n";

static const char softmax[] =
    "func.func @main(%x: tensor<33x8x79x79xf32>) -> tensor<33x8x79x79xf32> {\n"
    "  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %m = stablehlo.reduce(%x init: %ninf) applies stablehlo.maximum across dimensions = [3] : (tensor<33x8x79x79xf32>, tensor<f32>) -> tensor<33x8x79xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<33x8x79xf32>) -> tensor<33x8x79x79xf32>\n"
    "  %d = stablehlo.subtract %x, %mb : tensor<33x8x79x79xf32>\n"
    "  %e = stablehlo.exponential %d : tensor<33x8x79x79xf32>\n"
    "  %s = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (tensor<33x8x79x79xf32>, tensor<f32>) -> tensor<33x8x79xf32>\n"
    "  %sb = stablehlo.broadcast_in_dim %s, dims = [0, 1, 2] : (tensor<33x8x79xf32>) -> tensor<33x8x79x79xf32>\n"
    "  %y = stablehlo.divide %e, %sb : tensor<33x8x79x79xf32>\n"
    "  return %y : tensor<33x8x79x79xf32>\n"
    "}\n";

/* a reduction over the rows (column sums) and, as its reference, over the
 * columns (row sums: read by words on CPU devices) */
static const char column_sum[] =
    "func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4096x4096xf32>, tensor<f32>) -> tensor<4096xf32>\n"
    "  return %s : tensor<4096xf32>\n"
    "}\n";

static const char row_sum[] =
    "func.func @main(%x: tensor<4096x4096xf32>) -> tensor<4096xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %s = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4096x4096xf32>, tensor<f32>) -> tensor<4096xf32>\n"
    "  return %s : tensor<4096xf32>\n"
    "}\n";

static const char elementwise8[] =
    "func.func @main(%x: tensor<16777216xf32>) -> tensor<16777216xf32> {\n"
    "  %a = stablehlo.constant dense<1.5> : tensor<16777216xf32>\n"
    "  %b = stablehlo.constant dense<0.25> : tensor<16777216xf32>\n"
    "  %c = stablehlo.constant dense<-2.0> : tensor<16777216xf32>\n"
    "  %0 = stablehlo.multiply %x, %a : tensor<16777216xf32>\n"
    "  %1 = stablehlo.add %0, %b : tensor<16777216xf32>\n"
    "  %2 = stablehlo.maximum %1, %c : tensor<16777216xf32>\n"
    "  %3 = stablehlo.subtract %2, %x : tensor<16777216xf32>\n"
    "  %4 = stablehlo.multiply %3, %3 : tensor<16777216xf32>\n"
    "  %5 = stablehlo.add %4, %a : tensor<16777216xf32>\n"
    "  %6 = stablehlo.abs %5 : tensor<16777216xf32>\n"
    "  %7 = stablehlo.minimum %6, %a : tensor<16777216xf32>\n"
    "  return %7 : tensor<16777216xf32>\n"
    "}\n";

/* statistics over [1, 32, 40960], normalized values reshaped back to NCHW */
static const char group_norm[] =
    "func.func @main(%x: tensor<1x320x64x64xf32>, %g: tensor<320xf32>, %b: tensor<320xf32>) -> tensor<1x320x64x64xf32> {\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %n = stablehlo.constant dense<40960.0> : tensor<1x32xf32>\n"
    "  %eps = stablehlo.constant dense<1.0e-5> : tensor<1x32xf32>\n"
    "  %r = stablehlo.reshape %x : (tensor<1x320x64x64xf32>) -> tensor<1x32x40960xf32>\n"
    "  %s = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [2] : (tensor<1x32x40960xf32>, tensor<f32>) -> tensor<1x32xf32>\n"
    "  %mean = stablehlo.divide %s, %n : tensor<1x32xf32>\n"
    "  %mb = stablehlo.broadcast_in_dim %mean, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32x40960xf32>\n"
    "  %d = stablehlo.subtract %r, %mb : tensor<1x32x40960xf32>\n"
    "  %d2 = stablehlo.multiply %d, %d : tensor<1x32x40960xf32>\n"
    "  %v = stablehlo.reduce(%d2 init: %z) applies stablehlo.add across dimensions = [2] : (tensor<1x32x40960xf32>, tensor<f32>) -> tensor<1x32xf32>\n"
    "  %var = stablehlo.divide %v, %n : tensor<1x32xf32>\n"
    "  %ve = stablehlo.add %var, %eps : tensor<1x32xf32>\n"
    "  %rs = stablehlo.rsqrt %ve : tensor<1x32xf32>\n"
    "  %rb = stablehlo.broadcast_in_dim %rs, dims = [0, 1] : (tensor<1x32xf32>) -> tensor<1x32x40960xf32>\n"
    "  %y = stablehlo.multiply %d, %rb : tensor<1x32x40960xf32>\n"
    "  %y4 = stablehlo.reshape %y : (tensor<1x32x40960xf32>) -> tensor<1x320x64x64xf32>\n"
    "  %gb = stablehlo.broadcast_in_dim %g, dims = [1] : (tensor<320xf32>) -> tensor<1x320x64x64xf32>\n"
    "  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<320xf32>) -> tensor<1x320x64x64xf32>\n"
    "  %yg = stablehlo.multiply %y4, %gb : tensor<1x320x64x64xf32>\n"
    "  %o = stablehlo.add %yg, %bb : tensor<1x320x64x64xf32>\n"
    "  %sg = stablehlo.logistic %o : tensor<1x320x64x64xf32>\n"
    "  %silu = stablehlo.multiply %o, %sg : tensor<1x320x64x64xf32>\n"
    "  return %silu : tensor<1x320x64x64xf32>\n"
    "}\n";

/* m' and v' are results and read by the update of p: producer-consumer
 * multi-output fusion (codegen/fusion.c) makes it one kernel */
static const char adam[] =
    "func.func @main(%p: tensor<4194304xf32>, %g: tensor<4194304xf32>, %m: tensor<4194304xf32>, %v: tensor<4194304xf32>)"
    " -> (tensor<4194304xf32>, tensor<4194304xf32>, tensor<4194304xf32>) {\n"
    "  %b1 = stablehlo.constant dense<0.9> : tensor<4194304xf32>\n"
    "  %b1c = stablehlo.constant dense<0.1> : tensor<4194304xf32>\n"
    "  %b2 = stablehlo.constant dense<0.999> : tensor<4194304xf32>\n"
    "  %b2c = stablehlo.constant dense<0.001> : tensor<4194304xf32>\n"
    "  %lr = stablehlo.constant dense<0.001> : tensor<4194304xf32>\n"
    "  %eps = stablehlo.constant dense<1.0e-8> : tensor<4194304xf32>\n"
    "  %m1 = stablehlo.multiply %b1, %m : tensor<4194304xf32>\n"
    "  %m2 = stablehlo.multiply %b1c, %g : tensor<4194304xf32>\n"
    "  %mn = stablehlo.add %m1, %m2 : tensor<4194304xf32>\n"
    "  %gg = stablehlo.multiply %g, %g : tensor<4194304xf32>\n"
    "  %v1 = stablehlo.multiply %b2, %v : tensor<4194304xf32>\n"
    "  %v2 = stablehlo.multiply %b2c, %gg : tensor<4194304xf32>\n"
    "  %vn = stablehlo.add %v1, %v2 : tensor<4194304xf32>\n"
    "  %sv = stablehlo.sqrt %vn : tensor<4194304xf32>\n"
    "  %de = stablehlo.add %sv, %eps : tensor<4194304xf32>\n"
    "  %u = stablehlo.divide %mn, %de : tensor<4194304xf32>\n"
    "  %lu = stablehlo.multiply %lr, %u : tensor<4194304xf32>\n"
    "  %pn = stablehlo.subtract %p, %lu : tensor<4194304xf32>\n"
    "  return %pn, %mn, %vn : tensor<4194304xf32>, tensor<4194304xf32>, tensor<4194304xf32>\n"
    "}\n";

/* the new c is carried and read by the new h: one kernel for both */
static const char lstm[] =
    "func.func @main(%w: tensor<512x1024xf32>, %b: tensor<1024xf32>, %xs: tensor<100x1x256xf32>) -> tensor<1x256xf32> {\n"
    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
    "  %cn = stablehlo.constant dense<100> : tensor<i32>\n"
    "  %z = stablehlo.constant dense<0.0> : tensor<1x256xf32>\n"
    "  %r:3 = stablehlo.while(%i = %c0, %h = %z, %c = %z) : tensor<i32>, tensor<1x256xf32>, tensor<1x256xf32>\n"
    "  cond {\n"
    "    %p = stablehlo.compare LT, %i, %cn : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %x3 = stablehlo.dynamic_slice %xs, %i, %c0, %c0, sizes = [1, 1, 256] : (tensor<100x1x256xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x1x256xf32>\n"
    "    %x = stablehlo.reshape %x3 : (tensor<1x1x256xf32>) -> tensor<1x256xf32>\n"
    "    %xh = stablehlo.concatenate %x, %h, dim = 1 : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x512xf32>\n"
    "    %g0 = stablehlo.dot_general %xh, %w, contracting_dims = [1] x [0] : (tensor<1x512xf32>, tensor<512x1024xf32>) -> tensor<1x1024xf32>\n"
    "    %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<1024xf32>) -> tensor<1x1024xf32>\n"
    "    %g = stablehlo.add %g0, %bb : tensor<1x1024xf32>\n"
    "    %gi = stablehlo.slice %g [0:1, 0:256] : (tensor<1x1024xf32>) -> tensor<1x256xf32>\n"
    "    %gf = stablehlo.slice %g [0:1, 256:512] : (tensor<1x1024xf32>) -> tensor<1x256xf32>\n"
    "    %gg = stablehlo.slice %g [0:1, 512:768] : (tensor<1x1024xf32>) -> tensor<1x256xf32>\n"
    "    %go = stablehlo.slice %g [0:1, 768:1024] : (tensor<1x1024xf32>) -> tensor<1x256xf32>\n"
    "    %si = stablehlo.logistic %gi : tensor<1x256xf32>\n"
    "    %sf = stablehlo.logistic %gf : tensor<1x256xf32>\n"
    "    %tg = stablehlo.tanh %gg : tensor<1x256xf32>\n"
    "    %so = stablehlo.logistic %go : tensor<1x256xf32>\n"
    "    %c2a = stablehlo.multiply %sf, %c : tensor<1x256xf32>\n"
    "    %c2b = stablehlo.multiply %si, %tg : tensor<1x256xf32>\n"
    "    %c2 = stablehlo.add %c2a, %c2b : tensor<1x256xf32>\n"
    "    %tc = stablehlo.tanh %c2 : tensor<1x256xf32>\n"
    "    %h2 = stablehlo.multiply %so, %tc : tensor<1x256xf32>\n"
    "    %i2 = stablehlo.add %i, %c1 : tensor<i32>\n"
    "    stablehlo.return %i2, %h2, %c2 : tensor<i32>, tensor<1x256xf32>, tensor<1x256xf32>\n"
    "  }\n"
    "  return %r#1 : tensor<1x256xf32>\n"
    "}\n";

static char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[n] = 0;
  *len = (size_t)n;
  return buf;
}

static const char *only; /* case filter from the command line */

static bool wanted(const char *name) { return !only || strstr(name, only); }

static void row(const char *name, result_t r) {
  printf("| %-13s | %10.2f | %10.2f | %7.2fx | %9lld / %-9lld |\n", name, r.unfused_ms, r.fused_ms, r.speedup,
         (long long)r.unfused_stats.dispatches, (long long)r.fused_stats.dispatches);
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? atoi(argv[1]) : 5;
  only = argc > 2 ? argv[2] : NULL;
  if (repeat < 1) repeat = 1;
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) die(st, "context");
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  printf("device: %s (%s), median of %d rounds (speedup: median of per-round ratios)\n\n", dev.name, dev.type,
         repeat);
  printf("| %-13s | %10s | %10s | %8s | %-21s |\n", "case", "unfused ms", "fused ms", "speedup",
         "dispatches unf/fused");
  printf("|---------------|------------|------------|----------|-----------------------|\n");
  /* each against a copy of as many bytes as it must move: the row kernels
   * their input once and their output once (the 256-float scale and shift
   * of the layer norm left out), the reductions their 64 MiB input (the
   * 16 KiB of sums left out), group_norm its input and result, adam_4m its
   * four inputs and three results */
  enum { NROWS = 6 };
  /* the row kernels also against the two-op kernel (abs of negate) over
   * their input's shape, in the same rounds: what a compiled kernel that
   * reads and writes the same bytes, with next to no arithmetic, reaches */
  const struct {
    const char *name, *text;
    uint64_t moved;    /* bytes read + written */
    const char *shape; /* the input's, for the two-op kernel (NULL: none) */
  } rows[NROWS] = {{"layer_norm", layer_norm, 2ull * 2607 * 256 * 4, "2607x256xf32"},
                   {"softmax", softmax, 2ull * 33 * 8 * 79 * 79 * 4, "33x8x79x79xf32"},
                   {"column_sum", column_sum, 4096ull * 4096 * 4, NULL},
                   {"row_sum", row_sum, 4096ull * 4096 * 4, NULL},
                   {"group_norm", group_norm, 2ull * 320 * 64 * 64 * 4, NULL},
                   {"adam_4m", adam, 7ull * 4194304 * 4, NULL}};
  result_t rr[NROWS];
  bool have_rr[NROWS] = {false}, any_rr = false;
  copier_t big;
  bool have_big = false;
  for (int i = 0; i < NROWS; i++) {
    if (!wanted(rows[i].name)) continue;
    if (!have_big) copier_create(ctx, 256ull << 20, NULL, &big);
    have_big = true;
    copier_t copy;
    char negate[512];
    if (rows[i].shape) two_op_program(negate, sizeof negate, rows[i].shape);
    copier_create(ctx, rows[i].moved / 2, rows[i].shape ? negate : NULL, &copy);
    rr[i] = measure(ctx, rows[i].text, strlen(rows[i].text), repeat, &copy, &big, (double)rows[i].moved);
    copier_destroy(&copy);
    row(rows[i].name, rr[i]);
    have_rr[i] = any_rr = true;
  }
  result_t ew;
  bool have_ew = false;
  if (wanted("elementwise8")) {
    /* the copy moves as many bytes as the chain must: 64 MiB in, 64 MiB out */
    copier_t copy;
    char negate[512];
    two_op_program(negate, sizeof negate, "16777216xf32");
    copier_create(ctx, 64ull << 20, negate, &copy);
    ew = measure(ctx, elementwise8, strlen(elementwise8), repeat, &copy, NULL, 0);
    copier_destroy(&copy);
    row("elementwise8", ew);
    have_ew = true;
  }
  if (wanted("lstm_100")) row("lstm_100", measure(ctx, lstm, strlen(lstm), repeat, NULL, NULL, 0));
  const char *model = VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir";
  size_t len;
  char *text = wanted("chess_9m") ? slurp(model, &len) : NULL;
  if (!wanted("chess_9m")) {
  } else if (text) {
    row("chess_9m", measure(ctx, text, len, repeat < 3 ? repeat : 3, NULL, NULL, 0));
    free(text);
  } else {
    printf("| chess_9m      | skipped: %s not found |\n", model);
  }
  for (int i = 0; i < NROWS; i++)
    if (have_rr[i])
      printf("\n%s effective bandwidth: fused %.2f GB/s; vkCmdCopyBuffer of the same 2 x %.2f MiB %.2f GB/s "
             "(same rounds); fused/copy = %.0f%% (median of per-round ratios; best round %.0f%%)",
             rows[i].name, rows[i].moved / (rr[i].fused_ms * 1e6), rows[i].moved / 2 / 1048576.0,
             rows[i].moved / (rr[i].copy_ms * 1e6), 100.0 * rr[i].fused_over_copy,
             100.0 * rr[i].best_fused_over_copy);
  for (int i = 0; i < NROWS; i++)
    if (have_rr[i] && rows[i].shape)
      printf("\n%s: the two-op kernel (abs of negate) over its input's shape %.2f GB/s = %.0f%% of the same copy, "
             "the fused program %.0f%% of the two-op kernel (medians of per-round ratios)",
             rows[i].name, rows[i].moved / (rr[i].negate_ms * 1e6), 100.0 * rr[i].negate_over_copy,
             100.0 * rr[i].fused_over_negate);
  for (int i = 0; i < NROWS; i++)
    if (have_rr[i])
      printf("\n%s against vkCmdCopyBuffer of 256 MiB (%.2f GB/s, same rounds): fused/copy = %.0f%% "
             "(median of per-round bandwidth ratios)",
             rows[i].name, 2.0 * 268435456.0 / (rr[i].big_copy_ms * 1e6), 100.0 * rr[i].fused_over_big);
  if (have_big) copier_destroy(&big);
  if (any_rr) printf("\n");
  if (have_ew) {
    double bytes = 2.0 * 16777216.0 * 4.0; /* read x once, write y once */
    printf("\nelementwise8 effective bandwidth: fused %.2f GB/s, unfused %.2f GB/s; "
           "vkCmdCopyBuffer of the same 2 x 64 MiB %.2f GB/s (same rounds); fused/copy = %.0f%% "
           "(median of per-round ratios)\n",
           bytes / (ew.fused_ms * 1e6), bytes / (ew.unfused_ms * 1e6), bytes / (ew.copy_ms * 1e6),
           100.0 * ew.fused_over_copy);
    printf("a two-op fused kernel (abs of negate) over the same bytes: %.2f GB/s = %.0f%% of the copy "
           "(about the ceiling for compiled kernels on this device)\n",
           bytes / (ew.negate_ms * 1e6), 100.0 * ew.negate_over_copy);
    printf("best round: elementwise8 %.0f%% of the copy, the two-op kernel %.0f%%\n",
           100.0 * ew.best_fused_over_copy, 100.0 * ew.best_negate_over_copy);
  }
  vkhlo_context_destroy(ctx);
  return 0;
}
