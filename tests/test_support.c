/*
 * Linked into every test program.  Under -fsanitize=address:
 *  - LeakSanitizer uses the project's narrow suppressions (tests/lsan.supp:
 *    allocations inside the Vulkan driver stack only, never vkhlo's own);
 *  - the Vulkan loader dlcloses drivers and layers when an instance is
 *    destroyed, so their one-time allocations would be reported with
 *    "<unknown module>" frames that no suppression can name: the drivers
 *    and layers are pinned with RTLD_NODELETE at start-up so that the
 *    suppressions match them by module.
 * It also holds the helpers of tests/test_support.h.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <dirent.h>
#include <dlfcn.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "tests/test_support.h"
#include "api/internal.h" /* exe_element_value */

int test_for_each_file(const char *dir, const char *suffix, test_file_fn fn, void *user) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int files = 0;
  size_t ns = strlen(suffix);
  struct dirent *e;
  bool go_on = true;
  while (go_on && (e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < ns || strcmp(e->d_name + n - ns, suffix) != 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    size_t size;
    char *text = test_read_file(path, &size);
    if (!text) continue;
    go_on = fn(path, text, size, user);
    free(text);
    files++;
  }
  closedir(d);
  return files;
}

/* test_file_fn of test_dump_contains: |user| is the needle, set to NULL
 * once found. */
static bool find_needle(const char *path, const char *text, size_t size, void *user) {
  (void)path, (void)size;
  const char **needle = user;
  if (strstr(text, *needle)) *needle = NULL;
  return *needle != NULL;
}

bool test_dump_file_contains(const char *dir, const char *suffix, const char *needle) {
  test_for_each_file(dir, suffix, find_needle, &needle);
  return needle == NULL;
}

bool test_dump_contains(const char *dir, const char *needle) { return test_dump_file_contains(dir, ".comp", needle); }

void test_remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    unlink(path);
  }
  closedir(d);
  rmdir(dir);
}

void expect_ok(vkhlo_status_t st) {
  if (st) fail_msg("%s", vkhlo_status_message(st));
}

void test_expect_compile_error(vkhlo_context_t *ctx, const char *text, const char *file_name,
                               vkhlo_status_code_t code, ...) {
  vkhlo_executable_t *exe = (vkhlo_executable_t *)1;
  vkhlo_status_t st = vkhlo_executable_compile(ctx, text, strlen(text), file_name, NULL, &exe);
  if (!st) fail_msg("%s compiled; it should fail", file_name);
  assert_null(exe);
  const char *msg = vkhlo_status_message(st);
  if (vkhlo_status_code(st) != code) fail_msg("%s: code %d, want %d: %s", file_name, vkhlo_status_code(st), code, msg);
  va_list ap;
  va_start(ap, code);
  for (const char *needle; (needle = va_arg(ap, const char *)) != NULL;)
    if (!strstr(msg, needle)) fail_msg("%s: the message lacks \"%s\": %s", file_name, needle, msg);
  va_end(ap);
  vkhlo_status_free(st);
}

vkhlo_executable_t *test_compile(vkhlo_context_t *ctx, const char *text) {
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "test.mlir", NULL, &exe));
  return exe;
}

vkhlo_executable_t *test_reload(vkhlo_context_t *ctx, const vkhlo_executable_t *exe) {
  void *data;
  size_t size;
  expect_ok(vkhlo_executable_serialize(exe, &data, &size));
  vkhlo_executable_t *loaded = NULL;
  expect_ok(vkhlo_executable_load(ctx, data, size, NULL, &loaded));
  free(data);
  return loaded;
}

const char test_two_products_program[] =
    "func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x32xf32>, %w2: tensor<32x32xf32>) -> tensor<16x32xf32> {\n"
    "  %0 = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>\n"
    "  %1 = stablehlo.dot_general %0, %w2, contracting_dims = [1] x [0] : (tensor<16x32xf32>, tensor<32x32xf32>) -> tensor<16x32xf32>\n"
    "  return %1 : tensor<16x32xf32>\n"
    "}\n";

vkhlo_executable_t *test_compile_dumped(vkhlo_context_t *ctx, const char *text, char *dir) {
  assert_non_null(mkdtemp(dir));
  vkhlo_compile_options_t o;
  memset(&o, 0, sizeof o);
  o.dump_dir = dir;
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, text, strlen(text), "test.mlir", &o, &exe));
  return exe;
}

int validated_context_setup(void **state) {
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.enable_validation = true;
  vkhlo_context_t *ctx;
  vkhlo_status_t st = vkhlo_context_create(&o, &ctx);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return -1;
  }
  *state = ctx;
  return 0;
}

int validated_context_teardown(void **state) {
  vkhlo_context_t *ctx = *state;
  int messages = vkhlo_context_validation_message_count(ctx);
  vkhlo_context_destroy(ctx);
  return messages == 0 ? 0 : -1;
}

vkhlo_context_t *test_context_with_env(const char *name, const char *value) {
  setenv(name, value, 1);
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.enable_validation = true;
  vkhlo_context_t *ctx = NULL;
  vkhlo_status_t st = vkhlo_context_create(&o, &ctx);
  unsetenv(name);
  expect_ok(st);
  return ctx;
}

#if defined(__SANITIZE_ADDRESS__)
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "suppressions=" VKHLO_SOURCE_DIR "/tests/lsan.supp"; }

__attribute__((constructor)) static void pin_vulkan_libraries(void) {
  static const char *const libraries[] = {
      "libvulkan_lvp.so",          "libVkLayer_khronos_validation.so",
      "libVkLayer_MESA_device_select.so", "libvulkan_intel.so",
      "libvulkan_intel_hasvk.so",  "libvulkan_radeon.so",
  };
  for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++)
    (void)dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}
#endif

char *test_read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  long n = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
  if (n >= 0 && fseek(f, 0, SEEK_SET) == 0) buf = malloc((size_t)n + 1);
  if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) {
    buf[n] = 0;
    *out_size = (size_t)n;
  }
  return buf;
}

double test_uniform(uint32_t *state) {
  *state = *state * 1664525u + 1013904223u;
  return (double)(*state >> 8) / (double)(1u << 23) - 1.0;
}

void test_hpd(int b, int n, bool cplx, uint32_t seed, double complex *a, double complex *l) {
  double complex *m = malloc(sizeof *m * (size_t)n * n);
  assert_non_null(m);
  for (int q = 0; q < b; q++) {
    double complex *aq = a + (size_t)q * n * n, *lq = l + (size_t)q * n * n;
    for (int i = 0; i < n * n; i++) m[i] = test_uniform(&seed) + (cplx ? I * test_uniform(&seed) : 0);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double complex s = i == j ? 1 : 0;
        for (int k = 0; k < n; k++) s += m[i * n + k] * conj(m[j * n + k]) / n;
        aq[i * n + j] = s;
      }
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        if (j > i) {
          lq[i * n + j] = 0;
          continue;
        }
        double complex s = aq[i * n + j];
        for (int k = 0; k < j; k++) s -= lq[i * n + k] * conj(lq[j * n + k]);
        lq[i * n + j] = i == j ? csqrt(s) : s / lq[j * n + j];
      }
  }
  free(m);
}

double test_16bit_value(bool half, uint16_t h) {
  int64_t ordered;
  return exe_element_value(&h, half ? VKHLO_F16 : VKHLO_BF16, 0, 0, &ordered);
}
