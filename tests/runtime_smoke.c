/*
 * runtime_smoke: the runtime-only library (libvkhlo_runtime.so, linked
 * alone, in C, with no C++ runtime) works on its own: element types,
 * devices, a validated context, buffers (upload, read back, the pool and
 * its zeroing), vkhlo_tensor_format on a small float type (the float
 * formats moved out of the IR: support/float_format.c).  Running an
 * executable needs one loaded from a file (the .vkx loader); compiling and
 * custom-call registration are in vkhlo, not here.
 *
 * Plain C (no cmocka), so a VKHLO_RUNTIME_ONLY build needs no test
 * framework either.  Exit status 0 on success, 1 with a message otherwise.
 */
#define _GNU_SOURCE /* RTLD_NODELETE */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vkhlo/vkhlo.h"

static int failures;

#define CHECK(cond)                                                          \
  do {                                                                       \
    if (!(cond)) {                                                           \
      fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      failures++;                                                            \
    }                                                                        \
  } while (0)

/* An OK status, or the message and a failure. */
static int ok(vkhlo_status_t st, int line) {
  if (!st) return 1;
  fprintf(stderr, "%s:%d: %s\n", __FILE__, line, vkhlo_status_message(st));
  vkhlo_status_free(st);
  failures++;
  return 0;
}
#define OK(expr) ok((expr), __LINE__)

#if defined(__SANITIZE_ADDRESS__)
/* As tests/test_support.c: the project's LeakSanitizer suppressions, and
 * the Vulkan drivers and layers pinned so that they can match by module. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "suppressions=" VKHLO_SOURCE_DIR "/tests/lsan.supp"; }
__attribute__((constructor)) static void pin_vulkan_libraries(void) {
  static const char *const libraries[] = {"libvulkan_lvp.so", "libVkLayer_khronos_validation.so",
                                          "libVkLayer_MESA_device_select.so"};
  for (size_t i = 0; i < sizeof libraries / sizeof libraries[0]; i++)
    (void)dlopen(libraries[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
}
#endif

static void test_element_types(void) {
  vkhlo_element_type_t t = VKHLO_F32;
  CHECK(vkhlo_element_type_size_bytes(VKHLO_F16) == 2);
  CHECK(vkhlo_element_type_size_bytes(VKHLO_C128) == 16);
  CHECK(strcmp(vkhlo_element_type_name(VKHLO_BF16), "bf16") == 0);
  CHECK(strcmp(vkhlo_element_type_name(VKHLO_C64), "complex<f32>") == 0);
  CHECK(vkhlo_element_type_parse("ui8", &t) && t == VKHLO_U8);
  CHECK(vkhlo_element_type_parse("si32", &t) && t == VKHLO_S32);
  CHECK(vkhlo_element_type_parse("f8E4M3FN", &t) && t == VKHLO_F8E4M3FN);
  CHECK(!vkhlo_element_type_parse("f33", &t));
  CHECK(!vkhlo_element_type_parse("si", &t));
  vkhlo_tensor_type_t type = {VKHLO_S16, 3, {2, 3, 4}};
  CHECK(vkhlo_tensor_type_element_count(&type) == 24);
  CHECK(vkhlo_tensor_type_size_bytes(&type) == 48);
}

static void test_format_small_floats(void) {
  /* f8E4M3FN (bias 7): 0x38 = 1.0, 0xC4 = -3.0 (1.5 * 2^1), 0x7F = NaN,
   * 0x01 = 2^-9 (the smallest subnormal) */
  const unsigned char bits[4] = {0x38, 0xC4, 0x7F, 0x01};
  vkhlo_tensor_type_t type = {VKHLO_F8E4M3FN, 1, {4}};
  char *text = NULL;
  if (!OK(vkhlo_tensor_format(&type, bits, -1, &text))) return;
  CHECK(strstr(text, "tensor<4xf8E4M3FN>") != NULL);
  CHECK(strstr(text, "[1, -3, nan, 0.001953125]") != NULL);
  if (failures) fprintf(stderr, "vkhlo_tensor_format gave:\n%s", text);
  free(text);
}

static void test_context_and_buffers(void) {
  vkhlo_device_description_t *devices = NULL;
  int count = 0;
  if (!OK(vkhlo_list_devices(&devices, &count))) return;
  CHECK(count >= 1);
  free(devices);

  vkhlo_context_options_t options;
  memset(&options, 0, sizeof options);
  options.enable_validation = true;
  options.cache_dir = "off";
  vkhlo_context_t *ctx = NULL;
  if (!OK(vkhlo_context_create(&options, &ctx))) return;
  vkhlo_device_description_t device;
  vkhlo_context_device(ctx, &device);
  CHECK(device.name[0] != 0);
  CHECK(device.api_version_major == 1);

  /* upload and read back */
  const float data[6] = {1.5f, -2.0f, 0.0f, 3.25f, 1e30f, -1e-30f};
  vkhlo_tensor_type_t type = {VKHLO_F32, 2, {2, 3}};
  vkhlo_buffer_t *b = NULL;
  if (OK(vkhlo_buffer_create(ctx, &type, data, &b))) {
    float back[6] = {0};
    if (OK(vkhlo_buffer_read(b, back, sizeof back))) CHECK(memcmp(back, data, sizeof data) == 0);
    vkhlo_tensor_type_t got;
    vkhlo_buffer_type(b, &got);
    CHECK(got.element_type == VKHLO_F32 && got.rank == 2 && got.dimensions[0] == 2 && got.dimensions[1] == 3);
    /* a read of the wrong size is refused */
    vkhlo_status_t st = vkhlo_buffer_read(b, back, sizeof back - 4);
    CHECK(st && vkhlo_status_code(st) == VKHLO_STATUS_INVALID_ARGUMENT);
    vkhlo_status_free(st);
    /* overwritten in place, read back; a write of the wrong size is refused */
    const float other[6] = {-7.0f, 0.5f, 1e-3f, 2.0f, -0.0f, 42.0f};
    if (OK(vkhlo_buffer_write(b, other, sizeof other)) && OK(vkhlo_buffer_read(b, back, sizeof back)))
      CHECK(memcmp(back, other, sizeof other) == 0);
    st = vkhlo_buffer_write(b, other, sizeof other + 4);
    CHECK(st && vkhlo_status_code(st) == VKHLO_STATUS_INVALID_ARGUMENT);
    vkhlo_status_free(st);
    vkhlo_buffer_destroy(b);
  }

  /* the same size again comes from the pool, and a buffer made without
   * data reads as zeros even so */
  vkhlo_memory_stats_t before, after;
  vkhlo_context_memory_stats(ctx, &before);
  CHECK(before.pooled_buffers == 1);
  vkhlo_tensor_type_t same_bytes = {VKHLO_S32, 1, {6}};
  if (OK(vkhlo_buffer_create(ctx, &same_bytes, NULL, &b))) {
    vkhlo_context_memory_stats(ctx, &after);
    CHECK(after.pool_reuses == before.pool_reuses + 1);
    CHECK(after.device_allocations_made == before.device_allocations_made);
    int32_t back[6] = {1, 1, 1, 1, 1, 1};
    if (OK(vkhlo_buffer_read(b, back, sizeof back)))
      for (int i = 0; i < 6; i++) CHECK(back[i] == 0);
    vkhlo_buffer_destroy(b);
  }

  /* a bad tensor type is an error, not a crash */
  vkhlo_tensor_type_t bad = {VKHLO_F32, 1, {-1}};
  vkhlo_status_t st = vkhlo_buffer_create(ctx, &bad, NULL, &b);
  CHECK(st && vkhlo_status_code(st) == VKHLO_STATUS_INVALID_ARGUMENT && b == NULL);
  vkhlo_status_free(st);

  CHECK(vkhlo_context_validation_message_count(ctx) == 0);
  vkhlo_context_destroy(ctx);
}

int main(void) {
  test_element_types();
  test_format_small_floats();
  test_context_and_buffers();
  if (failures) {
    fprintf(stderr, "runtime_smoke: %d check(s) failed\n", failures);
    return 1;
  }
  printf("runtime_smoke: ok\n");
  return 0;
}
