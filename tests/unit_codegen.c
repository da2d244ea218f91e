/*
 * Unit tests for the per-instruction kernel emitter (codegen/emit.c,
 * elemental.c, emit_sort.c, emit_scatter.c, glsl_types.c, glsl_prelude.c).
 *
 * Each test builds small HLO by hand, emits the kernel and compiles it with
 * the SPIR-V compiler (glslang + spirv-val), so every op kind and element
 * type is checked to produce valid GLSL.  Numeric correctness is covered by
 * the conformance runner (tests/conformance.sh), which executes kernels.
 * Unsupported ops/types must fail with UNIMPLEMENTED and a message that
 * starts with the instruction's file:line:col.
 *
 * Set VKHLO_TEST_DUMP=1 to print every kernel's GLSL.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codegen/elemental.h"
#include "codegen/kernel.h"
#include "codegen/spirv.h"
#include "hlo/hlo.h"


typedef struct fixture {
  hlo_module_t *m;
  hlo_computation_t *c;
  spirv_compiler_t *sc;
  codegen_target_t target;
  int line;
} fixture_t;

static int setup(void **state) {
  fixture_t *f = calloc(1, sizeof *f);
  f->m = hlo_module_create("test", NULL);
  f->c = hlo_computation_create(f->m, "main");
  spirv_compiler_options_t opts = {.disable_cache = true, .optimize = false};
  vkhlo_status_t st = spirv_compiler_create(&opts, &f->sc);
  if (st) {
    fprintf(stderr, "%s\n", vkhlo_status_message(st));
    vkhlo_status_free(st);
    return -1;
  }
  codegen_target_default(&f->target);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture_t *f = *state;
  spirv_compiler_destroy(f->sc);
  hlo_module_destroy(f->m);
  free(f);
  return 0;
}

static hlo_shape_t shp(hlo_element_type_t t, int rank, ...) {
  int64_t dims[HLO_MAX_RANK];
  va_list ap;
  va_start(ap, rank);
  for (int i = 0; i < rank; i++) dims[i] = va_arg(ap, int);
  va_end(ap);
  hlo_shape_t s;
  hlo_shape_init(&s, t, rank, dims);
  return s;
}

static hlo_instruction_t *add_instr(fixture_t *f, hlo_computation_t *c, hlo_opcode_t op,
                                    hlo_shape_t s, int n, ...) {
  hlo_instruction_t *ops[16];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) ops[i] = va_arg(ap, hlo_instruction_t *);
  va_end(ap);
  hlo_instruction_t *in = hlo_instruction_create(f->m, op, &s, n, ops);
  assert_non_null(in);
  in->loc.file = "test.mlir";
  in->loc.line = ++f->line;
  in->loc.col = 5;
  if (op == HLO_OPCODE_PARAMETER) in->parameter_number = c->parameter_count;
  assert_true(hlo_computation_append(f->m, c, in));
  c->root = in;
  return in;
}

static hlo_instruction_t *param(fixture_t *f, hlo_shape_t s) {
  return add_instr(f, f->c, HLO_OPCODE_PARAMETER, s, 0);
}

static hlo_dims_t dims(fixture_t *f, int n, ...) {
  int64_t v[HLO_MAX_RANK * 2];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) v[i] = va_arg(ap, int);
  va_end(ap);
  return hlo_dims_make(f->m, v, n);
}

/* A computation of |nparams| rank-0 parameters of type |t| with root
 * |op|(p0, p1) of result type |rt| (compare: LT / GT). */
static hlo_computation_t *scalar_comp(fixture_t *f, const char *name, hlo_opcode_t op,
                                      hlo_element_type_t t, hlo_element_type_t rt) {
  hlo_computation_t *c = hlo_computation_create(f->m, name);
  hlo_instruction_t *a = add_instr(f, c, HLO_OPCODE_PARAMETER, shp(t, 0), 0);
  hlo_instruction_t *b = add_instr(f, c, HLO_OPCODE_PARAMETER, shp(t, 0), 0);
  hlo_instruction_t *r = add_instr(f, c, op, shp(rt, 0), 2, a, b);
  if (op == HLO_OPCODE_COMPARE) r->attrs.comparison_direction = HLO_CMP_LT;
  assert_true(hlo_module_add_computation(f->m, c));
  return c;
}

static void set_called(fixture_t *f, hlo_instruction_t *in, int n, ...) {
  hlo_computation_t *cs[4];
  va_list ap;
  va_start(ap, n);
  for (int i = 0; i < n; i++) cs[i] = va_arg(ap, hlo_computation_t *);
  va_end(ap);
  assert_true(hlo_instruction_set_called(f->m, in, n, cs));
}

static void print_numbered(const char *glsl) {
  int line = 1;
  fprintf(stderr, "%4d  ", line);
  for (const char *p = glsl; *p; p++) {
    fputc(*p, stderr);
    if (*p == '\n' && p[1]) fprintf(stderr, "%4d  ", ++line);
  }
}

/* Emits and compiles; returns the emit status (compilation must succeed
 * whenever emission does). */
static vkhlo_status_t try_kernel(fixture_t *f, const hlo_instruction_t *in) {
  codegen_kernel_t k;
  vkhlo_status_t st = codegen_emit_instruction(&f->target, NULL, in, &k);
  if (st) return st;
  if (getenv("VKHLO_TEST_DUMP")) fprintf(stderr, "==== %s\n%s", k.name, k.glsl);
  assert_non_null(k.glsl);
  assert_true(k.group_count[0] >= 1 && k.group_count[0] <= f->target.max_workgroup_count[0]);
  assert_int_equal(k.input_count, in->operand_count);
  uint32_t *words = NULL;
  size_t size = 0;
  vkhlo_status_t cs = spirv_compile_glsl(f->sc, k.name, k.glsl, &words, &size);
  if (cs) {
    print_numbered(k.glsl);
    fprintf(stderr, "%s\n", vkhlo_status_message(cs));
    vkhlo_status_free(cs);
    fail_msg("kernel %s does not compile", k.name);
  }
  free(words);
  codegen_kernel_free(&k);
  return NULL;
}

static void expect_kernel(fixture_t *f, const hlo_instruction_t *in) {
  vkhlo_status_t st = try_kernel(f, in);
  if (st) {
    fprintf(stderr, "%s: %s\n", in->name, vkhlo_status_message(st));
    vkhlo_status_free(st);
    fail_msg("emit failed for %s", in->name);
  }
}

static void expect_unimplemented(fixture_t *f, const hlo_instruction_t *in, const char *text) {
  codegen_kernel_t k;
  vkhlo_status_t st = codegen_emit_instruction(&f->target, NULL, in, &k);
  assert_non_null(st);
  assert_int_equal(vkhlo_status_code(st), VKHLO_STATUS_UNIMPLEMENTED);
  const char *msg = vkhlo_status_message(st);
  if (!strstr(msg, text) || strncmp(msg, "test.mlir:", 10) != 0) {
    fprintf(stderr, "message: %s\nexpected: %s\n", msg, text);
    fail();
  }
  vkhlo_status_free(st);
}

/* ------------------------------------------------------- elementwise */

static const hlo_opcode_t kUnary[] = {
    HLO_OPCODE_ABS, HLO_OPCODE_CBRT, HLO_OPCODE_CEIL, HLO_OPCODE_COSINE,
    HLO_OPCODE_COUNT_LEADING_ZEROS, HLO_OPCODE_EXPONENTIAL, HLO_OPCODE_EXPONENTIAL_MINUS_ONE,
    HLO_OPCODE_FLOOR, HLO_OPCODE_LOG, HLO_OPCODE_LOG_PLUS_ONE, HLO_OPCODE_LOGISTIC,
    HLO_OPCODE_NEGATE, HLO_OPCODE_NOT, HLO_OPCODE_POPCNT, HLO_OPCODE_ROUND_NEAREST_AFZ,
    HLO_OPCODE_ROUND_NEAREST_EVEN, HLO_OPCODE_RSQRT, HLO_OPCODE_SIGN, HLO_OPCODE_SINE,
    HLO_OPCODE_SQRT, HLO_OPCODE_TAN, HLO_OPCODE_TANH, HLO_OPCODE_REDUCE_PRECISION,
};
static const hlo_opcode_t kBinary[] = {
    HLO_OPCODE_ADD, HLO_OPCODE_AND, HLO_OPCODE_ATAN2, HLO_OPCODE_DIVIDE, HLO_OPCODE_MAXIMUM,
    HLO_OPCODE_MINIMUM, HLO_OPCODE_MULTIPLY, HLO_OPCODE_OR, HLO_OPCODE_POWER,
    HLO_OPCODE_REMAINDER, HLO_OPCODE_SHIFT_LEFT, HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC,
    HLO_OPCODE_SHIFT_RIGHT_LOGICAL, HLO_OPCODE_SUBTRACT, HLO_OPCODE_XOR,
};
static const hlo_element_type_t kTypes[] = {
    HLO_F32, HLO_S32, HLO_U32, HLO_PRED, HLO_S64, HLO_U64, HLO_F64, HLO_S8,
    HLO_U8,  HLO_S16, HLO_U16, HLO_F16,  HLO_BF16, HLO_S4, HLO_U4, HLO_C64, HLO_C128,
};

/* Ops that must be supported for a type kind: 'F' float, 'I' integer. */
static bool required(hlo_opcode_t op, hlo_element_type_t t) {
  bool is_f32 = t == HLO_F32;
  bool is_int = t == HLO_S32 || t == HLO_U32 || t == HLO_S64 || t == HLO_U64;
  switch (op) {
    case HLO_OPCODE_ADD: case HLO_OPCODE_SUBTRACT: case HLO_OPCODE_MULTIPLY:
    case HLO_OPCODE_DIVIDE: case HLO_OPCODE_MAXIMUM: case HLO_OPCODE_MINIMUM:
    case HLO_OPCODE_REMAINDER: case HLO_OPCODE_POWER: case HLO_OPCODE_ABS:
    case HLO_OPCODE_NEGATE: case HLO_OPCODE_SIGN:
      return is_f32 || is_int;
    case HLO_OPCODE_AND: case HLO_OPCODE_OR: case HLO_OPCODE_XOR: case HLO_OPCODE_NOT:
      return is_int || t == HLO_PRED;
    case HLO_OPCODE_SHIFT_LEFT: case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC:
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL: case HLO_OPCODE_POPCNT:
    case HLO_OPCODE_COUNT_LEADING_ZEROS:
      return is_int;
    case HLO_OPCODE_COMPARE:
      return t != HLO_C64 && t != HLO_C128;
    case HLO_OPCODE_SELECT:
      return true;
    default:
      return is_f32;
  }
}

static void check_elementwise(fixture_t *f, const hlo_instruction_t *in, hlo_element_type_t t) {
  vkhlo_status_t st = try_kernel(f, in);
  if (!st) return;
  const char *msg = vkhlo_status_message(st);
  if (vkhlo_status_code(st) != VKHLO_STATUS_UNIMPLEMENTED || !strstr(msg, "unsupported") ||
      required(in->opcode, t)) {
    fprintf(stderr, "%s %s: %s\n", hlo_opcode_name(in->opcode), hlo_element_type_name(t), msg);
    vkhlo_status_free(st);
    fail();
  }
  vkhlo_status_free(st);
}

static void test_elementwise(void **state) {
  fixture_t *f = *state;
  for (size_t ti = 0; ti < sizeof kTypes / sizeof kTypes[0]; ti++) {
    hlo_element_type_t t = kTypes[ti];
    hlo_instruction_t *a = param(f, shp(t, 2, 3, 5));
    hlo_instruction_t *b = param(f, shp(t, 2, 3, 5));
    for (size_t i = 0; i < sizeof kUnary / sizeof kUnary[0]; i++) {
      hlo_element_type_t rt = t;
      if (kUnary[i] == HLO_OPCODE_ABS && t == HLO_C64) rt = HLO_F32;
      if (kUnary[i] == HLO_OPCODE_ABS && t == HLO_C128) rt = HLO_F64;
      hlo_instruction_t *in = add_instr(f, f->c, kUnary[i], shp(rt, 2, 3, 5), 1, a);
      in->attrs.exponent_bits = 5;
      in->attrs.mantissa_bits = 10;
      check_elementwise(f, in, t);
    }
    for (size_t i = 0; i < sizeof kBinary / sizeof kBinary[0]; i++)
      check_elementwise(f, add_instr(f, f->c, kBinary[i], shp(t, 2, 3, 5), 2, a, b), t);
    for (int dir = HLO_CMP_EQ; dir <= HLO_CMP_LT; dir++) {
      for (int ct = HLO_CMP_TYPE_NOTYPE; ct <= HLO_CMP_TYPE_UNSIGNED; ct++) {
        hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_COMPARE, shp(HLO_PRED, 2, 3, 5), 2, a, b);
        in->attrs.comparison_direction = (hlo_comparison_direction_t)dir;
        in->attrs.compare_type = (hlo_compare_type_t)ct;
        check_elementwise(f, in, t);
      }
    }
    hlo_instruction_t *p = param(f, shp(HLO_PRED, 0));
    check_elementwise(f, add_instr(f, f->c, HLO_OPCODE_SELECT, shp(t, 2, 3, 5), 3, p, a, b), t);
    hlo_instruction_t *lo = param(f, shp(t, 0));
    check_elementwise(f, add_instr(f, f->c, HLO_OPCODE_CLAMP, shp(t, 2, 3, 5), 3, lo, a, b), t);
    /* conversions to every other type */
    for (size_t tj = 0; tj < sizeof kTypes / sizeof kTypes[0]; tj++)
      check_elementwise(f, add_instr(f, f->c, HLO_OPCODE_CONVERT, shp(kTypes[tj], 2, 3, 5), 1, a),
                        t);
  }
}

static void test_bitcast_convert(void **state) {
  fixture_t *f = *state;
  hlo_instruction_t *a = param(f, shp(HLO_F32, 2, 3, 5));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_S32, 2, 3, 5), 1, a));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_U8, 3, 3, 5, 4), 1, a));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_F16, 3, 3, 5, 2), 1, a));
  hlo_instruction_t *b = param(f, shp(HLO_S32, 2, 3, 2));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_F64, 1, 3), 1, b));
  hlo_instruction_t *c = param(f, shp(HLO_U64, 1, 3));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_F64, 1, 3), 1, c));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_BITCAST_CONVERT, shp(HLO_S16, 2, 3, 4), 1, c));
}

/* ---------------------------------------------------- data movement */

static void test_data_movement(void **state) {
  fixture_t *f = *state;
  hlo_instruction_t *a = param(f, shp(HLO_F32, 2, 3, 4));
  hlo_instruction_t *s = param(f, shp(HLO_F32, 0));
  hlo_instruction_t *in;

  in = add_instr(f, f->c, HLO_OPCODE_IOTA, shp(HLO_S64, 2, 4, 7), 0);
  in->attrs.dimension = 1;
  expect_kernel(f, in);
  in = add_instr(f, f->c, HLO_OPCODE_IOTA, shp(HLO_F32, 1, 9), 0);
  expect_kernel(f, in);

  in = add_instr(f, f->c, HLO_OPCODE_BROADCAST_IN_DIM, shp(HLO_F32, 3, 3, 2, 4), 1, a);
  in->attrs.broadcast_dimensions = dims(f, 2, 0, 2);
  expect_kernel(f, in);
  in = add_instr(f, f->c, HLO_OPCODE_BROADCAST_IN_DIM, shp(HLO_F32, 2, 2, 2), 1, s);
  expect_kernel(f, in);
  in = add_instr(f, f->c, HLO_OPCODE_BROADCAST, shp(HLO_F32, 3, 6, 3, 4), 1, a);
  in->attrs.dimensions = dims(f, 1, 6);
  expect_kernel(f, in);

  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_RESHAPE, shp(HLO_F32, 3, 2, 3, 2), 1, a));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_RESHAPE, shp(HLO_F32, 0), 1, s));

  in = add_instr(f, f->c, HLO_OPCODE_TRANSPOSE, shp(HLO_F32, 2, 4, 3), 1, a);
  in->attrs.permutation = dims(f, 2, 1, 0);
  expect_kernel(f, in);

  in = add_instr(f, f->c, HLO_OPCODE_SLICE, shp(HLO_F32, 2, 1, 2), 1, a);
  in->attrs.start_indices = dims(f, 2, 1, 0);
  in->attrs.limit_indices = dims(f, 2, 2, 4);
  in->attrs.strides = dims(f, 2, 1, 2);
  expect_kernel(f, in);

  hlo_instruction_t *b = param(f, shp(HLO_F32, 2, 3, 2));
  in = add_instr(f, f->c, HLO_OPCODE_CONCATENATE, shp(HLO_F32, 2, 3, 8), 3, a, b, b);
  in->attrs.dimension = 1;
  expect_kernel(f, in);

  in = add_instr(f, f->c, HLO_OPCODE_PAD, shp(HLO_F32, 2, 6, 8), 2, a, s);
  in->attrs.edge_padding_low = dims(f, 2, 1, -1);
  in->attrs.edge_padding_high = dims(f, 2, 0, 0);
  in->attrs.interior_padding = dims(f, 2, 1, 2);
  expect_kernel(f, in);

  in = add_instr(f, f->c, HLO_OPCODE_REVERSE, shp(HLO_F32, 2, 3, 4), 1, a);
  in->attrs.dimensions = dims(f, 1, 1);
  expect_kernel(f, in);

  hlo_instruction_t *i0 = param(f, shp(HLO_S64, 0));
  hlo_instruction_t *i1 = param(f, shp(HLO_U32, 0));
  in = add_instr(f, f->c, HLO_OPCODE_DYNAMIC_SLICE, shp(HLO_F32, 2, 2, 2), 3, a, i0, i1);
  in->attrs.slice_sizes = dims(f, 2, 2, 2);
  expect_kernel(f, in);
  in = add_instr(f, f->c, HLO_OPCODE_DYNAMIC_UPDATE_SLICE, shp(HLO_F32, 2, 3, 4), 4, a, b, i0, i1);
  expect_kernel(f, in);

  /* gather: operand [3,4], indices [5,1] -> rows: result [5,4] */
  hlo_instruction_t *idx = param(f, shp(HLO_S32, 2, 5, 1));
  in = add_instr(f, f->c, HLO_OPCODE_GATHER, shp(HLO_F32, 2, 5, 4), 2, a, idx);
  in->attrs.offset_dims = dims(f, 1, 1);
  in->attrs.collapsed_slice_dims = dims(f, 1, 0);
  in->attrs.start_index_map = dims(f, 1, 0);
  in->attrs.index_vector_dim = 1;
  in->attrs.slice_sizes = dims(f, 2, 1, 4);
  expect_kernel(f, in);
  /* gather with batching dims: operand [2,3,4], indices [2,5] (scalar per
   * position), batch dim 0 of both */
  hlo_instruction_t *op3 = param(f, shp(HLO_F32, 3, 2, 3, 4));
  hlo_instruction_t *idx2 = param(f, shp(HLO_S64, 2, 2, 5));
  in = add_instr(f, f->c, HLO_OPCODE_GATHER, shp(HLO_F32, 3, 2, 5, 4), 2, op3, idx2);
  in->attrs.offset_dims = dims(f, 1, 2);
  in->attrs.collapsed_slice_dims = dims(f, 1, 1);
  in->attrs.operand_batching_dims = dims(f, 1, 0);
  in->attrs.start_indices_batching_dims = dims(f, 1, 0);
  in->attrs.start_index_map = dims(f, 1, 1);
  in->attrs.index_vector_dim = 2;
  in->attrs.slice_sizes = dims(f, 3, 1, 1, 4);
  expect_kernel(f, in);
}

/* ------------------------------------------------------- reductions */

static void test_reduce(void **state) {
  fixture_t *f = *state;
  hlo_computation_t *sum = scalar_comp(f, "sum", HLO_OPCODE_ADD, HLO_F32, HLO_F32);
  hlo_instruction_t *a = param(f, shp(HLO_F32, 3, 2, 3, 4));
  hlo_instruction_t *z = param(f, shp(HLO_F32, 0));
  hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_REDUCE, shp(HLO_F32, 1, 3), 2, a, z);
  in->attrs.dimensions = dims(f, 2, 0, 2);
  set_called(f, in, 1, sum);
  expect_kernel(f, in);
  /* full reduction to a scalar */
  in = add_instr(f, f->c, HLO_OPCODE_REDUCE, shp(HLO_F32, 0), 2, a, z);
  in->attrs.dimensions = dims(f, 3, 0, 1, 2);
  set_called(f, in, 1, sum);
  expect_kernel(f, in);

  /* argmax-style two-operand reduce: body returns a tuple */
  hlo_computation_t *am = hlo_computation_create(f->m, "argmax");
  hlo_instruction_t *av = add_instr(f, am, HLO_OPCODE_PARAMETER, shp(HLO_F32, 0), 0);
  hlo_instruction_t *ai = add_instr(f, am, HLO_OPCODE_PARAMETER, shp(HLO_S32, 0), 0);
  hlo_instruction_t *bv = add_instr(f, am, HLO_OPCODE_PARAMETER, shp(HLO_F32, 0), 0);
  hlo_instruction_t *bi = add_instr(f, am, HLO_OPCODE_PARAMETER, shp(HLO_S32, 0), 0);
  hlo_instruction_t *gt = add_instr(f, am, HLO_OPCODE_COMPARE, shp(HLO_PRED, 0), 2, av, bv);
  gt->attrs.comparison_direction = HLO_CMP_GT;
  hlo_instruction_t *sv = add_instr(f, am, HLO_OPCODE_SELECT, shp(HLO_F32, 0), 3, gt, av, bv);
  hlo_instruction_t *si = add_instr(f, am, HLO_OPCODE_SELECT, shp(HLO_S32, 0), 3, gt, ai, bi);
  hlo_shape_t ts;
  hlo_shape_t parts[2] = {shp(HLO_F32, 0), shp(HLO_S32, 0)};
  assert_true(hlo_shape_make_tuple(f->m, &ts, 2, parts));
  add_instr(f, am, HLO_OPCODE_TUPLE, ts, 2, sv, si);
  assert_true(hlo_module_add_computation(f->m, am));
  hlo_instruction_t *ia = param(f, shp(HLO_S32, 3, 2, 3, 4));
  hlo_instruction_t *iz = param(f, shp(HLO_S32, 0));
  hlo_shape_t rs;
  hlo_shape_t rparts[2] = {shp(HLO_F32, 1, 2), shp(HLO_S32, 1, 2)};
  assert_true(hlo_shape_make_tuple(f->m, &rs, 2, rparts));
  in = add_instr(f, f->c, HLO_OPCODE_REDUCE, rs, 4, a, ia, z, iz);
  in->attrs.dimensions = dims(f, 2, 1, 2);
  set_called(f, in, 1, am);
  expect_kernel(f, in);

  /* reduce_window with padding and dilations */
  in = add_instr(f, f->c, HLO_OPCODE_REDUCE_WINDOW, shp(HLO_F32, 3, 2, 2, 3), 2, a, z);
  in->attrs.window_dimensions = dims(f, 3, 1, 2, 2);
  in->attrs.window_strides = dims(f, 3, 1, 2, 2);
  in->attrs.base_dilations = dims(f, 3, 1, 1, 2);
  in->attrs.window_dilations = dims(f, 3, 1, 1, 1);
  in->attrs.padding = dims(f, 6, 0, 0, 1, 0, 0, 1);
  set_called(f, in, 1, sum);
  expect_kernel(f, in);

  /* i1 reduce with or */
  hlo_computation_t *orc = scalar_comp(f, "or", HLO_OPCODE_OR, HLO_PRED, HLO_PRED);
  hlo_instruction_t *pa = param(f, shp(HLO_PRED, 2, 3, 4));
  hlo_instruction_t *pz = param(f, shp(HLO_PRED, 0));
  in = add_instr(f, f->c, HLO_OPCODE_REDUCE, shp(HLO_PRED, 1, 3), 2, pa, pz);
  in->attrs.dimensions = dims(f, 1, 1);
  set_called(f, in, 1, orc);
  expect_kernel(f, in);
}

static void test_dot_and_convolution(void **state) {
  fixture_t *f = *state;
  hlo_instruction_t *l = param(f, shp(HLO_F32, 3, 2, 3, 4));
  hlo_instruction_t *r = param(f, shp(HLO_F32, 3, 2, 4, 5));
  hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_DOT_GENERAL, shp(HLO_F32, 3, 2, 3, 5), 2, l, r);
  in->attrs.lhs_batching_dimensions = dims(f, 1, 0);
  in->attrs.rhs_batching_dimensions = dims(f, 1, 0);
  in->attrs.lhs_contracting_dimensions = dims(f, 1, 2);
  in->attrs.rhs_contracting_dimensions = dims(f, 1, 1);
  expect_kernel(f, in);
  hlo_instruction_t *li = param(f, shp(HLO_S8, 2, 3, 4));
  hlo_instruction_t *ri = param(f, shp(HLO_S8, 2, 4, 5));
  in = add_instr(f, f->c, HLO_OPCODE_DOT_GENERAL, shp(HLO_S32, 2, 3, 5), 2, li, ri);
  in->attrs.lhs_contracting_dimensions = dims(f, 1, 1);
  in->attrs.rhs_contracting_dimensions = dims(f, 1, 0);
  expect_kernel(f, in);
  hlo_instruction_t *lp = param(f, shp(HLO_PRED, 2, 3, 4));
  hlo_instruction_t *rp = param(f, shp(HLO_PRED, 1, 4));
  in = add_instr(f, f->c, HLO_OPCODE_DOT, shp(HLO_PRED, 1, 3), 2, lp, rp);
  expect_kernel(f, in);

  /* NCHW x OIHW convolution with everything switched on */
  hlo_instruction_t *x = param(f, shp(HLO_F32, 4, 2, 4, 5, 5));
  hlo_instruction_t *w = param(f, shp(HLO_F32, 4, 6, 2, 3, 3));
  in = add_instr(f, f->c, HLO_OPCODE_CONVOLUTION, shp(HLO_F32, 4, 2, 6, 5, 4), 2, x, w);
  hlo_attrs_t *a = &in->attrs;
  a->window_strides = dims(f, 2, 2, 2);
  a->padding = dims(f, 4, 1, 1, 0, 1);
  a->lhs_dilation = dims(f, 2, 2, 1);
  a->rhs_dilation = dims(f, 2, 1, 2);
  a->window_reversal = dims(f, 2, 1, 0);
  a->input_batch_dimension = 0;
  a->input_feature_dimension = 1;
  a->input_spatial_dimensions = dims(f, 2, 2, 3);
  a->kernel_output_feature_dimension = 0;
  a->kernel_input_feature_dimension = 1;
  a->kernel_spatial_dimensions = dims(f, 2, 2, 3);
  a->output_batch_dimension = 0;
  a->output_feature_dimension = 1;
  a->output_spatial_dimensions = dims(f, 2, 2, 3);
  a->feature_group_count = 2;
  expect_kernel(f, in);
}

static void test_select_and_scatter_and_map(void **state) {
  fixture_t *f = *state;
  hlo_computation_t *ge = scalar_comp(f, "ge", HLO_OPCODE_COMPARE, HLO_F32, HLO_PRED);
  ge->root->attrs.comparison_direction = HLO_CMP_GE;
  hlo_computation_t *sum = scalar_comp(f, "sum", HLO_OPCODE_ADD, HLO_F32, HLO_F32);
  hlo_instruction_t *op = param(f, shp(HLO_F32, 2, 4, 6));
  hlo_instruction_t *src = param(f, shp(HLO_F32, 2, 2, 3));
  hlo_instruction_t *init = param(f, shp(HLO_F32, 0));
  hlo_instruction_t *in =
      add_instr(f, f->c, HLO_OPCODE_SELECT_AND_SCATTER, shp(HLO_F32, 2, 4, 6), 3, op, src, init);
  in->attrs.window_dimensions = dims(f, 2, 2, 2);
  in->attrs.window_strides = dims(f, 2, 2, 2);
  in->attrs.padding = dims(f, 4, 0, 0, 0, 0);
  set_called(f, in, 2, ge, sum);
  expect_kernel(f, in);

  hlo_instruction_t *m = add_instr(f, f->c, HLO_OPCODE_MAP, shp(HLO_F32, 2, 4, 6), 2, op, op);
  m->attrs.dimensions = dims(f, 2, 0, 1);
  set_called(f, m, 1, sum);
  expect_kernel(f, m);
}

static void test_sort(void **state) {
  fixture_t *f = *state;
  /* comparator over (key lhs, key rhs, value lhs, value rhs) */
  hlo_computation_t *cmp = hlo_computation_create(f->m, "cmp");
  hlo_instruction_t *k0 = add_instr(f, cmp, HLO_OPCODE_PARAMETER, shp(HLO_F32, 0), 0);
  hlo_instruction_t *k1 = add_instr(f, cmp, HLO_OPCODE_PARAMETER, shp(HLO_F32, 0), 0);
  add_instr(f, cmp, HLO_OPCODE_PARAMETER, shp(HLO_S32, 0), 0);
  add_instr(f, cmp, HLO_OPCODE_PARAMETER, shp(HLO_S32, 0), 0);
  hlo_instruction_t *lt = add_instr(f, cmp, HLO_OPCODE_COMPARE, shp(HLO_PRED, 0), 2, k0, k1);
  lt->attrs.comparison_direction = HLO_CMP_LT;
  lt->attrs.compare_type = HLO_CMP_TYPE_TOTALORDER;
  assert_true(hlo_module_add_computation(f->m, cmp));
  hlo_instruction_t *keys = param(f, shp(HLO_F32, 2, 3, 7));
  hlo_instruction_t *vals = param(f, shp(HLO_S32, 2, 3, 7));
  hlo_shape_t ts;
  hlo_shape_t parts[2] = {shp(HLO_F32, 2, 3, 7), shp(HLO_S32, 2, 3, 7)};
  assert_true(hlo_shape_make_tuple(f->m, &ts, 2, parts));
  hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_SORT, ts, 2, keys, vals);
  in->attrs.dimension = 1;
  set_called(f, in, 1, cmp);
  expect_kernel(f, in);
}

static void test_scatter(void **state) {
  fixture_t *f = *state;
  hlo_computation_t *sum = scalar_comp(f, "sum", HLO_OPCODE_ADD, HLO_S64, HLO_S64);
  /* input [5,4], indices [3,1], updates [3,4]: rows scattered with add */
  hlo_instruction_t *input = param(f, shp(HLO_S64, 2, 5, 4));
  hlo_instruction_t *idx = param(f, shp(HLO_S32, 2, 3, 1));
  hlo_instruction_t *upd = param(f, shp(HLO_S64, 2, 3, 4));
  hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_SCATTER, shp(HLO_S64, 2, 5, 4), 3, input, idx, upd);
  in->attrs.update_window_dims = dims(f, 1, 1);
  in->attrs.inserted_window_dims = dims(f, 1, 0);
  in->attrs.scatter_dims_to_operand_dims = dims(f, 1, 0);
  in->attrs.index_vector_dim = 1;
  set_called(f, in, 1, sum);
  expect_kernel(f, in);
  /* scalar updates, implicit index vector dim */
  hlo_instruction_t *idx1 = param(f, shp(HLO_U8, 1, 6));
  hlo_instruction_t *in1 = param(f, shp(HLO_S64, 1, 9));
  hlo_instruction_t *upd1 = param(f, shp(HLO_S64, 1, 6));
  in = add_instr(f, f->c, HLO_OPCODE_SCATTER, shp(HLO_S64, 1, 9), 3, in1, idx1, upd1);
  in->attrs.inserted_window_dims = dims(f, 1, 0);
  in->attrs.scatter_dims_to_operand_dims = dims(f, 1, 0);
  in->attrs.index_vector_dim = 1;
  set_called(f, in, 1, sum);
  expect_kernel(f, in);
}

/* CHLO elementwise ops (float types, evaluated in double where the device
 * has doubles, and in float where it does not) and top_k. */
static void test_chlo(void **state) {
  fixture_t *f = *state;
  static const hlo_opcode_t ops[] = {
      HLO_OPCODE_CHLO_ACOS,    HLO_OPCODE_CHLO_ACOSH,   HLO_OPCODE_CHLO_ASIN,
      HLO_OPCODE_CHLO_ASINH,   HLO_OPCODE_CHLO_ATAN,    HLO_OPCODE_CHLO_ATANH,
      HLO_OPCODE_CHLO_COSH,    HLO_OPCODE_CHLO_SINH,    HLO_OPCODE_CHLO_TAN,
      HLO_OPCODE_CHLO_ERF,     HLO_OPCODE_CHLO_ERFC,    HLO_OPCODE_CHLO_ERF_INV,
      HLO_OPCODE_CHLO_LGAMMA,  HLO_OPCODE_CHLO_DIGAMMA,
  };
  static const hlo_element_type_t types[] = {HLO_F32, HLO_F64, HLO_BF16, HLO_F16};
  for (int fp64 = 0; fp64 < 2; fp64++) {
    f->target.shader_float64 = fp64;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      hlo_element_type_t t = types[ti];
      if (t == HLO_F64 && !fp64) continue;
      hlo_instruction_t *a = param(f, shp(t, 1, 7));
      for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
        expect_kernel(f, add_instr(f, f->c, ops[i], shp(t, 1, 7), 1, a));
      expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_CHLO_NEXT_AFTER, shp(t, 1, 7), 2, a, a));
      expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_CHLO_IS_INF, shp(HLO_PRED, 1, 7), 1, a));
      expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_CHLO_IS_NEG_INF, shp(HLO_PRED, 1, 7), 1, a));
    }
  }
  f->target.shader_float64 = true;
  hlo_instruction_t *c = param(f, shp(HLO_C64, 1, 7));
  expect_kernel(f, add_instr(f, f->c, HLO_OPCODE_CHLO_CONJ, shp(HLO_C64, 1, 7), 1, c));
  static const hlo_element_type_t ktypes[] = {HLO_F32, HLO_F64, HLO_S32, HLO_U8, HLO_PRED, HLO_U64};
  for (size_t ti = 0; ti < sizeof ktypes / sizeof ktypes[0]; ti++) {
    hlo_instruction_t *x = param(f, shp(ktypes[ti], 2, 5, 3));
    hlo_shape_t ts;
    hlo_shape_t parts[2] = {shp(ktypes[ti], 2, 5, 2), shp(HLO_S32, 2, 5, 2)};
    assert_true(hlo_shape_make_tuple(f->m, &ts, 2, parts));
    hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_CHLO_TOP_K, ts, 1, x);
    in->attrs.k = 2;
    expect_kernel(f, in);
  }
}

/* ----------------------------------------------------------- errors */

static void test_errors(void **state) {
  fixture_t *f = *state;
  hlo_instruction_t *a = param(f, shp(HLO_F32, 1, 8));
  hlo_instruction_t *q = add_instr(f, f->c, HLO_OPCODE_UNIFORM_QUANTIZE, shp(HLO_F32, 1, 8), 1, a);
  expect_unimplemented(f, q, "unsupported op stablehlo.uniform_quantize");
  hlo_instruction_t *b = param(f, shp(HLO_C64, 1, 8));
  hlo_instruction_t *bes = add_instr(f, f->c, HLO_OPCODE_CHLO_BESSEL_I1E, shp(HLO_C64, 1, 8), 1, b);
  expect_unimplemented(f, bes, "unsupported element type complex<f32> for chlo.bessel_i1e");
  hlo_instruction_t *l = param(f, shp(HLO_F64, 1, 8));
  hlo_instruction_t *neg = add_instr(f, f->c, HLO_OPCODE_NEGATE, shp(HLO_F64, 1, 8), 1, l);
  f->target.shader_float64 = false;
  expect_unimplemented(f, neg, "unsupported element type f64 on this device (needs shaderFloat64)");
  f->target.shader_float64 = true;
  assert_false(codegen_instruction_needs_kernel(b));
  assert_true(codegen_instruction_needs_kernel(neg));
}

/* A target with max_loop_iterations (lavapipe: 65535 in all per
 * invocation) refuses kernels whose loops would run longer, naming the
 * instruction; without the limit the same instructions compile. */
static void test_loop_limit(void **state) {
  fixture_t *f = *state;
  hlo_computation_t *sum = scalar_comp(f, "sum", HLO_OPCODE_ADD, HLO_F32, HLO_F32);
  hlo_computation_t *lt = scalar_comp(f, "lt", HLO_OPCODE_COMPARE, HLO_F32, HLO_PRED);
  lt->root->attrs.comparison_direction = HLO_CMP_LT;
  lt->root->attrs.compare_type = HLO_CMP_TYPE_FLOAT;
  hlo_instruction_t *a = param(f, shp(HLO_F32, 1, 70000));
  hlo_instruction_t *z = param(f, shp(HLO_F32, 0));
  /* a sort of 70000 (the expand pass would make merge passes of it) */
  hlo_instruction_t *sort = add_instr(f, f->c, HLO_OPCODE_SORT, shp(HLO_F32, 1, 70000), 1, a);
  sort->attrs.dimension = 0;
  set_called(f, sort, 1, lt);
  /* a column sum of 70000 (the expand pass would split it; not run here) */
  hlo_instruction_t *b = param(f, shp(HLO_F32, 2, 70000, 2));
  hlo_instruction_t *red = add_instr(f, f->c, HLO_OPCODE_REDUCE, shp(HLO_F32, 1, 2), 2, b, z);
  red->attrs.dimensions = dims(f, 1, 0);
  set_called(f, red, 1, sum);
  /* cholesky of 100 x 100: about n^3 / 6 iterations; of 40 x 40 fewer */
  hlo_instruction_t *c = param(f, shp(HLO_F32, 2, 100, 100));
  hlo_instruction_t *chol = add_instr(f, f->c, HLO_OPCODE_CHOLESKY, shp(HLO_F32, 2, 100, 100), 1, c);
  hlo_instruction_t *c40 = param(f, shp(HLO_F32, 2, 40, 40));
  hlo_instruction_t *chol40 = add_instr(f, f->c, HLO_OPCODE_CHOLESKY, shp(HLO_F32, 2, 40, 40), 1, c40);
  f->target.max_loop_iterations = 65535;
  expect_unimplemented(f, sort, "stablehlo.sort runs 70000 loop iterations per invocation");
  expect_unimplemented(f, red, "stablehlo.reduce runs 70000 loop iterations per invocation");
  expect_unimplemented(f, chol, "stablehlo.cholesky runs 176750 loop iterations per invocation");
  expect_kernel(f, chol40);
  f->target.max_loop_iterations = 0;
  expect_kernel(f, sort);
  expect_kernel(f, red);
  expect_kernel(f, chol);
}

/* Large tensors spread over gl_NumWorkGroups.y. */
static void test_group_count(void **state) {
  fixture_t *f = *state;
  hlo_instruction_t *a = param(f, shp(HLO_F32, 1, 64 * 70000));
  hlo_instruction_t *in = add_instr(f, f->c, HLO_OPCODE_NEGATE, shp(HLO_F32, 1, 64 * 70000), 1, a);
  codegen_kernel_t k;
  vkhlo_status_t st = codegen_emit_instruction(&f->target, NULL, in, &k);
  assert_null(st);
  assert_int_equal(k.group_count[0], 65535);
  assert_int_equal(k.group_count[1], 2);
  codegen_kernel_free(&k);
}

/* The properties columns of opcodes.def agree with each other and with
 * what the emitters do. */
static void test_op_table(void **state) {
  (void)state;
  for (int i = 0; i < HLO_OPCODE_COUNT; i++) {
    hlo_opcode_t op = (hlo_opcode_t)i;
    const char *n = hlo_opcode_name(op);
    hlo_emitter_class_t e = hlo_opcode_emitter(op);
    if (hlo_opcode_is_elementwise(op) && e != HLO_EMITTER_ELEMENTAL) fail_msg("%s: elementwise, not ELEMENTAL", n);
    if (hlo_opcode_is_expensive(op) && e != HLO_EMITTER_ELEMENTAL) fail_msg("%s: a loop, not ELEMENTAL", n);
    if (hlo_opcode_is_contraction(op) && !hlo_opcode_is_expensive(op)) fail_msg("%s: a cheap contraction", n);
    if (hlo_opcode_only_remaps_indices(op) && (!el_is_elemental(op) || hlo_opcode_is_expensive(op)))
      fail_msg("%s: remaps indices but is not cheap and elemental", n);
    if (hlo_opcode_aliases_operand(op) && hlo_opcode_needs_kernel(op)) fail_msg("%s: an alias with a kernel", n);
    assert_int_equal(el_is_data_movement(op), e == HLO_EMITTER_MOVE);
  }
  assert_true(el_is_elemental(HLO_OPCODE_CHLO_ERF));
  assert_false(el_is_elemental(HLO_OPCODE_CHLO_TOP_K));
  assert_int_equal(hlo_opcode_emitter(HLO_OPCODE_SORT), HLO_EMITTER_KERNEL);
  assert_int_equal(hlo_opcode_emitter(HLO_OPCODE_BATCH_NORM_TRAINING), HLO_EMITTER_UNSUPPORTED);
  assert_int_equal(hlo_opcode_cost(HLO_OPCODE_REDUCE), HLO_COST_REDUCTION);
  assert_true(hlo_opcode_is_contraction(HLO_OPCODE_REDUCE_WINDOW));
  assert_true(hlo_opcode_only_remaps_indices(HLO_OPCODE_CONVERT));
  assert_false(hlo_opcode_only_remaps_indices(HLO_OPCODE_GATHER));
  assert_true(hlo_opcode_aliases_operand(HLO_OPCODE_GET_TUPLE_ELEMENT));
  assert_false(hlo_opcode_needs_kernel(HLO_OPCODE_WHILE));
  assert_true(hlo_opcode_needs_kernel(HLO_OPCODE_INFEED));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_op_table),
      cmocka_unit_test_setup_teardown(test_elementwise, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bitcast_convert, setup, teardown),
      cmocka_unit_test_setup_teardown(test_data_movement, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reduce, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dot_and_convolution, setup, teardown),
      cmocka_unit_test_setup_teardown(test_select_and_scatter_and_map, setup, teardown),
      cmocka_unit_test_setup_teardown(test_sort, setup, teardown),
      cmocka_unit_test_setup_teardown(test_scatter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_chlo, setup, teardown),
      cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_group_count, setup, teardown),
      cmocka_unit_test_setup_teardown(test_loop_limit, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
