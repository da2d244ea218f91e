/*
 * The compile side of a context (library vkhlo; the runtime library
 * vkhlo_runtime has none of it): the SPIR-V compiler, created on the
 * context's first compile from the options kept at context creation
 * (api/context.c), and custom-call kernels, which only compilation uses
 * (lowering copies their SPIR-V into the executable).  Registering one
 * compiles GLSL with glslang or validates SPIR-V with spirv-val, so it too
 * belongs to the compiler: a runtime-only build runs executables whose
 * custom kernels are already inside them.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

vkhlo_status_t context_compiler(vkhlo_context_t *ctx, spirv_compiler_t **out_compiler) {
  if (!ctx->compiler) {
    spirv_compiler_options_t copts;
    memset(&copts, 0, sizeof copts);
    copts.cache_dir = ctx->cache_dir;
    copts.disable_cache = ctx->disable_cache;
    copts.optimize = true;
    copts.allocator = ctx->allocator;
    copts.signed_zero_inf_nan_preserve =
        (ctx->target.signed_zero_inf_nan_preserve_float16 ? SPIRV_FLOAT16 : 0u) |
        (ctx->target.signed_zero_inf_nan_preserve_float32 ? SPIRV_FLOAT32 : 0u) |
        (ctx->target.signed_zero_inf_nan_preserve_float64 ? SPIRV_FLOAT64 : 0u);
    VKHLO_RETURN_IF_ERROR(spirv_compiler_create(&copts, &ctx->compiler));
    ctx->compiler_destroy = spirv_compiler_destroy;
  }
  *out_compiler = ctx->compiler;
  return NULL;
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
  spirv_compiler_t *compiler;
  VKHLO_RETURN_IF_ERROR(context_compiler(context, &compiler));
  if (kernel->glsl) {
    VKHLO_RETURN_IF_ERROR(spirv_compile_glsl(compiler, kernel->target_name, kernel->glsl,
                                             &words, &size));
  } else {
    if (kernel->spirv_size_bytes % 4 != 0)
      return VKHLO_INVALID("custom call @%s: SPIR-V size %zu is not a multiple of 4",
                           kernel->target_name, kernel->spirv_size_bytes);
    VKHLO_RETURN_IF_ERROR(spirv_validate(compiler, kernel->target_name, kernel->spirv,
                                         kernel->spirv_size_bytes));
    size = kernel->spirv_size_bytes;
    words = vkhlo_malloc(context->allocator, size);
    if (!words) return VKHLO_NO_MEMORY();
    memcpy(words, kernel->spirv, size);
  }
  custom_kernel_t *slot = NULL;
  for (int i = 0; i < context->custom_kernel_count; i++)
    if (strcmp(context->custom_kernels[i].target_name, kernel->target_name) == 0)
      slot = &context->custom_kernels[i];
  if (!slot) {
    custom_kernel_t *p = vkhlo_realloc(context->allocator, context->custom_kernels,
                                       sizeof *p * (size_t)(context->custom_kernel_count + 1));
    char *name = p ? vkhlo_malloc(context->allocator, strlen(kernel->target_name) + 1) : NULL;
    if (!p || !name) {
      if (p) context->custom_kernels = p;
      vkhlo_free(context->allocator, words);
      return VKHLO_NO_MEMORY();
    }
    context->custom_kernels = p;
    slot = &p[context->custom_kernel_count++];
    strcpy(name, kernel->target_name);
    slot->target_name = name;
    slot->spirv = NULL;
  }
  vkhlo_free(context->allocator, slot->spirv);
  slot->spirv = words;
  slot->spirv_size_bytes = size;
  slot->local_size_x = kernel->local_size_x ? kernel->local_size_x : 64;
  return NULL;
}
