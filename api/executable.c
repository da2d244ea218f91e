/*
 * vkhlo_executable_compile: the pipeline, one step per line —
 *   parse (hlo/parser.c) -> verify (hlo/verifier.c) -> lower to thunks and
 *   per-instruction kernels (api/lower.c, codegen/) -> buffer assignment ->
 *   GLSL -> SPIR-V (codegen/spirv.c) -> pipelines, pools, constants
 *   (vk_runtime/).
 */
#define _POSIX_C_SOURCE 200809L
#include "api/internal.h"
#include "codegen/passes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void exe_free_sequence(exe_sequence_t *seq) {
  if (!seq) return;
  for (int i = 0; i < seq->count; i++) {
    exe_thunk_t *t = &seq->thunks[i];
    free(t->bindings);
    if (t->cond) { exe_free_sequence(t->cond); free(t->cond); }
    if (t->body) { exe_free_sequence(t->body); free(t->body); }
    for (int b = 0; b < t->branch_count; b++) {
      exe_free_sequence(t->branches[b]);
      free(t->branches[b]);
    }
    free(t->branches);
  }
  free(seq->thunks);
  memset(seq, 0, sizeof *seq);
}

void vkhlo_executable_destroy(vkhlo_executable_t *exe) {
  if (!exe) return;
  vkrt_cmd_destroy(exe->cmd);
  for (int i = 0; i < exe->kernel_count; i++) {
    vkrt_pipeline_destroy(exe->kernels[i].pipeline);
    free(exe->kernels[i].name);
    free(exe->kernels[i].glsl);
  }
  free(exe->kernels);
  exe_free_sequence(&exe->main);
  vkrt_buffer_destroy(exe->temp_pool);
  vkrt_buffer_destroy(exe->constant_pool);
  free(exe->buffers);
  free(exe->parameter_types);
  free(exe->result_types);
  free(exe->result_buffers);
  free(exe->checks);
  free(exe);
}

static int count_dispatches(const exe_sequence_t *seq) {
  int n = 0;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind == EXE_THUNK_DISPATCH) n++;
    if (t->cond) n += count_dispatches(t->cond);
    if (t->body) n += count_dispatches(t->body);
    for (int b = 0; b < t->branch_count; b++) n += count_dispatches(t->branches[b]);
  }
  return n;
}

static vkhlo_status_t write_file(const char *dir, const char *name, const char *ext, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "w");
  if (!f) return vkhlo_make_status(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
  return NULL;
}

static vkhlo_status_t dump_module(const char *dir, const hlo_module_t *m) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return vkhlo_make_status(VKHLO_STATUS_NOT_FOUND, "cannot create %s: %s", dir, strerror(errno));
  char *text = hlo_module_to_string(m);
  if (!text) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = write_file(dir, "module", ".after_parse.mlir", text);
  free(text);
  return st;
}

static vkhlo_status_t build_device_objects(vkhlo_executable_t *exe, const void *constant_data,
                                           const char *dump_dir) {
  vkhlo_context_t *ctx = exe->context;
  const spirv_compiler_stats_t *before = spirv_compiler_stats(ctx->compiler);
  int compiled0 = before->compiled, hits0 = before->cache_hits;
  for (int i = 0; i < exe->kernel_count; i++) {
    exe_kernel_t *k = &exe->kernels[i];
    uint32_t *words = NULL;
    size_t size = 0;
    VKHLO_RETURN_IF_ERROR(spirv_compile_glsl(ctx->compiler, k->name, k->glsl, &words, &size));
    if (dump_dir) {
      char name[300];
      snprintf(name, sizeof name, "kernel_%03d_%s", i, k->name);
      vkhlo_status_t st = write_file(dump_dir, name, ".comp", k->glsl);
      char *dis = st ? NULL : spirv_disassemble(words, size);
      if (dis) {
        st = write_file(dump_dir, name, ".spvasm", dis);
        free(dis);
      }
      if (st) {
        free(words);
        return st;
      }
    }
    vkhlo_status_t st = vkrt_pipeline_create(ctx->device, words, size, k->binding_count, 0, &k->pipeline);
    free(words);
    if (st) return vkhlo_status_annotate(st, "kernel %s", k->name);
  }
  const spirv_compiler_stats_t *after = spirv_compiler_stats(ctx->compiler);
  exe->stats.spirv_compiled = after->compiled - compiled0;
  exe->stats.spirv_cache_hits = after->cache_hits - hits0;
  if (exe->temp_pool_size_bytes)
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(ctx->device, exe->temp_pool_size_bytes, &exe->temp_pool));
  if (exe->constant_pool_size_bytes) {
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(ctx->device, exe->constant_pool_size_bytes, &exe->constant_pool));
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_upload(exe->constant_pool, 0, constant_data, exe->constant_pool_size_bytes));
  }
  return vkrt_cmd_create(ctx->device, &exe->cmd);
}

static vkhlo_status_t dump_buffers(const char *dir, const vkhlo_executable_t *exe) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  if (!f) return VKHLO_NO_MEMORY();
  fprintf(f, "# buffer assignment: temp pool %llu bytes, constant pool %llu bytes\n",
          (unsigned long long)exe->temp_pool_size_bytes, (unsigned long long)exe->constant_pool_size_bytes);
  fprintf(f, "%-6s %-10s %-12s %-12s %-16s %s\n", "buffer", "kind", "size", "offset", "live_range", "defined_by");
  static const char *const kinds[] = {"parameter", "constant", "temp"};
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    char range[64];
    snprintf(range, sizeof range, "[%d,%d]", b->def_position, b->last_use_position);
    fprintf(f, "%-6d %-10s %-12llu %-12llu %-16s %s\n", i, kinds[b->kind],
            (unsigned long long)b->size_bytes, (unsigned long long)b->offset_bytes, range,
            b->name ? b->name : "");
  }
  fclose(f);
  vkhlo_status_t st = write_file(dir, "buffer_assignment", ".txt", text);
  free(text);
  return st;
}

vkhlo_status_t vkhlo_executable_compile(vkhlo_context_t *context, const char *text, size_t length,
                                        const char *file_name,
                                        const vkhlo_compile_options_t *options,
                                        vkhlo_executable_t **out_executable) {
  *out_executable = NULL;
  double t0 = now_ms();
  vkhlo_compile_options_t defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!options) options = &defaults;

  hlo_parse_options_t popts = {options->function, options->fill_elided, options->seed};
  hlo_module_t *module = NULL;
  VKHLO_RETURN_IF_ERROR(hlo_parse(text, length, file_name ? file_name : "<input>", &popts, &module));
  vkhlo_status_t st = hlo_verify(module);
  if (!st && options->dump_dir) st = dump_module(options->dump_dir, module);
  codegen_pass_stats_t pass_stats;
  memset(&pass_stats, 0, sizeof pass_stats);
  if (!st) {
    codegen_pass_options_t popts;
    memset(&popts, 0, sizeof popts);
    popts.target = &context->target;
    popts.no_fusion = options->no_fusion;
    popts.dump_dir = options->dump_dir;
    st = codegen_run_passes(module, &popts, &pass_stats);
  }
  vkhlo_executable_t *exe = NULL;
  void *constant_data = NULL;
  if (!st) {
    exe = calloc(1, sizeof *exe);
    if (!exe) st = VKHLO_NO_MEMORY();
  }
  if (!st) {
    exe->context = context;
    exe->stats.instructions = pass_stats.instructions_before;
    exe->stats.fused_clusters = pass_stats.fused_clusters;
    const char *max_iter = getenv("VKHLO_MAX_LOOP_ITERATIONS");
    exe->max_loop_iterations = max_iter ? strtoull(max_iter, NULL, 10) : 10000000ull;
    st = exe_lower_module(exe, module, &context->target, &constant_data);
  }
  hlo_module_destroy(module);
  if (!st) {
    exe_assign_buffers(exe);
    if (options->dump_dir) st = dump_buffers(options->dump_dir, exe);
  }
  if (!st) st = build_device_objects(exe, constant_data, options->dump_dir);
  free(constant_data);
  if (st) {
    vkhlo_executable_destroy(exe);
    return st;
  }
  exe->stats.kernels = exe->kernel_count;
  exe->stats.dispatches = count_dispatches(&exe->main);
  exe->stats.compile_ms = now_ms() - t0;
  *out_executable = exe;
  return NULL;
}

int vkhlo_executable_parameter_count(const vkhlo_executable_t *exe) { return exe->parameter_count; }
int vkhlo_executable_result_count(const vkhlo_executable_t *exe) { return exe->result_count; }

vkhlo_status_t vkhlo_executable_parameter_type(const vkhlo_executable_t *exe, int index,
                                               vkhlo_tensor_type_t *out_type) {
  if (index < 0 || index >= exe->parameter_count)
    return VKHLO_INVALID("parameter index %d out of range [0, %d)", index, exe->parameter_count);
  *out_type = exe->parameter_types[index];
  return NULL;
}

vkhlo_status_t vkhlo_executable_result_type(const vkhlo_executable_t *exe, int index,
                                            vkhlo_tensor_type_t *out_type) {
  if (index < 0 || index >= exe->result_count)
    return VKHLO_INVALID("result index %d out of range [0, %d)", index, exe->result_count);
  *out_type = exe->result_types[index];
  return NULL;
}

void vkhlo_executable_stats(const vkhlo_executable_t *exe, vkhlo_executable_stats_t *out) {
  *out = exe->stats;
}

int vkhlo_executable_check_count(const vkhlo_executable_t *exe) { return exe->check_count; }

vkhlo_status_t vkhlo_executable_check_result(const vkhlo_executable_t *exe, int index,
                                             vkhlo_check_result_t *out) {
  if (index < 0 || index >= exe->check_count)
    return VKHLO_INVALID("check index %d out of range [0, %d)", index, exe->check_count);
  *out = exe->checks[index].result;
  return NULL;
}
