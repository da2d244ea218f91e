/* codegen_target_t helpers. */
#include "codegen/target.h"

#include <string.h>

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
