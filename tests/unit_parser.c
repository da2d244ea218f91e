/*
 * Tests for the StableHLO text parser (hlo/parser.c), the literal helpers
 * (hlo/literal.c), call inlining and the printer.
 *
 * Small programs check opcodes, shapes, attributes and literal bytes;
 * malformed programs check the exact "file:line:col: message"; prefixes
 * and mutations of a program check that no input crashes the parser; and
 * one test parses every conformance program under /work/shared (skipped
 * when that directory is absent).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>

#include "hlo/hlo.h"
#include "hlo/literal.h"
#include "tests/test_support.h"

/* ---------------------------------------------------------- helpers */

static hlo_module_t *parse_opts(const char *text, const hlo_parse_options_t *opts) {
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(text, strlen(text), "t.mlir", opts, &m);
  if (st) {
    fprintf(stderr, "unexpected parse error: %s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return NULL;
  }
  return m;
}

static hlo_module_t *parse_ok(const char *text) { return parse_opts(text, NULL); }

/* Parses |text| expecting failure; asserts the message equals |expected|. */
static void expect_error(const char *text, const char *expected) {
  hlo_module_t *m = (hlo_module_t *)0x1;
  vkhlo_status_t st = hlo_parse(text, strlen(text), "t.mlir", NULL, &m);
  assert_non_null(st);
  assert_null(m);
  if (strcmp(vkhlo_status_message(st), expected) != 0)
    fprintf(stderr, "got:      %s\nexpected: %s\n", vkhlo_status_message(st), expected);
  assert_string_equal(vkhlo_status_message(st), expected);
  vkhlo_status_free(st);
}

static void expect_error_containing(const char *text, const char *expected) {
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(text, strlen(text), "t.mlir", NULL, &m);
  assert_non_null(st);
  assert_null(m);
  bool found = strstr(vkhlo_status_message(st), expected) != NULL;
  if (!found) fprintf(stderr, "got: %s\n", vkhlo_status_message(st));
  vkhlo_status_free(st);
  assert_true(found);
}

static hlo_computation_t *entry(hlo_module_t *m) { return m->entry_computation; }

/* The |n|-th non-parameter instruction of the entry computation. */
static hlo_instruction_t *nth(hlo_module_t *m, int n) {
  hlo_computation_t *c = entry(m);
  for (int i = 0; i < c->instruction_count; i++) {
    if (c->instructions[i]->opcode == HLO_OPCODE_PARAMETER) continue;
    if (n-- == 0) return c->instructions[i];
  }
  return NULL;
}

/* First instruction with |op| in the entry computation. */
static hlo_instruction_t *find_op(hlo_module_t *m, hlo_opcode_t op) {
  hlo_computation_t *c = entry(m);
  for (int i = 0; i < c->instruction_count; i++)
    if (c->instructions[i]->opcode == op) return c->instructions[i];
  return NULL;
}

static void assert_dims(hlo_dims_t d, int count, ...) {
  va_list ap;
  va_start(ap, count);
  assert_int_equal(d.count, count);
  for (int i = 0; i < count; i++) assert_int_equal(d.data[i], va_arg(ap, int));
  va_end(ap);
}

static void assert_shape(const hlo_shape_t *s, hlo_element_type_t t, int rank, ...) {
  va_list ap;
  va_start(ap, rank);
  assert_int_equal(s->element_type, t);
  assert_int_equal(s->rank, rank);
  for (int i = 0; i < rank; i++) {
    assert_int_equal(s->dimensions[i], va_arg(ap, int));
    assert_int_equal(s->minor_to_major[i], rank - 1 - i);
  }
  va_end(ap);
}

/* Literal of the constant at |n| (non-parameter index) in the entry. */
static const hlo_literal_t *constant_at(hlo_module_t *m, int n) {
  hlo_instruction_t *in = nth(m, n);
  assert_non_null(in);
  assert_int_equal(in->opcode, HLO_OPCODE_CONSTANT);
  assert_non_null(in->literal);
  return in->literal;
}

/* ---------------------------------------------------------- ops */

static void test_pretty_and_generic_elementwise(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
      "  %0 = stablehlo.add %a, %b : tensor<2x3xf32>\n"
      "  %1 = \"stablehlo.multiply\"(%0, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>\n"
      "  %2 = stablehlo.negate %1 : tensor<2x3xf32>\n"
      "  return %2 : tensor<2x3xf32>\n"
      "}\n");
  assert_non_null(m);
  hlo_computation_t *c = entry(m);
  assert_int_equal(c->parameter_count, 2);
  assert_int_equal(m->computation_count, 1);
  hlo_instruction_t *add = nth(m, 0), *mul = nth(m, 1), *neg = nth(m, 2);
  assert_int_equal(add->opcode, HLO_OPCODE_ADD);
  assert_shape(&add->shape, HLO_F32, 2, 2, 3);
  assert_ptr_equal(add->operands[0], c->parameters[0]);
  assert_ptr_equal(add->operands[1], c->parameters[1]);
  assert_int_equal(add->loc.line, 2);
  assert_int_equal(add->loc.col, 3);
  assert_int_equal(mul->opcode, HLO_OPCODE_MULTIPLY);
  assert_ptr_equal(mul->operands[0], add);
  assert_int_equal(neg->opcode, HLO_OPCODE_NEGATE);
  assert_ptr_equal(c->root, neg);
  hlo_module_destroy(m);
}

static void test_compare_select_convert(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.compare  LT, %a, %b,  SIGNED : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
      "  %1 = stablehlo.select %0, %a, %b : tensor<4xi1>, tensor<4xi32>\n"
      "  %2 = stablehlo.convert %1 : (tensor<4xi32>) -> tensor<4xf32>\n"
      "  %3 = \"stablehlo.compare\"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GE>,"
      " compare_type = #stablehlo<comparison_type UNSIGNED>} : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
      "  %4 = stablehlo.compare EQ, %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>\n"
      "  return %2 : tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *cmp = nth(m, 0);
  assert_int_equal(cmp->opcode, HLO_OPCODE_COMPARE);
  assert_int_equal(cmp->attrs.comparison_direction, HLO_CMP_LT);
  assert_int_equal(cmp->attrs.compare_type, HLO_CMP_TYPE_SIGNED);
  assert_shape(&cmp->shape, HLO_PRED, 1, 4);
  hlo_instruction_t *sel = nth(m, 1);
  assert_int_equal(sel->opcode, HLO_OPCODE_SELECT);
  assert_shape(&sel->shape, HLO_S32, 1, 4);
  assert_shape(&nth(m, 2)->shape, HLO_F32, 1, 4);
  assert_int_equal(nth(m, 3)->attrs.comparison_direction, HLO_CMP_GE);
  assert_int_equal(nth(m, 3)->attrs.compare_type, HLO_CMP_TYPE_UNSIGNED);
  assert_int_equal(nth(m, 4)->attrs.compare_type, HLO_CMP_TYPE_NOTYPE);
  hlo_module_destroy(m);
}

static void test_shape_ops(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "module @m attributes {mhlo.num_partitions = 1 : i32} {\n"
      "func.func public @main(%x: tensor<2x3xf32> {mhlo.sharding = \"{replicated}\"}) -> (tensor<3x2xf32> {jax.result_info = \"\"}) {\n"
      "  %0 = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<4x2x3xf32>\n"
      "  %1 = stablehlo.transpose %x, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  %2 = stablehlo.slice %x [0:2, 1:3:2] : (tensor<2x3xf32>) -> tensor<2x1xf32>\n"
      "  %3 = stablehlo.iota dim = 1 : tensor<2x5xi32>\n"
      "  %4 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>\n"
      "  %5 = stablehlo.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>\n"
      "  %cst = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %6 = stablehlo.pad %x, %cst, low = [0, 1], high = [1, -1], interior = [0, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x3xf32>\n"
      "  %7 = stablehlo.reverse %x, dims = [1] : tensor<2x3xf32>\n"
      "  %8 = \"stablehlo.transpose\"(%x) {permutation = array<i64: 1,0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>\n"
      "  %9 = \"stablehlo.broadcast_in_dim\"(%cst) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2xf32>\n"
      "  return %1 : tensor<3x2xf32>\n"
      "}\n"
      "}\n"
      "#loc1 = loc(\"x.py\":1:2)\n");
  assert_non_null(m);
  assert_string_equal(m->name, "m");
  assert_dims(nth(m, 0)->attrs.broadcast_dimensions, 2, 1, 2);
  assert_shape(&nth(m, 0)->shape, HLO_F32, 3, 4, 2, 3);
  assert_dims(nth(m, 1)->attrs.permutation, 2, 1, 0);
  hlo_instruction_t *sl = nth(m, 2);
  assert_dims(sl->attrs.start_indices, 2, 0, 1);
  assert_dims(sl->attrs.limit_indices, 2, 2, 3);
  assert_dims(sl->attrs.strides, 2, 1, 2);
  assert_int_equal(nth(m, 3)->opcode, HLO_OPCODE_IOTA);
  assert_int_equal(nth(m, 3)->attrs.dimension, 1);
  assert_int_equal(nth(m, 4)->attrs.dimension, 0);
  assert_int_equal(nth(m, 4)->operand_count, 2);
  hlo_instruction_t *pad = nth(m, 7);
  assert_int_equal(pad->opcode, HLO_OPCODE_PAD);
  assert_dims(pad->attrs.edge_padding_low, 2, 0, 1);
  assert_dims(pad->attrs.edge_padding_high, 2, 1, -1);
  assert_dims(pad->attrs.interior_padding, 2, 0, 0);
  assert_dims(nth(m, 8)->attrs.dimensions, 1, 1);
  assert_dims(nth(m, 9)->attrs.permutation, 2, 1, 0);
  assert_int_equal(nth(m, 10)->attrs.broadcast_dimensions.count, 0);
  hlo_module_destroy(m);
}

static void test_dot_gather_conv(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %i: tensor<3x1xi32>,"
      " %img: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x16xf32>) -> tensor<2x3x5xf32> {\n"
      "  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1],"
      " precision = [DEFAULT, DEFAULT] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
      "  %1 = \"stablehlo.gather\"(%a, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1, 2],"
      " collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,"
      " slice_sizes = array<i64: 1, 3, 4>}> : (tensor<2x3x4xf32>, tensor<3x1xi32>) -> tensor<3x3x4xf32>\n"
      "  %2 = stablehlo.convolution(%img, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],"
      " window = {stride = [2, 1], pad = [[1, 1], [0, 2]], rhs_dilate = [1, 2]}"
      " {batch_group_count = 1 : i64, feature_group_count = 1 : i64} :"
      " (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x4x16xf32>\n"
      "  %3 = \"stablehlo.dot_general\"(%a, %b) <{dot_dimension_numbers = #stablehlo.dot<"
      "lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2],"
      " rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision DEFAULT>,"
      " #stablehlo<precision DEFAULT>]}> : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>\n"
      "  %4 = stablehlo.convolution(%img, %k) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, 1, 0, f],"
      " window = {} {batch_group_count = 1 : i64, feature_group_count = 3 : i64} :"
      " (tensor<1x8x8x3xf32>, tensor<3x3x3x16xf32>) -> tensor<1x4x4x16xf32>\n"
      "  return %0 : tensor<2x3x5xf32>\n"
      "}\n");
  assert_non_null(m);
  for (int k = 0; k <= 3; k += 3) {
    hlo_instruction_t *dot = nth(m, k);
    assert_int_equal(dot->opcode, HLO_OPCODE_DOT_GENERAL);
    assert_dims(dot->attrs.lhs_batching_dimensions, 1, 0);
    assert_dims(dot->attrs.rhs_batching_dimensions, 1, 0);
    assert_dims(dot->attrs.lhs_contracting_dimensions, 1, 2);
    assert_dims(dot->attrs.rhs_contracting_dimensions, 1, 1);
  }
  hlo_instruction_t *g = nth(m, 1);
  assert_int_equal(g->opcode, HLO_OPCODE_GATHER);
  assert_dims(g->attrs.offset_dims, 2, 1, 2);
  assert_dims(g->attrs.collapsed_slice_dims, 1, 0);
  assert_dims(g->attrs.start_index_map, 1, 0);
  assert_int_equal(g->attrs.index_vector_dim, 1);
  assert_dims(g->attrs.slice_sizes, 3, 1, 3, 4);
  hlo_instruction_t *cv = nth(m, 2);
  assert_int_equal(cv->opcode, HLO_OPCODE_CONVOLUTION);
  assert_int_equal(cv->attrs.input_batch_dimension, 0);
  assert_int_equal(cv->attrs.input_feature_dimension, 3);
  assert_dims(cv->attrs.input_spatial_dimensions, 2, 1, 2);
  assert_int_equal(cv->attrs.kernel_input_feature_dimension, 2);
  assert_int_equal(cv->attrs.kernel_output_feature_dimension, 3);
  assert_dims(cv->attrs.kernel_spatial_dimensions, 2, 0, 1);
  assert_dims(cv->attrs.output_spatial_dimensions, 2, 1, 2);
  assert_dims(cv->attrs.window_strides, 2, 2, 1);
  assert_dims(cv->attrs.padding, 4, 1, 1, 0, 2);
  assert_dims(cv->attrs.lhs_dilation, 2, 1, 1);
  assert_dims(cv->attrs.rhs_dilation, 2, 1, 2);
  assert_int_equal(cv->attrs.feature_group_count, 1);
  hlo_instruction_t *cv2 = nth(m, 4);
  assert_int_equal(cv2->attrs.input_feature_dimension, 1);
  assert_dims(cv2->attrs.input_spatial_dimensions, 2, 2, 3);
  assert_int_equal(cv2->attrs.kernel_output_feature_dimension, 0);
  assert_dims(cv2->attrs.output_spatial_dimensions, 2, 2, 1); /* [b, 1, 0, f] */
  assert_dims(cv2->attrs.window_strides, 2, 1, 1);
  assert_dims(cv2->attrs.padding, 4, 0, 0, 0, 0);
  assert_int_equal(cv2->attrs.feature_group_count, 3);
  hlo_module_destroy(m);
}

static void test_reduce_forms(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4x5xf32>, %y: tensor<4x5xi32>) -> (tensor<4xf32>, tensor<4xi32>) {\n"
      "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %ci = stablehlo.constant dense<0> : tensor<i32>\n"
      "  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] :"
      " (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>\n"
      "  %1:2 = stablehlo.reduce(%x init: %c), (%y init: %ci) across dimensions = [1] :"
      " (tensor<4x5xf32>, tensor<4x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)\n"
      "   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    %t = stablehlo.maximum %ai, %bi : tensor<i32>\n"
      "    stablehlo.return %s, %t : tensor<f32>, tensor<i32>\n"
      "  }\n"
      "  return %0, %1#1 : tensor<4xf32>, tensor<4xi32>\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *r0 = nth(m, 2);
  assert_int_equal(r0->opcode, HLO_OPCODE_REDUCE);
  assert_int_equal(r0->operand_count, 2);
  assert_dims(r0->attrs.dimensions, 1, 1);
  assert_int_equal(r0->called_count, 1);
  hlo_computation_t *body = r0->called_computations[0];
  assert_int_equal(body->parameter_count, 2);
  assert_int_equal(body->root->opcode, HLO_OPCODE_ADD);
  assert_shape(&body->parameters[0]->shape, HLO_F32, 0);

  hlo_instruction_t *r1 = nth(m, 3);
  assert_int_equal(r1->opcode, HLO_OPCODE_REDUCE);
  assert_int_equal(r1->operand_count, 4);
  assert_int_equal(r1->shape.element_type, HLO_TUPLE);
  assert_int_equal(r1->shape.tuple_count, 2);
  hlo_computation_t *b2 = r1->called_computations[0];
  /* Block arguments: (acc0, acc1, val0, val1). */
  assert_int_equal(b2->parameter_count, 4);
  assert_int_equal(b2->parameters[0]->shape.element_type, HLO_F32);
  assert_int_equal(b2->parameters[1]->shape.element_type, HLO_S32);
  assert_int_equal(b2->parameters[2]->shape.element_type, HLO_F32);
  assert_int_equal(b2->root->opcode, HLO_OPCODE_TUPLE);
  assert_ptr_equal(b2->root->operands[1]->operands[0], b2->parameters[1]);
  assert_ptr_equal(b2->root->operands[1]->operands[1], b2->parameters[3]);
  /* get_tuple_elements follow the op. */
  hlo_instruction_t *g0 = nth(m, 4), *g1 = nth(m, 5);
  assert_int_equal(g0->opcode, HLO_OPCODE_GET_TUPLE_ELEMENT);
  assert_int_equal(g0->attrs.index, 0);
  assert_int_equal(g1->attrs.index, 1);
  assert_ptr_equal(g1->operands[0], r1);
  hlo_instruction_t *root = entry(m)->root;
  assert_int_equal(root->opcode, HLO_OPCODE_TUPLE);
  assert_ptr_equal(root->operands[0], r0);
  assert_ptr_equal(root->operands[1], g1);
  /* callees before the entry */
  assert_ptr_equal(m->computations[m->computation_count - 1], entry(m));
  assert_int_equal(m->computation_count, 3);
  hlo_module_destroy(m);
}

static void test_generic_regions(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {\n"
      "  %0 = \"stablehlo.sort\"(%x) <{dimension = 0 : i64, is_stable = true}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %c = stablehlo.compare  LT, %a, %b,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %c : tensor<i1>\n"
      "  }) : (tensor<5xf32>) -> tensor<5xf32>\n"
      "  %1 = \"stablehlo.scatter\"(%0, %i, %u) <{scatter_dimension_numbers = #stablehlo.scatter<"
      "inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,"
      " unique_indices = true}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    stablehlo.return %b : tensor<f32>\n"
      "  }) : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>\n"
      "  %c0 = stablehlo.constant dense<0.0> : tensor<f32>\n"
      "  %2 = \"stablehlo.reduce_window\"(%1, %c0) <{padding = dense<[[1, 0]]> : tensor<1x2xi64>,"
      " window_dimensions = array<i64: 2>}> ({\n"
      "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
      "    %s = stablehlo.add %a, %b : tensor<f32>\n"
      "    stablehlo.return %s : tensor<f32>\n"
      "  }) : (tensor<5xf32>, tensor<f32>) -> tensor<5xf32>\n"
      "  return %2 : tensor<5xf32>\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *sort = nth(m, 0);
  assert_int_equal(sort->opcode, HLO_OPCODE_SORT);
  assert_int_equal(sort->attrs.dimension, 0);
  assert_true(sort->attrs.is_stable);
  assert_int_equal(sort->called_count, 1);
  assert_int_equal(sort->called_computations[0]->root->opcode, HLO_OPCODE_COMPARE);
  hlo_instruction_t *sc = nth(m, 1);
  assert_int_equal(sc->opcode, HLO_OPCODE_SCATTER);
  assert_dims(sc->attrs.inserted_window_dims, 1, 0);
  assert_dims(sc->attrs.scatter_dims_to_operand_dims, 1, 0);
  assert_int_equal(sc->attrs.update_window_dims.count, 0);
  assert_int_equal(sc->attrs.index_vector_dim, 1);
  assert_true(sc->attrs.unique_indices);
  assert_ptr_equal(sc->called_computations[0]->root, sc->called_computations[0]->parameters[1]);
  hlo_instruction_t *rw = nth(m, 3);
  assert_int_equal(rw->opcode, HLO_OPCODE_REDUCE_WINDOW);
  assert_dims(rw->attrs.padding, 2, 1, 0);
  assert_dims(rw->attrs.window_dimensions, 1, 2);
  assert_dims(rw->attrs.window_strides, 1, 1); /* default */
  assert_dims(rw->attrs.base_dilations, 1, 1);
  hlo_module_destroy(m);
}

static void test_while_and_captures(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<f32>) -> tensor<f32> {\n"
      "  %c = stablehlo.constant dense<2.0> : tensor<f32>\n"
      "  %i = stablehlo.constant dense<0> : tensor<i64>\n"
      "  %lim = stablehlo.constant dense<3> : tensor<i64>\n"
      "  %r:2 = stablehlo.while(%a = %x, %n = %i) : tensor<f32>, tensor<i64>\n"
      "   cond {\n"
      "    %p = stablehlo.compare LT, %n, %lim : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
      "    stablehlo.return %p : tensor<i1>\n"
      "  } do {\n"
      "    %one = stablehlo.constant dense<1> : tensor<i64>\n"
      "    %m = stablehlo.multiply %a, %c : tensor<f32>\n"
      "    %n2 = stablehlo.add %n, %one : tensor<i64>\n"
      "    stablehlo.return %m, %n2 : tensor<f32>, tensor<i64>\n"
      "  }\n"
      "  %pr = stablehlo.constant dense<true> : tensor<i1>\n"
      "  %z = \"stablehlo.if\"(%pr) ({\n"
      "    stablehlo.return %r#0 : tensor<f32>\n"
      "  }, {\n"
      "    %q = stablehlo.add %c, %x : tensor<f32>\n"
      "    stablehlo.return %q : tensor<f32>\n"
      "  }) : (tensor<i1>) -> tensor<f32>\n"
      "  %w = \"stablehlo.while\"(%x) ({\n"
      "  ^bb0(%v: tensor<f32>):\n"
      "    %t = stablehlo.compare GT, %v, %c : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
      "    stablehlo.return %t : tensor<i1>\n"
      "  }, {\n"
      "  ^bb0(%v: tensor<f32>):\n"
      "    stablehlo.return %v : tensor<f32>\n"
      "  }) : (tensor<f32>) -> tensor<f32>\n"
      "  return %z : tensor<f32>\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *w = find_op(m, HLO_OPCODE_WHILE);
  assert_non_null(w);
  /* 2 loop values + captures %lim (cond) and %c (body), cond's first. */
  assert_int_equal(w->operand_count, 4);
  assert_int_equal(w->operands[2]->opcode, HLO_OPCODE_CONSTANT);
  assert_int_equal(w->operands[2]->shape.element_type, HLO_S64);
  assert_int_equal(w->operands[3]->shape.element_type, HLO_F32);
  assert_int_equal(w->shape.element_type, HLO_TUPLE);
  assert_int_equal(w->shape.tuple_count, 2);
  hlo_computation_t *cond = w->called_computations[0], *body = w->called_computations[1];
  assert_int_equal(cond->parameter_count, 4);
  assert_int_equal(body->parameter_count, 4);
  for (int k = 0; k < 4; k++) {
    assert_int_equal(cond->parameters[k]->parameter_number, k);
    assert_int_equal(body->parameters[k]->parameter_number, k);
    assert_true(hlo_shape_equal(&cond->parameters[k]->shape, &body->parameters[k]->shape));
  }
  assert_ptr_equal(cond->root->operands[1], cond->parameters[2]);
  assert_int_equal(body->root->opcode, HLO_OPCODE_TUPLE);
  assert_int_equal(body->root->operand_count, 2);
  assert_ptr_equal(body->root->operands[0]->operands[1], body->parameters[3]);
  /* Parameters come first in the instruction list. */
  for (int k = 0; k < 4; k++) assert_int_equal(body->instructions[k]->opcode, HLO_OPCODE_PARAMETER);

  hlo_instruction_t *iff = find_op(m, HLO_OPCODE_IF);
  assert_non_null(iff);
  /* pred + captures in order: %r#0 (gte), %c, %x */
  assert_int_equal(iff->operand_count, 4);
  assert_int_equal(iff->operands[1]->opcode, HLO_OPCODE_GET_TUPLE_ELEMENT);
  assert_int_equal(iff->operands[3]->opcode, HLO_OPCODE_PARAMETER);
  assert_shape(&iff->shape, HLO_F32, 0);
  hlo_computation_t *t = iff->called_computations[0], *f = iff->called_computations[1];
  assert_int_equal(t->parameter_count, 3);
  assert_int_equal(f->parameter_count, 3);
  assert_ptr_equal(t->root, t->parameters[0]);
  assert_ptr_equal(f->root->operands[0], f->parameters[1]);
  assert_ptr_equal(f->root->operands[1], f->parameters[2]);

  /* A one-value generic while keeps the plain shape. */
  hlo_instruction_t *w2 = entry(m)->instructions[entry(m)->instruction_count - 1];
  assert_int_equal(w2->opcode, HLO_OPCODE_WHILE);
  assert_shape(&w2->shape, HLO_F32, 0);
  assert_int_equal(w2->operand_count, 2);
  assert_int_equal(w2->called_computations[1]->parameter_count, 2);
  hlo_module_destroy(m);
}

static void test_case_generic_forms(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {\n"
      "  %0:2 = stablehlo.case(%i) ({\n"
      "    stablehlo.return %x, %x : tensor<f32>, tensor<f32>\n"
      "  }, {\n"
      "    %n = \"stablehlo.negate\"(%x) : (tensor<f32>) -> tensor<f32>\n"
      "    \"stablehlo.return\"(%n, %x) : (tensor<f32>, tensor<f32>) -> ()\n"
      "  }, {\n"
      "    %c = \"stablehlo.constant\"() <{value = dense<1.0> : tensor<f32>}> : () -> tensor<f32>\n"
      "    stablehlo.return %c, %c : tensor<f32>, tensor<f32>\n"
      "  }) : (tensor<i32>) -> (tensor<f32>, tensor<f32>)\n"
      "  %1 = \"func.call\"(%0#1) <{callee = @neg}> : (tensor<f32>) -> tensor<f32>\n"
      "  \"stablehlo.custom_call\"(%1, %x) <{call_target_name = \"check.expect_eq\", has_side_effect = true}> :"
      " (tensor<f32>, tensor<f32>) -> ()\n"
      "  \"func.return\"(%1) : (tensor<f32>) -> ()\n"
      "}\n"
      "func.func private @neg(%a: tensor<f32>) -> tensor<f32> {\n"
      "  %0 = stablehlo.negate %a : tensor<f32>\n"
      "  return %0 : tensor<f32>\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *cs = find_op(m, HLO_OPCODE_CASE);
  assert_non_null(cs);
  assert_int_equal(cs->called_count, 3);
  assert_int_equal(cs->operand_count, 2); /* index + captured %x */
  for (int k = 0; k < 3; k++) assert_int_equal(cs->called_computations[k]->parameter_count, 1);
  assert_int_equal(cs->called_computations[2]->instructions[1]->opcode, HLO_OPCODE_CONSTANT);
  hlo_instruction_t *chk = find_op(m, HLO_OPCODE_CHECK);
  assert_non_null(chk);
  assert_int_equal(chk->operands[0]->opcode, HLO_OPCODE_NEGATE);
  assert_int_equal(chk->operands[0]->operands[0]->opcode, HLO_OPCODE_GET_TUPLE_ELEMENT);
  assert_int_equal(chk->operands[0]->operands[0]->attrs.index, 1);
  assert_ptr_equal(entry(m)->root, chk->operands[0]);
  hlo_module_destroy(m);
}

static void test_call_inlining(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "module @jit {\n"
      "  func.func public @main() -> (tensor<2xi64>) {\n"
      "    %0 = call @inputs() : () -> tensor<2xi64>\n"
      "    %1:2 = func.call @two(%0) : (tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)\n"
      "    %2 = stablehlo.add %1#0, %1#1 : tensor<2xi64>\n"
      "    %3 = call @id(%2) : (tensor<2xi64>) -> tensor<2xi64>\n"
      "    return %3 : tensor<2xi64>\n"
      "  }\n"
      "  func.func private @inputs() -> (tensor<2xi64> {mhlo.layout_mode = \"default\"}) {\n"
      "    %c = stablehlo.constant dense<[3, -4]> : tensor<2xi64>\n"
      "    return %c : tensor<2xi64>\n"
      "  }\n"
      "  func.func private @two(%a: tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>) {\n"
      "    %n = stablehlo.negate %a : tensor<2xi64>\n"
      "    %s = call @id(%n) : (tensor<2xi64>) -> tensor<2xi64>\n"
      "    return %s, %a : tensor<2xi64>, tensor<2xi64>\n"
      "  }\n"
      "  func.func private @id(%a: tensor<2xi64>) -> tensor<2xi64> {\n"
      "    func.return %a : tensor<2xi64>\n"
      "  }\n"
      "}\n");
  assert_non_null(m);
  assert_int_equal(m->computation_count, 1);
  hlo_computation_t *c = entry(m);
  assert_string_equal(c->name, "main");
  assert_int_equal(c->parameter_count, 0);
  /* constant, negate, add */
  assert_int_equal(c->instruction_count, 3);
  hlo_instruction_t *cst = c->instructions[0], *neg = c->instructions[1], *add = c->instructions[2];
  assert_int_equal(cst->opcode, HLO_OPCODE_CONSTANT);
  assert_int_equal(neg->opcode, HLO_OPCODE_NEGATE);
  assert_ptr_equal(neg->operands[0], cst);
  assert_int_equal(add->opcode, HLO_OPCODE_ADD);
  assert_ptr_equal(add->operands[0], neg);
  assert_ptr_equal(add->operands[1], cst);
  assert_ptr_equal(c->root, add);
  hlo_module_destroy(m);
}

static void test_checks_and_custom_call(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @check() {\n"
      "  %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  check.expect_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>\n"
      "  check.expect_almost_eq_const %a, dense<1.0> : tensor<2xf32> {tolerance = 0.5 : f64}\n"
      "  check.expect_almost_eq %a, %a, tolerance = 0.25 : tensor<2xf32>\n"
      "  check.expect_close %a, %a, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>\n"
      "  stablehlo.custom_call @check.expect_close(%a, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()\n"
      "  %r = stablehlo.custom_call @my_target(%a) {backend_config = \"cfg\", has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>\n"
      "  func.return\n"
      "}\n");
  assert_non_null(m);
  hlo_instruction_t *c1 = nth(m, 2);
  assert_int_equal(nth(m, 1)->opcode, HLO_OPCODE_CONSTANT);
  assert_int_equal(c1->opcode, HLO_OPCODE_CHECK);
  assert_int_equal(c1->attrs.check_kind, HLO_CHECK_EXPECT_EQ);
  assert_int_equal(c1->operand_count, 2);
  assert_ptr_equal(c1->operands[1], nth(m, 1));
  assert_int_equal(c1->shape.element_type, HLO_TUPLE);
  assert_int_equal(c1->shape.tuple_count, 0);
  hlo_instruction_t *c2 = nth(m, 4);
  assert_int_equal(c2->attrs.check_kind, HLO_CHECK_EXPECT_ALMOST_EQ);
  assert_true(c2->attrs.tolerance == 0.5);
  hlo_instruction_t *c3 = nth(m, 5);
  assert_true(c3->attrs.tolerance == 0.25);
  hlo_instruction_t *c4 = nth(m, 6);
  assert_int_equal(c4->attrs.check_kind, HLO_CHECK_EXPECT_CLOSE);
  assert_int_equal(c4->attrs.max_ulp_difference, 3);
  hlo_instruction_t *c5 = nth(m, 7);
  assert_int_equal(c5->opcode, HLO_OPCODE_CHECK);
  assert_int_equal(c5->attrs.check_kind, HLO_CHECK_EXPECT_CLOSE);
  hlo_instruction_t *cc = nth(m, 8);
  assert_int_equal(cc->opcode, HLO_OPCODE_CUSTOM_CALL);
  assert_string_equal(cc->attrs.call_target_name, "my_target");
  assert_string_equal(cc->attrs.backend_config, "cfg");
  assert_true(cc->attrs.has_side_effect);
  /* The function returns nothing: the root is an empty tuple. */
  assert_int_equal(entry(m)->root->opcode, HLO_OPCODE_TUPLE);
  assert_int_equal(entry(m)->root->operand_count, 0);
  hlo_module_destroy(m);
}

static void test_chlo_and_misc(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(
      "func.func @main(%x: tensor<4xf32>, %y: tensor<4xui32>) -> tensor<2xf32> {\n"
      "  %0 = chlo.lgamma %x : tensor<4xf32> -> tensor<4xf32>\n"
      "  %1, %2 = chlo.top_k(%x, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)\n"
      "  %3 = chlo.next_after %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>\n"
      "  %4 = \"chlo.mulhi\"(%y, %y) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>\n"
      "  %5 = stablehlo.reduce_precision %x, format = e5m10 : tensor<4xf32>\n"
      "  %6 = stablehlo.fft %x, type = RFFT, length = [4] : (tensor<4xf32>) -> tensor<3xcomplex<f32>>\n"
      "  %7:2 = stablehlo.optimization_barrier %x, %y : tensor<4xf32>, tensor<4xui32>\n"
      "  %t = stablehlo.after_all : !stablehlo.token\n"
      "  %8, %9 = stablehlo.rng_bit_generator %y, algorithm = THREE_FRY : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2x2xui32>)\n"
      "  %10 = stablehlo.composite \"my.comp\" %x {composite_attributes = {n = 2 : i64}, decomposition = @impl} : (tensor<4xf32>) -> tensor<4xf32>\n"
      "  return %1 : tensor<2xf32>\n"
      "}\n"
      "func.func private @impl(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
      "  %0 = stablehlo.abs %a : tensor<4xf32>\n"
      "  return %0 : tensor<4xf32>\n"
      "}\n");
  assert_non_null(m);
  assert_int_equal(nth(m, 0)->opcode, HLO_OPCODE_CHLO_LGAMMA);
  hlo_instruction_t *tk = nth(m, 1);
  assert_int_equal(tk->opcode, HLO_OPCODE_CHLO_TOP_K);
  assert_int_equal(tk->attrs.k, 2);
  assert_int_equal(tk->shape.tuple_count, 2);
  assert_ptr_equal(entry(m)->root->operands[0], tk);
  assert_int_equal(find_op(m, HLO_OPCODE_CHLO_NEXT_AFTER)->operand_count, 2);
  assert_int_equal(find_op(m, HLO_OPCODE_CHLO_MULHI)->shape.element_type, HLO_U32);
  hlo_instruction_t *rp = find_op(m, HLO_OPCODE_REDUCE_PRECISION);
  assert_int_equal(rp->attrs.exponent_bits, 5);
  assert_int_equal(rp->attrs.mantissa_bits, 10);
  hlo_instruction_t *fft = find_op(m, HLO_OPCODE_FFT);
  assert_int_equal(fft->attrs.fft_type, 2);
  assert_dims(fft->attrs.fft_length, 1, 4);
  assert_int_equal(find_op(m, HLO_OPCODE_OPTIMIZATION_BARRIER)->shape.tuple_count, 2);
  assert_int_equal(find_op(m, HLO_OPCODE_AFTER_ALL)->shape.element_type, HLO_TOKEN);
  assert_int_equal(find_op(m, HLO_OPCODE_RNG_BIT_GENERATOR)->attrs.rng_algorithm, 1);
  hlo_instruction_t *comp = find_op(m, HLO_OPCODE_COMPOSITE);
  assert_string_equal(comp->attrs.call_target_name, "my.comp");
  assert_int_equal(comp->called_count, 1);
  assert_string_equal(comp->called_computations[0]->name, "impl");
  assert_int_equal(m->computation_count, 2);
  assert_ptr_equal(m->computations[0], comp->called_computations[0]);
  hlo_module_destroy(m);
}

/* ---------------------------------------------------------- literals */

#define CONST_FN(type, lit) \
  "func.func @main() -> " type " {\n  %0 = stablehlo.constant " lit " : " type "\n  return %0 : " type "\n}\n"

static const hlo_literal_t *lit_of(hlo_module_t *m) { return constant_at(m, 0); }

static void test_literals(void **state) {
  (void)state;
  hlo_module_t *m;
  /* Hex blob: raw little-endian bytes. */
  m = parse_ok(CONST_FN("tensor<2xf32>", "dense<\"0x0000803F00000040\">"));
  assert_non_null(m);
  const float *f = lit_of(m)->data;
  assert_true(f[0] == 1.0f && f[1] == 2.0f);
  hlo_module_destroy(m);
  /* A one-element blob is a splat. */
  m = parse_ok(CONST_FN("tensor<3xi16>", "dense<\"0x0500\">"));
  const int16_t *s16 = lit_of(m)->data;
  assert_true(s16[0] == 5 && s16[1] == 5 && s16[2] == 5);
  hlo_module_destroy(m);
  /* Splat and nested lists. */
  m = parse_ok(CONST_FN("tensor<2x2xf64>", "dense<1.5>"));
  const double *d = lit_of(m)->data;
  assert_true(d[0] == 1.5 && d[3] == 1.5);
  assert_int_equal(lit_of(m)->size_bytes, 32);
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<2x3xi32>", "dense<[[1, -2, 3], [4, 5, -2147483648]]>"));
  const int32_t *i32 = lit_of(m)->data;
  assert_int_equal(i32[1], -2);
  assert_int_equal(i32[5], INT32_MIN);
  hlo_module_destroy(m);
  /* Bools and i1 as integers. */
  m = parse_ok(CONST_FN("tensor<3xi1>", "dense<[true, false, true]>"));
  const uint8_t *b = lit_of(m)->data;
  assert_true(b[0] == 1 && b[1] == 0 && b[2] == 1);
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<2x1xi1>", "dense<[[0], [1]]>"));
  b = lit_of(m)->data;
  assert_true(b[0] == 0 && b[1] == 1);
  hlo_module_destroy(m);
  /* Complex pairs, hex float bits, inf. */
  m = parse_ok(CONST_FN("tensor<2xcomplex<f32>>", "dense<[(1.0, -2.5), (0x7FC00000, 3.0)]>"));
  f = lit_of(m)->data;
  assert_true(f[0] == 1.0f && f[1] == -2.5f && f[2] != f[2] && f[3] == 3.0f);
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<f32>", "dense<0xFF800000>"));
  f = lit_of(m)->data;
  assert_true(isinf(f[0]) && f[0] < 0);
  hlo_module_destroy(m);
  /* Unsigned 64-bit maximum, sub-byte sign/zero extension. */
  m = parse_ok(CONST_FN("tensor<ui64>", "dense<18446744073709551615>"));
  assert_true(*(const uint64_t *)lit_of(m)->data == UINT64_MAX);
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<3xi4>", "dense<[-8, 7, -1]>"));
  const int8_t *i8 = lit_of(m)->data;
  assert_true(i8[0] == -8 && i8[1] == 7 && i8[2] == -1);
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<2xui2>", "dense<[3, 0]>"));
  b = lit_of(m)->data;
  assert_true(b[0] == 3 && b[1] == 0);
  hlo_module_destroy(m);
  /* f16 / bf16 rounding to nearest even. */
  m = parse_ok(CONST_FN("tensor<4xf16>", "dense<[1.0, 0.1, 65504.0, 1.00048828125]>"));
  const uint16_t *h = lit_of(m)->data;
  assert_int_equal(h[0], 0x3C00);
  assert_int_equal(h[1], 0x2E66);
  assert_int_equal(h[2], 0x7BFF);
  assert_int_equal(h[3], 0x3C00); /* exactly halfway between 0x3C00 and 0x3C01: even */
  hlo_module_destroy(m);
  m = parse_ok(CONST_FN("tensor<3xbf16>", "dense<[1.0, 3.140625, -2.0e+00]>"));
  h = lit_of(m)->data;
  assert_int_equal(h[0], 0x3F80);
  assert_int_equal(h[1], 0x4049);
  assert_int_equal(h[2], 0xC000);
  hlo_module_destroy(m);
  /* Empty tensor. */
  m = parse_ok(CONST_FN("tensor<0xf32>", "dense<>"));
  assert_int_equal(lit_of(m)->size_bytes, 0);
  hlo_module_destroy(m);
}

static void test_float_helpers(void **state) {
  (void)state;
  assert_int_equal(hlo_float_to_f16_bits(1.0), 0x3C00);
  assert_int_equal(hlo_float_to_f16_bits(-0.0), 0x8000);
  assert_int_equal(hlo_float_to_f16_bits(65520.0), 0x7C00); /* rounds to inf */
  assert_int_equal(hlo_float_to_f16_bits(5.960464477539063e-08), 0x0001);
  assert_int_equal(hlo_float_to_f16_bits(NAN) & 0x7C00, 0x7C00);
  assert_int_equal(hlo_float_to_bf16_bits(1.0 / 3.0), 0x3EAB);
  assert_true(hlo_bf16_bits_to_double(0x3EAB) == 0.333984375);
  assert_true(hlo_f16_bits_to_double(0x7BFF) == 65504.0);
  uint64_t bits;
  assert_true(hlo_float_encode(HLO_F8E4M3FN, 448.0, &bits));
  assert_int_equal(bits, 0x7E);
  assert_true(hlo_float_encode(HLO_F8E4M3FN, 1000.0, &bits));
  assert_int_equal(bits, 0x7F); /* NaN: the type has no infinity */
  assert_true(hlo_float_encode(HLO_F8E5M2, 1.5, &bits));
  assert_int_equal(bits, 0x3E);
  assert_true(hlo_float_encode(HLO_F8E4M3FNUZ, -0.0, &bits));
  assert_int_equal(bits, 0);
  assert_true(hlo_float_encode(HLO_F4E2M1FN, 6.0, &bits));
  assert_int_equal(bits, 0x7);
  assert_true(hlo_float_encode(HLO_F8E8M0FNU, 4.0, &bits));
  assert_int_equal(bits, 129);
  assert_false(hlo_float_encode(HLO_S32, 1.0, &bits));
  for (int i = 0; i < 256; i++) { /* every finite f8E4M3FN value round-trips */
    double v = hlo_float_decode(HLO_F8E4M3FN, (uint64_t)i);
    if (v != v) continue;
    assert_true(hlo_float_encode(HLO_F8E4M3FN, v, &bits));
    assert_int_equal(bits == 0x80 ? 0x80 : bits, (uint64_t)i);
  }
}

static void test_elided_constants(void **state) {
  (void)state;
  const char *text = CONST_FN("tensor<64xf32>", "dense_resource<__elided__>");
  expect_error(text,
               "t.mlir:2:27: elided constant (dense_resource<__elided__>): pass "
               "--fill-elided=zeros|random");
  hlo_parse_options_t zeros = {NULL, 1, 0, NULL, NULL, 0};
  hlo_module_t *m = parse_opts(text, &zeros);
  assert_non_null(m);
  const float *f = lit_of(m)->data;
  for (int i = 0; i < 64; i++) assert_true(f[i] == 0.0f);
  hlo_module_destroy(m);
  hlo_parse_options_t rnd = {NULL, 2, 42, NULL, NULL, 0};
  m = parse_opts(text, &rnd);
  hlo_module_t *m2 = parse_opts(text, &rnd);
  f = lit_of(m)->data;
  bool nonzero = false;
  for (int i = 0; i < 64; i++) {
    assert_true(f[i] >= -1.0f && f[i] < 1.0f);
    nonzero |= f[i] != 0;
  }
  assert_true(nonzero);
  assert_memory_equal(lit_of(m)->data, lit_of(m2)->data, 64 * sizeof(float)); /* deterministic */
  hlo_module_destroy(m);
  hlo_module_destroy(m2);
}

/* ---------------------------------------------------------- errors */

/* An allocator refusing blocks over 1 GiB (ASan would abort on the 256 GiB
 * the C library's malloc may be asked for). */
static void *capped_malloc(void *user, size_t size) { return size > ((size_t)1 << 30) ? NULL : malloc(size); }
static void *capped_realloc(void *user, void *ptr, size_t size) {
  return size > ((size_t)1 << 30) ? NULL : realloc(ptr, size);
}
static void capped_free(void *user, void *ptr) { free(ptr); }

/* A constant larger than memory: RESOURCE_EXHAUSTED at the literal. */
static void test_constant_out_of_memory(void **state) {
  (void)state;
  const vkhlo_allocator_t capped = {NULL, capped_malloc, capped_realloc, capped_free};
  hlo_parse_options_t o = {NULL, 0, 0, &capped, NULL, 0};
  const char *text = CONST_FN("tensor<262144x262144xf32>", "dense<1.0>");
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(text, strlen(text), "t.mlir", &o, &m);
  assert_null(m);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_RESOURCE_EXHAUSTED);
  assert_string_equal(vkhlo_status_message(st), "t.mlir:2:27: out of host memory for the 274877906944 bytes "
                                                 "of a tensor<262144x262144xf32> constant");
  vkhlo_status_free(st);
}

/* Shardy's annotations and named computations vanish on one device, and
 * a manual computation over device parts is refused as UNIMPLEMENTED;
 * async_start / async_done leave their body's op in place. */
static void test_shardy_and_async(void **state) {
  (void)state;
  static const char text[] =
      "module @m {\n"
      "  sdy.mesh @mesh = <[\"x\"=2, \"y\"=1]>\n"
      "  func.func @main(%a: tensor<4x2xf32> {sdy.sharding = #sdy.sharding<@mesh, [{\"x\"}, {}]>}) -> tensor<4x2xf32> {\n"
      "    %0 = sdy.sharding_constraint %a <@mesh, [{}, {\"x\", ?}]> : tensor<4x2xf32>\n"
      "    %1 = sdy.named_computation<\"f\">(%0) in_shardings=[<@mesh, [{\"x\"}, {}]>] (%b: tensor<4x2xf32>) {\n"
      "      %n = stablehlo.negate %b : tensor<4x2xf32>\n"
      "      sdy.return %n : tensor<4x2xf32>\n"
      "    } : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "    %2 = sdy.manual_computation(%1) in_shardings=[<@mesh, [{\"y\"}, {}]>] out_shardings=[<@mesh, [{\"y\"}, {}]>] "
      "manual_axes={\"y\"} (%c: tensor<4x2xf32>) {\n"
      "      %e = stablehlo.exponential %c : tensor<4x2xf32>\n"
      "      sdy.return %e : tensor<4x2xf32>\n"
      "    } : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "    sdy.sharding_group %2 group_id=0 : tensor<4x2xf32>\n"
      "    %f = \"stablehlo.async_start\"(%2) ({\n"
      "    ^bb0(%d: tensor<4x2xf32>):\n"
      "      %s = \"stablehlo.slice\"(%d) {start_indices = array<i64: 0, 0>, limit_indices = array<i64: 4, 1>, "
      "strides = array<i64: 1, 1>} : (tensor<4x2xf32>) -> tensor<4x1xf32>\n"
      "      \"stablehlo.return\"(%s) : (tensor<4x1xf32>) -> ()\n"
      "    }) : (tensor<4x2xf32>) -> !stablehlo.future<tensor<4x1xf32>>\n"
      "    %g = \"stablehlo.async_done\"(%f) : (!stablehlo.future<tensor<4x1xf32>>) -> tensor<4x1xf32>\n"
      "    %3 = sdy.reshard %2 <@mesh, [{}, {}]> : tensor<4x2xf32>\n"
      "    %h = stablehlo.broadcast_in_dim %g, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x2xf32>\n"
      "    %4 = stablehlo.add %3, %h : tensor<4x2xf32>\n"
      "    return %4 : tensor<4x2xf32>\n"
      "  }\n"
      "}\n";
  hlo_module_t *m = parse_ok(text);
  assert_non_null(m);
  /* parameter, negate, exponential, slice, broadcast_in_dim, add: nothing else */
  hlo_computation_t *c = m->entry_computation;
  static const hlo_opcode_t want[] = {HLO_OPCODE_PARAMETER, HLO_OPCODE_NEGATE, HLO_OPCODE_EXPONENTIAL,
                                      HLO_OPCODE_SLICE, HLO_OPCODE_BROADCAST_IN_DIM, HLO_OPCODE_ADD};
  assert_int_equal(c->instruction_count, 6);
  for (int i = 0; i < 6; i++) assert_int_equal(c->instructions[i]->opcode, want[i]);
  assert_ptr_equal(c->instructions[2]->operands[0], c->instructions[1]);
  assert_ptr_equal(c->instructions[3]->operands[0], c->instructions[2]);
  assert_ptr_equal(c->root->operands[0], c->instructions[2]);
  hlo_module_destroy(m);

  static const char split[] =
      "sdy.mesh @mesh = <[\"x\"=2]>\n"
      "func.func @main(%a: tensor<4x2xf32>) -> tensor<4x2xf32> {\n"
      "  %0 = sdy.manual_computation(%a) in_shardings=[<@mesh, [{\"x\"}, {}]>] out_shardings=[<@mesh, [{\"x\"}, {}]>] "
      "manual_axes={\"x\"} (%b: tensor<2x2xf32>) {\n"
      "    sdy.return %b : tensor<2x2xf32>\n"
      "  } : (tensor<4x2xf32>) -> tensor<4x2xf32>\n"
      "  return %0 : tensor<4x2xf32>\n"
      "}\n";
  m = NULL;
  vkhlo_status_t st = hlo_parse(split, strlen(split), "t.mlir", NULL, &m);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_UNIMPLEMENTED);
  assert_string_equal(vkhlo_status_message(st),
                      "t.mlir:3:3: sdy.manual_computation: operand 0 is tensor<4x2xf32> but the body takes "
                      "tensor<2x2xf32> (each device's part: a program for several devices, and vkhlo runs one)");
  assert_null(m);
  vkhlo_status_free(st);
}

static void test_errors(void **state) {
  (void)state;
  expect_error("func.func @main() {\n  %0 = stablehlo.add %7, %7 : tensor<f32>\n  return\n}\n",
               "t.mlir:2:22: unknown value '%7'");
  expect_error("func.func @main() {\n  %0 = foo.bar %7 : tensor<f32>\n  return\n}\n",
               "t.mlir:2:8: unknown op 'foo.bar'");
  expect_error("func.func @main(%a: tensor<f32>) {\n  %0 = \"stablehlo.add\"(%a, %a : tensor<f32>\n}\n",
               "t.mlir:2:31: expected ')', found ':'");
  expect_error(CONST_FN("tensor<4xf32>", "dense<[1.0, 2.0, 3.0, 4.0, 5.0]>"),
               "t.mlir:2:27: literal has 5 elements but tensor<4xf32> needs 4");
  expect_error("func.func @main(%a: tensor<?x4xf32>) {\n  return\n}\n",
               "t.mlir:1:17: parameter 0 of '@main' has the dynamic type tensor<?x4xf32>: give the parameters' "
               "types to compile it (vkhlo_compile_options_t.parameter_types; vkhlo run --input=...)");
  expect_error("func.func @main(%a: tensor<*xf32>) {\n  return\n}\n",
               "t.mlir:1:28: unranked tensors are not supported");
  expect_error("func.func @main(%a: tensor<4x!quant.uniform<f32:f32, 1.0>>) {\n  return\n}\n",
               "t.mlir:1:45: unsupported storage type of a quantized type (i2..i32 or u2..u32)");
  expect_error("func.func @main(%a: tensor<4x!quant.uniform<i8:f32:0, {0.1, 0.2}>>) {\n  return\n}\n",
               "t.mlir:1:30: the quantization dimension and the number of scales do not fit the tensor's shape");
  expect_error("func.func @main(%a: tensor<4x!quant.uniform<i8:f32, -0.5:3>>) {\n  return\n}\n",
               "t.mlir:1:53: a quantized type's scale must be positive and its zero point within the storage range");
  expect_error("func.func @main(%a: tensor<4x!quant.calibrated<f32<-1.0:1.0>>>) {\n  return\n}\n",
               "t.mlir:1:30: unsupported element type (quantized types other than !quant.uniform are not supported)");
  expect_error("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = stablehlo.abs %a : tensor<4xf32>\n",
               "t.mlir:3:1: unexpected end of input (expected '}')");
  expect_error("func.func @main() {\n  %0 = call @nope() : () -> tensor<f32>\n  return\n}\n",
               "t.mlir:2:3: undefined function '@nope'");
  expect_error("func.func @main(%a: tensor<f32>) {\n  %0 = stablehlo.add %a : tensor<f32>\n  return\n}\n",
               "t.mlir:2:3: stablehlo.add: expected 2 operands, got 1");
  expect_error("func.func @main(%a: tensor<4xi32>) {\n  %0 = \"stablehlo.abs\"(%a) : (tensor<4xf32>) -> tensor<4xf32>\n"
               "  return\n}\n",
               "t.mlir:2:3: stablehlo.abs: operand 0 is tensor<4xi32> but its type is given as tensor<4xf32>");
  expect_error("func.func @main(%a: tensor<f32>) {\n"
               "  %0 = \"stablehlo.add\"(%a, %a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  return\n}\n",
               "t.mlir:2:3: stablehlo.add: expected 2 operands, got 3");
  expect_error("func.func @main(%x: tensor<4xf32>, %k: tensor<f32>) {\n"
               "  %c = stablehlo.constant dense<0.0> : tensor<f32>\n"
               "  %0 = stablehlo.reduce(%x init: %c) across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
               "   reducer(%a: tensor<f32>, %b: tensor<f32>) {\n"
               "    %s = stablehlo.add %a, %k : tensor<f32>\n"
               "    stablehlo.return %s : tensor<f32>\n"
               "  }\n  return\n}\n",
               "t.mlir:5:28: implicit capture in reduce region is not supported (value '%k')");
  expect_error("func.func @main(%a: tensor<4xf32>) {\n  %0 = stablehlo.abs %a : tensor<4xf32>\n  return %0 : tensor<4xi32>\n}\n",
               "t.mlir:3:15: return type tensor<4xi32> does not match the value's type tensor<4xf32>");
  expect_error(CONST_FN("tensor<i8>", "dense<300>"), "t.mlir:2:33: integer literal out of range for i8");
  expect_error(CONST_FN("tensor<ui8>", "dense<-1>"), "t.mlir:2:33: negative literal for unsigned type ui8");
  expect_error("", "t.mlir:1:1: no functions in input");
  expect_error("garbage", "t.mlir:1:1: expected 'func.func' or 'module', found 'garbage'");
  expect_error("func.func @main() {\n  \"unterminated\n}\n", "t.mlir:2:3: unterminated string");
  expect_error("func.func @f() {\n  return\n}\nfunc.func @f() {\n  return\n}\n",
               "t.mlir:4:11: redefinition of function '@f'");
  expect_error("func.func @main() {\n  %0 = call @main() : () -> ()\n  return\n}\n",
               "t.mlir:2:3: recursive call to '@main' cannot be inlined");
}

/* Deep nesting, truncation and mutation must give errors, never crashes. */
static const char *const robust_text =
    "module @m {\n"
    "func.func @main(%x: tensor<f32>, %v: tensor<4xi32>) -> tensor<f32> {\n"
    "  %c = stablehlo.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
    "  %cf = stablehlo.constant dense<(1.0, 2.0)> : tensor<complex<f32>>\n"
    "  %r:2 = stablehlo.while(%a = %x, %n = %c) : tensor<f32>, tensor<4xi32>\n"
    "   cond {\n"
    "    %p = stablehlo.constant dense<true> : tensor<i1>\n"
    "    stablehlo.return %p : tensor<i1>\n"
    "  } do {\n"
    "    %s = stablehlo.add %n, %v : tensor<4xi32>\n"
    "    stablehlo.return %a, %s : tensor<f32>, tensor<4xi32>\n"
    "  }\n"
    "  %0 = \"stablehlo.sort\"(%c) <{dimension = 0 : i64}> ({\n"
    "  ^bb0(%a: tensor<i32>, %b: tensor<i32>):\n"
    "    %t = stablehlo.compare LT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
    "    stablehlo.return %t : tensor<i1>\n"
    "  }) : (tensor<4xi32>) -> tensor<4xi32>\n"
    "  %1 = stablehlo.reduce(%0 init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xi32>, tensor<4xi32>) -> tensor<i32>\n"
    "  %2 = call @f(%x) : (tensor<f32>) -> tensor<f32>\n"
    "  return %2 : tensor<f32>\n"
    "}\n"
    "func.func private @f(%a: tensor<f32>) -> tensor<f32> {\n"
    "  %0 = stablehlo.sqrt %a : tensor<f32> loc(\"a.py\":3:4)\n"
    "  return %0 : tensor<f32>\n"
    "}\n"
    "}\n";

static void parse_and_discard(const char *text, size_t n) {
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(text, n, "t.mlir", NULL, &m);
  if (st) {
    assert_null(m);
    assert_true(strncmp(vkhlo_status_message(st), "t.mlir:", 7) == 0 ||
                vkhlo_status_code(st) == VKHLO_STATUS_RESOURCE_EXHAUSTED);
    vkhlo_status_free(st);
  } else {
    assert_non_null(m);
    hlo_module_destroy(m);
  }
}

static void test_robustness(void **state) {
  (void)state;
  size_t n = strlen(robust_text);
  hlo_module_t *m = parse_ok(robust_text);
  assert_non_null(m);
  hlo_module_destroy(m);
  /* Every prefix (copied so that reading past |n| would be caught by ASan). */
  for (size_t k = 0; k < n; k++) {
    char *copy = malloc(k + 1);
    memcpy(copy, robust_text, k);
    parse_and_discard(copy, k);
    free(copy);
  }
  /* Byte mutations. */
  uint64_t seed = 7;
  char *copy = malloc(n);
  for (int iter = 0; iter < 3000; iter++) {
    memcpy(copy, robust_text, n);
    int edits = 1 + (int)(hlo_splitmix64(&seed) % 3);
    for (int e = 0; e < edits; e++) {
      size_t pos = hlo_splitmix64(&seed) % n;
      static const char pool[] = "%@#^!\"()[]{}<>,:=-x0123456789 \nabcfi.";
      copy[pos] = pool[hlo_splitmix64(&seed) % (sizeof pool - 1)];
    }
    parse_and_discard(copy, n);
  }
  free(copy);
  /* Deep nesting of literals, types and regions. */
  size_t big = 100000;
  char *deep = malloc(big + 200);
  strcpy(deep, "func.func @main() {\n  %0 = stablehlo.constant dense<");
  size_t len = strlen(deep);
  for (size_t i = 0; i < 5000; i++) deep[len++] = '[';
  deep[len++] = '1';
  for (size_t i = 0; i < 5000; i++) deep[len++] = ']';
  deep[len] = 0;
  strcat(deep, "> : tensor<f32>\n  return\n}\n");
  expect_error_containing(deep, "nesting too deep (more than 256 levels)");
  strcpy(deep, "func.func @main(%a: ");
  len = strlen(deep);
  for (size_t i = 0; i < 5000; i++) {
    memcpy(deep + len, "tuple<", 6);
    len += 6;
  }
  deep[len] = 0;
  parse_and_discard(deep, len);
  strcpy(deep, "func.func @main(%a: tensor<i1>) {\n");
  len = strlen(deep);
  for (size_t i = 0; i < 2000; i++) {
    const char *s = "\"stablehlo.if\"(%a) ({";
    memcpy(deep + len, s, strlen(s));
    len += strlen(s);
  }
  deep[len] = 0;
  parse_and_discard(deep, len);
  free(deep);
  /* Huge dimensions. */
  expect_error("func.func @main(%a: tensor<99999999999999999999xf32>) {\n  return\n}\n",
               "t.mlir:1:28: dimension too large");
  parse_and_discard("func.func @main(%a: tensor<1000000x1000000x1000000xf32>) {\n  return\n}\n", 70);
}

static void test_printer(void **state) {
  (void)state;
  hlo_module_t *m = parse_ok(robust_text);
  char *s = hlo_module_to_string(m);
  assert_non_null(s);
  assert_non_null(strstr(s, "stablehlo.while("));
  assert_non_null(strstr(s, "stablehlo.sqrt("));
  assert_non_null(strstr(s, "comparison_direction = LT"));
  assert_non_null(strstr(s, "func.func public @main("));
  free(s);
  hlo_module_destroy(m);
}

/* ---------------------------------------------------------- corpus */

/* Failures allowed in the interpret suite: ops outside StableHLO proper
 * (the interpreter's own ops, CHLO ops we do not support), an empty split,
 * one split whose separator is commented out ("// // -----"), leaving
 * two public functions and no main, and a probe inside a loop body checked
 * per iteration (per-iteration probes are not recorded). */
static bool expected_failure(const char *msg) {
  static const char *const ok[] = {
      "unknown op 'interpreter.", "unknown op 'chlo.scan'", "unknown op 'chlo.ragged_dot'",
      "no functions in input", "no entry function",
      "check.expect_serialized_eq of a value probed in another region",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
    if (strstr(msg, ok[i])) return true;
  return false;
}

typedef struct corpus_stats {
  int ok, expected_fail, unexpected_fail;
} corpus_stats_t;

/* Parses |text| whole, or split on lines that are exactly "// -----". */
static void parse_corpus_text(const char *path, const char *text, size_t len, bool split, corpus_stats_t *st) {
  hlo_parse_options_t opts = {NULL, 1, 0, NULL, NULL, 0};
  const char *chunk = text;
  const char *end = text + len;
  while (chunk <= end) {
    const char *next = NULL;
    const char *stop = end;
    if (split) {
      for (const char *q = chunk; q < end; q++) {
        if ((q == text || q[-1] == '\n') && strncmp(q, "// -----", 8) == 0 &&
            (q + 8 == end || q[8] == '\n' || q[8] == '\r')) {
          stop = q;
          next = q + 8;
          break;
        }
      }
    }
    /* Keep line numbers right: blank out the previous chunks instead of
     * passing an offset pointer. */
    hlo_module_t *m = NULL;
    char *copy = malloc((size_t)(stop - text) + 1);
    for (const char *q = text; q < chunk; q++) copy[q - text] = *q == '\n' ? '\n' : ' ';
    memcpy(copy + (chunk - text), chunk, (size_t)(stop - chunk));
    vkhlo_status_t s = hlo_parse(copy, (size_t)(stop - text), path, &opts, &m);
    free(copy);
    if (s) {
      if (expected_failure(vkhlo_status_message(s))) {
        st->expected_fail++;
      } else {
        st->unexpected_fail++;
        fprintf(stderr, "parse failed: %s\n", vkhlo_status_message(s));
      }
      vkhlo_status_free(s);
    } else {
      st->ok++;
      char *dump = hlo_module_to_string(m);
      assert_non_null(dump);
      free(dump);
      hlo_module_destroy(m);
    }
    if (!next) break;
    chunk = next;
  }
}

typedef struct parse_dir_ctx {
  bool split;
  corpus_stats_t *st;
} parse_dir_ctx_t;

static bool parse_file(const char *path, const char *text, size_t len, void *user) {
  parse_dir_ctx_t *c = user;
  parse_corpus_text(path, text, len, c->split, c->st);
  return true;
}

static int parse_dir(const char *dir, bool split, corpus_stats_t *st) {
  parse_dir_ctx_t c = {split, st};
  return test_for_each_file(dir, ".mlir", parse_file, &c);
}

static void test_corpus(void **state) {
  (void)state;
  const char *shared = VKHLO_SOURCE_DIR "/../shared";
  char path[4096];
  snprintf(path, sizeof path, "%s/conformance/testdata", shared);
  DIR *probe = opendir(path);
  if (!probe) {
    printf("SKIP: %s not found; corpus parse test skipped\n", path);
    skip();
  }
  closedir(probe);

  corpus_stats_t td = {0}, it = {0}, model = {0};
  int n = parse_dir(path, false, &td);
  printf("testdata: %d files, %d parsed, %d failed\n", n, td.ok, td.unexpected_fail);
  assert_true(n > 0);
  assert_int_equal(td.unexpected_fail, 0);
  assert_int_equal(td.expected_fail, 0);

  snprintf(path, sizeof path, "%s/conformance/interpret", shared);
  n = parse_dir(path, true, &it);
  printf("interpret: %d files, %d programs parsed, %d unsupported, %d failed\n", n, it.ok,
         it.expected_fail, it.unexpected_fail);
  assert_int_equal(it.unexpected_fail, 0);

  snprintf(path, sizeof path, "%s/models/searchless_chess_9m.mlir", shared);
  size_t len;
  char *text = test_read_file(path, &len);
  if (text) {
    parse_corpus_text(path, text, len, false, &model);
    free(text);
    assert_int_equal(model.ok, 1);
    printf("model: parsed\n");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pretty_and_generic_elementwise),
      cmocka_unit_test(test_compare_select_convert),
      cmocka_unit_test(test_shape_ops),
      cmocka_unit_test(test_dot_gather_conv),
      cmocka_unit_test(test_reduce_forms),
      cmocka_unit_test(test_generic_regions),
      cmocka_unit_test(test_while_and_captures),
      cmocka_unit_test(test_case_generic_forms),
      cmocka_unit_test(test_call_inlining),
      cmocka_unit_test(test_checks_and_custom_call),
      cmocka_unit_test(test_chlo_and_misc),
      cmocka_unit_test(test_literals),
      cmocka_unit_test(test_float_helpers),
      cmocka_unit_test(test_elided_constants),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_shardy_and_async),
      cmocka_unit_test(test_constant_out_of_memory),
      cmocka_unit_test(test_robustness),
      cmocka_unit_test(test_printer),
      cmocka_unit_test(test_corpus),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
