/*
 * Command recording and submission.
 *
 * A vkrt_cmd_t owns one primary command buffer (from the device's pool,
 * which allows individual resets), a fence, and a growing list of
 * descriptor pools.  Life cycle:
 *
 *   begin -> dispatch/copy/fill/barrier ... -> submit_and_wait -> begin ...
 *
 * or, to replay a recording:
 *
 *   begin -> record ... -> end -> submit(wait?) -> submit(wait?) ... -> begin ...
 *
 * A recorded (ended) command buffer keeps its descriptor sets and can be
 * submitted any number of times.  A submission without wait leaves it in
 * flight: the next submit, begin, wait or destroy first waits for its
 * fence, so a cmd is never re-recorded or resubmitted while the device
 * still runs it.  What it reads and writes must stay alive until then.
 *
 * begin resets every descriptor pool (the sets of the previous submission
 * are dead once its fence signalled) and the command buffer.  Each dispatch
 * allocates one descriptor set from the current pool, moving on to the next
 * pool, or creating one, when the current pool is exhausted.  So pools are
 * created only while a single recording needs more sets than ever before.
 *
 * Recording errors (bad ranges, wrong binding counts) are returned as
 * INVALID_ARGUMENT before anything is recorded, so the command buffer stays
 * usable.  submit_and_wait always leaves the cmd ready to be begun again,
 * whether or not the submission succeeded.
 *
 * Every submission ends with a barrier from compute/transfer writes to
 * host reads, so mapped buffers can be read after the fence wait.
 */
#include "vk_runtime/vkrt_internal.h"

#include <stdlib.h>
#include <string.h>

enum { SETS_PER_POOL = 256, DESCRIPTORS_PER_SET_ESTIMATE = 8 };

struct vkrt_cmd {
  vkrt_device_t *device;
  VkCommandBuffer cb; /* the one recorded into: own_cb, or the caller's */
  VkCommandBuffer own_cb;
  bool external;      /* between begin_external and end_external */
  VkFence fence;
  VkDescriptorPool *pools;
  uint32_t pool_count, pool_capacity;
  uint32_t current_pool;
  /* texel views of this recording's dispatches, and the copies some of
   * them view (vkrt_cmd_dispatch); released at the next begin */
  VkBufferView *views;
  uint32_t view_count, view_capacity;
  vkrt_buffer_t **copies;
  uint32_t copy_count, copy_capacity;
  bool recording;
  bool conditional; /* inside vkrt_cmd_begin_conditional */
  bool ended;     /* recorded and ended: submittable */
  bool in_flight; /* submitted, fence not waited for yet */
  /* profiling: VKRT_MAX_TIMESTAMPS queries, created on first use and
   * reset at the start of each recording that uses them */
  VkQueryPool timestamps;
  uint32_t timestamp_count;
  bool timestamps_reset;
  double timestamp_period; /* ns per tick */
};

static vkhlo_status_t wait_in_flight(vkrt_cmd_t *c) {
  if (!c->in_flight) return NULL;
  c->in_flight = false;
  vkrt_device_t *d = c->device;
  VKRT_CHECK("vkWaitForFences", d->vk.vkWaitForFences(d->device, 1, &c->fence, VK_TRUE, UINT64_MAX));
  return NULL;
}

/* Destroys the texel views and copies of the previous recording (whose
 * submission has completed). */
static void release_views(vkrt_cmd_t *c) {
  vkrt_device_t *d = c->device;
  for (uint32_t i = 0; i < c->view_count; i++) d->vk.vkDestroyBufferView(d->device, c->views[i], d->alloc);
  for (uint32_t i = 0; i < c->copy_count; i++) vkrt_buffer_destroy(c->copies[i]);
  c->view_count = c->copy_count = 0;
}

/* Makes room for one more element of a vkhlo_realloc'd array. */
static bool reserve_one(const vkhlo_allocator_t *allocator, void **array, uint32_t count, uint32_t *capacity,
                        size_t size) {
  if (count < *capacity) return true;
  uint32_t cap = *capacity ? *capacity * 2 : 16;
  void *p = vkhlo_realloc(allocator, *array, cap * size);
  if (!p) return false;
  *array = p;
  *capacity = cap;
  return true;
}

vkhlo_status_t vkrt_cmd_create(vkrt_device_t *device, vkrt_cmd_t **out_cmd) {
  *out_cmd = NULL;
  vkrt_device_t *d = device;
  vkrt_cmd_t *c = vkhlo_calloc(device->allocator, 1, sizeof *c);
  if (!c) return VKHLO_NO_MEMORY();
  c->device = d;
  VkCommandBufferAllocateInfo alloc = {
      .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
      .commandPool = d->command_pool,
      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
      .commandBufferCount = 1,
  };
  vkhlo_status_t s = NULL;
  VkResult r = d->vk.vkAllocateCommandBuffers(d->device, &alloc, &c->cb);
  if (r != VK_SUCCESS) {
    c->cb = VK_NULL_HANDLE;
    s = vkrt_vk_status("vkAllocateCommandBuffers", r);
  }
  c->own_cb = c->cb;
  if (!s) {
    VkFenceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    if ((r = d->vk.vkCreateFence(d->device, &info, d->alloc, &c->fence)) != VK_SUCCESS) {
      c->fence = VK_NULL_HANDLE;
      s = vkrt_vk_status("vkCreateFence", r);
    }
  }
  if (s) {
    vkrt_cmd_destroy(c);
    return s;
  }
  *out_cmd = c;
  return NULL;
}

void vkrt_cmd_destroy(vkrt_cmd_t *c) {
  if (!c) return;
  vkrt_device_t *d = c->device;
  if (c->in_flight) d->vk.vkWaitForFences(d->device, 1, &c->fence, VK_TRUE, UINT64_MAX);
  for (uint32_t i = 0; i < c->pool_count; i++) d->vk.vkDestroyDescriptorPool(d->device, c->pools[i], d->alloc);
  vkhlo_free(c->device->allocator, c->pools);
  release_views(c);
  vkhlo_free(c->device->allocator, c->views);
  vkhlo_free(c->device->allocator, c->copies);
  if (c->timestamps) d->vk.vkDestroyQueryPool(d->device, c->timestamps, d->alloc);
  if (c->fence) d->vk.vkDestroyFence(d->device, c->fence, d->alloc);
  if (c->own_cb) d->vk.vkFreeCommandBuffers(d->device, d->command_pool, 1, &c->own_cb);
  vkhlo_free(c->device->allocator, c);
}

vkhlo_status_t vkrt_cmd_begin(vkrt_cmd_t *c) {
  vkrt_device_t *d = c->device;
  if (c->recording) return VKHLO_INVALID("vkrt_cmd_begin: the command buffer is already recording");
  c->cb = c->own_cb;
  VKHLO_RETURN_IF_ERROR(wait_in_flight(c));
  c->ended = false;
  for (uint32_t i = 0; i < c->pool_count; i++)
    VKRT_CHECK("vkResetDescriptorPool", d->vk.vkResetDescriptorPool(d->device, c->pools[i], 0));
  c->current_pool = 0;
  release_views(c);
  VkCommandBufferBeginInfo begin = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  VKRT_CHECK("vkBeginCommandBuffer", d->vk.vkBeginCommandBuffer(c->cb, &begin));
  c->recording = true;
  c->conditional = false;
  c->timestamp_count = 0;
  c->timestamps_reset = false;
  return NULL;
}

vkhlo_status_t vkrt_cmd_timestamp(vkrt_cmd_t *c, uint32_t *out_index) {
  vkrt_device_t *d = c->device;
  *out_index = UINT32_MAX;
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_timestamp: vkrt_cmd_begin was not called");
  if (!c->timestamps) {
    uint32_t n = 0;
    d->ifn.vkGetPhysicalDeviceQueueFamilyProperties(d->physical_device, &n, NULL);
    VkQueueFamilyProperties *families = vkhlo_calloc(c->device->allocator, n ? n : 1, sizeof *families);
    if (!families) return VKHLO_NO_MEMORY();
    d->ifn.vkGetPhysicalDeviceQueueFamilyProperties(d->physical_device, &n, families);
    uint32_t bits = d->queue_family_index < n ? families[d->queue_family_index].timestampValidBits : 0;
    vkhlo_free(c->device->allocator, families);
    VkPhysicalDeviceProperties props;
    d->ifn.vkGetPhysicalDeviceProperties(d->physical_device, &props);
    if (!bits || props.limits.timestampPeriod <= 0)
      return VKHLO_UNIMPLEMENTED("the device's compute queue has no timestamps");
    c->timestamp_period = props.limits.timestampPeriod;
    VkQueryPoolCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
        .queryType = VK_QUERY_TYPE_TIMESTAMP,
        .queryCount = VKRT_MAX_TIMESTAMPS,
    };
    VKRT_CHECK("vkCreateQueryPool", d->vk.vkCreateQueryPool(d->device, &info, d->alloc, &c->timestamps));
  }
  if (!c->timestamps_reset) {
    d->vk.vkCmdResetQueryPool(c->cb, c->timestamps, 0, VKRT_MAX_TIMESTAMPS);
    c->timestamps_reset = true;
  }
  if (c->timestamp_count == VKRT_MAX_TIMESTAMPS) return NULL;
  d->vk.vkCmdWriteTimestamp(c->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, c->timestamps, c->timestamp_count);
  *out_index = c->timestamp_count++;
  return NULL;
}

vkhlo_status_t vkrt_cmd_read_timestamps(vkrt_cmd_t *c, uint32_t count, double *out_ns) {
  vkrt_device_t *d = c->device;
  if (count > c->timestamp_count || !c->timestamps)
    return VKHLO_INVALID("vkrt_cmd_read_timestamps: %u timestamps asked, %u recorded", count, c->timestamp_count);
  if (!count) return NULL;
  VKHLO_RETURN_IF_ERROR(wait_in_flight(c));
  uint64_t *ticks = vkhlo_calloc(c->device->allocator, count, sizeof *ticks);
  if (!ticks) return VKHLO_NO_MEMORY();
  VkResult r = d->vk.vkGetQueryPoolResults(d->device, c->timestamps, 0, count, count * sizeof *ticks, ticks,
                                           sizeof *ticks, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
  for (uint32_t i = 0; i < count && r == VK_SUCCESS; i++) out_ns[i] = (double)ticks[i] * c->timestamp_period;
  vkhlo_free(c->device->allocator, ticks);
  if (r != VK_SUCCESS) return vkrt_vk_status("vkGetQueryPoolResults", r);
  return NULL;
}

static vkhlo_status_t add_pool(vkrt_cmd_t *c, uint32_t min_descriptors) {
  vkrt_device_t *d = c->device;
  if (c->pool_count == c->pool_capacity) {
    uint32_t capacity = c->pool_capacity ? c->pool_capacity * 2 : 4;
    VkDescriptorPool *pools = vkhlo_realloc(c->device->allocator, c->pools, capacity * sizeof *pools);
    if (!pools) return VKHLO_NO_MEMORY();
    c->pools = pools;
    c->pool_capacity = capacity;
  }
  uint32_t descriptors = SETS_PER_POOL * DESCRIPTORS_PER_SET_ESTIMATE;
  if (descriptors < min_descriptors) descriptors = min_descriptors;
  VkDescriptorPoolSize sizes[2] = {
      {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, .descriptorCount = descriptors},
      {.type = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, .descriptorCount = descriptors},
  };
  VkDescriptorPoolCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
      .maxSets = SETS_PER_POOL,
      .poolSizeCount = vkrt_texel_views_supported(&d->caps) ? 2 : 1,
      .pPoolSizes = sizes,
  };
  VkDescriptorPool pool;
  VKRT_CHECK("vkCreateDescriptorPool", d->vk.vkCreateDescriptorPool(d->device, &info, d->alloc, &pool));
  c->pools[c->pool_count++] = pool;
  return NULL;
}

static vkhlo_status_t allocate_set(vkrt_cmd_t *c, vkrt_pipeline_t *p, VkDescriptorSet *out_set) {
  vkrt_device_t *d = c->device;
  bool fresh = false;
  for (;;) {
    if (c->current_pool == c->pool_count) {
      VKHLO_RETURN_IF_ERROR(add_pool(c, p->binding_count + p->texel_count));
      fresh = true;
    }
    VkDescriptorSetAllocateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
        .descriptorPool = c->pools[c->current_pool],
        .descriptorSetCount = 1,
        .pSetLayouts = &p->set_layout,
    };
    VkResult r = d->vk.vkAllocateDescriptorSets(d->device, &info, out_set);
    if (r == VK_SUCCESS) return NULL;
    if ((r != VK_ERROR_OUT_OF_POOL_MEMORY && r != VK_ERROR_FRAGMENTED_POOL) || fresh)
      return vkrt_vk_status("vkAllocateDescriptorSets", r);
    c->current_pool++;
  }
}

/* The texel view of binding |i| (vkrt_pipeline_create) in |format|
 * (texels of |texel_bytes|), appended to c->views: of the binding's range
 * in place, or of a copy recorded now when the buffer lacks the usage
 * (wrapped) or the offset is misaligned. */
static vkhlo_status_t texel_view(vkrt_cmd_t *c, uint32_t i, const vkrt_binding_t *b, VkFormat format,
                                 uint64_t texel_bytes) {
  vkrt_device_t *d = c->device;
  const vkrt_caps_t *caps = &d->caps;
  uint64_t range = b->size_bytes / texel_bytes * texel_bytes;
  if (range == 0)
    return VKHLO_INVALID("vkrt_cmd_dispatch: binding %u (%llu bytes) is too small for a texel view", i,
                         (unsigned long long)b->size_bytes);
  if (range / texel_bytes > caps->max_texel_buffer_elements)
    return VKHLO_UNIMPLEMENTED("vkrt_cmd_dispatch: binding %u is %llu texels; the device views at most %u", i,
                               (unsigned long long)(range / texel_bytes), caps->max_texel_buffer_elements);
  if (!reserve_one(d->allocator, (void **)&c->views, c->view_count, &c->view_capacity, sizeof *c->views) ||
      !reserve_one(d->allocator, (void **)&c->copies, c->copy_count, &c->copy_capacity, sizeof *c->copies))
    return VKHLO_NO_MEMORY();
  uint64_t align = caps->min_texel_buffer_offset_alignment ? caps->min_texel_buffer_offset_alignment : 1;
  VkBuffer buffer = b->buffer->buffer;
  uint64_t offset = b->buffer->base_offset + b->offset_bytes;
  if (!b->buffer->texel_usage || offset % align != 0) {
    vkrt_buffer_t *copy;
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(d, range, &copy));
    c->copies[c->copy_count++] = copy;
    VKHLO_RETURN_IF_ERROR(vkrt_cmd_copy(c, b->buffer, b->offset_bytes, copy, 0, range));
    vkrt_cmd_barrier(c);
    buffer = copy->buffer;
    offset = copy->base_offset;
  }
  VkBufferViewCreateInfo info = {
      .sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
      .buffer = buffer,
      .format = format,
      .offset = offset,
      .range = range,
  };
  VKRT_CHECK("vkCreateBufferView", d->vk.vkCreateBufferView(d->device, &info, d->alloc, &c->views[c->view_count]));
  c->view_count++;
  return NULL;
}

vkhlo_status_t vkrt_cmd_dispatch(vkrt_cmd_t *c, vkrt_pipeline_t *p, uint32_t binding_count,
                                 const vkrt_binding_t *bindings, const void *push_constants,
                                 uint32_t push_constant_size, const uint32_t group_count[3]) {
  vkrt_device_t *d = c->device;
  const vkrt_caps_t *caps = &d->caps;
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_dispatch: vkrt_cmd_begin was not called");
  if (binding_count != p->binding_count)
    return VKHLO_INVALID("vkrt_cmd_dispatch: %u bindings given, the pipeline has %u", binding_count,
                         p->binding_count);
  if (push_constant_size > p->push_constant_size || (push_constant_size && !push_constants))
    return VKHLO_INVALID("vkrt_cmd_dispatch: %u bytes of push constants, the pipeline has %u",
                         push_constant_size, p->push_constant_size);
  for (int i = 0; i < 3; i++)
    if (group_count[i] > caps->max_compute_workgroup_count[i])
      return VKHLO_INVALID("vkrt_cmd_dispatch: group count %u in dimension %d exceeds the device limit %u",
                           group_count[i], i, caps->max_compute_workgroup_count[i]);
  for (uint32_t i = 0; i < binding_count; i++) {
    const vkrt_binding_t *b = &bindings[i];
    uint64_t align = caps->min_storage_buffer_offset_alignment ? caps->min_storage_buffer_offset_alignment : 1;
    if (!b->buffer || b->size_bytes == 0 || b->offset_bytes > b->buffer->size_bytes ||
        b->size_bytes > b->buffer->size_bytes - b->offset_bytes || b->offset_bytes % align != 0)
      return VKHLO_INVALID("vkrt_cmd_dispatch: binding %u: bad range [%llu, +%llu) of a buffer of %llu "
                           "bytes (offsets must be multiples of %llu)",
                           i, (unsigned long long)b->offset_bytes, (unsigned long long)b->size_bytes,
                           (unsigned long long)(b->buffer ? b->buffer->size_bytes : 0),
                           (unsigned long long)align);
    if (b->size_bytes > caps->max_storage_buffer_range)
      return VKHLO_UNIMPLEMENTED("vkrt_cmd_dispatch: binding %u is %llu bytes; the device binds at most %u",
                                 i, (unsigned long long)b->size_bytes, caps->max_storage_buffer_range);
  }

  /* texel views: made before the set's writes (a copy is recorded first) */
  uint32_t first_view = c->view_count;
  for (uint32_t i = 0; i < binding_count && i < 64; i++)
    if (p->texel_views >> i & 1)
      VKHLO_RETURN_IF_ERROR(texel_view(c, i, &bindings[i], VK_FORMAT_R32G32B32A32_UINT, 16));
  for (uint32_t i = 0; i < binding_count && i < 64; i++)
    if (p->scalar_views >> i & 1) VKHLO_RETURN_IF_ERROR(texel_view(c, i, &bindings[i], VK_FORMAT_R32_UINT, 4));

  if (binding_count > 0) {
    uint32_t total = binding_count + p->texel_count;
    VkDescriptorSet set;
    VKHLO_RETURN_IF_ERROR(allocate_set(c, p, &set));
    VkDescriptorBufferInfo small_infos[16];
    VkWriteDescriptorSet small_writes[24];
    VkDescriptorBufferInfo *infos = small_infos;
    VkWriteDescriptorSet *writes = small_writes;
    if (binding_count > 16 || total > 24) {
      infos = vkhlo_calloc(c->device->allocator, binding_count, sizeof *infos);
      writes = vkhlo_calloc(c->device->allocator, total, sizeof *writes);
      if (!infos || !writes) {
        vkhlo_free(c->device->allocator, infos);
        vkhlo_free(c->device->allocator, writes);
        return VKHLO_NO_MEMORY();
      }
    }
    for (uint32_t j = 0; j < p->texel_count; j++)
      writes[binding_count + j] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = set,
          .dstBinding = binding_count + j,
          .descriptorCount = 1,
          .descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER,
          .pTexelBufferView = &c->views[first_view + j],
      };
    for (uint32_t i = 0; i < binding_count; i++) {
      infos[i] = (VkDescriptorBufferInfo){
          .buffer = bindings[i].buffer->buffer,
          .offset = bindings[i].buffer->base_offset + bindings[i].offset_bytes,
          .range = bindings[i].size_bytes,
      };
      writes[i] = (VkWriteDescriptorSet){
          .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
          .dstSet = set,
          .dstBinding = i,
          .descriptorCount = 1,
          .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
          .pBufferInfo = &infos[i],
      };
    }
    d->vk.vkUpdateDescriptorSets(d->device, total, writes, 0, NULL);
    if (infos != small_infos) {
      vkhlo_free(c->device->allocator, infos);
      vkhlo_free(c->device->allocator, writes);
    }
    d->vk.vkCmdBindDescriptorSets(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
  }
  d->vk.vkCmdBindPipeline(c->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
  if (push_constant_size > 0)
    d->vk.vkCmdPushConstants(c->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_size,
                             push_constants);
  d->vk.vkCmdDispatch(c->cb, group_count[0], group_count[1], group_count[2]);
  return NULL;
}

vkhlo_status_t vkrt_cmd_copy(vkrt_cmd_t *c, vkrt_buffer_t *src, uint64_t src_offset, vkrt_buffer_t *dst,
                             uint64_t dst_offset, uint64_t size_bytes) {
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_copy: vkrt_cmd_begin was not called");
  if (src_offset > src->size_bytes || size_bytes > src->size_bytes - src_offset ||
      dst_offset > dst->size_bytes || size_bytes > dst->size_bytes - dst_offset)
    return VKHLO_INVALID("vkrt_cmd_copy: %llu bytes from offset %llu of a %llu-byte buffer to offset "
                         "%llu of a %llu-byte buffer is out of range",
                         (unsigned long long)size_bytes, (unsigned long long)src_offset,
                         (unsigned long long)src->size_bytes, (unsigned long long)dst_offset,
                         (unsigned long long)dst->size_bytes);
  if (src->buffer == dst->buffer && src->base_offset + src_offset < dst->base_offset + dst_offset + size_bytes &&
      dst->base_offset + dst_offset < src->base_offset + src_offset + size_bytes)
    return VKHLO_INVALID("vkrt_cmd_copy: source and destination ranges overlap");
  if (src == dst && src_offset < dst_offset + size_bytes && dst_offset < src_offset + size_bytes)
    return VKHLO_INVALID("vkrt_cmd_copy: source and destination ranges overlap");
  if (size_bytes == 0) return NULL;
  VkBufferCopy region = {.srcOffset = src->base_offset + src_offset, .dstOffset = dst->base_offset + dst_offset,
                         .size = size_bytes};
  c->device->vk.vkCmdCopyBuffer(c->cb, src->buffer, dst->buffer, 1, &region);
  return NULL;
}

vkhlo_status_t vkrt_cmd_fill(vkrt_cmd_t *c, vkrt_buffer_t *dst, uint64_t offset, uint64_t size_bytes,
                             uint32_t value) {
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_fill: vkrt_cmd_begin was not called");
  if (offset % 4 != 0 || size_bytes % 4 != 0)
    return VKHLO_INVALID("vkrt_cmd_fill: offset %llu and size %llu must be multiples of 4",
                         (unsigned long long)offset, (unsigned long long)size_bytes);
  if (offset > dst->size_bytes || size_bytes > dst->size_bytes - offset)
    return VKHLO_INVALID("vkrt_cmd_fill: range [%llu, %llu) is outside the buffer of %llu bytes",
                         (unsigned long long)offset, (unsigned long long)(offset + size_bytes),
                         (unsigned long long)dst->size_bytes);
  if (size_bytes == 0) return NULL;
  c->device->vk.vkCmdFillBuffer(c->cb, dst->buffer, dst->base_offset + offset, size_bytes, value);
  return NULL;
}

void vkrt_cmd_barrier(vkrt_cmd_t *c) {
  if (!c->recording) return;
  VkMemoryBarrier barrier = {
      .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
      .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
      .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                       VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
  };
  VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  VkPipelineStageFlags dst = stages;
  if (c->device->caps.conditional_rendering) { /* the predicates written before it */
    barrier.dstAccessMask |= VK_ACCESS_CONDITIONAL_RENDERING_READ_BIT_EXT;
    dst |= VK_PIPELINE_STAGE_CONDITIONAL_RENDERING_BIT_EXT;
  }
  c->device->vk.vkCmdPipelineBarrier(c->cb, stages, dst, 0, 1, &barrier, 0, NULL, 0, NULL);
}

vkhlo_status_t vkrt_cmd_begin_conditional(vkrt_cmd_t *c, vkrt_buffer_t *buffer, uint64_t offset_bytes) {
  vkrt_device_t *d = c->device;
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_begin_conditional: vkrt_cmd_begin was not called");
  if (!d->caps.conditional_rendering || !d->vk.vkCmdBeginConditionalRenderingEXT)
    return VKHLO_INVALID("vkrt_cmd_begin_conditional: the device has no conditional rendering");
  if (c->conditional) return VKHLO_INVALID("vkrt_cmd_begin_conditional: regions do not nest");
  if (!buffer || buffer->wrapped || offset_bytes % 4 != 0 || offset_bytes + 4 > buffer->size_bytes)
    return VKHLO_INVALID("vkrt_cmd_begin_conditional: no predicate word at offset %llu of that buffer",
                         (unsigned long long)offset_bytes);
  VkConditionalRenderingBeginInfoEXT info = {
      .sType = VK_STRUCTURE_TYPE_CONDITIONAL_RENDERING_BEGIN_INFO_EXT,
      .buffer = buffer->buffer,
      .offset = offset_bytes,
  };
  d->vk.vkCmdBeginConditionalRenderingEXT(c->cb, &info);
  c->conditional = true;
  return NULL;
}

vkhlo_status_t vkrt_cmd_end_conditional(vkrt_cmd_t *c) {
  if (!c->recording || !c->conditional)
    return VKHLO_INVALID("vkrt_cmd_end_conditional: no conditional region is open");
  c->device->vk.vkCmdEndConditionalRenderingEXT(c->cb);
  c->conditional = false;
  return NULL;
}

vkhlo_status_t vkrt_cmd_end(vkrt_cmd_t *c) {
  vkrt_device_t *d = c->device;
  if (!c->recording || c->external) return VKHLO_INVALID("vkrt_cmd_end: vkrt_cmd_begin was not called");
  c->recording = false;
  if (c->conditional) { /* a region left open by an error: closed, so the buffer stays valid */
    d->vk.vkCmdEndConditionalRenderingEXT(c->cb);
    c->conditional = false;
  }
  vkrt_record_host_barrier(d, c->cb);
  VKRT_CHECK("vkEndCommandBuffer", d->vk.vkEndCommandBuffer(c->cb));
  c->ended = true;
  return NULL;
}

vkhlo_status_t vkrt_cmd_submit(vkrt_cmd_t *c, bool wait) {
  vkrt_device_t *d = c->device;
  if (!c->ended) return VKHLO_INVALID("vkrt_cmd_submit: the command buffer was not ended");
  VKHLO_RETURN_IF_ERROR(wait_in_flight(c));
  VKRT_CHECK("vkResetFences", d->vk.vkResetFences(d->device, 1, &c->fence));
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .commandBufferCount = 1,
      .pCommandBuffers = &c->cb,
  };
  VKRT_CHECK("vkQueueSubmit", d->vk.vkQueueSubmit(d->queue, 1, &submit, c->fence));
  c->in_flight = true;
  if (wait) return wait_in_flight(c);
  return NULL;
}

vkhlo_status_t vkrt_cmd_wait(vkrt_cmd_t *c) { return wait_in_flight(c); }

vkhlo_status_t vkrt_cmd_submit_async(vkrt_cmd_t *c, const vkrt_submit_info_t *info) {
  vkrt_device_t *d = c->device;
  if (!c->ended) return VKHLO_INVALID("vkrt_cmd_submit_async: the command buffer was not ended");
  if ((info->wait_count && (!info->wait_semaphores || !info->wait_stage_masks)) ||
      (info->signal_count && !info->signal_semaphores))
    return VKHLO_INVALID("vkrt_cmd_submit_async: semaphore counts without arrays");
  enum { MAX_SEMAPHORES = 64 };
  if (info->wait_count > MAX_SEMAPHORES || info->signal_count > MAX_SEMAPHORES)
    return VKHLO_INVALID("vkrt_cmd_submit_async: at most %d wait and %d signal semaphores", MAX_SEMAPHORES,
                         MAX_SEMAPHORES);
  for (uint32_t i = 0; i < info->wait_count; i++)
    if (!info->wait_semaphores[i] || !info->wait_stage_masks[i])
      return VKHLO_INVALID("vkrt_cmd_submit_async: wait semaphore %u is null or has no stage mask", i);
  for (uint32_t i = 0; i < info->signal_count; i++)
    if (!info->signal_semaphores[i]) return VKHLO_INVALID("vkrt_cmd_submit_async: signal semaphore %u is null", i);
  VKHLO_RETURN_IF_ERROR(wait_in_flight(c)); /* this cmd's previous submission only */
  VKRT_CHECK("vkResetFences", d->vk.vkResetFences(d->device, 1, &c->fence));
  VkSemaphore waits[MAX_SEMAPHORES], signals[MAX_SEMAPHORES];
  VkPipelineStageFlags stages[MAX_SEMAPHORES];
  uint64_t zero_waits[MAX_SEMAPHORES], zero_signals[MAX_SEMAPHORES];
  for (uint32_t i = 0; i < info->wait_count; i++) {
    waits[i] = (VkSemaphore)info->wait_semaphores[i];
    stages[i] = info->wait_stage_masks[i];
    zero_waits[i] = 0;
  }
  for (uint32_t i = 0; i < info->signal_count; i++) {
    signals[i] = (VkSemaphore)info->signal_semaphores[i];
    zero_signals[i] = 0;
  }
  bool timeline = info->wait_values || info->signal_values;
  VkTimelineSemaphoreSubmitInfo values = {
      .sType = VK_STRUCTURE_TYPE_TIMELINE_SEMAPHORE_SUBMIT_INFO,
      .waitSemaphoreValueCount = info->wait_count,
      .pWaitSemaphoreValues = info->wait_values ? info->wait_values : zero_waits,
      .signalSemaphoreValueCount = info->signal_count,
      .pSignalSemaphoreValues = info->signal_values ? info->signal_values : zero_signals,
  };
  VkSubmitInfo submit = {
      .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
      .pNext = timeline ? &values : NULL,
      .waitSemaphoreCount = info->wait_count,
      .pWaitSemaphores = info->wait_count ? waits : NULL,
      .pWaitDstStageMask = info->wait_count ? stages : NULL,
      .commandBufferCount = 1,
      .pCommandBuffers = &c->cb,
      .signalSemaphoreCount = info->signal_count,
      .pSignalSemaphores = info->signal_count ? signals : NULL,
  };
  VKRT_CHECK("vkQueueSubmit", d->vk.vkQueueSubmit(d->queue, 1, &submit, c->fence));
  c->in_flight = true;
  if (info->fence) VKRT_CHECK("vkQueueSubmit", d->vk.vkQueueSubmit(d->queue, 0, NULL, (VkFence)info->fence));
  return NULL;
}

vkhlo_status_t vkrt_cmd_begin_external(vkrt_cmd_t *c, void *command_buffer) {
  vkrt_device_t *d = c->device;
  if (c->recording) return VKHLO_INVALID("vkrt_cmd_begin_external: already recording");
  if (!command_buffer) return VKHLO_INVALID("vkrt_cmd_begin_external: null command buffer");
  VKHLO_RETURN_IF_ERROR(wait_in_flight(c));
  c->ended = false;
  for (uint32_t i = 0; i < c->pool_count; i++)
    VKRT_CHECK("vkResetDescriptorPool", d->vk.vkResetDescriptorPool(d->device, c->pools[i], 0));
  c->current_pool = 0;
  release_views(c);
  c->cb = (VkCommandBuffer)command_buffer;
  c->external = true;
  c->recording = true;
  c->timestamp_count = 0;
  c->timestamps_reset = false;
  return NULL;
}

vkhlo_status_t vkrt_cmd_end_external(vkrt_cmd_t *c) {
  if (!c->recording || !c->external) return VKHLO_INVALID("vkrt_cmd_end_external: vkrt_cmd_begin_external was not called");
  c->recording = false;
  c->external = false;
  c->cb = c->own_cb;
  return NULL;
}

bool vkrt_cmd_is_ended(const vkrt_cmd_t *c) { return c->ended; }

vkhlo_status_t vkrt_cmd_submit_and_wait(vkrt_cmd_t *c) {
  if (!c->recording) return VKHLO_INVALID("vkrt_cmd_submit_and_wait: vkrt_cmd_begin was not called");
  VKHLO_RETURN_IF_ERROR(vkrt_cmd_end(c));
  return vkrt_cmd_submit(c, true);
}
