/*
 * Element types as GLSL sees them.
 *
 * Every HLO element type has two GLSL spellings: the *storage* type of a
 * buffer element (which must match the host representation byte for byte,
 * see hlo/element_types.def) and the *compute* type that values live in
 * while a kernel works on them.  Narrow types are computed in a wider type
 * and brought back to their own range after every operation ("normalized"):
 * i8/i16/i2/i4 are computed in int and sign-extended from their width,
 * ui8/ui16/ui2/ui4 in uint and masked, f16 and bf16 in float and rounded to
 * nearest even at their precision, i1 is a bool.
 *
 * Each type also names the device features and GLSL extensions it needs;
 * a kernel ORs the |features| of every type it touches and the driver
 * (emit.c) turns them into #extension lines and capability checks.
 *
 * This file only builds GLSL text; it never fails except through
 * glsl_type_check, which reports an unsupported type as UNIMPLEMENTED.
 */
#ifndef VKHLO_CODEGEN_GLSL_TYPES_H
#define VKHLO_CODEGEN_GLSL_TYPES_H

#include "codegen/target.h"
#include "hlo/hlo.h"
#include "support/strbuf.h"

/* Device features / GLSL extensions a kernel needs, and which blocks of the
 * helper prelude (glsl_prelude.c) it uses. */
enum {
  GLSL_FEATURE_INT64 = 1u << 0,     /* shaderInt64 + explicit_arithmetic_types_int64 */
  GLSL_FEATURE_FLOAT64 = 1u << 1,   /* shaderFloat64 */
  GLSL_FEATURE_STORAGE8 = 1u << 2,  /* storageBuffer8BitAccess */
  GLSL_FEATURE_STORAGE16 = 1u << 3, /* storageBuffer16BitAccess */
  /* helper blocks */
  GLSL_HELPERS_FLOAT = 1u << 8,
  GLSL_HELPERS_INT = 1u << 9,
  GLSL_HELPERS_UINT = 1u << 10,
  GLSL_HELPERS_INT64 = 1u << 11,
  GLSL_HELPERS_UINT64 = 1u << 12,
  GLSL_HELPERS_DOUBLE = 1u << 13,
  GLSL_HELPERS_COMPLEX = 1u << 14,
  GLSL_HELPERS_DCOMPLEX = 1u << 15,
  GLSL_HELPERS_INDEX = 1u << 16, /* index arithmetic (floor division) */
  /* f16 converted in integer code (codegen_target_t.f16_soft_conversions):
   * the prelude makes unpackHalf2x16/packHalf2x16 mean float.glsl's
   * vk_unpack_half2x16/vk_pack_half2x16 */
  GLSL_FEATURE_F16_SOFT = 1u << 17,
  /* words read from uniform texel buffers (shaders/texel_words.glsl,
   * codegen_declare_word_view) */
  GLSL_HELPERS_TEXEL = 1u << 18,
  /* subgroupShuffle (GL_KHR_shader_subgroup_shuffle; E->preamble's) */
  GLSL_FEATURE_SUBGROUP_SHUFFLE = 1u << 19,
  /* complex products' fma through double (float_basic.glsl's vk_fma, where
   * the device may split fma: CPU devices with shaderFloat64) */
  GLSL_FEATURE_FMA_DOUBLE = 1u << 20,
  /* emulation blocks (restricted devices; see "Emulated forms" below) */
  GLSL_HELPERS_EMU64 = 1u << 28,  /* i64_ / u64_ helpers on uvec2 */
  GLSL_HELPERS_PACKED = 1u << 29, /* VK_LOAD_* / VK_STORE_* on packed words */
  GLSL_HELPERS_F64SOFT = 1u << 30, /* vk_f64_to_f32 / vk_f32_to_f64 (demoted f64) */
};

typedef struct glsl_type {
  const char *compute; /* "float", "int", "bool", "vec2", ... */
  const char *storage; /* "float", "uint8_t", "uint16_t", ... */
  int bits;            /* logical width (what normalization wraps/rounds to) */
  char kind;           /* 'P' pred, 'S' signed, 'U' unsigned, 'F' float, 'C' complex */
  unsigned features;   /* GLSL_FEATURE_* and GLSL_HELPERS_* */
} glsl_type_t;

/* Fills |out| for an implemented element type; false otherwise. */
bool glsl_type_lookup(hlo_element_type_t t, glsl_type_t *out);

/* UNIMPLEMENTED "file:line:col: unsupported element type <t>[ on this
 * device (needs <feature>)]" unless |t| can run on |target|. */
vkhlo_status_t glsl_type_check(const codegen_target_t *target, hlo_element_type_t t,
                               hlo_location_t loc);

const char *glsl_compute_type(hlo_element_type_t t);
const char *glsl_storage_type(hlo_element_type_t t);

/* True when values of |t| must be normalized after arithmetic. */
bool glsl_type_needs_normalize(hlo_element_type_t t);

/* For the small float types (f8*, f6*, f4*, stored as raw bits in a byte
 * and computed as float): true, and writes the prelude's format arguments
 * "E, M, bias, style" of vk_small_decode/encode/round into |buf| (when
 * |buf| is non-NULL).  False for every other type. */
bool glsl_small_float_args(hlo_element_type_t t, char *buf, size_t size);

/* Appends the compute-type value of storage element |storage_expr|. */
void glsl_append_load(strbuf_t *sb, hlo_element_type_t t, const char *storage_expr);
/* Appends the storage-type value of compute value |value|. */
void glsl_append_store(strbuf_t *sb, hlo_element_type_t t, const char *value);
/* Appends |expr| normalized to |t| (just |expr| for types that need none). */
void glsl_append_normalized(strbuf_t *sb, hlo_element_type_t t, const char *expr);
/* Appends a GLSL compute-type constant equal to the host element at |bytes|
 * (exact: floats are written through their bit patterns). */
void glsl_append_literal(strbuf_t *sb, hlo_element_type_t t, const void *bytes);
/* Appends the compute-type constant for small integer |v| (0, 1, -1 ...). */
void glsl_append_int_constant(strbuf_t *sb, hlo_element_type_t t, long long v);

/* Appends the helper prelude that |features| selects: the .glsl files of
 * shaders/ listed in glsl_prelude.c's table (see glsl_prelude.h).  A file
 * missing from the embedded set (a build error) marks |sb| failed. */
void glsl_append_prelude(strbuf_t *sb, unsigned features);

/* ---- Emulated forms: the same types on a device that lacks a feature.
 * The host representation (and so every buffer) never changes; only the
 * GLSL spelling does:
 *   i64/ui64 without shaderInt64: compute and storage type uvec2 (low word,
 *     high word: the host's little-endian layout), two's complement; every
 *     operation goes through the i64_/u64_ helpers (GLSL_HELPERS_EMU64).
 *   1-byte (i1, i2..i8, ui2..ui8) and 2-byte (i16, ui16, f16, bf16) types
 *     without 8/16-bit storage: the buffer is `uint data[]` and elements
 *     are extracted from their 32-bit word; a store clears and sets its own
 *     bits with atomicAnd/atomicOr, so invocations writing neighbouring
 *     elements of one word never race, whatever the kernel's write pattern
 *     (GLSL_HELPERS_PACKED).  Such result buffers cannot be writeonly.
 *   f64 without shaderFloat64 and with target->demote_f64: compute type
 *     float, storage uvec2 (the double's bits), converted in software on
 *     load and store (GLSL_HELPERS_F64SOFT); values lose precision.
 * The *_on functions below give the form for |target|; the target-free
 * functions above give the native form. */
bool glsl_type_lookup_on(const codegen_target_t *target, hlo_element_type_t t, glsl_type_t *out);
/* True when |t| is i64/ui64 emulated as uvec2 on |target|. */
bool glsl_type_is_emulated64(const codegen_target_t *target, hlo_element_type_t t);
/* True when |t| is stored packed in 32-bit words on |target|. */
bool glsl_type_is_packed(const codegen_target_t *target, hlo_element_type_t t);
/* True when f64 (and c128) are computed as f32 (c64) on |target|. */
bool glsl_type_is_demoted(const codegen_target_t *target, hlo_element_type_t t);
const char *glsl_compute_type_on(const codegen_target_t *target, hlo_element_type_t t);
/* The element type of a buffer's `data[]` for tensors of |t|. */
const char *glsl_buffer_type_on(const codegen_target_t *target, hlo_element_type_t t);
/* Appends the compute value of element |index| (an int expression) of
 * buffer block |buffer| ("in0", "out1"). */
void glsl_append_load_element(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                              const char *buffer, const char *index);
/* Appends the statement (with its ';') storing compute value |value| into
 * element |index| of buffer block |buffer|.  Every kernel stores through
 * this, so packed stores are race-free everywhere. */
void glsl_append_store_element(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                               const char *buffer, const char *index, const char *value);
void glsl_append_literal_on(strbuf_t *sb, const codegen_target_t *target, hlo_element_type_t t,
                            const void *bytes);
void glsl_append_int_constant_on(strbuf_t *sb, const codegen_target_t *target,
                                 hlo_element_type_t t, long long v);

#endif
