/*
 * bench_overhead: host time per execution of vkhlo_executable_execute.
 *
 *   bench_overhead [RUNS]          (default 41; chess-9M runs 3 times)
 *
 * For each program: device time per execution (profiling on: the sum of
 * the dispatches' device timestamps; profiling adds a barrier per dispatch,
 * so this is an upper bound of the device's share), then the median wall
 * time of the fresh-result loop execute -> destroy results in two modes
 * back to back:
 *   replay   - results destroyed before the next execution: the pool hands
 *              the same device buffers back and the recording is replayed;
 *   record   - the previous results kept alive one execution longer: fresh
 *              device buffers every time, so every execution records anew
 *              (what every fresh-result execution did before the pool).
 * overhead = wall - device; per dispatch = overhead / dispatches.
 *
 * Then loops: a scan as JAX exports it (step i reads row i of xs, h =
 * tanh(0.9 h + row), writes row i of the outputs; T steps) in three
 * forms run alternately in the same rounds: the bound a constant of the
 * cond (a counted loop: its body recorded T times, the program replayed),
 * the same bound passed as an argument (the predicate read back on the
 * host after every step, the baseline), and that loop batched
 * (VKHLO_LOOP_BATCH=64: up to 64 steps per submission, gated on the
 * device).  Prints wall per execution, per step, queue submissions per
 * execution, and the ratios.
 * Prints the device it ran on.  Not a test.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vkhlo/vkhlo.h"

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, by_value);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  if (s) s[n] = 0;
  fclose(f);
  *size = (size_t)n;
  return s;
}

static int fail(vkhlo_status_t st) {
  fprintf(stderr, "bench_overhead: %s\n", vkhlo_status_message(st));
  vkhlo_status_free(st);
  return 2;
}

#define MAX_IO 256

/* One execution; |keep|: destroy the previous results only afterwards. */
static vkhlo_status_t execute_once(vkhlo_executable_t *exe, int np, vkhlo_buffer_t **args, int nr,
                                   vkhlo_buffer_t **held, bool keep) {
  vkhlo_buffer_t *res[MAX_IO];
  if (!keep)
    for (int i = 0; i < nr; i++) vkhlo_buffer_destroy(held[i]), held[i] = NULL;
  vkhlo_status_t st = vkhlo_executable_execute(exe, np, args, nr, res);
  for (int i = 0; i < nr; i++) {
    vkhlo_buffer_destroy(held[i]);
    held[i] = st ? NULL : res[i];
  }
  return st;
}

static int bench(vkhlo_context_t *ctx, const char *name, const char *text, size_t size, int runs) {
  vkhlo_executable_t *exe = NULL;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, size, name, NULL, &exe);
  if (st) return fail(st);
  int np = vkhlo_executable_parameter_count(exe), nr = vkhlo_executable_result_count(exe);
  if (np > MAX_IO || nr > MAX_IO) return 2;
  vkhlo_buffer_t *args[MAX_IO] = {0}, *held[MAX_IO] = {0};
  for (int i = 0; i < np && !st; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(exe, i, &t);
    st = vkhlo_buffer_create(ctx, &t, NULL, &args[i]);
  }
  if (!st) st = execute_once(exe, np, args, nr, held, false); /* warm-up */
  /* device time */
  vkhlo_executable_set_profiling(exe, true);
  int dev_runs = runs < 5 ? runs : 5;
  for (int r = 0; r < dev_runs && !st; r++) st = execute_once(exe, np, args, nr, held, false);
  if (st) return fail(st);
  int nk = vkhlo_executable_profile(exe, NULL, 0);
  vkhlo_kernel_profile_t *p = calloc((size_t)nk + 1, sizeof *p);
  vkhlo_executable_profile(exe, p, nk);
  double device_us = 0;
  for (int i = 0; i < nk; i++) device_us += p[i].device_ms * 1e3;
  device_us /= dev_runs;
  free(p);
  vkhlo_executable_set_profiling(exe, false);
  vkhlo_executable_stats_t s0, s1;
  vkhlo_executable_stats(exe, &s0);
  double wall[2] = {0, 0};
  int64_t recordings[2] = {0, 0};
  double *t = calloc((size_t)runs, sizeof *t);
  for (int mode = 0; mode < 2 && !st; mode++) {
    st = execute_once(exe, np, args, nr, held, mode == 1);
    vkhlo_executable_stats(exe, &s0);
    for (int r = 0; r < runs && !st; r++) {
      double t0 = now_us();
      st = execute_once(exe, np, args, nr, held, mode == 1);
      t[r] = now_us() - t0;
    }
    vkhlo_executable_stats(exe, &s1);
    wall[mode] = median(t, runs);
    recordings[mode] = s1.recordings - s0.recordings;
  }
  free(t);
  if (st) return fail(st);
  double d = (double)s1.dispatches;
  for (int mode = 0; mode < 2; mode++) {
    double over = wall[mode] - device_us;
    printf("%-22s %-7s %12.1f %12.1f %12.1f %6.0f %10.2f %7lld/%d\n", name, mode ? "record" : "replay",
           wall[mode], device_us, over, d, d > 0 ? over / d : 0.0, (long long)recordings[mode], runs);
  }
  printf("%-22s ratio   replay overhead / record overhead = %.2f\n", name,
         (wall[1] - device_us) != 0 ? (wall[0] - device_us) / (wall[1] - device_us) : 0.0);
  for (int i = 0; i < nr; i++) vkhlo_buffer_destroy(held[i]);
  for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args[i]);
  vkhlo_executable_destroy(exe);
  return 0;
}

/* The scan of T steps over [T, 256] rows; |bound_is_argument|: the
 * bound comes from parameter %t instead of the constant T. */
static char *scan_program(int steps, bool bound_is_argument) {
  char *text = malloc(4096);
  if (!text) return NULL;
  snprintf(text, 4096,
           "func.func @main(%%xs: tensor<%dx256xf32>, %%h0: tensor<1x256xf32>, %%t: tensor<i32>) -> tensor<%dx256xf32> {\n"
           "  %%c0 = stablehlo.constant dense<0> : tensor<i32>\n"
           "  %%z = stablehlo.constant dense<0.0> : tensor<%dx256xf32>\n"
           "  %%r:3 = stablehlo.while(%%i = %%c0, %%h = %%h0, %%ys = %%z) : tensor<i32>, tensor<1x256xf32>, tensor<%dx256xf32>\n"
           "   cond {\n"
           "    %%n = stablehlo.constant dense<%d> : tensor<i32>\n"
           "    %%p = stablehlo.compare LT, %%i, %s, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           "    stablehlo.return %%p : tensor<i1>\n"
           "  } do {\n"
           "    %%c00 = stablehlo.constant dense<0> : tensor<i32>\n"
           "    %%row = stablehlo.dynamic_slice %%xs, %%i, %%c00, sizes = [1, 256] : (tensor<%dx256xf32>, tensor<i32>, tensor<i32>) -> tensor<1x256xf32>\n"
           "    %%k = stablehlo.constant dense<0.9> : tensor<1x256xf32>\n"
           "    %%hk = stablehlo.multiply %%h, %%k : tensor<1x256xf32>\n"
           "    %%s = stablehlo.add %%hk, %%row : tensor<1x256xf32>\n"
           "    %%hn = stablehlo.tanh %%s : tensor<1x256xf32>\n"
           "    %%ysn = stablehlo.dynamic_update_slice %%ys, %%hn, %%i, %%c00 : (tensor<%dx256xf32>, tensor<1x256xf32>, tensor<i32>, tensor<i32>) -> tensor<%dx256xf32>\n"
           "    %%c1 = stablehlo.constant dense<1> : tensor<i32>\n"
           "    %%j = stablehlo.add %%i, %%c1 : tensor<i32>\n"
           "    stablehlo.return %%j, %%hn, %%ysn : tensor<i32>, tensor<1x256xf32>, tensor<%dx256xf32>\n"
           "  }\n"
           "  return %%r#2 : tensor<%dx256xf32>\n"
           "}\n",
           steps, steps, steps, steps, bound_is_argument ? 0 : steps, bound_is_argument ? "%t" : "%n", steps, steps,
           steps, steps, steps);
  return text;
}

/* The scan's three forms, alternating, |runs| executions each: counted,
 * the bound an argument with a submission per iteration, and the same
 * batched (VKHLO_LOOP_BATCH=64: the device gating up to 64 iterations per
 * submission by conditional rendering, api/execute.c; the default on GPUs,
 * off on CPU devices). */
enum { FORMS = 3 };
static int bench_loops(vkhlo_context_t *ctx, int steps, int runs) {
  static const char *const names[FORMS] = {"counted", "argument", "batched"};
  vkhlo_executable_t *exe[FORMS] = {NULL, NULL, NULL};
  vkhlo_buffer_t *args[3] = {NULL, NULL, NULL};
  vkhlo_status_t st = NULL;
  for (int f = 0; f < FORMS && !st; f++) {
    char *text = scan_program(steps, f > 0);
    if (!text) return 2;
    setenv("VKHLO_LOOP_BATCH", f == 2 ? "64" : "0", 1);
    st = vkhlo_executable_compile(ctx, text, strlen(text), "scan.mlir", NULL, &exe[f]);
    unsetenv("VKHLO_LOOP_BATCH");
    free(text);
  }
  for (int i = 0; i < 3 && !st; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(exe[0], i, &t);
    int32_t n = steps;
    st = vkhlo_buffer_create(ctx, &t, i == 2 ? &n : NULL, &args[i]);
  }
  double *t[FORMS];
  for (int f = 0; f < FORMS; f++) t[f] = calloc((size_t)runs, sizeof(double));
  int64_t submissions[FORMS] = {0, 0, 0};
  vkhlo_buffer_t *res = NULL;
  for (int f = 0; f < FORMS && !st; f++) st = execute_once(exe[f], 3, args, 1, &res, false); /* warm-up */
  for (int r = 0; r < runs && !st; r++)
    for (int f = 0; f < FORMS && !st; f++) {
      double t0 = now_us();
      st = execute_once(exe[f], 3, args, 1, &res, false);
      t[f][r] = now_us() - t0;
      vkhlo_executable_stats_t s;
      vkhlo_executable_stats(exe[f], &s);
      submissions[f] = s.submissions;
    }
  vkhlo_buffer_destroy(res);
  if (!st) {
    double wall[FORMS];
    for (int f = 0; f < FORMS; f++) {
      wall[f] = median(t[f], runs);
      printf("scan %3d steps %-9s %12.1f %12.2f %12lld\n", steps, names[f], wall[f], wall[f] / steps,
             (long long)submissions[f]);
    }
    printf("scan %3d steps ratio     argument / counted wall = %.2f, batched / counted = %.2f\n", steps,
           wall[1] / wall[0], wall[2] / wall[0]);
  }
  for (int f = 0; f < FORMS; f++) free(t[f]);
  for (int i = 0; i < 3; i++) vkhlo_buffer_destroy(args[i]);
  for (int f = 0; f < FORMS; f++) vkhlo_executable_destroy(exe[f]);
  return st ? fail(st) : 0;
}

int main(int argc, char **argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  int runs = argc > 1 ? atoi(argv[1]) : 41;
  if (runs < 1) runs = 1;
  vkhlo_context_t *ctx = NULL;
  vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);
  if (st) return fail(st);
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  printf("device: %s (%s); median of %d executions (wall), device time from profiling\n", dev.name,
         dev.type, runs);
  printf("%-22s %-7s %12s %12s %12s %6s %10s %9s\n", "program", "mode", "wall_us", "device_us",
         "overhead_us", "disp", "us/disp", "recorded");
  static const char one_op[] =
      "func.func @main(%a: tensor<1024xf32>, %b: tensor<1024xf32>) -> tensor<1024xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<1024xf32>\n"
      "  return %0 : tensor<1024xf32>\n"
      "}\n";
  int rc = bench(ctx, "1-op add 1024", one_op, strlen(one_op), runs);
  const char *files[][2] = {{VKHLO_SOURCE_DIR "/examples/mlp.mlir", "examples/mlp.mlir"},
                            {VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir",
                             "chess_9m"}};
  for (int f = 0; f < 2 && !rc; f++) {
    size_t size;
    char *text = read_file(files[f][0], &size);
    if (!text) {
      printf("%-22s skipped (%s not found)\n", files[f][1], files[f][0]);
      continue;
    }
    rc = bench(ctx, files[f][1], text, size, f == 1 ? 3 : runs);
    free(text);
  }
  /* a counted loop is recorded unrolled: what that recording costs when
   * it cannot be replayed (record), against its replay */
  char *scan64 = scan_program(64, false);
  if (!rc && scan64) rc = bench(ctx, "scan 64 steps counted", scan64, strlen(scan64), runs);
  free(scan64);
  printf("\nloops: median of %d executions, the three forms alternating\n", runs);
  printf("%-24s %12s %12s %12s\n", "program", "wall_us", "us/step", "submissions");
  for (int steps = 16; steps <= 256 && !rc; steps *= 4) rc = bench_loops(ctx, steps, runs);
  vkhlo_context_destroy(ctx);
  return rc;
}
