/* codegen_target_t helpers. */
#include "codegen/target.h"

#include <string.h>

#include "codegen/elemental.h"
#include "codegen/kernel.h"

void codegen_target_default(codegen_target_t *t) {
  memset(t, 0, sizeof *t);
  t->shader_int64 = t->shader_float64 = t->shader_int16 = t->shader_int8 = true;
  t->shader_float16 = t->storage_buffer_8bit = t->storage_buffer_16bit = true;
  t->subgroup_size = 32;
  t->max_workgroup_count[0] = t->max_workgroup_count[1] = t->max_workgroup_count[2] = 65535;
  t->max_workgroup_invocations = 1024;
  t->max_shared_memory_bytes = 32768;
  t->max_storage_buffer_range = 1u << 30;
  t->max_storage_buffers_per_stage = 64;
  t->signed_zero_inf_nan_preserve_float16 = t->signed_zero_inf_nan_preserve_float32 =
      t->signed_zero_inf_nan_preserve_float64 = true;
}

bool codegen_target_exceeds_binding(const codegen_target_t *t, const hlo_shape_t *shape) {
  return t && t->max_storage_buffer_range && !hlo_shape_is_tuple(shape) &&
         hlo_shape_size_bytes(shape) > t->max_storage_buffer_range;
}

vkhlo_status_t codegen_target_check_kernel(const codegen_target_t *t, const hlo_instruction_t *instr,
                                           const codegen_kernel_t *k) {
  const char *op = hlo_opcode_name(instr->opcode);
  if (t->max_workgroup_invocations && k->local_size_x > t->max_workgroup_invocations)
    return el_unimplemented(instr, "%s: the kernel's %u invocations per workgroup exceed the target's %u",
                            op, k->local_size_x, t->max_workgroup_invocations);
  for (int i = 0; i < 3; i++)
    if (t->max_workgroup_count[i] && k->group_count[i] > t->max_workgroup_count[i])
      return el_unimplemented(instr, "%s: the kernel's %u workgroups along %c exceed the target's %u", op,
                              k->group_count[i], "xyz"[i], t->max_workgroup_count[i]);
  int bindings = k->input_count + k->output_count;
  if (t->max_storage_buffers_per_stage && (uint32_t)bindings > t->max_storage_buffers_per_stage)
    return el_unimplemented(instr, "%s: the kernel's %d storage buffers exceed the target's %u per stage",
                            op, bindings, t->max_storage_buffers_per_stage);
  if (t->max_storage_buffer_range) {
    for (int b = 0; b < bindings; b++) {
      const hlo_shape_t *shape = b < k->input_count
                                     ? (b < instr->operand_count ? &instr->operands[b]->shape : NULL)
                                     : b - k->input_count < el_result_count(instr)
                                           ? el_result_shape(instr, b - k->input_count)
                                           : NULL;
      size_t bytes = shape ? hlo_shape_size_bytes(shape) : 0;
      if (bytes > t->max_storage_buffer_range)
        return el_unimplemented(instr, "%s: binding %d holds %zu bytes, more than the target's "
                                "maxStorageBufferRange %u", op, b, bytes, t->max_storage_buffer_range);
    }
  }
  return NULL;
}
