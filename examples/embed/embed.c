/*
 * Embedding vkhlo in a host application that owns all the Vulkan objects
 * (what a game engine does): this program creates its own VkInstance (with
 * the Khronos validation layer and its synchronization validation when the
 * layer is installed), VkDevice, queue, VkBuffers, command buffers and a
 * timeline semaphore, then
 *
 *   - makes a vkhlo context on them (vkhlo_context_create_external), with
 *     its own VkAllocationCallbacks and its own device-memory allocator
 *     (both count calls, and must balance at the end);
 *   - compiles a model (argv[1], default examples/mlp.mlir: 2x4 f32 ->
 *     2x3 f32 softmax of a two-layer perceptron);
 *   - wraps ranges of ONE VkBuffer of its own as the model's argument and
 *     result (vkhlo_buffer_wrap, offsets aligned to
 *     minStorageBufferOffsetAlignment);
 *   - runs the model once per frame for 100 frames:
 *       even frames: upload copy in its command buffer -> signal timeline
 *         3f+1 -> vkhlo_executable_submit waits 3f+1, signals 3f+2 ->
 *         readback copy waits 3f+2, signals 3f+3 -> host waits 3f+3;
 *       odd frames: one command buffer of its own holding the upload copy,
 *         vkhlo_executable_record's commands and the readback copy, with
 *         the barriers vkhlo.h asks for;
 *   - checks every frame's result against a CPU computation of the same
 *     model (relative error <= 1e-5), and that vkhlo recorded no copy for
 *     the caller's argument and result (vkhlo_executable_stats:
 *     copy_commands and result_copies are 0);
 *   - fails on any validation message.
 *
 * Exit status 0 on success, 1 on a wrong result or validation message,
 * 2 on an error.  Usage: embed [MODEL.mlir] [FRAMES]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <volk.h>

#include "vkhlo/vkhlo.h"

#define CHECK_VK(call)                                                              \
  do {                                                                              \
    VkResult r_ = (call);                                                           \
    if (r_ != VK_SUCCESS) {                                                         \
      fprintf(stderr, "embed: %s failed: %d (line %d)\n", #call, (int)r_, __LINE__); \
      exit(2);                                                                      \
    }                                                                               \
  } while (0)

static void check_vkhlo(vkhlo_status_t st, const char *what) {
  if (!st) return;
  fprintf(stderr, "embed: %s: %s\n", what, vkhlo_status_message(st));
  vkhlo_status_free(st);
  exit(2);
}

/* ---- validation messages ---- */

static int validation_messages;

static VKAPI_ATTR VkBool32 VKAPI_CALL on_debug(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                               VkDebugUtilsMessageTypeFlagsEXT types,
                                               const VkDebugUtilsMessengerCallbackDataEXT *data, void *user) {
  (void)types;
  (void)user;
  if (severity & (VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT)) {
    validation_messages++;
    fprintf(stderr, "embed: validation: %s\n", data->pMessage);
  }
  return VK_FALSE;
}

/* ---- the application's VkAllocationCallbacks: malloc with a count ---- */

typedef struct counting_allocator {
  long allocations, frees, reallocations;
} counting_allocator_t;

/* Keeps the size in a header aligned to the request's alignment (<= 64). */
static void *VKAPI_CALL app_alloc(void *user, size_t size, size_t alignment, VkSystemAllocationScope scope) {
  (void)scope;
  counting_allocator_t *c = user;
  size_t header = alignment > 16 ? alignment : 16;
  if (header > 64) return NULL;
  unsigned char *p = aligned_alloc(64, (header + size + 63) / 64 * 64);
  if (!p) return NULL;
  memcpy(p + header - sizeof(size_t) * 2, &size, sizeof size);
  memcpy(p + header - sizeof(size_t), &header, sizeof header);
  c->allocations++;
  return p + header;
}

static void VKAPI_CALL app_free(void *user, void *memory) {
  if (!memory) return;
  counting_allocator_t *c = user;
  size_t header;
  memcpy(&header, (unsigned char *)memory - sizeof(size_t), sizeof header);
  c->frees++;
  free((unsigned char *)memory - header);
}

static void *VKAPI_CALL app_realloc(void *user, void *original, size_t size, size_t alignment,
                                    VkSystemAllocationScope scope) {
  counting_allocator_t *c = user;
  if (!original) return app_alloc(user, size, alignment, scope);
  if (!size) {
    app_free(user, original);
    return NULL;
  }
  size_t old_size;
  memcpy(&old_size, (unsigned char *)original - sizeof(size_t) * 2, sizeof old_size);
  void *p = app_alloc(user, size, alignment, scope);
  if (!p) return NULL;
  memcpy(p, original, old_size < size ? old_size : size);
  app_free(user, original);
  c->allocations--; /* a reallocation is not a new allocation */
  c->frees--;
  c->reallocations++;
  return p;
}

/* ---- the application's device-memory allocator for vkhlo ---- */

typedef struct memory_allocator {
  VkDevice device;
  VkPhysicalDeviceMemoryProperties properties;
  long allocations, frees;
} memory_allocator_t;

static int32_t app_device_alloc(void *user, const vkhlo_device_memory_request_t *req,
                                vkhlo_device_memory_block_t *out) {
  memory_allocator_t *m = user;
  VkMemoryPropertyFlags want = req->host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                                 : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  uint32_t type = UINT32_MAX;
  for (uint32_t i = 0; i < m->properties.memoryTypeCount && type == UINT32_MAX; i++)
    if ((req->memory_type_bits & (1u << i)) && (m->properties.memoryTypes[i].propertyFlags & want) == want) type = i;
  if (type == UINT32_MAX) return VK_ERROR_OUT_OF_DEVICE_MEMORY;
  VkMemoryAllocateInfo info = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req->size,
                               .memoryTypeIndex = type};
  VkDeviceMemory memory;
  VkResult r = vkAllocateMemory(m->device, &info, NULL, &memory);
  if (r != VK_SUCCESS) return r;
  memset(out, 0, sizeof *out);
  out->memory = (void *)memory;
  out->offset = 0;
  if (req->host_visible) {
    r = vkMapMemory(m->device, memory, 0, VK_WHOLE_SIZE, 0, &out->mapped);
    if (r != VK_SUCCESS) {
      vkFreeMemory(m->device, memory, NULL);
      return r;
    }
    out->host_coherent = true;
  }
  m->allocations++;
  return VK_SUCCESS;
}

static void app_device_free(void *user, const vkhlo_device_memory_block_t *block) {
  memory_allocator_t *m = user;
  if (block->mapped) vkUnmapMemory(m->device, (VkDeviceMemory)block->memory);
  vkFreeMemory(m->device, (VkDeviceMemory)block->memory, NULL);
  m->frees++;
}

/* ---- the model on the CPU (examples/mlp.mlir) ---- */

static void mlp_reference(const float x[8], float p[6]) {
  static const float w1[4][5] = {{0.5f, -0.25f, 0.125f, 1.0f, 0.0f},
                                 {0.25f, 0.5f, -0.5f, 0.0f, 1.0f},
                                 {-0.125f, 0.25f, 0.75f, 0.5f, -1.0f},
                                 {1.0f, -1.0f, 0.25f, 0.0f, 0.5f}};
  static const float b1[5] = {0.1f, -0.1f, 0.0f, 0.2f, 0.05f};
  static const float w2[5][3] = {{1.0f, 0.0f, -1.0f}, {0.5f, 0.5f, 0.5f}, {-0.5f, 1.0f, 0.0f},
                                 {0.25f, -0.25f, 1.0f}, {0.0f, 0.75f, -0.5f}};
  for (int r = 0; r < 2; r++) {
    float h[5], logits[3], e[3], mx = -INFINITY, sum = 0;
    for (int j = 0; j < 5; j++) {
      float s = 0;
      for (int k = 0; k < 4; k++) s += x[r * 4 + k] * w1[k][j];
      s += b1[j];
      h[j] = s > 0 ? s : 0;
    }
    for (int j = 0; j < 3; j++) {
      float s = 0;
      for (int k = 0; k < 5; k++) s += h[k] * w2[k][j];
      logits[j] = s;
      if (s > mx) mx = s;
    }
    for (int j = 0; j < 3; j++) sum += (e[j] = expf(logits[j] - mx));
    for (int j = 0; j < 3; j++) p[r * 3 + j] = e[j] / sum;
  }
}

/* ---- Vulkan setup ---- */

static bool has_layer(const char *name) {
  uint32_t n = 0;
  vkEnumerateInstanceLayerProperties(&n, NULL);
  VkLayerProperties *layers = calloc(n ? n : 1, sizeof *layers);
  if (!layers) return false;
  vkEnumerateInstanceLayerProperties(&n, layers);
  bool found = false;
  for (uint32_t i = 0; i < n; i++) found |= strcmp(layers[i].layerName, name) == 0;
  free(layers);
  return found;
}

static uint32_t find_memory_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits, VkMemoryPropertyFlags want) {
  for (uint32_t i = 0; i < mp->memoryTypeCount; i++)
    if ((bits & (1u << i)) && (mp->memoryTypes[i].propertyFlags & want) == want) return i;
  fprintf(stderr, "embed: no memory type with flags 0x%x\n", (unsigned)want);
  exit(2);
}

typedef struct app_buffer {
  VkBuffer buffer;
  VkDeviceMemory memory;
  void *mapped;
} app_buffer_t;

static app_buffer_t make_buffer(VkDevice device, const VkPhysicalDeviceMemoryProperties *mp, VkDeviceSize size,
                                VkBufferUsageFlags usage, bool host) {
  app_buffer_t b = {0};
  VkBufferCreateInfo info = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = size, .usage = usage,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  CHECK_VK(vkCreateBuffer(device, &info, NULL, &b.buffer));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(device, b.buffer, &req);
  VkMemoryPropertyFlags want = host ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT
                                    : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  VkMemoryAllocateInfo alloc = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size,
                                .memoryTypeIndex = find_memory_type(mp, req.memoryTypeBits, want)};
  CHECK_VK(vkAllocateMemory(device, &alloc, NULL, &b.memory));
  CHECK_VK(vkBindBufferMemory(device, b.buffer, b.memory, 0));
  if (host) CHECK_VK(vkMapMemory(device, b.memory, 0, VK_WHOLE_SIZE, 0, &b.mapped));
  return b;
}

static void destroy_buffer(VkDevice device, app_buffer_t *b) {
  if (b->mapped) vkUnmapMemory(device, b->memory);
  vkDestroyBuffer(device, b->buffer, NULL);
  vkFreeMemory(device, b->memory, NULL);
}

static void memory_barrier(VkCommandBuffer cb, VkPipelineStageFlags src, VkAccessFlags src_access,
                           VkPipelineStageFlags dst, VkAccessFlags dst_access) {
  VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = src_access,
                       .dstAccessMask = dst_access};
  vkCmdPipelineBarrier(cb, src, dst, 0, 1, &b, 0, NULL, 0, NULL);
}

static void submit_timeline(VkQueue queue, VkCommandBuffer cb, VkSemaphore timeline, uint64_t wait_value,
                            VkPipelineStageFlags wait_stage, uint64_t signal_value) {
  VkTimelineSemaphoreSubmitInfo values = {.sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
                                          .waitSemaphoreValueCount = wait_value ? 1 : 0,
                                          .pWaitSemaphoreValues = &wait_value,
                                          .signalSemaphoreValueCount = 1,
                                          .pSignalSemaphoreValues = &signal_value};
  VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .pNext = &values,
                         .waitSemaphoreCount = wait_value ? 1 : 0, .pWaitSemaphores = &timeline,
                         .pWaitDstStageMask = &wait_stage, .commandBufferCount = 1, .pCommandBuffers = &cb,
                         .signalSemaphoreCount = 1, .pSignalSemaphores = &timeline};
  CHECK_VK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
}

static char *read_file(const char *path, size_t *out_size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
    free(s);
    s = NULL;
  }
  fclose(f);
  if (s) s[n] = 0;
  *out_size = (size_t)n;
  return s;
}

int main(int argc, char **argv) {
  const char *model_path = argc > 1 ? argv[1] : "examples/mlp.mlir";
  int frames = argc > 2 ? atoi(argv[2]) : 100;
  CHECK_VK(volkInitialize());

  /* Instance: validation layer + synchronization validation when present. */
  bool validation = has_layer("VK_LAYER_KHRONOS_validation");
  VkValidationFeatureEnableEXT enables[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
  VkValidationFeaturesEXT features = {.sType = VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT,
                                      .enabledValidationFeatureCount = 1,
                                      .pEnabledValidationFeatures = enables};
  const char *layers[] = {"VK_LAYER_KHRONOS_validation"};
  const char *instance_exts[] = {VK_EXT_DEBUG_UTILS_EXTENSION_NAME};
  VkApplicationInfo app = {.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .pApplicationName = "vkhlo-embed",
                           .apiVersion = VK_API_VERSION_1_2};
  VkInstanceCreateInfo ici = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                              .pNext = validation ? &features : NULL,
                              .pApplicationInfo = &app,
                              .enabledLayerCount = validation ? 1 : 0,
                              .ppEnabledLayerNames = layers,
                              .enabledExtensionCount = validation ? 1 : 0,
                              .ppEnabledExtensionNames = instance_exts};
  VkInstance instance;
  CHECK_VK(vkCreateInstance(&ici, NULL, &instance));
  volkLoadInstance(instance);
  VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
  if (validation) {
    VkDebugUtilsMessengerCreateInfoEXT mi = {
        .sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT,
        .messageSeverity = VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT,
        .messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT,
        .pfnUserCallback = on_debug};
    CHECK_VK(vkCreateDebugUtilsMessengerEXT(instance, &mi, NULL, &messenger));
  }

  /* Physical device: VKHLO_DEVICE-like choice is not needed here; the first
   * one with Vulkan 1.2 and a compute queue. */
  uint32_t pd_count = 0;
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &pd_count, NULL));
  VkPhysicalDevice pds[16];
  if (pd_count > 16) pd_count = 16;
  CHECK_VK(vkEnumeratePhysicalDevices(instance, &pd_count, pds));
  VkPhysicalDevice pd = VK_NULL_HANDLE;
  uint32_t family = 0;
  for (uint32_t i = 0; i < pd_count && !pd; i++) {
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(pds[i], &props);
    if (props.apiVersion < VK_API_VERSION_1_2) continue;
    uint32_t nf = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, NULL);
    VkQueueFamilyProperties qf[32];
    if (nf > 32) nf = 32;
    vkGetPhysicalDeviceQueueFamilyProperties(pds[i], &nf, qf);
    for (uint32_t f = 0; f < nf && !pd; f++)
      if (qf[f].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        pd = pds[i];
        family = f;
      }
  }
  if (!pd) {
    fprintf(stderr, "embed: no Vulkan 1.2 device with a compute queue; skipped\n");
    return 77;
  }

  /* Device: every feature the device has (vkhlo uses shaderInt64, 8/16-bit
   * storage... where present; the frame loop needs timelineSemaphore). */
  VkPhysicalDeviceVulkan12Features f12 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES,
                                          .pNext = &f12};
  VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f11};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  if (!f12.timelineSemaphore) {
    fprintf(stderr, "embed: the device has no timeline semaphores; skipped\n");
    return 77;
  }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, .queueFamilyIndex = family,
                                 .queueCount = 1, .pQueuePriorities = &priority};
  VkDeviceCreateInfo dci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &f2,
                            .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci};
  VkDevice device;
  CHECK_VK(vkCreateDevice(pd, &dci, NULL, &device));
  volkLoadDevice(device);
  VkQueue queue;
  vkGetDeviceQueue(device, family, 0, &queue);
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);

  /* vkhlo on the application's objects, allocators included. */
  counting_allocator_t host_counts = {0};
  VkAllocationCallbacks callbacks = {.pUserData = &host_counts, .pfnAllocation = app_alloc,
                                     .pfnReallocation = app_realloc, .pfnFree = app_free};
  memory_allocator_t memory = {.device = device, .properties = mp};
  vkhlo_context_options_t options;
  memset(&options, 0, sizeof options);
  options.vulkan_allocation_callbacks = &callbacks;
  options.device_memory_allocate = app_device_alloc;
  options.device_memory_free = app_device_free;
  options.device_memory_user = &memory;
  vkhlo_external_device_t ext = {.instance = instance, .physical_device = pd, .device = device, .queue = queue,
                                 .queue_family_index = family,
                                 .get_instance_proc_addr = (void *)(uintptr_t)vkGetInstanceProcAddr};
  vkhlo_context_t *ctx;
  check_vkhlo(vkhlo_context_create_external(&options, &ext, &ctx), "vkhlo_context_create_external");
  vkhlo_device_description_t desc;
  vkhlo_context_device(ctx, &desc);

  size_t text_size;
  char *text = read_file(model_path, &text_size);
  if (!text) {
    fprintf(stderr, "embed: cannot read %s\n", model_path);
    return 2;
  }
  vkhlo_executable_t *exe;
  check_vkhlo(vkhlo_executable_compile(ctx, text, text_size, model_path, NULL, &exe), "compile");
  free(text);
  vkhlo_tensor_type_t in_type, out_type;
  check_vkhlo(vkhlo_executable_parameter_type(exe, 0, &in_type), "parameter type");
  check_vkhlo(vkhlo_executable_result_type(exe, 0, &out_type), "result type");
  size_t in_bytes = vkhlo_tensor_type_size_bytes(&in_type), out_bytes = vkhlo_tensor_type_size_bytes(&out_type);
  if (in_bytes != 8 * sizeof(float) || out_bytes != 6 * sizeof(float)) {
    fprintf(stderr, "embed: the model must take 2x4xf32 and return 2x3xf32 (examples/mlp.mlir)\n");
    return 2;
  }

  /* The application's buffers: one device buffer holding the input at
   * offset 0 and the output at the next aligned offset, a staging buffer
   * and a readback buffer (host-visible). */
  uint64_t align = vkhlo_context_buffer_offset_alignment(ctx);
  uint64_t out_offset = (in_bytes + align - 1) / align * align;
  app_buffer_t io = make_buffer(device, &mp, out_offset + out_bytes,
                                VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                false);
  app_buffer_t staging = make_buffer(device, &mp, in_bytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT, true);
  app_buffer_t readback = make_buffer(device, &mp, out_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT, true);
  vkhlo_buffer_t *arg, *result;
  check_vkhlo(vkhlo_buffer_wrap(ctx, &in_type, (void *)io.buffer, 0, in_bytes, &arg), "wrap the input");
  check_vkhlo(vkhlo_buffer_wrap(ctx, &out_type, (void *)io.buffer, out_offset, out_bytes, &result),
              "wrap the output");

  VkSemaphoreTypeCreateInfo sti = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO,
                                   .semaphoreType = VK_SEMAPHORE_TYPE_TIMELINE, .initialValue = 0};
  VkSemaphoreCreateInfo sci = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO, .pNext = &sti};
  VkSemaphore timeline;
  CHECK_VK(vkCreateSemaphore(device, &sci, NULL, &timeline));
  VkCommandPoolCreateInfo pci = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                 .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, .queueFamilyIndex = family};
  VkCommandPool pool;
  CHECK_VK(vkCreateCommandPool(device, &pci, NULL, &pool));
  VkCommandBuffer cbs[3]; /* upload, readback, whole frame (record) */
  VkCommandBufferAllocateInfo cai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = pool,
                                     .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 3};
  CHECK_VK(vkAllocateCommandBuffers(device, &cai, cbs));
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VkBufferCopy up = {0, 0, in_bytes}, down = {out_offset, 0, out_bytes};
  /* upload: staging (host-written) -> io input */
  CHECK_VK(vkBeginCommandBuffer(cbs[0], &begin));
  memory_barrier(cbs[0], VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                 VK_ACCESS_TRANSFER_READ_BIT);
  vkCmdCopyBuffer(cbs[0], staging.buffer, io.buffer, 1, &up);
  CHECK_VK(vkEndCommandBuffer(cbs[0]));
  /* readback: io output -> readback, visible to the host */
  CHECK_VK(vkBeginCommandBuffer(cbs[1], &begin));
  vkCmdCopyBuffer(cbs[1], io.buffer, readback.buffer, 1, &down);
  memory_barrier(cbs[1], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                 VK_ACCESS_HOST_READ_BIT);
  CHECK_VK(vkEndCommandBuffer(cbs[1]));

  int wrong = 0;
  double worst = 0;
  long copies = 0, result_copies = 0;
  uint64_t value = 0;
  for (int frame = 0; frame < frames; frame++) {
    float x[8], expect[6], got[6];
    for (int i = 0; i < 8; i++) x[i] = sinf(0.37f * (float)(frame * 8 + i)) * 2.0f;
    mlp_reference(x, expect);
    memcpy(staging.mapped, x, sizeof x);
    if (frame % 2 == 0) { /* semaphores: upload -> vkhlo submit -> readback */
      submit_timeline(queue, cbs[0], timeline, 0, 0, value + 1);
      void *waits[1] = {(void *)timeline}, *signals[1] = {(void *)timeline};
      uint32_t stages[1] = {VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT};
      uint64_t wait_values[1] = {value + 1}, signal_values[1] = {value + 2};
      vkhlo_submit_info_t si = {.wait_semaphore_count = 1, .wait_semaphores = waits, .wait_stage_masks = stages,
                                .wait_values = wait_values, .signal_semaphore_count = 1,
                                .signal_semaphores = signals, .signal_values = signal_values};
      check_vkhlo(vkhlo_executable_submit(exe, 1, &arg, 1, &result, &si), "vkhlo_executable_submit");
      submit_timeline(queue, cbs[1], timeline, value + 2, VK_PIPELINE_STAGE_TRANSFER_BIT, value + 3);
      value += 3;
    } else { /* one command buffer: upload, vkhlo's commands, readback */
      CHECK_VK(vkResetCommandBuffer(cbs[2], 0));
      CHECK_VK(vkBeginCommandBuffer(cbs[2], &begin));
      memory_barrier(cbs[2], VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT);
      vkCmdCopyBuffer(cbs[2], staging.buffer, io.buffer, 1, &up);
      /* (vkhlo's leading barrier orders its work after this transfer write) */
      check_vkhlo(vkhlo_executable_record(exe, (void *)cbs[2], 1, &arg, 1, &result), "vkhlo_executable_record");
      memory_barrier(cbs[2], VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT,
                     VK_ACCESS_TRANSFER_READ_BIT);
      vkCmdCopyBuffer(cbs[2], io.buffer, readback.buffer, 1, &down);
      memory_barrier(cbs[2], VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT, VK_PIPELINE_STAGE_HOST_BIT,
                     VK_ACCESS_HOST_READ_BIT);
      CHECK_VK(vkEndCommandBuffer(cbs[2]));
      submit_timeline(queue, cbs[2], timeline, 0, 0, value + 1);
      value += 1;
    }
    VkSemaphoreWaitInfo wi = {.sType = VK_STRUCTURE_TYPE_SEMAPHORE_WAIT_INFO, .semaphoreCount = 1,
                              .pSemaphores = &timeline, .pValues = &value};
    CHECK_VK(vkWaitSemaphores(device, &wi, UINT64_MAX));
    memcpy(got, readback.mapped, sizeof got);
    for (int i = 0; i < 6; i++) {
      double err = fabs((double)got[i] - expect[i]) / (fabs(expect[i]) + 1e-30);
      if (err > worst) worst = err;
      if (!(err <= 1e-5)) {
        if (wrong < 5) fprintf(stderr, "embed: frame %d element %d: got %.9g, expected %.9g\n", frame, i, got[i], expect[i]);
        wrong++;
      }
    }
    vkhlo_executable_stats_t stats;
    vkhlo_executable_stats(exe, &stats);
    copies += stats.copy_commands;
    result_copies += stats.result_copies;
  }
  vkhlo_executable_stats_t stats;
  vkhlo_executable_stats(exe, &stats);
  printf("device: %s\n", desc.name);
  printf("validation layer: %s (synchronization validation %s)\n", validation ? "on" : "not installed",
         validation ? "on" : "off");
  printf("frames: %d (%d submitted through the timeline semaphore, %d recorded into the app's command buffer)\n",
         frames, (frames + 1) / 2, frames / 2);
  printf("executions: %lld, recordings: %lld, dispatches per execution: %lld, barriers: %lld\n",
         (long long)stats.executions, (long long)stats.recordings, (long long)stats.dispatches,
         (long long)stats.barriers);
  printf("copy commands recorded, all frames: %ld (result copy-outs: %ld)\n", copies, result_copies);
  printf("largest relative error vs CPU: %.3g, wrong elements: %d\n", worst, wrong);
  printf("validation messages: %d\n", validation_messages);

  vkhlo_buffer_destroy(arg);
  vkhlo_buffer_destroy(result);
  vkhlo_executable_destroy(exe);
  vkhlo_context_destroy(ctx);
  printf("VkAllocationCallbacks: %ld allocations, %ld frees, %ld reallocations\n", host_counts.allocations,
         host_counts.frees, host_counts.reallocations);
  printf("device-memory allocator: %ld allocations, %ld frees\n", memory.allocations, memory.frees);
  bool ok = wrong == 0 && validation_messages == 0 && copies == 0 && result_copies == 0 &&
            host_counts.allocations == host_counts.frees && memory.allocations == memory.frees &&
            memory.allocations > 0 && stats.executions == frames;
  vkFreeCommandBuffers(device, pool, 3, cbs);
  vkDestroyCommandPool(device, pool, NULL);
  vkDestroySemaphore(device, timeline, NULL);
  destroy_buffer(device, &io);
  destroy_buffer(device, &staging);
  destroy_buffer(device, &readback);
  vkDestroyDevice(device, NULL);
  if (messenger) vkDestroyDebugUtilsMessengerEXT(instance, messenger, NULL);
  vkDestroyInstance(instance, NULL);
  if (validation_messages) printf("FAIL: validation messages\n");
  printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
