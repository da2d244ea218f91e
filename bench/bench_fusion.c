/*
 * bench_fusion: fused vs unfused (--no-fusion) on the default device, in
 * the same run, for the memory-bound cases of the fusion issue and the
 * chess model:
 *
 *   layer_norm    2607x256 f32 (mean, variance, normalize, scale, shift)
 *   softmax       33x8x79x79 f32 over the last axis
 *   elementwise8  a chain of 8 elementwise ops over 16M f32
 *   chess_9m      ../shared/models/searchless_chess_9m.mlir (when present)
 *
 * Each program is compiled twice, warmed up once, then executed REPEAT
 * times into the same result buffers (vkhlo_executable_execute_into, as a
 * program run in a loop would be); the table reports the median wall time
 * of one execution and the speedup.  For the elementwise chain it also reports the
 * effective bandwidth (bytes the program must read + write / time) next
 * to the device's own vkCmdCopyBuffer bandwidth, measured in the same run
 * on two 128 MiB buffers.  Ratios, not absolute times, are what to read:
 * this machine is shared and noisy.
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

typedef struct timing {
  double ms;
  vkhlo_executable_stats_t stats;
} timing_t;

/* Compiles |text| (fused or not), runs it |repeat| times on seeded random
 * arguments, returns the median execute time. */
static timing_t time_program(vkhlo_context_t *ctx, const char *text, size_t len, bool no_fusion,
                             int repeat) {
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.no_fusion = no_fusion;
  vkhlo_executable_t *exe;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, len, "bench.mlir", &o, &exe);
  if (st) die(st, "compile");
  int np = vkhlo_executable_parameter_count(exe), nr = vkhlo_executable_result_count(exe);
  vkhlo_buffer_t **args = calloc((size_t)np + 1, sizeof *args);
  vkhlo_buffer_t **res = calloc((size_t)nr + 1, sizeof *res);
  uint64_t seed = 7;
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(exe, i, &t);
    int64_t n = vkhlo_tensor_type_element_count(&t);
    void *data = malloc(vkhlo_tensor_type_size_bytes(&t) + 4);
    for (int64_t k = 0; k < n; k++) {
      uint64_t r = splitmix64(&seed);
      if (t.element_type == VKHLO_F32) ((float *)data)[k] = (float)((double)(r >> 40) / (1 << 24) - 0.5);
      else ((int32_t *)data)[k] = (int32_t)(r % 1968);
    }
    if ((st = vkhlo_buffer_create(ctx, &t, data, &args[i]))) die(st, "buffer");
    free(data);
  }
  for (int i = 0; i < nr; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_result_type(exe, i, &t);
    if ((st = vkhlo_buffer_create(ctx, &t, NULL, &res[i]))) die(st, "result buffer");
  }
  double *times = calloc((size_t)repeat, sizeof *times);
  for (int r = -1; r < repeat; r++) { /* r = -1 warms up */
    double t0 = now_ms();
    if ((st = vkhlo_executable_execute_into(exe, np, args, nr, res))) die(st, "execute");
    double t1 = now_ms();
    if (r >= 0) times[r] = t1 - t0;
  }
  for (int i = 0; i < nr; i++) vkhlo_buffer_destroy(res[i]);
  timing_t out;
  out.ms = median(times, repeat);
  vkhlo_executable_stats(exe, &out.stats);
  for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args[i]);
  free(args);
  free(res);
  free(times);
  vkhlo_executable_destroy(exe);
  return out;
}

/* vkCmdCopyBuffer bandwidth in GB/s (read + write bytes / time). */
static double copy_bandwidth(vkhlo_context_t *ctx, int repeat) {
  const uint64_t size = 128ull << 20;
  vkrt_buffer_t *a, *b;
  vkrt_cmd_t *cmd;
  vkhlo_status_t st;
  if ((st = vkrt_buffer_create(ctx->device, size, &a)) || (st = vkrt_buffer_create(ctx->device, size, &b)) ||
      (st = vkrt_cmd_create(ctx->device, &cmd)))
    die(st, "copy buffers");
  double *times = calloc((size_t)repeat, sizeof *times);
  for (int r = -1; r < repeat; r++) {
    double t0 = now_ms();
    if ((st = vkrt_cmd_begin(cmd)) || (st = vkrt_cmd_copy(cmd, a, 0, b, 0, size)) ||
        (st = vkrt_cmd_submit_and_wait(cmd)))
      die(st, "copy");
    if (r >= 0) times[r] = now_ms() - t0;
  }
  double ms = median(times, repeat);
  free(times);
  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(a);
  vkrt_buffer_destroy(b);
  return 2.0 * (double)size / (ms * 1e6);
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

static void row(const char *name, timing_t unfused, timing_t fused) {
  printf("| %-13s | %10.2f | %10.2f | %7.2fx | %9lld / %-9lld |\n", name, unfused.ms, fused.ms,
         unfused.ms / fused.ms, (long long)unfused.stats.dispatches, (long long)fused.stats.dispatches);
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
  printf("device: %s (%s), median of %d runs\n\n", dev.name, dev.type, repeat);
  printf("| %-13s | %10s | %10s | %8s | %-21s |\n", "case", "unfused ms", "fused ms", "speedup",
         "dispatches unf/fused");
  printf("|---------------|------------|------------|----------|-----------------------|\n");
  if (wanted("layer_norm"))
    row("layer_norm", time_program(ctx, layer_norm, strlen(layer_norm), true, repeat),
        time_program(ctx, layer_norm, strlen(layer_norm), false, repeat));
  if (wanted("softmax"))
    row("softmax", time_program(ctx, softmax, strlen(softmax), true, repeat),
        time_program(ctx, softmax, strlen(softmax), false, repeat));
  timing_t eu = {0}, ef = {0};
  if (wanted("elementwise8")) {
    eu = time_program(ctx, elementwise8, strlen(elementwise8), true, repeat);
    ef = time_program(ctx, elementwise8, strlen(elementwise8), false, repeat);
    row("elementwise8", eu, ef);
  }
  const char *model = VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir";
  size_t len;
  char *text = wanted("chess_9m") ? slurp(model, &len) : NULL;
  if (!wanted("chess_9m")) {
  } else if (text) {
    int r = repeat < 3 ? repeat : 3;
    row("chess_9m", time_program(ctx, text, len, true, r), time_program(ctx, text, len, false, r));
    free(text);
  } else {
    printf("| chess_9m      | skipped: %s not found |\n", model);
  }
  if (!wanted("elementwise8")) {
    vkhlo_context_destroy(ctx);
    return 0;
  }
  double bytes = 2.0 * 16777216.0 * 4.0; /* read x once, write y once */
  double eff = bytes / (ef.ms * 1e6);
  double copy = copy_bandwidth(ctx, repeat);
  printf("\nelementwise8 effective bandwidth: fused %.2f GB/s, unfused %.2f GB/s; "
         "vkCmdCopyBuffer %.2f GB/s; fused/copy = %.0f%%\n",
         eff, bytes / (eu.ms * 1e6), copy, 100.0 * eff / copy);
  vkhlo_context_destroy(ctx);
  return 0;
}
