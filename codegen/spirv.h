/*
 * GLSL -> SPIR-V in process (glslang's C interface), validation
 * (spirv-val through SPIRV-Tools' C API) and optimization (spirv-opt's
 * performance passes), with a content-addressed cache on disk.
 *
 * A compiler object holds glslang's process initialization reference and the
 * cache settings; create one per context.
 */
#ifndef VKHLO_CODEGEN_SPIRV_H
#define VKHLO_CODEGEN_SPIRV_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "support/alloc.h"
#include "support/status.h"

typedef struct spirv_compiler spirv_compiler_t;

typedef struct spirv_compiler_options {
  /* Cache directory: NULL = $VKHLO_CACHE_DIR, else $XDG_CACHE_HOME/vkhlo,
   * else $HOME/.cache/vkhlo.  The cache is off when |disable_cache| is set
   * or VKHLO_CACHE_DIR is "off" or "". */
  const char *cache_dir;
  bool disable_cache;
  bool optimize; /* run spirv-opt performance passes (default on in vkhlo) */
  /* Float widths (SPIRV_FLOAT16 | SPIRV_FLOAT32 | SPIRV_FLOAT64) for which
   * every compiled module declares OpExecutionMode SignedZeroInfNanPreserve
   * when it uses that width (spirv_add_signed_zero_inf_nan_preserve).  Set
   * only the widths the device honours (codegen_target_t). */
  unsigned signed_zero_inf_nan_preserve;
  /* Every host allocation of the compiler (NULL = libc); kept by pointer.
   * glslang and SPIRV-Tools allocate on their own. */
  const vkhlo_allocator_t *allocator;
} spirv_compiler_options_t;

enum { SPIRV_FLOAT16 = 1u << 0, SPIRV_FLOAT32 = 1u << 1, SPIRV_FLOAT64 = 1u << 2 };

typedef struct spirv_compiler_stats {
  int compiled;   /* modules compiled by glslang */
  int cache_hits; /* modules loaded from the disk cache */
  /* cache files spirv-val checked: those this compiler had not validated
   * or written with the same words before */
  int cache_validations;
} spirv_compiler_stats_t;

vkhlo_status_t spirv_compiler_create(const spirv_compiler_options_t *options,
                                     spirv_compiler_t **out_compiler);
void spirv_compiler_destroy(spirv_compiler_t *compiler);
const spirv_compiler_stats_t *spirv_compiler_stats(const spirv_compiler_t *compiler);

/* Compiles a GLSL 450 compute shader to SPIR-V (Vulkan 1.1, SPIR-V 1.3),
 * validates it with spirv-val and optimizes it.  *out_words is heap-
 * allocated (caller frees with the compiler's allocator); *out_size_bytes is a multiple of 4.
 * Errors: INTERNAL with glslang's or spirv-val's log and |name|;
 * RESOURCE_EXHAUSTED. */
vkhlo_status_t spirv_compile_glsl(spirv_compiler_t *compiler, const char *name, const char *glsl,
                                  uint32_t **out_words, size_t *out_size_bytes);

/* Validates a SPIR-V module supplied from outside (user kernels) with
 * spirv-val.  Errors: INVALID_ARGUMENT "spirv-val rejected <name>: ...". */
vkhlo_status_t spirv_validate(spirv_compiler_t *compiler, const char *name, const uint32_t *words,
                              size_t size_bytes);

/* Post-processing: declares OpExecutionMode <entry> SignedZeroInfNanPreserve
 * <w> on every entry point for each width w in |widths| (SPIRV_FLOAT*) that
 * the module declares with OpTypeFloat, with the SignedZeroInfNanPreserve
 * capability and, below SPIR-V 1.4, OpExtension "SPV_KHR_float_controls".
 * Declarations already present are kept, not repeated.  *words is replaced
 * by a new heap block from |allocator| (the old one is freed with it) only when something is added;
 * *size_bytes is updated.  Errors: INVALID_ARGUMENT for a malformed module
 * (nothing changed). */
vkhlo_status_t spirv_add_signed_zero_inf_nan_preserve(const vkhlo_allocator_t *allocator, uint32_t **words,
                                                      size_t *size_bytes, unsigned widths);

/* Disassembles SPIR-V to text (for dumps).  Caller frees (vkhlo_free with
 * |allocator|).  NULL on error. */
char *spirv_disassemble(const vkhlo_allocator_t *allocator, const uint32_t *words, size_t size_bytes);

#endif
