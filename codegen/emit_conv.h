/*
 * Convolution kernels from shaders/ (implicit GEMM and depthwise,
 * register-blocked for CPU devices): stablehlo.convolution instructions and output fusions rooted
 * at one (the convolution followed by its elementwise epilogue: bias add,
 * batch-norm scale/shift, residual add, relu).  See codegen/emit_conv.c.
 */
#ifndef VKHLO_CODEGEN_EMIT_CONV_H
#define VKHLO_CODEGEN_EMIT_CONV_H

#include <stdbool.h>

#include "codegen/kernel.h"

/* If |instr| (a convolution, or a fusion whose computation is one
 * convolution and its elementwise epilogue) is one the library kernel
 * takes on |target|, emits it into |out| and sets *handled; otherwise
 * leaves *handled false and |out| untouched, and the caller emits the
 * per-element kernel.  Taken: f32 operands and result, 1 or 2 spatial
 * dimensions, batch_group_count 1, any dimension numbers, strides,
 * padding, dilations, window reversal and feature_group_count: on CPU
 * devices (target->is_cpu) shaders/conv2d_cpu.comp or
 * conv_depthwise_cpu.comp, on GPUs shaders/gemm_gpu.comp through
 * conv_gpu.glsl's hooks (not depthwise, at least 16 output features per
 * group; 256 invocations and 16 KiB of shared memory per workgroup).
 * target->conv (from $VKHLO_CONV_KERNEL when the context is created) =
 * CODEGEN_CONV_ELEMENTAL turns it off (the per-element path, for
 * comparison), CODEGEN_CONV_GPU takes the GPU kernel on any device for
 * every such convolution (the tests run it on lavapipe),
 * CODEGEN_CONV_GENERIC keeps the general form of conv2d_cpu.comp without
 * the per-layer variants
 * (bench_conv's baseline); target->conv_tile_p x conv_tile_c
 * ($VKHLO_CONV_TILE=PxC) picks the register tile (TILE_P <= 16 pixels x
 * TILE_C <= 32 features, TILE_C dividing the features per group; for
 * measurements); target->conv_no_shuffle ($VKHLO_CONV_SHUFFLE=0) turns off
 * the subgroup shuffles that share the weights.
 * Errors: RESOURCE_EXHAUSTED, INTERNAL (the embedded shader is missing). */
vkhlo_status_t codegen_emit_conv(const codegen_target_t *target, const hlo_instruction_t *instr,
                                 codegen_kernel_t *out, bool *handled);

#endif
