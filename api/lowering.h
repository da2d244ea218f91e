/*
 * The lowering's state and helpers, shared by the files of the lowering
 * (api/lower.c: the module, regions and kernels; api/lower_calls.c: the
 * calls out of the program, custom_call kernels and host callbacks).
 * Private to those files.
 */
#ifndef VKHLO_API_LOWERING_H
#define VKHLO_API_LOWERING_H

#include "api/internal.h"

/* last_use_position of results and checked values: the end of the program */
#define LIVE_TO_END 0x3fffffff

/* The logical buffers of one value: one per array element of its shape. */
typedef struct value_bufs {
  int count;
  int *ids;
} value_bufs_t;

typedef struct lowering {
  vkhlo_executable_t *exe;
  const hlo_module_t *module;
  const exe_schedule_t *schedule;
  const codegen_target_t *target;
  int position;
  /* constant data, laid out at the constant buffers' offsets */
  unsigned char *constant_data;
  uint64_t constant_size, constant_capacity;
  uint64_t alignment;
  /* kernel dedup: hash of GLSL per kernel */
  uint64_t *kernel_hashes;
  /* scratch marks indexed by instruction id (all false between uses) */
  bool *marks;
  /* While a counted loop's body is lowered (lower_while, "counter
   * table"): the instruction computing its counter's next value, which
   * becomes buffer |counter_table| instead of a dispatch (NULL: none). */
  const hlo_instruction_t *counter_step;
  int counter_table;
} lowering_t;

/* The value -> buffers map of one lowering of a computation. */
typedef struct env {
  value_bufs_t *vals; /* indexed by instruction id */
  int size;
} env_t;

/* The buffers of |instr|'s value in |env|, or NULL when the id is out of range. */
value_bufs_t *lowering_lookup(env_t *env, const hlo_instruction_t *instr);
/* *out: the one buffer of |operand|'s value (INTERNAL when not lowered,
 * UNIMPLEMENTED when a tuple). */
vkhlo_status_t lowering_single_buffer(env_t *env, const hlo_instruction_t *user,
                                      const hlo_instruction_t *operand, int *out);
/* A fresh temp buffer for each array element of |shape| (one for arrays);
 * out->ids is heap, owned by the caller's env. */
vkhlo_status_t lowering_new_value(lowering_t *l, const hlo_shape_t *shape, const char *name,
                                  value_bufs_t *out);
/* Appends a thunk at the next position; NULL on out-of-memory. */
exe_thunk_t *lowering_add_thunk(lowering_t *l, exe_sequence_t *seq, exe_thunk_kind_t kind);
/* Extends buffer |id|'s live range to the current position. */
void lowering_use_buffer(lowering_t *l, int id);
/* "file:line:col: stablehlo.OP: what" with status |code|. */
vkhlo_status_t lowering_instr_error(const hlo_instruction_t *instr, vkhlo_status_code_t code,
                                    const char *what);

/* api/lower_calls.c */
vkhlo_status_t lowering_custom_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                    exe_sequence_t *seq, value_bufs_t *out);
vkhlo_status_t lowering_host_call(lowering_t *l, env_t *env, const hlo_instruction_t *instr,
                                  exe_sequence_t *seq, value_bufs_t *out);

#endif
