/*
 * GLSL -> SPIR-V, in process.
 *
 *   GLSL text --glslang (+ spirv-opt passes when options->optimize)-->
 *   SPIR-V 1.3 (Vulkan 1.1 rules) --spirv-val--> checked module
 *
 * glslang is driven through its C interface: preprocess, parse, link,
 * generate.  glslang_initialize_process() is called per compiler object and
 * balanced in spirv_compiler_destroy (glslang reference-counts it).
 *
 * Optimizer.  The SPIRV-Tools installed here (2023.1) has no C entry point
 * for the optimizer (spvOptimizerCreate arrived in a later release) and
 * vkhlo is C-only, so optimization uses glslang's built-in call into
 * spvtools::Optimizer (glslang's -Os: disable_optimizer = false and
 * optimize_size = true; glslang only optimizes GLSL in that mode), which
 * runs the family of performance passes (inlining, scalar replacement,
 * store/load elimination, constant propagation, dead code and dead branch
 * elimination, ...) plus redundancy elimination.  The optimizer therefore
 * runs inside generation, and every module is validated once, after it.
 * When an optimized module fails validation the kernel is compiled again
 * without the optimizer to say whose fault it is: "spirv-val rejected
 * kernel K after optimization" (the optimizer's) or "spirv-val rejected
 * kernel K" (the GLSL/glslang's, with the unoptimized module's diagnostic).
 *
 * Float semantics.  Where the device honours it (options->
 * signed_zero_inf_nan_preserve), every module is post-processed to declare
 * the execution mode SignedZeroInfNanPreserve for the float widths it
 * uses: without it a driver may assume no NaN, infinity or -0.0 exists
 * (Vulkan leaves that to the implementation) and fold `x != x` to false,
 * as NVIDIA's compiler does.  glslang has no option for it and GLSL no
 * syntax short of GL_EXT_spirv_intrinsics, so the words are spliced in
 * after generation (and after spirv-opt, which folds no NaN test), before
 * validation and caching.
 *
 * Disk cache.  Content-addressed: the key is a 128-bit hash (two FNV-1a
 * lanes with different bases, finished with a 64-bit mixer) of a string
 * naming the compiler versions and options followed by the GLSL text; the
 * module lives in <dir>/<32 hex digits>.spv as raw SPIR-V words.  Files are
 * written to a temporary name and renamed into place, so readers never see
 * a partial file; a cached file that is truncated, not SPIR-V, or rejected
 * by spirv-val is ignored and overwritten.  A compiler validates a file
 * once: it keeps (key, hash of the words) of the files it validated or
 * wrote, and a file read again with the same words is taken as it is (a
 * model's layers are the same kernels, and spirv-val took most of the time
 * of loading them).  Failing to write the cache is
 * not an error (the cache is an optimization).  The directory is
 * options->cache_dir, else $VKHLO_CACHE_DIR ("off" or "" disables), else
 * $XDG_CACHE_HOME/vkhlo, else $HOME/.cache/vkhlo; it is created on the
 * first write.
 */
#define _POSIX_C_SOURCE 200809L

#include "codegen/spirv.h"

#include <errno.h>
#include <glslang/Include/glslang_c_interface.h>
#include <glslang/Public/resource_limits_c.h>
#include <glslang/build_info.h>
#include <spirv-tools/libspirv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "support/strbuf.h"

#define SPIRV_MAGIC 0x07230203u
#define MAX_CACHE_FILE_BYTES ((long)64 << 20)
#define MAX_LOG_CHARS 4000
#define MAX_SOURCE_LINE_CHARS 160

/* Cache files this compiler validated (see "Disk cache"). */
#define VALIDATED_SLOTS 512

typedef struct hash128 {
  uint64_t lo, hi;
} hash128_t;

typedef struct validated_file {
  bool used;
  hash128_t key, words;
} validated_file_t;

struct spirv_compiler {
  bool optimize;
  unsigned signed_zero_inf_nan_preserve; /* SPIRV_FLOAT* widths */
  char *cache_dir; /* NULL: cache off */
  const vkhlo_allocator_t *allocator; /* every host allocation (NULL = libc) */
  spv_context context;
  spirv_compiler_stats_t stats;
  char key_prefix[256]; /* versions and options that change the output */
  /* open addressing on key.lo; emptied when 3/4 full */
  validated_file_t validated[VALIDATED_SLOTS];
  int validated_count;
};

/* ---- hashing ------------------------------------------------------------ */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static void hash_bytes(hash128_t *h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) {
    h->lo = (h->lo ^ p[i]) * 0x100000001b3ull;
    h->hi = (h->hi ^ p[i]) * 0x100000001b3ull;
  }
}

/* Hashes |glsl| as the compiler sees it: each comment (// to the end of
 * the line, or / * ... * /) counts as one space, as GLSL's preprocessor
 * replaces it.  GLSL has no string literals, so this is exact; the
 * generated kernels name the source file in comments, and the same program
 * from another path must hit the same cache entries. */
static void hash_glsl_code(hash128_t *h, const char *glsl) {
  const char *run = glsl, *p = glsl;
  while (*p) {
    if (p[0] != '/' || (p[1] != '/' && p[1] != '*')) {
      p++;
      continue;
    }
    hash_bytes(h, run, (size_t)(p - run));
    hash_bytes(h, " ", 1);
    if (p[1] == '/') {
      p += 2;
      while (*p && *p != '\n') p++;
    } else {
      p += 2;
      while (*p && !(p[0] == '*' && p[1] == '/')) p++;
      if (*p) p += 2;
    }
    run = p;
  }
  hash_bytes(h, run, (size_t)(p - run));
}

static hash128_t cache_key(const spirv_compiler_t *c, const char *glsl) {
  hash128_t h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  hash_bytes(&h, c->key_prefix, strlen(c->key_prefix) + 1);
  hash_glsl_code(&h, glsl);
  h.lo = mix64(h.lo ^ h.hi);
  h.hi = mix64(h.hi + 0x9e3779b97f4a7c15ull) ^ h.lo;
  return h;
}

/* ---- cache directory and files ----------------------------------------- */

static char *join(const vkhlo_allocator_t *allocator, const char *a, const char *b) {
  size_t n = strlen(a) + strlen(b) + 1;
  char *s = vkhlo_malloc(allocator, n);
  if (s) snprintf(s, n, "%s%s", a, b);
  return s;
}

/* Resolves the directory; *out NULL means the cache is off. */
static vkhlo_status_t resolve_cache_dir(const spirv_compiler_options_t *o, char **out) {
  *out = NULL;
  if (o->disable_cache) return NULL;
  char *dir = NULL;
  const char *env;
  if (o->cache_dir) {
    if (!*o->cache_dir) return NULL;
    dir = join(o->allocator, o->cache_dir, "");
  } else if ((env = getenv("VKHLO_CACHE_DIR")) != NULL) {
    if (!*env || strcmp(env, "off") == 0) return NULL;
    dir = join(o->allocator, env, "");
  } else if ((env = getenv("XDG_CACHE_HOME")) != NULL && *env) {
    dir = join(o->allocator, env, "/vkhlo");
  } else if ((env = getenv("HOME")) != NULL && *env) {
    dir = join(o->allocator, env, "/.cache/vkhlo");
  } else {
    return NULL;
  }
  if (!dir) return VKHLO_NO_MEMORY();
  *out = dir;
  return NULL;
}

/* mkdir -p; returns false on failure. */
static bool make_dirs(const vkhlo_allocator_t *allocator, const char *path) {
  char *p = join(allocator, path, "");
  if (!p) return false;
  bool ok = true;
  for (char *s = p + 1;; s++) {
    if (*s == '/' || *s == '\0') {
      char saved = *s;
      *s = '\0';
      if (mkdir(p, 0755) != 0 && errno != EEXIST) ok = false;
      *s = saved;
      if (!saved || !ok) break;
    }
  }
  struct stat st;
  ok = stat(p, &st) == 0 && S_ISDIR(st.st_mode);
  vkhlo_free(allocator, p);
  return ok;
}

static char *cache_path(const spirv_compiler_t *c, hash128_t key) {
  size_t n = strlen(c->cache_dir) + 1 + 32 + 4 + 1;
  char *path = vkhlo_malloc(c->allocator, n);
  if (path)
    snprintf(path, n, "%s/%016llx%016llx.spv", c->cache_dir, (unsigned long long)key.hi,
             (unsigned long long)key.lo);
  return path;
}

static bool validate_words(const spirv_compiler_t *c, const uint32_t *words, size_t count,
                           char **out_message) {
  spv_const_binary_t binary = {words, count};
  spv_diagnostic diag = NULL;
  spv_result_t r = spvValidate(c->context, &binary, &diag);
  if (out_message) {
    *out_message = NULL;
    if (r != SPV_SUCCESS) {
      const char *text = diag && diag->error ? diag->error : "(no diagnostic)";
      strbuf_t sb;
      strbuf_init(&sb, c->allocator);
      if (diag && !diag->isTextSource)
        strbuf_printf(&sb, "%s (at word %zu)", text, diag->position.index);
      else
        strbuf_append(&sb, text);
      *out_message = strbuf_take(&sb);
    }
  }
  spvDiagnosticDestroy(diag);
  return r == SPV_SUCCESS;
}

vkhlo_status_t spirv_validate(spirv_compiler_t *c, const char *name, const uint32_t *words,
                              size_t size_bytes) {
  if (!words || size_bytes < 20 || size_bytes % 4 != 0)
    return VKHLO_INVALID("%s: not a SPIR-V module (%zu bytes)", name, size_bytes);
  char *message = NULL;
  if (validate_words(c, words, size_bytes / 4, &message)) return NULL;
  vkhlo_status_t st = VKHLO_INVALID("spirv-val rejected %s: %s", name, message ? message : "");
  vkhlo_free(c->allocator, message);
  return st;
}

static hash128_t words_hash(const uint32_t *words, size_t size) {
  hash128_t h = {0xcbf29ce484222325ull, 0x84222325cbf29ce4ull};
  hash_bytes(&h, words, size);
  return h;
}

/* Was the cache file of |key| with these words validated before?  (A
 * model's layers are the same kernels: BERT-base's 132 load 8 modules.) */
static bool validated_before(const spirv_compiler_t *c, hash128_t key, hash128_t words) {
  for (unsigned i = (unsigned)key.lo % VALIDATED_SLOTS; c->validated[i].used; i = (i + 1) % VALIDATED_SLOTS) {
    const validated_file_t *v = &c->validated[i];
    if (v->key.lo == key.lo && v->key.hi == key.hi && v->words.lo == words.lo && v->words.hi == words.hi)
      return true;
  }
  return false;
}

static void note_validated(spirv_compiler_t *c, hash128_t key, hash128_t words) {
  if (c->validated_count >= VALIDATED_SLOTS / 4 * 3) {
    memset(c->validated, 0, sizeof c->validated);
    c->validated_count = 0;
  }
  unsigned i = (unsigned)key.lo % VALIDATED_SLOTS;
  while (c->validated[i].used) i = (i + 1) % VALIDATED_SLOTS;
  c->validated[i] = (validated_file_t){true, key, words};
  c->validated_count++;
}

/* Loads a cached module; false (and nothing allocated) on any problem.
 * spirv-val checks it unless this compiler validated the same words for
 * |key| before. */
static bool cache_load(spirv_compiler_t *c, hash128_t key, const char *path, uint32_t **out_words,
                       size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  uint32_t *words = NULL;
  bool ok = false;
  long size = -1;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  if (size >= 20 && size % 4 == 0 && size <= MAX_CACHE_FILE_BYTES && fseek(f, 0, SEEK_SET) == 0 &&
      (words = vkhlo_malloc(c->allocator, (size_t)size)) != NULL && fread(words, 1, (size_t)size, f) == (size_t)size &&
      words[0] == SPIRV_MAGIC) {
    hash128_t h = words_hash(words, (size_t)size);
    ok = validated_before(c, key, h);
    if (!ok) c->stats.cache_validations++;
    if (!ok && validate_words(c, words, (size_t)size / 4, NULL)) {
      note_validated(c, key, h);
      ok = true;
    }
  }
  fclose(f);
  if (!ok) {
    vkhlo_free(c->allocator, words);
    return false;
  }
  *out_words = words;
  *out_size = (size_t)size;
  return true;
}

/* Best effort: write to a temporary file in the same directory, rename. */
static void cache_store(spirv_compiler_t *c, const char *path, const uint32_t *words, size_t size) {
  if (!make_dirs(c->allocator, c->cache_dir)) return;
  size_t n = strlen(path) + 64;
  char *tmp = vkhlo_malloc(c->allocator, n);
  if (!tmp) return;
  snprintf(tmp, n, "%s.%ld.%d.tmp", path, (long)getpid(), c->stats.compiled);
  FILE *f = fopen(tmp, "wb");
  bool ok = f && fwrite(words, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = false;
  if (!ok || rename(tmp, path) != 0) remove(tmp);
  vkhlo_free(c->allocator, tmp);
}

/* ---- glslang ------------------------------------------------------------ */

/* First "ERROR: <file>:<line>:" in the log; 0 if none. */
static int first_error_line(const char *log) {
  const char *p = strstr(log, "ERROR: ");
  while (p) {
    const char *q = p + 7;
    const char *colon = strchr(q, ':');
    if (colon) {
      int line = atoi(colon + 1);
      if (line > 0) return line;
    }
    p = strstr(q, "ERROR: ");
  }
  return 0;
}

/* Appends lines [line-3, line+2] of |src|, numbered, with a marker. */
static void append_source_excerpt(strbuf_t *sb, const char *src, int line) {
  int first = line - 3 < 1 ? 1 : line - 3, last = line + 2;
  int current = 1;
  const char *p = src;
  while (*p && current <= last) {
    const char *end = strchr(p, '\n');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (current >= first) {
      strbuf_printf(sb, "%s%5d | ", current == line ? ">" : " ", current);
      strbuf_appendn(sb, p, len < MAX_SOURCE_LINE_CHARS ? len : MAX_SOURCE_LINE_CHARS);
      strbuf_append(sb, len > MAX_SOURCE_LINE_CHARS ? " ...\n" : "\n");
    }
    if (!end) break;
    p = end + 1;
    current++;
  }
}

static vkhlo_status_t compile_error(const char *name, const char *stage, const char *log,
                                    const char *glsl) {
  strbuf_t sb;
  strbuf_init(&sb, NULL);
  size_t n = strlen(log);
  while (n > 0 && (log[n - 1] == '\n' || log[n - 1] == ' ')) n--;
  strbuf_appendn(&sb, log, n < MAX_LOG_CHARS ? n : MAX_LOG_CHARS);
  if (n > MAX_LOG_CHARS) strbuf_append(&sb, " ...");
  int line = first_error_line(log);
  if (line > 0) {
    strbuf_append(&sb, "\n");
    append_source_excerpt(&sb, glsl, line);
  }
  char *text = strbuf_take(&sb);
  vkhlo_status_t s = VKHLO_INTERNAL("glslang failed to %s kernel %s: %s", stage, name,
                                    text ? text : "(out of memory formatting the log)");
  vkhlo_free(NULL, text);
  return s;
}

/* Parses and links.  On success the caller deletes *out_program and then
 * *out_shader: with one compilation unit the program reuses the shader's
 * intermediate tree, so the shader must outlive it. */
static vkhlo_status_t glslang_front_end(const char *name, const char *glsl,
                                        glslang_shader_t **out_shader,
                                        glslang_program_t **out_program) {
  *out_shader = NULL;
  *out_program = NULL;
  const int messages = GLSLANG_MSG_SPV_RULES_BIT | GLSLANG_MSG_VULKAN_RULES_BIT;
  glslang_input_t input = {
      .language = GLSLANG_SOURCE_GLSL,
      .stage = GLSLANG_STAGE_COMPUTE,
      .client = GLSLANG_CLIENT_VULKAN,
      .client_version = GLSLANG_TARGET_VULKAN_1_1,
      .target_language = GLSLANG_TARGET_SPV,
      .target_language_version = GLSLANG_TARGET_SPV_1_3,
      .code = glsl,
      .default_version = 450,
      .default_profile = GLSLANG_NO_PROFILE,
      .force_default_version_and_profile = 0,
      .forward_compatible = 0,
      .messages = (glslang_messages_t)messages,
      .resource = glslang_default_resource(),
  };
  glslang_shader_t *shader = glslang_shader_create(&input);
  if (!shader) return VKHLO_NO_MEMORY();
  /* glslang 12's C parse() consumes the preprocessed text, so preprocess first. */
  if (!glslang_shader_preprocess(shader, &input) || !glslang_shader_parse(shader, &input)) {
    vkhlo_status_t s = compile_error(name, "compile", glslang_shader_get_info_log(shader), glsl);
    glslang_shader_delete(shader);
    return s;
  }
  glslang_program_t *program = glslang_program_create();
  if (!program) {
    glslang_shader_delete(shader);
    return VKHLO_NO_MEMORY();
  }
  glslang_program_add_shader(program, shader);
  if (!glslang_program_link(program, messages)) {
    vkhlo_status_t s = compile_error(name, "link", glslang_program_get_info_log(program), glsl);
    glslang_program_delete(program);
    glslang_shader_delete(shader);
    return s;
  }
  *out_shader = shader;
  *out_program = program;
  return NULL;
}

/* Generates SPIR-V from a linked program; caller frees *out_words.
 * Call once per program: glslang appends each generated module to the
 * program's word vector (and would run the optimizer over both). */
static vkhlo_status_t generate(const vkhlo_allocator_t *allocator, glslang_program_t *program, bool optimize, uint32_t **out_words,
                               size_t *out_count) {
  glslang_spv_options_t spv = {
      .generate_debug_info = false,
      .strip_debug_info = false,
      .disable_optimizer = !optimize,
      /* glslang runs spirv-opt on GLSL input only for -Os (optimize_size);
       * its pass list is the performance passes plus redundancy
       * elimination. */
      .optimize_size = optimize,
      .disassemble = false,
      .validate = false,
  };
  glslang_program_SPIRV_generate_with_options(program, GLSLANG_STAGE_COMPUTE, &spv);
  size_t total = glslang_program_SPIRV_get_size(program);
  const unsigned int *ptr = glslang_program_SPIRV_get_ptr(program);
  if (total < 5 || !ptr || ptr[0] != SPIRV_MAGIC) {
    const char *messages = glslang_program_SPIRV_get_messages(program);
    return VKHLO_INTERNAL("glslang produced no SPIR-V module (%zu words)%s%s", total,
                          messages ? ": " : "", messages ? messages : "");
  }
  size_t count = total;
  uint32_t *words = vkhlo_malloc(allocator, count * sizeof *words);
  if (!words) return VKHLO_NO_MEMORY();
  memcpy(words, ptr, count * sizeof *words);
  *out_words = words;
  *out_count = count;
  return NULL;
}

/* Front end + generation in one go; caller frees *out_words. */
static vkhlo_status_t glsl_to_spirv(const vkhlo_allocator_t *allocator, const char *name, const char *glsl, bool optimize,
                                    uint32_t **out_words, size_t *out_count) {
  glslang_shader_t *shader = NULL;
  glslang_program_t *program = NULL;
  vkhlo_status_t s = glslang_front_end(name, glsl, &shader, &program);
  if (!s) s = generate(allocator, program, optimize, out_words, out_count);
  if (program) glslang_program_delete(program);
  if (shader) glslang_shader_delete(shader);
  return s;
}

/* ---- float controls post-processing ------------------------------------ */

enum {
  OP_EXTENSION = 10,
  OP_ENTRY_POINT = 15,
  OP_EXECUTION_MODE = 16,
  OP_CAPABILITY = 17,
  OP_TYPE_FLOAT = 22,
  OP_EXECUTION_MODE_ID = 331,
  CAPABILITY_SIGNED_ZERO_INF_NAN_PRESERVE = 4466,
  EXECUTION_MODE_SIGNED_ZERO_INF_NAN_PRESERVE = 4461,
  MAX_ENTRY_POINTS = 16,
};

static const char float_controls_extension[] = "SPV_KHR_float_controls";

static unsigned width_bit(uint32_t width) {
  return width == 16 ? SPIRV_FLOAT16 : width == 32 ? SPIRV_FLOAT32 : width == 64 ? SPIRV_FLOAT64 : 0;
}

/* Writes OpExtension |name| at |out| (SPIR-V string: NUL-terminated,
 * little-endian bytes within each word, zero-padded); returns words used. */
static size_t put_extension(uint32_t *out, const char *name) {
  size_t bytes = strlen(name) + 1, string_words = (bytes + 3) / 4;
  out[0] = (uint32_t)((1 + string_words) << 16) | OP_EXTENSION;
  for (size_t i = 0; i < string_words * 4; i++) {
    uint32_t c = i < bytes ? (unsigned char)name[i] : 0;
    if (i % 4 == 0) out[1 + i / 4] = 0;
    out[1 + i / 4] |= c << (8 * (i % 4));
  }
  return 1 + string_words;
}

static bool is_extension(const uint32_t *inst, uint32_t word_count, const char *name) {
  uint32_t packed[16];
  size_t n = put_extension(packed, name);
  return word_count == n && memcmp(inst + 1, packed + 1, (n - 1) * sizeof *packed) == 0;
}

vkhlo_status_t spirv_add_signed_zero_inf_nan_preserve(const vkhlo_allocator_t *allocator, uint32_t **words_io, size_t *size_bytes_io,
                                                      unsigned widths) {
  const uint32_t *w = *words_io;
  size_t n = *size_bytes_io / 4;
  if (!w || n < 5 || *size_bytes_io % 4 != 0 || w[0] != SPIRV_MAGIC)
    return VKHLO_INVALID("float controls: not a SPIR-V module");
  bool have_capability = false, have_extension = false;
  size_t capabilities_end = 5, modes_end = 0;
  uint32_t entries[MAX_ENTRY_POINTS];
  unsigned declared[MAX_ENTRY_POINTS] = {0}; /* widths already declared, per entry */
  int entry_count = 0;
  unsigned used = 0;
  for (size_t i = 5; i < n;) {
    uint32_t op = w[i] & 0xffffu, wc = w[i] >> 16;
    if (wc == 0 || wc > n - i) return VKHLO_INVALID("float controls: malformed instruction at word %zu", i);
    switch (op) {
      case OP_CAPABILITY:
        if (wc >= 2 && w[i + 1] == CAPABILITY_SIGNED_ZERO_INF_NAN_PRESERVE) have_capability = true;
        capabilities_end = i + wc;
        break;
      case OP_EXTENSION:
        if (is_extension(w + i, wc, float_controls_extension)) have_extension = true;
        break;
      case OP_ENTRY_POINT:
        if (wc < 3) return VKHLO_INVALID("float controls: malformed OpEntryPoint");
        if (entry_count == MAX_ENTRY_POINTS)
          return VKHLO_INVALID("float controls: more than %d entry points", MAX_ENTRY_POINTS);
        entries[entry_count++] = w[i + 2];
        modes_end = i + wc;
        break;
      case OP_EXECUTION_MODE:
        if (wc == 4 && w[i + 2] == EXECUTION_MODE_SIGNED_ZERO_INF_NAN_PRESERVE)
          for (int e = 0; e < entry_count; e++)
            if (entries[e] == w[i + 1]) declared[e] |= width_bit(w[i + 3]);
        modes_end = i + wc;
        break;
      case OP_EXECUTION_MODE_ID: modes_end = i + wc; break;
      case OP_TYPE_FLOAT:
        if (wc >= 3) used |= width_bit(w[i + 2]);
        break;
      default: break;
    }
    i += wc;
  }
  unsigned want = widths & used;
  size_t mode_count = 0;
  for (int e = 0; e < entry_count; e++)
    for (unsigned bit = 1; bit <= SPIRV_FLOAT64; bit <<= 1)
      if ((want & bit) && !(declared[e] & bit)) mode_count++;
  if (mode_count == 0) return NULL;
  bool need_extension = w[1] < 0x00010400u && !have_extension;
  size_t extension_words = (sizeof float_controls_extension + 3) / 4 + 1;
  size_t extra = (have_capability ? 0 : 2) + (need_extension ? extension_words : 0) + 4 * mode_count;
  uint32_t *out = vkhlo_malloc(allocator, (n + extra) * sizeof *out);
  if (!out) return VKHLO_NO_MEMORY();
  size_t o = 0;
  memcpy(out, w, capabilities_end * sizeof *w);
  o = capabilities_end;
  if (!have_capability) {
    out[o++] = (2u << 16) | OP_CAPABILITY;
    out[o++] = CAPABILITY_SIGNED_ZERO_INF_NAN_PRESERVE;
  }
  if (need_extension) o += put_extension(out + o, float_controls_extension);
  memcpy(out + o, w + capabilities_end, (modes_end - capabilities_end) * sizeof *w);
  o += modes_end - capabilities_end;
  for (int e = 0; e < entry_count; e++)
    for (unsigned bit = 1, width = 16; bit <= SPIRV_FLOAT64; bit <<= 1, width *= 2)
      if ((want & bit) && !(declared[e] & bit)) {
        out[o++] = (4u << 16) | OP_EXECUTION_MODE;
        out[o++] = entries[e];
        out[o++] = EXECUTION_MODE_SIGNED_ZERO_INF_NAN_PRESERVE;
        out[o++] = width;
      }
  memcpy(out + o, w + modes_end, (n - modes_end) * sizeof *w);
  o += n - modes_end;
  vkhlo_free(allocator, *words_io);
  *words_io = out;
  *size_bytes_io = o * sizeof *out;
  return NULL;
}

/* ---- public API --------------------------------------------------------- */

vkhlo_status_t spirv_compiler_create(const spirv_compiler_options_t *options,
                                     spirv_compiler_t **out_compiler) {
  *out_compiler = NULL;
  spirv_compiler_options_t defaults = {.cache_dir = NULL, .disable_cache = false, .optimize = true};
  if (!options) options = &defaults;
  spirv_compiler_t *c = vkhlo_calloc(options->allocator, 1, sizeof *c);
  if (!c) return VKHLO_NO_MEMORY();
  c->allocator = options->allocator;
  c->optimize = options->optimize;
  c->signed_zero_inf_nan_preserve =
      options->signed_zero_inf_nan_preserve & (SPIRV_FLOAT16 | SPIRV_FLOAT32 | SPIRV_FLOAT64);
  vkhlo_status_t s = resolve_cache_dir(options, &c->cache_dir);
  if (s) {
    vkhlo_free(c->allocator, c);
    return s;
  }
  c->context = spvContextCreate(SPV_ENV_VULKAN_1_1);
  if (!c->context) {
    vkhlo_free(c->allocator, c->cache_dir);
    vkhlo_free(c->allocator, c);
    return VKHLO_INTERNAL("spvContextCreate(SPV_ENV_VULKAN_1_1) failed");
  }
  if (!glslang_initialize_process()) {
    spvContextDestroy(c->context);
    vkhlo_free(c->allocator, c->cache_dir);
    vkhlo_free(c->allocator, c);
    return VKHLO_INTERNAL("glslang_initialize_process failed");
  }
  snprintf(c->key_prefix, sizeof c->key_prefix,
           "vkhlo-spirv-cache-v1;glslang %d.%d.%d%s;spirv-tools %s;vulkan1.1;spv1.3;opt=%d;"
           "szinp=%u",
           GLSLANG_VERSION_MAJOR, GLSLANG_VERSION_MINOR, GLSLANG_VERSION_PATCH,
           GLSLANG_VERSION_FLAVOR, spvSoftwareVersionString(), c->optimize ? 1 : 0,
           c->signed_zero_inf_nan_preserve);
  *out_compiler = c;
  return NULL;
}

void spirv_compiler_destroy(spirv_compiler_t *c) {
  if (!c) return;
  glslang_finalize_process();
  spvContextDestroy(c->context);
  vkhlo_free(c->allocator, c->cache_dir);
  vkhlo_free(c->allocator, c);
}

const spirv_compiler_stats_t *spirv_compiler_stats(const spirv_compiler_t *c) { return &c->stats; }

vkhlo_status_t spirv_compile_glsl(spirv_compiler_t *c, const char *name, const char *glsl,
                                  uint32_t **out_words, size_t *out_size_bytes) {
  *out_words = NULL;
  *out_size_bytes = 0;
  if (!name) name = "(unnamed)";
  if (!glsl) return VKHLO_INVALID("spirv_compile_glsl: no GLSL text for kernel %s", name);

  char *path = NULL;
  hash128_t key = {0, 0};
  if (c->cache_dir) {
    key = cache_key(c, glsl);
    path = cache_path(c, key);
    if (!path) return VKHLO_NO_MEMORY();
    if (cache_load(c, key, path, out_words, out_size_bytes)) {
      c->stats.cache_hits++;
      vkhlo_free(c->allocator, path);
      return NULL;
    }
  }

  uint32_t *words = NULL;
  size_t count = 0;
  char *diag = NULL;
  vkhlo_status_t s = glsl_to_spirv(c->allocator, name, glsl, c->optimize, &words, &count);
  if (!s && c->signed_zero_inf_nan_preserve) {
    size_t bytes = count * sizeof *words;
    s = spirv_add_signed_zero_inf_nan_preserve(c->allocator, &words, &bytes, c->signed_zero_inf_nan_preserve);
    count = bytes / sizeof *words;
  }
  if (!s && !validate_words(c, words, count, &diag)) {
    /* Blame the code generator or the optimizer: is the plain module valid? */
    bool optimizer_at_fault = false;
    if (c->optimize) {
      uint32_t *plain = NULL;
      size_t plain_count = 0;
      vkhlo_status_t plain_status = glsl_to_spirv(c->allocator, name, glsl, false, &plain, &plain_count);
      char *plain_diag = NULL;
      if (!plain_status && validate_words(c, plain, plain_count, &plain_diag))
        optimizer_at_fault = true;
      else if (plain_diag) {
        vkhlo_free(c->allocator, diag);
        diag = plain_diag; /* report the unoptimized module's first problem */
      }
      vkhlo_status_free(plain_status);
      vkhlo_free(c->allocator, plain);
    }
    s = VKHLO_INTERNAL("spirv-val rejected kernel %s%s: %s", name,
                       optimizer_at_fault ? " after optimization" : "",
                       diag ? diag : "(out of memory)");
  }
  vkhlo_free(c->allocator, diag);
  if (s) {
    vkhlo_free(c->allocator, words);
    vkhlo_free(c->allocator, path);
    return s;
  }
  c->stats.compiled++;
  if (path) {
    cache_store(c, path, words, count * sizeof *words);
    note_validated(c, key, words_hash(words, count * sizeof *words));
  }
  vkhlo_free(c->allocator, path);
  *out_words = words;
  *out_size_bytes = count * sizeof *words;
  return NULL;
}

char *spirv_disassemble(const vkhlo_allocator_t *allocator, const uint32_t *words, size_t size_bytes) {
  if (!words || size_bytes < 20 || size_bytes % 4 != 0) return NULL;
  spv_context context = spvContextCreate(SPV_ENV_UNIVERSAL_1_6);
  if (!context) return NULL;
  spv_text text = NULL;
  spv_diagnostic diag = NULL;
  char *out = NULL;
  spv_result_t r = spvBinaryToText(context, words, size_bytes / 4,
                                   SPV_BINARY_TO_TEXT_OPTION_INDENT |
                                       SPV_BINARY_TO_TEXT_OPTION_FRIENDLY_NAMES,
                                   &text, &diag);
  if (r == SPV_SUCCESS && text) {
    out = vkhlo_malloc(allocator, text->length + 1);
    if (out) {
      memcpy(out, text->str, text->length);
      out[text->length] = '\0';
    }
  }
  spvTextDestroy(text);
  spvDiagnosticDestroy(diag);
  spvContextDestroy(context);
  return out;
}
