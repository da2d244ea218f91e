/*
 * bench_load: how long until a saved executable (.vkx) is ready to run,
 * against compiling the StableHLO text.
 *
 *   bench_load [MODEL.mlir] [ROUNDS]   (default ../shared/models/
 *                                       searchless_chess_9m.mlir, 1 round)
 *
 * Per round, back to back on the default device (each on a fresh context,
 * the context's creation not timed):
 *   compile (baseline)  vkhlo_executable_compile with a warm SPIR-V cache
 *                       (so no glslang: parse, passes, lowering, pipelines);
 *   vkx parse           vkx_parse alone (checksum, parsing, validation);
 *   vkx load, cold      vkhlo_executable_load_file with an empty pipeline
 *                       cache directory;
 *   vkx load, warm      the same, with the pipeline cache the cold load's
 *                       context saved.
 * Prints the medians over the rounds, the ratio to the baseline, the file
 * sizes and the pipeline cache file's size.  Not a test.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "api/vkx.h"
#include "vkhlo/vkhlo.h"

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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
  fprintf(stderr, "bench_load: %s\n", vkhlo_status_message(st));
  vkhlo_status_free(st);
  return 1;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char path[4200];
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(path, sizeof path, "%.3000s/%.255s", dir, e->d_name);
      remove(path);
    }
  closedir(d);
  rmdir(dir);
}

static long dir_bytes(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  long n = 0;
  struct dirent *e;
  char path[4200];
  struct stat sb;
  while ((e = readdir(d))) {
    snprintf(path, sizeof path, "%.3000s/%.255s", dir, e->d_name);
    if (e->d_name[0] != '.' && stat(path, &sb) == 0) n += (long)sb.st_size;
  }
  closedir(d);
  return n;
}

/* Loads |vkx| on a fresh context whose cache lives in |cache_dir|. */
static vkhlo_status_t timed_load(const char *vkx, const char *cache_dir, double *ms) {
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.cache_dir = cache_dir;
  vkhlo_context_t *ctx;
  VKHLO_RETURN_IF_ERROR(vkhlo_context_create(&o, &ctx));
  vkhlo_executable_t *exe;
  double t0 = now_ms();
  vkhlo_status_t st = vkhlo_executable_load_file(ctx, vkx, NULL, &exe);
  *ms = now_ms() - t0;
  if (!st) vkhlo_executable_destroy(exe);
  vkhlo_context_destroy(ctx); /* saves the pipeline cache */
  return st;
}

int main(int argc, char **argv) {
  const char *model = argc > 1 ? argv[1] : VKHLO_SOURCE_DIR "/../shared/models/searchless_chess_9m.mlir";
  int rounds = argc > 2 ? atoi(argv[2]) : 1;
  if (rounds < 1) rounds = 1;
  size_t len;
  char *text = read_file(model, &len);
  if (!text) {
    printf("bench_load: %s not found (../shared absent?)\n", model);
    return 0;
  }
  char base[] = "/tmp/bench_load.XXXXXX";
  if (!mkdtemp(base)) return perror("mkdtemp"), 1;
  char spirv_cache[4200], cold_cache[4200], vkx[4200];
  snprintf(spirv_cache, sizeof spirv_cache, "%s/spirv", base);
  snprintf(cold_cache, sizeof cold_cache, "%s/pipelines", base);
  snprintf(vkx, sizeof vkx, "%s/model.vkx", base);

  /* one compile to fill the SPIR-V cache and write the .vkx */
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.cache_dir = spirv_cache;
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(&o, &ctx);
  if (st) return fail(st);
  vkhlo_device_description_t dev;
  vkhlo_context_device(ctx, &dev);
  vkhlo_executable_t *exe;
  st = vkhlo_executable_compile(ctx, text, len, model, NULL, &exe);
  if (!st) st = vkhlo_executable_save(exe, vkx, NULL);
  vkhlo_executable_stats_t stats;
  if (!st) vkhlo_executable_stats(exe, &stats);
  vkhlo_executable_destroy(exe);
  vkhlo_context_destroy(ctx);
  if (st) return fail(st);

  double *compile_ms = calloc((size_t)rounds, sizeof(double)), *parse_ms = calloc((size_t)rounds, sizeof(double));
  double *cold_ms = calloc((size_t)rounds, sizeof(double)), *warm_ms = calloc((size_t)rounds, sizeof(double));
  long cache_bytes = 0;
  size_t vkx_size = 0;
  for (int r = 0; r < rounds && !st; r++) {
    st = vkhlo_context_create(&o, &ctx);
    if (st) break;
    double t0 = now_ms();
    st = vkhlo_executable_compile(ctx, text, len, model, NULL, &exe);
    compile_ms[r] = now_ms() - t0;
    if (!st) vkhlo_executable_destroy(exe);
    vkhlo_context_destroy(ctx);
    if (st) break;

    char *bytes = read_file(vkx, &vkx_size);
    vkx_parsed_t parsed;
    t0 = now_ms();
    st = vkx_parse(NULL, (const uint8_t *)bytes, vkx_size, &parsed);
    parse_ms[r] = now_ms() - t0;
    if (!st) vkx_parsed_free(&parsed);
    free(bytes);
    if (st) break;

    remove_dir(cold_cache);
    st = timed_load(vkx, cold_cache, &cold_ms[r]);
    cache_bytes = dir_bytes(cold_cache);
    if (!st) st = timed_load(vkx, cold_cache, &warm_ms[r]);
  }
  free(text);
  remove_dir(cold_cache);
  remove_dir(spirv_cache);
  remove(vkx);
  rmdir(base);
  if (st) return fail(st);
  double c = median(compile_ms, rounds), p = median(parse_ms, rounds), lc = median(cold_ms, rounds),
         lw = median(warm_ms, rounds);
  printf("bench_load: %s\ndevice: %s (%s); %d round(s), medians; %lld kernels; .vkx %zu bytes; pipeline cache %ld bytes\n",
         model, dev.name, dev.type, rounds, (long long)stats.kernels, vkx_size, cache_bytes);
  printf("%-40s %12s %10s\n", "step", "ms", "vs compile");
  printf("%-40s %12.1f %10.2f\n", "compile, warm SPIR-V cache (baseline)", c, 1.0);
  printf("%-40s %12.1f %10.4f\n", "vkx parse + validate only", p, p / c);
  printf("%-40s %12.1f %10.2f\n", "vkx load, cold pipeline cache", lc, lc / c);
  printf("%-40s %12.1f %10.2f\n", "vkx load, warm pipeline cache", lw, lw / c);
  free(compile_ms);
  free(parse_ms);
  free(cold_ms);
  free(warm_ms);
  return 0;
}
