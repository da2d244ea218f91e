/*
 * bench_conv: every distinct convolution layer of ResNet-50 v1.5 (batch 1,
 * 224x224 input, NCHW activations and OIHW weights as PyTorch exports them,
 * f32), the library's implicit-GEMM kernel (shaders/conv2d_cpu.comp,
 * codegen/emit_conv.c) against the old per-element kernel (one invocation
 * per output element, elemental.c; forced with $VKHLO_CONV_KERNEL=elemental
 * while the baseline compiles) in the same run, on the default device.
 *
 * Each layer is a one-convolution program (plus, in the "+bias+relu" rows,
 * the fused epilogue of a bias add and a relu).  Times are device time
 * (vkhlo_executable_set_profiling: timestamps around the dispatch), the
 * median over REPEAT executions after one warm-up; each round runs the old
 * and the new kernel back to back and the ratio column is the median of the
 * per-round ratios.  GFLOP/s counts 2 * N * O * OH * OW * (C / G) * KH * KW.
 *
 *   bench_conv [REPEAT [FILTER]]   (default 3; FILTER: a substring of the
 *                                   layer names to run)
 *   $VKHLO_CONV_TILE=PxC           the new kernel's register tile (for
 *                                   measuring tile shapes; see emit_conv.h)
 *   $BENCH_CONV_SKIP_OLD=1         skip the (slow) per-element baseline
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkhlo/vkhlo.h"

typedef struct layer {
  const char *name;
  int c, h, o, k, stride, pad;
  bool epilogue; /* + bias + relu, fused */
} layer_t;

/* ResNet-50 v1.5: the stride of a stage's first block is in its 3x3
 * convolution and its projection shortcut. */
static const layer_t layers[] = {
    {"stem 7x7/2 3->64", 3, 224, 64, 7, 2, 3, false},
    {"s1 1x1 64->64", 64, 56, 64, 1, 1, 0, false},
    {"s1 3x3 64->64", 64, 56, 64, 3, 1, 1, false},
    {"s1 1x1 64->256 (+proj)", 64, 56, 256, 1, 1, 0, false},
    {"s1 1x1 256->64", 256, 56, 64, 1, 1, 0, false},
    {"s2 1x1 256->128", 256, 56, 128, 1, 1, 0, false},
    {"s2 3x3/2 128->128", 128, 56, 128, 3, 2, 1, false},
    {"s2 1x1 128->512", 128, 28, 512, 1, 1, 0, false},
    {"s2 proj 1x1/2 256->512", 256, 56, 512, 1, 2, 0, false},
    {"s2 1x1 512->128", 512, 28, 128, 1, 1, 0, false},
    {"s2 3x3 128->128", 128, 28, 128, 3, 1, 1, false},
    {"s3 1x1 512->256", 512, 28, 256, 1, 1, 0, false},
    {"s3 3x3/2 256->256", 256, 28, 256, 3, 2, 1, false},
    {"s3 1x1 256->1024", 256, 14, 1024, 1, 1, 0, false},
    {"s3 proj 1x1/2 512->1024", 512, 28, 1024, 1, 2, 0, false},
    {"s3 1x1 1024->256", 1024, 14, 256, 1, 1, 0, false},
    {"s3 3x3 256->256", 256, 14, 256, 3, 1, 1, false},
    {"s4 1x1 1024->512", 1024, 14, 512, 1, 1, 0, false},
    {"s4 3x3/2 512->512", 512, 14, 512, 3, 2, 1, false},
    {"s4 1x1 512->2048", 512, 7, 2048, 1, 1, 0, false},
    {"s4 proj 1x1/2 1024->2048", 1024, 14, 2048, 1, 2, 0, false},
    {"s4 1x1 2048->512", 2048, 7, 512, 1, 1, 0, false},
    {"s4 3x3 512->512", 512, 7, 512, 3, 1, 1, false},
    {"s3 3x3 +bias+relu", 256, 14, 256, 3, 1, 1, true},
};

static void die(vkhlo_status_t st, const char *what) {
  fprintf(stderr, "bench_conv: %s: %s\n", what, vkhlo_status_message(st));
  exit(2);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int out_size(const layer_t *l) { return (l->h + 2 * l->pad - l->k) / l->stride + 1; }

static char *program(const layer_t *l) {
  int oh = out_size(l);
  char *text = malloc(4096);
  char in[64], w[64], out[64];
  snprintf(in, sizeof in, "tensor<1x%dx%dx%dxf32>", l->c, l->h, l->h);
  snprintf(w, sizeof w, "tensor<%dx%dx%dx%dxf32>", l->o, l->c, l->k, l->k);
  snprintf(out, sizeof out, "tensor<1x%dx%dx%dxf32>", l->o, oh, oh);
  int n = snprintf(text, 4096,
                   "func.func @main(%%x: %s, %%w: %s, %%b: tensor<%dxf32>) -> %s {\n"
                   "  %%y = stablehlo.convolution(%%x, %%w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1],"
                   " window = {stride = [%d, %d], pad = [[%d, %d], [%d, %d]]}"
                   " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (%s, %s) -> %s\n",
                   in, w, l->o, out, l->stride, l->stride, l->pad, l->pad, l->pad, l->pad, in, w, out);
  if (l->epilogue)
    n += snprintf(text + n, 4096 - (size_t)n,
                  "  %%bb = stablehlo.broadcast_in_dim %%b, dims = [1] : (tensor<%dxf32>) -> %s\n"
                  "  %%z = stablehlo.constant dense<0.0> : %s\n"
                  "  %%s = stablehlo.add %%y, %%bb : %s\n"
                  "  %%r = stablehlo.maximum %%s, %%z : %s\n"
                  "  return %%r : %s\n}\n",
                  l->o, out, out, out, out, out);
  else
    snprintf(text + n, 4096 - (size_t)n, "  return %%y : %s\n}\n", out);
  return text;
}

typedef struct prepared {
  vkhlo_executable_t *exe;
  vkhlo_buffer_t *args[3], *res;
} prepared_t;

static void prepare(vkhlo_context_t *ctx, const char *text, bool old, prepared_t *p) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  if (old) setenv("VKHLO_CONV_KERNEL", "elemental", 1);
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, strlen(text), "bench_conv.mlir", &o, &p->exe);
  if (old) unsetenv("VKHLO_CONV_KERNEL");
  if (st) die(st, "compile");
  uint64_t seed = 1;
  for (int i = 0; i < 3; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(p->exe, i, &t);
    int64_t n = vkhlo_tensor_type_element_count(&t);
    float *data = malloc((size_t)n * sizeof *data + 4);
    for (int64_t k = 0; k < n; k++) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      data[k] = (float)((double)(seed >> 40) / (1 << 24) - 0.5);
    }
    if ((st = vkhlo_buffer_create(ctx, &t, data, &p->args[i]))) die(st, "buffer");
    free(data);
  }
  vkhlo_tensor_type_t t;
  vkhlo_executable_result_type(p->exe, 0, &t);
  if ((st = vkhlo_buffer_create(ctx, &t, NULL, &p->res))) die(st, "result buffer");
  vkhlo_executable_set_profiling(p->exe, true);
}

static void release(prepared_t *p) {
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(p->args[i]);
  vkhlo_buffer_destroy(p->res);
  vkhlo_executable_destroy(p->exe);
}

/* Device time of one execution, in ms (every kernel's, summed). */
static double run_once(prepared_t *p) {
  vkhlo_executable_set_profiling(p->exe, true); /* clears the totals */
  vkhlo_status_t st = vkhlo_executable_execute_into(p->exe, 3, p->args, 1, &p->res);
  if (st) die(st, "execute");
  vkhlo_kernel_profile_t prof[8];
  int n = vkhlo_executable_profile(p->exe, prof, 8);
  double ms = 0;
  for (int i = 0; i < n && i < 8; i++) ms += prof[i].device_ms;
  return ms;
}

/* Largest relative difference between the two results (a sanity check). */
static double max_rel_diff(prepared_t *a, prepared_t *b) {
  vkhlo_tensor_type_t t;
  vkhlo_buffer_type(a->res, &t);
  int64_t n = vkhlo_tensor_type_element_count(&t);
  float *x = malloc((size_t)n * 4), *y = malloc((size_t)n * 4);
  vkhlo_status_t st;
  if ((st = vkhlo_buffer_read(a->res, x, (size_t)n * 4)) || (st = vkhlo_buffer_read(b->res, y, (size_t)n * 4)))
    die(st, "read");
  double worst = 0, scale = 0;
  for (int64_t i = 0; i < n; i++) scale = scale > x[i] && scale > -x[i] ? scale : (x[i] < 0 ? -x[i] : x[i]);
  for (int64_t i = 0; i < n; i++) {
    double d = (double)x[i] - (double)y[i];
    if (d < 0) d = -d;
    if (d > worst) worst = d;
  }
  free(x);
  free(y);
  return scale > 0 ? worst / scale : worst;
}

int main(int argc, char **argv) {
  int repeat = argc > 1 ? atoi(argv[1]) : 3;
  const char *only = argc > 2 ? argv[2] : NULL;
  bool skip_old = getenv("BENCH_CONV_SKIP_OLD") && atoi(getenv("BENCH_CONV_SKIP_OLD"));
  if (repeat < 1) repeat = 1;
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) die(st, "context");
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  const char *tile = getenv("VKHLO_CONV_TILE");
  printf("device: %s (%s); ResNet-50 v1.5 convolutions, batch 1, NCHW f32; device time, median of %d; "
         "tile %s\n\n",
         dev.name, dev.type, repeat, tile ? tile : "default");
  printf("| %-26s | %8s | %8s | %8s | %8s | %8s | %7s | %8s |\n", "layer", "GFLOP", "old ms", "new ms", "old GF/s",
         "new GF/s", "ratio", "max diff");
  printf("|----------------------------|----------|----------|----------|----------|----------|---------|----------|\n");
  double tot_old = 0, tot_new = 0, tot_flop = 0;
  for (size_t i = 0; i < sizeof layers / sizeof layers[0]; i++) {
    const layer_t *l = &layers[i];
    if (only && !strstr(l->name, only)) continue;
    int oh = out_size(l);
    double flop = 2.0 * l->o * oh * oh * l->c * l->k * l->k;
    char *text = program(l);
    prepared_t a, b;
    if (!skip_old) prepare(ctx, text, true, &a);
    prepare(ctx, text, false, &b);
    double *to = calloc((size_t)repeat, sizeof *to), *tn = calloc((size_t)repeat, sizeof *tn);
    double *ratio = calloc((size_t)repeat, sizeof *ratio);
    for (int r = -1; r < repeat; r++) {
      double x = skip_old ? 0 : run_once(&a), y = run_once(&b);
      if (r < 0) continue;
      to[r] = x;
      tn[r] = y;
      ratio[r] = x / y;
    }
    double mo = median(to, repeat), mn = median(tn, repeat), rt = median(ratio, repeat);
    double diff = skip_old ? 0 : max_rel_diff(&a, &b);
    printf("| %-26s | %8.3f | %8.2f | %8.2f | %8.2f | %8.2f | %6.1fx | %8.1e |\n", l->name, flop / 1e9, mo, mn,
           mo > 0 ? flop / (mo * 1e6) : 0, flop / (mn * 1e6), rt, diff);
    fflush(stdout);
    if (!l->epilogue) {
      tot_old += mo;
      tot_new += mn;
      tot_flop += flop;
    }
    free(to);
    free(tn);
    free(ratio);
    if (!skip_old) release(&a);
    release(&b);
    free(text);
  }
  printf("\nall plain layers once each: %.3f GFLOP; old %.1f ms (%.2f GFLOP/s), new %.1f ms (%.2f GFLOP/s), %.1fx\n",
         tot_flop / 1e9, tot_old, tot_old > 0 ? tot_flop / (tot_old * 1e6) : 0, tot_new,
         tot_flop / (tot_new * 1e6), tot_new > 0 ? tot_old / tot_new : 0);
  vkhlo_context_destroy(ctx);
  return 0;
}
