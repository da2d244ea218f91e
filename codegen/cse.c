/*
 * Common-subexpression elimination (see codegen/passes.h).
 *
 * Within each computation, two instructions compute the same value when
 * they have the same opcode, the same operands (pointer-equal, in order),
 * the same shape (element type, dimensions and layout), the same
 * attributes (attrs_equal compares every field of hlo_attrs_t, dimension
 * lists and strings by content, doubles by their bits), the same called
 * computations (pointer-equal) and, for constants, byte-equal literals of
 * the same shape.  The pass walks the instructions in order, keeps the
 * first of each class and makes every use of a later one use the first;
 * the later ones are then removed (nothing can use them any more).
 *
 * The walk is one pass in def-before-use order: an instruction's operands
 * have already been replaced by their representatives when it is looked
 * up, so chains of equal expressions collapse at once.  Lookups go through
 * a hash table keyed on (opcode, operand ids, shape, literal bytes), so the
 * pass is O(instructions) per computation.
 *
 * Never merged: parameters; side-effecting ops (hlo_instruction_has_side_effect:
 * checks, host communication, rng, custom calls with side effects, ops
 * calling side-effecting computations); while, if and case; every custom
 * call, composite and rng_bit_generator (opaque or stateful enough that
 * merging them is not worth the risk); tokens (create_token, after_all);
 * collectives; and optimization_barrier (whose purpose is to stop
 * optimizations).
 *
 * What it does not do: no commutativity (add(a, b) and add(b, a) stay
 * distinct), no merging across computations, and no merging of equal
 * region computations (two reduces with equal but distinct bodies stay).
 */
#include "codegen/passes.h"
#include "support/hash.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- equality */

static bool dims_equal(const hlo_dims_t *a, const hlo_dims_t *b) {
  if (a->count != b->count) return false;
  return a->count == 0 || memcmp(a->data, b->data, sizeof(int64_t) * (size_t)a->count) == 0;
}

static bool str_equal(const char *a, const char *b) {
  if (!a || !b) return a == b;
  return strcmp(a, b) == 0;
}

static bool double_bits_equal(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

/* Every field of hlo_attrs_t (hlo/hlo.h), in its order.  A field added
 * there must be added here (tests/unit_passes.c checks the struct size). */
static bool attrs_equal(const hlo_attrs_t *a, const hlo_attrs_t *b) {
#define D(f) if (!dims_equal(&a->f, &b->f)) return false;
#define V(f) if (a->f != b->f) return false;
  D(broadcast_dimensions) D(permutation) D(dimensions)
  V(dimension) V(index)
  D(start_indices) D(limit_indices) D(strides)
  D(edge_padding_low) D(edge_padding_high) D(interior_padding)
  D(slice_sizes)
  V(comparison_direction) V(compare_type)
  D(offset_dims) D(collapsed_slice_dims) D(operand_batching_dims)
  D(start_indices_batching_dims) D(start_index_map)
  V(index_vector_dim) V(indices_are_sorted) V(unique_indices)
  D(update_window_dims) D(inserted_window_dims) D(input_batching_dims)
  D(scatter_indices_batching_dims) D(scatter_dims_to_operand_dims)
  D(lhs_batching_dimensions) D(rhs_batching_dimensions)
  D(lhs_contracting_dimensions) D(rhs_contracting_dimensions)
  D(lhs_ragged_dimensions) D(rhs_group_dimensions)
  D(window_strides) D(padding) D(lhs_dilation) D(rhs_dilation) D(window_reversal)
  V(input_batch_dimension) V(input_feature_dimension)
  D(input_spatial_dimensions)
  V(kernel_input_feature_dimension) V(kernel_output_feature_dimension)
  D(kernel_spatial_dimensions)
  V(output_batch_dimension) V(output_feature_dimension)
  D(output_spatial_dimensions)
  V(feature_group_count) V(batch_group_count)
  D(window_dimensions) D(base_dilations) D(window_dilations)
  V(is_stable) V(run_length) V(merged_run_length) V(scan_inputs) V(is_reverse)
  if (!str_equal(a->call_target_name, b->call_target_name)) return false;
  if (!str_equal(a->backend_config, b->backend_config)) return false;
  if (!str_equal(a->error_message, b->error_message)) return false;
  V(has_side_effect)
  V(check_kind)
  if (!double_bits_equal(a->tolerance, b->tolerance)) return false;
  V(max_ulp_difference) V(min_ulp_difference)
  V(fft_type) D(fft_length)
  V(rng_algorithm) V(rng_distribution)
  V(exponent_bits) V(mantissa_bits)
  V(left_side) V(lower) V(unit_diagonal) V(transpose_a)
  if (!double_bits_equal(a->epsilon, b->epsilon)) return false;
  V(feature_index)
  V(k)
  D(replica_groups) V(replica_groups_cols) V(channel_id)
  V(fusion_kind)
  V(split_dimension) V(concat_dimension) V(split_count)
  D(source_target_pairs)
  V(use_global_device_ids) V(has_dynamic_root) V(group_size) V(group_index)
  V(has_known_trip_count) V(known_trip_count) V(trip_counter) V(trip_init) V(trip_step)
#undef D
#undef V
  return true;
}

/* Shapes equal including layout (hlo_shape_equal ignores layouts). */
static bool shape_identical(const hlo_shape_t *a, const hlo_shape_t *b) {
  if (!hlo_shape_equal(a, b)) return false;
  if (a->element_type == HLO_TUPLE) {
    for (int i = 0; i < a->tuple_count; i++)
      if (!shape_identical(&a->tuple_shapes[i], &b->tuple_shapes[i])) return false;
    return true;
  }
  return memcmp(a->minor_to_major, b->minor_to_major, (size_t)a->rank) == 0;
}

static bool literal_equal(const hlo_literal_t *a, const hlo_literal_t *b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (!shape_identical(&a->shape, &b->shape) || a->size_bytes != b->size_bytes) return false;
  return a->size_bytes == 0 || memcmp(a->data, b->data, a->size_bytes) == 0;
}

static bool instructions_equal(const hlo_instruction_t *a, const hlo_instruction_t *b) {
  if (a->opcode != b->opcode || a->operand_count != b->operand_count ||
      a->called_count != b->called_count || a->parameter_number != b->parameter_number)
    return false;
  if (!shape_identical(&a->shape, &b->shape)) return false;
  for (int k = 0; k < a->operand_count; k++)
    if (a->operands[k] != b->operands[k]) return false;
  for (int k = 0; k < a->called_count; k++)
    if (a->called_computations[k] != b->called_computations[k]) return false;
  if (a->opcode == HLO_OPCODE_CONSTANT && !literal_equal(a->literal, b->literal)) return false;
  return attrs_equal(&a->attrs, &b->attrs);
}

/* Whether |in| may be merged with an equal instruction. */
static bool can_merge(const hlo_instruction_t *in) {
  switch (in->opcode) {
    case HLO_OPCODE_PARAMETER:
    case HLO_OPCODE_WHILE:
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE:
    case HLO_OPCODE_CUSTOM_CALL:
    case HLO_OPCODE_COMPOSITE:
    case HLO_OPCODE_RNG:
    case HLO_OPCODE_RNG_BIT_GENERATOR:
    case HLO_OPCODE_CHECK:
    case HLO_OPCODE_INFEED:
    case HLO_OPCODE_OUTFEED:
    case HLO_OPCODE_SEND:
    case HLO_OPCODE_RECV:
    case HLO_OPCODE_AFTER_ALL:
    case HLO_OPCODE_CREATE_TOKEN:
    case HLO_OPCODE_ALL_GATHER:
    case HLO_OPCODE_ALL_REDUCE:
    case HLO_OPCODE_ALL_TO_ALL:
    case HLO_OPCODE_COLLECTIVE_BROADCAST:
    case HLO_OPCODE_COLLECTIVE_PERMUTE:
    case HLO_OPCODE_COLLECTIVE_REDUCE:
    case HLO_OPCODE_REDUCE_SCATTER:
    case HLO_OPCODE_OPTIMIZATION_BARRIER:
      return false;
    default: break;
  }
  if (in->opcode == HLO_OPCODE_CONSTANT && !in->literal) return false;
  return !hlo_instruction_has_side_effect(in);
}

/* ------------------------------------------------------- hashing */

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

static uint64_t instruction_hash(const hlo_instruction_t *in) {
  uint64_t h = mix(0, (uint64_t)in->opcode);
  h = mix(h, (uint64_t)in->shape.element_type);
  h = mix(h, (uint64_t)in->shape.rank);
  for (int i = 0; i < in->shape.rank; i++) h = mix(h, (uint64_t)in->shape.dimensions[i]);
  for (int k = 0; k < in->operand_count; k++) h = mix(h, (uint64_t)in->operands[k]->id);
  if (in->opcode == HLO_OPCODE_CONSTANT && in->literal) {
    /* FNV-1a over (at most) the first 256 bytes of the value. */
    size_t n = in->literal->size_bytes < 256 ? in->literal->size_bytes : 256;
    h = mix(h, fnv1a(FNV1A_BASIS, in->literal->data, n));
  }
  return h;
}

typedef struct table {
  hlo_instruction_t **slots;
  uint64_t *hashes;
  size_t mask;
} table_t;

/* Returns the representative equal to |in|, inserting |in| if none. */
static hlo_instruction_t *table_find_or_insert(table_t *t, hlo_instruction_t *in) {
  uint64_t h = instruction_hash(in);
  for (size_t i = (size_t)h & t->mask;; i = (i + 1) & t->mask) {
    if (!t->slots[i]) {
      t->slots[i] = in;
      t->hashes[i] = h;
      return in;
    }
    if (t->hashes[i] == h && instructions_equal(t->slots[i], in)) return t->slots[i];
  }
}

static hlo_instruction_t *representative(hlo_instruction_t *in) {
  return in->scratch ? (hlo_instruction_t *)in->scratch : in;
}

/* CSE of one computation; uses the instructions' |scratch|. */
static vkhlo_status_t cse_computation(const vkhlo_allocator_t *allocator, hlo_computation_t *c, bool *changed) {
  size_t cap = 16;
  while (cap < (size_t)c->instruction_count * 2 + 2) cap *= 2;
  table_t t = {vkhlo_calloc(allocator, cap, sizeof(void *)), vkhlo_calloc(allocator, cap, sizeof(uint64_t)), cap - 1};
  if (!t.slots || !t.hashes) {
    vkhlo_free(allocator, t.slots);
    vkhlo_free(allocator, t.hashes);
    return VKHLO_NO_MEMORY();
  }
  for (int i = 0; i < c->instruction_count; i++) c->instructions[i]->scratch = NULL;
  int kept = 0;
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    for (int k = 0; k < in->operand_count; k++) in->operands[k] = representative(in->operands[k]);
    if (can_merge(in)) {
      hlo_instruction_t *rep = table_find_or_insert(&t, in);
      if (rep != in) {
        in->scratch = rep; /* every later use is redirected; |in| is dropped */
        *changed = true;
        continue;
      }
    }
    c->instructions[kept++] = in;
  }
  c->instruction_count = kept;
  if (c->root) c->root = representative(c->root);
  vkhlo_free(allocator, t.slots);
  vkhlo_free(allocator, t.hashes);
  return NULL;
}

vkhlo_status_t codegen_cse_pass(hlo_module_t *module, const codegen_target_t *target, bool *changed) {
  (void)target;
  *changed = false;
  bool entry_listed = false;
  for (int i = 0; i < module->computation_count; i++) {
    entry_listed |= module->computations[i] == module->entry_computation;
    VKHLO_RETURN_IF_ERROR(cse_computation(module->arena.allocator, module->computations[i], changed));
  }
  if (!entry_listed && module->entry_computation)
    VKHLO_RETURN_IF_ERROR(cse_computation(module->arena.allocator, module->entry_computation, changed));
  return NULL;
}
