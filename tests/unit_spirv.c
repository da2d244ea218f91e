/*
 * Unit tests for codegen/spirv.c: GLSL -> SPIR-V through glslang, spirv-val
 * and the optimizer, and the content-addressed disk cache.
 *
 * Each test that touches the cache makes its own directory with mkdtemp and
 * removes it afterwards, so the tests never read or write the user's cache.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "codegen/spirv.h"


static const char *kAddShader =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer A { float a[]; };\n"
    "layout(std430, set = 0, binding = 1) readonly buffer B { float b[]; };\n"
    "layout(std430, set = 0, binding = 2) writeonly buffer C { float c[]; };\n"
    "layout(push_constant) uniform P { uint n; } p;\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i < p.n) c[i] = a[i] + b[i];\n"
    "}\n";

static const char *kBadShader =
    "#version 450\n"
    "layout(local_size_x = 1) in;\n"
    "void main() {\n"
    "  float x = undefined_variable_here;\n"
    "}\n";

static char *make_temp_dir(void) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  char *dir = malloc(strlen(base) + 32);
  assert_non_null(dir);
  sprintf(dir, "%s/vkhlo-spirv-XXXXXX", base);
  assert_non_null(mkdtemp(dir));
  return dir;
}

/* Number of entries in |dir| (excluding . and ..); -1 if it does not exist. */
static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

/* Path of the single file in |dir| (caller frees). */
static char *only_file(const char *dir) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  char *path = NULL;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    path = malloc(strlen(dir) + strlen(e->d_name) + 2);
    sprintf(path, "%s/%s", dir, e->d_name);
    break;
  }
  closedir(d);
  assert_non_null(path);
  return path;
}

static void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char *path = malloc(strlen(dir) + strlen(e->d_name) + 2);
      sprintf(path, "%s/%s", dir, e->d_name);
      remove(path);
      free(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

static void expect_ok(vkhlo_status_t s) {
  if (s) {
    fprintf(stderr, "unexpected error %s: %s\n", vkhlo_status_code_name(vkhlo_status_code(s)),
            vkhlo_status_message(s));
    vkhlo_status_free(s);
    fail();
  }
}

static void test_compile_and_cache(void **state) {
  (void)state;
  char *dir = make_temp_dir();
  char *cache = malloc(strlen(dir) + 16);
  sprintf(cache, "%s/nested/cache", dir); /* created on demand (mkdir -p) */
  spirv_compiler_options_t opts = {.cache_dir = cache, .optimize = true};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));

  uint32_t *w1 = NULL, *w2 = NULL;
  size_t n1 = 0, n2 = 0;
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w1, &n1));
  assert_true(n1 >= 20);
  assert_int_equal(n1 % 4, 0);
  assert_int_equal(w1[0], 0x07230203u);
  assert_int_equal(w1[1], 0x00010300u); /* SPIR-V 1.3 */
  assert_int_equal(spirv_compiler_stats(c)->compiled, 1);
  assert_int_equal(spirv_compiler_stats(c)->cache_hits, 0);
  assert_int_equal(count_files(cache), 1);

  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w2, &n2));
  assert_int_equal(spirv_compiler_stats(c)->compiled, 1);
  assert_int_equal(spirv_compiler_stats(c)->cache_hits, 1);
  /* the file holds the words this compiler wrote: not validated again */
  assert_int_equal(spirv_compiler_stats(c)->cache_validations, 0);
  assert_int_equal(n1, n2);
  assert_memory_equal(w1, w2, n1);
  free(w2);
  spirv_compiler_destroy(c);

  /* A fresh compiler on the same directory hits too, validating the file
   * the first time it reads it only. */
  expect_ok(spirv_compiler_create(&opts, &c));
  for (int round = 1; round <= 2; round++) {
    expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w2, &n2));
    assert_int_equal(spirv_compiler_stats(c)->cache_hits, round);
    assert_int_equal(spirv_compiler_stats(c)->cache_validations, 1);
    assert_int_equal(spirv_compiler_stats(c)->compiled, 0);
    assert_memory_equal(w1, w2, n1);
    free(w2);
  }
  spirv_compiler_destroy(c);

  /* Other options give another key (optimize off). */
  spirv_compiler_options_t opts_noopt = {.cache_dir = cache, .optimize = false};
  expect_ok(spirv_compiler_create(&opts_noopt, &c));
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w2, &n2));
  assert_int_equal(spirv_compiler_stats(c)->compiled, 1);
  assert_int_equal(w2[0], 0x07230203u);
  assert_int_equal(count_files(cache), 2);
  fprintf(stderr, "add: %zu bytes optimized, %zu bytes unoptimized\n", n1, n2);
  assert_true(n1 < n2); /* the optimizer really ran */
  free(w2);
  spirv_compiler_destroy(c);

  free(w1);
  remove_tree(cache);
  char *nested = malloc(strlen(dir) + 16);
  sprintf(nested, "%s/nested", dir);
  rmdir(nested);
  free(nested);
  remove_tree(dir);
  free(cache);
  free(dir);
}

static void test_corrupt_cache_is_ignored(void **state) {
  (void)state;
  char *dir = make_temp_dir();
  spirv_compiler_options_t opts = {.cache_dir = dir, .optimize = true};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = NULL, *good = NULL;
  size_t n = 0, good_size = 0;
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &good, &good_size));
  char *path = only_file(dir);

  /* Garbage of a plausible size, a truncated module, then the module this
   * compiler wrote (and so knows valid) with its ID bound changed to 1: the
   * same size and header, other words, so validated again and refused. */
  for (int round = 0; round < 3; round++) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    if (round == 0) {
      fputs("this is not SPIR-V at all....", f);
    } else if (round == 1) {
      uint32_t header[6] = {0x07230203u, 0x00010300u, 0, 100, 0, 0x00020011u};
      fwrite(header, sizeof header, 1, f);
    } else {
      uint32_t *bad = malloc(good_size);
      memcpy(bad, good, good_size);
      bad[3] = 1;
      fwrite(bad, 1, good_size, f);
      free(bad);
    }
    fclose(f);
    expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
    assert_int_equal(n, good_size);
    assert_memory_equal(w, good, n);
    free(w);
  }
  free(good);
  /* the garbage fails the magic number check before spirv-val */
  assert_int_equal(spirv_compiler_stats(c)->cache_validations, 2);
  assert_int_equal(spirv_compiler_stats(c)->compiled, 4);
  assert_int_equal(spirv_compiler_stats(c)->cache_hits, 0);
  /* The good module was written back. */
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
  free(w);
  assert_int_equal(spirv_compiler_stats(c)->cache_hits, 1);
  spirv_compiler_destroy(c);
  free(path);
  remove_tree(dir);
  free(dir);
}

static void test_bad_glsl(void **state) {
  (void)state;
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = true};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = (uint32_t *)&opts; /* must be reset to NULL */
  size_t n = 99;
  vkhlo_status_t s = spirv_compile_glsl(c, "bad_kernel", kBadShader, &w, &n);
  assert_non_null(s);
  assert_null(w);
  assert_int_equal(n, 0);
  assert_int_equal(vkhlo_status_code(s), VKHLO_STATUS_INTERNAL);
  const char *msg = vkhlo_status_message(s);
  fprintf(stderr, "%s\n", msg);
  assert_non_null(strstr(msg, "glslang failed to compile kernel bad_kernel"));
  assert_non_null(strstr(msg, "undefined_variable_here")); /* glslang's log */
  assert_non_null(strstr(msg, ">    4 |"));                 /* numbered source line */
  vkhlo_status_free(s);
  assert_int_equal(spirv_compiler_stats(c)->compiled, 0);
  spirv_compiler_destroy(c);
}

static void test_disable_cache(void **state) {
  (void)state;
  char *dir = make_temp_dir();
  spirv_compiler_options_t opts = {.cache_dir = dir, .disable_cache = true, .optimize = false};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  for (int i = 0; i < 2; i++) {
    uint32_t *w = NULL;
    size_t n = 0;
    expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
    free(w);
  }
  assert_int_equal(spirv_compiler_stats(c)->compiled, 2);
  assert_int_equal(spirv_compiler_stats(c)->cache_hits, 0);
  assert_int_equal(count_files(dir), 0);
  spirv_compiler_destroy(c);
  remove_tree(dir);
  free(dir);
}

static void test_env_cache_dir(void **state) {
  (void)state;
  char *dir = make_temp_dir();
  const char *old = getenv("VKHLO_CACHE_DIR");
  char *saved = old ? strdup(old) : NULL;

  setenv("VKHLO_CACHE_DIR", dir, 1);
  spirv_compiler_t *c = NULL;
  spirv_compiler_options_t opts = {.optimize = true};
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = NULL;
  size_t n = 0;
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
  free(w);
  spirv_compiler_destroy(c);
  assert_int_equal(count_files(dir), 1);

  setenv("VKHLO_CACHE_DIR", "off", 1);
  expect_ok(spirv_compiler_create(&opts, &c));
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
  free(w);
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
  free(w);
  assert_int_equal(spirv_compiler_stats(c)->compiled, 2);
  spirv_compiler_destroy(c);

  if (saved) {
    setenv("VKHLO_CACHE_DIR", saved, 1);
    free(saved);
  } else {
    unsetenv("VKHLO_CACHE_DIR");
  }
  remove_tree(dir);
  free(dir);
}

static void test_disassemble(void **state) {
  (void)state;
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = true};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = NULL;
  size_t n = 0;
  expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
  char *text = spirv_disassemble(NULL, w, n);
  assert_non_null(text);
  assert_non_null(strstr(text, "OpEntryPoint GLCompute"));
  assert_non_null(strstr(text, "OpFAdd"));
  free(text);
  assert_null(spirv_disassemble(NULL, w, 6)); /* not a module */
  free(w);
  spirv_compiler_destroy(c);
}

static const char *kDoubleShader =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) buffer A { double a[]; };\n"
    "void main() { a[gl_GlobalInvocationID.x] = -a[gl_GlobalInvocationID.x]; }\n";

static const char *kIntShader =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) buffer A { uint a[]; };\n"
    "void main() { a[gl_GlobalInvocationID.x] += 1u; }\n";

static int count_occurrences(const char *text, const char *needle) {
  int n = 0;
  for (const char *p = text; (p = strstr(p, needle)) != NULL; p += strlen(needle)) n++;
  return n;
}

/* Compiles |glsl| with |widths| preserved; returns the disassembly. */
static char *compile_with_preserve(const char *glsl, unsigned widths) {
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = true,
                                   .signed_zero_inf_nan_preserve = widths};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = NULL;
  size_t n = 0;
  expect_ok(spirv_compile_glsl(c, "k", glsl, &w, &n));
  expect_ok(spirv_validate(c, "k", w, n));
  char *text = spirv_disassemble(NULL, w, n);
  assert_non_null(text);
  free(w);
  spirv_compiler_destroy(c);
  return text;
}

static void test_signed_zero_inf_nan_preserve(void **state) {
  (void)state;
  /* asked for and used: mode, capability, extension (SPIR-V 1.3) */
  char *t = compile_with_preserve(kAddShader, SPIRV_FLOAT32);
  assert_int_equal(count_occurrences(t, "OpExecutionMode %main SignedZeroInfNanPreserve 32"), 1);
  assert_int_equal(count_occurrences(t, "OpCapability SignedZeroInfNanPreserve"), 1);
  assert_int_equal(count_occurrences(t, "OpExtension \"SPV_KHR_float_controls\""), 1);
  free(t);
  /* not asked for */
  t = compile_with_preserve(kAddShader, 0);
  assert_null(strstr(t, "SignedZeroInfNanPreserve"));
  assert_null(strstr(t, "float_controls"));
  free(t);
  /* asked for widths the module does not use */
  t = compile_with_preserve(kAddShader, SPIRV_FLOAT16 | SPIRV_FLOAT64);
  assert_null(strstr(t, "SignedZeroInfNanPreserve"));
  free(t);
  t = compile_with_preserve(kIntShader, SPIRV_FLOAT16 | SPIRV_FLOAT32 | SPIRV_FLOAT64);
  assert_null(strstr(t, "SignedZeroInfNanPreserve"));
  free(t);
  /* only the widths asked for */
  t = compile_with_preserve(kDoubleShader, SPIRV_FLOAT64);
  assert_int_equal(count_occurrences(t, "SignedZeroInfNanPreserve 64"), 1);
  assert_null(strstr(t, "SignedZeroInfNanPreserve 32"));
  free(t);

  /* idempotent: a second pass adds nothing */
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = false,
                                   .signed_zero_inf_nan_preserve = SPIRV_FLOAT32};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *w = NULL;
  size_t n = 0;
  expect_ok(spirv_compile_glsl(c, "k", kAddShader, &w, &n));
  size_t before = n;
  expect_ok(spirv_add_signed_zero_inf_nan_preserve(NULL, &w, &n, SPIRV_FLOAT32));
  assert_int_equal(n, before);
  /* malformed input is rejected, not read past its end */
  size_t short_size = 8;
  vkhlo_status_t bad = spirv_add_signed_zero_inf_nan_preserve(NULL, &w, &short_size, SPIRV_FLOAT32);
  assert_non_null(bad);
  vkhlo_status_free(bad);
  free(w);
  spirv_compiler_destroy(c);
}

/* The preserve widths are part of the cache key: a module compiled without
 * the mode is not served to a compiler that wants it. */
static void test_preserve_is_in_cache_key(void **state) {
  (void)state;
  char *dir = make_temp_dir();
  for (unsigned widths = 0; widths <= SPIRV_FLOAT32; widths += SPIRV_FLOAT32) {
    spirv_compiler_options_t opts = {.cache_dir = dir, .optimize = true,
                                     .signed_zero_inf_nan_preserve = widths};
    spirv_compiler_t *c = NULL;
    expect_ok(spirv_compiler_create(&opts, &c));
    uint32_t *w = NULL;
    size_t n = 0;
    expect_ok(spirv_compile_glsl(c, "add", kAddShader, &w, &n));
    assert_int_equal(spirv_compiler_stats(c)->compiled, 1);
    assert_int_equal(spirv_compiler_stats(c)->cache_hits, 0);
    char *text = spirv_disassemble(NULL, w, n);
    assert_int_equal(strstr(text, "SignedZeroInfNanPreserve 32") != NULL, widths != 0);
    free(text);
    free(w);
    spirv_compiler_destroy(c);
  }
  assert_int_equal(count_files(dir), 2);
  remove_tree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_compile_and_cache), cmocka_unit_test(test_corrupt_cache_is_ignored),
      cmocka_unit_test(test_bad_glsl),          cmocka_unit_test(test_disable_cache),
      cmocka_unit_test(test_env_cache_dir),     cmocka_unit_test(test_disassemble),
      cmocka_unit_test(test_signed_zero_inf_nan_preserve),
      cmocka_unit_test(test_preserve_is_in_cache_key),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
