/*
 * What codegen needs to know about the device it emits for, as plain data
 * (filled from vk_runtime's caps by the API layer; codegen knows nothing of
 * Vulkan).
 */
#ifndef VKHLO_CODEGEN_TARGET_H
#define VKHLO_CODEGEN_TARGET_H

#include <stdbool.h>
#include <stdint.h>

#include "vkhlo/status.h"

/* Which GEMM kernel dot_general gets (codegen/emit_gemm.c). */
typedef enum codegen_gemm_kind {
  CODEGEN_GEMM_AUTO = 0, /* gemm_cpu on CPU devices, gemm_gpu on others */
  CODEGEN_GEMM_CPU,      /* shaders/gemm_cpu.comp everywhere */
  CODEGEN_GEMM_GPU,      /* shaders/gemm_gpu.comp everywhere (tests it on lavapipe) */
  CODEGEN_GEMM_OFF,      /* the elemental dot (one invocation per element) */
} codegen_gemm_kind_t;

typedef struct codegen_target {
  bool shader_int64, shader_float64, shader_int16, shader_int8, shader_float16;
  bool storage_buffer_8bit, storage_buffer_16bit;
  uint32_t subgroup_size;
  bool subgroup_shuffle; /* subgroupShuffle in compute shaders */
  uint32_t max_workgroup_count[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_shared_memory_bytes;
  uint32_t max_storage_buffer_range;
  uint32_t max_storage_buffers_per_stage;
  bool is_cpu; /* lavapipe/llvmpipe and other CPU devices */
  /* Without shader_float64: compute f64 (c128) as f32 (c64), keeping 8-byte
   * storage (glsl_types.h, "Emulated forms"); opt-in, it loses precision.
   * Off: f64 programs fail with UNIMPLEMENTED on such devices. */
  bool demote_f64;
  /* The device honours SPIR-V's SignedZeroInfNanPreserve execution mode for
   * 16/32/64-bit floats (Vulkan float controls); spirv.c then declares it in
   * every module for the float widths the module uses, so that no driver
   * may fold NaN tests (x != x) or lose -0.0 and infinities. */
  bool signed_zero_inf_nan_preserve_float16;
  bool signed_zero_inf_nan_preserve_float32;
  bool signed_zero_inf_nan_preserve_float64;
  /* GEMM kernel choice; from VKHLO_GEMM=auto|cpu|gpu|off (api/context.c). */
  codegen_gemm_kind_t gemm;
} codegen_target_t;

/* A target with every feature, for tests that only emit GLSL. */
void codegen_target_default(codegen_target_t *t);

/* Restricted mode (vkhlo_context_options_t.restricted): clamps |t| to the
 * Vulkan profile VP_ANDROID_baseline_2022, so that what is compiled for it
 * runs on any device meeting that profile (target.c lists the limits). */
void codegen_target_restrict(codegen_target_t *t);

struct codegen_kernel;
struct hlo_instruction;
/* Checks kernel |k| (emitted for |instr|) against |t|'s limits: workgroup
 * invocations, workgroup counts, storage buffers per stage and the byte
 * size of each binding (maxStorageBufferRange).  A limit of 0 is unknown and
 * not checked.  Errors: UNIMPLEMENTED "file:line:col: ... exceeds ..." */
vkhlo_status_t codegen_target_check_kernel(const codegen_target_t *t,
                                           const struct hlo_instruction *instr,
                                           const struct codegen_kernel *k);

#endif
