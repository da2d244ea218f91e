/*
 * Internals of the public API: the context, buffers, and the executable —
 * a program of thunks (dispatch, copy, while, conditional) over logical
 * buffers, produced by lowering an HloModule (api/lower.c) and run by the
 * executor (api/execute.c).
 *
 * This is the one layer that knows both HLO (through codegen) and Vulkan
 * (through vk_runtime); it translates between them.
 */
#ifndef VKHLO_API_INTERNAL_H
#define VKHLO_API_INTERNAL_H

#include "codegen/kernel.h"
#include "codegen/spirv.h"
#include "codegen/target.h"
#include "hlo/hlo.h"
#include "vk_runtime/vkrt.h"
#include "vkhlo/vkhlo.h"

struct vkhlo_context_s {
  vkrt_device_t *device;
  spirv_compiler_t *compiler;
  codegen_target_t target;
  vkhlo_message_fn message_fn;
  void *message_user;
  int validation_messages;
  bool restricted;
};

struct vkhlo_buffer_s {
  vkhlo_context_t *context;
  vkhlo_tensor_type_t type;
  vkrt_buffer_t *buffer;
};

/* ---------------------------------------------------------- the program */

typedef enum exe_buffer_kind_e {
  EXE_BUFFER_PARAMETER, /* the caller's argument |parameter_number| */
  EXE_BUFFER_CONSTANT,  /* uploaded at compile time into the constant pool */
  EXE_BUFFER_TEMP,      /* placed in the temp pool by buffer assignment */
} exe_buffer_kind_t;

/* A logical buffer: one array value (or a loop-state / result slot). */
typedef struct exe_buffer {
  exe_buffer_kind_t kind;
  uint64_t size_bytes;
  int parameter_number;
  /* Live range over thunk positions [def_position, last_use_position]. */
  int def_position;
  int last_use_position;
  /* Buffer assignment: offset in its pool (constant or temp). */
  uint64_t offset_bytes;
  const char *name; /* the instruction that defines it (for dumps) */
} exe_buffer_t;

typedef enum exe_thunk_kind_e {
  EXE_THUNK_DISPATCH,
  EXE_THUNK_COPY,
  EXE_THUNK_WHILE,
  EXE_THUNK_CONDITIONAL,
} exe_thunk_kind_t;

typedef struct exe_sequence exe_sequence_t;

typedef struct exe_thunk {
  exe_thunk_kind_t kind;
  int position;
  /* dispatch */
  int kernel;
  int *bindings; /* buffer ids, kernel's binding order */
  int binding_count;
  /* copy (whole-buffer prefix of size_bytes) */
  int src, dst;
  uint64_t size_bytes;
  /* while: run cond; read pred_buffer; if true run body and repeat */
  exe_sequence_t *cond;
  exe_sequence_t *body;
  int pred_buffer;
  /* conditional: read selector (i1 for if: true -> branch 0; i32 for case:
   * out of range -> last branch), run that branch */
  int selector_buffer;
  bool selector_is_pred;
  int branch_count;
  exe_sequence_t **branches;
} exe_thunk_t;

struct exe_sequence {
  int count, capacity;
  exe_thunk_t *thunks;
};

typedef struct exe_kernel {
  char *name;
  char *glsl;
  vkrt_pipeline_t *pipeline;
  uint32_t binding_count;
  uint32_t group_count[3];
} exe_kernel_t;

typedef struct exe_check {
  hlo_check_kind_t kind;
  char location[256];
  int actual, expected; /* buffer ids */
  vkhlo_tensor_type_t type;
  double tolerance;
  int64_t max_ulp_difference;
  vkhlo_check_result_t result;
} exe_check_t;

struct vkhlo_executable_s {
  vkhlo_context_t *context;
  int buffer_count, buffer_capacity;
  exe_buffer_t *buffers;
  int kernel_count, kernel_capacity;
  exe_kernel_t *kernels;
  exe_sequence_t main;
  int position_count;
  int parameter_count;
  vkhlo_tensor_type_t *parameter_types;
  int result_count;
  vkhlo_tensor_type_t *result_types;
  int *result_buffers;
  int check_count, check_capacity;
  exe_check_t *checks;
  /* pools */
  uint64_t temp_pool_size_bytes, constant_pool_size_bytes;
  vkrt_buffer_t *temp_pool, *constant_pool;
  vkrt_cmd_t *cmd;
  vkhlo_executable_stats_t stats;
  uint64_t max_loop_iterations;
};

/* api/lower.c: builds |exe|'s buffers, kernels (GLSL only) and thunks from
 * the verified |module|.  Constant data is written to |*out_constant_data|
 * (heap, caller frees) laid out at each constant buffer's offset. */
vkhlo_status_t exe_lower_module(vkhlo_executable_t *exe, const hlo_module_t *module,
                                const codegen_target_t *target, void **out_constant_data);
/* api/lower.c: places temp buffers by live range (first fit). */
void exe_assign_buffers(vkhlo_executable_t *exe);
/* api/execute.c */
vkhlo_status_t exe_run(vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                       vkhlo_buffer_t **results);
/* api/check.c: compares downloaded actual/expected host data. */
void exe_check_evaluate(exe_check_t *check, const void *actual, const void *expected);
void exe_free_sequence(exe_sequence_t *seq);
/* api/element.c: element |i| (component |part| of complex) of host data as
 * a double; *out_ordered receives a monotonic integer image for ULPs. */
double exe_element_value(const void *data, vkhlo_element_type_t t, int64_t i, int part,
                         int64_t *out_ordered);

/* Conversions between the IR's and the API's type descriptions. */
void exe_tensor_type_from_shape(const hlo_shape_t *shape, vkhlo_tensor_type_t *out);

#define EXE_BUFFER_ALIGNMENT 256u

#endif
