/*
 * Buffers: device-local storage buffers (STORAGE | TRANSFER_SRC |
 * TRANSFER_DST), each with its own VkDeviceMemory, and synchronous host
 * uploads/downloads.
 *
 * Memory type.  Among the types the buffer allows, in order: DEVICE_LOCAL
 * and not HOST_VISIBLE (a discrete GPU's VRAM), DEVICE_LOCAL (unified
 * memory: integrated GPUs, lavapipe), then anything.  If allocating from a
 * type fails for lack of memory the next candidate is tried.
 *
 * Host access.  When the chosen memory is HOST_VISIBLE the buffer is mapped
 * once at creation and uploads/downloads are memcpy (with a flush or an
 * invalidate, rounded to nonCoherentAtomSize, for non-coherent memory).
 * Otherwise (or with the force_staging testing option) they go through a
 * temporary host-visible staging buffer of at most STAGING_CHUNK bytes and
 * one-shot command buffers waited on with a fence.
 *
 * Synchronization.  Host access is only correct while the GPU is not using
 * the buffer; vkhlo's command API is synchronous (vkrt_cmd_submit_and_wait),
 * and every submission ends with a barrier that makes device writes
 * visible to the host, so a download after a wait sees the results.
 */
#include "vk_runtime/vkrt_internal.h"

#include <stdlib.h>
#include <string.h>

#define STAGING_CHUNK ((uint64_t)32 << 20)

/* Memory type candidates for |type_bits|, best first; returns the count. */
static uint32_t rank_memory_types(const VkPhysicalDeviceMemoryProperties *mp, uint32_t type_bits,
                                  bool host, bool cached, uint32_t out[VK_MAX_MEMORY_TYPES]) {
  uint32_t n = 0;
  for (int tier = 0; tier < 3; tier++) {
    for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
      if (!(type_bits & (1u << i))) continue;
      VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
      bool device_local = f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      bool visible = f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      bool coherent = f & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      bool is_cached = f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      int t;
      if (host) {
        if (!visible) continue;
        t = (coherent && (!cached || is_cached)) ? 0 : coherent ? 1 : 2;
      } else {
        t = (device_local && !visible) ? 0 : device_local ? 1 : 2;
      }
      if (t == tier) out[n++] = i;
    }
  }
  return n;
}

/* create_raw's second half with the caller's allocator (embedding): the
 * memory comes from memory_allocator.allocate, is bound at the offset it
 * gives, and is never mapped by vkrt (the allocator's |mapped| is used). */
static vkhlo_status_t create_raw_external(vkrt_device_t *d, uint64_t size, bool host,
                                          const VkMemoryRequirements *req, vkrt_buffer_t *b) {
  vkrt_memory_request_t request = {req->size, req->alignment, req->memoryTypeBits, host};
  vkrt_memory_block_t block;
  memset(&block, 0, sizeof block);
  VkResult r = (VkResult)d->memory_allocator.allocate(d->memory_allocator.user, &request, &block);
  vkhlo_status_t s = NULL;
  if (r != VK_SUCCESS || !block.memory) {
    s = vkrt_vk_status("the caller's device-memory allocator", r != VK_SUCCESS ? r : VK_ERROR_OUT_OF_DEVICE_MEMORY);
  } else if (block.offset % (req->alignment ? req->alignment : 1)) {
    s = VKHLO_INVALID("the caller's device-memory allocator returned offset %llu, not a multiple of %llu",
                      (unsigned long long)block.offset, (unsigned long long)req->alignment);
  } else if (host && (!block.mapped || !block.host_coherent)) {
    s = VKHLO_INVALID("the caller's device-memory allocator returned no host-coherent mapping for a "
                      "staging buffer of %llu bytes", (unsigned long long)size);
  } else if ((r = d->vk.vkBindBufferMemory(d->device, b->buffer, (VkDeviceMemory)block.memory, block.offset)) !=
             VK_SUCCESS) {
    s = vkrt_vk_status("vkBindBufferMemory", r);
  }
  if (s) {
    if (block.memory && d->memory_allocator.free) d->memory_allocator.free(d->memory_allocator.user, &block);
    d->vk.vkDestroyBuffer(d->device, b->buffer, d->alloc);
    b->buffer = VK_NULL_HANDLE;
    return s;
  }
  b->external_memory = true;
  b->block = block;
  /* only coherent mappings are used: flushes would need the memory handle
   * and the allocator's offset rounding */
  b->mapped = (host || !d->force_staging) && block.host_coherent ? block.mapped : NULL;
  b->host_coherent = block.host_coherent;
  return NULL;
}

/* Creates a buffer and binds fresh memory; |host| asks for host-visible
 * memory (staging).  On failure nothing is left allocated. */
static vkhlo_status_t create_raw(vkrt_device_t *d, uint64_t size, bool host, bool cached,
                                 vkrt_buffer_t *b) {
  VkBufferCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
      .size = size,
      .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
               VK_BUFFER_USAGE_TRANSFER_DST_BIT,
      .sharingMode = VK_SHARING_MODE_EXCLUSIVE,
  };
  /* texel views of it (vkrt_pipeline_create) */
  if (vkrt_texel_views_supported(&d->caps)) info.usage |= VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;
  /* predicates of vkrt_cmd_begin_conditional */
  if (d->caps.conditional_rendering) info.usage |= VK_BUFFER_USAGE_CONDITIONAL_RENDERING_BIT_EXT;
  if (host) info.usage = VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  b->texel_usage = (info.usage & VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  VkResult r = d->vk.vkCreateBuffer(d->device, &info, d->alloc, &b->buffer);
  if (r != VK_SUCCESS) {
    b->buffer = VK_NULL_HANDLE;
    return vkrt_vk_status("vkCreateBuffer", r);
  }
  VkMemoryRequirements req;
  d->vk.vkGetBufferMemoryRequirements(d->device, b->buffer, &req);
  if (d->memory_allocator.allocate) return create_raw_external(d, size, host, &req, b);
  uint32_t candidates[VK_MAX_MEMORY_TYPES];
  uint32_t n = rank_memory_types(&d->memory_properties, req.memoryTypeBits, host, cached, candidates);
  r = VK_ERROR_OUT_OF_DEVICE_MEMORY;
  const char *failed_call = "vkAllocateMemory";
  for (uint32_t i = 0; i < n; i++) {
    VkMemoryAllocateInfo alloc = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
        .allocationSize = req.size,
        .memoryTypeIndex = candidates[i],
    };
    r = d->vk.vkAllocateMemory(d->device, &alloc, d->alloc, &b->memory);
    if (r == VK_SUCCESS) {
      b->memory_type_index = candidates[i];
      d->memory.allocations_made++;
      d->memory.allocations_live++;
      d->memory.bytes_live += req.size;
      b->memory_bytes = req.size;
      break;
    }
    b->memory = VK_NULL_HANDLE;
    if (r != VK_ERROR_OUT_OF_DEVICE_MEMORY && r != VK_ERROR_OUT_OF_HOST_MEMORY) break;
  }
  if (r == VK_SUCCESS) {
    failed_call = "vkBindBufferMemory";
    r = d->vk.vkBindBufferMemory(d->device, b->buffer, b->memory, 0);
  }
  VkMemoryPropertyFlags flags =
      r == VK_SUCCESS ? d->memory_properties.memoryTypes[b->memory_type_index].propertyFlags : 0;
  b->host_coherent = flags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  bool map = (flags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) && (host || !d->force_staging);
  if (r == VK_SUCCESS && map) {
    failed_call = "vkMapMemory";
    r = d->vk.vkMapMemory(d->device, b->memory, 0, VK_WHOLE_SIZE, 0, &b->mapped);
    if (r != VK_SUCCESS) b->mapped = NULL;
  }
  if (r != VK_SUCCESS) {
    vkhlo_status_t s = n == 0 ? vkhlo_status_make(VKHLO_STATUS_INTERNAL,
                                                  "no %s memory type for a buffer of %llu bytes",
                                                  host ? "host-visible" : "suitable",
                                                  (unsigned long long)size)
                              : vkrt_vk_status(failed_call, r);
    if (b->memory) {
      d->vk.vkFreeMemory(d->device, b->memory, d->alloc);
      d->memory.allocations_live--;
      d->memory.bytes_live -= b->memory_bytes;
    }
    d->vk.vkDestroyBuffer(d->device, b->buffer, d->alloc);
    b->memory = VK_NULL_HANDLE;
    b->buffer = VK_NULL_HANDLE;
    return s;
  }
  return NULL;
}

static void destroy_raw(vkrt_device_t *d, vkrt_buffer_t *b) {
  if (b->wrapped) return; /* the caller's */
  if (b->external_memory) {
    if (b->buffer) d->vk.vkDestroyBuffer(d->device, b->buffer, d->alloc);
    if (d->memory_allocator.free) d->memory_allocator.free(d->memory_allocator.user, &b->block);
    return;
  }
  if (b->mapped) d->vk.vkUnmapMemory(d->device, b->memory);
  if (b->buffer) d->vk.vkDestroyBuffer(d->device, b->buffer, d->alloc);
  if (b->memory) {
    d->vk.vkFreeMemory(d->device, b->memory, d->alloc);
    d->memory.allocations_live--;
    d->memory.bytes_live -= b->memory_bytes;
  }
}

/* A buffer with memory of its own: device-local storage, or (|readback|)
 * host-visible and mapped, the destination of copies read back. */
static vkhlo_status_t create_buffer(vkrt_device_t *device, uint64_t size_bytes, bool readback,
                                    vkrt_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (size_bytes == 0) size_bytes = 16;
  if (device->caps.max_memory_allocation_size && size_bytes > device->caps.max_memory_allocation_size)
    return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED,
                             "buffer of %llu bytes exceeds the device's maxMemoryAllocationSize (%llu)",
                             (unsigned long long)size_bytes,
                             (unsigned long long)device->caps.max_memory_allocation_size);
  vkrt_buffer_t *b = vkhlo_calloc(device->allocator, 1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  b->device = device;
  b->id = ++device->next_buffer_id;
  b->size_bytes = size_bytes;
  vkhlo_status_t s = create_raw(device, size_bytes, readback, readback, b);
  if (!s && readback && !b->mapped) { /* (an embedder's allocator gave memory it did not map) */
    destroy_raw(device, b);
    s = VKHLO_INTERNAL("the memory is not mapped");
  }
  if (s) {
    vkhlo_free(device->allocator, b);
    return vkhlo_status_annotate(s, "creating a %sbuffer of %llu bytes", readback ? "readback " : "",
                                 (unsigned long long)size_bytes);
  }
  *out_buffer = b;
  return NULL;
}

vkhlo_status_t vkrt_buffer_create(vkrt_device_t *device, uint64_t size_bytes, vkrt_buffer_t **out_buffer) {
  return create_buffer(device, size_bytes, false, out_buffer);
}

vkhlo_status_t vkrt_buffer_wrap(vkrt_device_t *device, void *vk_buffer, uint64_t offset_bytes,
                                uint64_t range_bytes, vkrt_buffer_t **out_buffer) {
  *out_buffer = NULL;
  uint64_t align = device->caps.min_storage_buffer_offset_alignment ? device->caps.min_storage_buffer_offset_alignment : 1;
  if (align < 4) align = 4; /* vkCmdFillBuffer offsets */
  if (!vk_buffer) return VKHLO_INVALID("vkrt_buffer_wrap: null VkBuffer");
  if (range_bytes == 0) return VKHLO_INVALID("vkrt_buffer_wrap: range is 0 bytes");
  if (offset_bytes % align)
    return VKHLO_INVALID("vkrt_buffer_wrap: offset %llu is not a multiple of the device's "
                         "minStorageBufferOffsetAlignment (%llu)",
                         (unsigned long long)offset_bytes, (unsigned long long)align);
  if (offset_bytes > UINT64_MAX - range_bytes) return VKHLO_INVALID("vkrt_buffer_wrap: offset + range overflows");
  vkrt_buffer_t *b = vkhlo_calloc(device->allocator, 1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  b->device = device;
  b->id = ++device->next_buffer_id;
  b->buffer = (VkBuffer)vk_buffer;
  b->size_bytes = range_bytes;
  b->wrapped = true;
  b->base_offset = offset_bytes;
  *out_buffer = b;
  return NULL;
}

bool vkrt_buffer_is_wrapped(const vkrt_buffer_t *buffer) { return buffer->wrapped; }

bool vkrt_buffer_is_mapped(const vkrt_buffer_t *buffer) { return buffer->mapped != NULL; }

vkhlo_status_t vkrt_buffer_create_readback(vkrt_device_t *device, uint64_t size_bytes, vkrt_buffer_t **out_buffer) {
  return create_buffer(device, size_bytes, true, out_buffer);
}

void vkrt_buffer_destroy(vkrt_buffer_t *buffer) {
  if (!buffer) return;
  destroy_raw(buffer->device, buffer);
  vkhlo_free(buffer->device->allocator, buffer);
}

uint64_t vkrt_buffer_size(const vkrt_buffer_t *buffer) { return buffer->size_bytes; }

uint64_t vkrt_buffer_id(const vkrt_buffer_t *buffer) { return buffer->id; }

void vkrt_device_memory_stats(const vkrt_device_t *device, vkrt_memory_stats_t *out) {
  *out = device->memory;
}

static vkhlo_status_t check_range(const vkrt_buffer_t *b, uint64_t offset, uint64_t size, const char *what) {
  if (offset > b->size_bytes || size > b->size_bytes - offset)
    return VKHLO_INVALID("%s: range [%llu, %llu) is outside the buffer of %llu bytes", what,
                         (unsigned long long)offset, (unsigned long long)(offset + size),
                         (unsigned long long)b->size_bytes);
  return NULL;
}

/* Range [offset, offset+size) widened to nonCoherentAtomSize. */
static VkMappedMemoryRange atom_range(const vkrt_buffer_t *b, uint64_t offset, uint64_t size) {
  VkDeviceSize atom = b->device->non_coherent_atom_size;
  VkDeviceSize begin = offset / atom * atom;
  VkDeviceSize end = (offset + size + atom - 1) / atom * atom;
  VkMappedMemoryRange range = {
      .sType = VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE,
      .memory = b->memory,
      .offset = begin,
      .size = end >= b->size_bytes ? VK_WHOLE_SIZE : end - begin,
  };
  return range;
}

typedef struct copy_args {
  VkBuffer src, dst;
  VkBufferCopy region;
} copy_args_t;

static void record_copy(vkrt_device_t *d, VkCommandBuffer cb, void *user) {
  copy_args_t *a = user;
  d->vk.vkCmdCopyBuffer(cb, a->src, a->dst, 1, &a->region);
}

/* Staged transfer in chunks: |upload| copies host->staging->buffer. */
static vkhlo_status_t staged_transfer(vkrt_buffer_t *b, uint64_t offset, void *host_data,
                                      uint64_t size, bool upload) {
  vkrt_device_t *d = b->device;
  vkrt_buffer_t staging;
  memset(&staging, 0, sizeof staging);
  staging.device = d;
  uint64_t chunk = size < STAGING_CHUNK ? size : STAGING_CHUNK;
  staging.size_bytes = chunk;
  VKHLO_RETURN_IF_ERROR(create_raw(d, chunk, true, !upload, &staging));
  vkhlo_status_t s = NULL;
  for (uint64_t done = 0; done < size && !s; done += chunk) {
    uint64_t n = size - done < chunk ? size - done : chunk;
    copy_args_t args;
    args.region.size = n;
    if (upload) {
      memcpy(staging.mapped, (const char *)host_data + done, n);
      if (!staging.host_coherent) {
        VkMappedMemoryRange range = atom_range(&staging, 0, n);
        VkResult r = d->vk.vkFlushMappedMemoryRanges(d->device, 1, &range);
        if (r != VK_SUCCESS) s = vkrt_vk_status("vkFlushMappedMemoryRanges", r);
      }
      args.src = staging.buffer;
      args.dst = b->buffer;
      args.region.srcOffset = 0;
      args.region.dstOffset = b->base_offset + offset + done;
      if (!s) s = vkrt_device_run_one_shot(d, record_copy, &args);
    } else {
      args.src = b->buffer;
      args.dst = staging.buffer;
      args.region.srcOffset = b->base_offset + offset + done;
      args.region.dstOffset = 0;
      s = vkrt_device_run_one_shot(d, record_copy, &args);
      if (!s && !staging.host_coherent) {
        VkMappedMemoryRange range = atom_range(&staging, 0, n);
        VkResult r = d->vk.vkInvalidateMappedMemoryRanges(d->device, 1, &range);
        if (r != VK_SUCCESS) s = vkrt_vk_status("vkInvalidateMappedMemoryRanges", r);
      }
      if (!s) memcpy((char *)host_data + done, staging.mapped, n);
    }
  }
  destroy_raw(d, &staging);
  return s;
}

vkhlo_status_t vkrt_buffer_upload(vkrt_buffer_t *buffer, uint64_t offset_bytes, const void *data,
                                  uint64_t size_bytes) {
  VKHLO_RETURN_IF_ERROR(check_range(buffer, offset_bytes, size_bytes, "vkrt_buffer_upload"));
  if (size_bytes == 0) return NULL;
  vkrt_device_t *d = buffer->device;
  if (!buffer->mapped) return staged_transfer(buffer, offset_bytes, (void *)data, size_bytes, true);
  memcpy((char *)buffer->mapped + offset_bytes, data, size_bytes);
  if (!buffer->host_coherent) {
    VkMappedMemoryRange range = atom_range(buffer, offset_bytes, size_bytes);
    VKRT_CHECK("vkFlushMappedMemoryRanges", d->vk.vkFlushMappedMemoryRanges(d->device, 1, &range));
  }
  return NULL;
}

vkhlo_status_t vkrt_buffer_download(vkrt_buffer_t *buffer, uint64_t offset_bytes, void *data,
                                    uint64_t size_bytes) {
  VKHLO_RETURN_IF_ERROR(check_range(buffer, offset_bytes, size_bytes, "vkrt_buffer_download"));
  if (size_bytes == 0) return NULL;
  vkrt_device_t *d = buffer->device;
  if (!buffer->mapped) return staged_transfer(buffer, offset_bytes, data, size_bytes, false);
  if (!buffer->host_coherent) {
    VkMappedMemoryRange range = atom_range(buffer, offset_bytes, size_bytes);
    VKRT_CHECK("vkInvalidateMappedMemoryRanges",
               d->vk.vkInvalidateMappedMemoryRanges(d->device, 1, &range));
  }
  memcpy(data, (const char *)buffer->mapped + offset_bytes, size_bytes);
  return NULL;
}
