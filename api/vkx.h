/*
 * Compiled executables as files (.vkx): the format, and the two halves that
 * read and write it.  The writer (api/vkx_write.c) needs a compiled
 * executable; the reader (api/vkx_load.c) needs only this header, the
 * executor and vk_runtime, so a runtime-only library can load .vkx files
 * without the parser, the passes or glslang.
 *
 * The format.  Every integer is little-endian; "str" is a u32 byte count
 * followed by that many bytes (no NUL); "type" is a tensor type: u32
 * element_type (vkhlo_element_type_t), u32 rank (<= VKHLO_MAX_RANK), rank
 * i64 dimensions.  Buffer ids, kernel ids and allocation ids index the
 * BUFS, KERN and ALOC tables (XLA's logical buffers, kernels and
 * BufferAllocations, api/internal.h).
 *
 *   header, 48 bytes:
 *     0  "VKHLOVKX"        magic
 *     8  u32 version       VKX_VERSION; readers reject others
 *    12  u32 flags         bit 0: constants live in a side file (--weights)
 *    16  u64 file_size     bytes of the whole file
 *    24  u64 checksum      vkx_checksum of bytes [48, file_size)
 *    32  u32 section_count VKX_SECTION_COUNT
 *    36  u32, u64          zero
 *   then the sections, in the order below, each
 *     u32 tag (4 ASCII bytes as a little-endian word), u32 zero,
 *     u64 payload_size, the payload, zero padding to a multiple of 8:
 *   REQS  what the code needs of the device: u32 features (VKX_FEATURE_*,
 *         the union over the SPIR-V modules' capabilities and float-control
 *         modes), u32 subgroup_size the kernels were generated for (binding
 *         only when a module uses subgroup operations), u32 local_size[3]
 *         (the largest workgroup size per axis), u32 max_invocations (of one
 *         workgroup), u32 max_group_count[3], u32 max_bindings (of one
 *         kernel), u32 push_constant_bytes, u32 zero, u64 alignment (of every
 *         slice offset: the buffer plan assumes the device's
 *         minStorageBufferOffsetAlignment divides it), u64
 *         max_allocation_bytes (the largest allocation), u64
 *         max_binding_bytes (the largest slice bound to a kernel)
 *   STAT  8 x i64: vkhlo_executable_stats_t's instructions, fused_clusters,
 *         kernels, dispatches, bytes_moved, peak_intermediate_bytes,
 *         liveness_lower_bound_bytes, barriers (as at compile time)
 *   SIGN  u32 parameter_count, u32 result_count, the parameter types, the
 *         result types, i32 result_buffers[result_count]
 *   BUFS  u32 count; per logical buffer: u32 kind, i32 parameter_number,
 *         u64 size_bytes, i32 def_position, i32 last_use_position,
 *         i32 inplace_of, i32 allocation, u64 offset_bytes, str name
 *   ALOC  u32 count; per allocation: u32 kind, u32 flags (bit 0
 *         is_entry_computation_parameter, bit 1 maybe_live_out),
 *         i32 parameter_number, i32 result_number, u64 size,
 *         u64 constant_data_offset
 *   KERN  u32 count; per kernel: str name, u32 binding_count,
 *         u32 group_count[3], u32 flags (bit 0 has_push_constant),
 *         u32 push_constant, u64 texel_views, u64 scalar_views (bit i:
 *         binding i is also bound as a uniform texel buffer of RGBA32UI,
 *         R32UI texels, exe_kernel_t), i32 spirv_of: -1 and then u64
 *         spirv_size_bytes and the SPIR-V words, or the index of an
 *         earlier kernel (one with words of its own) whose module this
 *         kernel runs, and nothing more (a model's layers are the same
 *         kernels over other buffers: each module is stored once)
 *   PROG  u32 position_count, u32 flags (bit 0 straight_line), the main
 *         sequence.  A sequence is u32 count and that many thunks; a thunk
 *         is u32 kind (exe_thunk_kind_t), i32 position, then
 *           dispatch:    i32 kernel, u32 binding_count, u32 input_count,
 *                        u32 is_scatter, i32 bindings[binding_count]
 *           copy:        i32 src, i32 dst, u64 size_bytes, u64 src_stride
 *                        (bytes into src per iteration of the counted
 *                        loop whose body holds the copy; 0: none)
 *           while:       i32 pred_buffer, i64 trip_count (-1: read the
 *                        predicate back), u32 rotate_count, i32
 *                        rotate[2 rotate_count] (state and value buffers
 *                        trading storage), i32 gate_kernel, i32
 *                        copy_kernel (-1 both: iterations not batched),
 *                        cond sequence, body sequence
 *           conditional: i32 selector_buffer, u32 selector_is_pred,
 *                        u32 branch_count, the branch sequences
 *           host:        str op (infeed|outfeed|send|recv), i64 channel_id,
 *                        str config, u32 binding_count, u32 input_count,
 *                        i32 bindings[], one type per binding
 *         (sequences nest at most VKX_MAX_DEPTH deep)
 *   CHCK  u32 count; per check: u32 kind (hlo_check_kind_t), str location
 *         (< 256 bytes), i32 actual, i32 expected, type, f64 tolerance,
 *         i64 max_ulp_difference, u32 f64_demoted
 *   CNST  u64 constant_size_bytes, u32 count, u32 zero, str weights_name
 *         (the side file's name, "" when embedded), u64 weights_size,
 *         u64 weights_checksum (vkx_checksum of the whole side file);
 *         per constant allocation: u32 allocation, u32 zero, u64 offset,
 *         u64 size (== the allocation's size): its bytes at |offset| of the
 *         DATA payload, or of the side file
 *   DATA  the embedded constant bytes (empty with a side file), each
 *         allocation's bytes starting at a multiple of 64
 *
 * Reading is two steps.  vkx_parse checks the whole file — checksum, every
 * offset and count against the bytes that remain, every enum, every
 * cross reference (buffer, kernel and allocation ids, binding counts
 * against the kernel's, slices inside their allocations, in-place chains
 * without cycles, result and check buffers, nesting depth, constant ranges
 * inside DATA or the side file's recorded size) — and builds an
 * executable with no device objects; nothing Vulkan happens before it
 * succeeds, and a malformed file gives INVALID_ARGUMENT naming the byte
 * offset.  vkx_check_device compares the REQS with the context's device
 * (UNIMPLEMENTED naming the missing feature or limit), and the loader then
 * creates pipelines (through the device's pipeline cache), allocations and
 * uploads the constants.  The SPIR-V is handed to the driver as stored:
 * the checksum guards against corruption, not against a hostile file
 * (drivers trust SPIR-V; vkhlo validated it with spirv-val when it
 * compiled it).
 */
#ifndef VKHLO_API_VKX_H
#define VKHLO_API_VKX_H

#include "api/internal.h"

#define VKX_MAGIC "VKHLOVKX"
#define VKX_VERSION 6u /* 3: while loops carry their trip count; 4: and their gate kernels; 5: copies their
                           destination offset; 6: kernels of one module store it once */
#define VKX_HEADER_BYTES 48u
#define VKX_SECTION_COUNT 10u
#define VKX_MAX_DEPTH 32
#define VKX_DATA_ALIGNMENT 64u
#define VKX_FLAG_SIDE_WEIGHTS 1u

/* What the SPIR-V needs of the device (REQS features). */
enum {
  VKX_FEATURE_INT64 = 1u << 0,
  VKX_FEATURE_FLOAT64 = 1u << 1,
  VKX_FEATURE_INT16 = 1u << 2,
  VKX_FEATURE_INT8 = 1u << 3,
  VKX_FEATURE_FLOAT16 = 1u << 4,
  VKX_FEATURE_STORAGE_8BIT = 1u << 5,
  VKX_FEATURE_STORAGE_16BIT = 1u << 6,
  VKX_FEATURE_SUBGROUP_BASIC = 1u << 7,
  VKX_FEATURE_SUBGROUP_SHUFFLE = 1u << 8,
  VKX_FEATURE_SUBGROUP_ARITHMETIC = 1u << 9,
  VKX_FEATURE_PRESERVE_FLOAT16 = 1u << 10, /* SignedZeroInfNanPreserve 16 */
  VKX_FEATURE_PRESERVE_FLOAT32 = 1u << 11,
  VKX_FEATURE_PRESERVE_FLOAT64 = 1u << 12,
};
/* The Vulkan name of feature bit |bit| ("shaderInt64", ...). */
const char *vkx_feature_name(uint32_t bit);

typedef struct vkx_requirements {
  uint32_t features;
  uint32_t subgroup_size;
  uint32_t local_size[3];
  uint32_t max_invocations;
  uint32_t max_group_count[3];
  uint32_t max_bindings;
  uint32_t push_constant_bytes;
  uint64_t alignment;
  uint64_t max_allocation_bytes;
  uint64_t max_binding_bytes;
} vkx_requirements_t;

/* Adds what one SPIR-V module needs (capabilities, float-control modes,
 * LocalSize) to |req|.  Errors: INVALID_ARGUMENT when the words are not a
 * SPIR-V module (bad magic, an instruction running past the end). */
vkhlo_status_t vkx_scan_spirv(const uint32_t *words, size_t size_bytes, vkx_requirements_t *req);

/* The checksum: 4 lanes of 64-bit multiply-rotate rounds over 8-byte
 * little-endian words (xxHash64's round), the tail bytes mixed in one by
 * one, then the lanes and length folded and avalanched.  Any change of one
 * 8-byte word changes the sum (each round is a bijection of the word).
 * Runs at memory speed, so a 36 MB weights file costs a few ms. */
uint64_t vkx_checksum(const void *data, size_t size_bytes);

/* A parsed file: an executable without device objects, and where its
 * constants are. */
typedef struct vkx_constant {
  int allocation;
  uint64_t offset, size; /* in DATA's payload, or in the side file */
} vkx_constant_t;

typedef struct vkx_parsed {
  const vkhlo_allocator_t *allocator; /* every allocation of the parse and of |exe| */
  vkhlo_executable_t *exe; /* context NULL, no pipelines/buffers/cmds */
  vkx_requirements_t requirements;
  bool side_weights;
  char *weights_name;       /* heap; "" when embedded */
  uint64_t weights_size, weights_checksum;
  const uint8_t *data;      /* DATA payload inside the parsed bytes */
  uint64_t data_size;
  int constant_count;
  vkx_constant_t *constants;
  /* Where each record starts in the file, for messages (heap): buffers,
   * allocations, kernels, checks, constants, thunks (pre-order), and
   * each section's payload. */
  size_t *buffer_at, *allocation_at, *kernel_at, *check_at, *constant_at, *thunk_at;
  int thunk_at_count, thunk_at_capacity;
  size_t section_at[VKX_SECTION_COUNT];
} vkx_parsed_t;

/* Parses and validates |size| bytes (see the essay above) into |*out|,
 * allocating through |allocator| (NULL = the C library)
 * (free with vkx_parsed_free; nothing to free on error).  |out->data|
 * points into |bytes|, which must outlive its use.  Errors:
 * INVALID_ARGUMENT "malformed .vkx file: at byte N: ..." (a bad magic,
 * version, checksum, a truncated field, a count past the end, an
 * out-of-range id or enum, a failed cross check). */
vkhlo_status_t vkx_parse(const vkhlo_allocator_t *allocator, const uint8_t *bytes, size_t size,
                         vkx_parsed_t *out);
void vkx_parsed_free(vkx_parsed_t *parsed);

/* UNIMPLEMENTED naming the first feature or limit of |req| that
 * |target|/|caps| (the context's device, restricted mode applied) lacks. */
vkhlo_status_t vkx_check_device(const vkx_requirements_t *req, const codegen_target_t *target,
                                const vkrt_caps_t *caps);

/* A growable byte string (heap). */
typedef struct vkx_bytes {
  uint8_t *data;
  size_t size, capacity;
} vkx_bytes_t;

#endif
