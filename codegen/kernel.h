/*
 * Per-instruction kernels: one GLSL compute shader for one HLO instruction.
 *
 * Binding convention (set 0, std430 storage buffers, then texel views):
 *   bindings 0..n-1  : the instruction's operands in order, each a dense
 *                      row-major array of the operand's element type in host
 *                      representation (see hlo/element_types.def);
 *   bindings n..n+r-1: the results (one per tuple element for tuple shapes);
 *   then one uniform texel buffer per bit of |texel_inputs|: the same bytes
 *   as that operand's binding, read as RGBA32UI texels (CPU devices), then
 *   one per bit of |scalar_inputs|, as R32UI texels.
 * Special cases:
 *   - scatter: before the dispatch the caller has copied each input operand
 *     into the matching result buffer; the kernel updates results in place.
 * Dispatch: |local_size_x| invocations per workgroup, |group_count| groups;
 * the shader computes a linear invocation index
 *   gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * local_size_x
 * and returns when it is >= the kernel's total invocation count, so group
 * counts never exceed the device's maxComputeWorkGroupCount.
 */
#ifndef VKHLO_CODEGEN_KERNEL_H
#define VKHLO_CODEGEN_KERNEL_H

#include "codegen/target.h"
#include "hlo/hlo.h"

typedef struct codegen_kernel {
  char *name;  /* heap (|allocator|); e.g. "add_3" */
  char *glsl;  /* heap (|allocator|); complete GLSL 450 source */
  const vkhlo_allocator_t *allocator; /* name and glsl come from here (NULL = libc) */
  uint32_t local_size_x;
  uint32_t group_count[3];
  int input_count;  /* bindings 0..input_count-1 */
  int output_count; /* bindings input_count..input_count+output_count-1 */
  /* Texel views (vk_runtime/vkrt.h, vkrt_pipeline_create): bit k, operand
   * k's binding is also a uniform texel buffer of 16-byte RGBA32UI texels
   * at binding input_count + output_count + (the lower bits set), which
   * the kernel reads its words through (CPU devices; codegen/emit.c). */
  uint64_t texel_inputs;
  /* Likewise as R32UI texels (one element each), at the bindings after
   * those: 32-bit elements a kernel reads one by one (the CPU GEMM's
   * operands that are not read by words, codegen/emit_gemm.c). */
  uint64_t scalar_inputs;
  /* Tuning (codegen_target_t's tune_candidate, api/tune.c): a kernel with
   * a choice of configurations names it by |tune_key| (the library kernel,
   * its variant and the shape, e.g. "gemm_cpu sg b=1 m=64 n=64 k=64 ndot=1
   * w=011"; "" for none); |tune_a| x |tune_b| is the configuration it
   * asked for (what tuned_config returns to get this kernel again) and
   * |tune_candidates| how many candidates it has. */
  char tune_key[192];
  int tune_a, tune_b;
  int tune_candidates;
} codegen_kernel_t;

void codegen_kernel_free(codegen_kernel_t *k);

/* True if |instr| is emitted as a kernel (false for parameter, constant,
 * tuple, get_tuple_element, while, if, case, custom_call, check and other
 * ops the lowering handles itself). */
bool codegen_instruction_needs_kernel(const hlo_instruction_t *instr);

/* Emits the kernel computing |instr| into |out|.
 * Errors: UNIMPLEMENTED (with "unsupported element type <t>" or
 * "unsupported op <name>") when the op or element type cannot run on
 * |target|; the message starts with the instruction's file:line:col;
 * RESOURCE_EXHAUSTED.  Every allocation goes through |allocator| (NULL =
 * libc), which out->allocator keeps for codegen_kernel_free. */
vkhlo_status_t codegen_emit_instruction(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                        const hlo_instruction_t *instr, codegen_kernel_t *out);

/* In-place dynamic_update_slice.  A dynamic_update_slice, or a fusion
 * whose root is one, may have its result written over the storage of the
 * operand it updates (api/inplace.c): then only the update's elements
 * need writing.  codegen_dus_in_place_operand gives that operand's index
 * (0 for the op, the fusion operand that is the root's operand 0 and is
 * read by nothing else), or -1; codegen_emit_dus_in_place emits the
 * kernel for that case (*handled false where the operand index is -1):
 * one invocation per element of the update, each storing it at the
 * clamped start plus its index, the operand's binding never read.  Only
 * correct where the result's storage is that operand's.  Errors as
 * codegen_emit_instruction. */
int codegen_dus_in_place_operand(const hlo_instruction_t *instr);
vkhlo_status_t codegen_emit_dus_in_place(const codegen_target_t *target, const vkhlo_allocator_t *allocator,
                                         const hlo_instruction_t *instr, codegen_kernel_t *out, bool *handled);

/* The executor's own kernels, library files of shaders/ compiled as they
 * are (api/execute.c, "Batched iterations"):
 *   CODEGEN_LOOP_GATE   shaders/loop_gate.comp: binding 0 a loop's i1
 *                       predicate, 1 the gate words; a 4-byte push
 *                       constant (the iteration); one workgroup;
 *   CODEGEN_COPY_WORDS  shaders/copy_words.comp: binding 0 the source,
 *                       1 the destination, 32-bit words; workgroups of
 *                       64, 1 here (the executor sizes each dispatch).
 * Errors: RESOURCE_EXHAUSTED; INTERNAL if the file is missing. */
typedef enum codegen_library_kernel {
  CODEGEN_LOOP_GATE,
  CODEGEN_COPY_WORDS,
} codegen_library_kernel_t;
vkhlo_status_t codegen_emit_library_kernel(codegen_library_kernel_t which, const vkhlo_allocator_t *allocator,
                                           codegen_kernel_t *out);

/* Checks that every element type of |instr| (operands and results) is
 * supported on |target|; UNIMPLEMENTED "unsupported element type" otherwise. */
vkhlo_status_t codegen_check_element_types(const codegen_target_t *target,
                                           const hlo_instruction_t *instr);

#endif
