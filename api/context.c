/*
 * Contexts, devices and buffers of the public API (include/vkhlo/vkhlo.h).
 * A context is a vk_runtime device plus a SPIR-V compiler and the codegen
 * target derived from the device's capabilities.
 */
#include "api/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)VKHLO_TOKEN == (int)HLO_TOKEN, "public and IR element types must agree");
_Static_assert((int)VKHLO_C128 == (int)HLO_C128, "public and IR element types must agree");
_Static_assert(VKHLO_MAX_RANK == HLO_MAX_RANK, "public and IR max rank must agree");

size_t vkhlo_element_type_size_bytes(vkhlo_element_type_t t) {
  return hlo_element_type_size_bytes((hlo_element_type_t)t);
}
const char *vkhlo_element_type_name(vkhlo_element_type_t t) {
  return hlo_element_type_name((hlo_element_type_t)t);
}
bool vkhlo_element_type_parse(const char *name, vkhlo_element_type_t *out) {
  hlo_element_type_t t;
  if (!hlo_element_type_from_name(name, strlen(name), &t)) return false;
  *out = (vkhlo_element_type_t)t;
  return true;
}
int64_t vkhlo_tensor_type_element_count(const vkhlo_tensor_type_t *t) {
  int64_t n = 1;
  for (int i = 0; i < t->rank; i++) n *= t->dimensions[i];
  return n;
}
size_t vkhlo_tensor_type_size_bytes(const vkhlo_tensor_type_t *t) {
  return (size_t)vkhlo_tensor_type_element_count(t) * vkhlo_element_type_size_bytes(t->element_type);
}

static const char *type_name(vkrt_device_type_t t) {
  switch (t) {
    case VKRT_DEVICE_DISCRETE_GPU: return "discrete-gpu";
    case VKRT_DEVICE_INTEGRATED_GPU: return "integrated-gpu";
    case VKRT_DEVICE_VIRTUAL_GPU: return "virtual-gpu";
    case VKRT_DEVICE_CPU: return "cpu";
    default: return "other";
  }
}

static void describe(const vkrt_device_info_t *info, vkhlo_device_description_t *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->name, sizeof out->name, "%s", info->name);
  snprintf(out->type, sizeof out->type, "%s", type_name(info->type));
  out->vendor_id = info->vendor_id;
  out->device_id = info->device_id;
  out->api_version_major = (info->api_version >> 22) & 0x7f;
  out->api_version_minor = (info->api_version >> 12) & 0x3ff;
  out->api_version_patch = info->api_version & 0xfff;
}

vkhlo_status_t vkhlo_list_devices(vkhlo_device_description_t **out_devices, int *out_count) {
  *out_devices = NULL;
  *out_count = 0;
  vkrt_device_info_t *infos = NULL;
  int n = 0;
  VKHLO_RETURN_IF_ERROR(vkrt_enumerate_devices(&infos, &n));
  vkhlo_device_description_t *d = calloc((size_t)(n ? n : 1), sizeof *d);
  if (!d) {
    free(infos);
    return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < n; i++) describe(&infos[i], &d[i]);
  free(infos);
  *out_devices = d;
  *out_count = n;
  return NULL;
}

static void on_message(void *user, const char *message) {
  vkhlo_context_t *ctx = user;
  ctx->validation_messages++;
  if (ctx->message_fn) ctx->message_fn(ctx->message_user, message);
  else fprintf(stderr, "vkhlo: validation: %s\n", message);
}

static bool env_true(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

static void target_from_caps(const vkrt_caps_t *caps, const vkrt_device_info_t *info,
                             bool restricted, bool demote_f64, codegen_target_t *t) {
  memset(t, 0, sizeof *t);
  t->shader_int64 = caps->shader_int64 && !restricted;
  t->shader_float64 = caps->shader_float64 && !restricted;
  t->shader_int16 = caps->shader_int16 && !restricted;
  t->shader_int8 = caps->shader_int8 && !restricted;
  t->shader_float16 = caps->shader_float16 && !restricted;
  t->storage_buffer_8bit = caps->storage_buffer_8bit && !restricted;
  t->storage_buffer_16bit = caps->storage_buffer_16bit && !restricted;
  t->subgroup_size = restricted ? 16 : caps->subgroup_size;
  for (int i = 0; i < 3; i++) t->max_workgroup_count[i] = caps->max_compute_workgroup_count[i];
  t->max_workgroup_invocations = caps->max_compute_workgroup_invocations;
  t->max_shared_memory_bytes = restricted ? 16384 : caps->max_compute_shared_memory_size;
  t->max_storage_buffer_range = caps->max_storage_buffer_range;
  t->max_storage_buffers_per_stage = caps->max_per_stage_descriptor_storage_buffers;
  t->is_cpu = info->type == VKRT_DEVICE_CPU;
  t->demote_f64 = demote_f64; /* only matters without shader_float64 */
  const char *gemm = getenv("VKHLO_GEMM"); /* kernel choice for dot_general (codegen/emit_gemm.c) */
  t->gemm = !gemm ? CODEGEN_GEMM_AUTO : !strcmp(gemm, "cpu") ? CODEGEN_GEMM_CPU : !strcmp(gemm, "gpu") ? CODEGEN_GEMM_GPU
          : !strcmp(gemm, "off") ? CODEGEN_GEMM_OFF : CODEGEN_GEMM_AUTO;
}

static vkhlo_status_t context_create(const vkhlo_context_options_t *options,
                                     const vkhlo_external_device_t *external,
                                     vkhlo_context_t **out_context) {
  *out_context = NULL;
  vkhlo_context_options_t defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!options) options = &defaults;
  vkhlo_context_t *ctx = calloc(1, sizeof *ctx);
  if (!ctx) return VKHLO_NO_MEMORY();
  ctx->message_fn = options->message_fn;
  ctx->message_user = options->message_user;
  ctx->restricted = options->restricted || env_true("VKHLO_RESTRICTED");

  vkrt_device_options_t dopts;
  memset(&dopts, 0, sizeof dopts);
  dopts.selector = options->device;
  dopts.enable_validation = options->enable_validation || env_true("VKHLO_VALIDATION");
  dopts.message_fn = on_message;
  dopts.message_user = ctx;
  if (external) {
    dopts.external_instance = external->instance;
    dopts.external_physical_device = external->physical_device;
    dopts.external_device = external->device;
    dopts.external_queue = external->queue;
    dopts.external_queue_family_index = external->queue_family_index;
    dopts.external_get_instance_proc_addr = external->get_instance_proc_addr;
  }
  vkhlo_status_t st = vkrt_device_create(&dopts, &ctx->device);
  if (!st) {
    spirv_compiler_options_t copts;
    memset(&copts, 0, sizeof copts);
    copts.cache_dir = options->cache_dir;
    copts.disable_cache = options->disable_cache ||
                          (options->cache_dir && strcmp(options->cache_dir, "off") == 0);
    copts.optimize = true;
    st = spirv_compiler_create(&copts, &ctx->compiler);
  }
  if (st) {
    vkhlo_context_destroy(ctx);
    return st;
  }
  target_from_caps(vkrt_device_caps(ctx->device), vkrt_device_info(ctx->device), ctx->restricted,
                   options->demote_f64 || env_true("VKHLO_DEMOTE_F64"),
                   &ctx->target);
  *out_context = ctx;
  return NULL;
}

vkhlo_status_t vkhlo_context_create(const vkhlo_context_options_t *options,
                                    vkhlo_context_t **out_context) {
  return context_create(options, NULL, out_context);
}

vkhlo_status_t vkhlo_context_create_external(const vkhlo_context_options_t *options,
                                             const vkhlo_external_device_t *device,
                                             vkhlo_context_t **out_context) {
  if (!device || !device->instance || !device->physical_device || !device->device || !device->queue) {
    *out_context = NULL;
    return VKHLO_INVALID("vkhlo_context_create_external: instance, physical_device, device and queue are required");
  }
  return context_create(options, device, out_context);
}

void vkhlo_context_destroy(vkhlo_context_t *context) {
  if (!context) return;
  for (int i = 0; i < context->custom_kernel_count; i++) {
    free(context->custom_kernels[i].target_name);
    free(context->custom_kernels[i].spirv);
  }
  free(context->custom_kernels);
  spirv_compiler_destroy(context->compiler);
  vkrt_device_destroy(context->device);
  free(context);
}

void vkhlo_context_device(const vkhlo_context_t *context, vkhlo_device_description_t *out) {
  describe(vkrt_device_info(context->device), out);
}

int vkhlo_context_validation_message_count(const vkhlo_context_t *context) {
  return context->validation_messages;
}

/* ------------------------------------------------------------- buffers */

vkhlo_status_t vkhlo_buffer_create(vkhlo_context_t *context, const vkhlo_tensor_type_t *type,
                                   const void *host_data, vkhlo_buffer_t **out_buffer) {
  *out_buffer = NULL;
  if (!type || type->rank < 0 || type->rank > VKHLO_MAX_RANK ||
      (unsigned)type->element_type > VKHLO_TOKEN)
    return VKHLO_INVALID("vkhlo_buffer_create: bad tensor type");
  for (int i = 0; i < type->rank; i++)
    if (type->dimensions[i] < 0) return VKHLO_INVALID("vkhlo_buffer_create: negative dimension");
  vkhlo_buffer_t *b = calloc(1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  b->context = context;
  b->serial = ++context->next_buffer_serial;
  b->type = *type;
  size_t size = vkhlo_tensor_type_size_bytes(type);
  vkhlo_status_t st = vkrt_buffer_create(context->device, size < 16 ? 16 : (size + 15) / 16 * 16, &b->buffer);
  if (!st && host_data && size) st = vkrt_buffer_upload(b->buffer, 0, host_data, size);
  if (st) {
    vkhlo_buffer_destroy(b);
    return st;
  }
  *out_buffer = b;
  return NULL;
}

void vkhlo_buffer_destroy(vkhlo_buffer_t *buffer) {
  if (!buffer) return;
  vkrt_buffer_destroy(buffer->buffer);
  free(buffer);
}

void vkhlo_buffer_type(const vkhlo_buffer_t *buffer, vkhlo_tensor_type_t *out_type) {
  *out_type = buffer->type;
}

vkhlo_status_t vkhlo_buffer_read(const vkhlo_buffer_t *buffer, void *host_data, size_t size_bytes) {
  size_t size = vkhlo_tensor_type_size_bytes(&buffer->type);
  if (size != size_bytes)
    return VKHLO_INVALID("vkhlo_buffer_read: buffer holds %zu bytes, %zu requested", size, size_bytes);
  if (!size) return NULL;
  return vkrt_buffer_download(buffer->buffer, 0, host_data, size);
}

/* ------------------------------------------------------ custom calls */

vkhlo_status_t vkhlo_context_register_custom_call(vkhlo_context_t *context,
                                                  const vkhlo_custom_call_kernel_t *kernel) {
  if (!kernel || !kernel->target_name || !*kernel->target_name)
    return VKHLO_INVALID("vkhlo_context_register_custom_call: a target_name is required");
  if (!kernel->glsl == !kernel->spirv)
    return VKHLO_INVALID("custom call @%s: give exactly one of glsl and spirv", kernel->target_name);
  uint32_t *words = NULL;
  size_t size = 0;
  if (kernel->glsl) {
    VKHLO_RETURN_IF_ERROR(spirv_compile_glsl(context->compiler, kernel->target_name, kernel->glsl,
                                             &words, &size));
  } else {
    if (kernel->spirv_size_bytes % 4 != 0)
      return VKHLO_INVALID("custom call @%s: SPIR-V size %zu is not a multiple of 4",
                           kernel->target_name, kernel->spirv_size_bytes);
    VKHLO_RETURN_IF_ERROR(spirv_validate(context->compiler, kernel->target_name, kernel->spirv,
                                         kernel->spirv_size_bytes));
    size = kernel->spirv_size_bytes;
    words = malloc(size);
    if (!words) return VKHLO_NO_MEMORY();
    memcpy(words, kernel->spirv, size);
  }
  custom_kernel_t *slot = NULL;
  for (int i = 0; i < context->custom_kernel_count; i++)
    if (strcmp(context->custom_kernels[i].target_name, kernel->target_name) == 0)
      slot = &context->custom_kernels[i];
  if (!slot) {
    custom_kernel_t *p = realloc(context->custom_kernels,
                                 sizeof *p * (size_t)(context->custom_kernel_count + 1));
    char *name = p ? malloc(strlen(kernel->target_name) + 1) : NULL;
    if (!p || !name) {
      if (p) context->custom_kernels = p;
      free(words);
      return VKHLO_NO_MEMORY();
    }
    context->custom_kernels = p;
    slot = &p[context->custom_kernel_count++];
    strcpy(name, kernel->target_name);
    slot->target_name = name;
    slot->spirv = NULL;
  }
  free(slot->spirv);
  slot->spirv = words;
  slot->spirv_size_bytes = size;
  slot->local_size_x = kernel->local_size_x ? kernel->local_size_x : 64;
  return NULL;
}

void vkhlo_context_set_host_callback(vkhlo_context_t *context, vkhlo_host_callback_fn fn,
                                     void *user) {
  context->host_callback = fn;
  context->host_callback_user = user;
}
