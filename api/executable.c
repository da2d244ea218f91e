/*
 * vkhlo_executable_compile: the pipeline as a table of stages (|stages|
 * below), each a function of one compile_job_t —
 *   parse (hlo/parser.c) -> verify (hlo/verifier.c) -> passes: expand,
 *   simplify, cse, dce, fusion (codegen/passes.c) -> schedule
 *   (api/schedule.c) -> lower to thunks and GLSL kernels (api/lower.c,
 *   codegen/) -> in-place decisions (api/inplace.c) -> buffer assignment
 *   and its checker (api/buffer_assignment.c) -> SPIR-V (codegen/spirv.c)
 *   -> pipelines, allocations, constants (vk_runtime/).
 * The driver runs them in order, writes each stage's dump, and fills the
 * statistics at the end; a failed stage stops the pipeline and the job is
 * released.
 *
 * The buffer-assignment checker runs in debug builds and whenever
 * $VKHLO_CHECK_BUFFERS is set (=1 on, =0 off); a violation fails the
 * compile with INTERNAL.
 *
 * Dumps (options->dump_dir): module.after_parse.mlir, the module after
 * each pass (codegen/passes.c), fusion.dot (the fusion plan), every
 * kernel's GLSL (.comp) and SPIR-V disassembly (.spvasm),
 * buffer_assignment.txt (allocations, then every logical buffer's slice,
 * live range and defining instruction) and thunks.txt (the program).
 */
#define _POSIX_C_SOURCE 200809L
#include "api/internal.h"
#include "codegen/passes.h"
#include "hlo/bytecode.h"

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

/* Bytes read and written by the dispatches and copies of one execution
 * (loops and every branch counted once): each binding's size, twice a
 * copy's size; plus the copies of the results not written in place. */
static int64_t count_bytes_moved(const vkhlo_executable_t *exe, const exe_sequence_t *seq) {
  int64_t n = 0;
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (t->kind == EXE_THUNK_DISPATCH)
      for (int b = 0; b < t->binding_count; b++) n += (int64_t)exe->buffers[t->bindings[b]].size_bytes;
    if (t->kind == EXE_THUNK_COPY) n += 2 * (int64_t)t->size_bytes;
    if (t->cond) n += count_bytes_moved(exe, t->cond);
    if (t->body) n += count_bytes_moved(exe, t->body);
    for (int b = 0; b < t->branch_count; b++) n += count_bytes_moved(exe, t->branches[b]);
  }
  return n;
}

static vkhlo_status_t write_file(const char *dir, const char *name, const char *ext, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%s", dir, name, ext);
  FILE *f = fopen(path, "w");
  if (!f) return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
  fputs(text, f);
  fclose(f);
  return NULL;
}

/* ------------------------------------------------------------ the job */

/* One compilation, handed from stage to stage. */
typedef struct compile_job {
  vkhlo_context_t *context;
  const char *text;
  size_t length;
  const char *file_name;
  const vkhlo_compile_options_t *options;
  const codegen_target_t *target; /* the context's, with tuning choices (api/tune.c) */
  hlo_module_t *module;          /* parse .. lower (lower releases it) */
  codegen_pass_stats_t pass_stats;
  exe_schedule_t schedule;       /* schedule .. lower */
  vkhlo_executable_t *exe;       /* lower .. the end (then the caller's) */
  void *constant_data;           /* lower .. device_objects */
  exe_buffer_limits_t limits;
  uint32_t **spirv;              /* spirv .. device_objects: per kernel */
  size_t *spirv_size_bytes;
  int spirv_compiled, spirv_cache_hits;
} compile_job_t;

static void compile_job_free(compile_job_t *job) {
  exe_schedule_free(&job->schedule);
  hlo_module_destroy(job->module);
  vkhlo_free(job->context->allocator, job->constant_data);
  for (int i = 0; job->spirv && job->exe && i < job->exe->kernel_count; i++) vkhlo_free(job->context->allocator, job->spirv[i]);
  vkhlo_free(job->context->allocator, job->spirv);
  vkhlo_free(job->context->allocator, job->spirv_size_bytes);
  vkhlo_executable_destroy(job->exe); /* NULL once handed to the caller */
  memset(job, 0, sizeof *job);
}

/* ---------------------------------------------------------- the stages */

static vkhlo_status_t stage_parse(compile_job_t *job) {
  const vkhlo_compile_options_t *o = job->options;
  hlo_parse_options_t popts = {o->function, o->fill_elided, o->seed, job->context->allocator, NULL, 0};
  int n = o->parameter_types ? o->parameter_type_count : 0;
  if (n < 0) return VKHLO_INVALID("parameter_type_count %d is negative", n);
  hlo_shape_t *shapes = n ? vkhlo_calloc(job->context->allocator, (size_t)n, sizeof *shapes) : NULL;
  if (n && !shapes) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = NULL;
  for (int i = 0; i < n && !st; i++) {
    const vkhlo_tensor_type_t *t = &o->parameter_types[i];
    if ((int)t->element_type < 0 || (int)t->element_type >= (int)HLO_TUPLE || t->rank < 0 || t->rank > VKHLO_MAX_RANK)
      st = VKHLO_INVALID("parameter_types[%d] is not a tensor type", i);
    for (int d = 0; !st && d < t->rank; d++)
      if (t->dimensions[d] < 0) st = VKHLO_INVALID("parameter_types[%d] has a negative dimension", i);
    if (!st) hlo_shape_init(&shapes[i], (hlo_element_type_t)t->element_type, t->rank, t->dimensions);
  }
  popts.parameter_shapes = shapes;
  popts.parameter_shape_count = n;
  if (!st) st = hlo_parse(job->text, job->length, job->file_name ? job->file_name : "<input>", &popts, &job->module);
  vkhlo_free(job->context->allocator, shapes);
  return st;
}

static vkhlo_status_t stage_verify(compile_job_t *job) { return hlo_verify(job->module); }

static vkhlo_status_t stage_passes(compile_job_t *job) {
  codegen_pass_options_t popts;
  memset(&popts, 0, sizeof popts);
  popts.target = job->target;
  popts.no_fusion = job->options->no_fusion;
  popts.dump_dir = job->options->dump_dir;
  popts.dump_after = job->options->dump_after;
  return codegen_run_passes(job->module, &popts, &job->pass_stats);
}

static vkhlo_status_t stage_schedule(compile_job_t *job) {
  return exe_schedule_module(job->module, &job->schedule);
}

/* Lowers the module into a new executable; the IR is released after. */
static vkhlo_status_t stage_lower(compile_job_t *job) {
  vkhlo_context_t *context = job->context;
  job->exe = vkhlo_calloc(context->allocator, 1, sizeof *job->exe);
  if (!job->exe) return VKHLO_NO_MEMORY();
  job->exe->context = context;
  job->exe->allocator = context->allocator;
  VKHLO_RETURN_IF_ERROR(exe_env_uint64("VKHLO_MAX_LOOP_ITERATIONS", 10000000ull, &job->exe->max_loop_iterations));
  VKHLO_RETURN_IF_ERROR(exe_env_loop_batch(context, &job->exe->loop_batch));
  VKHLO_RETURN_IF_ERROR(exe_buffer_limits_for_device(context->device, &job->limits));
  vkhlo_status_t st = exe_lower_module(job->exe, job->module, &job->schedule, job->target,
                                       job->limits.alignment, &job->constant_data);
  exe_schedule_free(&job->schedule);
  hlo_module_destroy(job->module);
  job->module = NULL;
  return st;
}

static vkhlo_status_t stage_inplace(compile_job_t *job) {
  exe_alias_loop_state(job->exe);
  exe_decide_inplace(job->exe);
  return exe_select_inplace_kernels(job->exe);
}

static vkhlo_status_t stage_assign_buffers(compile_job_t *job) {
  return exe_assign_buffers(job->exe, &job->limits);
}

static bool check_buffers_enabled(void) {
  const char *v = getenv("VKHLO_CHECK_BUFFERS");
  if (v && *v) return strcmp(v, "0") != 0;
#ifdef NDEBUG
  return false;
#else
  return true;
#endif
}

/* Proves the assignment (debug builds, $VKHLO_CHECK_BUFFERS). */
static vkhlo_status_t stage_check_buffers(compile_job_t *job) {
  return check_buffers_enabled() ? exe_verify_buffer_assignment(job->exe) : NULL;
}

/* GLSL -> SPIR-V for every generated kernel (user kernels are SPIR-V
 * already, validated when registered). */
static vkhlo_status_t stage_spirv(compile_job_t *job) {
  vkhlo_executable_t *exe = job->exe;
  spirv_compiler_t *compiler;
  VKHLO_RETURN_IF_ERROR(context_compiler(job->context, &compiler));
  job->spirv = vkhlo_calloc(job->context->allocator, (size_t)exe->kernel_count + 1, sizeof *job->spirv);
  job->spirv_size_bytes = vkhlo_calloc(job->context->allocator, (size_t)exe->kernel_count + 1, sizeof *job->spirv_size_bytes);
  if (!job->spirv || !job->spirv_size_bytes) return VKHLO_NO_MEMORY();
  const spirv_compiler_stats_t *before = spirv_compiler_stats(compiler);
  int compiled0 = before->compiled, hits0 = before->cache_hits;
  for (int i = 0; i < exe->kernel_count; i++) {
    exe_kernel_t *k = &exe->kernels[i];
    if (k->spirv) {
      job->spirv[i] = vkhlo_malloc(job->context->allocator, k->spirv_size_bytes);
      if (!job->spirv[i]) return VKHLO_NO_MEMORY();
      memcpy(job->spirv[i], k->spirv, k->spirv_size_bytes);
      job->spirv_size_bytes[i] = k->spirv_size_bytes;
    } else {
      VKHLO_RETURN_IF_ERROR(
          spirv_compile_glsl(compiler, k->name, k->glsl, &job->spirv[i], &job->spirv_size_bytes[i]));
    }
  }
  const spirv_compiler_stats_t *after = spirv_compiler_stats(compiler);
  job->spirv_compiled = after->compiled - compiled0;
  job->spirv_cache_hits = after->cache_hits - hits0;
  return NULL;
}

/* Pipelines, allocations (constants uploaded) and command buffers
 * (exe_create_device_objects, api/executable_object.c). */
static vkhlo_status_t stage_device_objects(compile_job_t *job) {
  vkhlo_executable_t *exe = job->exe;
  vkhlo_status_t st = exe_create_device_objects(exe, job->spirv, job->spirv_size_bytes, job->constant_data);
  for (int i = 0; i < exe->kernel_count; i++) {
    exe_kernel_t *k = &exe->kernels[i];
    /* The module stays with the kernel, for vkhlo_executable_save
     * (api/vkx_write.c); user kernels hold theirs already.  A kernel that
     * shares an earlier one's pipeline has its words: it shares them. */
    const exe_kernel_t *owner = NULL;
    for (int j = 0; k->pipeline_shared && j < i && !owner; j++)
      if (exe->kernels[j].pipeline == k->pipeline && !exe->kernels[j].pipeline_shared) owner = &exe->kernels[j];
    if (!k->spirv && owner && owner->spirv) {
      k->spirv = owner->spirv;
      k->spirv_size_bytes = owner->spirv_size_bytes;
      k->spirv_shared = true;
      vkhlo_free(job->context->allocator, job->spirv[i]);
    } else if (!k->spirv) {
      k->spirv = job->spirv[i];
      k->spirv_size_bytes = job->spirv_size_bytes[i];
    } else {
      vkhlo_free(job->context->allocator, job->spirv[i]);
    }
    job->spirv[i] = NULL;
  }
  return st;
}

/* ----------------------------------------------------------- the dumps */

static vkhlo_status_t dump_parsed_module(const compile_job_t *job, const char *dir) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST)
    return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot create %s: %s", dir, strerror(errno));
  char *text = hlo_module_to_string(job->module);
  if (!text) return VKHLO_NO_MEMORY();
  vkhlo_status_t st = write_file(dir, "module", ".after_parse.mlir", text);
  vkhlo_free(job->context->allocator, text);
  return st;
}

static vkhlo_status_t dump_fusion_plan(const compile_job_t *job, const char *dir) {
  char *dot = codegen_fusion_dot(job->module);
  if (!dot) return NULL;
  vkhlo_status_t st = write_file(dir, "fusion", ".dot", dot);
  vkhlo_free(job->context->allocator, dot);
  return st;
}

/* Every kernel's GLSL (.comp) and SPIR-V disassembly (.spvasm). */
static vkhlo_status_t dump_kernels(const compile_job_t *job, const char *dir) {
  const vkhlo_executable_t *exe = job->exe;
  for (int i = 0; i < exe->kernel_count; i++) {
    const exe_kernel_t *k = &exe->kernels[i];
    char name[300];
    snprintf(name, sizeof name, "kernel_%03d_%s", i, k->name);
    if (k->glsl) VKHLO_RETURN_IF_ERROR(write_file(dir, name, ".comp", k->glsl));
    char *dis = spirv_disassemble(job->context->allocator, job->spirv[i], job->spirv_size_bytes[i]);
    if (dis) {
      vkhlo_status_t st = write_file(dir, name, ".spvasm", dis);
      vkhlo_free(job->context->allocator, dis);
      VKHLO_RETURN_IF_ERROR(st);
    }
  }
  return NULL;
}

static vkhlo_status_t dump_buffers(const char *dir, const vkhlo_executable_t *exe) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  if (!f) return VKHLO_NO_MEMORY();
  static const char *const allocation_kinds[] = {"parameter", "constant", "temp", "result"};
  fprintf(f, "# buffer assignment: %d allocations, temp %llu bytes (liveness lower bound %llu), constant %llu "
             "bytes, offsets aligned to %llu\n",
          exe->allocation_count, (unsigned long long)exe_temp_bytes(exe),
          (unsigned long long)exe_liveness_lower_bound(exe), (unsigned long long)exe->constant_size_bytes,
          (unsigned long long)exe->alignment);
  fprintf(f, "%-10s %-10s %-12s %s\n", "allocation", "kind", "size", "notes");
  for (int i = 0; i < exe->allocation_count; i++) {
    const exe_buffer_allocation_t *a = &exe->allocations[i];
    fprintf(f, "%-10d %-10s %-12llu", a->index, allocation_kinds[a->kind], (unsigned long long)a->size);
    if (a->is_entry_computation_parameter) fprintf(f, " parameter_number=%d", a->parameter_number);
    if (a->kind == EXE_ALLOCATION_RESULT) fprintf(f, " result_number=%d", a->result_number);
    if (a->maybe_live_out) fprintf(f, " maybe_live_out");
    fputc('\n', f);
  }
  fprintf(f, "\n%-6s %-10s %-12s %-10s %-12s %-16s %-10s %s\n", "buffer", "kind", "size", "allocation", "offset",
          "live_range", "in_place", "defined_by");
  static const char *const kinds[] = {"parameter", "constant", "temp"};
  for (int i = 0; i < exe->buffer_count; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    char range[64], inplace[32] = "-";
    if (b->kind == EXE_BUFFER_TEMP) snprintf(range, sizeof range, "[%d,%d]", b->def_position, b->last_use_position);
    else snprintf(range, sizeof range, "-");
    if (b->inplace_of >= 0) snprintf(inplace, sizeof inplace, "over %d", b->inplace_of);
    fprintf(f, "%-6d %-10s %-12llu %-10d %-12llu %-16s %-10s %s\n", i, kinds[b->kind],
            (unsigned long long)b->size_bytes, b->allocation, (unsigned long long)b->offset_bytes, range, inplace,
            b->name ? b->name : "");
  }
  fclose(f);
  vkhlo_status_t st = write_file(dir, "buffer_assignment", ".txt", text);
  free(text); /* open_memstream: the C library's */
  return st;
}

static void dump_sequence(FILE *f, const vkhlo_executable_t *exe, const exe_sequence_t *seq, int depth) {
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    fprintf(f, "%*s%-5d ", 2 * depth, "", t->position);
    switch (t->kind) {
      case EXE_THUNK_DISPATCH: {
        uint64_t bytes = 0;
        for (int b = 0; b < t->binding_count; b++) bytes += exe->buffers[t->bindings[b]].size_bytes;
        fprintf(f, "dispatch %s bytes=%llu in=(", exe->kernels[t->kernel].name, (unsigned long long)bytes);
        for (int b = 0; b < t->binding_count; b++)
          fprintf(f, "%s%d%s", b == t->input_count ? ") out=(" : b ? " " : "", t->bindings[b],
                  b >= t->input_count && exe->buffers[t->bindings[b]].inplace_of >= 0 ? "*" : "");
        fprintf(f, "%s)\n", t->binding_count == t->input_count ? ") out=(" : "");
        break;
      }
      case EXE_THUNK_COPY:
        fprintf(f, "copy %d -> %d bytes=%llu", t->src, t->dst, (unsigned long long)t->size_bytes);
        if (t->src_stride) fprintf(f, " from +%llu per iteration", (unsigned long long)t->src_stride);
        if (t->dst_offset) fprintf(f, " into +%llu", (unsigned long long)t->dst_offset);
        fprintf(f, "\n");
        break;
      case EXE_THUNK_WHILE:
        fprintf(f, "while pred=%d", t->pred_buffer);
        if (t->has_trip_count) fprintf(f, " trip_count=%lld", (long long)t->trip_count);
        for (int p = 0; p < t->rotate_count; p++) fprintf(f, " rotate=%d<->%d", t->rotate[2 * p], t->rotate[2 * p + 1]);
        fprintf(f, "\n%*s  cond%s:\n", 2 * depth, "", t->has_trip_count ? " (not run)" : "");
        dump_sequence(f, exe, t->cond, depth + 2);
        fprintf(f, "%*s  body:\n", 2 * depth, "");
        dump_sequence(f, exe, t->body, depth + 2);
        break;
      case EXE_THUNK_HOST:
        fprintf(f, "host %s channel=%lld buffers=(", t->host_op, (long long)t->channel_id);
        for (int b = 0; b < t->binding_count; b++) fprintf(f, "%s%d", b ? " " : "", t->bindings[b]);
        fprintf(f, ")\n");
        break;
      case EXE_THUNK_CONDITIONAL:
        fprintf(f, "conditional selector=%d\n", t->selector_buffer);
        for (int b = 0; b < t->branch_count; b++) {
          fprintf(f, "%*s  branch %d:\n", 2 * depth, "", b);
          dump_sequence(f, exe, t->branches[b], depth + 2);
        }
        break;
    }
  }
}

/* DIR/thunks.txt: the program, one thunk per line with its position,
 * kernel, bytes bound and buffer ids (* = written in place). */
static vkhlo_status_t dump_thunks(const char *dir, const vkhlo_executable_t *exe) {
  char *text;
  size_t len;
  FILE *f = open_memstream(&text, &len);
  if (!f) return VKHLO_NO_MEMORY();
  fprintf(f, "# thunks (position, kind, kernel, bytes bound, buffer ids; * = in place)\n");
  dump_sequence(f, exe, &exe->main, 0);
  fclose(f);
  vkhlo_status_t st = write_file(dir, "thunks", ".txt", text);
  free(text); /* open_memstream: the C library's */
  return st;
}

static vkhlo_status_t dump_buffer_assignment(const compile_job_t *job, const char *dir) {
  VKHLO_RETURN_IF_ERROR(dump_buffers(dir, job->exe));
  return dump_thunks(dir, job->exe);
}

/* ----------------------------------------------------------- the driver */

/* The pipeline, in order.  After a stage succeeds, its dump (when there
 * is one) writes into options->dump_dir. */
static const struct {
  const char *name;
  vkhlo_status_t (*run)(compile_job_t *);
  vkhlo_status_t (*dump)(const compile_job_t *, const char *dir);
} stages[] = {
    {"parse", stage_parse, dump_parsed_module},                   /* hlo/parser.c */
    {"verify", stage_verify, NULL},                               /* hlo/verifier.c */
    {"passes", stage_passes, dump_fusion_plan},                   /* codegen/passes.c */
    {"schedule", stage_schedule, NULL},                           /* api/schedule.c */
    {"lower", stage_lower, NULL},                                 /* api/lower.c, codegen/emit*.c */
    {"inplace", stage_inplace, NULL},                             /* api/inplace.c */
    {"buffer_assignment", stage_assign_buffers, dump_buffer_assignment}, /* api/buffer_assignment.c */
    {"buffer_check", stage_check_buffers, NULL},                  /* api/buffer_assignment.c */
    {"spirv", stage_spirv, dump_kernels},                         /* codegen/spirv.c */
    {"device_objects", stage_device_objects, NULL},               /* vk_runtime/ */
};

static void fill_stats(compile_job_t *job, double t0) {
  vkhlo_executable_t *exe = job->exe;
  exe->stats.instructions = job->pass_stats.instructions_before;
  exe->stats.fused_clusters = job->pass_stats.fused_clusters;
  exe->stats.spirv_compiled = job->spirv_compiled;
  exe->stats.spirv_cache_hits = job->spirv_cache_hits;
  exe->stats.kernels = exe->kernel_count;
  exe->stats.dispatches = count_dispatches(&exe->main);
  exe->stats.bytes_moved = count_bytes_moved(exe, &exe->main);
  for (int i = 0; i < exe->result_count; i++)
    if (!exe_result_in_place(exe, i))
      exe->stats.bytes_moved += 2 * (int64_t)vkhlo_tensor_type_size_bytes(&exe->result_types[i]);
  exe->stats.peak_intermediate_bytes = (int64_t)exe_temp_bytes(exe);
  exe->stats.liveness_lower_bound_bytes = (int64_t)exe_liveness_lower_bound(exe);
  exe->stats.barriers = exe_count_barriers(exe);
  exe->stats.compile_ms = now_ms() - t0;
}

vkhlo_status_t exe_compile(vkhlo_context_t *context, const char *text, size_t length, const char *file_name,
                           const vkhlo_compile_options_t *options, const codegen_target_t *target,
                           vkhlo_executable_t **out_executable) {
  *out_executable = NULL;
  double t0 = now_ms();
  compile_job_t job;
  memset(&job, 0, sizeof job);
  job.context = context;
  job.text = text;
  job.length = length;
  job.file_name = file_name;
  job.options = options;
  job.target = target;
  /* the context's SPIR-V compiler, made on its first compile: first, so
   * that a failure there leaves nothing of the job behind */
  spirv_compiler_t *compiler;
  vkhlo_status_t st = context_compiler(context, &compiler);
  for (size_t i = 0; i < sizeof stages / sizeof stages[0] && !st; i++) {
    st = stages[i].run(&job);
    if (!st && stages[i].dump && job.options->dump_dir) st = stages[i].dump(&job, job.options->dump_dir);
  }
  if (!st) {
    fill_stats(&job, t0);
    *out_executable = job.exe;
    job.exe = NULL;
  }
  compile_job_free(&job);
  return st;
}

vkhlo_status_t vkhlo_executable_compile(vkhlo_context_t *context, const char *text, size_t length,
                                        const char *file_name, const vkhlo_compile_options_t *options,
                                        vkhlo_executable_t **out_executable) {
  *out_executable = NULL;
  vkhlo_compile_options_t defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!options) options = &defaults;
  /* the tuning file's choices (api/tune.c), first timing the kernels' candidates where asked */
  VKHLO_RETURN_IF_ERROR(context_tuning_load(context));
  if (options->tune || options->retune)
    return exe_tune_compile(context, text, length, file_name, options, out_executable);
  codegen_target_t target;
  context_tuned_target(context, &target);
  VKHLO_RETURN_IF_ERROR(exe_compile(context, text, length, file_name, options, &target, out_executable));
  vkhlo_status_t st = exe_tuning_report(*out_executable, NULL);
  if (st) {
    vkhlo_executable_destroy(*out_executable);
    *out_executable = NULL;
  }
  return st;
}

vkhlo_status_t vkhlo_portable_artifact_to_text(const void *data, size_t size, const char *file_name,
                                               char **out_text, size_t *out_length) {
  if (!out_text) return VKHLO_INVALID("vkhlo_portable_artifact_to_text: out_text is NULL");
  *out_text = NULL;
  if (!data && size) return VKHLO_INVALID("vkhlo_portable_artifact_to_text: data is NULL");
  size_t offset = 0, length = size;
  if (!hlo_find_bytecode(data, size, &offset, &length)) offset = 0, length = size; /* for its message */
  return hlo_bytecode_to_text((const char *)data + offset, length, file_name, NULL, out_text, out_length);
}
