/*
 * vk_runtime internals shared by device.c, buffer.c, pipeline.c and cmd.c.
 *
 * Function pointers.  Nothing here calls volk's global function pointers.
 * Instance-level entry points (vkCreateDevice, vkGetPhysicalDevice*, ...)
 * are fetched with vkGetInstanceProcAddr into |vkrt_device.ifn|; device-
 * level entry points live in a VolkDeviceTable (|vkrt_device.vk|) that is
 * loaded per device.  The only volk state we touch is what volkInitialize /
 * volkLoadInstanceOnly set inside volk itself (the loader's
 * vkGetInstanceProcAddr and the vkGetDeviceProcAddr that
 * volkLoadDeviceTable uses); we read the former once into the device.
 *
 * Errors.  Every failed Vulkan call becomes a status through vk_status(),
 * which names the call and the VkResult ("vkCreateBuffer failed:
 * VK_ERROR_OUT_OF_DEVICE_MEMORY") and maps out-of-memory results to
 * RESOURCE_EXHAUSTED and VK_ERROR_DEVICE_LOST to UNAVAILABLE.
 */
#ifndef VKHLO_VK_RUNTIME_VKRT_INTERNAL_H
#define VKHLO_VK_RUNTIME_VKRT_INTERNAL_H

#include <volk.h>

#include "support/status.h"
#include "vk_runtime/vkrt.h"

/* Instance-level entry points, fetched per device. */
typedef struct vkrt_instance_fns {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr;
  PFN_vkDestroyInstance vkDestroyInstance;
  PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices;
  PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties;
  PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2;
  PFN_vkGetPhysicalDeviceFeatures vkGetPhysicalDeviceFeatures;
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties;
  PFN_vkGetPhysicalDeviceFormatProperties vkGetPhysicalDeviceFormatProperties; /* may be NULL */
  PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties;
  PFN_vkCreateDevice vkCreateDevice;
  PFN_vkGetDeviceProcAddr vkGetDeviceProcAddr;
  PFN_vkCreateDebugUtilsMessengerEXT vkCreateDebugUtilsMessengerEXT;
  PFN_vkDestroyDebugUtilsMessengerEXT vkDestroyDebugUtilsMessengerEXT;
} vkrt_instance_fns_t;

struct vkrt_device {
  const vkhlo_allocator_t *allocator; /* host structs of the device and its objects (NULL = libc) */
  vkrt_instance_fns_t ifn;
  struct VolkDeviceTable vk;

  VkInstance instance;
  VkPhysicalDevice physical_device;
  VkDevice device;
  VkQueue queue;
  uint32_t queue_family_index;
  bool external; /* instance/device/queue belong to the caller */
  uint32_t api_version; /* min(instance, device), what we may use */

  VkDebugUtilsMessengerEXT messenger;
  vkrt_message_fn message_fn;
  void *message_user;

  VkCommandPool command_pool; /* RESET_COMMAND_BUFFER: cmds and one-shots */
  VkPipelineCache pipeline_cache;
  /* vkrt_pipeline_cache_open: the file it was loaded from (and is saved
   * to; NULL: not persistent), and what it held then */
  char *pipeline_cache_path;
  size_t pipeline_cache_loaded_size;
  uint64_t pipeline_cache_loaded_hash;
  VkPhysicalDeviceMemoryProperties memory_properties;
  VkDeviceSize non_coherent_atom_size;
  bool force_staging;
  bool no_conditional_rendering; /* vkrt_device_options_t's */

  vkrt_caps_t caps;
  vkrt_device_info_t info;

  /* Embedding: the caller's VkAllocationCallbacks (NULL: the driver's),
   * passed to every vkCreate* / vkAllocate* / vkDestroy* / vkFree* vkrt
   * makes; and the caller's device-memory allocator (fn NULL: vkrt calls
   * vkAllocateMemory itself). */
  const VkAllocationCallbacks *alloc;
  vkrt_memory_allocator_t memory_allocator;

  uint64_t next_buffer_id;  /* vkrt_buffer_id: never reused */
  vkrt_memory_stats_t memory; /* vkrt_device_memory_stats */
};

struct vkrt_buffer {
  vkrt_device_t *device;
  uint64_t id;
  VkBuffer buffer;
  VkDeviceMemory memory;
  uint64_t size_bytes;
  uint64_t memory_bytes; /* what vkAllocateMemory gave (for the stats) */
  uint32_t memory_type_index;
  bool host_coherent;
  void *mapped; /* persistent mapping when host-visible (and not forced to stage) */
  bool texel_usage; /* created with VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT */
  /* vkrt_buffer_wrap: the caller's VkBuffer; offsets vkrt is given are
   * relative to |base_offset| within it, and it is never destroyed. */
  bool wrapped;
  uint64_t base_offset;
  /* memory from the caller's allocator (memory_allocator): |block| is what
   * it returned; the memory is not freed by vkrt but handed back */
  bool external_memory;
  vkrt_memory_block_t block;
};

struct vkrt_pipeline {
  vkrt_device_t *device;
  VkShaderModule shader_module;
  VkDescriptorSetLayout set_layout;
  VkPipelineLayout layout;
  VkPipeline pipeline;
  uint32_t binding_count;
  uint64_t texel_views, scalar_views; /* vkrt_pipeline_create */
  uint32_t texel_count;                /* both kinds */
  uint32_t push_constant_size;
};

/* The device can bind uniform texel buffers of a format texel views use
 * (vkrt_pipeline_create): buffers get the usage, pools the descriptors. */
static inline bool vkrt_texel_views_supported(const vkrt_caps_t *c) {
  return c->texel_buffer_rgba32ui || c->texel_buffer_r32ui;
}

/* "VK_ERROR_OUT_OF_DEVICE_MEMORY" etc.; "VK_RESULT(<n>)" is not possible
 * without storage, so unknown values give "VK_ERROR_UNKNOWN_RESULT". */
const char *vkrt_result_name(VkResult result);

/* Status for a failed Vulkan call |call| (a string literal naming it). */
vkhlo_status_t vkrt_vk_status(const char *call, VkResult result);

/* Returns a status if |result| is not VK_SUCCESS. */
#define VKRT_CHECK(call_name, result_expr)                                     \
  do {                                                                         \
    VkResult vkrt_r_ = (result_expr);                                          \
    if (vkrt_r_ != VK_SUCCESS) return vkrt_vk_status(call_name, vkrt_r_);      \
  } while (0)

/* Allocates a primary command buffer from the device pool, records with
 * |record|, submits it with a fence and waits.  Used for staging copies. */
typedef void (*vkrt_record_fn)(vkrt_device_t *device, VkCommandBuffer cb, void *user);
vkhlo_status_t vkrt_device_run_one_shot(vkrt_device_t *device, vkrt_record_fn record, void *user);

/* Records the barrier that makes compute/transfer writes visible to the
 * host (before a fence wait followed by host reads of mapped memory). */
void vkrt_record_host_barrier(vkrt_device_t *device, VkCommandBuffer cb);

#endif
