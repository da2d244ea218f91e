/*
 * Loading .vkx files (the format: api/vkx.h).  Step 1, vkx_parse: bytes ->
 * an executable without device objects, every field range-checked and
 * every cross reference validated, so that the executor can trust it.
 * Step 2, vkhlo_executable_load: device requirements, then pipelines
 * (through the device's VkPipelineCache), allocations, constant uploads and
 * command buffers — what stage_device_objects does after a compile.
 *
 * The parser reads through a cursor with a sticky error: after the first
 * failure every read returns 0 and the error (with its byte offset) is
 * what the parse returns.  Counts are checked against the bytes left
 * before anything is allocated for them, so a hostile count cannot make
 * the parser allocate more than a small multiple of the file size.
 */
#define _POSIX_C_SOURCE 200809L
#include "api/vkx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ checksum */

static const uint64_t P1 = 0x9E3779B185EBCA87ull, P2 = 0xC2B2AE3D27D4EB4Full, P3 = 0x165667B19E3779F9ull,
                      P4 = 0x85EBCA77C2B2AE63ull, P5 = 0x27D4EB2F165667C5ull;

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static uint64_t le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint64_t round64(uint64_t acc, uint64_t w) { return rotl(acc + w * P2, 31) * P1; }

uint64_t vkx_checksum(const void *data, size_t n) {
  const uint8_t *p = data;
  uint64_t a = P1 + P2, b = P2, c = 0, d = (uint64_t)0 - P1;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w0, w1, w2, w3;
    memcpy(&w0, p + i, 8); /* little-endian hosts; others take le64 below */
    memcpy(&w1, p + i + 8, 8);
    memcpy(&w2, p + i + 16, 8);
    memcpy(&w3, p + i + 24, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w0 = le64(p + i), w1 = le64(p + i + 8), w2 = le64(p + i + 16), w3 = le64(p + i + 24);
#endif
    a = round64(a, w0), b = round64(b, w1), c = round64(c, w2), d = round64(d, w3);
  }
  uint64_t h = rotl(a, 1) + rotl(b, 7) + rotl(c, 12) + rotl(d, 18) + (uint64_t)n;
  for (; i + 8 <= n; i += 8) h = rotl(h ^ round64(0, le64(p + i)), 27) * P1 + P4;
  for (; i < n; i++) h = rotl(h ^ (p[i] * P5), 11) * P1;
  h ^= h >> 33, h *= P2, h ^= h >> 29, h *= P3, h ^= h >> 32;
  return h;
}

/* ---------------------------------------------------------- requirements */

static const char *const feature_names[] = {
    "shaderInt64", "shaderFloat64", "shaderInt16", "shaderInt8", "shaderFloat16",
    "storageBuffer8BitAccess", "storageBuffer16BitAccess", "subgroup operations in compute shaders",
    "subgroupShuffle in compute shaders", "subgroup arithmetic in compute shaders",
    "shaderSignedZeroInfNanPreserveFloat16", "shaderSignedZeroInfNanPreserveFloat32",
    "shaderSignedZeroInfNanPreserveFloat64",
};

const char *vkx_feature_name(uint32_t bit) {
  for (unsigned i = 0; i < sizeof feature_names / sizeof *feature_names; i++)
    if (bit == 1u << i) return feature_names[i];
  return "unknown feature";
}

vkhlo_status_t vkx_scan_spirv(const uint32_t *w, size_t size_bytes, vkx_requirements_t *req) {
  if (size_bytes < 20 || size_bytes % 4 || w[0] != 0x07230203u)
    return VKHLO_INVALID("not a SPIR-V module (%zu bytes)", size_bytes);
  size_t n = size_bytes / 4;
  for (size_t i = 5; i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffffu;
    if (count == 0 || count > n - i) return VKHLO_INVALID("SPIR-V instruction at word %zu runs past the end", i);
    if (op == 17 && count >= 2) { /* OpCapability */
      switch (w[i + 1]) {
        case 9: req->features |= VKX_FEATURE_FLOAT16; break;
        case 10: req->features |= VKX_FEATURE_FLOAT64; break;
        case 11: req->features |= VKX_FEATURE_INT64; break;
        case 22: req->features |= VKX_FEATURE_INT16; break;
        case 39: req->features |= VKX_FEATURE_INT8; break;
        case 4433: req->features |= VKX_FEATURE_STORAGE_16BIT; break;
        case 4448: req->features |= VKX_FEATURE_STORAGE_8BIT; break;
        case 61: case 62: case 64: req->features |= VKX_FEATURE_SUBGROUP_BASIC; break;
        case 63: req->features |= VKX_FEATURE_SUBGROUP_BASIC | VKX_FEATURE_SUBGROUP_ARITHMETIC; break;
        case 65: case 66: req->features |= VKX_FEATURE_SUBGROUP_BASIC | VKX_FEATURE_SUBGROUP_SHUFFLE; break;
        default: break;
      }
    } else if (op == 16 && count >= 3) { /* OpExecutionMode */
      uint32_t mode = w[i + 2];
      if (mode == 17 && count >= 6) /* LocalSize x y z */
        for (int k = 0; k < 3; k++)
          if (w[i + 3 + k] > req->local_size[k]) req->local_size[k] = w[i + 3 + k];
      if (mode == 17 && count >= 6) {
        uint64_t inv = (uint64_t)w[i + 3] * w[i + 4] * w[i + 5];
        if (inv > req->max_invocations) req->max_invocations = inv > UINT32_MAX ? UINT32_MAX : (uint32_t)inv;
      }
      if (mode == 4461 && count >= 4) { /* SignedZeroInfNanPreserve width */
        if (w[i + 3] == 16) req->features |= VKX_FEATURE_PRESERVE_FLOAT16;
        if (w[i + 3] == 32) req->features |= VKX_FEATURE_PRESERVE_FLOAT32;
        if (w[i + 3] == 64) req->features |= VKX_FEATURE_PRESERVE_FLOAT64;
      }
    }
    i += count;
  }
  return NULL;
}

/* The interface a module declares: the highest Binding decoration (-1:
 * none), whether any DescriptorSet is not 0, whether it has a
 * PushConstant variable.  |w| was checked by vkx_scan_spirv. */
static void spirv_interface(const uint32_t *w, size_t size_bytes, int64_t *max_binding, bool *other_set,
                            bool *push_constant) {
  *max_binding = -1;
  *other_set = *push_constant = false;
  size_t n = size_bytes / 4;
  for (size_t i = 5; i < n;) {
    uint32_t count = w[i] >> 16, op = w[i] & 0xffffu;
    if (count == 0 || count > n - i) return;
    if (op == 71 && count >= 4 && w[i + 2] == 33 && (int64_t)w[i + 3] > *max_binding) *max_binding = w[i + 3];
    if (op == 71 && count >= 4 && w[i + 2] == 34 && w[i + 3] != 0) *other_set = true;
    if (op == 59 && count >= 4 && w[i + 3] == 9) *push_constant = true;
    i += count;
  }
}

vkhlo_status_t vkx_check_device(const vkx_requirements_t *req, const codegen_target_t *t, const vkrt_caps_t *caps) {
  uint32_t have = (t->shader_int64 ? VKX_FEATURE_INT64 : 0) | (t->shader_float64 ? VKX_FEATURE_FLOAT64 : 0) |
                  (t->shader_int16 ? VKX_FEATURE_INT16 : 0) | (t->shader_int8 ? VKX_FEATURE_INT8 : 0) |
                  (t->shader_float16 ? VKX_FEATURE_FLOAT16 : 0) |
                  (t->storage_buffer_8bit ? VKX_FEATURE_STORAGE_8BIT : 0) |
                  (t->storage_buffer_16bit ? VKX_FEATURE_STORAGE_16BIT : 0) |
                  (t->subgroup_shuffle || caps->subgroup_arithmetic ? VKX_FEATURE_SUBGROUP_BASIC : 0) |
                  (t->subgroup_shuffle ? VKX_FEATURE_SUBGROUP_SHUFFLE : 0) |
                  (caps->subgroup_arithmetic ? VKX_FEATURE_SUBGROUP_ARITHMETIC : 0) |
                  (t->signed_zero_inf_nan_preserve_float16 ? VKX_FEATURE_PRESERVE_FLOAT16 : 0) |
                  (t->signed_zero_inf_nan_preserve_float32 ? VKX_FEATURE_PRESERVE_FLOAT32 : 0) |
                  (t->signed_zero_inf_nan_preserve_float64 ? VKX_FEATURE_PRESERVE_FLOAT64 : 0);
  uint32_t missing = req->features & ~have;
  if (missing)
    return VKHLO_UNIMPLEMENTED("the executable needs %s, which this device lacks%s",
                               vkx_feature_name(missing & (~missing + 1)),
                               (missing & (missing - 1)) ? " (and more)" : "");
  if ((req->features & VKX_FEATURE_SUBGROUP_BASIC) && req->subgroup_size != t->subgroup_size)
    return VKHLO_UNIMPLEMENTED("the executable's kernels assume subgroup size %u; this device's is %u",
                               req->subgroup_size, t->subgroup_size);
  for (int k = 0; k < 3; k++) {
    if (req->local_size[k] > caps->max_compute_workgroup_size[k])
      return VKHLO_UNIMPLEMENTED("the executable needs maxComputeWorkGroupSize[%d] >= %u; the device has %u", k,
                                 req->local_size[k], caps->max_compute_workgroup_size[k]);
    if (req->max_group_count[k] > caps->max_compute_workgroup_count[k])
      return VKHLO_UNIMPLEMENTED("the executable needs maxComputeWorkGroupCount[%d] >= %u; the device has %u", k,
                                 req->max_group_count[k], caps->max_compute_workgroup_count[k]);
  }
  if (req->max_invocations > caps->max_compute_workgroup_invocations)
    return VKHLO_UNIMPLEMENTED("the executable needs maxComputeWorkGroupInvocations >= %u; the device has %u",
                               req->max_invocations, caps->max_compute_workgroup_invocations);
  if (req->max_bindings > caps->max_per_stage_descriptor_storage_buffers)
    return VKHLO_UNIMPLEMENTED("the executable needs maxPerStageDescriptorStorageBuffers >= %u; the device has %u",
                               req->max_bindings, caps->max_per_stage_descriptor_storage_buffers);
  if (req->push_constant_bytes > caps->max_push_constants_size)
    return VKHLO_UNIMPLEMENTED("the executable needs maxPushConstantsSize >= %u; the device has %u",
                               req->push_constant_bytes, caps->max_push_constants_size);
  if (caps->min_storage_buffer_offset_alignment == 0 || req->alignment % caps->min_storage_buffer_offset_alignment)
    return VKHLO_UNIMPLEMENTED("the executable's buffer plan aligns offsets to %llu bytes; the device needs "
                               "minStorageBufferOffsetAlignment %llu",
                               (unsigned long long)req->alignment,
                               (unsigned long long)caps->min_storage_buffer_offset_alignment);
  if (req->max_allocation_bytes > caps->max_memory_allocation_size)
    return VKHLO_UNIMPLEMENTED("the executable needs an allocation of %llu bytes; maxMemoryAllocationSize is %llu",
                               (unsigned long long)req->max_allocation_bytes,
                               (unsigned long long)caps->max_memory_allocation_size);
  if (req->max_binding_bytes > caps->max_storage_buffer_range)
    return VKHLO_UNIMPLEMENTED("the executable binds %llu bytes to one kernel binding; maxStorageBufferRange is %u",
                               (unsigned long long)req->max_binding_bytes, caps->max_storage_buffer_range);
  return NULL;
}

/* -------------------------------------------------------------- cursor */

typedef struct cursor {
  const uint8_t *p;
  size_t size, pos;
  vkhlo_status_t err;
  int depth;
  vkx_parsed_t *parsed; /* record offsets go here */
} cursor_t;

static void fail_at(cursor_t *c, size_t at, const char *fmt, ...) {
  if (c->err) return;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  c->err = VKHLO_INVALID("malformed .vkx file: at byte %zu: %s", at, msg);
}
#define FAIL(c, ...) fail_at((c), (c)->pos, __VA_ARGS__)

static bool have(cursor_t *c, size_t n, const char *what) {
  if (c->err) return false;
  if (n > c->size - c->pos) {
    FAIL(c, "truncated: %s needs %zu bytes, %zu left", what, n, c->size - c->pos);
    return false;
  }
  return true;
}
static uint32_t u32(cursor_t *c, const char *what) {
  if (!have(c, 4, what)) return 0;
  uint32_t v = le32(c->p + c->pos);
  c->pos += 4;
  return v;
}
static uint64_t u64(cursor_t *c, const char *what) {
  if (!have(c, 8, what)) return 0;
  uint64_t v = le64(c->p + c->pos);
  c->pos += 8;
  return v;
}
static int32_t i32(cursor_t *c, const char *what) { return (int32_t)u32(c, what); }
/* A u32 count of records of at least |min_bytes| each that must fit in
 * the bytes left (and below |max|). */
static int count_of(cursor_t *c, size_t min_bytes, uint32_t max, const char *what) {
  size_t at = c->pos;
  uint32_t n = u32(c, what);
  if (c->err) return 0;
  if (n > max || (min_bytes && n > (c->size - c->pos) / min_bytes)) {
    fail_at(c, at, "%s %u is more than the file can hold", what, n);
    return 0;
  }
  return (int)n;
}
/* A string (u32 length, bytes) as a heap NUL-terminated copy, or NULL on error. */
static char *str(cursor_t *c, uint32_t max, const char *what) {
  size_t at = c->pos;
  uint32_t n = u32(c, what);
  if (c->err) return NULL;
  if (n > max) {
    fail_at(c, at, "%s is %u bytes, more than %u", what, n, max);
    return NULL;
  }
  if (!have(c, n, what)) return NULL;
  if (memchr(c->p + c->pos, 0, n)) {
    FAIL(c, "%s holds a NUL byte", what);
    return NULL;
  }
  char *s = vkhlo_malloc(c->parsed->allocator, (size_t)n + 1);
  if (!s) {
    c->err = VKHLO_NO_MEMORY();
    return NULL;
  }
  memcpy(s, c->p + c->pos, n);
  s[n] = 0;
  c->pos += n;
  return s;
}
static void *alloc(cursor_t *c, size_t count, size_t size) {
  if (c->err) return NULL;
  void *p = vkhlo_calloc(c->parsed->allocator, count ? count : 1, size);
  if (!p) c->err = VKHLO_NO_MEMORY();
  return p;
}

static void read_type(cursor_t *c, vkhlo_tensor_type_t *t, const char *what) {
  memset(t, 0, sizeof *t);
  size_t at = c->pos;
  uint32_t et = u32(c, what), rank = u32(c, what);
  if (c->err) return;
  if (et > VKHLO_TOKEN) return fail_at(c, at, "%s: element type %u out of range", what, et);
  if (rank > VKHLO_MAX_RANK) return fail_at(c, at, "%s: rank %u over %d", what, rank, VKHLO_MAX_RANK);
  t->element_type = (vkhlo_element_type_t)et;
  t->rank = (int)rank;
  /* Sizes stay below 2^48 bytes, so that sizes in bytes never overflow. */
  uint64_t elements = 1;
  for (uint32_t i = 0; i < rank; i++) {
    size_t dat = c->pos;
    uint64_t d = u64(c, what);
    if (c->err) return;
    if (d > ((uint64_t)1 << 48) || (d && elements > ((uint64_t)1 << 48) / d))
      return fail_at(c, dat, "%s: dimension %llu too large", what, (unsigned long long)d);
    elements *= d;
    t->dimensions[i] = (int64_t)d;
  }
  if (elements > ((uint64_t)1 << 44)) fail_at(c, at, "%s: %llu elements is too many", what, (unsigned long long)elements);
}

/* ------------------------------------------------------------ sections */

static const char *const section_tags[VKX_SECTION_COUNT] = {"REQS", "STAT", "SIGN", "BUFS", "ALOC",
                                                            "KERN", "PROG", "CHCK", "CNST", "DATA"};

/* Enters section |index|: checks its tag and returns a cursor limited to
 * its payload (positions stay absolute); |*next| is where the next one
 * starts. */
static bool enter(cursor_t *c, int index, cursor_t *sec, size_t *next) {
  *sec = *c;
  *next = c->pos;
  size_t at = c->pos;
  uint32_t tag = u32(c, "section tag");
  (void)u32(c, "section reserved");
  uint64_t size = u64(c, "section size");
  if (c->err) return false;
  if (tag != le32((const uint8_t *)section_tags[index])) {
    fail_at(c, at, "expected section %s", section_tags[index]);
    return false;
  }
  if (size > c->size - c->pos) {
    fail_at(c, at + 8, "section %s of %llu bytes runs past the end (%zu left)", section_tags[index],
            (unsigned long long)size, c->size - c->pos);
    return false;
  }
  *sec = *c;
  sec->size = c->pos + (size_t)size;
  c->parsed->section_at[index] = c->pos;
  size_t end = sec->size + ((8 - size % 8) % 8);
  *next = end < c->size ? end : c->size;
  return true;
}
/* Leaves a section: its payload must have been read exactly. */
static void leave(cursor_t *c, cursor_t *sec, size_t next, int index) {
  if (c->err) { /* enter failed: |sec| is a copy of |c| from before */
    if (sec->err != c->err) vkhlo_status_free(sec->err);
    sec->err = NULL;
    return;
  }
  if (!sec->err && sec->pos != sec->size)
    fail_at(sec, sec->pos, "section %s has %zu bytes past its content", section_tags[index], sec->size - sec->pos);
  if (sec->err && !c->err) c->err = sec->err;
  sec->err = NULL;
  if (!c->err) c->pos = next;
}

/* ---------------------------------------------------------- the program */

static void read_sequence(cursor_t *c, vkhlo_executable_t *exe, exe_sequence_t *seq);

static void read_bindings(cursor_t *c, exe_thunk_t *t, const char *what) {
  size_t at = c->pos;
  uint32_t n = u32(c, what), in = u32(c, what);
  if (c->err) return;
  if (n > 65536 || n > (c->size - c->pos) / 4) return fail_at(c, at, "%s: %u bindings", what, n);
  if (in > n) return fail_at(c, at, "%s: %u inputs of %u bindings", what, in, n);
  t->binding_count = (int)n;
  t->input_count = (int)in;
  t->bindings = alloc(c, n, sizeof(int));
  for (uint32_t b = 0; b < n && !c->err; b++) t->bindings[b] = i32(c, what);
}

static const char *const host_ops[] = {"infeed", "outfeed", "send", "recv"};

static void read_thunk(cursor_t *c, vkhlo_executable_t *exe, exe_thunk_t *t) {
  size_t at = c->pos;
  vkx_parsed_t *pr = c->parsed;
  if (pr->thunk_at_count == pr->thunk_at_capacity) {
    int cap = pr->thunk_at_capacity ? 2 * pr->thunk_at_capacity : 64;
    size_t *p = vkhlo_realloc(pr->allocator, pr->thunk_at, sizeof *p * (size_t)cap);
    if (!p) {
      if (!c->err) c->err = VKHLO_NO_MEMORY();
      return;
    }
    pr->thunk_at = p;
    pr->thunk_at_capacity = cap;
  }
  pr->thunk_at[pr->thunk_at_count++] = at;
  uint32_t kind = u32(c, "thunk kind");
  t->position = i32(c, "thunk position");
  if (c->err) return;
  t->kind = (exe_thunk_kind_t)kind;
  switch (kind) {
    case EXE_THUNK_DISPATCH:
      t->kernel = i32(c, "dispatch kernel");
      {
        size_t bat = c->pos;
        uint32_t n = u32(c, "dispatch bindings"), in = u32(c, "dispatch inputs");
        t->is_scatter = u32(c, "dispatch is_scatter") != 0;
        if (c->err) return;
        if (n > 65536 || n > (c->size - c->pos) / 4) return fail_at(c, bat, "dispatch: %u bindings", n);
        if (in > n) return fail_at(c, bat, "dispatch: %u inputs of %u bindings", in, n);
        t->binding_count = (int)n;
        t->input_count = (int)in;
        t->bindings = alloc(c, n, sizeof(int));
        for (uint32_t b = 0; b < n && !c->err; b++) t->bindings[b] = i32(c, "dispatch binding");
      }
      return;
    case EXE_THUNK_COPY:
      t->src = i32(c, "copy src");
      t->dst = i32(c, "copy dst");
      t->size_bytes = u64(c, "copy size");
      t->src_stride = u64(c, "copy src stride");
      t->dst_offset = u64(c, "copy dst offset");
      return;
    case EXE_THUNK_WHILE:
      t->pred_buffer = i32(c, "while pred");
      int64_t trips = (int64_t)u64(c, "while trip count");
      if (trips < -1) return fail_at(c, at, "while trip count %lld", (long long)trips);
      t->has_trip_count = trips >= 0;
      t->trip_count = trips >= 0 ? trips : 0;
      t->rotate_count = count_of(c, 8, 65536, "while rotate count");
      if (c->err) return;
      t->rotate = alloc(c, (size_t)(2 * t->rotate_count) + 1, sizeof(int));
      for (int p = 0; p < 2 * t->rotate_count && !c->err; p++) t->rotate[p] = i32(c, "while rotate buffer");
      t->gate_kernel = i32(c, "while gate kernel");
      t->copy_kernel = i32(c, "while copy kernel");
      if (c->depth >= VKX_MAX_DEPTH) return fail_at(c, at, "sequences nest deeper than %d", VKX_MAX_DEPTH);
      t->cond = alloc(c, 1, sizeof *t->cond);
      t->body = alloc(c, 1, sizeof *t->body);
      c->depth++;
      read_sequence(c, exe, t->cond);
      read_sequence(c, exe, t->body);
      c->depth--;
      return;
    case EXE_THUNK_CONDITIONAL: {
      t->selector_buffer = i32(c, "conditional selector");
      t->selector_is_pred = u32(c, "conditional selector_is_pred") != 0;
      int n = count_of(c, 4, 65536, "conditional branch count");
      if (c->err) return;
      if (n == 0) return fail_at(c, at, "conditional without branches");
      if (c->depth >= VKX_MAX_DEPTH) return fail_at(c, at, "sequences nest deeper than %d", VKX_MAX_DEPTH);
      t->branches = alloc(c, (size_t)n, sizeof *t->branches);
      if (c->err) return;
      t->branch_count = n;
      c->depth++;
      for (int b = 0; b < n && !c->err; b++) {
        t->branches[b] = alloc(c, 1, sizeof **t->branches);
        if (t->branches[b]) read_sequence(c, exe, t->branches[b]);
      }
      c->depth--;
      return;
    }
    case EXE_THUNK_HOST: {
      size_t oat = c->pos;
      char *op = str(c, 64, "host op");
      if (!op) return;
      for (unsigned i = 0; i < sizeof host_ops / sizeof *host_ops; i++)
        if (!strcmp(op, host_ops[i])) t->host_op = host_ops[i];
      vkhlo_free(c->parsed->allocator, op);
      if (!t->host_op) return fail_at(c, oat, "unknown host op");
      t->channel_id = (int64_t)u64(c, "host channel");
      t->host_config = str(c, 1u << 20, "host config");
      read_bindings(c, t, "host");
      t->host_types = alloc(c, (size_t)t->binding_count, sizeof *t->host_types);
      for (int b = 0; b < t->binding_count && !c->err; b++) read_type(c, &t->host_types[b], "host type");
      return;
    }
    default:
      return fail_at(c, at, "thunk kind %u out of range", kind);
  }
}

static void read_sequence(cursor_t *c, vkhlo_executable_t *exe, exe_sequence_t *seq) {
  int n = count_of(c, 8, 1u << 24, "thunk count");
  seq->thunks = alloc(c, (size_t)n, sizeof *seq->thunks);
  if (c->err) return;
  seq->capacity = n;
  for (int i = 0; i < n && !c->err; i++) {
    seq->count = i + 1; /* freed by exe_free_sequence even when half read */
    read_thunk(c, exe, &seq->thunks[i]);
  }
}

/* ---------------------------------------------------------- validation */

typedef struct validator {
  const vkhlo_executable_t *exe;
  vkhlo_status_t err;
  vkx_requirements_t *req;
  const vkx_parsed_t *parsed;
  size_t at;       /* the record being checked */
  int next_thunk;  /* check_sequence's pre-order index into thunk_at */
} validator_t;

static void invalid(validator_t *v, const char *fmt, ...) {
  if (v->err) return;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  v->err = VKHLO_INVALID("malformed .vkx file: at byte %zu: inconsistent program: %s", v->at, msg);
}

static bool buffer_ok(validator_t *v, int id, const char *what) {
  if (id < 0 || id >= v->exe->buffer_count) {
    invalid(v, "%s names buffer %d of %d", what, id, v->exe->buffer_count);
    return false;
  }
  return true;
}

/* Kernel |k| exists with |bindings| bindings and, where |push|, a push
 * constant (a while loop's gate and copy kernels). */
static bool kernel_ok(const validator_t *v, int k, uint32_t bindings, bool push) {
  return k >= 0 && k < v->exe->kernel_count && v->exe->kernels[k].binding_count == bindings &&
         (!push || v->exe->kernels[k].has_push_constant);
}

/* |trips|: the trip count of the counted loop whose body |seq| is (its
 * copies may step through a counter table), else -1. */
static void check_sequence(validator_t *v, const exe_sequence_t *seq, int64_t trips) {
  const vkhlo_executable_t *exe = v->exe;
  for (int i = 0; i < seq->count && !v->err; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    if (v->next_thunk < v->parsed->thunk_at_count) v->at = v->parsed->thunk_at[v->next_thunk];
    v->next_thunk++;
    if (t->position < 0 || t->position >= exe->position_count)
      invalid(v, "thunk position %d outside [0, %d)", t->position, exe->position_count);
    switch (t->kind) {
      case EXE_THUNK_DISPATCH: {
        if (t->kernel < 0 || t->kernel >= exe->kernel_count) {
          invalid(v, "dispatch names kernel %d of %d", t->kernel, exe->kernel_count);
          break;
        }
        const exe_kernel_t *k = &exe->kernels[t->kernel];
        if ((uint32_t)t->binding_count != k->binding_count)
          invalid(v, "dispatch of kernel %d binds %d buffers, the kernel has %u bindings", t->kernel,
                  t->binding_count, k->binding_count);
        for (int b = 0; b < t->binding_count; b++)
          if (buffer_ok(v, t->bindings[b], "dispatch binding")) {
            uint64_t s = exe->buffers[t->bindings[b]].size_bytes;
            if (s > v->req->max_binding_bytes) v->req->max_binding_bytes = s;
          }
        break;
      }
      case EXE_THUNK_COPY:
        if (buffer_ok(v, t->src, "copy source") && buffer_ok(v, t->dst, "copy destination") &&
            (t->size_bytes > exe->buffers[t->src].size_bytes || t->dst_offset > exe->buffers[t->dst].size_bytes ||
             t->size_bytes > exe->buffers[t->dst].size_bytes - t->dst_offset))
          invalid(v, "copy of %llu bytes exceeds its buffers", (unsigned long long)t->size_bytes);
        else if (t->src_stride && (trips < 1 || t->src_stride > exe->buffers[t->src].size_bytes ||
                                   (uint64_t)(trips - 1) > (exe->buffers[t->src].size_bytes - t->size_bytes) / t->src_stride))
          invalid(v, "copy stepping %llu bytes per iteration outside a counted loop or past its source",
                  (unsigned long long)t->src_stride);
        break;
      case EXE_THUNK_WHILE:
        if (buffer_ok(v, t->pred_buffer, "while predicate") && exe->buffers[t->pred_buffer].size_bytes < 1)
          invalid(v, "while predicate buffer is empty");
        for (int p = 0; p < t->rotate_count; p++) /* pairs of equal temps */
          if (buffer_ok(v, t->rotate[2 * p], "rotated state") && buffer_ok(v, t->rotate[2 * p + 1], "rotated value") &&
              (t->rotate[2 * p] == t->rotate[2 * p + 1] || exe->buffers[t->rotate[2 * p]].kind != EXE_BUFFER_TEMP ||
               exe->buffers[t->rotate[2 * p + 1]].kind != EXE_BUFFER_TEMP ||
               exe->buffers[t->rotate[2 * p]].size_bytes != exe->buffers[t->rotate[2 * p + 1]].size_bytes))
            invalid(v, "rotated loop state %d is not a pair of equal temps", p);
        if ((t->gate_kernel < 0) != (t->copy_kernel < 0) || (t->gate_kernel >= 0 && t->has_trip_count))
          invalid(v, "while loop with one of its gate and copy kernels, or a trip count and a gate");
        else if (t->gate_kernel >= 0 &&
                 (!kernel_ok(v, t->gate_kernel, 2, true) || !kernel_ok(v, t->copy_kernel, 2, false)))
          invalid(v, "while loop's gate or copy kernel is not one");
        check_sequence(v, t->cond, -1);
        check_sequence(v, t->body, t->has_trip_count ? t->trip_count : -1);
        break;
      case EXE_THUNK_CONDITIONAL:
        if (buffer_ok(v, t->selector_buffer, "conditional selector") &&
            exe->buffers[t->selector_buffer].size_bytes < (t->selector_is_pred ? 1u : 4u))
          invalid(v, "conditional selector buffer too small");
        for (int b = 0; b < t->branch_count; b++) check_sequence(v, t->branches[b], -1);
        break;
      case EXE_THUNK_HOST:
        for (int b = 0; b < t->binding_count; b++)
          if (buffer_ok(v, t->bindings[b], "host binding") &&
              vkhlo_tensor_type_size_bytes(&t->host_types[b]) > exe->buffers[t->bindings[b]].size_bytes)
            invalid(v, "host binding %d's type is larger than its buffer", b);
        break;
    }
  }
}

/* Cross references of a parsed executable, before anything trusts them. */
static vkhlo_status_t validate(const vkhlo_executable_t *exe, vkx_parsed_t *parsed) {
  validator_t v = {exe, NULL, &parsed->requirements, parsed, parsed->section_at[0], 0};
  uint64_t align = exe->alignment;
  if (align == 0 || (align & (align - 1)) || align > 65536) invalid(&v, "alignment %llu", (unsigned long long)align);
  for (int a = 0; a < exe->allocation_count && !v.err; a++) {
    const exe_buffer_allocation_t *al = &exe->allocations[a];
    v.at = parsed->allocation_at[a];
    if (al->kind == EXE_ALLOCATION_PARAMETER && (al->parameter_number < 0 || al->parameter_number >= exe->parameter_count))
      invalid(&v, "allocation %d is parameter %d of %d", a, al->parameter_number, exe->parameter_count);
    if (al->kind == EXE_ALLOCATION_RESULT && (al->result_number < 0 || al->result_number >= exe->result_count))
      invalid(&v, "allocation %d is result %d of %d", a, al->result_number, exe->result_count);
    else if (al->kind == EXE_ALLOCATION_RESULT &&
        al->size > exe_result_slot_bytes(vkhlo_tensor_type_size_bytes(&exe->result_types[al->result_number])))
      /* up to the result's 16-byte slot, as buffer assignment places it
       * (the executor binds no further than the caller's buffer reaches) */
      invalid(&v, "result allocation %d is larger than its result", a);
    if (al->size > ((uint64_t)1 << 48)) invalid(&v, "allocation %d of %llu bytes", a, (unsigned long long)al->size);
    if (al->size > parsed->requirements.max_allocation_bytes) parsed->requirements.max_allocation_bytes = al->size;
  }
  for (int i = 0; i < exe->buffer_count && !v.err; i++) {
    const exe_buffer_t *b = &exe->buffers[i];
    v.at = parsed->buffer_at[i];
    if (b->inplace_of < -1 || b->inplace_of >= exe->buffer_count) {
      invalid(&v, "buffer %d is in place of buffer %d", i, b->inplace_of);
      break;
    }
    if (b->allocation < -1 || b->allocation >= exe->allocation_count) {
      invalid(&v, "buffer %d is in allocation %d of %d", i, b->allocation, exe->allocation_count);
      break;
    }
    if (b->allocation < 0) continue;
    const exe_buffer_allocation_t *al = &exe->allocations[b->allocation];
    if (al->kind == EXE_ALLOCATION_PARAMETER) {
      /* bound to the caller's argument: at most its size, at offset 0 */
      if (b->offset_bytes % EXE_VIEW_ALIGNMENT ||
          b->offset_bytes + b->size_bytes > vkhlo_tensor_type_size_bytes(&exe->parameter_types[al->parameter_number]) + 16)
        invalid(&v, "buffer %d does not fit parameter %d", i, al->parameter_number);
    } else if (b->offset_bytes % align || b->offset_bytes > al->size || b->size_bytes > al->size - b->offset_bytes) {
      invalid(&v, "buffer %d ([%llu, +%llu)) is outside allocation %d (%llu bytes) or unaligned", i,
              (unsigned long long)b->offset_bytes, (unsigned long long)b->size_bytes, b->allocation,
              (unsigned long long)al->size);
    }
  }
  /* in-place chains end (exe_storage_buffer follows them) */
  for (int i = 0; i < exe->buffer_count && !v.err; i++) {
    int id = i, steps = 0;
    v.at = parsed->buffer_at[i];
    while (exe->buffers[id].inplace_of >= 0 && steps <= exe->buffer_count) id = exe->buffers[id].inplace_of, steps++;
    if (steps > exe->buffer_count) invalid(&v, "buffer %d's in-place chain has a cycle", i);
  }
  /* every buffer the program touches has a slice */
  v.at = parsed->section_at[2];
  for (int i = 0; i < exe->result_count && !v.err; i++)
    if (buffer_ok(&v, exe->result_buffers[i], "result") &&
        exe->buffers[exe->result_buffers[i]].size_bytes < vkhlo_tensor_type_size_bytes(&exe->result_types[i]))
      invalid(&v, "result %d's buffer is smaller than its type", i);
  for (int i = 0; i < exe->check_count && !v.err; i++) {
    const exe_check_t *ch = &exe->checks[i];
    v.at = parsed->check_at[i];
    uint64_t s = vkhlo_tensor_type_size_bytes(&ch->type);
    if (buffer_ok(&v, ch->actual, "check") && buffer_ok(&v, ch->expected, "check") &&
        (exe->buffers[ch->actual].size_bytes < s || exe->buffers[ch->expected].size_bytes < s))
      invalid(&v, "check %d's buffers are smaller than its type", i);
  }
  for (int k = 0; k < exe->kernel_count && !v.err; k++) {
    const exe_kernel_t *kk = &exe->kernels[k];
    v.at = parsed->kernel_at[k];
    if (kk->binding_count > parsed->requirements.max_bindings) parsed->requirements.max_bindings = kk->binding_count;
    if (kk->has_push_constant && parsed->requirements.push_constant_bytes < 4) parsed->requirements.push_constant_bytes = 4;
    for (int a = 0; a < 3; a++)
      if (kk->group_count[a] > parsed->requirements.max_group_count[a])
        parsed->requirements.max_group_count[a] = kk->group_count[a];
    vkhlo_status_t st = vkx_scan_spirv(kk->spirv, kk->spirv_size_bytes, &parsed->requirements);
    if (st) {
      invalid(&v, "kernel %d: %s", k, vkhlo_status_message(st));
      vkhlo_status_free(st);
      break;
    }
    int64_t max_binding;
    bool other_set, push;
    spirv_interface(kk->spirv, kk->spirv_size_bytes, &max_binding, &other_set, &push);
    uint32_t declared = kk->binding_count + (uint32_t)__builtin_popcountll(kk->texel_views) +
                        (uint32_t)__builtin_popcountll(kk->scalar_views);
    if (max_binding >= (int64_t)declared || other_set)
      invalid(&v, "kernel %d's SPIR-V uses binding %lld%s; the kernel declares %u bindings of set 0", k,
              (long long)max_binding, other_set ? " or a set other than 0" : "", declared);
    if (push && !kk->has_push_constant) invalid(&v, "kernel %d's SPIR-V uses a push constant the kernel lacks", k);
  }
  if (!v.err) check_sequence(&v, &exe->main, -1);
  v.at = parsed->section_at[6];
  if (!v.err && exe->straight_line != (exe_sequence_recorded_thunks(&exe->main, NULL) >= 0))
    invalid(&v, "straight_line flag disagrees with the program");
  /* constants: one entry per constant allocation, inside their bytes */
  int constant_allocations = 0;
  for (int a = 0; a < exe->allocation_count; a++)
    constant_allocations += exe->allocations[a].kind == EXE_ALLOCATION_CONSTANT && exe->allocations[a].size > 0;
  v.at = parsed->section_at[8];
  if (!v.err && constant_allocations != parsed->constant_count)
    invalid(&v, "%d constant allocations, %d constant entries", constant_allocations, parsed->constant_count);
  uint64_t limit = parsed->side_weights ? parsed->weights_size : parsed->data_size;
  for (int i = 0; i < parsed->constant_count && !v.err; i++) {
    const vkx_constant_t *k = &parsed->constants[i];
    v.at = parsed->constant_at[i];
    if (k->allocation < 0 || k->allocation >= exe->allocation_count ||
        exe->allocations[k->allocation].kind != EXE_ALLOCATION_CONSTANT ||
        exe->allocations[k->allocation].size != k->size)
      invalid(&v, "constant entry %d does not match a constant allocation", i);
    else if (k->offset > limit || k->size > limit - k->offset)
      invalid(&v, "constant entry %d ([%llu, +%llu)) is outside the %llu bytes of constants", i,
              (unsigned long long)k->offset, (unsigned long long)k->size, (unsigned long long)limit);
    for (int j = 0; j < i && !v.err; j++)
      if (parsed->constants[j].allocation == k->allocation) invalid(&v, "allocation %d has two constant entries", k->allocation);
  }
  return v.err;
}

/* A buffer whose slice is used must be in an allocation (execute's
 * resolve indexes allocations[b->allocation]).  Walk the program marking. */
static void mark_used(const vkhlo_executable_t *exe, const exe_sequence_t *seq, bool *used) {
  for (int i = 0; i < seq->count; i++) {
    const exe_thunk_t *t = &seq->thunks[i];
    for (int b = 0; b < t->binding_count; b++) used[t->bindings[b]] = true;
    if (t->kind == EXE_THUNK_COPY) used[t->src] = used[t->dst] = true;
    if (t->kind == EXE_THUNK_WHILE) {
      used[t->pred_buffer] = true;
      mark_used(exe, t->cond, used);
      mark_used(exe, t->body, used);
    }
    if (t->kind == EXE_THUNK_CONDITIONAL) {
      used[t->selector_buffer] = true;
      for (int b = 0; b < t->branch_count; b++) mark_used(exe, t->branches[b], used);
    }
  }
}

static vkhlo_status_t validate_slices(const vkhlo_executable_t *exe, const vkx_parsed_t *parsed) {
  bool *used = vkhlo_calloc(exe->allocator, (size_t)exe->buffer_count + 1, 1);
  if (!used) return VKHLO_NO_MEMORY();
  mark_used(exe, &exe->main, used);
  for (int i = 0; i < exe->result_count; i++) used[exe->result_buffers[i]] = true;
  for (int i = 0; i < exe->check_count; i++) used[exe->checks[i].actual] = used[exe->checks[i].expected] = true;
  vkhlo_status_t st = NULL;
  for (int i = 0; i < exe->buffer_count && !st; i++)
    if (used[i] && exe->buffers[i].allocation < 0)
      st = VKHLO_INVALID("malformed .vkx file: at byte %zu: inconsistent program: buffer %d is used but has no "
                         "allocation", parsed->buffer_at[i], i);
  vkhlo_free(exe->allocator, used);
  return st;
}

/* ------------------------------------------------------------- parsing */

void vkx_parsed_free(vkx_parsed_t *p) {
  if (!p) return;
  vkhlo_executable_destroy(p->exe);
  vkhlo_free(p->allocator, p->weights_name);
  vkhlo_free(p->allocator, p->constants);
  vkhlo_free(p->allocator, p->buffer_at);
  vkhlo_free(p->allocator, p->allocation_at);
  vkhlo_free(p->allocator, p->kernel_at);
  vkhlo_free(p->allocator, p->check_at);
  vkhlo_free(p->allocator, p->constant_at);
  vkhlo_free(p->allocator, p->thunk_at);
  memset(p, 0, sizeof *p);
}

static void read_requirements(cursor_t *c, vkx_requirements_t *r) {
  r->features = u32(c, "features");
  r->subgroup_size = u32(c, "subgroup size");
  for (int k = 0; k < 3; k++) r->local_size[k] = u32(c, "local size");
  r->max_invocations = u32(c, "invocations");
  for (int k = 0; k < 3; k++) r->max_group_count[k] = u32(c, "group count");
  r->max_bindings = u32(c, "bindings");
  r->push_constant_bytes = u32(c, "push constant bytes");
  (void)u32(c, "reserved");
  r->alignment = u64(c, "alignment");
  r->max_allocation_bytes = u64(c, "allocation bytes");
  r->max_binding_bytes = u64(c, "binding bytes");
}

static void read_sections(cursor_t *c, vkx_parsed_t *out) {
  vkhlo_executable_t *exe = out->exe;
  cursor_t s;
  size_t next;
  /* REQS */
  if (enter(c, 0, &s, &next)) read_requirements(&s, &out->requirements);
  leave(c, &s, next, 0);
  /* STAT */
  if (enter(c, 1, &s, &next)) {
    int64_t v[8];
    for (int i = 0; i < 8; i++) v[i] = (int64_t)u64(&s, "stat");
    exe->stats.instructions = v[0], exe->stats.fused_clusters = v[1], exe->stats.kernels = v[2];
    exe->stats.dispatches = v[3], exe->stats.bytes_moved = v[4], exe->stats.peak_intermediate_bytes = v[5];
    exe->stats.liveness_lower_bound_bytes = v[6], exe->stats.barriers = v[7];
  }
  leave(c, &s, next, 1);
  /* SIGN */
  if (enter(c, 2, &s, &next)) {
    int np = count_of(&s, 8, 1u << 20, "parameter count");
    int nr = count_of(&s, 8, 1u << 20, "result count");
    exe->parameter_types = alloc(&s, (size_t)np, sizeof *exe->parameter_types);
    exe->result_types = alloc(&s, (size_t)nr, sizeof *exe->result_types);
    exe->result_buffers = alloc(&s, (size_t)nr, sizeof *exe->result_buffers);
    if (!s.err) exe->parameter_count = np, exe->result_count = nr;
    for (int i = 0; i < np && !s.err; i++) read_type(&s, &exe->parameter_types[i], "parameter type");
    for (int i = 0; i < nr && !s.err; i++) read_type(&s, &exe->result_types[i], "result type");
    for (int i = 0; i < nr && !s.err; i++) exe->result_buffers[i] = i32(&s, "result buffer");
  }
  leave(c, &s, next, 2);
  /* BUFS */
  if (enter(c, 3, &s, &next)) {
    int n = count_of(&s, 44, 1u << 26, "buffer count");
    exe->buffers = alloc(&s, (size_t)n, sizeof *exe->buffers);
    out->buffer_at = alloc(&s, (size_t)n, sizeof(size_t));
    if (!s.err) exe->buffer_count = exe->buffer_capacity = n;
    for (int i = 0; i < n && !s.err; i++) {
      exe_buffer_t *b = &exe->buffers[i];
      size_t at = out->buffer_at[i] = s.pos;
      uint32_t kind = u32(&s, "buffer kind");
      if (!s.err && kind > EXE_BUFFER_TEMP) fail_at(&s, at, "buffer kind %u out of range", kind);
      b->kind = (exe_buffer_kind_t)kind;
      b->parameter_number = i32(&s, "buffer parameter");
      b->size_bytes = u64(&s, "buffer size");
      b->def_position = i32(&s, "buffer def");
      b->last_use_position = i32(&s, "buffer last use");
      b->inplace_of = i32(&s, "buffer inplace_of");
      b->allocation = i32(&s, "buffer allocation");
      b->offset_bytes = u64(&s, "buffer offset");
      b->name = str(&s, 1u << 16, "buffer name");
      if (!s.err && b->size_bytes > ((uint64_t)1 << 48)) fail_at(&s, at + 8, "buffer size too large");
    }
  }
  leave(c, &s, next, 3);
  /* ALOC */
  if (enter(c, 4, &s, &next)) {
    int n = count_of(&s, 32, 1u << 26, "allocation count");
    exe->allocations = alloc(&s, (size_t)n, sizeof *exe->allocations);
    out->allocation_at = alloc(&s, (size_t)n, sizeof(size_t));
    if (!s.err) exe->allocation_count = n;
    for (int i = 0; i < n && !s.err; i++) {
      exe_buffer_allocation_t *a = &exe->allocations[i];
      size_t at = out->allocation_at[i] = s.pos;
      uint32_t kind = u32(&s, "allocation kind"), flags = u32(&s, "allocation flags");
      if (!s.err && kind > EXE_ALLOCATION_RESULT) fail_at(&s, at, "allocation kind %u out of range", kind);
      a->index = i;
      a->kind = (exe_allocation_kind_t)kind;
      a->is_entry_computation_parameter = flags & 1;
      a->maybe_live_out = (flags >> 1) & 1;
      a->parameter_number = i32(&s, "allocation parameter");
      a->result_number = i32(&s, "allocation result");
      a->size = u64(&s, "allocation size");
      a->constant_data_offset = u64(&s, "allocation constant offset");
    }
  }
  leave(c, &s, next, 4);
  /* KERN */
  if (enter(c, 5, &s, &next)) {
    int n = count_of(&s, 40, 1u << 20, "kernel count");
    exe->kernels = alloc(&s, (size_t)n, sizeof *exe->kernels);
    out->kernel_at = alloc(&s, (size_t)n, sizeof(size_t));
    if (!s.err) exe->kernel_count = exe->kernel_capacity = n;
    for (int i = 0; i < n && !s.err; i++) {
      exe_kernel_t *k = &exe->kernels[i];
      out->kernel_at[i] = s.pos;
      k->name = str(&s, 1u << 12, "kernel name");
      size_t at = s.pos;
      k->binding_count = u32(&s, "kernel bindings");
      if (!s.err && k->binding_count > 65536) fail_at(&s, at, "kernel with %u bindings", k->binding_count);
      for (int a = 0; a < 3; a++) k->group_count[a] = u32(&s, "kernel group count");
      k->has_push_constant = u32(&s, "kernel flags") & 1;
      k->push_constant = u32(&s, "kernel push constant");
      at = s.pos;
      k->texel_views = u64(&s, "kernel texel views");
      k->scalar_views = u64(&s, "kernel scalar views");
      if (!s.err && k->binding_count < 64 && (k->texel_views | k->scalar_views) >> k->binding_count)
        fail_at(&s, at, "texel views of bindings past the kernel's %u", k->binding_count);
      at = s.pos;
      int32_t spirv_of = i32(&s, "kernel SPIR-V of");
      if (s.err) break;
      if (spirv_of != -1) {
        if (spirv_of < 0 || spirv_of >= i || exe->kernels[spirv_of].spirv_shared) {
          fail_at(&s, at, "kernel %d runs the SPIR-V of kernel %d, not an earlier kernel's own", i, (int)spirv_of);
          break;
        }
        k->spirv = exe->kernels[spirv_of].spirv;
        k->spirv_size_bytes = exe->kernels[spirv_of].spirv_size_bytes;
        k->spirv_shared = true;
        continue;
      }
      at = s.pos;
      uint64_t size = u64(&s, "SPIR-V size");
      if (s.err) break;
      if (size < 20 || size % 4 || size > s.size - s.pos) {
        fail_at(&s, at, "SPIR-V of %llu bytes (multiple of 4, at least 20, within the section)",
                (unsigned long long)size);
        break;
      }
      k->spirv = alloc(&s, (size_t)size / 4, 4);
      if (s.err) break;
      memcpy(k->spirv, s.p + s.pos, (size_t)size);
      k->spirv_size_bytes = (size_t)size;
      if (k->spirv[0] != 0x07230203u) fail_at(&s, s.pos, "kernel %d: not a SPIR-V module", i);
      s.pos += (size_t)size;
    }
  }
  leave(c, &s, next, 5);
  /* PROG */
  if (enter(c, 6, &s, &next)) {
    size_t at = s.pos;
    uint32_t positions = u32(&s, "position count");
    if (!s.err && positions > (1u << 26)) fail_at(&s, at, "position count %u", positions);
    exe->position_count = (int)positions;
    exe->straight_line = u32(&s, "program flags") & 1;
    if (!s.err) read_sequence(&s, exe, &exe->main);
  }
  leave(c, &s, next, 6);
  /* CHCK */
  if (enter(c, 7, &s, &next)) {
    int n = count_of(&s, 40, 1u << 20, "check count");
    exe->checks = alloc(&s, (size_t)n, sizeof *exe->checks);
    out->check_at = alloc(&s, (size_t)n, sizeof(size_t));
    if (!s.err) exe->check_count = exe->check_capacity = n;
    for (int i = 0; i < n && !s.err; i++) {
      exe_check_t *ch = &exe->checks[i];
      size_t at = out->check_at[i] = s.pos;
      uint32_t kind = u32(&s, "check kind");
      if (!s.err && kind > HLO_CHECK_PRINT) fail_at(&s, at, "check kind %u out of range", kind);
      ch->kind = (hlo_check_kind_t)kind;
      char *loc = str(&s, sizeof ch->location - 1, "check location");
      if (loc) snprintf(ch->location, sizeof ch->location, "%s", loc);
      vkhlo_free(s.parsed->allocator, loc);
      ch->actual = i32(&s, "check actual");
      ch->expected = i32(&s, "check expected");
      read_type(&s, &ch->type, "check type");
      uint64_t bits = u64(&s, "check tolerance");
      memcpy(&ch->tolerance, &bits, sizeof bits);
      ch->max_ulp_difference = (int64_t)u64(&s, "check ulps");
      ch->f64_demoted = u32(&s, "check demoted") != 0;
    }
  }
  leave(c, &s, next, 7);
  /* CNST */
  if (enter(c, 8, &s, &next)) {
    exe->constant_size_bytes = u64(&s, "constant size");
    int n = count_of(&s, 0, 1u << 26, "constant count");
    (void)u32(&s, "reserved");
    out->weights_name = str(&s, 4096, "weights name");
    out->weights_size = u64(&s, "weights size");
    out->weights_checksum = u64(&s, "weights checksum");
    if (!s.err && (uint64_t)n > (s.size - s.pos) / 24) fail_at(&s, s.pos, "constant count %d past the end", n);
    out->constants = alloc(&s, (size_t)n, sizeof *out->constants);
    out->constant_at = alloc(&s, (size_t)n, sizeof(size_t));
    if (!s.err) out->constant_count = n;
    for (int i = 0; i < n && !s.err; i++) {
      out->constant_at[i] = s.pos;
      out->constants[i].allocation = i32(&s, "constant allocation");
      (void)u32(&s, "reserved");
      out->constants[i].offset = u64(&s, "constant offset");
      out->constants[i].size = u64(&s, "constant size");
    }
    if (!s.err && out->side_weights != (out->weights_name && out->weights_name[0] != 0))
      fail_at(&s, s.pos, "the weights flag and the weights name disagree");
  }
  leave(c, &s, next, 8);
  /* DATA */
  if (enter(c, 9, &s, &next)) {
    out->data = s.p + s.pos;
    out->data_size = s.size - s.pos;
    s.pos = s.size;
    if (out->side_weights && out->data_size) fail_at(&s, s.pos, "embedded data with a weights file");
  }
  leave(c, &s, next, 9);
  if (!c->err && c->pos != c->size) FAIL(c, "%zu bytes after the last section", c->size - c->pos);
}

vkhlo_status_t vkx_parse(const vkhlo_allocator_t *allocator, const uint8_t *bytes, size_t size,
                         vkx_parsed_t *out) {
  memset(out, 0, sizeof *out);
  out->allocator = allocator;
  cursor_t c = {bytes, size, 0, NULL, 0, out};
  if (size < VKX_HEADER_BYTES || memcmp(bytes, VKX_MAGIC, 8) != 0)
    return VKHLO_INVALID("malformed .vkx file: at byte 0: not a vkhlo executable (no VKHLOVKX magic)");
  c.pos = 8;
  uint32_t version = u32(&c, "version"), flags = u32(&c, "flags");
  uint64_t file_size = u64(&c, "file size"), checksum = u64(&c, "checksum");
  uint32_t sections = u32(&c, "section count");
  if (version != VKX_VERSION)
    return VKHLO_INVALID("malformed .vkx file: at byte 8: version %u; this vkhlo reads version %u", version, VKX_VERSION);
  if (flags & ~VKX_FLAG_SIDE_WEIGHTS) return VKHLO_INVALID("malformed .vkx file: at byte 12: unknown flags 0x%x", flags);
  if (file_size != size)
    return VKHLO_INVALID("malformed .vkx file: at byte 16: the header says %llu bytes, the file has %zu (truncated?)",
                         (unsigned long long)file_size, size);
  if (sections != VKX_SECTION_COUNT)
    return VKHLO_INVALID("malformed .vkx file: at byte 32: %u sections, expected %u", sections, VKX_SECTION_COUNT);
  uint64_t sum = vkx_checksum(bytes + VKX_HEADER_BYTES, size - VKX_HEADER_BYTES);
  if (sum != checksum)
    return VKHLO_INVALID("malformed .vkx file: at byte 24: checksum mismatch (stored %016llx, computed %016llx)",
                         (unsigned long long)checksum, (unsigned long long)sum);
  out->side_weights = flags & VKX_FLAG_SIDE_WEIGHTS;
  out->exe = vkhlo_calloc(allocator, 1, sizeof *out->exe);
  if (!out->exe) return VKHLO_NO_MEMORY();
  out->exe->allocator = allocator;
  c.pos = VKX_HEADER_BYTES;
  read_sections(&c, out);
  vkhlo_status_t st = c.err;
  if (!st) {
    out->exe->alignment = out->requirements.alignment;
    /* recomputed below from the program and the SPIR-V; the file's values
     * may only add to them */
    st = validate(out->exe, out);
  }
  if (!st) st = validate_slices(out->exe, out);
  if (st) {
    vkx_parsed_free(out);
    return st;
  }
  return NULL;
}

/* ---------------------------------------------------------------- load */

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

typedef struct mapping {
  void *addr;
  size_t size;
} mapping_t;

static vkhlo_status_t map_file(const char *path, mapping_t *m) {
  memset(m, 0, sizeof *m);
  int fd = open(path, O_RDONLY);
  if (fd < 0) return vkhlo_status_make(VKHLO_STATUS_NOT_FOUND, "cannot open %s: %s", path, strerror(errno));
  struct stat sb;
  if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
    close(fd);
    return VKHLO_INVALID("%s is not a regular file", path);
  }
  m->size = (size_t)sb.st_size;
  if (m->size) {
    m->addr = mmap(NULL, m->size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m->addr == MAP_FAILED) {
      m->addr = NULL;
      close(fd);
      return vkhlo_status_make(VKHLO_STATUS_RESOURCE_EXHAUSTED, "cannot map %s: %s", path, strerror(errno));
    }
  }
  close(fd);
  return NULL;
}

static void unmap_file(mapping_t *m) {
  if (m->addr) munmap(m->addr, m->size);
  memset(m, 0, sizeof *m);
}

/* Device objects for a parsed executable: pipelines, allocations with the
 * constants uploaded from |constant_base|, command buffers. */
static vkhlo_status_t create_device_objects(vkhlo_executable_t *exe, const vkx_parsed_t *parsed,
                                            const uint8_t *constant_base) {
  vkrt_device_t *device = exe->context->device;
  VKHLO_RETURN_IF_ERROR(exe_create_pipelines(exe, NULL, NULL));
  for (int i = 0; i < exe->allocation_count; i++) {
    exe_buffer_allocation_t *a = &exe->allocations[i];
    if (a->kind == EXE_ALLOCATION_PARAMETER || a->kind == EXE_ALLOCATION_RESULT || a->size == 0) continue;
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_create(device, a->size, &a->buffer));
  }
  for (int i = 0; i < parsed->constant_count; i++) {
    const vkx_constant_t *k = &parsed->constants[i];
    VKHLO_RETURN_IF_ERROR(vkrt_buffer_upload(exe->allocations[k->allocation].buffer, 0, constant_base + k->offset, k->size));
  }
  if (exe->straight_line) VKHLO_RETURN_IF_ERROR(vkrt_cmd_create(device, &exe->copy_cmd));
  return vkrt_cmd_create(device, &exe->cmd);
}

/* Loads from |bytes|; |dir| is where a side file is looked up (NULL: the
 * current directory). */
static vkhlo_status_t load(vkhlo_context_t *context, const uint8_t *bytes, size_t size, const char *dir,
                           const vkhlo_load_options_t *options, vkhlo_executable_t **out) {
  *out = NULL;
  double t0 = now_ms();
  vkx_parsed_t parsed;
  VKHLO_RETURN_IF_ERROR(vkx_parse(context->allocator, bytes, size, &parsed));
  vkhlo_executable_t *exe = parsed.exe;
  exe->context = context;
  vkhlo_status_t st = vkx_check_device(&parsed.requirements, &context->target, vkrt_device_caps(context->device));
  if (!st) st = exe_env_uint64("VKHLO_MAX_LOOP_ITERATIONS", 10000000ull, &exe->max_loop_iterations);
  if (!st) st = exe_env_loop_batch(context, &exe->loop_batch);
  mapping_t weights = {0};
  const uint8_t *constant_base = parsed.data;
  if (!st && parsed.side_weights) {
    char path[4096];
    if (options && options->weights_path) snprintf(path, sizeof path, "%s", options->weights_path);
    else if (strchr(parsed.weights_name, '/')) snprintf(path, sizeof path, "%s", parsed.weights_name);
    else snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", parsed.weights_name);
    st = map_file(path, &weights);
    if (!st && weights.size != parsed.weights_size)
      st = VKHLO_INVALID("weights file %s has %zu bytes; the executable expects %llu", path, weights.size,
                         (unsigned long long)parsed.weights_size);
    if (!st && vkx_checksum(weights.addr, weights.size) != parsed.weights_checksum)
      st = VKHLO_INVALID("weights file %s does not match the executable (checksum)", path);
    constant_base = weights.addr;
  }
  if (!st) st = create_device_objects(exe, &parsed, constant_base);
  unmap_file(&weights);
  if (st) {
    vkx_parsed_free(&parsed);
    return st;
  }
  exe->stats.spirv_compiled = 0;
  exe->stats.spirv_cache_hits = 0;
  exe->stats.compile_ms = now_ms() - t0;
  parsed.exe = NULL;
  vkx_parsed_free(&parsed);
  *out = exe;
  return NULL;
}

vkhlo_status_t vkhlo_executable_load(vkhlo_context_t *context, const void *data, size_t size,
                                     const vkhlo_load_options_t *options, vkhlo_executable_t **out_executable) {
  if (!out_executable) return VKHLO_INVALID("vkhlo_executable_load: out_executable is NULL");
  *out_executable = NULL;
  if (!context || (!data && size)) return VKHLO_INVALID("vkhlo_executable_load: context or data is NULL");
  return load(context, data, size, NULL, options, out_executable);
}

vkhlo_status_t vkhlo_executable_load_file(vkhlo_context_t *context, const char *path,
                                          const vkhlo_load_options_t *options, vkhlo_executable_t **out_executable) {
  if (!out_executable) return VKHLO_INVALID("vkhlo_executable_load_file: out_executable is NULL");
  *out_executable = NULL;
  if (!context || !path) return VKHLO_INVALID("vkhlo_executable_load_file: context or path is NULL");
  mapping_t m;
  VKHLO_RETURN_IF_ERROR(map_file(path, &m));
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0;
  else snprintf(dir, sizeof dir, ".");
  vkhlo_status_t st = load(context, m.addr ? m.addr : (const uint8_t *)"", m.size, dir, options, out_executable);
  unmap_file(&m);
  if (st) st = vkhlo_status_annotate(st, "%s", path);
  return st;
}

vkhlo_context_t *vkhlo_executable_context(const vkhlo_executable_t *executable) {
  return executable ? executable->context : NULL;
}
