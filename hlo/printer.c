/*
 * hlo_module_to_string: a readable, StableHLO-like dump of a module, used
 * for --dump-dir and in tests.  It does not aim to round-trip.
 *
 * Each computation prints as a func.func (callees first, entry last, as in
 * module->computations); each instruction on one line:
 *
 *   %add.7 = stablehlo.add(%parameter.0, %constant.3) : tensor<4xf32>  {...}  // file:12:5
 *
 * Attributes print only when set (non-empty dimension lists, and the scalar
 * fields the opcode reads).  Constants print up to 8 elements.  Called
 * computations print as `calls = [@name, ...]`.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"
#include "hlo/literal.h"
#include "support/strbuf.h"

typedef struct dims_field {
  const char *name;
  size_t offset;
} dims_field_t;

#define F(x) {#x, offsetof(hlo_attrs_t, x)}
static const dims_field_t dims_fields[] = {
    F(broadcast_dimensions), F(permutation), F(dimensions), F(start_indices), F(limit_indices),
    F(strides), F(edge_padding_low), F(edge_padding_high), F(interior_padding), F(slice_sizes),
    F(offset_dims), F(collapsed_slice_dims), F(operand_batching_dims),
    F(start_indices_batching_dims), F(start_index_map), F(update_window_dims),
    F(inserted_window_dims), F(input_batching_dims), F(scatter_indices_batching_dims),
    F(scatter_dims_to_operand_dims), F(lhs_batching_dimensions), F(rhs_batching_dimensions),
    F(lhs_contracting_dimensions), F(rhs_contracting_dimensions), F(lhs_ragged_dimensions),
    F(rhs_group_dimensions), F(window_strides), F(padding),
    F(lhs_dilation), F(rhs_dilation), F(window_reversal), F(input_spatial_dimensions),
    F(kernel_spatial_dimensions), F(output_spatial_dimensions), F(window_dimensions),
    F(base_dilations), F(window_dilations), F(fft_length), F(replica_groups),
    F(source_target_pairs),
};
#undef F

static void print_shape(strbuf_t *sb, const hlo_shape_t *s) {
  char buf[512];
  hlo_shape_to_string(s, buf, sizeof buf);
  strbuf_append(sb, buf);
}

static void print_dims(strbuf_t *sb, const char *name, hlo_dims_t d) {
  strbuf_printf(sb, ", %s = [", name);
  for (int i = 0; i < d.count; i++) strbuf_printf(sb, "%s%" PRId64, i ? ", " : "", d.data[i]);
  strbuf_append(sb, "]");
}

static void print_element(strbuf_t *sb, hlo_element_type_t t, const uint8_t *p) {
  size_t size = hlo_element_type_size_bytes(t);
  uint64_t bits = 0;
  if (hlo_element_type_is_complex(t)) {
    hlo_element_type_t part = hlo_element_type_real(t);
    uint64_t re = 0, im = 0;
    memcpy(&re, p, size / 2);
    memcpy(&im, p + size / 2, size / 2);
    strbuf_printf(sb, "(%g, %g)", hlo_float_decode(part, re), hlo_float_decode(part, im));
    return;
  }
  memcpy(&bits, p, size);
  if (hlo_element_type_is_float(t)) {
    strbuf_printf(sb, "%g", hlo_float_decode(t, bits));
  } else if (hlo_element_type_is_unsigned_int(t) || t == HLO_PRED) {
    strbuf_printf(sb, "%" PRIu64, bits);
  } else {
    int shift = 64 - 8 * (int)size;
    int64_t v = (int64_t)(bits << shift) >> shift;
    strbuf_printf(sb, "%" PRId64, v);
  }
}

static void print_literal(strbuf_t *sb, const hlo_literal_t *lit) {
  hlo_element_type_t t = lit->shape.element_type;
  size_t size = hlo_element_type_size_bytes(t);
  int64_t n = hlo_shape_element_count(&lit->shape);
  strbuf_append(sb, "dense<");
  if (n != 1) strbuf_append(sb, "[");
  for (int64_t i = 0; i < n && i < 8; i++) {
    if (i) strbuf_append(sb, ", ");
    print_element(sb, t, (const uint8_t *)lit->data + (size_t)i * size);
  }
  if (n > 8) strbuf_printf(sb, ", ... (%" PRId64 " elements)", n);
  if (n != 1) strbuf_append(sb, "]");
  strbuf_append(sb, ">");
}

static void print_attrs(strbuf_t *sb, const hlo_instruction_t *in) {
  static const char *const dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const char *const types[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  const hlo_attrs_t *a = &in->attrs;
  size_t start = sb->length;
  for (size_t i = 0; i < sizeof dims_fields / sizeof dims_fields[0]; i++) {
    const hlo_dims_t *d = (const hlo_dims_t *)((const char *)a + dims_fields[i].offset);
    if (d->count) print_dims(sb, dims_fields[i].name, *d);
  }
  if (a->group_size) /* linked by interpreter.run_parallel (hlo.h) */
    strbuf_printf(sb, ", group_index = %" PRId64 ", group_size = %" PRId64, a->group_index, a->group_size);
  switch (in->opcode) {
    case HLO_OPCODE_COMPARE:
      strbuf_printf(sb, ", comparison_direction = %s", dirs[a->comparison_direction % 6]);
      if (a->compare_type) strbuf_printf(sb, ", compare_type = %s", types[a->compare_type % 5]);
      break;
    case HLO_OPCODE_IOTA: case HLO_OPCODE_CONCATENATE: case HLO_OPCODE_SORT:
    case HLO_OPCODE_ALL_GATHER: case HLO_OPCODE_REDUCE_SCATTER:
      strbuf_printf(sb, ", dimension = %" PRId64, a->dimension);
      if (in->opcode == HLO_OPCODE_SORT && a->is_stable) strbuf_append(sb, ", is_stable = true");
      break;
    case HLO_OPCODE_SORT_RUNS:
      strbuf_printf(sb, ", dimension = %" PRId64 ", run_length = %" PRId64 ", merged_run_length = %" PRId64,
                    a->dimension, a->run_length, a->merged_run_length);
      if (a->k) strbuf_printf(sb, ", k = %" PRId64, a->k);
      break;
    case HLO_OPCODE_GET_TUPLE_ELEMENT: strbuf_printf(sb, ", index = %" PRId64, a->index); break;
    case HLO_OPCODE_GATHER: case HLO_OPCODE_SCATTER:
      strbuf_printf(sb, ", index_vector_dim = %" PRId64, a->index_vector_dim);
      if (a->indices_are_sorted) strbuf_append(sb, ", indices_are_sorted = true");
      if (a->unique_indices) strbuf_append(sb, ", unique_indices = true");
      break;
    case HLO_OPCODE_CONVOLUTION:
      strbuf_printf(sb,
                    ", input_batch_dimension = %" PRId64 ", input_feature_dimension = %" PRId64
                    ", kernel_input_feature_dimension = %" PRId64
                    ", kernel_output_feature_dimension = %" PRId64
                    ", output_batch_dimension = %" PRId64 ", output_feature_dimension = %" PRId64
                    ", feature_group_count = %" PRId64 ", batch_group_count = %" PRId64,
                    a->input_batch_dimension, a->input_feature_dimension,
                    a->kernel_input_feature_dimension, a->kernel_output_feature_dimension,
                    a->output_batch_dimension, a->output_feature_dimension, a->feature_group_count,
                    a->batch_group_count);
      break;
    case HLO_OPCODE_CUSTOM_CALL: case HLO_OPCODE_COMPOSITE:
      if (a->call_target_name) strbuf_printf(sb, ", call_target_name = \"%s\"", a->call_target_name);
      if (a->backend_config) strbuf_printf(sb, ", backend_config = \"%s\"", a->backend_config);
      if (a->has_side_effect) strbuf_append(sb, ", has_side_effect = true");
      break;
    case HLO_OPCODE_CHECK:
      strbuf_printf(sb, ", check_kind = %s", hlo_check_kind_name(a->check_kind));
      if (a->tolerance) strbuf_printf(sb, ", tolerance = %g", a->tolerance);
      if (a->max_ulp_difference) strbuf_printf(sb, ", max_ulp_difference = %" PRId64, a->max_ulp_difference);
      break;
    case HLO_OPCODE_FFT: strbuf_printf(sb, ", fft_type = %d", a->fft_type); break;
    case HLO_OPCODE_RNG_BIT_GENERATOR: strbuf_printf(sb, ", rng_algorithm = %d", a->rng_algorithm); break;
    case HLO_OPCODE_RNG: strbuf_printf(sb, ", rng_distribution = %d", a->rng_distribution); break;
    case HLO_OPCODE_REDUCE_PRECISION:
      strbuf_printf(sb, ", exponent_bits = %d, mantissa_bits = %d", a->exponent_bits, a->mantissa_bits);
      break;
    case HLO_OPCODE_TRIANGULAR_SOLVE:
      strbuf_printf(sb, ", left_side = %d, lower = %d, unit_diagonal = %d, transpose_a = %d",
                    a->left_side, a->lower, a->unit_diagonal, a->transpose_a);
      break;
    case HLO_OPCODE_CHLO_TOP_K: strbuf_printf(sb, ", k = %" PRId64, a->k); break;
    case HLO_OPCODE_CHLO_SCAN:
      strbuf_printf(sb, ", dimension = %" PRId64 ", inputs = %" PRId64 "%s", a->dimension, a->scan_inputs,
                    a->is_reverse ? ", is_reverse" : "");
      break;
    case HLO_OPCODE_BATCH_NORM_GRAD: case HLO_OPCODE_BATCH_NORM_INFERENCE:
    case HLO_OPCODE_BATCH_NORM_TRAINING:
      strbuf_printf(sb, ", epsilon = %g, feature_index = %" PRId64, a->epsilon, a->feature_index);
      break;
    default: break;
  }
  if (sb->length > start && !sb->failed) {
    /* Replace the leading ", " with " {" and close. */
    sb->data[start] = ' ';
    sb->data[start + 1] = '{';
    strbuf_append(sb, "}");
  }
}

static void print_instruction(strbuf_t *sb, const hlo_instruction_t *in, bool is_root) {
  strbuf_printf(sb, "  %s%%%s = ", is_root ? "ROOT " : "", in->name);
  strbuf_printf(sb, "%s%s(", hlo_opcode_is_chlo(in->opcode) ? "chlo." : "stablehlo.",
                hlo_opcode_name(in->opcode));
  for (int k = 0; k < in->operand_count; k++)
    strbuf_printf(sb, "%s%%%s", k ? ", " : "", in->operands[k]->name);
  strbuf_append(sb, ")");
  if (in->literal) {
    strbuf_append(sb, " ");
    print_literal(sb, in->literal);
  }
  print_attrs(sb, in);
  if (in->called_count) {
    strbuf_append(sb, " calls = [");
    for (int k = 0; k < in->called_count; k++)
      strbuf_printf(sb, "%s@%s", k ? ", " : "", in->called_computations[k]->name);
    strbuf_append(sb, "]");
  }
  strbuf_append(sb, " : ");
  print_shape(sb, &in->shape);
  if (in->loc.line) strbuf_printf(sb, "  // %s:%d:%d", in->loc.file ? in->loc.file : "", in->loc.line, in->loc.col);
  strbuf_append(sb, "\n");
}

static void print_computation(strbuf_t *sb, const hlo_module_t *m, const hlo_computation_t *c) {
  strbuf_printf(sb, "func.func %s@%s(", c == m->entry_computation ? "public " : "private ", c->name);
  for (int i = 0; i < c->parameter_count; i++) {
    strbuf_printf(sb, "%s%%%s: ", i ? ", " : "", c->parameters[i]->name);
    print_shape(sb, &c->parameters[i]->shape);
  }
  strbuf_append(sb, ") -> ");
  if (c->root) print_shape(sb, &c->root->shape);
  else strbuf_append(sb, "()");
  strbuf_append(sb, " {\n");
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (in->opcode == HLO_OPCODE_PARAMETER) continue;
    print_instruction(sb, in, in == c->root);
  }
  if (c->root) strbuf_printf(sb, "  return %%%s\n", c->root->name);
  strbuf_append(sb, "}\n");
}

char *hlo_module_to_string(const hlo_module_t *module) {
  if (!module) return NULL;
  strbuf_t sb;
  strbuf_init(&sb, module->arena.allocator);
  strbuf_printf(&sb, "module @%s {\n", module->name ? module->name : "module");
  for (int i = 0; i < module->computation_count; i++) {
    if (i) strbuf_append(&sb, "\n");
    print_computation(&sb, module, module->computations[i]);
  }
  strbuf_append(&sb, "}\n");
  return strbuf_take(&sb);
}
