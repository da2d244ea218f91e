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

typedef struct custom_kernel {
  char *target_name;
  uint32_t *spirv;
  size_t spirv_size_bytes;
  uint32_t local_size_x;
} custom_kernel_t;

/* A tuned configuration (api/tune.c): the kernel with tune key |key|
 * (codegen_kernel_t) takes configuration a x b. */
typedef struct tune_choice {
  char *key; /* owned */
  int a, b;
} tune_choice_t;

struct vkhlo_context_s {
  const vkhlo_allocator_t *allocator; /* options->host_allocator: all host memory (NULL = libc) */
  vkrt_device_t *device;
  /* The SPIR-V compiler: NULL until the first compile creates it
   * (context_compiler, api/context_compile.c), which also sets
   * |compiler_destroy|, called by vkhlo_context_destroy; so the runtime
   * library (api/context.c) links no compiler.  Its options: */
  spirv_compiler_t *compiler;
  void (*compiler_destroy)(spirv_compiler_t *compiler);
  char *cache_dir; /* owned; NULL: the default directory */
  bool disable_cache;
  /* Tuning (api/tune.c): the device's tuning file in the cache directory
   * (owned; NULL when the cache is off), and its choices, read on the
   * first compile (tuning_loaded) and kept sorted by key. */
  char *tuning_path;
  bool tuning_loaded;
  int tuning_count;
  tune_choice_t *tuning;
  codegen_target_t target;
  vkhlo_message_fn message_fn;
  void *message_user;
  int validation_messages;
  bool restricted;
  int custom_kernel_count;
  custom_kernel_t *custom_kernels;
  vkhlo_host_callback_fn host_callback;
  void *host_callback_user;
  uint64_t next_buffer_serial;
  /* Device buffers of destroyed vkhlo buffers, kept for the next ones
   * (oldest first; at most CONTEXT_POOL_MAX_BUFFERS / _BYTES): in steady
   * state an execution's fresh results cost no vkAllocateMemory, and the
   * same device buffers come back, so the recording replays. */
  vkrt_buffer_t **pool;
  int pool_count;
  uint64_t pool_bytes;
  uint64_t pool_reuses;
  /* Embedding: the caller's device-memory allocator (api/embed.c) */
  vkhlo_device_memory_allocate_fn memory_allocate;
  vkhlo_device_memory_free_fn memory_free;
  void *memory_user;
};

/* api/pipeline_cache_dir.c: loads the device's pipeline cache from the
 * cache directory (saved again when the device is destroyed); none when
 * the cache is off. */
vkhlo_status_t context_open_pipeline_cache(vkhlo_context_t *context, const vkhlo_context_options_t *options);

/* A buffer for |type| from the context's pool (no allocation when one of
 * the right size is pooled: the device buffer whose vkrt_buffer_id is
 * |preferred_id| where that one is, 0 for any) or newly allocated; its
 * contents are unspecified (executions overwrite their results). */
vkhlo_status_t context_buffer_acquire(vkhlo_context_t *context, const vkhlo_tensor_type_t *type,
                                      uint64_t preferred_id, bool *out_reused, vkhlo_buffer_t **out_buffer);

struct vkhlo_buffer_s {
  vkhlo_context_t *context;
  uint64_t serial; /* unique within the context: never reused */
  vkhlo_tensor_type_t type;
  vkrt_buffer_t *buffer;
};

/* ---------------------------------------------------------- the program */

/* Where a logical buffer's bytes live (XLA's BufferAllocation). */
typedef enum exe_allocation_kind_e {
  EXE_ALLOCATION_PARAMETER, /* the caller's argument buffer |parameter_number| */
  EXE_ALLOCATION_CONSTANT,  /* uploaded at compile time */
  EXE_ALLOCATION_TEMP,      /* scratch shared by buffers whose live ranges differ */
  EXE_ALLOCATION_RESULT,    /* the caller's result buffer |result_number|: one
                               storage group written in place of a copy-out */
} exe_allocation_kind_t;

typedef struct exe_buffer_allocation {
  int index;
  exe_allocation_kind_t kind;
  uint64_t size;
  bool is_entry_computation_parameter;
  int parameter_number;
  int result_number;   /* EXE_ALLOCATION_RESULT: which result (else -1) */
  bool maybe_live_out; /* holds a buffer the caller receives as a result */
  /* constant allocations: their bytes start at this offset of the
   * constant data lowering produced */
  uint64_t constant_data_offset;
  vkrt_buffer_t *buffer; /* NULL for parameters and results (bound per execution) */
} exe_buffer_allocation_t;

typedef enum exe_buffer_kind_e {
  EXE_BUFFER_PARAMETER, /* the caller's argument |parameter_number| */
  EXE_BUFFER_CONSTANT,  /* uploaded at compile time into a constant allocation */
  EXE_BUFFER_TEMP,      /* placed in a temp allocation by buffer assignment */
} exe_buffer_kind_t;

/* A logical buffer: one array value (or a loop-state / result slot).
 * Values that are the same bytes (reshape, same-width bitcast_convert,
 * get_tuple_element, tuple) share one logical buffer. */
typedef struct exe_buffer {
  exe_buffer_kind_t kind;
  uint64_t size_bytes; /* the value's bytes rounded up to 16 (at least 16) */
  uint64_t data_bytes; /* the value's own bytes (what its kernels write,
                          up to the 32-bit word holding the last byte) */
  int parameter_number;
  /* Live range over thunk positions, inclusive: written first by the thunk
   * at |def_position|, read or written last at |last_use_position|. */
  int def_position;
  int last_use_position;
  /* In-place reuse: this buffer is an output of the dispatch at
   * |def_position| that writes into the storage of buffer |inplace_of|,
   * an input of that dispatch whose live range ends there (-1: none). */
  int inplace_of;
  /* Buffer assignment: the slice {allocation, offset_bytes, size_bytes}.
   * For constants, lowering sets offset_bytes within the constant data and
   * buffer assignment rebases it into its allocation. */
  int allocation;
  uint64_t offset_bytes;
  char *name; /* the instruction that defines it (for dumps and messages);
                 owned by the executable: the IR is gone after compilation */
} exe_buffer_t;

typedef enum exe_thunk_kind_e {
  EXE_THUNK_DISPATCH,
  EXE_THUNK_COPY,
  EXE_THUNK_WHILE,
  EXE_THUNK_CONDITIONAL,
  EXE_THUNK_HOST, /* infeed/outfeed/send/recv: bindings like a dispatch */
} exe_thunk_kind_t;

typedef struct exe_sequence exe_sequence_t;

typedef struct exe_thunk {
  exe_thunk_kind_t kind;
  int position;
  /* dispatch */
  int kernel;
  int *bindings; /* buffer ids, kernel's binding order: inputs, then outputs */
  int binding_count;
  int input_count;
  /* Per input binding: true when output 0 may be written into this input's
   * storage (out[i] depends on in[i] only, same element width, one output);
   * lowering decides, once live ranges are known, whether it is. NULL when
   * no input qualifies. */
  bool *inplace_ok;
  bool is_scatter; /* its results start as copies of its inputs */
  /* A dynamic_update_slice's kernel for when its output is written over
   * input |window_input|'s storage (codegen_emit_dus_in_place: the update
   * only); exe_select_inplace_kernels takes it then.  Compile time only. */
  bool has_window_kernel;
  int window_kernel, window_input;
  /* copy (whole-buffer prefix of size_bytes); with src_stride, in the
   * body of a counted loop: from src_stride * t bytes into src at
   * iteration t (a counter table, api/lower.c); with dst_offset, into dst
   * from that byte (a piece of a value larger than a binding, api/lower.c,
   * lower_split_concatenate; never inside a loop) */
  int src, dst;
  uint64_t size_bytes, src_stride, dst_offset;
  /* while: run cond; read pred_buffer; if true run body and repeat.  With
   * has_trip_count (the loop's known_trip_count, codegen/trip_count.c):
   * run body trip_count times, never the cond, nothing read back. */
  exe_sequence_t *cond;
  exe_sequence_t *body;
  int pred_buffer;
  bool has_trip_count;
  int64_t trip_count;
  /* Loop state in two buffers (api/inplace.c, "Loop state"): pairs
   * (state S, value V) whose copy V -> S the body no longer makes: after
   * each iteration S and V trade storage (api/execute.c), and where the
   * state ends in V's storage it is copied into S once after the loop.
   * rotate[2 i], rotate[2 i + 1]: S and V of pair i (owned). */
  int rotate_count;
  int *rotate;
  /* A while loop without a trip count whose cond and body are dispatches
   * and whole-buffer copies only: the kernels shaders/loop_gate.comp and
   * shaders/copy_words.comp that let the executor run its iterations in
   * batches under conditional rendering (api/execute.c, "Batched
   * iterations"); -1 (both) for every other loop. */
  int gate_kernel, copy_kernel;
  /* conditional: read selector (i1 for if: true -> branch 0; i32 for case:
   * out of range -> last branch), run that branch */
  int selector_buffer;
  bool selector_is_pred;
  int branch_count;
  exe_sequence_t **branches;
  /* host call: opcode name, channel, config (owned by the executable) */
  const char *host_op;
  int64_t channel_id;
  char *host_config;
  vkhlo_tensor_type_t *host_types; /* one per binding */
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
  /* bit i: binding i is also read as texels (vkrt_pipeline_create; the
   * texel bindings follow the binding_count storage buffers) */
  uint64_t texel_views;
  uint64_t scalar_views; /* likewise as R32UI texels, after those */
  uint32_t group_count[3];
  /* user kernels (custom_call): SPIR-V instead of GLSL, and a push
   * constant holding the element count of result 0 */
  uint32_t *spirv;
  size_t spirv_size_bytes;
  uint32_t push_constant;
  bool has_push_constant;
  /* |pipeline| is an earlier kernel's, made from the same SPIR-V words for
   * the same layout (exe_create_pipelines), and destroyed with that one */
  bool pipeline_shared;
  /* |spirv| is an earlier kernel's module (the same words), freed with that
   * one; a .vkx file stores it once (KERN in api/vkx.h) */
  bool spirv_shared;
  /* codegen_kernel_t's tuning fields (compiled executables only): the
   * key (owned; NULL: no choices), the configuration and candidates */
  char *tune_key;
  int tune_a, tune_b, tune_candidates;
} exe_kernel_t;

typedef struct exe_check {
  hlo_check_kind_t kind;
  char location[256];
  int actual, expected; /* buffer ids */
  vkhlo_tensor_type_t type;
  double tolerance;
  int64_t max_ulp_difference;
  bool f64_demoted; /* computed as f32 (demote_f64): f32 tolerances */
  vkhlo_check_result_t result;
} exe_check_t;

struct vkhlo_executable_s {
  vkhlo_context_t *context;
  const vkhlo_allocator_t *allocator; /* the context's: every host block below */
  int buffer_count, buffer_capacity;
  exe_buffer_t *buffers;
  int allocation_count;
  exe_buffer_allocation_t *allocations;
  int kernel_count, kernel_capacity;
  exe_kernel_t *kernels;
  exe_sequence_t main;
  int position_count;
  /* main needs no host step (exe_sequence_recorded_thunks >= 0): one
   * recording runs it, which is replayed */
  bool straight_line;
  int parameter_count;
  vkhlo_tensor_type_t *parameter_types;
  int result_count;
  vkhlo_tensor_type_t *result_types;
  int *result_buffers;
  int check_count, check_capacity;
  exe_check_t *checks;
  uint64_t constant_size_bytes; /* lowering's constant data */
  uint64_t alignment;           /* of every slice's offset */
  /* Execution.  |cmd| records the program; for a straight-line program it
   * is recorded once and replayed while the arguments and results are the
   * same buffers (|recorded_serials|: parameters, then results), and
   * |copy_cmd| copies out the results that are not written in place. */
  vkrt_cmd_t *cmd, *copy_cmd;
  bool recorded;
  uint64_t *recorded_serials; /* vkrt_buffer_id of each, not vkhlo serials */
  vkhlo_executable_stats_t stats;
  int64_t recorded_copies; /* copy commands in |cmd|'s program recording */
  /* Embedding (api/embed.c): |cmd| holds a recording made by
   * vkhlo_executable_submit (leading barrier, result copies inside), not
   * one for execute_into's replay; |record_cmd| owns the descriptor sets
   * of vkhlo_executable_record's recordings into the caller's command
   * buffer (created on first use). */
  bool recorded_async;
  vkrt_cmd_t *record_cmd;
  /* Where a loop's predicate or a conditional's selector lives in memory
   * the host cannot map (a discrete GPU's), a copy into this mapped buffer
   * ends the submission before it is read (api/execute.c, read_selector);
   * made on first use. */
  vkrt_buffer_t *readback;
  uint64_t max_loop_iterations;
  /* Batched iterations of while loops (api/execute.c): at most
   * loop_batch iterations per submission (exe_env_loop_batch: GPUs
   * EXE_LOOP_BATCH, CPU devices 0; 0: every iteration reads its predicate
   * back); the
   * gate words and, where they cannot be mapped, their readback copy
   * (made on first use). */
  uint64_t loop_batch;
  vkrt_buffer_t *loop_gates, *loop_gates_readback;
  /* vkhlo_executable_set_profiling: per-kernel totals (kernel_count each) */
  bool profiling;
  int64_t *profile_dispatches;
  double *profile_ms;
  /* vkhlo_executable_tuning (api/tune.c): one entry per tune key of the
   * kernels, keys owned by the kernels */
  int tuning_count;
  vkhlo_kernel_tuning_t *tuning;
};

/* api/schedule.c: the order in which lowering runs the instructions of
 * each computation lowered as a sequence (the entry, and the regions of
 * while / if / case reached from it): XLA's HloSchedule.  Owns its
 * arrays; the instructions belong to the module, which must outlive it. */
typedef struct exe_schedule {
  const vkhlo_allocator_t *allocator; /* the module's: the arrays below */
  int count;
  const hlo_computation_t **computations;
  const hlo_instruction_t ***sequences; /* sequences[i]: every instruction of
                                           computations[i], in run order */
} exe_schedule_t;
/* Schedules every sequence computation of the verified |module| into
 * |*out| (free with exe_schedule_free; nothing to free on error). */
vkhlo_status_t exe_schedule_module(const hlo_module_t *module, exe_schedule_t *out);
/* The order of |c|'s instructions (a list schedule preferring the
 * instruction that frees the most bytes, or the original order when that
 * peaks lower); *out_order: heap, c->instruction_count entries, caller
 * frees (vkhlo_free with module->arena.allocator). */
vkhlo_status_t exe_schedule_computation(const hlo_module_t *module, const hlo_computation_t *c,
                                        const hlo_instruction_t ***out_order);
/* |c|'s sequence in |schedule|, or NULL when |c| was not scheduled. */
const hlo_instruction_t *const *exe_schedule_sequence(const exe_schedule_t *schedule,
                                                      const hlo_computation_t *c);
void exe_schedule_free(exe_schedule_t *schedule);

/* api/lower.c: builds |exe|'s buffers, kernels (GLSL only) and thunks from
 * the verified |module| in the order of |schedule|: aliases reshapes,
 * computes live ranges and marks in-place candidates.  Constant data is
 * written to |*out_constant_data| (heap from exe->allocator, caller frees; exe->constant_size_bytes
 * bytes) at each constant buffer's offset_bytes, aligned to |alignment|. */
vkhlo_status_t exe_lower_module(vkhlo_executable_t *exe, const hlo_module_t *module,
                                const exe_schedule_t *schedule, const codegen_target_t *target,
                                uint64_t alignment, void **out_constant_data);

/* api/inplace.c (see its essay) */
/* The operand whose buffer |instr|'s result is (the same bytes: reshape,
 * same-width bitcast_convert, a fusion of those over a parameter), or -1. */
int exe_alias_operand(const hlo_instruction_t *instr);
/* Whether |instr| is a slice of a contiguous run of its operand's bytes
 * (unit strides; full dimensions after one, extent 1 before it), and
 * their offset into *offset_bytes.  Lowering makes such a slice of a
 * parameter a view of the argument (a parameter buffer at that offset)
 * where the offset is a multiple of EXE_VIEW_ALIGNMENT: how a kernel reads
 * part of an argument larger than a binding may be (maxStorageBufferRange;
 * codegen/expand.c, "arguments larger than a binding"). */
bool exe_view_offset(const hlo_instruction_t *instr, uint64_t *offset_bytes);
/* Vulkan's largest minStorageBufferOffsetAlignment (and texel buffer
 * offset alignment) */
#define EXE_VIEW_ALIGNMENT 256
/* May the single output of |instr| be written into operand |k|'s storage?
 * |marks|: module->next_instruction_id + 1 scratch bools, all false, left
 * all false.  (Whether the operand dies there is exe_decide_inplace's.) */
bool exe_inplace_candidate(const hlo_module_t *module, bool *marks, const hlo_instruction_t *instr, int k);
/* Decides in-place reuse for every dispatch of |exe| from its candidates,
 * once live ranges are final; drops the copies of scatters whose input
 * dies at the scatter. */
void exe_decide_inplace(vkhlo_executable_t *exe);
/* Loop state written in place (api/inplace.c, "Loop state"): a while
 * body's results go straight into the loop's state buffers where that is
 * safe, and their copies are dropped.  Before exe_decide_inplace. */
void exe_alias_loop_state(vkhlo_executable_t *exe);
/* After both: a dynamic_update_slice dispatch whose output shares its
 * operand's storage runs its window kernel (has_window_kernel); kernels
 * no thunk dispatches any more are dropped (indices renumbered). */
vkhlo_status_t exe_select_inplace_kernels(vkhlo_executable_t *exe);

/* api/context_compile.c (library vkhlo, not vkhlo_runtime): the
 * context's SPIR-V compiler, created on the first call from the context's
 * options and target.  Errors: those of spirv_compiler_create. */
vkhlo_status_t context_compiler(vkhlo_context_t *context, spirv_compiler_t **out_compiler);

/* api/executable.c: compiles |text| for |target| (the context's, with
 * tuning fields of its own); vkhlo_executable_compile without tuning. */
vkhlo_status_t exe_compile(vkhlo_context_t *context, const char *text, size_t length, const char *file_name,
                           const vkhlo_compile_options_t *options, const codegen_target_t *target,
                           vkhlo_executable_t **out_executable);

/* api/tune.c.  Reads the context's tuning file once (a missing or
 * unreadable file is an empty one; malformed lines are skipped). */
vkhlo_status_t context_tuning_load(vkhlo_context_t *context);
/* The context's target taking the tuning file's choices. */
void context_tuned_target(const vkhlo_context_t *context, codegen_target_t *out);
/* vkhlo_executable_compile with options->tune or retune: times the
 * candidates of the kernels that have some, records the fastest, then
 * compiles with them. */
vkhlo_status_t exe_tune_compile(vkhlo_context_t *context, const char *text, size_t length, const char *file_name,
                                const vkhlo_compile_options_t *options, vkhlo_executable_t **out_executable);
/* Fills exe->tuning from its kernels' tune keys; |timing| (NULL: none)
 * adds what tuning measured. */
struct tune_timing;
vkhlo_status_t exe_tuning_report(vkhlo_executable_t *exe, const struct tune_timing *timing);

/* api/context.c: the positive decimal integer in environment variable
 * |name|, or |default_value| when it is unset.  Errors: INVALID_ARGUMENT
 * naming the variable when it is set but empty, not a decimal number,
 * zero, or over 2^64-1. */
vkhlo_status_t exe_env_uint64(const char *name, uint64_t default_value, uint64_t *out);
/* The executable's loop_batch: $VKHLO_LOOP_BATCH (0 turns batching off),
 * else EXE_LOOP_BATCH on GPUs and 0 on CPU devices (api/context.c).
 * Errors: INVALID_ARGUMENT for a value that is not a number. */
vkhlo_status_t exe_env_loop_batch(const vkhlo_context_t *context, uint64_t *out);

/* api/buffer_assignment.c */
typedef struct exe_buffer_limits {
  uint64_t alignment;            /* slice offsets (minStorageBufferOffsetAlignment) */
  uint64_t max_allocation_size;  /* one allocation (maxMemoryAllocationSize) */
} exe_buffer_limits_t;
/* The device's limits ($VKHLO_MAX_ALLOCATION_BYTES may lower the
 * allocation size, for tests).  Errors: INVALID_ARGUMENT when that
 * variable is not a number (exe_env_uint64) or is below the alignment. */
vkhlo_status_t exe_buffer_limits_for_device(const vkrt_device_t *device, exe_buffer_limits_t *out);
/* Places every buffer: parameters in their own allocations, constants
 * packed in order, each result's storage group in the caller's result
 * buffer when it is a temp no other result holds, the other temps packed
 * by live range (best fit, biggest first);
 * fills exe->allocations and each buffer's {allocation, offset_bytes}.
 * Device buffers of a previous assignment are destroyed (the executable
 * cannot run until build_device_objects makes new ones).
 * Errors: RESOURCE_EXHAUSTED when one buffer exceeds max_allocation_size. */
vkhlo_status_t exe_assign_buffers(vkhlo_executable_t *exe, const exe_buffer_limits_t *limits);
/* Proves the assignment safe: every slice aligned and inside its
 * allocation, every buffer referenced by a thunk only inside its live
 * range, and no two temp buffers live at the same position overlapping in
 * bytes, except an in-place output and the input it reuses at the thunk
 * where that input dies.  Errors: INTERNAL naming the first violation. */
vkhlo_status_t exe_verify_buffer_assignment(const vkhlo_executable_t *exe);
/* Max over positions of the bytes of live temp buffers (in-place pairs
 * counted once; those placed in result buffers not counted): no placement
 * can use less.  0 when out of host memory (a statistic). */
uint64_t exe_liveness_lower_bound(const vkhlo_executable_t *exe);
/* Sum of the temp allocations' sizes. */
uint64_t exe_temp_bytes(const vkhlo_executable_t *exe);

/* api/executable_object.c: a pipeline per kernel, kernel i's SPIR-V being
 * spirv[i] (spirv_size_bytes[i] bytes; borrowed), or the kernel's own
 * (k->spirv) where |spirv| is NULL.  Kernels whose words and layout
 * (bindings, texel views, push constant) equal an earlier kernel's share
 * its pipeline (pipeline_shared): a model's layers are the same kernels
 * over other buffers, and each pipeline is a shader compilation in the
 * driver.  Counts the pipelines made in exe->stats.pipelines.  On error
 * what was created is left to vkhlo_executable_destroy.  Errors: the
 * device's, annotated with the kernel's name. */
vkhlo_status_t exe_create_pipelines(vkhlo_executable_t *exe, uint32_t *const *spirv, const size_t *spirv_size_bytes);

/* api/executable_object.c: creates |exe|'s pipelines
 * (exe_create_pipelines), its constant and temp
 * allocations (constants uploaded from |constant_data|, at each constant
 * allocation's constant_data_offset) and its command buffers, once the
 * program and buffer assignment are final.  On error what was created is
 * left to vkhlo_executable_destroy.  Errors: the device's (a kernel's
 * pipeline error names the kernel). */
vkhlo_status_t exe_create_device_objects(vkhlo_executable_t *exe, uint32_t *const *spirv,
                                         const size_t *spirv_size_bytes, const void *constant_data);

/* Straight-line programs (api/execute.c).  The thunks one run of |seq|
 * records, counted loops (has_trip_count) unrolled, or -1 when it needs a
 * step on the host between submissions: a while loop whose predicate is
 * read back, a conditional (its selector), a host call (infeed, outfeed,
 * send, recv), or more than EXE_MAX_RECORDED_THUNKS thunks in all (such a
 * program is submitted in parts).  *out_host_step (may be NULL): the first
 * thunk that needs the host, or NULL when only the size is the reason. */
enum { EXE_MAX_RECORDED_THUNKS = 1 << 16 };
/* The most iterations of a while loop recorded per submission where
 * conditional rendering gates them (api/execute.c, "Batched iterations"). */
enum { EXE_LOOP_BATCH = 64 };
int64_t exe_sequence_recorded_thunks(const exe_sequence_t *seq, const exe_thunk_t **out_host_step);

/* Widens [*lo, *hi] to the positions of every thunk of |seq|, nested
 * ones included (api/buffer_assignment.c). */
void exe_sequence_span(const exe_sequence_t *seq, int *lo, int *hi);

/* api/execute.c */
/* Barriers one execution records (loops and branches counted once). */
int64_t exe_count_barriers(const vkhlo_executable_t *exe);

/* api/execute.c, for api/embed.c */
/* INVALID_ARGUMENT on a count or type mismatch, a NULL buffer, a result
 * that is an argument or another result. */
vkhlo_status_t exe_check_buffers(const vkhlo_executable_t *exe, int arg_count, vkhlo_buffer_t *const *args,
                                 int result_count, vkhlo_buffer_t *const *results);
/* Records the whole straight-line program into |cmd| (recording), with a
 * leading compute/transfer barrier and the result copy-outs; counts the
 * copy commands recorded (all, and result copy-outs). */
vkhlo_status_t exe_record_program(vkhlo_executable_t *exe, vkrt_cmd_t *cmd, vkhlo_buffer_t *const *args,
                                  vkhlo_buffer_t *const *results, int64_t *out_copies,
                                  int64_t *out_result_copies);
/* Whether exe->cmd's recording is for these buffers; remember them. */
bool exe_recording_matches(const vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                           vkhlo_buffer_t *const *results);
vkhlo_status_t exe_remember_recording(vkhlo_executable_t *exe, vkhlo_buffer_t *const *args,
                                      vkhlo_buffer_t *const *results);

/* api/embed.c: fills the embedding fields of |dopts| (Vulkan allocation
 * callbacks, the device-memory allocator) from |options|. */
void embed_device_options(vkhlo_context_t *ctx, const vkhlo_context_options_t *options,
                          vkrt_device_options_t *dopts);

/* api/check.c: compares downloaded actual/expected host data. */
void exe_check_evaluate(exe_check_t *check, const void *actual, const void *expected);
void exe_free_sequence(const vkhlo_allocator_t *allocator, exe_sequence_t *seq);
/* api/element.c: element |i| (component |part| of complex) of host data as
 * a double; *out_ordered receives a monotonic integer image for ULPs. */
double exe_element_value(const void *data, vkhlo_element_type_t t, int64_t i, int part,
                         int64_t *out_ordered);

/* Conversions between the IR's and the API's type descriptions. */
void exe_tensor_type_from_shape(const hlo_shape_t *shape, vkhlo_tensor_type_t *out);

/* A buffer id's storage: the buffer whose slice it uses (in-place chains
 * followed to their start). */
static inline int exe_storage_buffer(const vkhlo_executable_t *exe, int id) {
  while (exe->buffers[id].inplace_of >= 0) id = exe->buffers[id].inplace_of;
  return id;
}

/* Bytes a result allocation may span for a result of |size| bytes: the
 * size rounded up to 16 like every logical buffer (the kernels write only
 * the result's own words; the rest is slack the executor may bind when
 * the caller's buffer has it). */
static inline uint64_t exe_result_slot_bytes(uint64_t size) { return size < 16 ? 16 : (size + 15) / 16 * 16; }

/* True when result |i| is written by its dispatch straight into the
 * caller's buffer (its storage is result allocation i), so no copy-out. */
static inline bool exe_result_in_place(const vkhlo_executable_t *exe, int i) {
  int a = exe->buffers[exe->result_buffers[i]].allocation;
  return a >= 0 && a < exe->allocation_count && exe->allocations[a].kind == EXE_ALLOCATION_RESULT &&
         exe->allocations[a].result_number == i;
}


#endif
