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

/* Which kernel a f32 stablehlo.convolution gets (codegen/emit_conv.c):
 * auto is conv2d_cpu.comp on CPU devices, gemm_gpu.comp with
 * conv_gpu.glsl's hooks on GPUs. */
typedef enum codegen_conv_kind {
  CODEGEN_CONV_AUTO = 0,  /* conv2d_cpu.comp (conv_depthwise_cpu.comp), the variant chosen per layer */
  CODEGEN_CONV_GENERIC,   /* conv2d_cpu.comp's general form only (bench_conv's baseline) */
  CODEGEN_CONV_ELEMENTAL, /* one invocation per output element (elemental.c) */
  CODEGEN_CONV_GPU,       /* gemm_gpu.comp + conv_gpu.glsl on any device (auto's on GPUs; tests on CPU devices) */
} codegen_conv_kind_t;

typedef struct codegen_target {
  bool shader_int64, shader_float64, shader_int16, shader_int8, shader_float16;
  bool storage_buffer_8bit, storage_buffer_16bit;
  uint32_t subgroup_size;
  bool subgroup_shuffle; /* subgroupShuffle in compute shaders */
  /* Reductions of fusions split over a subgroup's lanes, one output
   * element per subgroup (emit_fusion.c, "Subgroup reductions"): GPUs
   * with subgroup shuffles; $VKHLO_REDUCE=subgroup forces it on any device
   * with shuffles (how it is tested on lavapipe, whose fusions then take
   * no row kernels, as on a GPU), =serial keeps one invocation per
   * element (api/context.c). */
  bool subgroup_reduce;
  uint32_t max_workgroup_count[3];
  uint32_t max_workgroup_invocations;
  uint32_t max_shared_memory_bytes;
  uint32_t max_storage_buffer_range;
  uint32_t max_storage_buffers_per_stage;
  bool is_cpu; /* lavapipe/llvmpipe and other CPU devices */
  /* Loop iterations one invocation may run, all its loops together; 0: no
   * limit.  lavapipe (llvmpipe) ends every loop of an invocation once
   * 65535 iterations have run in all (gallivm's loop limiter, there to
   * stop runaway shaders), so a kernel that needs more would compute a
   * wrong result there: codegen_assemble refuses it (UNIMPLEMENTED). */
  uint32_t max_loop_iterations;
  /* Kernels read their 64-bit word views of operands through uniform
   * texel buffers (codegen_declare_word_view): CPU devices with RGBA32UI
   * texel buffers, unless $VKHLO_TEXEL_WORDS=0 (api/context.c). */
  bool texel_words;
  uint32_t max_texel_buffer_elements;
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
  /* A driver quirk: f16 <-> f32 conversions in integer code (packed f16
   * storage, shaders/float.glsl's vk_half_to_float/vk_float_to_half), never
   * the SPIR-V conversion instructions.  Set for lavapipe on aarch64, whose
   * LLVM 15 cannot compile them ("Cannot select: fp_extend v4i16") or
   * crashes in the shaders that use them; $VKHLO_F16_SOFT=1 forces it. */
  bool f16_soft_conversions;
  /* GEMM kernel choice; from VKHLO_GEMM=auto|cpu|gpu|off (api/context.c). */
  codegen_gemm_kind_t gemm;
  /* For measurements: products the GPU GEMM would split along k stay
   * whole (codegen/expand.c, "split-K"); from VKHLO_SPLIT_K=0. */
  bool no_split_k;
  /* For measurements: chlo.ragged_dot is always expanded (a product per
   * group), never the CPU GEMM's grouped product (codegen/emit_gemm.c,
   * "Ragged products"); from VKHLO_RAGGED_GEMM=0. */
  bool no_ragged_gemm;
  /* For measurements: gemm_cpu.comp's register tile where the lhs is shared
   * by subgroup shuffles (gemm_tile_m rows x gemm_tile_n columns per
   * invocation; 0 x 0: chosen per product); from VKHLO_GEMM_TILE=MxN. */
  int gemm_tile_m, gemm_tile_n;
  /* Convolution kernel choice, and for measurements its register tile
   * (conv_tile_p pixels x conv_tile_c features; 0 x 0: chosen per layer)
   * and conv_no_shuffle (no subgroup shuffles for the weights); from
   * VKHLO_CONV_KERNEL=auto|generic|elemental|gpu, VKHLO_CONV_TILE=PxC and
   * VKHLO_CONV_SHUFFLE=0 (api/context.c). */
  codegen_conv_kind_t conv;
  int conv_tile_p, conv_tile_c;
  bool conv_no_shuffle;
  /* Tuning (api/tune.c, `vkhlo tune`).  A kernel with a choice of
   * configurations (codegen_kernel_t's tune_key: the CPU GEMM's rows per
   * invocation, the CPU convolution's features per invocation) takes, in
   * this order: its tune_candidate-th candidate when tune_candidate >= 1
   * and it has that many, the measurement knobs above, the configuration
   * tuned_config(tuning_user, key, &a, &b) returns (true: found; NULL:
   * none), its default.  Choices a kernel cannot take are ignored. */
  int tune_candidate;
  bool (*tuned_config)(const void *user, const char *key, int *a, int *b);
  const void *tuning_user;
} codegen_target_t;

/* The configuration a kernel with tune key |key| asks for, in the order
 * above: its tune_candidate-th of |count| candidates |cand| (a 0 in a pair
 * stands for |dflt_a| / |dflt_b|), else the measurement knob |knob_a| x
 * |knob_b| (0 x 0: unset), else tuned_config's choice, into *a, *b.  False
 * when none applies; the caller checks that the kernel can take it. */
static inline bool codegen_tile_request(const codegen_target_t *t, const char *key, const int (*cand)[2], int count,
                                        int dflt_a, int dflt_b, int knob_a, int knob_b, int *a, int *b) {
  if (t->tune_candidate >= 1 && t->tune_candidate <= count) {
    const int *c = cand[t->tune_candidate - 1];
    *a = c[0] ? c[0] : dflt_a;
    *b = c[1] ? c[1] : dflt_b;
    return true;
  }
  if (knob_a || knob_b) {
    *a = knob_a;
    *b = knob_b;
    return true;
  }
  return t->tuned_config && t->tuned_config(t->tuning_user, key, a, b);
}

/* Whether a fusion may hold several dots (codegen/fusion.c).  The
 * elemental kernels (VKHLO_GEMM=off) load the lhs once for all of a
 * fusion's dots, gemm_cpu.comp's NDOT products too; gemm_gpu.comp computes
 * one product, and on CPU devices whose subgroup kernel runs 8 lanes
 * (lavapipe's default) separate kernels, one product each, measured
 * faster (README, "One product per GEMM kernel"). */
static inline bool codegen_target_multi_dots(const codegen_target_t *t) {
  if (t->gemm == CODEGEN_GEMM_OFF) return true;
  if (!t->is_cpu || t->gemm == CODEGEN_GEMM_GPU) return false;
  return !(t->subgroup_shuffle && t->subgroup_size < 16);
}

/* Whether |t| runs shaders/gemm_gpu.comp's workgroups (256 invocations,
 * 16 KiB of shared memory; unknown limits count as enough), which the GPU
 * GEMM and convolution (codegen/emit_gemm.c, emit_conv.c) need: not
 * VP_ANDROID_baseline_2022's 128 invocations (restricted mode). */
static inline bool codegen_target_fits_gemm_gpu(const codegen_target_t *t) {
  return !(t->max_workgroup_invocations && t->max_workgroup_invocations < 256) &&
         !(t->max_shared_memory_bytes && t->max_shared_memory_bytes < 16384);
}

/* Whether dot_general takes shaders/gemm_gpu.comp on |t| (where its
 * operands are f32 / f16 / bf16 views the kernel reads, codegen/emit_gemm.c):
 * GPUs unless $VKHLO_GEMM says otherwise, any device under VKHLO_GEMM=gpu,
 * never a target whose workgroups are too small for it. */
static inline bool codegen_target_gemm_gpu(const codegen_target_t *t) {
  bool gpu = t->gemm == CODEGEN_GEMM_GPU || (t->gemm == CODEGEN_GEMM_AUTO && !t->is_cpu);
  return gpu && codegen_target_fits_gemm_gpu(t);
}

/* The rows of gemm_gpu.comp's tile for a product of |m| rows (its columns:
 * 4096 / rows): 16 (GEMM_TY 4, 16 x 256, 17 KiB of shared memory) for at
 * most 16 rows where the device has that much, else 64 (64 x 64). */
static inline int64_t codegen_gemm_gpu_rows(const codegen_target_t *t, int64_t m) {
  bool room = !t->max_shared_memory_bytes || t->max_shared_memory_bytes >= 17408;
  return m <= 16 && room ? 16 : 64;
}

/* A target with every feature, for tests that only emit GLSL. */
void codegen_target_default(codegen_target_t *t);

/* Restricted mode (vkhlo_context_options_t.restricted): clamps |t| to the
 * Vulkan profile VP_ANDROID_baseline_2022, so that what is compiled for it
 * runs on any device meeting that profile.  Inline: the runtime library
 * (which checks loaded executables against the target) links no codegen. */
/* The device's limit clamped to the profile's (0 = unknown: the profile's). */
static inline uint32_t codegen_clamp_limit(uint32_t device, uint32_t profile) {
  return device && device < profile ? device : profile;
}

/* VP_ANDROID_baseline_2022 (Khronos Vulkan-Profiles,
 * profiles/VP_ANDROID_baseline_2022.json): a Vulkan 1.0 profile whose
 * VkPhysicalDeviceFeatures have shaderInt16 but neither shaderInt64 nor
 * shaderFloat64, with no 8/16-bit storage or float16/int8 extensions and no
 * subgroup operations or float controls, and whose limits are
 *   maxStorageBufferRange             268435456 (256 MiB)
 *   maxComputeSharedMemorySize        32768
 *   maxComputeWorkGroupInvocations    128, maxComputeWorkGroupSize 128^3
 *   maxComputeWorkGroupCount          65536^3 (the core minimum 65535 here)
 *   maxPerStageDescriptorStorageBuffers 35 (maxPerStageResources 79)
 *   minStorageBufferOffsetAlignment   at most 256.
 * Features the profile has but vkhlo's restricted mode still leaves off
 * (shaderInt16) only make it stricter. */
static inline void codegen_target_restrict(codegen_target_t *t) {
  t->shader_int64 = t->shader_float64 = t->shader_int16 = t->shader_int8 = false;
  t->shader_float16 = t->storage_buffer_8bit = t->storage_buffer_16bit = false;
  t->subgroup_shuffle = t->subgroup_reduce = false;
  /* SignedZeroInfNanPreserve needs VK_KHR_shader_float_controls, which the
   * profile lacks: NaN tests stay bit tests (shaders/nan.glsl). */
  t->signed_zero_inf_nan_preserve_float16 = t->signed_zero_inf_nan_preserve_float32 =
      t->signed_zero_inf_nan_preserve_float64 = false;
  t->subgroup_size = 16; /* a guess for tiling only: no subgroup operation is emitted */
  for (int i = 0; i < 3; i++) t->max_workgroup_count[i] = codegen_clamp_limit(t->max_workgroup_count[i], 65535);
  t->max_workgroup_invocations = codegen_clamp_limit(t->max_workgroup_invocations, 128);
  t->max_shared_memory_bytes = codegen_clamp_limit(t->max_shared_memory_bytes, 32768);
  t->max_storage_buffer_range = codegen_clamp_limit(t->max_storage_buffer_range, 268435456u);
  t->max_storage_buffers_per_stage = codegen_clamp_limit(t->max_storage_buffers_per_stage, 35);
}


struct codegen_kernel;
struct hlo_instruction;
struct hlo_shape;
/* Whether an array of |shape| is larger than one binding of |t| may be
 * (maxStorageBufferRange; false where that is unknown, 0, or |t| is NULL):
 * no kernel can bind it whole. */
bool codegen_target_exceeds_binding(const codegen_target_t *t, const struct hlo_shape *shape);
/* Checks kernel |k| (emitted for |instr|) against |t|'s limits: workgroup
 * invocations, workgroup counts, storage buffers per stage and the byte
 * size of each binding (maxStorageBufferRange).  A limit of 0 is unknown and
 * not checked.  Errors: UNIMPLEMENTED "file:line:col: ... exceeds ..." */
vkhlo_status_t codegen_target_check_kernel(const codegen_target_t *t,
                                           const struct hlo_instruction *instr,
                                           const struct codegen_kernel *k);

#endif
