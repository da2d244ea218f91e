/*
 * vk_runtime: the Vulkan layer.  Devices, buffers, compute pipelines,
 * command recording and submission.  It knows nothing of HLO: it runs
 * SPIR-V compute shaders over storage buffers.
 *
 * Vulkan is loaded at run time through volk; nothing links libvulkan.
 * No global mutable state: everything hangs off a vkrt_device_t (volk is
 * used through its per-device/instance function tables, VolkDeviceTable).
 *
 * Threading: a device and everything created from it must be used from one
 * thread at a time.
 */
#ifndef VKHLO_VK_RUNTIME_VKRT_H
#define VKHLO_VK_RUNTIME_VKRT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/alloc.h"
#include "support/status.h"

typedef struct vkrt_device vkrt_device_t;
typedef struct vkrt_buffer vkrt_buffer_t;
typedef struct vkrt_pipeline vkrt_pipeline_t;
typedef struct vkrt_cmd vkrt_cmd_t;

typedef enum vkrt_device_type_e {
  VKRT_DEVICE_OTHER = 0,
  VKRT_DEVICE_INTEGRATED_GPU = 1,
  VKRT_DEVICE_DISCRETE_GPU = 2,
  VKRT_DEVICE_VIRTUAL_GPU = 3,
  VKRT_DEVICE_CPU = 4,
} vkrt_device_type_t;

typedef struct vkrt_device_info {
  char name[256];
  uint32_t vendor_id, device_id;
  vkrt_device_type_t type;
  uint32_t api_version; /* VK_MAKE_API_VERSION encoding */
  uint32_t driver_version; /* VkPhysicalDeviceProperties::driverVersion (vendor encoding) */
  char driver_name[256];
  char driver_info[256];
} vkrt_device_info_t;

/* What the device can do; filled at device creation. */
typedef struct vkrt_caps {
  bool shader_int64, shader_float64, shader_int16, shader_int8, shader_float16;
  bool storage_buffer_8bit, storage_buffer_16bit;
  bool subgroup_arithmetic; /* compute-stage subgroup arithmetic ops */
  bool subgroup_shuffle;    /* compute-stage subgroupShuffle */
  uint32_t subgroup_size;
  uint32_t max_compute_workgroup_count[3];
  uint32_t max_compute_workgroup_size[3];
  uint32_t max_compute_workgroup_invocations;
  uint32_t max_compute_shared_memory_size;
  uint32_t max_storage_buffer_range;
  uint64_t max_memory_allocation_size;
  uint64_t min_storage_buffer_offset_alignment;
  uint32_t max_per_stage_descriptor_storage_buffers;
  uint32_t max_push_constants_size;
  uint32_t max_bound_descriptor_sets;
  /* Uniform texel buffers of VK_FORMAT_R32G32B32A32_UINT (the format's
   * bufferFeatures), and their limits: a pipeline's texel views
   * (vkrt_pipeline_create) need texel_buffer_rgba32ui. */
  bool texel_buffer_rgba32ui;
  bool texel_buffer_r32ui; /* VK_FORMAT_R32_UINT likewise (scalar views) */
  uint64_t min_texel_buffer_offset_alignment;
  uint32_t max_texel_buffer_elements;
  uint32_t max_per_stage_descriptor_sampled_images; /* texel buffers count here */
  /* Float controls (Vulkan 1.2 core, or VK_KHR_shader_float_controls which
   * vkrt then enables): the device honours the SPIR-V execution mode
   * SignedZeroInfNanPreserve for 16/32/64-bit floats
   * (VkPhysicalDeviceFloatControlsProperties::
   * shaderSignedZeroInfNanPreserveFloat16/32/64).  Always false on a
   * Vulkan 1.1 device in external mode (vkrt cannot know whether the
   * caller enabled the extension). */
  bool signed_zero_inf_nan_preserve_float16;
  bool signed_zero_inf_nan_preserve_float32;
  bool signed_zero_inf_nan_preserve_float64;
  /* VK_EXT_conditional_rendering, enabled with its conditionalRendering
   * feature (vkrt_cmd_begin_conditional); false for an external device
   * (vkrt cannot know whether the caller enabled it). */
  bool conditional_rendering;
} vkrt_caps_t;

/* A device-memory allocation the caller makes for vkrt (embedding). */
typedef struct vkrt_memory_request {
  uint64_t size, alignment; /* VkMemoryRequirements of the buffer */
  uint32_t memory_type_bits;
  bool host_visible; /* a staging buffer: the memory must be HOST_VISIBLE and
                        |mapped| set; else DEVICE_LOCAL is preferred */
} vkrt_memory_request_t;
typedef struct vkrt_memory_block {
  void *memory;     /* VkDeviceMemory */
  uint64_t offset;  /* where the buffer starts in it (multiple of alignment) */
  void *mapped;     /* host address of |offset| when mapped, else NULL */
  bool host_coherent;
  void *user_data;  /* anything the allocator wants back at free */
} vkrt_memory_block_t;
/* Returns a VkResult (0 = VK_SUCCESS) */
typedef int32_t (*vkrt_memory_allocate_fn)(void *user, const vkrt_memory_request_t *request,
                                           vkrt_memory_block_t *out_block);
typedef void (*vkrt_memory_free_fn)(void *user, const vkrt_memory_block_t *block);
typedef struct vkrt_memory_allocator {
  vkrt_memory_allocate_fn allocate; /* NULL: vkrt allocates */
  vkrt_memory_free_fn free;
  void *user;
} vkrt_memory_allocator_t;

/* Called with each validation-layer or driver debug message. */
typedef void (*vkrt_message_fn)(void *user, const char *message);

typedef struct vkrt_device_options {
  /* Which device: NULL or "" = default order (discrete, integrated, virtual,
   * CPU, other); a decimal index into vkrt_enumerate_devices' list; or a
   * case-insensitive substring of the device name (e.g. "llvmpipe"). */
  const char *selector;
  /* Enable VK_LAYER_KHRONOS_validation and VK_EXT_debug_utils; every
   * warning/error message goes to |message_fn|. */
  bool enable_validation;
  vkrt_message_fn message_fn;
  void *message_user;
  /* Embedding: use the caller's objects instead of creating our own
   * (all of instance, physical_device, device, queue set, or none).
   * Types are the Vulkan handles, passed as void* so that this header does
   * not need vulkan.h.  The caller keeps ownership; vkrt never destroys
   * them.  The device must have been created with the features vkhlo uses
   * where available (see vkrt_caps_t); the caps reflect what the caller
   * enabled only as far as the physical device reports them. */
  void *external_instance;
  void *external_physical_device;
  void *external_device;
  void *external_queue;
  uint32_t external_queue_family_index;
  void *external_get_instance_proc_addr; /* PFN_vkGetInstanceProcAddr; NULL = loader's */
  /* Embedding: a const VkAllocationCallbacks* passed to every Vulkan
   * create/allocate/destroy/free call vkrt makes (NULL: none).  It must
   * outlive the device. */
  const void *vulkan_allocator;
  /* Embedding: the caller allocates the VkDeviceMemory of vkrt's buffers
   * (fn NULL: vkrt calls vkAllocateMemory). */
  vkrt_memory_allocator_t memory_allocator;
  /* Testing: never map buffer memory, even when it is host-visible, so that
   * uploads and downloads take the staging-buffer path that discrete GPUs
   * use. */
  bool force_staging;
  /* Do not enable VK_EXT_conditional_rendering (caps.conditional_rendering
   * false): the path of devices without it, for tests and measurements. */
  bool no_conditional_rendering;
  /* Host memory of the device, its command recorders, pipelines and buffers
   * (NULL = libc); kept by pointer.  Not passed to Vulkan. */
  const vkhlo_allocator_t *allocator;
} vkrt_device_options_t;

/* Lists the physical devices.  *out_infos is heap-allocated (caller frees
 * with free(): this call takes no allocator). */
vkhlo_status_t vkrt_enumerate_devices(vkrt_device_info_t **out_infos, int *out_count);

/* Creates a device (instance, physical device, logical device, one compute
 * queue, a command pool).  Errors: UNAVAILABLE when there is no Vulkan
 * loader or no device matches. */
vkhlo_status_t vkrt_device_create(const vkrt_device_options_t *options, vkrt_device_t **out_device);
void vkrt_device_destroy(vkrt_device_t *device);
const vkrt_caps_t *vkrt_device_caps(const vkrt_device_t *device);
const vkrt_device_info_t *vkrt_device_info(const vkrt_device_t *device);

/* The Vulkan handles behind a device (VkInstance, VkPhysicalDevice,
 * VkDevice, VkQueue and PFN_vkGetInstanceProcAddr, as void*), for interop:
 * e.g. to fill vkrt_device_options_t's external_* fields of another
 * vkrt_device_t that shares this VkDevice.  They remain owned by |device|
 * (or by whoever owns it in external mode). */
typedef struct vkrt_vulkan_handles {
  void *instance;
  void *physical_device;
  void *device;
  void *queue;
  uint32_t queue_family_index;
  void *get_instance_proc_addr;
} vkrt_vulkan_handles_t;
void vkrt_device_vulkan_handles(const vkrt_device_t *device, vkrt_vulkan_handles_t *out_handles);

/* Device memory of one device, for tests and diagnostics: every
 * vkAllocateMemory vkrt made (staging buffers included) and what is still
 * allocated. */
typedef struct vkrt_memory_stats {
  uint64_t allocations_made; /* vkAllocateMemory calls that succeeded, ever */
  uint64_t allocations_live;
  uint64_t bytes_live;
} vkrt_memory_stats_t;
void vkrt_device_memory_stats(const vkrt_device_t *device, vkrt_memory_stats_t *out);

/* A device-local storage buffer usable as transfer source and destination.
 * |size_bytes| 0 is rounded up to 16. */
vkhlo_status_t vkrt_buffer_create(vkrt_device_t *device, uint64_t size_bytes, vkrt_buffer_t **out_buffer);
/* Wraps the caller's VkBuffer |vk_buffer| (passed as void*): the range
 * [offset_bytes, offset_bytes + range_bytes) of it becomes a vkrt buffer of
 * range_bytes bytes whose offsets count from offset_bytes.  The VkBuffer
 * must have been created with STORAGE_BUFFER usage (and TRANSFER_SRC/DST
 * for copies, uploads and downloads, TRANSFER_SRC for texel views, which
 * read a copy of a wrapped range) and stay alive and bound to memory
 * until the wrapper is destroyed; vkrt_buffer_destroy never destroys it.
 * Host access always goes through a staging buffer.
 * Errors: INVALID_ARGUMENT for a null handle, a zero range, or an offset
 * that is not a multiple of minStorageBufferOffsetAlignment. */
vkhlo_status_t vkrt_buffer_wrap(vkrt_device_t *device, void *vk_buffer, uint64_t offset_bytes,
                                uint64_t range_bytes, vkrt_buffer_t **out_buffer);
bool vkrt_buffer_is_wrapped(const vkrt_buffer_t *buffer);
/* A small host-visible buffer that copies read back into
 * (vkrt_cmd_copy's destination; TRANSFER_DST only, not bindable to a
 * kernel), mapped, so that vkrt_buffer_download of it after a wait is a
 * memcpy; cached host memory where the device has it. */
vkhlo_status_t vkrt_buffer_create_readback(vkrt_device_t *device, uint64_t size_bytes, vkrt_buffer_t **out_buffer);
/* Whether host access to |buffer| is a memcpy (its memory is mapped),
 * rather than a staging copy and a submission of its own. */
bool vkrt_buffer_is_mapped(const vkrt_buffer_t *buffer);
void vkrt_buffer_destroy(vkrt_buffer_t *buffer);
uint64_t vkrt_buffer_size(const vkrt_buffer_t *buffer);
/* A number naming |buffer| (and so its VkBuffer) that no other buffer of
 * the device ever had or will have: equal ids mean the same live buffer. */
uint64_t vkrt_buffer_id(const vkrt_buffer_t *buffer);
/* Synchronous host<->device copies through a staging buffer. */
vkhlo_status_t vkrt_buffer_upload(vkrt_buffer_t *buffer, uint64_t offset_bytes, const void *data,
                                  uint64_t size_bytes);
vkhlo_status_t vkrt_buffer_download(vkrt_buffer_t *buffer, uint64_t offset_bytes, void *data,
                                    uint64_t size_bytes);

/* A compute pipeline for a SPIR-V module with entry point "main" whose
 * bindings 0..binding_count-1 of set 0 are storage buffers, and
 * |push_constant_size| bytes of push constants (0 for none).
 *
 * Texel views: bit i of |texel_views| (i < binding_count, i < 64) binds
 * storage binding i's range a second time, as a uniform texel buffer of
 * VK_FORMAT_R32G32B32A32_UINT texels (16 bytes; the range's last
 * size % 16 bytes are not in the view), at binding binding_count + the
 * number of lower bits set; bit i of |scalar_views| likewise as
 * VK_FORMAT_R32_UINT texels (4 bytes), at the bindings after those.  CPU
 * devices (lavapipe) read a texel buffer with straight-line vector loads
 * (or a gather) where a storage buffer read is a loop over the SIMD
 * lanes.  vkrt_cmd_dispatch makes the views (see there).
 * Errors: UNIMPLEMENTED when the device lacks the format
 * (texel_buffer_rgba32ui, texel_buffer_r32ui) or the binding counts
 * exceed its per-stage limits; INVALID_ARGUMENT for a bit at or above
 * binding_count. */
vkhlo_status_t vkrt_pipeline_create(vkrt_device_t *device, const uint32_t *spirv,
                                    size_t spirv_size_bytes, uint32_t binding_count, uint64_t texel_views,
                                    uint64_t scalar_views, uint32_t push_constant_size,
                                    vkrt_pipeline_t **out_pipeline);
void vkrt_pipeline_destroy(vkrt_pipeline_t *pipeline);

/* Persistent pipeline cache (vk_runtime/pipeline_cache.c).  Replaces the
 * device's (empty) VkPipelineCache by the one saved in |dir| for this
 * vendor, device, driver version and pipelineCacheUUID
 * (DIR/pipelines-VVVV-DDDD-DRIVER-UUID.bin), when there is one, and makes
 * vkrt_device_destroy save the cache there when its contents changed
 * (written to a temporary file, then renamed).  Call before creating
 * pipelines.  A missing, unreadable or foreign file just starts empty.
 * Errors: RESOURCE_EXHAUSTED; a failed vkCreatePipelineCache. */
vkhlo_status_t vkrt_pipeline_cache_open(vkrt_device_t *device, const char *dir);
/* Saves the cache now if it changed since it was loaded or last saved
 * (no-op without vkrt_pipeline_cache_open).  Errors: NOT_FOUND when the
 * file cannot be written. */
vkhlo_status_t vkrt_pipeline_cache_save(vkrt_device_t *device);

/* A range of a buffer bound to one binding. */
typedef struct vkrt_binding {
  vkrt_buffer_t *buffer;
  uint64_t offset_bytes; /* multiple of min_storage_buffer_offset_alignment */
  uint64_t size_bytes;   /* > 0 */
} vkrt_binding_t;

/* Command recording.  A vkrt_cmd_t owns a command buffer and the descriptor
 * sets its dispatches use (and the buffer views of their texel views: a
 * view of a range that cannot be viewed in place, in a wrapped buffer
 * created without VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT or at an offset
 * that is not a multiple of min_texel_buffer_offset_alignment, views a
 * copy of it the dispatch records first, into a buffer the cmd owns).
 * begin -> record... -> submit_and_wait; it can be begun again after the
 * wait (descriptor sets are recycled). */
vkhlo_status_t vkrt_cmd_create(vkrt_device_t *device, vkrt_cmd_t **out_cmd);
void vkrt_cmd_destroy(vkrt_cmd_t *cmd);
vkhlo_status_t vkrt_cmd_begin(vkrt_cmd_t *cmd);
vkhlo_status_t vkrt_cmd_dispatch(vkrt_cmd_t *cmd, vkrt_pipeline_t *pipeline,
                                 uint32_t binding_count, const vkrt_binding_t *bindings,
                                 const void *push_constants, uint32_t push_constant_size,
                                 const uint32_t group_count[3]);
vkhlo_status_t vkrt_cmd_copy(vkrt_cmd_t *cmd, vkrt_buffer_t *src, uint64_t src_offset,
                             vkrt_buffer_t *dst, uint64_t dst_offset, uint64_t size_bytes);
vkhlo_status_t vkrt_cmd_fill(vkrt_cmd_t *cmd, vkrt_buffer_t *dst, uint64_t offset,
                             uint64_t size_bytes, uint32_t value);
/* A memory barrier: compute and transfer writes before it are visible to
 * compute and transfer reads/writes after it (and to the predicate reads
 * of conditional rendering, where the device has it). */
void vkrt_cmd_barrier(vkrt_cmd_t *cmd);
/* Conditional execution (caps.conditional_rendering): the dispatches
 * recorded between begin and end run only if the 32-bit word at
 * |offset_bytes| (a multiple of 4) of |buffer| is not zero when the
 * device reaches them; copies and fills run regardless.  The word must be
 * written before begin with a barrier between (vkrt_cmd_barrier).
 * Regions do not nest.  |buffer| must be one of vkrt_buffer_create's
 * (device buffers carry the conditional-rendering usage where the device
 * has it).
 * Errors: INVALID_ARGUMENT when not recording, without the capability,
 * for a misaligned offset, a wrapped buffer, or an unbalanced begin/end. */
vkhlo_status_t vkrt_cmd_begin_conditional(vkrt_cmd_t *cmd, vkrt_buffer_t *buffer, uint64_t offset_bytes);
vkhlo_status_t vkrt_cmd_end_conditional(vkrt_cmd_t *cmd);
/* Ends, submits to the device's queue and waits on a fence.
 * Errors: UNAVAILABLE on VK_ERROR_DEVICE_LOST. */
vkhlo_status_t vkrt_cmd_submit_and_wait(vkrt_cmd_t *cmd);

/* Replay.  vkrt_cmd_end finishes a recording without submitting it; the
 * recorded commands and their descriptor sets stay valid until the next
 * vkrt_cmd_begin (or destroy), and vkrt_cmd_submit may submit them any
 * number of times.  With |wait| false the submission stays in flight: the
 * next submit, begin, wait or destroy of this cmd waits for it first, and
 * work submitted later to the same queue (e.g. another cmd that starts with
 * vkrt_cmd_barrier) is ordered after it.  Every buffer the recording binds
 * must outlive its last submission.
 * Errors: INVALID_ARGUMENT when not recording (end) / not ended (submit);
 * UNAVAILABLE on device loss. */
vkhlo_status_t vkrt_cmd_end(vkrt_cmd_t *cmd);
vkhlo_status_t vkrt_cmd_submit(vkrt_cmd_t *cmd, bool wait);
/* Waits for a submission left in flight (no-op when there is none). */
vkhlo_status_t vkrt_cmd_wait(vkrt_cmd_t *cmd);
/* True between vkrt_cmd_end and the next vkrt_cmd_begin. */
bool vkrt_cmd_is_ended(const vkrt_cmd_t *cmd);

/* Asynchronous submission (embedding): the ended recording is submitted
 * waiting on the caller's semaphores and signalling the caller's
 * semaphores and fence.  Handles are VkSemaphore / VkFence as void*;
 * |wait_values| / |signal_values| (NULL when no semaphore is a timeline
 * semaphore) hold one value per semaphore (ignored for binary ones) and
 * are passed in VkTimelineSemaphoreSubmitInfo.  The cmd's own fence is
 * signalled too, so a later submit/begin/wait/destroy of this cmd waits
 * for this submission (and nothing else: no queue or device wait idle).
 * The caller's fence, when given, is signalled by an empty submission
 * right after (VkQueueSubmit with no batches), which completes once all
 * earlier submissions to the queue, this one included, have. */
typedef struct vkrt_submit_info {
  uint32_t wait_count;
  void *const *wait_semaphores;
  const uint32_t *wait_stage_masks; /* VkPipelineStageFlags, one per wait */
  const uint64_t *wait_values;
  uint32_t signal_count;
  void *const *signal_semaphores;
  const uint64_t *signal_values;
  void *fence; /* VkFence or NULL */
} vkrt_submit_info_t;
vkhlo_status_t vkrt_cmd_submit_async(vkrt_cmd_t *cmd, const vkrt_submit_info_t *info);

/* Recording into the caller's command buffer (embedding): between
 * vkrt_cmd_begin_external and vkrt_cmd_end_external, dispatch / copy /
 * fill / barrier go into |command_buffer| (a VkCommandBuffer in the
 * recording state, as void*), which vkrt neither begins, ends, submits
 * nor frees.  The descriptor sets used stay valid until the next begin of
 * this cmd (either kind) or its destroy: the caller's command buffer must
 * have finished executing by then.  No barrier is added at the end. */
vkhlo_status_t vkrt_cmd_begin_external(vkrt_cmd_t *cmd, void *command_buffer);
vkhlo_status_t vkrt_cmd_end_external(vkrt_cmd_t *cmd);

/* Profiling.  vkrt_cmd_timestamp records a timestamp taken when the work
 * recorded before it has finished (VK_PIPELINE_STAGE_BOTTOM_OF_PIPE) and
 * returns its index within this recording (UINT32_MAX when the recording
 * already holds VKRT_MAX_TIMESTAMPS).  After the submission's wait,
 * vkrt_cmd_read_timestamps gives the first |count| in nanoseconds (device
 * clock, converted with timestampPeriod).
 * Errors: UNIMPLEMENTED when the queue has no timestamps. */
#define VKRT_MAX_TIMESTAMPS 8192u
vkhlo_status_t vkrt_cmd_timestamp(vkrt_cmd_t *cmd, uint32_t *out_index);
vkhlo_status_t vkrt_cmd_read_timestamps(vkrt_cmd_t *cmd, uint32_t count, double *out_ns);

#endif
