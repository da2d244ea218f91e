/* The compiler on arbitrary text: parse, verify, the pass pipeline, then
 * the executable's half (scheduling, lowering with every kernel's GLSL,
 * in-place decisions, buffer assignment and its proof), as
 * vkhlo_executable_compile runs them, minus the device (no glslang, no
 * Vulkan), so that a fuzzer reaches thousands of inputs a second.
 *
 * Whatever the bytes, each stage must return a status or succeed: no
 * crash, no sanitizer report, no leak, nothing past the buffer (the text
 * is not NUL-terminated), and no INTERNAL status (the compiler's own
 * failures: a pass whose result does not verify, an unsafe buffer
 * assignment).  Inputs of odd length compile for a CPU device
 * as lavapipe describes itself (texel words, 8 lanes, a loop limit),
 * inputs of even length for a GPU (32 lanes, subgroup reductions): one
 * corpus covers both kernel families.
 *
 * A kernel emitted for a verified program must also compile: where a
 * SPIR-V compiler is given, each kernel's GLSL goes through glslang,
 * spirv-val and spirv-opt, and one they reject aborts the run.
 *
 * Two builds of this file:
 *   - with -DVKHLO_FUZZ=ON under clang (tests/CMakeLists.txt): the libFuzzer
 *     target fuzz_compile (the library built with ASan, UBSan and the
 *     fuzzer's coverage; see README "Fuzzing"); it compiles the GLSL only
 *     with VKHLO_FUZZ_SPIRV=1 (glslang takes milliseconds a kernel);
 *   - always: fuzz_replay FILE|DIR..., which runs each file once through
 *     the same function, GLSL compiled, and fails on a crash: ctest runs
 *     it over tests/fuzz/regressions, the inputs the fuzzer has found
 *     crashing (each fixed since), under ASan+UBSan in CI's sanitizer pass.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api/internal.h"
#include "codegen/kernel.h"
#include "codegen/passes.h"
#include "codegen/spirv.h"
#include "codegen/target.h"
#include "hlo/hlo.h"
#include "vkhlo/status.h"

static void fuzz_target(bool cpu, codegen_target_t *t) {
  codegen_target_default(t);
  t->subgroup_shuffle = true;
  if (cpu) {
    t->is_cpu = true;
    t->texel_words = true;
    t->subgroup_size = 8;
    t->max_loop_iterations = 65535;
    t->max_texel_buffer_elements = 1u << 27;
  } else {
    t->subgroup_reduce = true;
  }
}

/* The host allocator of the run: the C library's, refusing any block over
 * 256 MiB, so that a program that asks for more (a splat constant of 2^40
 * elements) takes the library's out-of-memory path instead of the
 * fuzzer's memory limit. */
#define FUZZ_MAX_BLOCK ((size_t)256 << 20)
static void *capped_malloc(void *user, size_t size) {
  (void)user;
  return size > FUZZ_MAX_BLOCK ? NULL : malloc(size);
}
static void *capped_realloc(void *user, void *ptr, size_t size) {
  (void)user;
  return size > FUZZ_MAX_BLOCK ? NULL : realloc(ptr, size);
}
static void capped_free(void *user, void *ptr) {
  (void)user;
  free(ptr);
}
static const vkhlo_allocator_t capped_allocator = {NULL, capped_malloc, capped_realloc, capped_free};

typedef struct fuzz_run {
  codegen_target_t target;
  exe_buffer_limits_t limits; /* the device's, as lavapipe or a GPU gives them */
  /* when set, every kernel's GLSL is compiled and validated too: a kernel
   * that glslang or spirv-val rejects is a compiler bug (abort) */
  spirv_compiler_t *spirv;
} fuzz_run_t;

static void check_spirv(const fuzz_run_t *run, const char *name, const char *glsl) {
  uint32_t *words = NULL;
  size_t size = 0;
  vkhlo_status_t st = spirv_compile_glsl(run->spirv, name, glsl, &words, &size);
  vkhlo_free(&capped_allocator, words);
  if (st && vkhlo_status_code(st) != VKHLO_STATUS_RESOURCE_EXHAUSTED) {
    fprintf(stderr, "fuzz: kernel %s of a verified program does not compile:\n%s\n--- GLSL:\n%s\n", name,
            vkhlo_status_message(st), glsl);
    abort();
  }
  vkhlo_status_free(st);
}

/* The executable's half of the compiler, as api/executable.c runs it
 * after the passes, minus the device: scheduling, lowering (every kernel
 * emitted and checked against the target's limits), the in-place
 * decisions, buffer assignment and its proof.  A context without a device
 * stands in for the caller's (no custom-call kernels registered). */
static vkhlo_status_t lower_module(const fuzz_run_t *run, const hlo_module_t *m) {
  struct vkhlo_context_s context;
  memset(&context, 0, sizeof context);
  context.allocator = &capped_allocator;
  context.target = run->target;
  vkhlo_executable_t *exe = vkhlo_calloc(&capped_allocator, 1, sizeof *exe);
  if (!exe) return VKHLO_NO_MEMORY();
  exe->context = &context;
  exe->allocator = &capped_allocator;
  exe->max_loop_iterations = 10000000;
  exe_schedule_t schedule;
  memset(&schedule, 0, sizeof schedule);
  void *constants = NULL;
  vkhlo_status_t st = exe_schedule_module(m, &schedule);
  if (!st) st = exe_lower_module(exe, m, &schedule, &run->target, run->limits.alignment, &constants);
  exe_schedule_free(&schedule);
  if (!st) {
    exe_alias_loop_state(exe);
    exe_decide_inplace(exe);
    st = exe_select_inplace_kernels(exe);
    if (!st) st = exe_assign_buffers(exe, &run->limits);
  }
  if (!st) st = exe_verify_buffer_assignment(exe);
  if (!st) { /* what the executable's statistics read */
    (void)exe_temp_bytes(exe);
    (void)exe_liveness_lower_bound(exe);
    (void)exe_count_barriers(exe);
  }
  for (int i = 0; !st && run->spirv && i < exe->kernel_count; i++)
    if (exe->kernels[i].glsl) check_spirv(run, exe->kernels[i].name, exe->kernels[i].glsl);
  vkhlo_free(&capped_allocator, constants);
  vkhlo_executable_destroy(exe);
  return st;
}

/* One input through every stage; returns the first stage's status. */
static vkhlo_status_t compile_text(spirv_compiler_t *spirv, const uint8_t *data, size_t size) {
  fuzz_run_t run = {.spirv = spirv};
  fuzz_target(size % 2 == 1, &run.target);
  run.limits = size % 2 == 1 ? (exe_buffer_limits_t){16, (uint64_t)1 << 31} : (exe_buffer_limits_t){64, (uint64_t)1 << 32};
  hlo_parse_options_t popts = {NULL, 1, 0, &capped_allocator, NULL, 0};
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse((const char *)data, size, "fuzz.mlir", &popts, &m);
  if (!st) st = hlo_verify(m);
  if (!st) {
    codegen_pass_options_t o;
    memset(&o, 0, sizeof o);
    o.target = &run.target;
    codegen_pass_stats_t stats;
    st = codegen_run_passes(m, &o, &stats);
  }
  if (!st) st = lower_module(&run, m);
  hlo_module_destroy(m);
  /* INTERNAL is the compiler's own failure (a pass's result that does not
   * verify, a kernel without its outputs, an unsafe buffer assignment):
   * never the answer to a program, however wrong. */
  if (st && vkhlo_status_code(st) == VKHLO_STATUS_INTERNAL) {
    fprintf(stderr, "fuzz: internal error: %s\n", vkhlo_status_message(st));
    abort();
  }
  return st;
}

/* glslang and SPIRV-Tools, without the disk cache. */
static spirv_compiler_t *new_spirv_compiler(void) {
  spirv_compiler_options_t o;
  memset(&o, 0, sizeof o);
  o.disable_cache = true;
  o.optimize = true;
  o.allocator = &capped_allocator;
  spirv_compiler_t *c = NULL;
  vkhlo_status_t st = spirv_compiler_create(&o, &c);
  if (st) {
    fprintf(stderr, "fuzz: no SPIR-V compiler: %s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return NULL;
  }
  return c;
}

#ifdef VKHLO_LIBFUZZER
/* The fuzzer's SPIR-V compiler, for the process (VKHLO_FUZZ_SPIRV=1: every
 * kernel compiled, ~100x fewer inputs a second). */
static spirv_compiler_t *fuzz_spirv;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *e = getenv("VKHLO_FUZZ_SPIRV");
  if (e && strcmp(e, "1") == 0) fuzz_spirv = new_spirv_compiler();
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  vkhlo_status_free(compile_text(fuzz_spirv, data, size));
  return 0;
}

/* Most byte-level mutations break the text's syntax, so half of the
 * mutations rewrite one decimal number instead (a dimension size, an
 * attribute, an index, a constant's element) with a value from the edges:
 * 0, 1, -1, 2, a neighbour, a power of two, the int32 / int64 limits. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
  if (size == 0 || (r >> 60) < 8) return LLVMFuzzerMutate(data, size, max_size);
  size_t at = (size_t)((r >> 8) % size), start = at;
  while (start < size && !(data[start] >= '0' && data[start] <= '9')) start++;
  if (start == size) return LLVMFuzzerMutate(data, size, max_size);
  size_t end = start;
  long long old = 0;
  while (end < size && data[end] >= '0' && data[end] <= '9' && end - start < 18) old = old * 10 + (data[end++] - '0');
  static const long long edges[] = {0, 1, -1, 2, 3, 7, 8, 16, 64, 65536, 2147483647, -2147483648LL,
                                    4294967296LL, 9223372036854775807LL};
  unsigned pick = (unsigned)((r >> 32) % 20);
  long long v = pick < 14 ? edges[pick] : pick < 17 ? old + 1 : pick < 19 ? old - 1 : 1LL << ((r >> 40) % 40);
  char num[32];
  int len = snprintf(num, sizeof num, "%lld", v);
  if (size - (end - start) + (size_t)len > max_size) return LLVMFuzzerMutate(data, size, max_size);
  memmove(data + start + len, data + end, size - end);
  memcpy(data + start, num, (size_t)len);
  return size - (end - start) + (size_t)len;
}
#else
/* fuzz_replay: each file (or each file of a directory) once, in a buffer of
 * exactly its size (ASan sees a read past the text). */
static int replay_file(spirv_compiler_t *spirv, const char *path, int *count) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "fuzz_replay: cannot open %s\n", path);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
  size_t got = buf ? fread(buf, 1, (size_t)(n > 0 ? n : 0), f) : 0;
  fclose(f);
  if (!buf || got != (size_t)(n > 0 ? n : 0)) {
    fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
    free(buf);
    return 1;
  }
  vkhlo_status_t st = compile_text(spirv, buf, got);
  const char *msg = vkhlo_status_message(st);
  printf("%s: %s\n", path, st ? msg : "compiles");
  vkhlo_status_free(st);
  free(buf);
  (*count)++;
  return 0;
}

static int replay_path(spirv_compiler_t *spirv, const char *path, int *count) {
  struct stat sb;
  if (stat(path, &sb) != 0) {
    fprintf(stderr, "fuzz_replay: no such file or directory: %s\n", path);
    return 1;
  }
  if (!S_ISDIR(sb.st_mode)) return replay_file(spirv, path, count);
  DIR *d = opendir(path);
  if (!d) return 1;
  int bad = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
    bad |= replay_path(spirv, sub, count);
  }
  closedir(d);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: fuzz_replay FILE|DIR...\n");
    return 2;
  }
  spirv_compiler_t *spirv = new_spirv_compiler();
  if (!spirv) return 1;
  int bad = 0, count = 0;
  for (int i = 1; i < argc; i++) bad |= replay_path(spirv, argv[i], &count);
  spirv_compiler_destroy(spirv);
  printf("fuzz_replay: %d inputs, none crashed, every kernel compiled and validated\n", count);
  return bad || count == 0;
}
#endif
