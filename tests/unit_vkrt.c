/*
 * Unit tests for vk_runtime: device enumeration and selection, buffers,
 * pipelines and command recording, on whatever Vulkan device is present
 * (Mesa's lavapipe on the CI machine).
 *
 * Every device is created with VK_LAYER_KHRONOS_validation (plus
 * synchronization validation) and a message_fn that counts messages; each
 * test ends by asserting that the count is 0.  A missing validation layer
 * fails the tests with a message saying so: running without it would hide
 * exactly the bugs these tests exist to catch.
 *
 * Kernels are compiled with codegen/spirv.c (cache off).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/spirv.h"
#include "vk_runtime/vkrt.h"
#include "vk_runtime/vkrt_internal.h" /* a vkrt buffer's VkBuffer, to wrap it */

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

/* In place: x[i] += 1 over one binding. */
static const char *kIncrementShader =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) buffer X { uint x[]; };\n"
    "layout(push_constant) uniform P { uint n; } p;\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i < p.n) x[i] += 1u;\n"
    "}\n";

typedef struct message_log {
  int count;
} message_log_t;

static void count_message(void *user, const char *message) {
  message_log_t *log = user;
  log->count++;
  fprintf(stderr, "[vulkan message %d] %s\n", log->count, message);
}

static void expect_ok(vkhlo_status_t s) {
  if (s) {
    fprintf(stderr, "unexpected error %s: %s\n", vkhlo_status_code_name(vkhlo_status_code(s)),
            vkhlo_status_message(s));
    vkhlo_status_free(s);
    fail();
  }
}

static void expect_code(vkhlo_status_t s, vkhlo_status_code_t code, const char *substring) {
  if (!s) {
    fprintf(stderr, "expected %s, got OK\n", vkhlo_status_code_name(code));
    fail();
  }
  if (vkhlo_status_code(s) != code || (substring && !strstr(vkhlo_status_message(s), substring))) {
    fprintf(stderr, "expected %s containing \"%s\", got %s: %s\n", vkhlo_status_code_name(code),
            substring ? substring : "", vkhlo_status_code_name(vkhlo_status_code(s)),
            vkhlo_status_message(s));
    vkhlo_status_free(s);
    fail();
  }
  vkhlo_status_free(s);
}

/* A validated device; fails the test clearly if the layer is missing. */
static vkrt_device_t *make_device(message_log_t *log, bool force_staging) {
  vkrt_device_options_t opts;
  memset(&opts, 0, sizeof opts);
  opts.enable_validation = true;
  opts.message_fn = count_message;
  opts.message_user = log;
  opts.force_staging = force_staging;
  vkrt_device_t *device = NULL;
  vkhlo_status_t s = vkrt_device_create(&opts, &device);
  if (s) {
    fprintf(stderr,
            "could not create a Vulkan device with validation (%s): %s\n"
            "These tests need VK_LAYER_KHRONOS_validation (Debian: vulkan-validationlayers) and a "
            "Vulkan driver (mesa-vulkan-drivers provides lavapipe).\n",
            vkhlo_status_code_name(vkhlo_status_code(s)), vkhlo_status_message(s));
    vkhlo_status_free(s);
    fail();
  }
  return device;
}

static uint32_t *compile(const char *name, const char *glsl, size_t *out_size) {
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = true};
  spirv_compiler_t *c = NULL;
  expect_ok(spirv_compiler_create(&opts, &c));
  uint32_t *words = NULL;
  expect_ok(spirv_compile_glsl(c, name, glsl, &words, out_size));
  spirv_compiler_destroy(c);
  return words;
}

static void test_enumerate(void **state) {
  (void)state;
  vkrt_device_info_t *infos = NULL;
  int count = 0;
  expect_ok(vkrt_enumerate_devices(&infos, &count));
  assert_true(count >= 1);
  for (int i = 0; i < count; i++) {
    fprintf(stderr, "device %d: %s (type %d, vendor 0x%x, Vulkan %u.%u.%u, driver %s: %s)\n", i,
            infos[i].name, (int)infos[i].type, infos[i].vendor_id, (infos[i].api_version >> 22) & 0x7f,
            (infos[i].api_version >> 12) & 0x3ff, infos[i].api_version & 0xfff, infos[i].driver_name,
            infos[i].driver_info);
    assert_true(infos[i].name[0] != '\0');
  }
  free(infos);
}

/* out[i] = the i-th 32-bit word of binding 0, read through its texel
 * views (binding 2: RGBA32UI texels, binding 3: R32UI) and directly, xor'd
 * (so a view that reads 0 or a wrong word shows), for i < n. */
static const char *kTexelShader =
    "#version 450\n"
    "layout(local_size_x = 64) in;\n"
    "layout(std430, set = 0, binding = 0) readonly buffer A { uint a[]; };\n"
    "layout(std430, set = 0, binding = 1) writeonly buffer C { uint c[]; };\n"
    "layout(set = 0, binding = 2) uniform usamplerBuffer at;\n"
    "layout(set = 0, binding = 3) uniform usamplerBuffer as;\n"
    "layout(push_constant) uniform P { uint n; };\n"
    "void main() {\n"
    "  uint i = gl_GlobalInvocationID.x;\n"
    "  if (i < n) c[i] = texelFetch(at, int(i / 4u))[i % 4u] ^ texelFetch(as, int(i)).x ^ a[i];\n"
    "}\n";

/* Texel views (vkrt_pipeline_create's texel_views, scalar_views): of a vkrt buffer at
 * offset 0 and at the storage alignment, and of a wrapped buffer (which
 * vkrt views through a copy, not knowing its usage); a range of 8 bytes
 * has no whole texel; a texel view of a binding the pipeline lacks. */
static void test_texel_views(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  const vkrt_caps_t *caps = vkrt_device_caps(d);
  if (!caps->texel_buffer_rgba32ui || !caps->texel_buffer_r32ui) {
    vkrt_pipeline_t *p = NULL;
    size_t size = 0;
    uint32_t *spirv = compile("texel", kTexelShader, &size);
    expect_code(vkrt_pipeline_create(d, spirv, size, 2, 1, 1, 4, &p), VKHLO_STATUS_UNIMPLEMENTED, "texel");
    free(spirv);
    vkrt_device_destroy(d);
    skip(); /* the device has no RGBA32UI texel buffers: nothing else to test */
  }
  size_t spirv_size = 0;
  uint32_t *spirv = compile("texel", kTexelShader, &spirv_size);
  vkrt_pipeline_t *p = NULL;
  expect_code(vkrt_pipeline_create(d, spirv, spirv_size, 2, 4, 1, 4, &p), VKHLO_STATUS_INVALID_ARGUMENT,
              "texel view of binding 2 of 2");
  expect_code(vkrt_pipeline_create(d, spirv, spirv_size, 2, 1, 8, 4, &p), VKHLO_STATUS_INVALID_ARGUMENT,
              "texel view of binding 3 of 2");
  expect_ok(vkrt_pipeline_create(d, spirv, spirv_size, 2, 1, 1, 4, &p));
  free(spirv);

  enum { N = 1000 };
  uint64_t align = caps->min_storage_buffer_offset_alignment;
  uint32_t *a = malloc((N + align) * sizeof *a), *c = malloc(N * sizeof *c);
  for (uint64_t i = 0; i < N + align; i++) a[i] = (uint32_t)(i * 2654435761u);
  vkrt_buffer_t *ba = NULL, *bc = NULL, *wrapped = NULL;
  expect_ok(vkrt_buffer_create(d, (N + align) * sizeof *a, &ba));
  expect_ok(vkrt_buffer_create(d, N * sizeof *c, &bc));
  expect_ok(vkrt_buffer_upload(ba, 0, a, (N + align) * sizeof *a));
  expect_ok(vkrt_buffer_wrap(d, (void *)ba->buffer, 0, (N + align) * sizeof *a, &wrapped));
  vkrt_cmd_t *cmd = NULL;
  expect_ok(vkrt_cmd_create(d, &cmd));
  const struct {
    vkrt_buffer_t *buffer;
    uint64_t offset_words;
  } cases[] = {{ba, 0}, {ba, align}, {wrapped, 0}, {wrapped, align}};
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    uint64_t off = cases[k].offset_words * sizeof *a; /* a multiple of the alignment */
    expect_ok(vkrt_cmd_begin(cmd));
    expect_ok(vkrt_cmd_fill(cmd, bc, 0, N * sizeof *c, 0));
    vkrt_cmd_barrier(cmd);
    vkrt_binding_t bindings[2] = {{cases[k].buffer, off, N * sizeof *a}, {bc, 0, N * sizeof *c}};
    uint32_t n = N, groups[3] = {(N + 63) / 64, 1, 1};
    expect_ok(vkrt_cmd_dispatch(cmd, p, 2, bindings, &n, sizeof n, groups));
    expect_ok(vkrt_cmd_submit_and_wait(cmd));
    expect_ok(vkrt_buffer_download(bc, 0, c, N * sizeof *c));
    for (int i = 0; i < N; i++)
      if (c[i] != a[cases[k].offset_words + (uint64_t)i])
        fail_msg("case %zu (%s, offset %llu): word %d is %u, not %u", k, k < 2 ? "own" : "wrapped",
                 (unsigned long long)off, i, c[i], a[cases[k].offset_words + (uint64_t)i]);
  }
  /* no whole texel */
  expect_ok(vkrt_cmd_begin(cmd));
  vkrt_binding_t small[2] = {{ba, 0, 8}, {bc, 0, N * sizeof *c}};
  uint32_t n = 2, groups[3] = {1, 1, 1};
  expect_code(vkrt_cmd_dispatch(cmd, p, 2, small, &n, sizeof n, groups), VKHLO_STATUS_INVALID_ARGUMENT,
              "too small for a texel view");
  expect_ok(vkrt_cmd_end(cmd));

  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(wrapped);
  vkrt_buffer_destroy(ba);
  vkrt_buffer_destroy(bc);
  vkrt_pipeline_destroy(p);
  free(a);
  free(c);
  vkrt_device_destroy(d);
  assert_int_equal(log.count, 0);
}

static void test_device_caps(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  const vkrt_caps_t *c = vkrt_device_caps(d);
  const vkrt_device_info_t *info = vkrt_device_info(d);
  fprintf(stderr,
          "%s (%s)\n  int64 %d float64 %d int16 %d int8 %d float16 %d storage8 %d storage16 %d\n"
          "  subgroup size %u arithmetic %d\n  workgroup count %u %u %u, size %u %u %u, "
          "invocations %u, shared %u bytes\n  storage range %u, max allocation %llu, offset "
          "alignment %llu, storage buffers/stage %u, push constants %u, sets %u\n",
          info->name, info->driver_info, c->shader_int64, c->shader_float64, c->shader_int16,
          c->shader_int8, c->shader_float16, c->storage_buffer_8bit, c->storage_buffer_16bit,
          c->subgroup_size, c->subgroup_arithmetic, c->max_compute_workgroup_count[0],
          c->max_compute_workgroup_count[1], c->max_compute_workgroup_count[2],
          c->max_compute_workgroup_size[0], c->max_compute_workgroup_size[1],
          c->max_compute_workgroup_size[2], c->max_compute_workgroup_invocations,
          c->max_compute_shared_memory_size, c->max_storage_buffer_range,
          (unsigned long long)c->max_memory_allocation_size,
          (unsigned long long)c->min_storage_buffer_offset_alignment,
          c->max_per_stage_descriptor_storage_buffers, c->max_push_constants_size,
          c->max_bound_descriptor_sets);
  assert_true(c->subgroup_size >= 1);
  assert_true(c->max_compute_workgroup_invocations >= 128);
  assert_true(c->max_push_constants_size >= 128);
  assert_true(c->min_storage_buffer_offset_alignment >= 1);
  assert_true(c->max_memory_allocation_size > 0);
  vkrt_device_destroy(d);
  assert_int_equal(log.count, 0);
}

/* c = a + b on the device, through upload/dispatch/download. */
static void run_add(bool force_staging) {
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, force_staging);
  size_t spirv_size = 0;
  uint32_t *spirv = compile("add", kAddShader, &spirv_size);
  vkrt_pipeline_t *p = NULL;
  expect_ok(vkrt_pipeline_create(d, spirv, spirv_size, 3, 0, 0, 4, &p));
  free(spirv);

  enum { N = 1000 };
  float *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *c = malloc(N * sizeof *c);
  for (int i = 0; i < N; i++) {
    a[i] = (float)i;
    b[i] = 0.5f * (float)i + 1.0f;
  }
  vkrt_buffer_t *ba = NULL, *bb = NULL, *bc = NULL;
  expect_ok(vkrt_buffer_create(d, N * sizeof(float), &ba));
  expect_ok(vkrt_buffer_create(d, N * sizeof(float), &bb));
  expect_ok(vkrt_buffer_create(d, N * sizeof(float), &bc));
  assert_int_equal(vkrt_buffer_size(ba), N * sizeof(float));
  expect_ok(vkrt_buffer_upload(ba, 0, a, N * sizeof(float)));
  expect_ok(vkrt_buffer_upload(bb, 0, b, N * sizeof(float)));

  vkrt_cmd_t *cmd = NULL;
  expect_ok(vkrt_cmd_create(d, &cmd));
  /* Twice, to check that a cmd can be begun again after a wait. */
  for (int round = 0; round < 2; round++) {
    expect_ok(vkrt_cmd_begin(cmd));
    expect_ok(vkrt_cmd_fill(cmd, bc, 0, N * sizeof(float), 0));
    vkrt_cmd_barrier(cmd);
    vkrt_binding_t bindings[3] = {
        {ba, 0, N * sizeof(float)}, {bb, 0, N * sizeof(float)}, {bc, 0, N * sizeof(float)}};
    uint32_t n = N;
    uint32_t groups[3] = {(N + 63) / 64, 1, 1};
    expect_ok(vkrt_cmd_dispatch(cmd, p, 3, bindings, &n, sizeof n, groups));
    expect_ok(vkrt_cmd_submit_and_wait(cmd));
    memset(c, 0, N * sizeof *c);
    expect_ok(vkrt_buffer_download(bc, 0, c, N * sizeof(float)));
    for (int i = 0; i < N; i++) assert_true(c[i] == a[i] + b[i]);
  }

  /* Partial download at an offset. */
  float tail[10];
  expect_ok(vkrt_buffer_download(bc, (N - 10) * sizeof(float), tail, sizeof tail));
  for (int i = 0; i < 10; i++) assert_true(tail[i] == a[N - 10 + i] + b[N - 10 + i]);

  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(ba);
  vkrt_buffer_destroy(bb);
  vkrt_buffer_destroy(bc);
  vkrt_pipeline_destroy(p);
  vkrt_device_destroy(d);
  free(a);
  free(b);
  free(c);
  assert_int_equal(log.count, 0);
}

static void test_add_mapped(void **state) {
  (void)state;
  run_add(false);
}

static void test_add_staged(void **state) {
  (void)state;
  run_add(true);
}

static void test_copy_fill(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  enum { N = 256 };
  vkrt_buffer_t *x = NULL, *y = NULL;
  expect_ok(vkrt_buffer_create(d, N * 4, &x));
  expect_ok(vkrt_buffer_create(d, N * 4, &y));
  uint32_t host[N];
  for (int i = 0; i < N; i++) host[i] = (uint32_t)i * 3u;
  expect_ok(vkrt_buffer_upload(y, 0, host, sizeof host));

  vkrt_cmd_t *cmd = NULL;
  expect_ok(vkrt_cmd_create(d, &cmd));
  expect_ok(vkrt_cmd_begin(cmd));
  expect_ok(vkrt_cmd_fill(cmd, x, 0, N * 4, 0xdeadbeefu));
  vkrt_cmd_barrier(cmd);
  /* y[16..48) -> x[100..132) */
  expect_ok(vkrt_cmd_copy(cmd, y, 16 * 4, x, 100 * 4, 32 * 4));
  vkrt_cmd_barrier(cmd);
  expect_ok(vkrt_cmd_fill(cmd, y, 0, 8 * 4, 7u));
  expect_ok(vkrt_cmd_submit_and_wait(cmd));

  uint32_t out[N];
  expect_ok(vkrt_buffer_download(x, 0, out, sizeof out));
  for (int i = 0; i < N; i++) {
    uint32_t want = (i >= 100 && i < 132) ? (uint32_t)(i - 100 + 16) * 3u : 0xdeadbeefu;
    assert_int_equal(out[i], want);
  }
  expect_ok(vkrt_buffer_download(y, 0, out, sizeof out));
  for (int i = 0; i < N; i++) assert_int_equal(out[i], i < 8 ? 7u : (uint32_t)i * 3u);

  /* Argument errors are reported, not recorded. */
  expect_ok(vkrt_cmd_begin(cmd));
  expect_code(vkrt_cmd_copy(cmd, x, 0, y, 8, N * 4), VKHLO_STATUS_INVALID_ARGUMENT, "out of range");
  expect_code(vkrt_cmd_fill(cmd, x, 2, 4, 0), VKHLO_STATUS_INVALID_ARGUMENT, "multiples of 4");
  expect_code(vkrt_cmd_fill(cmd, x, 0, N * 4 + 4, 0), VKHLO_STATUS_INVALID_ARGUMENT, "outside");
  expect_code(vkrt_cmd_begin(cmd), VKHLO_STATUS_INVALID_ARGUMENT, "already recording");
  expect_ok(vkrt_cmd_submit_and_wait(cmd)); /* empty submission is fine */
  expect_code(vkrt_cmd_submit_and_wait(cmd), VKHLO_STATUS_INVALID_ARGUMENT, "begin");
  expect_code(vkrt_buffer_upload(x, N * 4 - 4, host, 8), VKHLO_STATUS_INVALID_ARGUMENT, "outside");
  expect_code(vkrt_buffer_download(x, N * 4 + 1, out, 0), VKHLO_STATUS_INVALID_ARGUMENT, "outside");

  /* Size 0 rounds up to 16. */
  vkrt_buffer_t *z = NULL;
  expect_ok(vkrt_buffer_create(d, 0, &z));
  assert_int_equal(vkrt_buffer_size(z), 16);
  vkrt_buffer_destroy(z);

  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(x);
  vkrt_buffer_destroy(y);
  vkrt_device_destroy(d);
  assert_int_equal(log.count, 0);
}

/* Many dispatches in one recording: more descriptor sets than one pool holds. */
static void test_many_dispatches(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  size_t spirv_size = 0;
  uint32_t *spirv = compile("increment", kIncrementShader, &spirv_size);
  vkrt_pipeline_t *p = NULL;
  expect_ok(vkrt_pipeline_create(d, spirv, spirv_size, 1, 0, 0, 4, &p));
  free(spirv);

  enum { N = 100, DISPATCHES = 600 };
  vkrt_buffer_t *x = NULL;
  expect_ok(vkrt_buffer_create(d, N * 4, &x));
  vkrt_cmd_t *cmd = NULL;
  expect_ok(vkrt_cmd_create(d, &cmd));
  for (int round = 0; round < 2; round++) {
    expect_ok(vkrt_cmd_begin(cmd));
    expect_ok(vkrt_cmd_fill(cmd, x, 0, N * 4, 0));
    for (int i = 0; i < DISPATCHES; i++) {
      vkrt_cmd_barrier(cmd);
      vkrt_binding_t binding = {x, 0, N * 4};
      uint32_t n = N, groups[3] = {(N + 63) / 64, 1, 1};
      expect_ok(vkrt_cmd_dispatch(cmd, p, 1, &binding, &n, 4, groups));
    }
    expect_ok(vkrt_cmd_submit_and_wait(cmd));
    uint32_t out[N];
    expect_ok(vkrt_buffer_download(x, 0, out, sizeof out));
    for (int i = 0; i < N; i++) assert_int_equal(out[i], DISPATCHES);
  }

  /* Dispatch argument errors. */
  expect_ok(vkrt_cmd_begin(cmd));
  vkrt_binding_t binding = {x, 0, N * 4};
  uint32_t n = N, groups[3] = {1, 1, 1};
  expect_code(vkrt_cmd_dispatch(cmd, p, 0, NULL, &n, 4, groups), VKHLO_STATUS_INVALID_ARGUMENT,
              "bindings");
  expect_code(vkrt_cmd_dispatch(cmd, p, 1, &binding, &n, 8, groups), VKHLO_STATUS_INVALID_ARGUMENT,
              "push constants");
  vkrt_binding_t bad = {x, 4, N * 4};
  expect_code(vkrt_cmd_dispatch(cmd, p, 1, &bad, &n, 4, groups), VKHLO_STATUS_INVALID_ARGUMENT,
              "binding 0");
  expect_ok(vkrt_cmd_submit_and_wait(cmd));

  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(x);
  vkrt_pipeline_destroy(p);
  vkrt_device_destroy(d);
  assert_int_equal(log.count, 0);
}

static void test_select_device(void **state) {
  (void)state;
  vkrt_device_options_t opts;
  memset(&opts, 0, sizeof opts);
  vkrt_device_t *d = NULL;

  opts.selector = "no-such-gpu-anywhere";
  expect_code(vkrt_device_create(&opts, &d), VKHLO_STATUS_UNAVAILABLE, "available: 0: ");
  assert_null(d);
  opts.selector = "99";
  expect_code(vkrt_device_create(&opts, &d), VKHLO_STATUS_UNAVAILABLE, "\"99\"");
  assert_null(d);

  vkrt_device_info_t *infos = NULL;
  int count = 0;
  expect_ok(vkrt_enumerate_devices(&infos, &count));
  assert_true(count >= 1);
  opts.selector = "0";
  expect_ok(vkrt_device_create(&opts, &d));
  assert_string_equal(vkrt_device_info(d)->name, infos[0].name);
  vkrt_device_destroy(d);

  /* Case-insensitive substring of the name: the first word, upper-cased. */
  char word[64];
  size_t i = 0;
  for (; infos[0].name[i] && infos[0].name[i] != ' ' && i + 1 < sizeof word; i++)
    word[i] = (char)(infos[0].name[i] >= 'a' && infos[0].name[i] <= 'z' ? infos[0].name[i] - 32
                                                                         : infos[0].name[i]);
  word[i] = '\0';
  opts.selector = word;
  expect_ok(vkrt_device_create(&opts, &d));
  vkrt_device_destroy(d);

  /* Half-set external handles are rejected. */
  memset(&opts, 0, sizeof opts);
  opts.external_device = (void *)&opts;
  expect_code(vkrt_device_create(&opts, &d), VKHLO_STATUS_INVALID_ARGUMENT, "external");
  assert_null(d);
  free(infos);
}

static void test_bad_pipeline(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  uint32_t junk[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  vkrt_pipeline_t *p = NULL;
  expect_code(vkrt_pipeline_create(d, junk, sizeof junk, 1, 0, 0, 0, &p), VKHLO_STATUS_INVALID_ARGUMENT,
              "SPIR-V");
  assert_null(p);
  vkrt_device_destroy(d);
  assert_int_equal(log.count, 0);
}

/* The messenger really is wired up: a pipeline layout without the push
 * constant range the shader declares is a validation error. */
static void test_validation_messages_arrive(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *d = make_device(&log, false);
  size_t spirv_size = 0;
  uint32_t *spirv = compile("add", kAddShader, &spirv_size);
  vkrt_pipeline_t *p = NULL;
  fprintf(stderr, "(a validation error is expected next)\n");
  vkhlo_status_t s = vkrt_pipeline_create(d, spirv, spirv_size, 3, 0, 0, 0, &p);
  vkhlo_status_free(s);
  vkrt_pipeline_destroy(p);
  free(spirv);
  vkrt_device_destroy(d);
  assert_true(log.count >= 1);
}

/* External mode: a second vkrt device over the first one's VkDevice. */
static void test_external_device(void **state) {
  (void)state;
  message_log_t log = {0};
  vkrt_device_t *owner = make_device(&log, false);
  vkrt_vulkan_handles_t h;
  vkrt_device_vulkan_handles(owner, &h);
  assert_non_null(h.instance);
  assert_non_null(h.device);
  vkrt_device_options_t opts;
  memset(&opts, 0, sizeof opts);
  opts.external_instance = h.instance;
  opts.external_physical_device = h.physical_device;
  opts.external_device = h.device;
  opts.external_queue = h.queue;
  opts.external_queue_family_index = h.queue_family_index;
  opts.external_get_instance_proc_addr = h.get_instance_proc_addr;
  vkrt_device_t *guest = NULL;
  expect_ok(vkrt_device_create(&opts, &guest));
  assert_string_equal(vkrt_device_info(guest)->name, vkrt_device_info(owner)->name);
  assert_int_equal(vkrt_device_caps(guest)->subgroup_size, vkrt_device_caps(owner)->subgroup_size);

  vkrt_buffer_t *x = NULL;
  expect_ok(vkrt_buffer_create(guest, 64, &x));
  vkrt_cmd_t *cmd = NULL;
  expect_ok(vkrt_cmd_create(guest, &cmd));
  expect_ok(vkrt_cmd_begin(cmd));
  expect_ok(vkrt_cmd_fill(cmd, x, 0, 64, 42u));
  expect_ok(vkrt_cmd_submit_and_wait(cmd));
  uint32_t out[16];
  expect_ok(vkrt_buffer_download(x, 0, out, sizeof out));
  for (int i = 0; i < 16; i++) assert_int_equal(out[i], 42u);
  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(x);
  vkrt_device_destroy(guest); /* must leave the owner's objects alone */

  expect_ok(vkrt_buffer_create(owner, 64, &x));
  expect_ok(vkrt_cmd_create(owner, &cmd));
  expect_ok(vkrt_cmd_begin(cmd));
  expect_ok(vkrt_cmd_fill(cmd, x, 0, 64, 7u));
  expect_ok(vkrt_cmd_submit_and_wait(cmd));
  expect_ok(vkrt_buffer_download(x, 0, out, sizeof out));
  assert_int_equal(out[15], 7u);
  vkrt_cmd_destroy(cmd);
  vkrt_buffer_destroy(x);
  vkrt_device_destroy(owner);
  assert_int_equal(log.count, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_enumerate),       cmocka_unit_test(test_device_caps),
      cmocka_unit_test(test_add_mapped),      cmocka_unit_test(test_add_staged),
      cmocka_unit_test(test_copy_fill),       cmocka_unit_test(test_many_dispatches),
      cmocka_unit_test(test_select_device),   cmocka_unit_test(test_bad_pipeline),
      cmocka_unit_test(test_validation_messages_arrive),
      cmocka_unit_test(test_external_device),   cmocka_unit_test(test_texel_views),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
