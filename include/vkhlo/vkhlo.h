/*
 * vkhlo — run StableHLO programs on any Vulkan device.
 *
 * Tutorial: text -> compile -> buffers -> execute -> read back.
 *
 *   vkhlo_context_t *ctx;
 *   vkhlo_status_t st = vkhlo_context_create(NULL, &ctx);      // picks a device
 *   vkhlo_executable_t *exe;
 *   st = vkhlo_executable_compile(ctx, text, strlen(text), "prog.mlir", NULL, &exe);
 *   vkhlo_tensor_type_t t;                                    // argument 0's type
 *   vkhlo_executable_parameter_type(exe, 0, &t);
 *   vkhlo_buffer_t *arg;
 *   st = vkhlo_buffer_create(ctx, &t, host_data, &arg);         // uploads
 *   vkhlo_buffer_t *result;
 *   st = vkhlo_executable_execute(exe, 1, &arg, 1, &result);
 *   st = vkhlo_buffer_read(result, host_out, size_bytes);        // downloads
 *   vkhlo_buffer_destroy(result); vkhlo_buffer_destroy(arg);
 *   vkhlo_executable_destroy(exe); vkhlo_context_destroy(ctx);
 *
 * Every call returns a vkhlo_status_t (NULL = OK, see vkhlo/status.h).
 * Objects are created with *_create / *_compile and owned by the caller,
 * who destroys them with the matching *_destroy, children before their
 * context.  Output parameters are set to NULL on failure; a failed call
 * leaves nothing allocated.
 *
 * Libraries: vkhlo (the compiler and the runtime) has every function
 * here; vkhlo_runtime (no parser, no glslang, no SPIRV-Tools) has all but
 * vkhlo_executable_compile and vkhlo_context_register_custom_call.
 *
 * Threading: a context and its objects (executables, buffers) are used from
 * one thread at a time: calls on one context, or on objects of one
 * context, must not overlap; different contexts may be used from
 * different threads at once (there is no global state).  A context made
 * with vkhlo_context_create_external submits to the caller's VkQueue from
 * vkhlo_buffer_create / _read, execute, execute_into and submit (and
 * compile, which uploads constants): Vulkan requires queue access to be
 * externally synchronized, so the caller must not use that queue from
 * another thread during those calls.  vkhlo_executable_record submits
 * nothing (it records into the caller's command buffer, which the caller
 * synchronizes as usual).  See "Embedding" below.
 *
 * Host representation of tensors (buffers, inputs, outputs): dense,
 * row-major, little-endian; i1 one byte (0/1); i2/i4/ui2/ui4 one byte each;
 * f16/bf16 their 16 raw bits; complex<f32>/complex<f64> two floats
 * (real, imaginary).
 */
#ifndef VKHLO_VKHLO_H
#define VKHLO_VKHLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vkhlo/allocator.h"
#include "vkhlo/status.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VKHLO_VERSION_STRING "0.1.0"

/* Element types, as StableHLO spells them in comments. */
typedef enum vkhlo_element_type_e {
  VKHLO_PRED = 0, /* i1 */
  VKHLO_S2, VKHLO_S4, VKHLO_S8, VKHLO_S16, VKHLO_S32, VKHLO_S64,
  VKHLO_U2, VKHLO_U4, VKHLO_U8, VKHLO_U16, VKHLO_U32, VKHLO_U64,
  VKHLO_F4E2M1FN, VKHLO_F6E2M3FN, VKHLO_F6E3M2FN, VKHLO_F8E3M4, VKHLO_F8E4M3,
  VKHLO_F8E4M3FN, VKHLO_F8E4M3FNUZ, VKHLO_F8E4M3B11FNUZ, VKHLO_F8E5M2,
  VKHLO_F8E5M2FNUZ, VKHLO_F8E8M0FNU,
  VKHLO_F16, VKHLO_BF16, VKHLO_F32, VKHLO_F64,
  VKHLO_C64,  /* complex<f32> */
  VKHLO_C128, /* complex<f64> */
  VKHLO_TOKEN,
} vkhlo_element_type_t;

#define VKHLO_MAX_RANK 16

/* A tensor type: element type and dimensions (row-major). */
typedef struct vkhlo_tensor_type {
  vkhlo_element_type_t element_type;
  int rank;
  int64_t dimensions[VKHLO_MAX_RANK];
} vkhlo_tensor_type_t;

/* Bytes per element in host representation; "f32"-style name. */
size_t vkhlo_element_type_size_bytes(vkhlo_element_type_t t);
const char *vkhlo_element_type_name(vkhlo_element_type_t t);
/* Parses "f32", "ui8", "i1", "complex<f32>"...; false when unknown. */
bool vkhlo_element_type_parse(const char *name, vkhlo_element_type_t *out);
int64_t vkhlo_tensor_type_element_count(const vkhlo_tensor_type_t *t);
size_t vkhlo_tensor_type_size_bytes(const vkhlo_tensor_type_t *t);

/* Formats a host tensor as text: "tensor<2x2xf32>\n[[1, 2],\n [3, 4]]\n".
 * At most |max_elements| values are printed (negative: all), the rest
 * elided with "...".  *out_text is caller-owned (free()). */
vkhlo_status_t vkhlo_tensor_format(const vkhlo_tensor_type_t *type, const void *data,
                                   int64_t max_elements, char **out_text);

/* ------------------------------------------------------------- devices */

typedef struct vkhlo_device_description {
  char name[256];
  char type[32]; /* "discrete-gpu", "integrated-gpu", "virtual-gpu", "cpu", "other" */
  uint32_t vendor_id, device_id;
  uint32_t api_version_major, api_version_minor, api_version_patch;
} vkhlo_device_description_t;

/* Lists the Vulkan devices.  *out_devices is caller-owned (free()).
 * Errors: UNAVAILABLE when no Vulkan loader is installed. */
vkhlo_status_t vkhlo_list_devices(vkhlo_device_description_t **out_devices, int *out_count);

/* ------------------------------------------------------------- context */

typedef struct vkhlo_context_s vkhlo_context_t;

typedef void (*vkhlo_message_fn)(void *user, const char *message);

/* The caller's device-memory allocator (vkhlo_context_options_t's
 * device_memory_*), for one vkhlo buffer. */
typedef struct vkhlo_device_memory_request {
  uint64_t size;             /* bytes (VkMemoryRequirements::size) */
  uint64_t alignment;        /* of the offset (VkMemoryRequirements::alignment) */
  uint32_t memory_type_bits; /* allowed memory types (VkMemoryRequirements) */
  bool host_visible;         /* a staging buffer: HOST_VISIBLE | HOST_COHERENT
                                memory, mapped (|mapped| required); otherwise
                                DEVICE_LOCAL is best */
} vkhlo_device_memory_request_t;
typedef struct vkhlo_device_memory_block {
  void *memory;       /* VkDeviceMemory */
  uint64_t offset;    /* bytes into |memory|, a multiple of the alignment */
  void *mapped;       /* host address of |offset| when mapped, else NULL */
  bool host_coherent; /* the memory type is HOST_COHERENT (mapped is used only then) */
  void *user_data;    /* the allocator's, handed back to free */
} vkhlo_device_memory_block_t;
/* Fills *out_block; returns a VkResult (0 = VK_SUCCESS; otherwise the
 * vkhlo call fails with RESOURCE_EXHAUSTED for the out-of-memory results,
 * INTERNAL else). */
typedef int32_t (*vkhlo_device_memory_allocate_fn)(void *user, const vkhlo_device_memory_request_t *request,
                                                   vkhlo_device_memory_block_t *out_block);
/* Called once per block, after vkhlo destroyed the buffer bound to it. */
typedef void (*vkhlo_device_memory_free_fn)(void *user, const vkhlo_device_memory_block_t *block);

typedef struct vkhlo_context_options {
  /* Device: NULL = $VKHLO_DEVICE, else discrete GPU, then integrated, then
   * CPU (lavapipe).  A decimal index into vkhlo_list_devices' order, or a
   * case-insensitive substring of the device name. */
  const char *device;
  /* Enables VK_LAYER_KHRONOS_validation (also when $VKHLO_VALIDATION=1).
   * Every validation message goes to |message_fn| (stderr when NULL) and is
   * counted (vkhlo_context_validation_message_count). */
  bool enable_validation;
  vkhlo_message_fn message_fn;
  void *message_user;
  /* SPIR-V cache directory: NULL = $VKHLO_CACHE_DIR, else
   * $XDG_CACHE_HOME/vkhlo, else ~/.cache/vkhlo.  "off" disables it. */
  const char *cache_dir;
  bool disable_cache;
  /* Restricted device mode (also $VKHLO_RESTRICTED=1): behave as if the
   * device lacked 64-bit and 16-bit arithmetic and 8/16-bit storage. */
  bool restricted;
  /* On devices without shaderFloat64 (or in restricted mode), compute f64
   * and complex<f64> as f32 instead of failing to compile (also
   * $VKHLO_DEMOTE_F64=1).  Storage stays 8 bytes per f64; results carry
   * f32 precision, and checks on them use f32 tolerances. */
  bool demote_f64;
  /* Embedding.  A const VkAllocationCallbacks* (as void*): passed to every
   * vkCreate* / vkAllocate* / vkDestroy* / vkFree* call vkhlo makes
   * (device memory, buffers, pipelines, descriptor pools, fences, query
   * pools, and the instance and device when vkhlo creates them).  NULL:
   * the driver's allocator.  It must stay valid until the context is
   * destroyed.  (Host allocations of vkhlo itself are a separate hook.) */
  const void *vulkan_allocation_callbacks;
  /* Embedding.  When |allocate| is set, the caller allocates the
   * VkDeviceMemory of every buffer vkhlo creates (temporaries, constants,
   * vkhlo_buffer_create, staging) and gets it back through |free|; vkhlo
   * binds each buffer at the returned offset and never maps or frees that
   * memory itself.  Both or neither must be set. */
  vkhlo_device_memory_allocate_fn device_memory_allocate;
  vkhlo_device_memory_free_fn device_memory_free;
  void *device_memory_user;
  /* Host memory: NULL = the C library's malloc/realloc/free.  Every host
   * allocation vkhlo makes for this context, its executables (compiling
   * and executing) and its buffers goes through it; not status values,
   * not glslang's, SPIRV-Tools' or the Vulkan driver's own memory (see
   * vkhlo/allocator.h for the contract: lifetime, threads, failures).
   * A failed allocation makes the call fail with RESOURCE_EXHAUSTED. */
  const vkhlo_allocator_t *host_allocator;
} vkhlo_context_options_t;

/* Creates a context on a device vkhlo picks (see options->device);
 * |options| may be NULL.  Errors: UNAVAILABLE (no loader, no device). */
vkhlo_status_t vkhlo_context_create(const vkhlo_context_options_t *options,
                                    vkhlo_context_t **out_context);

/* Creates a context on the caller's Vulkan objects (game engines): the
 * handles are VkInstance, VkPhysicalDevice, VkDevice and a VkQueue of
 * |queue_family_index| that supports compute, passed as void*.  vkhlo
 * never destroys them; they must outlive the context.  The device should
 * have the features vkhlo uses enabled (shaderInt64, shaderFloat64,
 * storageBuffer8BitAccess, storageBuffer16BitAccess, shaderInt16,
 * shaderInt8 where available); programs needing a missing one fail to
 * compile with UNIMPLEMENTED.  |get_instance_proc_addr| may be NULL. */
typedef struct vkhlo_external_device {
  void *instance;
  void *physical_device;
  void *device;
  void *queue;
  uint32_t queue_family_index;
  void *get_instance_proc_addr; /* PFN_vkGetInstanceProcAddr or NULL */
} vkhlo_external_device_t;
vkhlo_status_t vkhlo_context_create_external(const vkhlo_context_options_t *options,
                                             const vkhlo_external_device_t *device,
                                             vkhlo_context_t **out_context);
void vkhlo_context_destroy(vkhlo_context_t *context);

/* The device the context runs on. */
void vkhlo_context_device(const vkhlo_context_t *context, vkhlo_device_description_t *out);
/* Validation messages received so far (0 without validation). */
int vkhlo_context_validation_message_count(const vkhlo_context_t *context);

/* ---------------------------------------------------------- executables */

typedef struct vkhlo_executable_s vkhlo_executable_t;

typedef struct vkhlo_compile_options {
  /* Entry function: NULL = "main" (or the only public function). */
  const char *function;
  /* dense_resource<__elided__> constants: 0 = error, 1 = zeros,
   * 2 = seeded random values (|seed|). */
  int fill_elided;
  uint64_t seed;
  /* One kernel per instruction (no fusion). */
  bool no_fusion;
  /* Write IR, GLSL and SPIR-V disassembly of every kernel to this folder. */
  const char *dump_dir;
  /* With dump_dir: write the IR only after this pass ("expand", "simplify",
   * "cse", "dce", "fusion"); NULL = after every pass. */
  const char *dump_after;
  /* Tuning (`vkhlo tune`).  Some kernels have a choice of configurations
   * (on CPU devices: the GEMM's rows or columns per invocation, the
   * convolution's output features per invocation; see
   * vkhlo_executable_tuning).  Every compile takes the choices recorded
   * for this device in the cache directory's tuning file
   * (tuning-VENDOR-DEVICE-DRIVER.txt, one "A B KEY" line per kernel
   * shape), else per-device-class defaults.  With |tune|, the compile
   * first times, on the device, each candidate configuration of every
   * kernel whose key the file lacks (|retune|: of every kernel): the
   * program is compiled once per candidate index and run 3 to 15 times
   * each (rounds of one run each, alternating, until 3 rounds have taken
   * 2 s) on zero-filled arguments with per-dispatch timestamps;
   * the fastest per key (least device time per dispatch; the default
   * unless another is 3% faster) is recorded in the file (kept in the
   * context only when the cache is off) and used.  Tune on an idle
   * machine: load favours larger tiles.
   * Costs a compile and 3-15 executions per candidate (at most 4 today).
   * Errors: as vkhlo_executable_execute for those executions (a program
   * that cannot run on zeros cannot be tuned); NOT_FOUND when the file
   * cannot be written. */
  bool tune;
  bool retune;
  /* Programs with dynamic shapes (spec "Types": `tensor<?x4xf32>`, as
   * jax.export writes for symbolic dimensions and torch.export for dynamic
   * ones): the types of the entry function's parameters, one per
   * parameter in order (|parameter_type_count| of them; NULL / 0 for a
   * static program).  Only the parameters whose declared type is dynamic
   * use theirs; it must fit the declared type (element type, rank, the
   * static dimensions, and the bounds of bounded ones: #stablehlo.bounds).  The program is compiled for these types, as
   * stablehlo's shape refinement does: every value gets the static shape
   * its operands give (get_dimension_size and the integer arithmetic on it
   * evaluated, dynamic_broadcast_in_dim / dynamic_reshape / dynamic_iota /
   * dynamic_pad / real_dynamic_slice / dynamic_gather / dynamic_conv taking
   * the computed sizes, functions with dynamic signatures specialized per
   * call, jax.export's custom_call @shape_assertion checked, its
   * @stablehlo.dynamic_* custom calls made static); the
   * executable's parameter and result types are then static.  Compile once
   * per set of types.  Errors: INVALID_ARGUMENT "FILE:LINE:COL: ..." when a
   * dynamic parameter has no type here or one that does not fit, when a
   * shape assertion fails (its error_message), or when a result's size
   * depends on something other than shapes and constants. */
  const vkhlo_tensor_type_t *parameter_types;
  int parameter_type_count;
} vkhlo_compile_options_t;

/* Parses, verifies and compiles StableHLO text (pretty or generic form,
 * as JAX and torch_xla write it) or a StableHLO portable artifact (MLIR
 * bytecode of the VHLO dialect, recognized by its "ML\xEFR" magic number,
 * or inside a jax.export Exported.serialize() file; see
 * vkhlo_portable_artifact_to_text).  |file_name| is used in messages.
 * check.expect_* calls in the program become checks evaluated by every
 * execution (see vkhlo_executable_check_count).
 * Environment, read here (each a positive decimal integer when set):
 *   $VKHLO_MAX_LOOP_ITERATIONS  iterations after which a while loop fails
 *                               with DEADLINE_EXCEEDED (default 10^7);
 *   $VKHLO_MAX_ALLOCATION_BYTES bytes of one device allocation, at least the
 *                               device's storage-buffer offset alignment;
 *                               only lowers the device's own limit (tests
 *                               use it to split buffers over allocations).
 * Errors: INVALID_ARGUMENT "FILE:LINE:COL: ..." for malformed or ill-typed
 * programs, and INVALID_ARGUMENT naming the variable when one of the above
 * is set to something else (empty, not a number, 0, over 2^64-1, or an
 * allocation size below the alignment); UNIMPLEMENTED for ops or element
 * types the device cannot run; RESOURCE_EXHAUSTED; INTERNAL for a bug in
 * vkhlo (e.g. a pass leaving a module that does not verify). */
vkhlo_status_t vkhlo_executable_compile(vkhlo_context_t *context, const char *text, size_t length,
                                        const char *file_name,
                                        const vkhlo_compile_options_t *options,
                                        vkhlo_executable_t **out_executable);
void vkhlo_executable_destroy(vkhlo_executable_t *executable);

/* The StableHLO text of a portable artifact: |data| (|size| bytes) is MLIR
 * bytecode (versions 0-6) of the VHLO dialect, as
 * stablehlo.serialize_portable_artifact, `stablehlo-translate --serialize`
 * and jax.export write it (StableHLO's compatibility guarantees are made for
 * this form; VHLO 0.9.0 to 1.20.0), or a file jax.export's
 * Exported.serialize() wrote (a FlatBuffers file holding one).  vkhlo_executable_compile takes such
 * bytes directly and compiles this text; its messages point into it as
 * "FILE (as text):LINE:COL", so this is how to read what they point at
 * (`vkhlo deserialize FILE`).  The text is the generic op form, one
 * func.func per VHLO function.  *out_text is caller-owned (free());
 * *out_length (if not NULL) is its length.
 * Errors: INVALID_ARGUMENT "FILE: bytecode offset N: ..." for bytes that are
 * not well-formed bytecode; UNIMPLEMENTED for bytecode newer than version 6,
 * VHLO ops newer than StableHLO 1.20.0, or ops of other dialects (bytecode
 * of the `stablehlo` dialect itself, a module written with MLIR's
 * write_bytecode without serializing it, is not a portable artifact). */
vkhlo_status_t vkhlo_portable_artifact_to_text(const void *data, size_t size, const char *file_name,
                                               char **out_text, size_t *out_length);

int vkhlo_executable_parameter_count(const vkhlo_executable_t *executable);
int vkhlo_executable_result_count(const vkhlo_executable_t *executable);
/* Types of parameter / result |index|; INVALID_ARGUMENT when out of range. */
vkhlo_status_t vkhlo_executable_parameter_type(const vkhlo_executable_t *executable, int index,
                                               vkhlo_tensor_type_t *out_type);
vkhlo_status_t vkhlo_executable_result_type(const vkhlo_executable_t *executable, int index,
                                            vkhlo_tensor_type_t *out_type);

/* Figures of the compiled program (see `vkhlo compile --stats`). */
typedef struct vkhlo_executable_stats {
  int64_t instructions;   /* HLO instructions after inlining, before the passes */
  int64_t fused_clusters; /* fusion instructions (0 with no_fusion) */
  int64_t kernels;        /* compute shaders */
  int64_t dispatches;     /* dispatches per execution (loops counted once) */
  int64_t spirv_compiled; /* modules compiled (not from the cache) */
  int64_t spirv_cache_hits;
  double compile_ms;
  /* Bytes read + written by the dispatches and copies of one execution
   * (loops and branches counted once): for each dispatch the sizes of its
   * input and output buffers, twice each copy's size (results included). */
  int64_t bytes_moved;
  /* Device memory for intermediate values: the temp allocations' total. */
  int64_t peak_intermediate_bytes;
  /* Max over schedule positions of the bytes of live intermediate values:
   * what a perfect placement of this schedule would need. */
  int64_t liveness_lower_bound_bytes;
  /* Pipeline barriers recorded per execution (loops counted once). */
  int64_t barriers;
  /* Since compilation: executions, and how many of them recorded the
   * command buffer anew (the others replayed the previous recording). */
  int64_t executions;
  int64_t recordings;
  /* Of the last execution (execute, execute_into, submit or record; 0
   * before any): copy commands (vkCmdCopyBuffer) in its recording(s) —
   * copy thunks of the program plus copy-outs of results — and how many of
   * them copy a result into the caller's result buffer because the result
   * is not written in place (it is an argument or a constant, a value
   * returned twice, or a value that shares storage with a larger one). */
  int64_t copy_commands;
  int64_t result_copies;
  /* Of the last execution: queue submissions it made.  execute and
   * execute_into submit a straight-line program once (twice where results
   * are copied out) and otherwise once per step the host decides: each
   * iteration of a while loop whose predicate is read back, each if/case,
   * each host call.  A while loop whose trip count the program fixes (a
   * counter from a constant to a constant bound by a constant step, as
   * JAX's fori_loop and scan export) adds none: its body is recorded that
   * many times.  submit: 1; record: 0. */
  int64_t submissions;
  /* Vulkan compute pipelines made: one per distinct kernel code (SPIR-V
   * words and bindings); kernels of the same code, such as a model's
   * layers, share one.  At most kernels. */
  int64_t pipelines;
} vkhlo_executable_stats_t;
void vkhlo_executable_stats(const vkhlo_executable_t *executable, vkhlo_executable_stats_t *out);

/* -------------------------------------------- executables as files */

/* Compiled executables as files (.vkx; the format is described in
 * api/vkx.h): the SPIR-V of every kernel, the thunk program, the buffer
 * plan, parameter/result types, checks, the device features and limits the
 * code relies on, and the constants (embedded, or in a side file).  Loading
 * one parses no StableHLO and compiles no shader; pipelines go through the
 * context's pipeline cache (kept in the cache directory, see
 * vkhlo_context_options_t::cache_dir), so a second load on the same device
 * is fast. */

/* Serializes |executable| (compiled on a context, or loaded) into
 * |*out_data| (heap, caller frees with free(); |*out_size| bytes) with the
 * constants embedded.  Errors: RESOURCE_EXHAUSTED; UNAVAILABLE when the
 * constants cannot be read back from the device. */
vkhlo_status_t vkhlo_executable_serialize(const vkhlo_executable_t *executable, void **out_data,
                                          size_t *out_size);

/* Writes |executable| to the file |path|.  With |weights_path| non-NULL
 * the constants go to that file instead (raw bytes, each allocation at a
 * multiple of 64), and the .vkx records its base name, size and checksum;
 * loading then maps it (mmap).  Errors: NOT_FOUND when a file cannot be
 * written; as vkhlo_executable_serialize. */
vkhlo_status_t vkhlo_executable_save(const vkhlo_executable_t *executable, const char *path,
                                     const char *weights_path);

typedef struct vkhlo_load_options {
  /* The side file of an executable saved with weights: NULL = the name
   * recorded in the file, looked up beside the .vkx (load_file) or in the
   * current directory (load). */
  const char *weights_path;
} vkhlo_load_options_t;

/* Makes an executable on |context| from the |size| bytes of a .vkx file at
 * |data| (copied where needed; the caller may free them on return).
 * |options| may be NULL.  The executable behaves as the one compiled from
 * the source: same results bit for bit, same checks; its stats report 0
 * compiled SPIR-V modules and compile_ms = the load time.
 * Environment: $VKHLO_MAX_LOOP_ITERATIONS as vkhlo_executable_compile.
 * Errors: INVALID_ARGUMENT "malformed .vkx file: at byte N: ..." for a file
 * that is truncated, corrupted (checksum), of another version or
 * inconsistent (nothing is created on the device before the whole file has
 * been checked); UNIMPLEMENTED naming the device feature or limit the code
 * needs and |context|'s device lacks (e.g. "shaderInt64"); NOT_FOUND /
 * INVALID_ARGUMENT for a missing or mismatched weights file;
 * RESOURCE_EXHAUSTED; UNAVAILABLE on device errors. */
vkhlo_status_t vkhlo_executable_load(vkhlo_context_t *context, const void *data, size_t size,
                                     const vkhlo_load_options_t *options,
                                     vkhlo_executable_t **out_executable);
/* The context |executable| was compiled or loaded on. */
vkhlo_context_t *vkhlo_executable_context(const vkhlo_executable_t *executable);
/* As vkhlo_executable_load, from the file |path| (mapped, not copied). */
vkhlo_status_t vkhlo_executable_load_file(vkhlo_context_t *context, const char *path,
                                          const vkhlo_load_options_t *options,
                                          vkhlo_executable_t **out_executable);

/* ------------------------------------------------------------- buffers */

typedef struct vkhlo_buffer_s vkhlo_buffer_t;

/* A device buffer holding a tensor of |type|, filled from |host_data|
 * (host representation, vkhlo_tensor_type_size_bytes(type) bytes) or
 * zeroed when |host_data| is NULL. */
vkhlo_status_t vkhlo_buffer_create(vkhlo_context_t *context, const vkhlo_tensor_type_t *type,
                                   const void *host_data, vkhlo_buffer_t **out_buffer);
/* Destroys |buffer|; its device memory goes back to the context's pool,
 * which the next vkhlo_buffer_create or vkhlo_executable_execute of the
 * same size takes before allocating (the pool keeps at most 64 buffers and
 * 256 MiB; older ones are freed, all at vkhlo_context_destroy). */
void vkhlo_buffer_destroy(vkhlo_buffer_t *buffer);
/* Device memory of a context (its device's vkAllocateMemory calls, staging
 * included) and its buffer pool, for tests and diagnostics. */
typedef struct vkhlo_memory_stats {
  int64_t device_allocations_made; /* ever */
  int64_t device_allocations_live;
  int64_t device_bytes_live;
  int64_t pooled_buffers, pooled_bytes; /* free buffers kept for reuse */
  int64_t pool_reuses;                  /* buffers taken from the pool, ever */
} vkhlo_memory_stats_t;
void vkhlo_context_memory_stats(const vkhlo_context_t *context, vkhlo_memory_stats_t *out);
void vkhlo_buffer_type(const vkhlo_buffer_t *buffer, vkhlo_tensor_type_t *out_type);
/* Copies the tensor to |host_data| (|size_bytes| must equal its size).
 * Errors: INVALID_ARGUMENT on a size mismatch; UNAVAILABLE on device loss. */
vkhlo_status_t vkhlo_buffer_read(const vkhlo_buffer_t *buffer, void *host_data, size_t size_bytes);
/* Overwrites the tensor with |host_data| (host representation;
 * |size_bytes| must equal its size), in place: the same device buffer, so
 * an executable that last ran with it replays its recording (new inputs
 * into the same argument buffers cost no re-recording; see
 * vkhlo_executable_execute_into).  Synchronous, like vkhlo_buffer_read;
 * not while a vkhlo_executable_submit that uses the buffer is in flight
 * (wait for it first).  A wrapped buffer (vkhlo_buffer_wrap) is written
 * through a staging copy on the context's queue: its VkBuffer needs
 * TRANSFER_DST.  Errors: INVALID_ARGUMENT on a size mismatch; UNAVAILABLE
 * on device loss. */
vkhlo_status_t vkhlo_buffer_write(vkhlo_buffer_t *buffer, const void *host_data, size_t size_bytes);

/* ----------------------------------------------------------- execution */

/* Runs the executable on |args| (one buffer per parameter, types equal to
 * the parameter types; not modified) and returns one new buffer per result
 * in |out_results[0..result_count-1]| (caller-owned, distinct from every
 * buffer the caller holds; all NULL on error).  Blocks until the device is
 * done.  The results come from the context's buffer pool: a caller that
 * destroys the previous results before executing again gets the same
 * device buffers back, and then a straight-line program replays its
 * recorded command buffer (one queue submission, no recording; see
 * vkhlo_executable_stats' recordings); results kept alive make the next
 * execution record again.  Threading: as the context (one thread at a
 * time for the context, its executables and buffers).
 * Errors: INVALID_ARGUMENT on a count or type mismatch; UNAVAILABLE on
 * device loss; DEADLINE_EXCEEDED when a while loop runs past
 * $VKHLO_MAX_LOOP_ITERATIONS (default 10^7) iterations. */
vkhlo_status_t vkhlo_executable_execute(vkhlo_executable_t *executable, int arg_count,
                                        vkhlo_buffer_t *const *args, int result_count,
                                        vkhlo_buffer_t **out_results);

/* Runs the executable writing its results into the caller's buffers
 * |results[0..result_count-1]| (types equal to the result types; their old
 * contents are overwritten; ownership stays with the caller).  The last
 * dispatch writes each result there directly (no copy-out), and a
 * straight-line program's recorded command buffer is replayed while the
 * same argument and result buffers are passed again: the fast path for a
 * program run repeatedly (a frame loop, a benchmark).  Blocks until the
 * device is done; on error the results' contents are unspecified.
 * Errors: as vkhlo_executable_execute, and INVALID_ARGUMENT when a result
 * buffer is also an argument or two results are the same buffer. */
vkhlo_status_t vkhlo_executable_execute_into(vkhlo_executable_t *executable, int arg_count,
                                             vkhlo_buffer_t *const *args, int result_count,
                                             vkhlo_buffer_t *const *results);

/* ----------------------------------------------------------- embedding */

/* Embedding into an application that owns the Vulkan objects (a game
 * engine, an Android app): on a context from vkhlo_context_create_external
 * (also on vkhlo's own device), the caller's VkBuffers serve as arguments
 * and results with no copies, executions are submitted asynchronously with
 * the caller's semaphores and fence, or recorded into the caller's command
 * buffer.  vkhlo never calls vkQueueWaitIdle or vkDeviceWaitIdle on the
 * caller's device; it waits only for its own fences (its own previous
 * submission of the same executable, staging copies, execute).
 *
 * Device features: for timeline semaphores the caller's device must have
 * timelineSemaphore enabled (Vulkan 1.2 core); vkhlo only passes the values.
 */

/* Wraps the caller's VkBuffer |vk_buffer| (passed as void*): bytes
 * [offset_bytes, offset_bytes + range_bytes) of it hold a tensor of |type|
 * (host representation, see the top of this file).  The wrapper works
 * wherever a vkhlo buffer does (arguments, results of execute_into /
 * submit / record, vkhlo_buffer_read); the executor binds the caller's
 * buffer at that offset in its descriptor sets, and results placed there
 * by buffer assignment are written by their last dispatch in place (see
 * vkhlo_executable_stats' copy_commands / result_copies: a result that is
 * an argument, a constant, or a value returned twice is still copied in,
 * inside the same submission).  The VkBuffer must have been created with
 * VK_BUFFER_USAGE_STORAGE_BUFFER_BIT (and TRANSFER_SRC / TRANSFER_DST for
 * vkhlo_buffer_read and result copy-outs; on CPU devices also TRANSFER_SRC
 * for an argument that a kernel reads through a texel view, which then
 * reads a copy made in the same submission, vkhlo not knowing whether the
 * buffer allows texel views), be bound to memory, and outlive
 * the wrapper and every submission using it; vkhlo_buffer_destroy destroys
 * the wrapper only, never the VkBuffer or its memory.  Host access
 * (vkhlo_buffer_read) goes through a staging copy on the context's queue.
 * Errors: INVALID_ARGUMENT when |vk_buffer| is NULL, |offset_bytes| is not
 * a multiple of the device's minStorageBufferOffsetAlignment, or
 * |range_bytes| is smaller than vkhlo_tensor_type_size_bytes(type) rounded
 * up to a multiple of 4 (at least 4): kernels access whole 32-bit words,
 * so the bytes up to the next multiple of 4 may be rewritten (with their
 * own values for packed 8/16-bit types; nothing past them is touched). */
vkhlo_status_t vkhlo_buffer_wrap(vkhlo_context_t *context, const vkhlo_tensor_type_t *type, void *vk_buffer,
                                 uint64_t offset_bytes, uint64_t range_bytes, vkhlo_buffer_t **out_buffer);
/* The device's minStorageBufferOffsetAlignment (what vkhlo_buffer_wrap's
 * offsets must be multiples of; at least 4). */
uint64_t vkhlo_context_buffer_offset_alignment(const vkhlo_context_t *context);

/* Semaphores and fence of one vkhlo_executable_submit.  Handles are the
 * caller's VkSemaphore / VkFence, passed as void*; vkhlo never destroys
 * them. */
typedef struct vkhlo_submit_info {
  uint32_t wait_semaphore_count;
  void *const *wait_semaphores;     /* VkSemaphore[wait_semaphore_count] */
  /* VkPipelineStageFlags per wait: where vkhlo's work waits.  vkhlo runs
   * compute dispatches and transfer copies: pass
   * VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT
   * (or ALL_COMMANDS) so that both wait. */
  const uint32_t *wait_stage_masks;
  /* Timeline values, one per wait semaphore (ignored for binary ones), or
   * NULL when all are binary. */
  const uint64_t *wait_values;
  uint32_t signal_semaphore_count;
  void *const *signal_semaphores;   /* VkSemaphore[signal_semaphore_count] */
  const uint64_t *signal_values;    /* as wait_values */
  /* Signalled once this submission (and all work submitted to the queue
   * before it) has completed; VK_NULL_HANDLE (NULL) for none.  Unsignalled
   * on entry. */
  void *fence;
} vkhlo_submit_info_t;

/* Submits one execution to the context's queue and returns without
 * waiting: the work waits on |info|'s wait semaphores, then signals its
 * signal semaphores and fence when done (reads of the results after a
 * wait on those see them).  |info| may be NULL (no semaphores, no fence).
 * Buffers as in vkhlo_executable_execute_into; arguments and results (and
 * the VkBuffers they wrap) must stay alive and unmodified by others until
 * the submission has completed.  A straight-line program's command buffer
 * is recorded once and resubmitted while the buffers are the same.  One
 * submission per executable is in flight: a second submit (or execute,
 * execute_into, destroy) of the same executable first waits on the host
 * for the previous one's own fence — make sure its wait semaphores will be
 * signalled, or use one executable per frame in flight.  (A command buffer
 * from vkhlo_executable_record submitted later to the same queue is
 * ordered after it by its leading barrier.)  Checks
 * (check.expect_*) are not evaluated.  The recording starts with a memory
 * barrier from compute/transfer writes to compute/transfer accesses (it
 * orders vkhlo's work after earlier compute/transfer work on the queue)
 * and ends with one making the results visible to the host.
 * Threading: as the context; the caller's queue must not be used from
 * another thread during the call.
 * Errors: INVALID_ARGUMENT as execute_into, or for a semaphore count with
 * a NULL array or stage mask 0; UNIMPLEMENTED for programs that need host
 * decisions or host work (a while loop whose trip count the program does
 * not fix, if/case: the predicate is read on the host;
 * infeed/outfeed/send/recv: host callbacks), for one that records more
 * than 65536 commands with its counted loops unrolled, and while profiling
 * is on; UNAVAILABLE on device loss. */
vkhlo_status_t vkhlo_executable_submit(vkhlo_executable_t *executable, int arg_count,
                                       vkhlo_buffer_t *const *args, int result_count,
                                       vkhlo_buffer_t *const *results, const vkhlo_submit_info_t *info);
/* Waits on the host until the executable's last submission (submit or
 * execute) has completed; returns at once when none is in flight.
 * Errors: UNAVAILABLE on device loss. */
vkhlo_status_t vkhlo_executable_wait(vkhlo_executable_t *executable);

/* Records one execution into the caller's VkCommandBuffer (as void*), which
 * must be in the recording state, outside a render pass, from a queue
 * family with compute (the context's family); vkhlo does not begin, end,
 * submit or free it.  Straight-line programs only (errors as submit).
 * What vkhlo records: first a memory barrier COMPUTE_SHADER|TRANSFER
 * (SHADER_WRITE|TRANSFER_WRITE) -> COMPUTE_SHADER|TRANSFER
 * (SHADER_READ|SHADER_WRITE|TRANSFER_READ|TRANSFER_WRITE), then
 * vkCmdBindPipeline / vkCmdBindDescriptorSets / vkCmdPushConstants /
 * vkCmdDispatch and vkCmdCopyBuffer with barriers between dependent steps;
 * it leaves compute pipeline and descriptor-set bindings changed.
 * What the caller must record:
 *   before: when the arguments (or the result buffers, which vkhlo
 *   overwrites) were last accessed by stages other than compute and
 *   transfer (e.g. vertex input, fragment shader, host writes without a
 *   submission in between), a barrier from those stages to
 *   VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT
 *   with dstAccessMask SHADER_READ | SHADER_WRITE | TRANSFER_READ |
 *   TRANSFER_WRITE (compute and transfer writes are covered by vkhlo's
 *   leading barrier);
 *   after: before reading the results, a barrier from
 *   COMPUTE_SHADER | TRANSFER (SHADER_WRITE | TRANSFER_WRITE) to the
 *   consuming stages and accesses (HOST / HOST_READ for a readback after
 *   a fence; the recording has no host barrier).
 * The descriptor sets the recording uses belong to the executable and stay
 * valid until its next vkhlo_executable_record or its destroy: the command
 * buffer must have completed execution by then (and before the buffers it
 * uses are destroyed); one executable per frame in flight pipelines deeper.
 * Checks are not evaluated.  Threading: as the context.
 * Errors: as submit; INVALID_ARGUMENT for a NULL command buffer. */
vkhlo_status_t vkhlo_executable_record(vkhlo_executable_t *executable, void *command_buffer, int arg_count,
                                       vkhlo_buffer_t *const *args, int result_count,
                                       vkhlo_buffer_t *const *results);

/* ----------------------------------------------------------- profiling */

/* Device time per kernel, summed over the executions since profiling was
 * turned on. */
typedef struct vkhlo_kernel_profile {
  const char *kernel;   /* the kernel's name (owned by the executable) */
  int64_t dispatches;   /* how many times it ran */
  double device_ms;     /* their device time in total, milliseconds */
} vkhlo_kernel_profile_t;

/* Turns per-dispatch timing on (clearing the totals) or off.  While on,
 * each execution is recorded afresh (no replay) with a barrier and a
 * device timestamp before and after every dispatch, so dispatches do not
 * overlap and the program runs a little slower.  An execution on a device
 * whose compute queue has no timestamps fails with UNIMPLEMENTED. */
void vkhlo_executable_set_profiling(vkhlo_executable_t *executable, bool on);
/* Writes min(kernel count, |capacity|) entries, in kernel order, to |out|
 * and returns the kernel count. */
int vkhlo_executable_profile(const vkhlo_executable_t *executable, vkhlo_kernel_profile_t *out, int capacity);

/* The kernels of a compiled executable that have a choice of
 * configurations (vkhlo_compile_options_t's tune), one entry per key. */
typedef struct vkhlo_kernel_tuning {
  /* The library kernel, its variant and the shape, as the tuning file
   * names it, e.g. "gemm_cpu sg b=1 m=2607 n=256 k=1024 ndot=1 w=110"
   * (owned by the executable). */
  const char *key;
  int kernels; /* kernels of the executable with this key */
  /* The configuration taken (GEMM: rows x columns per invocation;
   * convolution: pixels x output features per invocation), and whether
   * it is a tuned choice (the tuning file's; the context's own when the
   * cache is off) rather than the default. */
  int a, b;
  bool tuned;
  /* Filled when this compile tuned the key: the candidates timed
   * (the default included) and the least device time per dispatch, in
   * microseconds, of the default and of the configuration taken. */
  int candidates_timed;
  double default_us, chosen_us;
} vkhlo_kernel_tuning_t;
/* Writes min(entry count, |capacity|) entries to |out| and returns the
 * entry count (0 for a loaded executable). */
int vkhlo_executable_tuning(const vkhlo_executable_t *executable, vkhlo_kernel_tuning_t *out, int capacity);

/* ------------------------------------------------------ custom calls */

/* A user kernel for `stablehlo.custom_call @TARGET(...)` (StableHLO spec,
 * "custom_call").  Give either GLSL 450 compute-shader source (compiled by
 * vkhlo, validated by spirv-val) or a SPIR-V module (validated too), with
 * entry point "main".  Interface the shader must declare:
 *   set 0, bindings 0..n-1: the call's operands, in order, then one binding
 *   per result; std430 storage buffers holding dense row-major tensors in
 *   host representation (see the top of this file);
 *   push constant block { uint element_count; }: the element count of
 *   result 0 (0 when the call has no results).
 * vkhlo dispatches ceil(element_count / local_size_x) workgroups along x
 * (one when element_count is 0); the shader must ignore invocations with
 * gl_GlobalInvocationID.x >= element_count.  Calls run in program order
 * with the barriers their bindings need. */
typedef struct vkhlo_custom_call_kernel {
  const char *target_name;    /* required, e.g. "my.gelu" */
  const char *glsl;           /* NUL-terminated source, or NULL */
  const uint32_t *spirv;      /* or SPIR-V words, */
  size_t spirv_size_bytes;    /* a multiple of 4 */
  uint32_t local_size_x;      /* the shader's local_size_x; 0 means 64 */
} vkhlo_custom_call_kernel_t;

/* Registers |kernel| for programs compiled on |context| afterwards.  The
 * strings and words are copied.  Registering a name again replaces it.
 * Errors: INVALID_ARGUMENT (no name, neither or both of glsl/spirv, size
 * not a multiple of 4); INTERNAL when the GLSL does not compile or the
 * module fails spirv-val (checked here, not at first use).  Library vkhlo
 * only: kernels matter to compilation, which copies them into the
 * executable; vkhlo_runtime runs executables that hold them already. */
vkhlo_status_t vkhlo_context_register_custom_call(vkhlo_context_t *context,
                                                  const vkhlo_custom_call_kernel_t *kernel);

/* ------------------------------------------------------ host callbacks */

/* One infeed, outfeed, send or recv reaching the host (StableHLO spec,
 * "infeed", "outfeed", "send", "recv").  For outfeed and send, |data[i]|
 * holds operand i (read it); for infeed and recv, fill |data[i]| with
 * result i.  Tokens are not included.  Tensors are in host representation;
 * |data[i]| has vkhlo_tensor_type_size_bytes(&types[i]) bytes. */
typedef struct vkhlo_host_call {
  const char *op;         /* "infeed", "outfeed", "send", "recv" */
  int64_t channel_id;     /* send/recv: channel_handle's handle; else 0 */
  const char *config;     /* infeed_config / outfeed_config, or "" */
  int tensor_count;
  const vkhlo_tensor_type_t *types;
  void *const *data;
} vkhlo_host_call_t;

/* Returning a non-NULL status aborts the execution with that status. */
typedef vkhlo_status_t (*vkhlo_host_callback_fn)(void *user, const vkhlo_host_call_t *call);

/* Sets the callback for infeed/outfeed/send/recv of executions on
 * |context| (NULL removes it; such ops then fail with UNIMPLEMENTED at
 * execution).  The callback runs on the executing thread, between device
 * submissions: work before the op has finished, work after it has not
 * started. */
void vkhlo_context_set_host_callback(vkhlo_context_t *context, vkhlo_host_callback_fn fn,
                                     void *user);

/* ---------------------------------------------------------- checks */

/* Checks (check.expect_* in the program), evaluated by the last execute;
 * interpreter.print counts as a check of kind "print" that always passes,
 * its detail the printed value (vkhlo_tensor_format's text, the first 64
 * elements, cut at 255 characters with "..."). */
typedef struct vkhlo_check_result {
  const char *kind;     /* "expect_eq", "expect_almost_eq", "expect_close", "print" */
  const char *location; /* "file:line:col" of the check */
  bool executed;        /* false until an execution reached it */
  bool passed;
  int64_t mismatches;   /* elements outside tolerance */
  double max_abs_error; /* largest |actual - expected| */
  double max_rel_error; /* largest |actual - expected| / |expected| */
  char detail[256];     /* first mismatch, e.g. "at [3,1]: got 2.5, expected 2.25" */
} vkhlo_check_result_t;

int vkhlo_executable_check_count(const vkhlo_executable_t *executable);
/* Result of check |index| of the last execution. */
vkhlo_status_t vkhlo_executable_check_result(const vkhlo_executable_t *executable, int index,
                                             vkhlo_check_result_t *out);

#ifdef __cplusplus
}
#endif
#endif
