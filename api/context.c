/*
 * Contexts, devices and buffers of the public API (include/vkhlo/vkhlo.h).
 * A context is a vk_runtime device plus the codegen target derived from
 * the device's capabilities.  This file is runtime: it links no compiler.
 * The SPIR-V compiler (glslang) is created on the context's first compile
 * by the compile path (api/context_compile.c, library vkhlo), which also
 * registers custom-call kernels; the context only keeps what it needs for
 * that (cache options) and frees what that created.
 */
#include "api/internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)VKHLO_TOKEN == (int)HLO_TOKEN, "public and IR element types must agree");
_Static_assert((int)VKHLO_C128 == (int)HLO_C128, "public and IR element types must agree");
_Static_assert(VKHLO_MAX_RANK == HLO_MAX_RANK, "public and IR max rank must agree");

/* The public element types' names and sizes, from the same list as the
 * IR's (hlo/hlo.c), without linking the IR. */
static const struct {
  const char *name;
  size_t size;
} element_types[] = {
#define X(e, name, size, kind, bits) {name, size},
#include "hlo/element_types.def"
#undef X
};
_Static_assert(sizeof element_types / sizeof element_types[0] == (size_t)VKHLO_TOKEN + 1,
               "element_types.def and the public element types disagree");

size_t vkhlo_element_type_size_bytes(vkhlo_element_type_t t) {
  return (unsigned)t <= VKHLO_TOKEN ? element_types[t].size : 0;
}
const char *vkhlo_element_type_name(vkhlo_element_type_t t) {
  return (unsigned)t <= VKHLO_TOKEN ? element_types[t].name : "?";
}
bool vkhlo_element_type_parse(const char *name, vkhlo_element_type_t *out) {
  for (int i = 0; i <= VKHLO_TOKEN; i++) {
    if (strcmp(element_types[i].name, name) == 0) {
      *out = (vkhlo_element_type_t)i;
      return true;
    }
  }
  /* MLIR also spells signed integers "si32". */
  if (name[0] == 's' && name[1] == 'i' && name[2]) return vkhlo_element_type_parse(name + 1, out);
  return false;
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
  vkhlo_device_description_t *d = vkhlo_calloc(NULL, (size_t)(n ? n : 1), sizeof *d);
  if (!d) {
    vkhlo_free(NULL, infos);
    return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < n; i++) describe(&infos[i], &d[i]);
  vkhlo_free(NULL, infos);
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

vkhlo_status_t exe_env_uint64(const char *name, uint64_t default_value, uint64_t *out) {
  const char *v = getenv(name);
  *out = default_value;
  if (!v) return NULL;
  uint64_t n = 0;
  const char *p = v;
  for (; *p >= '0' && *p <= '9'; p++) {
    uint64_t digit = (uint64_t)(*p - '0');
    if (n > (UINT64_MAX - digit) / 10)
      return VKHLO_INVALID("$%s=%s is out of range (the largest is %llu)", name, v, (unsigned long long)UINT64_MAX);
    n = n * 10 + digit;
  }
  if (p == v || *p) return VKHLO_INVALID("$%s='%s' is not a decimal number (unset it for the default)", name, v);
  if (n == 0) return VKHLO_INVALID("$%s must be at least 1, not 0", name);
  *out = n;
  return NULL;
}

vkhlo_status_t exe_env_loop_batch(const vkhlo_context_t *context, uint64_t *out) {
  const char *v = getenv("VKHLO_LOOP_BATCH");
  if (v && strcmp(v, "0") == 0) {
    *out = 0;
    return NULL;
  }
  /* on CPU devices a dispatch (and a barrier, skipped iterations' too)
   * costs more than a submission: bench_overhead's scan rows 1.7-1.8x the
   * counted loop's time per step with a submission per iteration, 2.0-2.3x
   * batched, on lavapipe */
  return exe_env_uint64("VKHLO_LOOP_BATCH", context->target.is_cpu ? 0 : EXE_LOOP_BATCH, out);
}

static bool env_true(const char *name) {
  const char *v = getenv(name);
  return v && *v && strcmp(v, "0") != 0;
}

/* $name is "0" (an opt-out). */
static bool env_false(const char *name) {
  const char *v = getenv(name);
  return v && strcmp(v, "0") == 0;
}

/* $name as "AxB" (a register tile, for measurements) in *a and *b; both 0
 * when unset or not of that form. */
static void env_tile(const char *name, int *a, int *b) {
  const char *v = getenv(name);
  if (!v || sscanf(v, "%dx%d", a, b) != 2) *a = *b = 0;
}

/* Kernel choices named by environment variables: names[i] selects value i
 * (the first, value 0, is the default). */
static const char *const gemm_kinds[] = {"auto", "cpu", "gpu", "off", NULL};
static const char *const conv_kinds[] = {"auto", "generic", "elemental", "gpu", NULL};
static const char *const reduce_kinds[] = {"auto", "subgroup", "serial", NULL};
_Static_assert(CODEGEN_GEMM_AUTO == 0 && CODEGEN_GEMM_CPU == 1 && CODEGEN_GEMM_GPU == 2 &&
                   CODEGEN_GEMM_OFF == 3, "gemm_kinds follows codegen_gemm_kind_t");
_Static_assert(CODEGEN_CONV_AUTO == 0 && CODEGEN_CONV_GENERIC == 1 && CODEGEN_CONV_ELEMENTAL == 2 &&
                   CODEGEN_CONV_GPU == 3,
               "conv_kinds follows codegen_conv_kind_t");

/* The value $|name| selects from |names| in *out (0 when unset or empty);
 * false, with *out 0, for a value not in the list. */
static bool env_choice(const char *name, const char *const *names, int *out) {
  const char *v = getenv(name);
  *out = 0;
  if (!v || !*v) return true;
  for (int i = 0; names[i]; i++)
    if (!strcmp(v, names[i])) {
      *out = i;
      return true;
    }
  return false;
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
  t->subgroup_shuffle = caps->subgroup_shuffle && !restricted;
  for (int i = 0; i < 3; i++) t->max_workgroup_count[i] = caps->max_compute_workgroup_count[i];
  t->max_workgroup_invocations = caps->max_compute_workgroup_invocations;
  t->max_shared_memory_bytes = restricted ? 16384 : caps->max_compute_shared_memory_size;
  t->max_storage_buffer_range = caps->max_storage_buffer_range;
  t->max_storage_buffers_per_stage = caps->max_per_stage_descriptor_storage_buffers;
  t->is_cpu = info->type == VKRT_DEVICE_CPU;
  /* word views are RGBA32UI texels, the GEMM's element views R32UI */
  t->texel_words = t->is_cpu && caps->texel_buffer_rgba32ui && caps->texel_buffer_r32ui && !restricted &&
                   !env_false("VKHLO_TEXEL_WORDS");
  t->max_texel_buffer_elements = caps->max_texel_buffer_elements;
  t->demote_f64 = demote_f64; /* only matters without shader_float64 */
  t->signed_zero_inf_nan_preserve_float16 = caps->signed_zero_inf_nan_preserve_float16;
  t->signed_zero_inf_nan_preserve_float32 = caps->signed_zero_inf_nan_preserve_float32;
  t->signed_zero_inf_nan_preserve_float64 = caps->signed_zero_inf_nan_preserve_float64;
  if (restricted) codegen_target_restrict(t); /* VP_ANDROID_baseline_2022 (codegen/target.c) */
  /* lavapipe runs shaders on the host's CPU: on aarch64 its LLVM 15 fails on
   * f16 conversions (codegen/target.h) */
  bool host_aarch64 = false;
#if defined(__aarch64__)
  host_aarch64 = true;
#endif
  bool llvmpipe = strncmp(info->name, "llvmpipe", 8) == 0;
  t->max_loop_iterations = llvmpipe ? 65535 : 0; /* codegen/target.h */
  t->f16_soft_conversions = (host_aarch64 && llvmpipe) ||
                            env_true("VKHLO_F16_SOFT");
  /* codegen/emit_conv.c; an unknown kernel name means auto */
  int conv;
  t->conv = env_choice("VKHLO_CONV_KERNEL", conv_kinds, &conv) ? (codegen_conv_kind_t)conv : CODEGEN_CONV_AUTO;
  env_tile("VKHLO_CONV_TILE", &t->conv_tile_p, &t->conv_tile_c);
  t->conv_no_shuffle = env_false("VKHLO_CONV_SHUFFLE");
  env_tile("VKHLO_GEMM_TILE", &t->gemm_tile_m, &t->gemm_tile_n);
  t->no_split_k = env_false("VKHLO_SPLIT_K");
  t->no_ragged_gemm = env_false("VKHLO_RAGGED_GEMM");
  /* codegen/target.h; an unknown value means auto */
  int reduce;
  env_choice("VKHLO_REDUCE", reduce_kinds, &reduce);
  t->subgroup_reduce = t->subgroup_shuffle && (reduce == 1 || (reduce == 0 && !t->is_cpu));
}

/* $VKHLO_GEMM: the kernel for dot_general (codegen/emit_gemm.c); an
 * unknown name is an error. */
static vkhlo_status_t gemm_kind_from_env(codegen_gemm_kind_t *out) {
  int kind;
  if (!env_choice("VKHLO_GEMM", gemm_kinds, &kind))
    return VKHLO_INVALID("$VKHLO_GEMM='%s' is not one of auto, cpu, gpu, off (unset it for auto)",
                         getenv("VKHLO_GEMM"));
  *out = (codegen_gemm_kind_t)kind;
  return NULL;
}

static vkhlo_status_t context_create(const vkhlo_context_options_t *options,
                                     const vkhlo_external_device_t *external,
                                     vkhlo_context_t **out_context) {
  *out_context = NULL;
  vkhlo_context_options_t defaults;
  memset(&defaults, 0, sizeof defaults);
  if (!options) options = &defaults;
  vkhlo_context_t *ctx = vkhlo_calloc(options->host_allocator, 1, sizeof *ctx);
  if (!ctx) return VKHLO_NO_MEMORY();
  ctx->allocator = options->host_allocator;
  ctx->message_fn = options->message_fn;
  ctx->message_user = options->message_user;
  ctx->restricted = options->restricted || env_true("VKHLO_RESTRICTED");

  vkrt_device_options_t dopts;
  memset(&dopts, 0, sizeof dopts);
  dopts.selector = options->device;
  dopts.enable_validation = options->enable_validation || env_true("VKHLO_VALIDATION");
  /* tests: host access through staging copies, as on a discrete GPU */
  dopts.force_staging = env_true("VKHLO_FORCE_STAGING");
  /* measurements: loops read every predicate back (api/execute.c) */
  dopts.no_conditional_rendering = env_false("VKHLO_CONDITIONAL_RENDERING");
  dopts.message_fn = on_message;
  dopts.message_user = ctx;
  dopts.allocator = ctx->allocator;
  if (external) {
    dopts.external_instance = external->instance;
    dopts.external_physical_device = external->physical_device;
    dopts.external_device = external->device;
    dopts.external_queue = external->queue;
    dopts.external_queue_family_index = external->queue_family_index;
    dopts.external_get_instance_proc_addr = external->get_instance_proc_addr;
  }
  embed_device_options(ctx, options, &dopts); /* allocators (api/embed.c) */
  vkhlo_status_t st = vkrt_device_create(&dopts, &ctx->device);
  if (!st) st = context_open_pipeline_cache(ctx, options);
  if (!st) {
    target_from_caps(vkrt_device_caps(ctx->device), vkrt_device_info(ctx->device), ctx->restricted,
                     options->demote_f64 || env_true("VKHLO_DEMOTE_F64"), &ctx->target);
    st = gemm_kind_from_env(&ctx->target.gemm);
    /* $VKHLO_MAX_BINDING_BYTES lowers maxStorageBufferRange as the compiler
     * sees it, for tests of values larger than a binding
     * (codegen/expand.c) on devices whose range is large */
    uint64_t range = ctx->target.max_storage_buffer_range;
    if (!st) st = exe_env_uint64("VKHLO_MAX_BINDING_BYTES", range, &range);
    if (!st && range < ctx->target.max_storage_buffer_range) ctx->target.max_storage_buffer_range = (uint32_t)range;
    /* for the compiler, created on the first compile (api/context_compile.c) */
    ctx->disable_cache = options->disable_cache ||
                         (options->cache_dir && strcmp(options->cache_dir, "off") == 0);
    if (!st && options->cache_dir) {
      ctx->cache_dir = vkhlo_malloc(ctx->allocator, strlen(options->cache_dir) + 1);
      if (ctx->cache_dir) strcpy(ctx->cache_dir, options->cache_dir);
      else st = VKHLO_NO_MEMORY();
    }
  }
  if (st) {
    vkhlo_context_destroy(ctx);
    return st;
  }
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
  for (int i = 0; i < context->pool_count; i++) vkrt_buffer_destroy(context->pool[i]);
  vkhlo_free(context->allocator, context->pool);
  for (int i = 0; i < context->custom_kernel_count; i++) {
    vkhlo_free(context->allocator, context->custom_kernels[i].target_name);
    vkhlo_free(context->allocator, context->custom_kernels[i].spirv);
  }
  vkhlo_free(context->allocator, context->custom_kernels);
  if (context->compiler) context->compiler_destroy(context->compiler);
  vkhlo_free(context->allocator, context->cache_dir);
  vkhlo_free(context->allocator, context->tuning_path);
  for (int i = 0; i < context->tuning_count; i++) vkhlo_free(context->allocator, context->tuning[i].key);
  vkhlo_free(context->allocator, context->tuning);
  vkrt_device_destroy(context->device);
  vkhlo_free(context->allocator, context);
}

void vkhlo_context_device(const vkhlo_context_t *context, vkhlo_device_description_t *out) {
  describe(vkrt_device_info(context->device), out);
}

int vkhlo_context_validation_message_count(const vkhlo_context_t *context) {
  return context->validation_messages;
}

/* ------------------------------------------------------------- buffers */

/* The buffer pool.  Sizes are rounded up to 16 bytes; a pooled buffer is
 * taken for a request of the same rounded size: the one asked for by id
 * where it is pooled (an executable asks for the device buffer its
 * recording bound for that result, so it replays whatever order the caller
 * destroyed its results in), else the most recently pooled (so a caller
 * that destroys its results before the next execution gets the same
 * device buffers back).  Beyond the limits the oldest pooled buffers are
 * freed. */
enum { CONTEXT_POOL_MAX_BUFFERS = 64 };
#define CONTEXT_POOL_MAX_BYTES ((uint64_t)256 << 20)

static uint64_t rounded_size(size_t size) { return size < 16 ? 16 : (size + 15) / 16 * 16; }

static vkrt_buffer_t *pool_take(vkhlo_context_t *ctx, uint64_t size, uint64_t preferred_id) {
  int found = -1;
  for (int i = ctx->pool_count - 1; i >= 0 && preferred_id; i--)
    if (vkrt_buffer_id(ctx->pool[i]) == preferred_id && vkrt_buffer_size(ctx->pool[i]) == size) found = i;
  for (int i = ctx->pool_count - 1; i >= 0; i--) {
    if (found >= 0 && i != found) continue;
    vkrt_buffer_t *b = ctx->pool[i];
    if (vkrt_buffer_size(b) != size) continue;
    memmove(&ctx->pool[i], &ctx->pool[i + 1], sizeof *ctx->pool * (size_t)(ctx->pool_count - i - 1));
    ctx->pool_count--;
    ctx->pool_bytes -= size;
    ctx->pool_reuses++;
    return b;
  }
  return NULL;
}

static void pool_put(vkhlo_context_t *ctx, vkrt_buffer_t *b) {
  uint64_t size = vkrt_buffer_size(b);
  if (size > CONTEXT_POOL_MAX_BYTES) {
    vkrt_buffer_destroy(b);
    return;
  }
  if (!ctx->pool && !(ctx->pool = vkhlo_calloc(ctx->allocator, CONTEXT_POOL_MAX_BUFFERS, sizeof *ctx->pool))) {
    vkrt_buffer_destroy(b);
    return;
  }
  while (ctx->pool_count > 0 &&
         (ctx->pool_count == CONTEXT_POOL_MAX_BUFFERS || ctx->pool_bytes + size > CONTEXT_POOL_MAX_BYTES)) {
    ctx->pool_bytes -= vkrt_buffer_size(ctx->pool[0]);
    vkrt_buffer_destroy(ctx->pool[0]);
    memmove(&ctx->pool[0], &ctx->pool[1], sizeof *ctx->pool * (size_t)(ctx->pool_count - 1));
    ctx->pool_count--;
  }
  ctx->pool[ctx->pool_count++] = b;
  ctx->pool_bytes += size;
}

static vkhlo_status_t check_tensor_type(const vkhlo_tensor_type_t *type) {
  if (!type || type->rank < 0 || type->rank > VKHLO_MAX_RANK ||
      (unsigned)type->element_type > VKHLO_TOKEN)
    return VKHLO_INVALID("vkhlo_buffer_create: bad tensor type");
  for (int i = 0; i < type->rank; i++)
    if (type->dimensions[i] < 0) return VKHLO_INVALID("vkhlo_buffer_create: negative dimension");
  return NULL;
}

vkhlo_status_t context_buffer_acquire(vkhlo_context_t *context, const vkhlo_tensor_type_t *type,
                                      uint64_t preferred_id, bool *out_reused, vkhlo_buffer_t **out_buffer) {
  *out_buffer = NULL;
  *out_reused = false;
  VKHLO_RETURN_IF_ERROR(check_tensor_type(type));
  vkhlo_buffer_t *b = vkhlo_calloc(context->allocator, 1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  b->context = context;
  b->serial = ++context->next_buffer_serial;
  b->type = *type;
  uint64_t size = rounded_size(vkhlo_tensor_type_size_bytes(type));
  b->buffer = pool_take(context, size, preferred_id);
  *out_reused = b->buffer != NULL;
  if (!b->buffer) {
    vkhlo_status_t st = vkrt_buffer_create(context->device, size, &b->buffer);
    if (st) {
      vkhlo_free(context->allocator, b);
      return st;
    }
  }
  *out_buffer = b;
  return NULL;
}

vkhlo_status_t vkhlo_buffer_create(vkhlo_context_t *context, const vkhlo_tensor_type_t *type,
                                   const void *host_data, vkhlo_buffer_t **out_buffer) {
  *out_buffer = NULL;
  bool reused;
  vkhlo_buffer_t *b;
  VKHLO_RETURN_IF_ERROR(context_buffer_acquire(context, type, 0, &reused, &b));
  size_t size = vkhlo_tensor_type_size_bytes(type);
  vkhlo_status_t st = NULL;
  void *zeros = NULL;
  (void)reused;
  if (!host_data && size) { /* Vulkan leaves new memory undefined, and pooled memory holds old values */
    zeros = vkhlo_calloc(context->allocator, 1, size);
    if (!zeros) st = VKHLO_NO_MEMORY();
    host_data = zeros;
  }
  if (!st && host_data && size) st = vkrt_buffer_upload(b->buffer, 0, host_data, size);
  vkhlo_free(context->allocator, zeros);
  if (st) {
    vkhlo_buffer_destroy(b);
    return st;
  }
  *out_buffer = b;
  return NULL;
}

void vkhlo_buffer_destroy(vkhlo_buffer_t *buffer) {
  if (!buffer) return;
  if (buffer->buffer && vkrt_buffer_is_wrapped(buffer->buffer)) vkrt_buffer_destroy(buffer->buffer); /* the wrapper only */
  else if (buffer->buffer) pool_put(buffer->context, buffer->buffer);
  vkhlo_free(buffer->context->allocator, buffer);
}

void vkhlo_context_memory_stats(const vkhlo_context_t *context, vkhlo_memory_stats_t *out) {
  vkrt_memory_stats_t m;
  vkrt_device_memory_stats(context->device, &m);
  memset(out, 0, sizeof *out);
  out->device_allocations_made = (int64_t)m.allocations_made;
  out->device_allocations_live = (int64_t)m.allocations_live;
  out->device_bytes_live = (int64_t)m.bytes_live;
  out->pooled_buffers = context->pool_count;
  out->pooled_bytes = (int64_t)context->pool_bytes;
  out->pool_reuses = (int64_t)context->pool_reuses;
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

vkhlo_status_t vkhlo_buffer_write(vkhlo_buffer_t *buffer, const void *host_data, size_t size_bytes) {
  size_t size = vkhlo_tensor_type_size_bytes(&buffer->type);
  if (size != size_bytes)
    return VKHLO_INVALID("vkhlo_buffer_write: buffer holds %zu bytes, %zu given", size, size_bytes);
  if (!size) return NULL;
  if (!host_data) return VKHLO_INVALID("vkhlo_buffer_write: no data");
  return vkrt_buffer_upload(buffer->buffer, 0, host_data, size);
}

/* ------------------------------------------------------ host calls */

void vkhlo_context_set_host_callback(vkhlo_context_t *context, vkhlo_host_callback_fn fn,
                                     void *user) {
  context->host_callback = fn;
  context->host_callback_user = user;
}
