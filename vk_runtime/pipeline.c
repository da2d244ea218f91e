/*
 * Compute pipelines.  One per kernel: a shader module from SPIR-V with
 * entry point "main", a descriptor set layout with |binding_count| storage
 * buffers at bindings 0..n-1 of set 0 (compute stage) followed by one
 * uniform texel buffer per texel view (vkrt.h), a pipeline layout
 * with one push-constant range [0, push_constant_size) when that is > 0,
 * and the compute pipeline, created through the device's VkPipelineCache.
 *
 * The shader module is kept (not destroyed after pipeline creation) only
 * to make debugging tools' captures complete; it is small.
 */
#include "vk_runtime/vkrt_internal.h"

#include <stdlib.h>

vkhlo_status_t vkrt_pipeline_create(vkrt_device_t *device, const uint32_t *spirv,
                                    size_t spirv_size_bytes, uint32_t binding_count, uint64_t texel_views,
                                    uint64_t scalar_views, uint32_t push_constant_size,
                                    vkrt_pipeline_t **out_pipeline) {
  *out_pipeline = NULL;
  vkrt_device_t *d = device;
  if (!spirv || spirv_size_bytes < 20 || spirv_size_bytes % 4 != 0 || spirv[0] != 0x07230203u)
    return VKHLO_INVALID("vkrt_pipeline_create: not a SPIR-V module (%zu bytes)", spirv_size_bytes);
  if (binding_count > d->caps.max_per_stage_descriptor_storage_buffers)
    return VKHLO_UNIMPLEMENTED("kernel needs %u storage buffers; the device allows %u per stage",
                               binding_count, d->caps.max_per_stage_descriptor_storage_buffers);
  uint64_t viewed = texel_views | scalar_views;
  if (binding_count < 64 && viewed >> binding_count)
    return VKHLO_INVALID("vkrt_pipeline_create: texel view of binding %d of %u", 63 - __builtin_clzll(viewed),
                         binding_count);
  uint32_t texel_count = (uint32_t)(__builtin_popcountll(texel_views) + __builtin_popcountll(scalar_views));
  if ((texel_views && !d->caps.texel_buffer_rgba32ui) || (scalar_views && !d->caps.texel_buffer_r32ui))
    return VKHLO_UNIMPLEMENTED("kernel reads texel buffers (VK_FORMAT_%s), which the device lacks",
                               texel_views && !d->caps.texel_buffer_rgba32ui ? "R32G32B32A32_UINT" : "R32_UINT");
  if (texel_count > d->caps.max_per_stage_descriptor_sampled_images)
    return VKHLO_UNIMPLEMENTED("kernel needs %u texel buffers; the device allows %u per stage", texel_count,
                               d->caps.max_per_stage_descriptor_sampled_images);
  if (push_constant_size % 4 != 0 || push_constant_size > d->caps.max_push_constants_size)
    return VKHLO_INVALID("push constant size %u is not a multiple of 4 or exceeds the device's %u",
                         push_constant_size, d->caps.max_push_constants_size);

  vkrt_pipeline_t *p = vkhlo_calloc(device->allocator, 1, sizeof *p);
  uint32_t total = binding_count + texel_count;
  VkDescriptorSetLayoutBinding *bindings = vkhlo_calloc(device->allocator, total ? total : 1, sizeof *bindings);
  if (!p || !bindings) {
    vkhlo_free(device->allocator, p);
    vkhlo_free(device->allocator, bindings);
    return VKHLO_NO_MEMORY();
  }
  p->device = d;
  p->binding_count = binding_count;
  p->texel_views = texel_views;
  p->scalar_views = scalar_views;
  p->texel_count = texel_count;
  p->push_constant_size = push_constant_size;
  for (uint32_t i = 0; i < total; i++) {
    bindings[i].binding = i;
    bindings[i].descriptorType =
        i < binding_count ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
    bindings[i].descriptorCount = 1;
    bindings[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }

  vkhlo_status_t s = NULL;
  VkResult r;
  VkShaderModuleCreateInfo module_info = {
      .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
      .codeSize = spirv_size_bytes,
      .pCode = spirv,
  };
  if ((r = d->vk.vkCreateShaderModule(d->device, &module_info, d->alloc, &p->shader_module)) != VK_SUCCESS) {
    p->shader_module = VK_NULL_HANDLE;
    s = vkrt_vk_status("vkCreateShaderModule", r);
  }
  if (!s) {
    VkDescriptorSetLayoutCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .bindingCount = total,
        .pBindings = total ? bindings : NULL,
    };
    if ((r = d->vk.vkCreateDescriptorSetLayout(d->device, &info, d->alloc, &p->set_layout)) != VK_SUCCESS) {
      p->set_layout = VK_NULL_HANDLE;
      s = vkrt_vk_status("vkCreateDescriptorSetLayout", r);
    }
  }
  if (!s) {
    VkPushConstantRange range = {
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
        .offset = 0,
        .size = push_constant_size,
    };
    VkPipelineLayoutCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
        .setLayoutCount = 1,
        .pSetLayouts = &p->set_layout,
        .pushConstantRangeCount = push_constant_size ? 1 : 0,
        .pPushConstantRanges = push_constant_size ? &range : NULL,
    };
    if ((r = d->vk.vkCreatePipelineLayout(d->device, &info, d->alloc, &p->layout)) != VK_SUCCESS) {
      p->layout = VK_NULL_HANDLE;
      s = vkrt_vk_status("vkCreatePipelineLayout", r);
    }
  }
  if (!s) {
    VkComputePipelineCreateInfo info = {
        .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
        .stage =
            {
                .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = p->shader_module,
                .pName = "main",
            },
        .layout = p->layout,
    };
    r = d->vk.vkCreateComputePipelines(d->device, d->pipeline_cache, 1, &info, d->alloc, &p->pipeline);
    if (r != VK_SUCCESS) {
      p->pipeline = VK_NULL_HANDLE;
      s = vkrt_vk_status("vkCreateComputePipelines", r);
    }
  }
  vkhlo_free(device->allocator, bindings);
  if (s) {
    vkrt_pipeline_destroy(p);
    return s;
  }
  *out_pipeline = p;
  return NULL;
}

void vkrt_pipeline_destroy(vkrt_pipeline_t *p) {
  if (!p) return;
  vkrt_device_t *d = p->device;
  if (p->pipeline) d->vk.vkDestroyPipeline(d->device, p->pipeline, d->alloc);
  if (p->layout) d->vk.vkDestroyPipelineLayout(d->device, p->layout, d->alloc);
  if (p->set_layout) d->vk.vkDestroyDescriptorSetLayout(d->device, p->set_layout, d->alloc);
  if (p->shader_module) d->vk.vkDestroyShaderModule(d->device, p->shader_module, d->alloc);
  vkhlo_free(p->device->allocator, p);
}
