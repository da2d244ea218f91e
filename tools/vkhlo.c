/*
 * vkhlo — command-line driver.  Uses only the public API (include/vkhlo).
 *
 *   vkhlo run FILE.mlir [options]      compile and execute; print or save results,
 *                                      evaluate check.expect_* (exit 1 on failure)
 *   vkhlo compile FILE.mlir [options]  compile only (--dump-dir, --stats);
 *                                      -o FILE.vkx [--weights=FILE] saves the executable
 *   vkhlo run FILE.vkx [options]       load a saved executable and execute it
 *   vkhlo --list-devices | --version | --help
 *
 * Files split by "// -----" lines run each split on its own (each split
 * keeps its line numbers, for messages).
 * Exit status: 0 success (all checks pass), 1 a check failed, 2 error.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "tools/npy.h"
#include "vkhlo/vkhlo.h"

#define MAX_ARGS 1024

typedef struct options {
  const char *command;
  const char *file;
  const char *function;
  const char *device;
  const char *inputs[MAX_ARGS];
  int input_count;
  const char *outputs[MAX_ARGS];
  int output_count;
  bool random_inputs;
  uint64_t seed;
  int fill_elided;
  bool no_fusion;
  bool validation;
  bool no_cache;
  const char *dump_dir;
  const char *dump_after;
  bool stats;
  bool print_outputs;
  bool quiet;
  int64_t print_max;
  int repeat;
  bool profile;
  bool tune, retune;      /* vkhlo tune, --tune, --retune */
  const char *output_vkx; /* compile -o FILE.vkx */
  const char *weights;    /* compile --weights=FILE; run: the side file of a .vkx */
  const char *emit_c;     /* compile --emit-c=NAME: NAME.c / NAME.h */
} options_t;

static const char usage[] =
    "usage: vkhlo run FILE.mlir [options]\n"
    "       vkhlo compile FILE.mlir [options] [-o FILE.vkx [--weights=FILE]]\n"
    "       vkhlo run FILE.vkx [options]     (a saved executable: no parsing, no shader compiles)\n"
    "       vkhlo tune FILE.mlir [options]   time the candidate configurations of the kernels\n"
    "                                        that have some on the device; keep the fastest in\n"
    "                                        the cache directory (used by every later compile)\n"
    "       vkhlo deserialize FILE.mlirbc   print a StableHLO portable artifact (MLIR bytecode)\n"
    "                                        as the text run and compile read it as\n"
    "       vkhlo --list-devices | --version | --help\n"
    "FILE.mlir is StableHLO text or a portable artifact (MLIR bytecode; also a file\n"
    "jax.export's Exported.serialize() wrote)\n"
    "\n"
    "options:\n"
    "  --function=NAME          entry function (default: main)\n"
    "  --input=SPEC             one per parameter, in order: 2x3xf32=1,2,3,4,5,6 | f32=5 |\n"
    "                           2x2xi32=[1 2][3 4] | @x.npy | 2x3xf32 (zeros) |\n"
    "                           2x3xf32=random (as --random-inputs draws it); a program\n"
    "                           with dynamic shapes (tensor<?x4xf32>) is compiled for them\n"
    "  --random-inputs[=SEED]   fill every parameter with seeded random values\n"
    "                           (floats in [-1,1), integers in [0,16), i1 0/1)\n"
    "  --output=@y.npy          write a result to a .npy file (one per result, in order);\n"
    "                           @y.bin writes the raw host bytes (any element type)\n"
    "  --fill-elided=zeros|random  values for dense_resource<__elided__> constants\n"
    "  --device=ID              device index or name substring (see --list-devices;\n"
    "                           default $VKHLO_DEVICE, else discrete > integrated > cpu)\n"
    "  --validation             enable VK_LAYER_KHRONOS_validation (also $VKHLO_VALIDATION=1);\n"
    "                           any validation message makes the run fail\n"
    "  --no-cache               do not use the SPIR-V disk cache\n"
    "  --no-fusion              one kernel per instruction\n"
    "  --dump-dir=DIR           write IR after each pass, the fusion plan (fusion.dot/.svg),\n"
    "                           every kernel's GLSL and SPIR-V disassembly, buffer assignment\n"
    "  --dump-after=PASS        with --dump-dir: IR only after PASS (expand, simplify, cse, dce, fusion)\n"
    "  --stats                  print compile statistics as 'key: value' lines\n"
    "  -o FILE.vkx              (compile) write the compiled executable to FILE.vkx\n"
    "  --weights=FILE           (compile -o) put the constants in FILE, mapped at load;\n"
    "                           (run FILE.vkx) where that file is, if not beside the .vkx\n"
    "  --emit-c=NAME            (compile) write NAME.c/NAME.h: the executable as a byte array,\n"
    "                           NAME_load() and a typed NAME_run() (NAME: a C identifier)\n"
    "  --print-outputs          print results even when the program has checks\n"
    "  --print-max=N            print at most N elements per result (default 4096, -1 all)\n"
    "  --repeat=N               execute N times (results of the last run); prints the\n"
    "                           wall time per execution (and device time with --profile)\n"
    "  --profile                time every dispatch on the device; print the kernels\n"
    "                           by total device time (all --repeat runs)\n"
    "  --tune                   (run, compile) tune first, as vkhlo tune does\n"
    "  --retune                 (tune, run, compile) time every kernel's candidates again,\n"
    "                           also those the tuning file has\n"
    "  --quiet                  print only failures\n";

static bool starts(const char *s, const char *prefix, const char **rest) {
  size_t n = strlen(prefix);
  if (strncmp(s, prefix, n) != 0) return false;
  if (rest) *rest = s + n;
  return true;
}

static int parse_args(int argc, char **argv, options_t *o) {
  memset(o, 0, sizeof *o);
  o->print_max = 4096;
  o->repeat = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      fputs(usage, stdout);
      exit(0);
    } else if (strcmp(a, "--version") == 0) {
      printf("vkhlo %s\n", VKHLO_VERSION_STRING);
      exit(0);
    } else if (strcmp(a, "--list-devices") == 0) {
      o->command = "list-devices";
    } else if (starts(a, "--function=", &v)) o->function = v;
    else if (starts(a, "--device=", &v)) o->device = v;
    else if (starts(a, "--input=", &v)) {
      if (o->input_count == MAX_ARGS) return fprintf(stderr, "vkhlo: too many --input\n"), 2;
      o->inputs[o->input_count++] = v;
    } else if (starts(a, "--output=", &v)) {
      if (o->output_count == MAX_ARGS) return fprintf(stderr, "vkhlo: too many --output\n"), 2;
      o->outputs[o->output_count++] = v;
    } else if (strcmp(a, "--random-inputs") == 0) {
      o->random_inputs = true;
    } else if (starts(a, "--random-inputs=", &v)) {
      o->random_inputs = true;
      o->seed = strtoull(v, NULL, 10);
    } else if (starts(a, "--fill-elided=", &v)) {
      if (strcmp(v, "zeros") == 0) o->fill_elided = 1;
      else if (strcmp(v, "random") == 0) o->fill_elided = 2;
      else return fprintf(stderr, "vkhlo: --fill-elided takes zeros or random\n"), 2;
    } else if (strcmp(a, "--no-fusion") == 0) o->no_fusion = true;
    else if (strcmp(a, "--validation") == 0) o->validation = true;
    else if (strcmp(a, "--no-cache") == 0) o->no_cache = true;
    else if (starts(a, "--dump-dir=", &v)) o->dump_dir = v;
    else if (starts(a, "--dump-after=", &v)) o->dump_after = v;
    else if (strcmp(a, "--stats") == 0) o->stats = true;
    else if (strcmp(a, "--profile") == 0) o->profile = true;
    else if (strcmp(a, "--print-outputs") == 0) o->print_outputs = true;
    else if (starts(a, "--print-max=", &v)) o->print_max = strtoll(v, NULL, 10);
    else if (starts(a, "--repeat=", &v)) o->repeat = atoi(v) > 0 ? atoi(v) : 1;
    else if (strcmp(a, "--quiet") == 0) o->quiet = true;
    else if (strcmp(a, "--tune") == 0) o->tune = true;
    else if (strcmp(a, "--retune") == 0) o->retune = true;
    else if (strcmp(a, "-o") == 0) {
      if (i + 1 == argc) return fprintf(stderr, "vkhlo: -o needs a FILE\n"), 2;
      o->output_vkx = argv[++i];
    } else if (starts(a, "--weights=", &v)) o->weights = v;
    else if (starts(a, "--emit-c=", &v)) o->emit_c = v;
    else if (a[0] == '-' && a[1] == '-') return fprintf(stderr, "vkhlo: unknown option %s\n%s", a, usage), 2;
    else if (!o->command) o->command = a;
    else if (!o->file) o->file = a;
    else return fprintf(stderr, "vkhlo: unexpected argument %s\n", a), 2;
  }
  if (!o->command) return fprintf(stderr, "%s", usage), 2;
  if (strcmp(o->command, "list-devices") != 0 && strcmp(o->command, "run") != 0 &&
      strcmp(o->command, "compile") != 0 && strcmp(o->command, "tune") != 0 &&
      strcmp(o->command, "deserialize") != 0)
    return fprintf(stderr, "vkhlo: unknown command '%s'\n%s", o->command, usage), 2;
  if (strcmp(o->command, "list-devices") != 0 && !o->file)
    return fprintf(stderr, "vkhlo: %s needs a FILE\n", o->command), 2;
  if ((o->output_vkx || o->weights) && strcmp(o->command, "list-devices") == 0)
    return fprintf(stderr, "vkhlo: -o and --weights go with compile or run\n"), 2;
  if ((o->output_vkx || o->emit_c) && strcmp(o->command, "compile") != 0)
    return fprintf(stderr, "vkhlo: -o and --emit-c go with compile\n"), 2;
  return 0;
}

static int report(vkhlo_status_t st) {
  fprintf(stderr, "vkhlo: error: %s\n", vkhlo_status_message(st));
  vkhlo_status_free(st);
  return 2;
}

static char *read_file(const char *path, size_t *out_len, vkhlo_status_t *out_st) {
  *out_st = NULL;
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    *out_st = vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "%s is a directory, not a program", path);
    return NULL;
  }
  FILE *f = fopen(path, "rb");
  if (!f) {
    *out_st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  size_t n;
  while (buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
    len += n;
    if (cap - len - 1 == 0) {
      char *p = realloc(buf, cap * 2);
      if (!p) { free(buf); buf = NULL; break; }
      buf = p;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf) {
    *out_st = vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory reading %s", path);
    return NULL;
  }
  buf[len] = 0;
  *out_len = len;
  return buf;
}

/* ---------------------------------------------------------------- inputs */

static uint64_t splitmix64(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint16_t float_to_half(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int exp = (int)((x >> 23) & 0xff) - 127 + 15;
  uint32_t man = x & 0x7fffff;
  if (exp <= 0) return (uint16_t)sign; /* tiny values flush to zero; inputs only */
  if (exp >= 31) return (uint16_t)(sign | 0x7c00);
  uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
  if ((man & 0x1fff) > 0x1000 || ((man & 0x1fff) == 0x1000 && (h & 1))) h++;
  return (uint16_t)h;
}

static uint16_t float_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

/* Stores |v| (integer |iv| for integer types) as element |i| of |data|. */
static void store(void *data, vkhlo_element_type_t t, int64_t i, double v, long long iv, double im) {
  unsigned char *p = data;
  switch ((int)t) {
    case VKHLO_PRED: p[i] = iv != 0; break;
    case VKHLO_S2: case VKHLO_S4: case VKHLO_S8: case VKHLO_U2: case VKHLO_U4: case VKHLO_U8:
      p[i] = (unsigned char)iv; break;
    case VKHLO_S16: case VKHLO_U16: { uint16_t x = (uint16_t)iv; memcpy(p + 2 * i, &x, 2); break; }
    case VKHLO_S32: case VKHLO_U32: { uint32_t x = (uint32_t)iv; memcpy(p + 4 * i, &x, 4); break; }
    case VKHLO_S64: case VKHLO_U64: { uint64_t x = (uint64_t)iv; memcpy(p + 8 * i, &x, 8); break; }
    case VKHLO_F16: { uint16_t x = float_to_half((float)v); memcpy(p + 2 * i, &x, 2); break; }
    case VKHLO_BF16: { uint16_t x = float_to_bf16((float)v); memcpy(p + 2 * i, &x, 2); break; }
    case VKHLO_F32: { float x = (float)v; memcpy(p + 4 * i, &x, 4); break; }
    case VKHLO_F64: memcpy(p + 8 * i, &v, 8); break;
    case VKHLO_C64: { float x[2] = {(float)v, (float)im}; memcpy(p + 8 * i, x, 8); break; }
    case VKHLO_C128: { double x[2] = {v, im}; memcpy(p + 16 * i, x, 16); break; }
    default: p[i] = (unsigned char)iv; break;
  }
}

static bool is_float(vkhlo_element_type_t t) { return t >= VKHLO_F4E2M1FN && t <= VKHLO_C128; }

static void *random_tensor(const vkhlo_tensor_type_t *t, uint64_t *state) {
  int64_t n = vkhlo_tensor_type_element_count(t);
  void *data = calloc(vkhlo_tensor_type_size_bytes(t) + 1, 1);
  if (!data) return NULL;
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = splitmix64(state);
    double f = (double)(r >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    double g = (double)(splitmix64(state) >> 11) / 9007199254740992.0 * 2.0 - 1.0;
    long long iv = t->element_type == VKHLO_PRED ? (long long)(r & 1) : (long long)(r % 16);
    store(data, t->element_type, i, f, iv, g);
  }
  return data;
}

/* "2x3xf32=random": random values of that type, drawn in parameter order
 * from the --random-inputs seed (as --random-inputs would draw them). */
static bool is_random_input(const char *spec) {
  size_t n = strlen(spec);
  return spec[0] != '@' && n > 7 && strcmp(spec + n - 7, "=random") == 0;
}

/* Parses "2x3xf32=1,2,3", "f32=5", "2x2xi32=[1 2][3 4]", "2x3xf32".  With
 * |out_data| NULL, only the type (no .npy data read, no values parsed; also
 * the type of "2x3xf32=random", whose values the caller draws). */
static vkhlo_status_t parse_input(const char *spec, vkhlo_tensor_type_t *type, void **out_data) {
  if (out_data) *out_data = NULL;
  if (spec[0] == '@') return npy_read(spec + 1, type, out_data);
  memset(type, 0, sizeof *type);
  const char *eq = strchr(spec, '=');
  size_t tlen = eq ? (size_t)(eq - spec) : strlen(spec);
  char tstr[256];
  if (tlen >= sizeof tstr) return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "input type too long: %s", spec);
  memcpy(tstr, spec, tlen);
  tstr[tlen] = 0;
  char *s = tstr;
  for (;;) {
    char *end;
    long long d = strtoll(s, &end, 10);
    if (end != s && *end == 'x') {
      if (d < 0 || type->rank == VKHLO_MAX_RANK)
        return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "bad input shape in '%s'", spec);
      type->dimensions[type->rank++] = d;
      s = end + 1;
    } else break;
  }
  if (!vkhlo_element_type_parse(s, &type->element_type))
    return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "unknown element type '%s' in input '%s'", s, spec);
  if (!out_data) return NULL;
  int64_t n = vkhlo_tensor_type_element_count(type);
  void *data = calloc(vkhlo_tensor_type_size_bytes(type) + 1, 1);
  if (!data) return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  if (eq) {
    const char *p = eq + 1;
    int64_t i = 0;
    while (*p) {
      if (strchr("[](), \t\n", *p)) { p++; continue; }
      char *end;
      double v, im = 0;
      long long iv;
      if (strncmp(p, "true", 4) == 0) { v = 1; iv = 1; end = (char *)p + 4; }
      else if (strncmp(p, "false", 5) == 0) { v = 0; iv = 0; end = (char *)p + 5; }
      else {
        v = strtod(p, &end);
        if (end == p) {
          free(data);
          return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "bad value at '%.20s' in input '%s'", p, spec);
        }
        iv = is_float(type->element_type) ? (long long)v : strtoll(p, NULL, 10);
        if (type->element_type == VKHLO_U64) iv = (long long)strtoull(p, NULL, 10);
      }
      if (i >= n) {
        free(data);
        return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "input '%.40s' has more than %" PRId64 " values", spec, n);
      }
      store(data, type->element_type, i++, v, iv, im);
      p = end;
    }
    if (i != n && !(i == 1 && n > 1)) {
      free(data);
      return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "input '%.40s' has %" PRId64 " values, its type needs %" PRId64, spec, i, n);
    }
    if (i == 1 && n > 1) { /* a single value fills the tensor */
      size_t es = vkhlo_element_type_size_bytes(type->element_type);
      for (int64_t k = 1; k < n; k++) memcpy((char *)data + k * es, data, es);
    }
  }
  *out_data = data;
  return NULL;
}

static bool same_type(const vkhlo_tensor_type_t *a, const vkhlo_tensor_type_t *b) {
  if (a->element_type != b->element_type || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dimensions[i] != b->dimensions[i]) return false;
  return true;
}

static void type_string(const vkhlo_tensor_type_t *t, char *buf, size_t size) {
  size_t pos = (size_t)snprintf(buf, size, "tensor<");
  for (int i = 0; i < t->rank && pos < size; i++)
    pos += (size_t)snprintf(buf + pos, size - pos, "%" PRId64 "x", t->dimensions[i]);
  if (pos < size) snprintf(buf + pos, size - pos, "%s>", vkhlo_element_type_name(t->element_type));
}

/* ------------------------------------------------------------------ run */

typedef struct message_sink {
  int count;
} message_sink_t;

static void on_validation_message(void *user, const char *message) {
  message_sink_t *sink = user;
  sink->count++;
  fprintf(stderr, "vkhlo: validation: %s\n", message);
}

/* DIR/fusion.dot -> DIR/fusion.svg with Graphviz's dot, when both exist;
 * silently nothing otherwise (the dump is a convenience). */
static void render_fusion_svg(const char *dir) {
  char dot_path[4096], svg_path[4096];
  snprintf(dot_path, sizeof dot_path, "%s/fusion.dot", dir);
  snprintf(svg_path, sizeof svg_path, "%s/fusion.svg", dir);
  FILE *f = fopen(dot_path, "r");
  if (!f) return;
  fclose(f);
  pid_t pid;
  char *const argv[] = {"dot", "-Tsvg", "-o", svg_path, dot_path, NULL};
  posix_spawn_file_actions_t actions;
  if (posix_spawn_file_actions_init(&actions) != 0) return;
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
  extern char **environ;
  if (posix_spawnp(&pid, "dot", &actions, NULL, argv, environ) == 0) {
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  posix_spawn_file_actions_destroy(&actions);
}

/* Runs one program text (one split).  Returns the exit status. */
static int by_device_ms(const void *pa, const void *pb) {
  const vkhlo_kernel_profile_t *a = pa, *b = pb;
  return a->device_ms > b->device_ms ? -1 : a->device_ms < b->device_ms;
}

static double wall_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int by_double(const void *pa, const void *pb) {
  double a = *(const double *)pa, b = *(const double *)pb;
  return a < b ? -1 : a > b;
}

/* --repeat=N: wall time per execution (median, minimum, first), and with
 * --profile the device time per execution next to it. */
static void print_wall_times(const vkhlo_executable_t *exe, double *ms, int n, bool profile) {
  double first = ms[0];
  qsort(ms, (size_t)n, sizeof *ms, by_double);
  double median = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
  printf("wall: %.3f ms per execution (median of %d; min %.3f, first %.3f)", median, n, ms[0], first);
  if (profile) {
    int k = vkhlo_executable_profile(exe, NULL, 0);
    vkhlo_kernel_profile_t *p = calloc((size_t)k + 1, sizeof *p);
    double total = 0;
    if (p) {
      vkhlo_executable_profile(exe, p, k);
      for (int i = 0; i < k; i++) total += p[i].device_ms;
      free(p);
    }
    printf(", device %.3f ms per execution (mean; profiling adds a barrier per dispatch)", total / n);
  }
  printf("\n");
}

/* --profile: the kernels by total device time, the most expensive first. */
static void print_profile(const vkhlo_executable_t *exe) {
  int n = vkhlo_executable_profile(exe, NULL, 0);
  vkhlo_kernel_profile_t *p = calloc((size_t)n + 1, sizeof *p);
  if (!p) return;
  vkhlo_executable_profile(exe, p, n);
  double total = 0;
  int64_t dispatches = 0;
  for (int i = 0; i < n; i++) {
    total += p[i].device_ms;
    dispatches += p[i].dispatches;
  }
  qsort(p, (size_t)n, sizeof *p, by_device_ms);
  printf("profile: %" PRId64 " dispatches, %.3f ms of device time\n", dispatches, total);
  printf("%12s %7s %10s  %s\n", "device_ms", "share", "dispatches", "kernel");
  for (int i = 0; i < n && p[i].dispatches; i++)
    printf("%12.3f %6.1f%% %10" PRId64 "  %s\n", p[i].device_ms, total > 0 ? 100.0 * p[i].device_ms / total : 0.0,
           p[i].dispatches, p[i].kernel);
  free(p);
}

static int run_exe(vkhlo_context_t *ctx, const options_t *o, vkhlo_executable_t *exe, const char *label);

/* The C type of a host element (vkhlo.h's host representation). */
static const char *c_type(vkhlo_element_type_t t) {
  switch (t) {
    case VKHLO_F32: return "float";
    case VKHLO_F64: return "double";
    case VKHLO_S8: return "int8_t";
    case VKHLO_S16: return "int16_t";
    case VKHLO_S32: return "int32_t";
    case VKHLO_S64: return "int64_t";
    case VKHLO_PRED: case VKHLO_U8: return "uint8_t";
    case VKHLO_U16: case VKHLO_F16: case VKHLO_BF16: return "uint16_t";
    case VKHLO_U32: return "uint32_t";
    case VKHLO_U64: return "uint64_t";
    case VKHLO_C64: return "float"; /* (real, imaginary) pairs */
    case VKHLO_C128: return "double";
    default: return "uint8_t";
  }
}

static void c_type_literal(FILE *f, const vkhlo_tensor_type_t *t) {
  fprintf(f, "{(vkhlo_element_type_t)%d, %d, {", (int)t->element_type, t->rank);
  for (int d = 0; d < t->rank; d++) fprintf(f, "%s%" PRId64, d ? ", " : "", t->dimensions[d]);
  fprintf(f, "%s}}", t->rank ? "" : "0");
}

static void c_type_comment(const vkhlo_tensor_type_t *t, char *buf, size_t size) {
  size_t k = (size_t)snprintf(buf, size, "tensor<");
  for (int d = 0; d < t->rank && k < size; d++) k += (size_t)snprintf(buf + k, size - k, "%" PRId64 "x", t->dimensions[d]);
  if (k < size) snprintf(buf + k, size - k, "%s>", vkhlo_element_type_name(t->element_type));
}

/* --emit-c=NAME: NAME.h declares NAME_vkx (the .vkx bytes), NAME_load and
 * NAME_run (one typed pointer per parameter, then per result); NAME.c
 * defines them over the public API. */
static vkhlo_status_t emit_c(const vkhlo_executable_t *exe, const char *name, const char *source) {
  const char *base = strrchr(name, '/');
  base = base ? base + 1 : name;
  if (!*base || (base[0] >= '0' && base[0] <= '9'))
    return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "--emit-c=%s: not a C identifier", name);
  for (const char *p = base; *p; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')))
      return vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "--emit-c=%s: not a C identifier", name);
  void *data;
  size_t size;
  vkhlo_status_t st = vkhlo_executable_serialize(exe, &data, &size);
  if (st) return st;
  int np = vkhlo_executable_parameter_count(exe), nr = vkhlo_executable_result_count(exe);
  char path[4096], comment[256];
  /* the signature, shared by both files */
  char *sig = NULL;
  size_t sig_len = 0;
  FILE *s = open_memstream(&sig, &sig_len);
  if (!s) {
    free(data);
    return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory");
  }
  fprintf(s, "vkhlo_status_t %s_run(vkhlo_executable_t *executable", base);
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_parameter_type(exe, i, &t);
    c_type_comment(&t, comment, sizeof comment);
    fprintf(s, ",\n    const %s *arg%d /* %s */", c_type(t.element_type), i, comment);
  }
  for (int i = 0; i < nr; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_executable_result_type(exe, i, &t);
    c_type_comment(&t, comment, sizeof comment);
    fprintf(s, ",\n    %s *result%d /* %s */", c_type(t.element_type), i, comment);
  }
  fprintf(s, ")");
  fclose(s);

  snprintf(path, sizeof path, "%s.h", name);
  FILE *h = fopen(path, "w");
  if (!h) st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
  if (h) {
    fprintf(h, "/* Generated by vkhlo compile --emit-c from %s: the compiled executable\n"
               " * (a .vkx file, api/vkx.h) as bytes, and a typed entry point. */\n"
               "#ifndef %s_H\n#define %s_H\n#include <stddef.h>\n#include <stdint.h>\n#include \"vkhlo/vkhlo.h\"\n\n"
               "extern const unsigned char %s_vkx[];\nextern const size_t %s_vkx_size;\n\n"
               "/* Loads the executable on |context| (vkhlo_executable_load: no parsing,\n"
               " * no shader compilation); the caller destroys it. */\n"
               "vkhlo_status_t %s_load(vkhlo_context_t *context, vkhlo_executable_t **out_executable);\n\n"
               "/* Runs |executable| once: uploads each argument (host representation,\n"
               " * dense row-major), executes, and reads each result into the caller's\n"
               " * memory.  Errors: as vkhlo_executable_execute. */\n%s;\n\n#endif\n",
            source, base, base, base, base, base, sig);
    if (fclose(h) != 0) st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s", path);
  }
  snprintf(path, sizeof path, "%s.c", name);
  FILE *c = st ? NULL : fopen(path, "w");
  if (!st && !c) st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s: %s", path, strerror(errno));
  if (c) {
    fprintf(c, "/* Generated by vkhlo compile --emit-c from %s. */\n#include \"%s.h\"\n\n", source, base);
    fprintf(c, "_Alignas(16) const unsigned char %s_vkx[%zu] = {", base, size);
    for (size_t i = 0; i < size; i++) fprintf(c, "%s%u,", i % 24 ? "" : "\n", ((const unsigned char *)data)[i]);
    fprintf(c, "\n};\nconst size_t %s_vkx_size = %zu;\n\n", base, size);
    fprintf(c, "vkhlo_status_t %s_load(vkhlo_context_t *context, vkhlo_executable_t **out_executable) {\n"
               "  return vkhlo_executable_load(context, %s_vkx, %s_vkx_size, NULL, out_executable);\n}\n\n",
            base, base, base);
    fprintf(c, "%s {\n", sig);
    fprintf(c, "  static const vkhlo_tensor_type_t parameter_types[%d] = {", np ? np : 1);
    for (int i = 0; i < np; i++) {
      vkhlo_tensor_type_t t;
      vkhlo_executable_parameter_type(exe, i, &t);
      fprintf(c, "%s", i ? ", " : "");
      c_type_literal(c, &t);
    }
    fprintf(c, "%s};\n  const void *args[%d] = {", np ? "" : "{0}", np ? np : 1);
    for (int i = 0; i < np; i++) fprintf(c, "%sarg%d", i ? ", " : "", i);
    fprintf(c, "%s};\n  void *results[%d] = {", np ? "" : "0", nr ? nr : 1);
    for (int i = 0; i < nr; i++) fprintf(c, "%sresult%d", i ? ", " : "", i);
    fprintf(c, "%s};\n", nr ? "" : "0");
    fprintf(c, "  vkhlo_buffer_t *in[%d] = {0}, *out[%d] = {0};\n"
               "  vkhlo_status_t st = NULL;\n"
               "  for (int i = 0; i < %d && !st; i++)\n"
               "    st = vkhlo_buffer_create(vkhlo_executable_context(executable), &parameter_types[i], args[i], &in[i]);\n"
               "  if (!st) st = vkhlo_executable_execute(executable, %d, in, %d, out);\n"
               "  for (int i = 0; i < %d && !st; i++) {\n"
               "    vkhlo_tensor_type_t t;\n"
               "    vkhlo_buffer_type(out[i], &t);\n"
               "    st = vkhlo_buffer_read(out[i], results[i], vkhlo_tensor_type_size_bytes(&t));\n"
               "  }\n"
               "  for (int i = 0; i < %d; i++) vkhlo_buffer_destroy(in[i]);\n"
               "  for (int i = 0; i < %d; i++) vkhlo_buffer_destroy(out[i]);\n"
               "  (void)args;\n  (void)results;\n  (void)parameter_types;\n"
               "  return st;\n}\n",
            np ? np : 1, nr ? nr : 1, np, np, nr, nr, np, nr);
    if (fclose(c) != 0) st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s", path);
  }
  free(sig);
  free(data);
  return st;
}

static int run_one(vkhlo_context_t *ctx, const options_t *o, const char *text, size_t len,
                   const char *label) {
  vkhlo_compile_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.function = o->function;
  copts.fill_elided = o->fill_elided;
  copts.seed = o->seed;
  copts.no_fusion = o->no_fusion;
  copts.dump_dir = o->dump_dir;
  copts.dump_after = o->dump_after;
  copts.tune = o->tune || strcmp(o->command, "tune") == 0;
  copts.retune = o->retune;
  /* the inputs' types, for programs with dynamic shapes (run_exe reads the values) */
  vkhlo_tensor_type_t *types = calloc((size_t)o->input_count + 1, sizeof *types);
  if (!types) return report(vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
  vkhlo_status_t st = NULL;
  for (int i = 0; i < o->input_count && !st; i++) st = parse_input(o->inputs[i], &types[i], NULL);
  copts.parameter_types = types;
  copts.parameter_type_count = o->input_count;
  vkhlo_executable_t *exe = NULL;
  if (!st) st = vkhlo_executable_compile(ctx, text, len, o->file, &copts, &exe);
  free(types);
  if (st) return report(st);
  return run_exe(ctx, o, exe, label);
}

/* vkhlo tune: the kernels with choices, what was timed and taken. */
static void print_tuning(vkhlo_context_t *ctx, const vkhlo_executable_t *exe, const char *label) {
  int n = vkhlo_executable_tuning(exe, NULL, 0);
  vkhlo_kernel_tuning_t *t = calloc((size_t)n + 1, sizeof *t);
  if (!t) return;
  vkhlo_executable_tuning(exe, t, n);
  vkhlo_device_description_t d;
  vkhlo_context_device(ctx, &d);
  int timed = 0;
  for (int i = 0; i < n; i++) timed += t[i].candidates_timed > 0;
  printf("%s: %d kernel shapes with choices, %d timed now, on %s\n", label, n, timed, d.name);
  if (n) {
    printf("| choice | from | kernels | candidates | default us/dispatch | chosen us/dispatch | speedup | key |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
  }
  for (int i = 0; i < n; i++) {
    printf("| %dx%d | %s | %d | %d |", t[i].a, t[i].b, t[i].tuned ? "tuned" : "default", t[i].kernels,
           t[i].candidates_timed);
    if (t[i].candidates_timed && t[i].chosen_us > 0)
      printf(" %.1f | %.1f | %.2fx |", t[i].default_us, t[i].chosen_us, t[i].default_us / t[i].chosen_us);
    else printf(" | | |");
    printf(" %s |\n", t[i].key);
  }
  free(t);
}

/* Prints the stats, saves (compile -o) or executes |exe| (taking it). */
static int run_exe(vkhlo_context_t *ctx, const options_t *o, vkhlo_executable_t *exe, const char *label) {
  vkhlo_status_t st = NULL;
  if (o->stats) {
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exe, &s);
    printf("instructions: %" PRId64 "\nfused_clusters: %" PRId64 "\nkernels: %" PRId64 "\npipelines: %" PRId64
           "\ndispatches: %" PRId64 "\nspirv_compiled: %" PRId64 "\nspirv_cache_hits: %" PRId64
           "\ncompile_ms: %.1f\nbytes_moved: %" PRId64 "\npeak_intermediate_bytes: %" PRId64
           "\nliveness_lower_bound_bytes: %" PRId64 "\nbarriers: %" PRId64 "\n",
           s.instructions, s.fused_clusters, s.kernels, s.pipelines, s.dispatches, s.spirv_compiled, s.spirv_cache_hits,
           s.compile_ms, s.bytes_moved, s.peak_intermediate_bytes, s.liveness_lower_bound_bytes, s.barriers);
  }
  if (o->dump_dir) render_fusion_svg(o->dump_dir);
  if (strcmp(o->command, "tune") == 0) {
    print_tuning(ctx, exe, label);
    vkhlo_executable_destroy(exe);
    return 0;
  }
  if (strcmp(o->command, "compile") == 0) {
    if (o->output_vkx) st = vkhlo_executable_save(exe, o->output_vkx, o->weights);
    if (!st && o->emit_c) st = emit_c(exe, o->emit_c, o->file);
    vkhlo_executable_destroy(exe);
    return st ? report(st) : 0;
  }
  int np = vkhlo_executable_parameter_count(exe), nr = vkhlo_executable_result_count(exe);
  int rc = 0;
  vkhlo_buffer_t **args = calloc((size_t)np + 1, sizeof *args);
  vkhlo_buffer_t **results = calloc((size_t)nr + 1, sizeof *results);
  if (!args || !results) {
    rc = report(vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
    goto done;
  }
  if (!o->random_inputs && o->input_count != np) {
    fprintf(stderr, "vkhlo: error: %s takes %d inputs, %d given (use --input=... per parameter or --random-inputs)\n",
            label, np, o->input_count);
    rc = 2;
    goto done;
  }
  uint64_t state = o->seed;
  for (int i = 0; i < np; i++) {
    vkhlo_tensor_type_t want, got;
    vkhlo_executable_parameter_type(exe, i, &want);
    void *data = NULL;
    if (i < o->input_count) {
      bool random = is_random_input(o->inputs[i]); /* its type given, its values drawn as below */
      st = parse_input(o->inputs[i], &got, random ? NULL : &data);
      if (!st && !same_type(&got, &want)) {
        char a[128], b[128];
        type_string(&got, a, sizeof a);
        type_string(&want, b, sizeof b);
        st = vkhlo_status_make(VKHLO_STATUS_INVALID_ARGUMENT, "input %d is %s, parameter %d is %s", i, a, i, b);
      }
      if (!st && random && !(data = random_tensor(&want, &state)))
        st = vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    } else {
      got = want;
      data = random_tensor(&want, &state);
      if (!data) st = vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory");
    }
    if (!st) st = vkhlo_buffer_create(ctx, &want, data, &args[i]);
    free(data);
    if (st) {
      rc = report(st);
      goto done;
    }
  }
  if (o->profile) vkhlo_executable_set_profiling(exe, true);
  double *wall_ms = calloc((size_t)o->repeat, sizeof *wall_ms);
  for (int r = 0; r < o->repeat; r++) {
    for (int i = 0; i < nr; i++) {
      vkhlo_buffer_destroy(results[i]);
      results[i] = NULL;
    }
    double t0 = wall_now_ms();
    st = vkhlo_executable_execute(exe, np, args, nr, results);
    if (wall_ms) wall_ms[r] = wall_now_ms() - t0;
    if (st) {
      free(wall_ms);
      rc = report(st);
      goto done;
    }
  }
  if (o->repeat > 1 && wall_ms) print_wall_times(exe, wall_ms, o->repeat, o->profile);
  free(wall_ms);
  if (o->profile) print_profile(exe);
  int checks = vkhlo_executable_check_count(exe), failed = 0, prints = 0;
  for (int i = 0; i < checks; i++) {
    vkhlo_check_result_t cr;
    vkhlo_executable_check_result(exe, i, &cr);
    if (cr.executed && !strcmp(cr.kind, "print")) { /* interpreter.print */
      size_t len = strlen(cr.detail);
      prints++;
      printf("print at %s: %s%s", cr.location, cr.detail, len && cr.detail[len - 1] == '\n' ? "" : "\n");
    } else if (!cr.passed) {
      failed++;
      printf("FAIL: check.%s at %s: %" PRId64 " mismatched elements, max abs error %.6g, max rel error %.6g; %s\n",
             cr.kind, cr.location, cr.mismatches, cr.max_abs_error, cr.max_rel_error, cr.detail);
    }
  }
  checks -= prints;
  if (checks && !o->quiet)
    printf("%s: %d of %d checks passed\n", label, checks - failed, checks);
  if (failed) rc = 1;
  for (int i = 0; i < nr; i++) {
    vkhlo_tensor_type_t t;
    vkhlo_buffer_type(results[i], &t);
    size_t size = vkhlo_tensor_type_size_bytes(&t);
    void *data = malloc(size + 1);
    if (!data) {
      rc = report(vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
      goto done;
    }
    st = vkhlo_buffer_read(results[i], data, size);
    if (!st && i < o->output_count) {
      const char *path = o->outputs[i][0] == '@' ? o->outputs[i] + 1 : o->outputs[i];
      size_t plen = strlen(path);
      if (plen > 4 && strcmp(path + plen - 4, ".bin") == 0) { /* raw host bytes, any element type */
        FILE *f = fopen(path, "wb");
        bool ok = f && fwrite(data, 1, size, f) == size;
        if (f && fclose(f) != 0) ok = false;
        if (!ok) st = vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot write %s", path);
      } else {
        st = npy_write(path, &t, data);
      }
    } else if (!st && !o->quiet && (checks == 0 || o->print_outputs) && t.element_type != VKHLO_TOKEN) {
      char *text;
      st = vkhlo_tensor_format(&t, data, o->print_max, &text);
      if (!st) {
        fputs(text, stdout);
        free(text);
      }
    }
    free(data);
    if (st) {
      rc = report(st);
      goto done;
    }
  }
done:
  for (int i = 0; args && i < np; i++) vkhlo_buffer_destroy(args[i]);
  for (int i = 0; results && i < nr; i++) vkhlo_buffer_destroy(results[i]);
  free(args);
  free(results);
  vkhlo_executable_destroy(exe);
  return rc;
}

static bool is_split_line(const char *p, const char *end) {
  const char *mark = "// -----";
  size_t n = strlen(mark);
  if ((size_t)(end - p) < n || strncmp(p, mark, n) != 0) return false;
  for (p += n; p < end && *p != '\n'; p++)
    if (*p != ' ' && *p != '\t' && *p != '\r' && *p != '-') return false;
  return true;
}

int main(int argc, char **argv) {
  options_t o;
  int rc = parse_args(argc, argv, &o);
  if (rc) return rc;
  if (strcmp(o.command, "list-devices") == 0) {
    vkhlo_device_description_t *d;
    int n;
    vkhlo_status_t st = vkhlo_list_devices(&d, &n);
    if (st) return report(st);
    for (int i = 0; i < n; i++)
      printf("%d: %s (%s, Vulkan %u.%u.%u, vendor 0x%04x device 0x%04x)\n", i, d[i].name, d[i].type,
             d[i].api_version_major, d[i].api_version_minor, d[i].api_version_patch, d[i].vendor_id,
             d[i].device_id);
    free(d);
    return 0;
  }
  size_t len;
  vkhlo_status_t st;
  char *text = read_file(o.file, &len, &st);
  if (!text) return report(st);
  if (strcmp(o.command, "deserialize") == 0) {
    char *mlir = NULL;
    size_t mlir_len = 0;
    st = vkhlo_portable_artifact_to_text(text, len, o.file, &mlir, &mlir_len);
    free(text);
    if (st) return report(st);
    fwrite(mlir, 1, mlir_len, stdout);
    free(mlir);
    return 0;
  }

  message_sink_t sink = {0};
  vkhlo_context_options_t copts;
  memset(&copts, 0, sizeof copts);
  copts.device = o.device;
  copts.enable_validation = o.validation;
  copts.message_fn = on_validation_message;
  copts.message_user = &sink;
  copts.disable_cache = o.no_cache;
  vkhlo_context_t *ctx;
  st = vkhlo_context_create(&copts, &ctx);
  if (st) {
    free(text);
    return report(st);
  }
  if (len >= 8 && memcmp(text, "VKHLOVKX", 8) == 0) { /* a saved executable */
    free(text);
    int rc2;
    vkhlo_executable_t *exe = NULL;
    vkhlo_load_options_t lopts = {o.weights};
    if (strcmp(o.command, "run") != 0) {
      fprintf(stderr, "vkhlo: error: %s is a compiled executable; use vkhlo run\n", o.file);
      rc2 = 2;
    } else {
      st = vkhlo_executable_load_file(ctx, o.file, &lopts, &exe);
      rc2 = st ? report(st) : run_exe(ctx, &o, exe, o.file);
    }
    int validation = vkhlo_context_validation_message_count(ctx);
    vkhlo_context_destroy(ctx);
    if (validation || sink.count) {
      fprintf(stderr, "vkhlo: error: %d validation messages\n", validation ? validation : sink.count);
      return 2;
    }
    return rc2;
  }
  if (o.output_vkx) { /* one program per .vkx */
    int programs = 0;
    for (const char *p = text; p && p < text + len; ) {
      const char *nl = memchr(p, '\n', (size_t)(text + len - p));
      if (is_split_line(p, text + len)) programs++;
      p = nl ? nl + 1 : NULL;
    }
    if (programs) {
      free(text);
      vkhlo_context_destroy(ctx);
      fprintf(stderr, "vkhlo: error: %s has %d '// -----' splits; -o saves one program\n", o.file, programs + 1);
      return 2;
    }
  }
  /* Split on "// -----" lines; blank out other splits so that line numbers hold. */
  const char *end = text + len;
  int splits = 0, failed = 0, errors = 0;
  const char *start = text;
  char *copy = malloc(len + 1);
  if (!copy) {
    free(text);
    vkhlo_context_destroy(ctx);
    return report(vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "out of memory"));
  }
  for (const char *p = text;; ) {
    const char *line_end = memchr(p, '\n', (size_t)(end - p));
    bool last = line_end == NULL;
    bool split = !last && is_split_line(p, end);
    if (split || (last && start < end)) {
      const char *stop = split ? p : end;
      /* copy: newlines of everything before |start|, then the split's text */
      size_t k = 0;
      for (const char *q = text; q < start; q++) copy[k++] = *q == '\n' ? '\n' : ' ';
      memcpy(copy + k, start, (size_t)(stop - start));
      k += (size_t)(stop - start);
      copy[k] = 0;
      bool blank = true;
      for (const char *q = start; q < stop && blank; q++) {
        if (*q == '/' && q + 1 < stop && q[1] == '/') {
          while (q < stop && *q != '\n') q++;
          continue;
        }
        if (*q != ' ' && *q != '\n' && *q != '\t' && *q != '\r') blank = false;
      }
      if (!blank) {
        char label[512];
        int line = 1;
        for (const char *q = text; q < start; q++) line += *q == '\n';
        snprintf(label, sizeof label, "%s:%d", o.file, line);
        int r = run_one(ctx, &o, copy, k, label);
        splits++;
        if (r == 1) failed++;
        if (r == 2) errors++;
      }
      if (last) break;
      start = line_end + 1;
    }
    if (last) break;
    p = line_end + 1;
  }
  free(copy);
  free(text);
  if (splits == 0) {
    fprintf(stderr, "vkhlo: error: %s:1:1: no program in the file\n", o.file);
    errors++;
  }
  int validation = vkhlo_context_validation_message_count(ctx);
  vkhlo_context_destroy(ctx);
  if (splits > 1) printf("%d splits: %d passed, %d failed, %d errors\n", splits, splits - failed - errors, failed, errors);
  if (validation || sink.count) {
    fprintf(stderr, "vkhlo: error: %d validation messages\n", validation ? validation : sink.count);
    return 2;
  }
  return errors ? 2 : failed ? 1 : 0;
}
