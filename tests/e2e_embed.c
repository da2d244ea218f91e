/*
 * Embedding (include/vkhlo/vkhlo.h, "Embedding") end to end: the test owns
 * the Vulkan instance (validation layer with synchronization validation
 * when installed), device, queue, VkBuffers, semaphores and command
 * buffers, as an application would, and checks:
 *   - vkhlo_buffer_wrap rejects a misaligned offset, a too-small range and
 *     a null VkBuffer;
 *   - vkhlo_executable_submit waits on a timeline value the host signals,
 *     signals another and a fence, writes the result in place into the
 *     caller's buffer at its offset (no copy recorded, the bytes around it
 *     untouched), and replays its recording on the next submit;
 *   - a result that is an argument is copied in (the copy that remains),
 *     at the wrapped offset;
 *   - vkhlo_executable_record into the caller's command buffer;
 *   - submit / record refuse a while loop whose predicate is read back with
 *     UNIMPLEMENTED, and submit runs one whose trip count the program
 *     fixes;
 *   - VkAllocationCallbacks given to vkhlo balance.
 * Every test fails on a validation message.
 */
#define _POSIX_C_SOURCE 200809L /* posix_memalign */
#define VK_NO_PROTOTYPES
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <volk.h>

#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

typedef struct app {
  VkInstance instance;
  VkDebugUtilsMessengerEXT messenger;
  VkPhysicalDevice pd;
  VkDevice device;
  VkQueue queue;
  uint32_t family;
  VkPhysicalDeviceMemoryProperties mp;
  VkCommandPool pool;
  vkhlo_context_t *ctx;
  int messages;
} app_t;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                               VkDebugUtilsMessageTypeFlagsEXT types,
                                               const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  app_t *a = user;
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    a->messages++;
    fprintf(stderr, "validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

static bool has_validation_layer(void) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, NULL);
  VkLayerProperties *layers = calloc(n ? n : 1, sizeof *layers);
  vkEnumerateInstanceLayerProperties(&n, layers);
  bool found = false;
  for (uint32_t i = 0; i < n; i++) found |= strcmp(layers[i].layerName, "VK_LAYER_KHRONOS_validation") == 0;
  free(layers);
  return found;
}

static int app_setup(void **state) {
  if (volkInitialize() != VK_SUCCESS) return -1;
  app_t *a = calloc(1, sizeof *a);
  bool validation = has_validation_layer();
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = 1, .pEnabledValidationFeatures = enables};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pNext = validation ? &features : NULL,
                              .pApplicationInfo = &app, .enabledLayerCount = validation ? 1 : 0,
                              .ppEnabledLayerNames = layers, .enabledExtensionCount = validation ? 1 : 0,
                              .ppEnabledExtensionNames = exts};
  if (vkCreateInstance(&ici, NULL, &a->instance) != VK_SUCCESS) return -1;
  volkLoadInstance(a->instance);
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_debug, .pUserData = a};
    if (vkCreateDebugUtilsMessengerEXT(a->instance, &mi, NULL, &a->messenger) != VK_SUCCESS) return -1;
  }
  uint32_t n = 8;
  VkPhysicalDevice pds[8];
  vkEnumeratePhysicalDevices(a->instance, &n, pds);
  for (uint32_t i = 0; i < n && !a->pd; i++) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pds[i], &props);
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t nf = 16;
    VkQueueFamilyProperties qf[16];
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, qf);
    for (uint32_t f = 0; f < nf && !a->pd; f++)
      if (qf[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        a->pd = pds[i];
        a->family = f;
      }
  }
  if (!a->pd) return -1;
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  vkGetPhysicalDeviceFeatures2(a->pd, &f2);
  if (!f12.timelineSemaphore) return -1;
  float priority = 1;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = a->family,
                                 .queueCount = 1, .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2, .queueCreateInfoCount = 1,
                            .pQueueCreateInfos = &qci};
  if (vkCreateDevice(a->pd, &dci, NULL, &a->device) != VK_SUCCESS) return -1;
  volkLoadDevice(a->device);
  vkGetDeviceQueue(a->device, a->family, 0, &a->queue);
  vkGetPhysicalDeviceMemoryProperties(a->pd, &a->mp);
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = a->family};
  if (vkCreateCommandPool(a->device, &pci, NULL, &a->pool) != VK_SUCCESS) return -1;
  vkhlo_external_device_t ext = {a->instance, a->pd, a->device, a->queue, a->family,
                                 (void *)(uintptr_t)vkGetInstanceProcAddr};
  vkhlo_status_t st = vkhlo_context_create_external(NULL, &ext, &a->ctx);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    return -1;
  }
  *state = a;
  return 0;
}

static int app_teardown(void **state) {
  app_t *a = *state;
  vkhlo_context_destroy(a->ctx);
  vkDestroyCommandPool(a->device, a->pool, NULL);
  vkDestroyDevice(a->device, NULL);
  if (a->messenger) vkDestroyDebugUtilsMessengerEXT(a->instance, a->messenger, NULL);
  vkDestroyInstance(a->instance, NULL);
  int messages = a->messages;
  free(a);
  if (messages) fprintf(stderr, "%d validation messages\n", messages);
  return messages ? -1 : 0;
}

/* A host-visible, coherent, mapped VkBuffer of the application. */
typedef struct app_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  unsigned char *mapped;
} app_buffer_t;

static app_buffer_t make_buffer(app_t *a, VkDeviceSize size) {
  app_buffer_t b = {0};
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size,
                             .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                      VK_BUFFER_USAGE_TRANSFER_DST_BIT};
  assert_int_equal(vkCreateBuffer(a->device, &info, NULL, &b.buffer), VK_SUCCESS);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(a->device, b.buffer, &req);
  VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < a->mp.memoryTypeCount && type == UINT32_MAX; i++)
    if ((req.memoryTypeBits & (1u << i)) && (a->mp.memoryTypes[i].propertyFlags & want) == want) type = i;
  assert_true(type != UINT32_MAX);
  VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = type};
  assert_int_equal(vkAllocateMemory(a->device, &alloc, NULL, &b.memory), VK_SUCCESS);
  assert_int_equal(vkBindBufferMemory(a->device, b.buffer, b.memory, 0), VK_SUCCESS);
  void *p;
  assert_int_equal(vkMapMemory(a->device, b.memory, 0, VK_WHOLE_SIZE, 0, &p), VK_SUCCESS);
  b.mapped = p;
  return b;
}

static void destroy_buffer(app_t *a, app_buffer_t *b) {
  vkUnmapMemory(a->device, b->memory);
  vkDestroyBuffer(a->device, b->buffer, NULL);
  vkFreeMemory(a->device, b->memory, NULL);
}


/* 2x3xf32: 24 bytes, not a multiple of 16 (the result slot's rounding). */
static const char add_program[] =
    "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
    "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
    "  %1 = stablehlo.multiply %0, %a : tensor<2x3xf32>\n"
    "  return %1 : tensor<2x3xf32>\n"
    "}\n";

static const vkhlo_tensor_type_t t23 = {VKHLO_F32, 2, {2, 3}};

static void expect_code(vkhlo_status_t st, vkhlo_status_code_t code, const char *substring) {
  assert_non_null(st);
  if (vkhlo_status_code(st) != code || !strstr(vkhlo_status_message(st), substring))
    fprintf(stderr, "unexpected: %s\n", vkhlo_status_message(st));
  assert_int_equal(vkhlo_status_code(st), code);
  assert_non_null(strstr(vkhlo_status_message(st), substring));
  vkhlo_status_free(st);
}

static void wrap_rejects_bad_ranges(void **state) {
  app_t *a = *state;
  uint64_t align = vkhlo_context_buffer_offset_alignment(a->ctx);
  assert_true(align >= 4);
  app_buffer_t b = make_buffer(a, 4 * align + 64);
  vkhlo_buffer_t *w = (vkhlo_buffer_t *)1;
  expect_code(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, align / 2, 24, &w), VKHLO_STATUS_INVALID_ARGUMENT,
              "minStorageBufferOffsetAlignment");
  assert_null(w);
  expect_code(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 4, 24, &w), VKHLO_STATUS_INVALID_ARGUMENT,
              "minStorageBufferOffsetAlignment");
  expect_code(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, align, 20, &w), VKHLO_STATUS_INVALID_ARGUMENT,
              "smaller");
  expect_code(vkhlo_buffer_wrap(a->ctx, &t23, NULL, 0, 24, &w), VKHLO_STATUS_INVALID_ARGUMENT, "null");
  /* 3 x i8 = 3 bytes: the range must hold the whole 32-bit word */
  vkhlo_tensor_type_t i8 = {VKHLO_S8, 1, {3}};
  expect_code(vkhlo_buffer_wrap(a->ctx, &i8, (void *)b.buffer, 0, 3, &w), VKHLO_STATUS_INVALID_ARGUMENT, "smaller");
  expect_ok(vkhlo_buffer_wrap(a->ctx, &i8, (void *)b.buffer, 0, 4, &w));
  vkhlo_buffer_destroy(w);
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 2 * align, 24, &w));
  vkhlo_tensor_type_t got;
  vkhlo_buffer_type(w, &got);
  assert_int_equal(got.element_type, VKHLO_F32);
  vkhlo_buffer_destroy(w); /* the wrapper only: the VkBuffer stays */
  destroy_buffer(a, &b);
}

static void submit_waits_and_signals_a_timeline(void **state) {
  app_t *a = *state;
  vkhlo_executable_t *exe = test_compile(a->ctx, add_program);
  uint64_t align = vkhlo_context_buffer_offset_alignment(a->ctx);
  uint64_t slot = (64 + align - 1) / align * align; /* argument 0 at 0, 1 at slot, the result at 2*slot */
  app_buffer_t b = make_buffer(a, 3 * slot + 64);
  memset(b.mapped, 0xab, 3 * slot + 64);
  vkhlo_buffer_t *args[2], *result;
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 0, 24, &args[0]));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, slot, 24, &args[1]));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 2 * slot, 24, &result));

  VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
  VkSemaphore timeline;
  assert_int_equal(vkCreateSemaphore(a->device, &sci, NULL, &timeline), VK_SUCCESS);
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  assert_int_equal(vkCreateFence(a->device, &fci, NULL, &fence), VK_SUCCESS);

  for (int round = 0; round < 3; round++) {
    float x[6], y[6], out[6];
    for (int i = 0; i < 6; i++) {
      x[i] = (float)(i + 1 + round);
      y[i] = (float)(i * i) - 2.5f * (float)round;
    }
    memcpy(b.mapped, x, sizeof x);
    memcpy(b.mapped + slot, y, sizeof y);
    uint64_t base = 2 * (uint64_t)round;
    void *sems[1] = {(void *)timeline};
    uint32_t stages[1] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT};
    uint64_t wait_value = base + 1, signal_value = base + 2;
    vkhlo_submit_info_t si = {1, sems, stages, &wait_value, 1, sems, &signal_value, (void *)fence};
    expect_ok(vkhlo_executable_submit(exe, 2, args, 1, &result, &si));
    /* not done before the host signals the wait value */
    uint64_t now = 0;
    assert_int_equal(vkGetSemaphoreCounterValue(a->device, timeline, &now), VK_SUCCESS);
    assert_true(now == base);
    VkSemaphoreSignalInfo signal = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_SIGNAL_INFO, .semaphore = timeline,
                                    .value = base + 1};
    assert_int_equal(vkSignalSemaphore(a->device, &signal), VK_SUCCESS);
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                              .pSemaphores = &timeline, .pValues = &signal_value};
    assert_int_equal(vkWaitSemaphores(a->device, &wi, UINT64_MAX), VK_SUCCESS);
    assert_int_equal(vkWaitForFences(a->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    assert_int_equal(vkResetFences(a->device, 1, &fence), VK_SUCCESS);
    memcpy(out, b.mapped + 2 * slot, sizeof out); /* the recording ends with a host barrier */
    for (int i = 0; i < 6; i++) assert_true(out[i] == (x[i] + y[i]) * x[i]);
    for (uint64_t i = 2 * slot + 24; i < 3 * slot; i++) assert_int_equal(b.mapped[i], 0xab); /* nothing past */
    for (uint64_t i = 24; i < slot; i++) assert_int_equal(b.mapped[i], 0xab);
    float read[6];
    expect_ok(vkhlo_buffer_read(result, read, sizeof read));
    assert_memory_equal(read, out, sizeof out);
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exe, &s);
    assert_int_equal(s.copy_commands, 0); /* arguments bound, result written in place */
    assert_int_equal(s.result_copies, 0);
    assert_int_equal(s.recordings, 1); /* recorded once, resubmitted */
    assert_int_equal(s.executions, round + 1);
  }
  expect_ok(vkhlo_executable_wait(exe));
  /* execute_into on the same wrapped buffers still works afterwards */
  expect_ok(vkhlo_executable_execute_into(exe, 2, args, 1, &result));
  vkDestroyFence(a->device, fence, NULL);
  vkDestroySemaphore(a->device, timeline, NULL);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_buffer_destroy(result);
  vkhlo_executable_destroy(exe);
  destroy_buffer(a, &b);
}

static void result_that_is_an_argument_is_copied(void **state) {
  app_t *a = *state;
  vkhlo_executable_t *exe = test_compile(a->ctx,
                                    "func.func @main(%a: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {\n"
                                    "  %0 = stablehlo.negate %a : tensor<2x3xf32>\n"
                                    "  return %a, %0 : tensor<2x3xf32>, tensor<2x3xf32>\n"
                                    "}\n");
  uint64_t align = vkhlo_context_buffer_offset_alignment(a->ctx);
  uint64_t slot = (32 + align - 1) / align * align;
  app_buffer_t b = make_buffer(a, 3 * slot);
  float x[6] = {1, -2, 3.5f, 4, 0, -0.25f}, out[6];
  memcpy(b.mapped, x, sizeof x);
  vkhlo_buffer_t *arg, *results[2];
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 0, 24, &arg));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, slot, 24, &results[0]));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 2 * slot, 24, &results[1]));
  expect_ok(vkhlo_executable_submit(exe, 1, &arg, 2, results, NULL));
  expect_ok(vkhlo_executable_wait(exe));
  memcpy(out, b.mapped + slot, sizeof out);
  assert_memory_equal(out, x, sizeof x);
  memcpy(out, b.mapped + 2 * slot, sizeof out);
  for (int i = 0; i < 6; i++) assert_true(out[i] == -x[i]);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_int_equal(s.result_copies, 1); /* result 0 is the argument: copied in */
  assert_int_equal(s.copy_commands, 1);
  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(results[0]);
  vkhlo_buffer_destroy(results[1]);
  vkhlo_executable_destroy(exe);
  destroy_buffer(a, &b);
}

/* A 5-byte i8 result: written in place (its words only) into a wrapped
 * range of 8 bytes; the caller's bytes after the range stay untouched. */
static void sub_word_results_stay_inside_their_words(void **state) {
  app_t *a = *state;
  vkhlo_executable_t *exe = test_compile(a->ctx,
                                    "func.func @main(%a: tensor<5xi8>) -> tensor<5xi8> {\n"
                                    "  %0 = stablehlo.add %a, %a : tensor<5xi8>\n"
                                    "  %1 = stablehlo.negate %0 : tensor<5xi8>\n"
                                    "  return %1 : tensor<5xi8>\n"
                                    "}\n");
  uint64_t align = vkhlo_context_buffer_offset_alignment(a->ctx);
  uint64_t slot = (16 + align - 1) / align * align;
  app_buffer_t b = make_buffer(a, 2 * slot + 64);
  memset(b.mapped, 0xcd, 2 * slot + 64);
  int8_t x[5] = {1, -2, 3, 100, -128}, out[5];
  memcpy(b.mapped, x, sizeof x);
  vkhlo_tensor_type_t t = {VKHLO_S8, 1, {5}};
  vkhlo_buffer_t *arg, *res;
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t, (void *)b.buffer, 0, 8, &arg));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t, (void *)b.buffer, slot, 8, &res));
  expect_ok(vkhlo_executable_execute_into(exe, 1, &arg, 1, &res));
  memcpy(out, b.mapped + slot, sizeof out);
  for (int i = 0; i < 5; i++) assert_int_equal(out[i], (int8_t)-(int8_t)(x[i] + x[i]));
  for (uint64_t i = slot + 8; i < 2 * slot + 64; i++) assert_int_equal(b.mapped[i], 0xcd);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_int_equal(s.result_copies, 0);
  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
  destroy_buffer(a, &b);
}

static void record_into_the_callers_command_buffer(void **state) {
  app_t *a = *state;
  vkhlo_executable_t *exe = test_compile(a->ctx, add_program);
  uint64_t align = vkhlo_context_buffer_offset_alignment(a->ctx);
  uint64_t slot = (32 + align - 1) / align * align;
  app_buffer_t b = make_buffer(a, 3 * slot);
  vkhlo_buffer_t *args[2], *result;
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 0, 24, &args[0]));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, slot, 24, &args[1]));
  expect_ok(vkhlo_buffer_wrap(a->ctx, &t23, (void *)b.buffer, 2 * slot, 24, &result));
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = a->pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1};
  VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
  VkFence fence;
  assert_int_equal(vkCreateFence(a->device, &fci, NULL, &fence), VK_SUCCESS);
  for (int round = 0; round < 2; round++) {
    float x[6], y[6], out[6];
    for (int i = 0; i < 6; i++) {
      x[i] = 0.5f * (float)i - (float)round;
      y[i] = 3.0f - (float)i;
    }
    memcpy(b.mapped, x, sizeof x);
    memcpy(b.mapped + slot, y, sizeof y);
    VkCommandBuffer cb;
    assert_int_equal(vkAllocateCommandBuffers(a->device, &cai, &cb), VK_SUCCESS);
    VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                      .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    assert_int_equal(vkBeginCommandBuffer(cb, &begin), VK_SUCCESS);
    expect_ok(vkhlo_executable_record(exe, (void *)cb, 2, args, 1, &result));
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &after, 0, NULL, 0, NULL);
    assert_int_equal(vkEndCommandBuffer(cb), VK_SUCCESS);
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    assert_int_equal(vkQueueSubmit(a->queue, 1, &submit, fence), VK_SUCCESS);
    assert_int_equal(vkWaitForFences(a->device, 1, &fence, VK_TRUE, UINT64_MAX), VK_SUCCESS);
    assert_int_equal(vkResetFences(a->device, 1, &fence), VK_SUCCESS);
    vkFreeCommandBuffers(a->device, a->pool, 1, &cb);
    memcpy(out, b.mapped + 2 * slot, sizeof out);
    for (int i = 0; i < 6; i++) assert_true(out[i] == (x[i] + y[i]) * x[i]);
    vkhlo_executable_stats_t s;
    vkhlo_executable_stats(exe, &s);
    assert_int_equal(s.copy_commands, 0);
  }
  expect_code(vkhlo_executable_record(exe, NULL, 2, args, 1, &result), VKHLO_STATUS_INVALID_ARGUMENT, "NULL");
  vkDestroyFence(a->device, fence, NULL);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_buffer_destroy(result);
  vkhlo_executable_destroy(exe);
  destroy_buffer(a, &b);
}

static void loops_cannot_be_submitted(void **state) {
  app_t *a = *state;
  vkhlo_executable_t *exe = test_compile(a->ctx,
                                    "func.func @main(%n: tensor<i32>) -> tensor<i32> {\n"
                                    "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
                                    "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
                                    "  %r = stablehlo.while(%i = %c0) : tensor<i32>\n"
                                    "    cond {\n"
                                    "      %p = stablehlo.compare LT, %i, %n : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                                    "      stablehlo.return %p : tensor<i1>\n"
                                    "    } do {\n"
                                    "      %j = stablehlo.add %i, %c1 : tensor<i32>\n"
                                    "      stablehlo.return %j : tensor<i32>\n"
                                    "    }\n"
                                    "  return %r : tensor<i32>\n"
                                    "}\n");
  vkhlo_tensor_type_t scalar = {VKHLO_S32, 0, {0}};
  int32_t n = 5;
  vkhlo_buffer_t *arg, *res;
  expect_ok(vkhlo_buffer_create(a->ctx, &scalar, &n, &arg));
  expect_ok(vkhlo_buffer_create(a->ctx, &scalar, NULL, &res));
  expect_code(vkhlo_executable_submit(exe, 1, &arg, 1, &res, NULL), VKHLO_STATUS_UNIMPLEMENTED, "while loop");
  VkCommandBuffer not_used = (VkCommandBuffer)(uintptr_t)0x1;
  expect_code(vkhlo_executable_record(exe, (void *)not_used, 1, &arg, 1, &res), VKHLO_STATUS_UNIMPLEMENTED,
              "while loop");
  /* the synchronous path runs it */
  expect_ok(vkhlo_executable_execute_into(exe, 1, &arg, 1, &res));
  int32_t got = 0;
  expect_ok(vkhlo_buffer_read(res, &got, sizeof got));
  assert_int_equal(got, 5);
  vkhlo_executable_destroy(exe);
  /* with the bound in the program (a counted loop) it is straight-line:
   * submitted, its 7 iterations recorded in a row */
  exe = test_compile(a->ctx,
                     "func.func @main(%n: tensor<i32>) -> tensor<i32> {\n"
                     "  %c0 = stablehlo.constant dense<0> : tensor<i32>\n"
                     "  %c1 = stablehlo.constant dense<1> : tensor<i32>\n"
                     "  %c7 = stablehlo.constant dense<7> : tensor<i32>\n"
                     "  %r:2 = stablehlo.while(%i = %c0, %s = %n) : tensor<i32>, tensor<i32>\n"
                     "    cond {\n"
                     "      %p = stablehlo.compare LT, %i, %c7 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
                     "      stablehlo.return %p : tensor<i1>\n"
                     "    } do {\n"
                     "      %j = stablehlo.add %i, %c1 : tensor<i32>\n"
                     "      %t = stablehlo.add %s, %i : tensor<i32>\n"
                     "      stablehlo.return %j, %t : tensor<i32>, tensor<i32>\n"
                     "    }\n"
                     "  return %r#1 : tensor<i32>\n"
                     "}\n");
  expect_ok(vkhlo_executable_submit(exe, 1, &arg, 1, &res, NULL));
  expect_ok(vkhlo_executable_wait(exe));
  expect_ok(vkhlo_buffer_read(res, &got, sizeof got));
  assert_int_equal(got, 5 + 0 + 1 + 2 + 3 + 4 + 5 + 6);
  vkhlo_executable_stats_t s;
  vkhlo_executable_stats(exe, &s);
  assert_int_equal(s.submissions, 1);
  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(res);
  vkhlo_executable_destroy(exe);
}

/* ---- VkAllocationCallbacks on a context vkhlo creates itself ---- */

typedef struct counts {
  long allocations, frees;
} counts_t;

/* Each block keeps its size and header length just before the pointer
 * (alignment up to 64). */
static void *VKAPI_CALL count_alloc(void *user, size_t size, size_t alignment, VkSystemAllocationScope scope) {
  (void)scope;
  counts_t *c = user;
  size_t header = alignment > 16 ? alignment : 16;
  if (header > 64) return NULL;
  unsigned char *p = NULL;
  if (posix_memalign((void **)&p, 64, header + size)) return NULL;
  memcpy(p + header - 2 * sizeof(size_t), &size, sizeof size);
  memcpy(p + header - sizeof(size_t), &header, sizeof header);
  c->allocations++;
  return p + header;
}

static void VKAPI_CALL count_free(void *user, void *p) {
  if (!p) return;
  size_t header;
  memcpy(&header, (unsigned char *)p - sizeof(size_t), sizeof header);
  ((counts_t *)user)->frees++;
  free((unsigned char *)p - header);
}

static void *VKAPI_CALL count_realloc(void *user, void *p, size_t size, size_t alignment,
                                      VkSystemAllocationScope scope) {
  if (!p) return count_alloc(user, size, alignment, scope);
  if (!size) {
    count_free(user, p);
    return NULL;
  }
  size_t old;
  memcpy(&old, (unsigned char *)p - 2 * sizeof(size_t), sizeof old);
  void *q = count_alloc(user, size, alignment, scope);
  if (!q) return NULL;
  memcpy(q, p, old < size ? old : size);
  count_free(user, p);
  return q; /* one allocation and one free: still balanced */
}

static void allocation_callbacks_balance(void **state) {
  (void)state;
  counts_t c = {0, 0};
  VkAllocationCallbacks cb = {.pUserData = &c, .pfnAllocation = count_alloc, .pfnReallocation = count_realloc,
                              .pfnFree = count_free};
  vkhlo_context_options_t o;
  memset(&o, 0, sizeof o);
  o.vulkan_allocation_callbacks = &cb;
  o.enable_validation = true;
  vkhlo_context_t *ctx;
  expect_ok(vkhlo_context_create(&o, &ctx));
  vkhlo_executable_t *exe = test_compile(ctx, add_program);
  float x[6] = {1, 2, 3, 4, 5, 6}, out[6];
  vkhlo_buffer_t *args[2], *res;
  expect_ok(vkhlo_buffer_create(ctx, &t23, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t23, x, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &res));
  expect_ok(vkhlo_buffer_read(res, out, sizeof out));
  for (int i = 0; i < 6; i++) assert_true(out[i] == 2 * x[i] * x[i]);
  vkhlo_buffer_destroy(res);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);
  int messages = vkhlo_context_validation_message_count(ctx);
  vkhlo_context_destroy(ctx);
  assert_int_equal(messages, 0);
  assert_true(c.allocations > 0);
  assert_int_equal(c.allocations, c.frees);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(wrap_rejects_bad_ranges),
      cmocka_unit_test(submit_waits_and_signals_a_timeline),
      cmocka_unit_test(result_that_is_an_argument_is_copied),
      cmocka_unit_test(sub_word_results_stay_inside_their_words),
      cmocka_unit_test(record_into_the_callers_command_buffer),
      cmocka_unit_test(loops_cannot_be_submitted),
      cmocka_unit_test(allocation_callbacks_balance),
  };
  return cmocka_run_group_tests(tests, app_setup, app_teardown);
}
