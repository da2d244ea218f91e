/*
 * Tuning: per (device, kernel, shape) configuration choices, timed on the
 * device and kept in the cache directory (vkhlo_compile_options_t's tune,
 * `vkhlo tune FILE`).  Library vkhlo only (it compiles).
 *
 * Which kernels.  codegen names every kernel that has a choice of
 * configurations by a tune key (codegen_kernel_t: the library kernel, its
 * variant and the shape) and lists its candidates; codegen_target_t's
 * tune_candidate makes every such kernel take its k-th candidate, and
 * tuned_config hands it a recorded choice.  Nothing here knows what the
 * numbers mean.
 *
 * How they are timed.  The program is compiled once per candidate index
 * (every kernel takes its k-th candidate at once; k = 0 the defaults), so
 * a program with many tunable kernels costs as many compiles as the
 * largest candidate count, not one per kernel.  The executables then run
 * on zero-filled arguments, in rounds of one execution each (alternating;
 * 3 rounds, more up to 15 while they take less than 2 s), with
 * per-dispatch timestamps (vkhlo_executable_set_profiling);
 * a key's time for a candidate is the least, over rounds, of its kernels'
 * device time per dispatch (kernels sharing a key are summed).  Lavapipe
 * and shared machines are noisy: the alternation and the minimum are what
 * make one run's comparison fair; candidates that turn out to be the same
 * kernel share their best time, and the default stays unless another
 * configuration is 3% faster.  Tune on an otherwise idle machine: under
 * load the larger tiles win (BERT's q/k/v projections chose 32 rows at
 * 1.24x while a test suite ran, 16 rows, the default, when idle).
 *
 * The tuning file.  tuning-VENDOR-DEVICE-DRIVER.txt in the cache
 * directory (api/pipeline_cache_dir.c), a text file of lines "A B KEY"
 * (comments start with #), read on the context's first compile and
 * rewritten whole (through a temporary file and rename) after tuning.
 */
#define _POSIX_C_SOURCE 200809L
#include "api/internal.h"
#include "support/file.h"
#include "support/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* rounds of one execution per candidate: at least TUNE_ROUNDS_MIN, more
 * (up to TUNE_ROUNDS_MAX) while all of them took less than TUNE_SECONDS */
#define TUNE_ROUNDS_MIN 3
#define TUNE_ROUNDS_MAX 15
#define TUNE_SECONDS 2.0
/* how much faster than the default a configuration must be to be taken */
#define TUNE_MARGIN 0.03
#define TUNE_MAX_CANDIDATES 8

/* ------------------------------------------------------------ the table */

/* Index of |key| in the sorted table, or -(insertion point) - 1. */
static int find_choice(const vkhlo_context_t *ctx, const char *key) {
  int lo = 0, hi = ctx->tuning_count - 1;
  while (lo <= hi) {
    int mid = (lo + hi) / 2, c = strcmp(ctx->tuning[mid].key, key);
    if (c == 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -lo - 1;
}

static bool tuned_config(const void *user, const char *key, int *a, int *b) {
  const vkhlo_context_t *ctx = user;
  int i = find_choice(ctx, key);
  if (i < 0) return false;
  *a = ctx->tuning[i].a;
  *b = ctx->tuning[i].b;
  return true;
}

static vkhlo_status_t set_choice(vkhlo_context_t *ctx, const char *key, int a, int b) {
  int i = find_choice(ctx, key);
  if (i < 0) {
    i = -i - 1;
    tune_choice_t *p = vkhlo_realloc(ctx->allocator, ctx->tuning, sizeof *p * (size_t)(ctx->tuning_count + 1));
    if (!p) return VKHLO_NO_MEMORY();
    ctx->tuning = p;
    char *k = vkhlo_malloc(ctx->allocator, strlen(key) + 1);
    if (!k) return VKHLO_NO_MEMORY();
    strcpy(k, key);
    memmove(&p[i + 1], &p[i], sizeof *p * (size_t)(ctx->tuning_count - i));
    p[i].key = k;
    ctx->tuning_count++;
  }
  ctx->tuning[i].a = a;
  ctx->tuning[i].b = b;
  return NULL;
}

/* Adds the tuning file's lines to the table; |replace|: over the table's
 * own choices for the same keys (else those stay). */
static vkhlo_status_t read_tuning_file(vkhlo_context_t *ctx, bool replace) {
  FILE *f = ctx->tuning_path ? fopen(ctx->tuning_path, "r") : NULL;
  if (!f) return NULL;
  char line[512];
  vkhlo_status_t st = NULL;
  while (!st && fgets(line, sizeof line, f)) {
    size_t n = strlen(line);
    if (n && line[n - 1] == '\n') line[--n] = 0;
    int a, b, off = 0;
    if (line[0] == '#' || sscanf(line, "%d %d %n", &a, &b, &off) != 2 || !line[off] || a < 0 || b < 0) continue;
    if (replace || find_choice(ctx, line + off) < 0) st = set_choice(ctx, line + off, a, b);
  }
  fclose(f);
  return st;
}

vkhlo_status_t context_tuning_load(vkhlo_context_t *ctx) {
  if (ctx->tuning_loaded) return NULL;
  ctx->tuning_loaded = true;
  return read_tuning_file(ctx, true);
}

/* Writes the table to the tuning file, keeping the lines another process
 * added since this context read it. */
static vkhlo_status_t save_tuning(vkhlo_context_t *ctx) {
  if (!ctx->tuning_path) return NULL;
  VKHLO_RETURN_IF_ERROR(read_tuning_file(ctx, false));
  strbuf_t text;
  strbuf_init(&text, ctx->allocator);
  strbuf_append(&text, "# vkhlo tuning choices for one device and driver (vkhlo tune): A B KEY\n");
  for (int i = 0; i < ctx->tuning_count; i++)
    strbuf_printf(&text, "%d %d %s\n", ctx->tuning[i].a, ctx->tuning[i].b, ctx->tuning[i].key);
  vkhlo_status_t st = text.failed ? VKHLO_NO_MEMORY()
                                  : support_write_file(ctx->allocator, ctx->tuning_path, text.data, text.length);
  strbuf_free(&text);
  return st;
}

void context_tuned_target(const vkhlo_context_t *ctx, codegen_target_t *out) {
  *out = ctx->target;
  out->tune_candidate = 0;
  out->tuned_config = tuned_config;
  out->tuning_user = ctx;
}

/* ------------------------------------------------------------ the report */

/* What tuning measured, per key (the keys point into the candidate
 * executables' kernels while those live, into the table after). */
typedef struct tune_timing {
  int count;
  const char **keys;
  int *candidates; /* candidates of the key, the default included */
  int *chosen;     /* index of the candidate taken */
  double *us;      /* [key * (TUNE_MAX_CANDIDATES + 1) + candidate], INFINITY: not timed */
} tune_timing_t;

static int timing_index(const tune_timing_t *t, const char *key) {
  for (int i = 0; t && i < t->count; i++)
    if (t->keys[i] && strcmp(t->keys[i], key) == 0) return i;
  return -1;
}

vkhlo_status_t exe_tuning_report(vkhlo_executable_t *exe, const tune_timing_t *timing) {
  const vkhlo_context_t *ctx = exe->context;
  vkhlo_free(exe->allocator, exe->tuning);
  exe->tuning = NULL;
  exe->tuning_count = 0;
  int n = 0;
  for (int i = 0; i < exe->kernel_count; i++) n += exe->kernels[i].tune_key != NULL;
  if (!n) return NULL;
  exe->tuning = vkhlo_calloc(exe->allocator, (size_t)n, sizeof *exe->tuning);
  if (!exe->tuning) return VKHLO_NO_MEMORY();
  for (int i = 0; i < exe->kernel_count; i++) {
    const exe_kernel_t *k = &exe->kernels[i];
    if (!k->tune_key) continue;
    vkhlo_kernel_tuning_t *e = NULL;
    for (int j = 0; j < exe->tuning_count && !e; j++)
      if (strcmp(exe->tuning[j].key, k->tune_key) == 0) e = &exe->tuning[j];
    if (e) {
      e->kernels++;
      continue;
    }
    e = &exe->tuning[exe->tuning_count++];
    e->key = k->tune_key;
    e->kernels = 1;
    e->a = k->tune_a;
    e->b = k->tune_b;
    e->tuned = find_choice(ctx, k->tune_key) >= 0;
    int t = timing_index(timing, k->tune_key);
    if (t >= 0) {
      const double *us = &timing->us[t * (TUNE_MAX_CANDIDATES + 1)];
      for (int c = 0; c < timing->candidates[t]; c++) e->candidates_timed += isfinite(us[c]);
      e->default_us = isfinite(us[0]) ? us[0] : 0;
      e->chosen_us = isfinite(us[timing->chosen[t]]) ? us[timing->chosen[t]] : 0;
    }
  }
  return NULL;
}

/* ------------------------------------------------------------ tuning */

/* Runs |exe| once on |args| with profiling and lowers each timed key's
 * time for candidate |c| in |t|. */
static vkhlo_status_t time_candidate(vkhlo_executable_t *exe, vkhlo_buffer_t **args, tune_timing_t *t, int c) {
  int nres = exe->result_count;
  vkhlo_buffer_t **results = vkhlo_calloc(exe->allocator, (size_t)nres + 1, sizeof *results);
  if (!results) return VKHLO_NO_MEMORY();
  vkhlo_executable_set_profiling(exe, true);
  vkhlo_status_t st = vkhlo_executable_execute(exe, exe->parameter_count, args, nres, results);
  for (int i = 0; i < nres; i++) vkhlo_buffer_destroy(results[i]);
  vkhlo_free(exe->allocator, results);
  for (int k = 0; k < t->count && !st; k++) {
    double ms = 0;
    int64_t dispatches = 0;
    for (int i = 0; i < exe->kernel_count; i++)
      if (exe->kernels[i].tune_key && strcmp(exe->kernels[i].tune_key, t->keys[k]) == 0) {
        ms += exe->profile_ms[i];
        dispatches += exe->profile_dispatches[i];
      }
    double *us = &t->us[k * (TUNE_MAX_CANDIDATES + 1) + c];
    if (dispatches > 0 && ms * 1000.0 / (double)dispatches < *us) *us = ms * 1000.0 / (double)dispatches;
  }
  vkhlo_executable_set_profiling(exe, false);
  return st;
}

static void timing_free(const vkhlo_allocator_t *a, tune_timing_t *t) {
  vkhlo_free(a, t->keys);
  vkhlo_free(a, t->candidates);
  vkhlo_free(a, t->chosen);
  vkhlo_free(a, t->us);
}

/* The keys of |exe0|'s kernels to time (all with |retune|, else those the
 * table lacks), into |t|; *max_candidates gets their largest count. */
static vkhlo_status_t keys_to_time(const vkhlo_context_t *ctx, const vkhlo_executable_t *exe0, bool retune,
                                   tune_timing_t *t, int *max_candidates) {
  const vkhlo_allocator_t *a = ctx->allocator;
  int n = exe0->kernel_count + 1;
  t->keys = vkhlo_calloc(a, (size_t)n, sizeof *t->keys);
  t->candidates = vkhlo_calloc(a, (size_t)n, sizeof *t->candidates);
  t->chosen = vkhlo_calloc(a, (size_t)n, sizeof *t->chosen);
  t->us = vkhlo_calloc(a, (size_t)n * (TUNE_MAX_CANDIDATES + 1), sizeof *t->us);
  if (!t->keys || !t->candidates || !t->chosen || !t->us) return VKHLO_NO_MEMORY();
  for (int i = 0; i < n * (TUNE_MAX_CANDIDATES + 1); i++) t->us[i] = INFINITY;
  *max_candidates = 0;
  for (int i = 0; i < exe0->kernel_count; i++) {
    const exe_kernel_t *k = &exe0->kernels[i];
    if (!k->tune_key || k->tune_candidates < 1 || timing_index(t, k->tune_key) >= 0) continue;
    if (!retune && find_choice(ctx, k->tune_key) >= 0) continue;
    int c = k->tune_candidates < TUNE_MAX_CANDIDATES ? k->tune_candidates : TUNE_MAX_CANDIDATES;
    t->keys[t->count] = k->tune_key;
    t->candidates[t->count++] = c + 1;
    if (c > *max_candidates) *max_candidates = c;
  }
  return NULL;
}

/* Records the fastest candidate of every timed key in the table;
 * |exes[c]| is the program compiled with candidate c. */
static const exe_kernel_t *kernel_with_key(const vkhlo_executable_t *exe, const char *key) {
  for (int i = 0; i < exe->kernel_count; i++)
    if (exe->kernels[i].tune_key && strcmp(exe->kernels[i].tune_key, key) == 0) return &exe->kernels[i];
  return NULL;
}

static vkhlo_status_t record_choices(vkhlo_context_t *ctx, vkhlo_executable_t *const *exes, tune_timing_t *t) {
  for (int k = 0; k < t->count; k++) {
    double *us = &t->us[k * (TUNE_MAX_CANDIDATES + 1)];
    int n = t->candidates[k];
    const exe_kernel_t *kernel[TUNE_MAX_CANDIDATES + 1];
    for (int c = 0; c < n; c++) kernel[c] = kernel_with_key(exes[c], t->keys[k]);
    /* candidates that are the same configuration (a candidate equal to
     * the default, or clamped to the same tile) are one kernel: each gets
     * the least time of them all */
    double merged[TUNE_MAX_CANDIDATES + 1];
    for (int c = 0; c < n; c++) {
      merged[c] = us[c];
      for (int e = 0; e < n; e++)
        if (kernel[c] && kernel[e] && kernel[c]->tune_a == kernel[e]->tune_a &&
            kernel[c]->tune_b == kernel[e]->tune_b && us[e] < merged[c])
          merged[c] = us[e];
    }
    memcpy(us, merged, sizeof(double) * (size_t)n);
    /* the default stays unless another configuration is TUNE_MARGIN faster
     * (identical kernels measure up to ~9% apart on a shared lavapipe) */
    int best = 0;
    for (int c = 1; c < n; c++)
      if (us[c] < us[best]) best = c;
    if (!(us[best] < us[0] * (1.0 - TUNE_MARGIN))) best = 0;
    t->chosen[k] = best;
    if (!kernel[best] || !isfinite(us[best])) continue; /* never dispatched (a branch not taken): nothing known */
    VKHLO_RETURN_IF_ERROR(set_choice(ctx, t->keys[k], kernel[best]->tune_a, kernel[best]->tune_b));
  }
  /* the keys now point into the table, which outlives the executables
   * (NULL where nothing was recorded) */
  for (int k = 0; k < t->count; k++) {
    int i = find_choice(ctx, t->keys[k]);
    t->keys[k] = i >= 0 ? ctx->tuning[i].key : NULL;
  }
  return NULL;
}

vkhlo_status_t exe_tune_compile(vkhlo_context_t *ctx, const char *text, size_t length, const char *file_name,
                                const vkhlo_compile_options_t *options, vkhlo_executable_t **out_executable) {
  *out_executable = NULL;
  const vkhlo_allocator_t *a = ctx->allocator;
  vkhlo_compile_options_t o = *options;
  o.tune = o.retune = false;
  o.dump_dir = NULL; /* the candidates are not the program the caller asked to see */
  codegen_target_t target = ctx->target;
  target.tuned_config = NULL;
  target.tune_candidate = 0;
  vkhlo_executable_t *exes[TUNE_MAX_CANDIDATES + 1] = {NULL};
  vkhlo_buffer_t **args = NULL;
  tune_timing_t timing;
  memset(&timing, 0, sizeof timing);
  int max_candidates = 0;
  vkhlo_status_t st = exe_compile(ctx, text, length, file_name, &o, &target, &exes[0]);
  if (!st) st = keys_to_time(ctx, exes[0], options->retune, &timing, &max_candidates);
  for (int c = 1; c <= max_candidates && !st; c++) {
    target.tune_candidate = c;
    st = exe_compile(ctx, text, length, file_name, &o, &target, &exes[c]);
  }
  if (!st && timing.count) {
    int np = exes[0]->parameter_count;
    args = vkhlo_calloc(a, (size_t)np + 1, sizeof *args);
    if (!args) st = VKHLO_NO_MEMORY();
    for (int i = 0; i < np && !st; i++) st = vkhlo_buffer_create(ctx, &exes[0]->parameter_types[i], NULL, &args[i]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int r = 0; r < TUNE_ROUNDS_MAX && !st; r++) {
      for (int c = 0; c <= max_candidates && !st; c++) st = time_candidate(exes[c], args, &timing, c);
      clock_gettime(CLOCK_MONOTONIC, &t1);
      double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
      if (r + 1 >= TUNE_ROUNDS_MIN && seconds > TUNE_SECONDS) break;
    }
    if (st) {
      vkhlo_status_t wrapped = vkhlo_status_make(vkhlo_status_code(st),
                                                 "tuning %s: running the program on zero-filled arguments: %s",
                                                 file_name ? file_name : "<input>", vkhlo_status_message(st));
      vkhlo_status_free(st);
      st = wrapped;
    }
    if (!st) st = record_choices(ctx, exes, &timing);
    if (!st) st = save_tuning(ctx);
    for (int i = 0; i < np; i++) vkhlo_buffer_destroy(args ? args[i] : NULL);
  }
  vkhlo_free(a, args);
  /* nothing timed and no kernel with a recorded choice: the defaults'
   * executable is the program (unless the caller wants the dumps) */
  bool recorded = false;
  for (int i = 0; !st && exes[0] && i < exes[0]->kernel_count; i++)
    recorded |= exes[0]->kernels[i].tune_key && find_choice(ctx, exes[0]->kernels[i].tune_key) >= 0;
  if (!st && !timing.count && !recorded && !options->dump_dir) {
    *out_executable = exes[0];
    exes[0] = NULL;
  }
  for (int c = 0; c <= TUNE_MAX_CANDIDATES; c++) vkhlo_executable_destroy(exes[c]);
  if (!st && !*out_executable) {
    context_tuned_target(ctx, &target);
    o.dump_dir = options->dump_dir;
    st = exe_compile(ctx, text, length, file_name, &o, &target, out_executable);
  }
  if (!st) st = exe_tuning_report(*out_executable, &timing);
  if (st && *out_executable) {
    vkhlo_executable_destroy(*out_executable);
    *out_executable = NULL;
  }
  timing_free(a, &timing);
  return st;
}
