/*
 * The IR verifier: hlo_verify() checks a module against the invariants of
 * hlo.h and every op against the constraints that the StableHLO
 * specification ("Ops" section, https://openxla.org/stablehlo/spec) states
 * for it, and reports the first violation.
 *
 * What it checks
 *  - Structure: an entry computation exists; every instruction's operands
 *    are defined earlier in the same computation; parameters are numbered in
 *    order; every computation has a root from its own instructions; shapes
 *    are static and of a sane rank.
 *  - Per op: operand counts, element-type classes (e.g. `and` on booleans or
 *    integers, `sine` on floats or complex), shapes (elementwise operands
 *    agree, a transpose's permutation is a permutation...), attribute ranges
 *    (dimension numbers unique, sorted where the spec says so, in range) and
 *    the result shape the spec derives from the inputs, then the signatures
 *    of called computations (reduce bodies, sort comparators, while
 *    condition and body, if/case branches).
 *
 * What it does not do
 *  - It does not modify the module and allocates only one scratch array.
 *  - It does not reject what it does not understand: ops without checks
 *    here (custom_call, dynamic-shape ops, most CHLO ops) are
 *    accepted.  A verifier that rejects a valid program is worse than one
 *    that misses a check, so where the spec and the programs in the wild
 *    disagree (e.g. the element type of a dot_general or convolution result,
 *    which frameworks set to a wider "preferred" type) we accept both.
 *
 * Conventions of the IR this relies on (see hlo.h): an op with one result
 * has that result's shape, an op with 0 or >= 2 results has a tuple shape;
 * a computation returning several values has a tuple root.  if/case/while
 * take their implicit captures as extra operands after the normal ones and
 * their regions take them as extra parameters after the normal ones.
 *
 * Every error is an INVALID_ARGUMENT status from hlo_error_at(instr->loc,
 * ...) whose message reads "file:line:col: stablehlo.OP: what is wrong".
 * Attribute values come from the input, so every one is range-checked
 * before it is used as an index, and size formulas use overflow-checked
 * arithmetic.
 */
#include "hlo/hlo.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ context */

typedef struct verifier {
  const hlo_module_t *module;
  const hlo_computation_t *comp;
  const hlo_instruction_t *instr; /* the instruction being checked */
} verifier_t;

/* "stablehlo.add", "chlo.erf", "check.expect_eq", "parameter". */
static const char *op_display_name(const hlo_instruction_t *instr, char *buf, size_t size) {
  hlo_opcode_t op = instr->opcode;
  if (op == HLO_OPCODE_PARAMETER) return "parameter";
  if (op == HLO_OPCODE_CHECK) {
    if (instr->attrs.check_kind == HLO_CHECK_PRINT) return "interpreter.print";
    snprintf(buf, size, "check.%s", hlo_check_kind_name(instr->attrs.check_kind));
    return buf;
  }
  snprintf(buf, size, "%s.%s", hlo_opcode_is_chlo(op) ? "chlo" : "stablehlo", hlo_opcode_name(op));
  return buf;
}

/* An error at the current instruction: "file:line:col: OPNAME: message". */
static vkhlo_status_t fail(const verifier_t *v, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static vkhlo_status_t fail(const verifier_t *v, const char *fmt, ...) {
  char msg[768], name[64];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (!v->instr) return hlo_error_at(v->comp ? v->comp->loc : (hlo_location_t){0}, "%s", msg);
  return hlo_error_at(v->instr->loc, "%s: %s", op_display_name(v->instr, name, sizeof name), msg);
}

/* Printable shapes and dimension lists, as temporaries inside one call. */
typedef struct text {
  char s[192];
} text_t;

static text_t shape_text(const hlo_shape_t *shape) {
  text_t t;
  hlo_shape_to_string(shape, t.s, sizeof t.s);
  return t;
}

static text_t dims_text(const hlo_dims_t *dims) {
  text_t t;
  size_t pos = 0;
  t.s[0] = 0;
  pos += (size_t)snprintf(t.s, sizeof t.s, "[");
  for (int i = 0; i < dims->count && pos < sizeof t.s; i++)
    pos += (size_t)snprintf(t.s + pos, sizeof t.s - pos, "%s%lld", i ? ", " : "",
                            (long long)dims->data[i]);
  if (pos < sizeof t.s) snprintf(t.s + pos, sizeof t.s - pos, "]");
  return t;
}

static text_t int_list_text(const int64_t *values, int count) {
  hlo_dims_t d = {(int64_t *)values, count};
  return dims_text(&d);
}

#define SHAPE(x) (shape_text(x).s)
#define DIMS(x) (dims_text(x).s)

/* ------------------------------------------------------------ helpers */

/* Element kinds, as bit flags so that an op can list the kinds it takes. */
enum {
  K_PRED = 1,
  K_SINT = 2,
  K_UINT = 4,
  K_FLOAT = 8,
  K_COMPLEX = 16,
  K_INT = K_SINT | K_UINT,
  K_NUMERIC = K_INT | K_FLOAT | K_COMPLEX,
  K_ANY = K_PRED | K_NUMERIC,
};

static int element_kind(hlo_element_type_t t) {
  if (t == HLO_PRED) return K_PRED;
  if (hlo_element_type_is_signed_int(t)) return K_SINT;
  if (hlo_element_type_is_unsigned_int(t)) return K_UINT;
  if (hlo_element_type_is_float(t)) return K_FLOAT;
  if (hlo_element_type_is_complex(t)) return K_COMPLEX;
  return 0; /* token, tuple */
}

static const char *kinds_text(int kinds) {
  switch (kinds) {
    case K_INT: return "integer";
    case K_PRED | K_INT: return "boolean or integer";
    case K_FLOAT: return "floating-point";
    case K_FLOAT | K_COMPLEX: return "floating-point or complex";
    case K_SINT | K_FLOAT | K_COMPLEX: return "signed integer, floating-point or complex";
    case K_NUMERIC: return "integer, floating-point or complex";
    case K_INT | K_FLOAT: return "integer or floating-point";
    default: return "supported";
  }
}

static bool is_array(const hlo_shape_t *s) {
  return s->element_type != HLO_TUPLE && s->element_type != HLO_TOKEN;
}

static bool is_scalar_of(const hlo_shape_t *s, hlo_element_type_t t) {
  return s->element_type == t && s->rank == 0;
}

/* complex<f32> -> f32, complex<f64> -> f64, others unchanged. */
static hlo_element_type_t real_type(hlo_element_type_t t) {
  if (t == HLO_C64) return HLO_F32;
  if (t == HLO_C128) return HLO_F64;
  return t;
}

static bool same_dims(const hlo_shape_t *a, const hlo_shape_t *b) {
  return hlo_shape_compatible_dims(a, b);
}

static bool add_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
static bool mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* Element count with overflow detection; false when it does not fit. */
static bool element_count(const hlo_shape_t *s, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++)
    if (!mul_ok(n, s->dimensions[i], &n)) return false;
  *out = n;
  return true;
}

/* The values of an op's result list: the tuple's elements for a tuple
 * shape, the shape itself otherwise. */
static int result_count(const hlo_shape_t *s) { return s->element_type == HLO_TUPLE ? s->tuple_count : 1; }
static const hlo_shape_t *result_shape(const hlo_shape_t *s, int i) {
  return s->element_type == HLO_TUPLE ? &s->tuple_shapes[i] : s;
}

/* Checks that every value of |dims| is in [0, bound) and appears once;
 * |what| names the attribute in messages. */
static vkhlo_status_t check_dims_in_range_unique(const verifier_t *v, const hlo_dims_t *dims,
                                                 int64_t bound, const char *what,
                                                 const char *bound_what) {
  for (int i = 0; i < dims->count; i++) {
    int64_t d = dims->data[i];
    if (d < 0 || d >= bound)
      return fail(v, "%s %s has %lld out of range [0, %lld) for %s", what, DIMS(dims),
                  (long long)d, (long long)bound, bound_what);
    for (int k = 0; k < i; k++)
      if (dims->data[k] == d)
        return fail(v, "%s %s has dimension %lld more than once", what, DIMS(dims), (long long)d);
  }
  return NULL;
}

static vkhlo_status_t check_sorted(const verifier_t *v, const hlo_dims_t *dims, const char *what) {
  for (int i = 1; i < dims->count; i++)
    if (dims->data[i] <= dims->data[i - 1])
      return fail(v, "%s %s must be sorted in ascending order", what, DIMS(dims));
  return NULL;
}

static vkhlo_status_t expect_operand_count(const verifier_t *v, int n) {
  if (v->instr->operand_count != n)
    return fail(v, "expects %d operand%s but has %d", n, n == 1 ? "" : "s",
                v->instr->operand_count);
  return NULL;
}

static vkhlo_status_t expect_operand_count_at_least(const verifier_t *v, int n) {
  if (v->instr->operand_count < n)
    return fail(v, "expects at least %d operand%s but has %d", n, n == 1 ? "" : "s",
                v->instr->operand_count);
  return NULL;
}

static vkhlo_status_t expect_called_count(const verifier_t *v, int n, const char *what) {
  if (v->instr->called_count != n)
    return fail(v, "expects %d %s but has %d", n, what, v->instr->called_count);
  return NULL;
}

/* The operands of the current instruction must all be tensors (not tuples
 * or tokens). */
static vkhlo_status_t expect_array_operands(const verifier_t *v, int first, int count) {
  for (int i = first; i < first + count && i < v->instr->operand_count; i++) {
    const hlo_shape_t *s = &v->instr->operands[i]->shape;
    if (!is_array(s)) return fail(v, "operand %d must be a tensor but is %s", i, SHAPE(s));
  }
  return NULL;
}

static vkhlo_status_t expect_array_result(const verifier_t *v) {
  if (!is_array(&v->instr->shape))
    return fail(v, "result must be a tensor but is %s", SHAPE(&v->instr->shape));
  return NULL;
}

static vkhlo_status_t expect_result_count(const verifier_t *v, int n) {
  int have = result_count(&v->instr->shape);
  if (have != n) return fail(v, "expects %d result%s but has %d", n, n == 1 ? "" : "s", have);
  return NULL;
}

static vkhlo_status_t expect_kind(const verifier_t *v, const hlo_shape_t *s, int kinds,
                                  const char *what) {
  if (!(element_kind(s->element_type) & kinds))
    return fail(v, "%s must be a tensor of %s type but is %s", what, kinds_text(kinds), SHAPE(s));
  return NULL;
}

/* The result of the current instruction must have the shape |want|. */
static vkhlo_status_t expect_result_shape(const verifier_t *v, const hlo_shape_t *want) {
  if (!hlo_shape_equal(&v->instr->shape, want))
    return fail(v, "result type %s should be %s", SHAPE(&v->instr->shape), SHAPE(want));
  return NULL;
}

/* The result must be a tensor of element type |t| with |rank| dims |dims|. */
static vkhlo_status_t expect_result_dims(const verifier_t *v, hlo_element_type_t t, int rank,
                                         const int64_t *dims) {
  hlo_shape_t want;
  if (rank < 0 || rank > HLO_MAX_RANK) return fail(v, "result rank %d is out of range", rank);
  hlo_shape_init(&want, t, rank, dims);
  return expect_result_shape(v, &want);
}

/* The result list of a computation: its root's shape read as a list. */
static int comp_result_count(const hlo_computation_t *c) { return result_count(&c->root->shape); }
static const hlo_shape_t *comp_result(const hlo_computation_t *c, int i) {
  return result_shape(&c->root->shape, i);
}

/* A reducer (reduce, reduce_window, scatter, all_reduce...): 2N rank-0
 * parameters, N rank-0 results.  |types| (N of them) are the element types
 * of the inputs; the spec allows the body to use wider (promoted) types of
 * the same kind, so only the kind is compared. */
static vkhlo_status_t check_reducer(const verifier_t *v, const hlo_computation_t *body, int n,
                                    const hlo_element_type_t *types, const char *what) {
  if (body->parameter_count != 2 * n)
    return fail(v, "%s must take %d parameters but takes %d", what, 2 * n, body->parameter_count);
  for (int i = 0; i < 2 * n; i++) {
    const hlo_shape_t *p = &body->parameters[i]->shape;
    if (!is_array(p) || p->rank != 0)
      return fail(v, "%s parameter %d must be a rank-0 tensor but is %s", what, i, SHAPE(p));
    /* is_promotable: the same kind, at least as wide */
    if (types && (element_kind(p->element_type) != element_kind(types[i % n]) ||
                  hlo_element_type_bit_width(p->element_type) < hlo_element_type_bit_width(types[i % n])))
      return fail(v, "%s parameter %d has type %s, incompatible with element type %s", what, i,
                  SHAPE(p), hlo_element_type_name(types[i % n]));
  }
  if (comp_result_count(body) != n)
    return fail(v, "%s must return %d value%s but returns %d", what, n, n == 1 ? "" : "s",
                comp_result_count(body));
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *r = comp_result(body, i);
    const hlo_shape_t *p = &body->parameters[i]->shape;
    if (!hlo_shape_equal(r, p))
      return fail(v, "%s returns %s as value %d but its parameter %d is %s", what, SHAPE(r), i, i,
                  SHAPE(p));
  }
  return NULL;
}

/* Windowed size (reduce_window, convolution, select_and_scatter):
 * num_windows for an input dimension of size |d|. */
static bool num_windows(int64_t d, int64_t window, int64_t stride, int64_t pad_lo, int64_t pad_hi,
                        int64_t base_dilation, int64_t window_dilation, int64_t *out) {
  int64_t dilated = 0, padded, dilated_window = 0, t;
  if (d > 0) {
    if (!mul_ok(d - 1, base_dilation, &t) || !add_ok(t, 1, &dilated)) return false;
  }
  if (!add_ok(pad_lo, dilated, &padded) || !add_ok(padded, pad_hi, &padded)) return false;
  if (window > 0) {
    if (!mul_ok(window - 1, window_dilation, &t) || !add_ok(t, 1, &dilated_window)) return false;
  }
  if (padded <= 0 || dilated_window > padded) {
    *out = 0;
    return true;
  }
  *out = (padded - dilated_window) / stride + 1;
  return true;
}

/* Reads a window attribute of |n| values that defaults to |dflt| when absent. */
static vkhlo_status_t window_attr(const verifier_t *v, const hlo_dims_t *attr, int n, int64_t dflt,
                                  int64_t min_value, const char *what, int64_t *out) {
  if (attr->count != 0 && attr->count != n)
    return fail(v, "%s %s must have %d values", what, DIMS(attr), n);
  for (int i = 0; i < n; i++) {
    out[i] = attr->count ? attr->data[i] : dflt;
    if (out[i] < min_value)
      return fail(v, "%s %s must be >= %lld", what, DIMS(attr), (long long)min_value);
  }
  return NULL;
}

/* Padding is stored as 2*N values, low then high per dimension. */
static vkhlo_status_t padding_attr(const verifier_t *v, const hlo_dims_t *attr, int n,
                                   int64_t *lo, int64_t *hi) {
  if (attr->count != 0 && attr->count != 2 * n)
    return fail(v, "padding %s must have %d values (a %dx2 array)", DIMS(attr), 2 * n, n);
  for (int i = 0; i < n; i++) {
    lo[i] = attr->count ? attr->data[2 * i] : 0;
    hi[i] = attr->count ? attr->data[2 * i + 1] : 0;
  }
  return NULL;
}

/* ----------------------------------------------------- elementwise ops */

/* Result element type rule of a unary elementwise op. */
typedef enum { R_SAME, R_REAL, R_PRED, R_ANY } result_rule_t;

static bool unary_rule(hlo_opcode_t op, int *kinds, result_rule_t *rule) {
  *rule = R_SAME;
  switch (op) {
    /* spec "abs": signed integer, floating-point or complex; complex -> real. */
    case HLO_OPCODE_ABS: *kinds = K_SINT | K_FLOAT | K_COMPLEX; *rule = R_REAL; return true;
    /* spec "cbrt", "cosine", "sine", "tan", "tanh", "exponential",
     * "exponential_minus_one", "log", "log_plus_one", "logistic", "rsqrt",
     * "sqrt": floating-point or complex. */
    case HLO_OPCODE_CBRT: case HLO_OPCODE_COSINE: case HLO_OPCODE_SINE: case HLO_OPCODE_TAN:
    case HLO_OPCODE_TANH: case HLO_OPCODE_EXPONENTIAL: case HLO_OPCODE_EXPONENTIAL_MINUS_ONE:
    case HLO_OPCODE_LOG: case HLO_OPCODE_LOG_PLUS_ONE: case HLO_OPCODE_LOGISTIC:
    case HLO_OPCODE_RSQRT: case HLO_OPCODE_SQRT:
      *kinds = K_FLOAT | K_COMPLEX; return true;
    /* spec "ceil", "floor", "round_nearest_afz", "round_nearest_even",
     * "reduce_precision": floating-point. */
    case HLO_OPCODE_CEIL: case HLO_OPCODE_FLOOR: case HLO_OPCODE_ROUND_NEAREST_AFZ:
    case HLO_OPCODE_ROUND_NEAREST_EVEN: case HLO_OPCODE_REDUCE_PRECISION:
      *kinds = K_FLOAT; return true;
    /* spec "count_leading_zeros", "popcnt": integer. */
    case HLO_OPCODE_COUNT_LEADING_ZEROS: case HLO_OPCODE_POPCNT: *kinds = K_INT; return true;
    /* spec "negate": integer, floating-point or complex. */
    case HLO_OPCODE_NEGATE: *kinds = K_NUMERIC; return true;
    /* spec "sign": signed integer, floating-point or complex. */
    case HLO_OPCODE_SIGN: *kinds = K_SINT | K_FLOAT | K_COMPLEX; return true;
    /* spec "not": boolean or integer. */
    case HLO_OPCODE_NOT: *kinds = K_PRED | K_INT; return true;
    /* spec "real", "imag": floating-point or complex; result is real. */
    case HLO_OPCODE_REAL: case HLO_OPCODE_IMAG:
      *kinds = K_FLOAT | K_COMPLEX; *rule = R_REAL; return true;
    /* spec "is_finite": floating-point; result i1. */
    case HLO_OPCODE_IS_FINITE: *kinds = K_FLOAT; *rule = R_PRED; return true;
    /* spec "convert": any to any of the same shape. */
    case HLO_OPCODE_CONVERT: *kinds = K_ANY; *rule = R_ANY; return true;
    default: return false;
  }
}

static vkhlo_status_t verify_unary(const verifier_t *v, int kinds, result_rule_t rule) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape;
  VKHLO_RETURN_IF_ERROR(expect_kind(v, x, kinds, "operand"));
  if (!same_dims(x, &in->shape))
    return fail(v, "result type %s and operand type %s have different shapes", SHAPE(&in->shape),
                SHAPE(x));
  hlo_element_type_t want = x->element_type;
  switch (rule) {
    case R_SAME: break;
    case R_REAL: want = real_type(want); break;
    case R_PRED: want = HLO_PRED; break;
    case R_ANY: return NULL;
  }
  if (in->shape.element_type != want)
    return fail(v, "result type %s should have element type %s", SHAPE(&in->shape),
                hlo_element_type_name(want));
  if (in->opcode == HLO_OPCODE_REDUCE_PRECISION) {
    /* spec "reduce_precision": (C2) exponent_bits >= 1, (C3) mantissa_bits >= 0. */
    if (in->attrs.exponent_bits < 1)
      return fail(v, "exponent_bits %d must be >= 1", in->attrs.exponent_bits);
    if (in->attrs.mantissa_bits < 0)
      return fail(v, "mantissa_bits %d must be >= 0", in->attrs.mantissa_bits);
  }
  return NULL;
}

static bool binary_kinds(hlo_opcode_t op, int *kinds) {
  switch (op) {
    /* spec "add", "multiply", "maximum", "minimum": any element type
     * (booleans are or/and/max/min). */
    case HLO_OPCODE_ADD: case HLO_OPCODE_MULTIPLY: case HLO_OPCODE_MAXIMUM:
    case HLO_OPCODE_MINIMUM:
      *kinds = K_ANY; return true;
    /* spec "subtract", "divide", "remainder", "power": integer,
     * floating-point or complex. */
    case HLO_OPCODE_SUBTRACT: case HLO_OPCODE_DIVIDE: case HLO_OPCODE_REMAINDER:
    case HLO_OPCODE_POWER:
      *kinds = K_NUMERIC; return true;
    /* spec "and", "or", "xor": boolean or integer. */
    case HLO_OPCODE_AND: case HLO_OPCODE_OR: case HLO_OPCODE_XOR:
      *kinds = K_PRED | K_INT; return true;
    /* spec "shift_left", "shift_right_arithmetic", "shift_right_logical": integer. */
    case HLO_OPCODE_SHIFT_LEFT: case HLO_OPCODE_SHIFT_RIGHT_ARITHMETIC:
    case HLO_OPCODE_SHIFT_RIGHT_LOGICAL:
      *kinds = K_INT; return true;
    /* spec "atan2": floating-point or complex. */
    case HLO_OPCODE_ATAN2: *kinds = K_FLOAT | K_COMPLEX; return true;
    default: return false;
  }
}

/* Binary elementwise ops: (C1) lhs, rhs and result have the same type. */
static vkhlo_status_t verify_binary(const verifier_t *v, int kinds) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *a = &in->operands[0]->shape, *b = &in->operands[1]->shape;
  if (!hlo_shape_equal(a, b))
    return fail(v, "operand types %s and %s differ", SHAPE(a), SHAPE(b));
  VKHLO_RETURN_IF_ERROR(expect_kind(v, a, kinds, "operand"));
  if (!hlo_shape_equal(&in->shape, a))
    return fail(v, "result type %s differs from operand type %s", SHAPE(&in->shape), SHAPE(a));
  return NULL;
}

/* spec "compare": (C1) same element type, (C2) same shape, result i1;
 * (C3) compare_type fits the element type. */
static vkhlo_status_t verify_compare(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *a = &in->operands[0]->shape, *b = &in->operands[1]->shape;
  if (!hlo_shape_equal(a, b))
    return fail(v, "operand types %s and %s differ", SHAPE(a), SHAPE(b));
  if (!same_dims(&in->shape, a) || in->shape.element_type != HLO_PRED)
    return fail(v, "result type %s should be a tensor of i1 with the operands' shape",
                SHAPE(&in->shape));
  int kind = element_kind(a->element_type);
  hlo_compare_type_t ct = in->attrs.compare_type;
  bool ok = true;
  switch (ct) {
    case HLO_CMP_TYPE_NOTYPE: break;
    case HLO_CMP_TYPE_SIGNED: ok = kind == K_SINT; break;
    case HLO_CMP_TYPE_UNSIGNED: ok = kind == K_UINT || kind == K_PRED; break;
    case HLO_CMP_TYPE_FLOAT: ok = kind == K_FLOAT || kind == K_COMPLEX; break;
    case HLO_CMP_TYPE_TOTALORDER: ok = kind == K_FLOAT; break;
  }
  if (!ok) {
    static const char *const names[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
    return fail(v, "compare_type %s is not valid for element type %s",
                (unsigned)ct < 5 ? names[ct] : "?", hlo_element_type_name(a->element_type));
  }
  return NULL;
}

/* spec "complex": (C1) lhs and rhs have the same f32/f64 type; result is
 * the complex type of the same shape. */
static vkhlo_status_t verify_complex(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *a = &in->operands[0]->shape, *b = &in->operands[1]->shape;
  if (!hlo_shape_equal(a, b))
    return fail(v, "operand types %s and %s differ", SHAPE(a), SHAPE(b));
  if (a->element_type != HLO_F32 && a->element_type != HLO_F64)
    return fail(v, "operands must be tensors of f32 or f64 but are %s", SHAPE(a));
  hlo_shape_t want = *a;
  want.element_type = a->element_type == HLO_F32 ? HLO_C64 : HLO_C128;
  return expect_result_shape(v, &want);
}

/* spec "select": (C1) rank(pred) = 0 or shape(pred) = shape(on_true);
 * (C2) on_true, on_false and result have the same type. */
static vkhlo_status_t verify_select(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 3));
  const hlo_shape_t *p = &in->operands[0]->shape, *t = &in->operands[1]->shape,
                    *f = &in->operands[2]->shape;
  if (!is_array(p) || p->element_type != HLO_PRED)
    return fail(v, "pred must be a tensor of i1 but is %s", SHAPE(p));
  if (!hlo_shape_equal(t, f))
    return fail(v, "on_true type %s and on_false type %s differ", SHAPE(t), SHAPE(f));
  if (p->rank != 0 && !same_dims(p, t))
    return fail(v, "pred type %s must be rank 0 or have the shape of on_true %s", SHAPE(p),
                SHAPE(t));
  if (!hlo_shape_equal(&in->shape, t))
    return fail(v, "result type %s differs from on_true type %s", SHAPE(&in->shape), SHAPE(t));
  return NULL;
}

/* spec "clamp": (C1) rank(min) = 0 or shape(min) = shape(operand), same for
 * max; (C2) min, operand and max have the same element type; (C3) result
 * type = operand type. */
static vkhlo_status_t verify_clamp(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 3));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 3));
  const hlo_shape_t *lo = &in->operands[0]->shape, *x = &in->operands[1]->shape,
                    *hi = &in->operands[2]->shape;
  if (lo->element_type != x->element_type || hi->element_type != x->element_type)
    return fail(v, "min %s, operand %s and max %s must have the same element type", SHAPE(lo),
                SHAPE(x), SHAPE(hi));
  if (lo->rank != 0 && !same_dims(lo, x))
    return fail(v, "min type %s must be rank 0 or have the shape of operand %s", SHAPE(lo), SHAPE(x));
  if (hi->rank != 0 && !same_dims(hi, x))
    return fail(v, "max type %s must be rank 0 or have the shape of operand %s", SHAPE(hi), SHAPE(x));
  if (!hlo_shape_equal(&in->shape, x))
    return fail(v, "result type %s differs from operand type %s", SHAPE(&in->shape), SHAPE(x));
  return NULL;
}

/* spec "bitcast_convert": same bit width -> same shape; a wider operand
 * gains a last dimension of size ratio in the result, a narrower operand
 * loses its last dimension (which must be the ratio). */
static vkhlo_status_t verify_bitcast_convert(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape, *r = &in->shape;
  int xb = hlo_element_type_bit_width(x->element_type);
  int rb = hlo_element_type_bit_width(r->element_type);
  if (xb == rb) {
    if (!same_dims(x, r))
      return fail(v, "operand %s and result %s have the same bit width but different shapes",
                  SHAPE(x), SHAPE(r));
    return NULL;
  }
  const hlo_shape_t *wide = xb > rb ? x : r, *narrow = xb > rb ? r : x;
  int wb = xb > rb ? xb : rb, nb = xb > rb ? rb : xb;
  bool ok = nb > 0 && wb % nb == 0 && narrow->rank == wide->rank + 1 &&
            narrow->dimensions[narrow->rank - 1] == wb / nb;
  for (int i = 0; ok && i < wide->rank; i++) ok = narrow->dimensions[i] == wide->dimensions[i];
  if (!ok)
    return fail(v, "cannot bitcast %s to %s: the narrower type needs the wider shape plus a last "
                "dimension of size %d",
                SHAPE(x), SHAPE(r), nb > 0 ? wb / nb : 0);
  return NULL;
}

/* --------------------------------------------------- data movement ops */

/* spec "broadcast_in_dim": (C1) element types equal; (C2) size of
 * broadcast_dimensions = rank(operand); (C3) 0 <= bd[i] < rank(result);
 * (C4) unique; (C5) dim(operand, i) = 1 or = dim(result, bd[i]). */
static vkhlo_status_t verify_broadcast_in_dim(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape, *r = &in->shape;
  const hlo_dims_t *bd = &in->attrs.broadcast_dimensions;
  if (x->element_type != r->element_type)
    return fail(v, "operand type %s and result type %s have different element types", SHAPE(x),
                SHAPE(r));
  if (bd->count != x->rank)
    return fail(v, "broadcast_dimensions %s has %d values but the operand %s has rank %d",
                DIMS(bd), bd->count, SHAPE(x), x->rank);
  VKHLO_RETURN_IF_ERROR(
      check_dims_in_range_unique(v, bd, r->rank, "broadcast_dimensions", "the result rank"));
  for (int i = 0; i < x->rank; i++) {
    int64_t want = r->dimensions[bd->data[i]];
    if (x->dimensions[i] != 1 && x->dimensions[i] != want)
      return fail(v, "operand dimension %d has size %lld but result dimension %lld has size %lld "
                  "(must be equal or the operand's 1)",
                  i, (long long)x->dimensions[i], (long long)bd->data[i], (long long)want);
  }
  return NULL;
}

/* "broadcast" (not in the spec's op list; XLA semantics): result shape is
 * broadcast_sizes ++ shape(operand). */
static vkhlo_status_t verify_broadcast(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  const hlo_dims_t *sizes = &in->attrs.dimensions;
  int rank = sizes->count + x->rank;
  if (rank > HLO_MAX_RANK) return fail(v, "result rank %d exceeds %d", rank, HLO_MAX_RANK);
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0; i < sizes->count; i++) dims[i] = sizes->data[i];
  for (int i = 0; i < x->rank; i++) dims[sizes->count + i] = x->dimensions[i];
  return expect_result_dims(v, x->element_type, rank, dims);
}

/* spec "reshape": (C1) same element type; (C2) same element count. */
static vkhlo_status_t verify_reshape(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape, *r = &in->shape;
  if (x->element_type != r->element_type)
    return fail(v, "operand type %s and result type %s have different element types", SHAPE(x),
                SHAPE(r));
  int64_t nx, nr;
  if (!element_count(x, &nx) || !element_count(r, &nr) || nx != nr)
    return fail(v, "operand type %s and result type %s have different element counts", SHAPE(x),
                SHAPE(r));
  return NULL;
}

/* spec "transpose": (C2) permutation is a permutation of range(rank);
 * (C4) dim(result, i) = dim(operand, permutation[i]). */
static vkhlo_status_t verify_transpose(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  const hlo_dims_t *perm = &in->attrs.permutation;
  if (perm->count != x->rank)
    return fail(v, "permutation %s has %d values but the operand %s has rank %d", DIMS(perm),
                perm->count, SHAPE(x), x->rank);
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, perm, x->rank, "permutation", "the operand rank"));
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = x->dimensions[perm->data[i]];
  return expect_result_dims(v, x->element_type, x->rank, dims);
}

/* spec "slice": (C2) sizes = rank; (C3) 0 <= start <= limit <= dim;
 * (C4) strides > 0; (C5) dim(result) = ceil((limit - start) / stride). */
static vkhlo_status_t verify_slice(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  const hlo_dims_t *start = &in->attrs.start_indices, *limit = &in->attrs.limit_indices,
                   *strides = &in->attrs.strides;
  if (start->count != x->rank || limit->count != x->rank ||
      (strides->count != 0 && strides->count != x->rank))
    return fail(v, "start_indices %s, limit_indices %s and strides %s must each have %d values "
                "(the operand rank)",
                DIMS(start), DIMS(limit), DIMS(strides), x->rank);
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    int64_t s = start->data[i], l = limit->data[i], st = strides->count ? strides->data[i] : 1;
    if (s < 0 || s > l || l > x->dimensions[i])
      return fail(v, "dimension %d: need 0 <= start %lld <= limit %lld <= size %lld", i,
                  (long long)s, (long long)l, (long long)x->dimensions[i]);
    if (st <= 0) return fail(v, "dimension %d: stride %lld must be > 0", i, (long long)st);
    dims[i] = (l - s + st - 1) / st;
  }
  return expect_result_dims(v, x->element_type, x->rank, dims);
}

/* spec "concatenate": (C1) same element type; (C2) same shape except
 * `dimension`; (C3) >= 1 input; (C4) 0 <= dimension < rank; (C6) result
 * dimension is the sum. */
static vkhlo_status_t verify_concatenate(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  const hlo_shape_t *x0 = &in->operands[0]->shape;
  int64_t d = in->attrs.dimension;
  if (d < 0 || d >= x0->rank)
    return fail(v, "dimension %lld is out of range for operand rank %d", (long long)d, x0->rank);
  int64_t dims[HLO_MAX_RANK];
  memcpy(dims, x0->dimensions, sizeof dims);
  dims[d] = 0;
  for (int k = 0; k < in->operand_count; k++) {
    const hlo_shape_t *x = &in->operands[k]->shape;
    bool ok = x->element_type == x0->element_type && x->rank == x0->rank;
    for (int i = 0; ok && i < x->rank; i++) ok = i == d || x->dimensions[i] == x0->dimensions[i];
    if (!ok)
      return fail(v, "operand %d type %s does not match operand 0 type %s outside dimension %lld",
                  k, SHAPE(x), SHAPE(x0), (long long)d);
    if (!add_ok(dims[d], x->dimensions[d], &dims[d])) return fail(v, "result size overflows");
  }
  return expect_result_dims(v, x0->element_type, x0->rank, dims);
}

/* spec "pad": (C1) operand, padding_value element types equal;
 * (C2) sizes = rank; (C3) interior_padding >= 0; (C4) result dim =
 * low + dim + max(dim - 1, 0) * interior + high (must be >= 0). */
static vkhlo_status_t verify_pad(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *x = &in->operands[0]->shape, *pv = &in->operands[1]->shape;
  if (pv->rank != 0 || pv->element_type != x->element_type)
    return fail(v, "padding_value %s must be a rank-0 tensor of the operand's element type %s",
                SHAPE(pv), hlo_element_type_name(x->element_type));
  const hlo_dims_t *lo = &in->attrs.edge_padding_low, *hi = &in->attrs.edge_padding_high,
                   *interior = &in->attrs.interior_padding;
  if (lo->count != x->rank || hi->count != x->rank ||
      (interior->count != 0 && interior->count != x->rank))
    return fail(v, "edge_padding_low %s, edge_padding_high %s and interior_padding %s must each "
                "have %d values (the operand rank)",
                DIMS(lo), DIMS(hi), DIMS(interior), x->rank);
  int64_t dims[HLO_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    int64_t d = x->dimensions[i], ip = interior->count ? interior->data[i] : 0, t, n;
    if (ip < 0)
      return fail(v, "interior_padding %s must be >= 0 (dimension %d)", DIMS(interior), i);
    if (!mul_ok(d > 0 ? d - 1 : 0, ip, &t) || !add_ok(t, d, &n) || !add_ok(n, lo->data[i], &n) ||
        !add_ok(n, hi->data[i], &n))
      return fail(v, "result dimension %d overflows", i);
    if (n < 0)
      return fail(v, "dimension %d: padding makes the size negative (%lld)", i, (long long)n);
    dims[i] = n;
  }
  return expect_result_dims(v, x->element_type, x->rank, dims);
}

/* spec "reverse": (C1) result type = operand type; (C2) dimensions unique;
 * (C3) 0 <= dimensions[i] < rank. */
static vkhlo_status_t verify_reverse(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  VKHLO_RETURN_IF_ERROR(
      check_dims_in_range_unique(v, &in->attrs.dimensions, x->rank, "dimensions", "the operand rank"));
  return expect_result_shape(v, x);
}

/* spec "iota": (C1) 0 <= iota_dimension < rank(output). */
static vkhlo_status_t verify_iota(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 0));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  if (in->attrs.dimension < 0 || in->attrs.dimension >= in->shape.rank)
    return fail(v, "iota_dimension %lld is out of range for result %s",
                (long long)in->attrs.dimension, SHAPE(&in->shape));
  VKHLO_RETURN_IF_ERROR(expect_kind(v, &in->shape, K_NUMERIC, "result"));
  return NULL;
}

/* Start indices of dynamic_slice / dynamic_update_slice: |count| rank-0
 * integer tensors of one element type, from operand |first|. */
static vkhlo_status_t check_start_indices(const verifier_t *v, int first, int count) {
  const hlo_instruction_t *in = v->instr;
  for (int i = 0; i < count; i++) {
    const hlo_shape_t *s = &in->operands[first + i]->shape;
    if (!is_array(s) || s->rank != 0 || !(element_kind(s->element_type) & K_INT))
      return fail(v, "start index %d must be a rank-0 integer tensor but is %s", i, SHAPE(s));
    if (s->element_type != in->operands[first]->shape.element_type)
      return fail(v, "start indices have different types %s and %s",
                  SHAPE(&in->operands[first]->shape), SHAPE(s));
  }
  return NULL;
}

/* spec "dynamic_slice": (C2) size(start_indices) = size(slice_sizes) =
 * rank(operand); (C3) same integer type; (C4) 0 <= slice_sizes <= dims;
 * (C5) result shape = slice_sizes, same element type. */
static vkhlo_status_t verify_dynamic_slice(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  const hlo_dims_t *sizes = &in->attrs.slice_sizes;
  if (in->operand_count - 1 != x->rank)
    return fail(v, "has %d start indices but the operand %s has rank %d", in->operand_count - 1,
                SHAPE(x), x->rank);
  VKHLO_RETURN_IF_ERROR(check_start_indices(v, 1, x->rank));
  if (sizes->count != x->rank)
    return fail(v, "slice_sizes %s must have %d values (the operand rank)", DIMS(sizes), x->rank);
  for (int i = 0; i < x->rank; i++)
    if (sizes->data[i] < 0 || sizes->data[i] > x->dimensions[i])
      return fail(v, "slice_sizes %s: size %lld of dimension %d must be in [0, %lld]", DIMS(sizes),
                  (long long)sizes->data[i], i, (long long)x->dimensions[i]);
  return expect_result_dims(v, x->element_type, x->rank, sizes->data);
}

/* spec "dynamic_update_slice": (C1) result type = operand type; (C2) same
 * element type for update; (C3) rank(update) = rank(operand); (C4) start
 * indices count = rank; (C5) same integer type; (C6) dim(update) <= dim. */
static vkhlo_status_t verify_dynamic_update_slice(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *x = &in->operands[0]->shape, *u = &in->operands[1]->shape;
  if (u->element_type != x->element_type || u->rank != x->rank)
    return fail(v, "update %s must have the element type and rank of operand %s", SHAPE(u), SHAPE(x));
  if (in->operand_count - 2 != x->rank)
    return fail(v, "has %d start indices but the operand %s has rank %d", in->operand_count - 2,
                SHAPE(x), x->rank);
  VKHLO_RETURN_IF_ERROR(check_start_indices(v, 2, x->rank));
  for (int i = 0; i < x->rank; i++)
    if (u->dimensions[i] > x->dimensions[i])
      return fail(v, "update %s is larger than operand %s in dimension %d", SHAPE(u), SHAPE(x), i);
  return expect_result_shape(v, x);
}

/* Batching dimensions of gather (operand_batching_dims, collapsed_slice_dims,
 * start_indices_batching_dims) and scatter (input_batching_dims,
 * inserted_window_dims, scatter_indices_batching_dims) obey the same rules:
 * operand batching dims sorted, unique, in range and disjoint from the
 * collapsed/inserted window dims; index batching dims unique, in range, not
 * index_vector_dim, as many as the operand's, with matching sizes. */
typedef struct batching_names {
  const char *operand_dims, *window_dims, *index_dims; /* attribute names */
  const char *operand, *indices;                       /* operand names */
} batching_names_t;

static vkhlo_status_t check_batching_dims(const verifier_t *v, const hlo_dims_t *operand_dims,
                                          const hlo_dims_t *window_dims,
                                          const hlo_dims_t *index_dims, int64_t index_vector_dim,
                                          const hlo_shape_t *x, const hlo_shape_t *idx,
                                          const batching_names_t *n) {
  char what[64];
  snprintf(what, sizeof what, "the %s rank", n->operand);
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, operand_dims, x->rank, n->operand_dims, what));
  VKHLO_RETURN_IF_ERROR(check_sorted(v, operand_dims, n->operand_dims));
  for (int i = 0; i < operand_dims->count; i++)
    if (hlo_dims_contains(*window_dims, operand_dims->data[i]))
      return fail(v, "dimension %lld is in both %s and %s", (long long)operand_dims->data[i],
                  n->window_dims, n->operand_dims);
  snprintf(what, sizeof what, "the %s rank", n->indices);
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, index_dims, idx->rank, n->index_dims, what));
  if (hlo_dims_contains(*index_dims, index_vector_dim))
    return fail(v, "%s %s must not contain index_vector_dim %lld", n->index_dims, DIMS(index_dims),
                (long long)index_vector_dim);
  if (index_dims->count != operand_dims->count)
    return fail(v, "%s %s and %s %s differ in size", n->operand_dims, DIMS(operand_dims),
                n->index_dims, DIMS(index_dims));
  for (int i = 0; i < operand_dims->count; i++) {
    int64_t od = operand_dims->data[i], id = index_dims->data[i];
    if (x->dimensions[od] != idx->dimensions[id])
      return fail(v, "%s batching dimension %lld has size %lld but %s batching dimension %lld has size %lld",
                  n->operand, (long long)od, (long long)x->dimensions[od], n->indices, (long long)id,
                  (long long)idx->dimensions[id]);
  }
  return NULL;
}

/* spec "gather". */
static vkhlo_status_t verify_gather(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *x = &in->operands[0]->shape, *idx = &in->operands[1]->shape, *r = &in->shape;
  VKHLO_RETURN_IF_ERROR(expect_kind(v, idx, K_INT, "start_indices"));
  /* (C1) rank(operand) = size(offset_dims) + size(collapsed_slice_dims) +
   * size(operand_batching_dims). */
  if (x->rank != a->offset_dims.count + a->collapsed_slice_dims.count + a->operand_batching_dims.count)
    return fail(v, "operand rank %d must equal size(offset_dims) %d + size(collapsed_slice_dims) "
                "%d + size(operand_batching_dims) %d",
                x->rank, a->offset_dims.count, a->collapsed_slice_dims.count,
                a->operand_batching_dims.count);
  /* (C2) 0 <= index_vector_dim <= rank(start_indices). */
  if (a->index_vector_dim < 0 || a->index_vector_dim > idx->rank)
    return fail(v, "index_vector_dim %lld must be in [0, %d]", (long long)a->index_vector_dim,
                idx->rank);
  bool ivd_in = a->index_vector_dim < idx->rank;
  /* (C3) size(start_index_map) = dim(start_indices, index_vector_dim) or 1. */
  int64_t n_index = ivd_in ? idx->dimensions[a->index_vector_dim] : 1;
  if (a->start_index_map.count != n_index)
    return fail(v, "start_index_map %s must have %lld values (the index vector size)",
                DIMS(&a->start_index_map), (long long)n_index);
  /* (C4) (C5) offset_dims sorted, unique, in [0, rank(result)). */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->offset_dims, r->rank, "offset_dims", "the result rank"));
  VKHLO_RETURN_IF_ERROR(check_sorted(v, &a->offset_dims, "offset_dims"));
  /* (C6) (C7) collapsed_slice_dims sorted, unique, in range. */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->collapsed_slice_dims, x->rank, "collapsed_slice_dims", "the operand rank"));
  VKHLO_RETURN_IF_ERROR(check_sorted(v, &a->collapsed_slice_dims, "collapsed_slice_dims"));
  /* operand_batching_dims sorted, unique, in range, disjoint from
   * collapsed_slice_dims; start_indices_batching_dims unique, in range,
   * not index_vector_dim, same count, matching sizes. */
  static const batching_names_t gather_names = {"operand_batching_dims", "collapsed_slice_dims",
                                                "start_indices_batching_dims", "operand",
                                                "start_indices"};
  VKHLO_RETURN_IF_ERROR(check_batching_dims(v, &a->operand_batching_dims, &a->collapsed_slice_dims,
                                            &a->start_indices_batching_dims, a->index_vector_dim,
                                            x, idx, &gather_names));
  /* (C9) (C10) start_index_map unique, in range, not a batching dim. */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->start_index_map, x->rank, "start_index_map", "the operand rank"));
  for (int i = 0; i < a->start_index_map.count; i++)
    if (hlo_dims_contains(a->operand_batching_dims, a->start_index_map.data[i]))
      return fail(v, "start_index_map %s must not contain operand batching dimension %lld",
                  DIMS(&a->start_index_map), (long long)a->start_index_map.data[i]);
  /* (C11) (C12) slice_sizes: rank values, 0 <= size <= dim; (C8) collapsed
   * and batching dims have size <= 1. */
  const hlo_dims_t *ss = &a->slice_sizes;
  if (ss->count != x->rank)
    return fail(v, "slice_sizes %s must have %d values (the operand rank)", DIMS(ss), x->rank);
  for (int i = 0; i < x->rank; i++) {
    if (ss->data[i] < 0 || ss->data[i] > x->dimensions[i])
      return fail(v, "slice_sizes %s: size %lld of dimension %d must be in [0, %lld]", DIMS(ss),
                  (long long)ss->data[i], i, (long long)x->dimensions[i]);
    if ((hlo_dims_contains(a->collapsed_slice_dims, i) || hlo_dims_contains(a->operand_batching_dims, i)) &&
        ss->data[i] > 1)
      return fail(v, "slice_sizes %s: collapsed or batching dimension %d must have size <= 1",
                  DIMS(ss), i);
  }
  /* (C13) result shape: batch dims of start_indices (without
   * index_vector_dim) at the non-offset axes, slice sizes (without
   * collapsed and batching dims) at offset_dims. */
  int n_batch = idx->rank - (ivd_in ? 1 : 0);
  int rank = n_batch + a->offset_dims.count;
  if (rank != r->rank)
    return fail(v, "result %s should have rank %d (batch dims %d + offset_dims %d)", SHAPE(r), rank,
                n_batch, a->offset_dims.count);
  int64_t dims[HLO_MAX_RANK];
  int bi = 0, si = 0;
  for (int d = 0; d < rank; d++) {
    if (hlo_dims_contains(a->offset_dims, d)) {
      while (si < x->rank && (hlo_dims_contains(a->collapsed_slice_dims, si) ||
                              hlo_dims_contains(a->operand_batching_dims, si)))
        si++;
      dims[d] = si < x->rank ? ss->data[si++] : 0;
    } else {
      if (bi == a->index_vector_dim && ivd_in) bi++;
      dims[d] = bi < idx->rank ? idx->dimensions[bi++] : 0;
    }
  }
  return expect_result_dims(v, x->element_type, rank, dims);
}

/* spec "scatter". */
static vkhlo_status_t verify_scatter(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 3));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  /* inputs (N), scatter_indices, updates (N). */
  if ((in->operand_count - 1) % 2 != 0)
    return fail(v, "expects N inputs, scatter_indices and N updates but has %d operands",
                in->operand_count);
  int n = (in->operand_count - 1) / 2;
  const hlo_shape_t *x = &in->operands[0]->shape, *idx = &in->operands[n]->shape;
  VKHLO_RETURN_IF_ERROR(expect_kind(v, idx, K_INT, "scatter_indices"));
  /* (C1) inputs have the same shape; (C2) rank(inputs[0]) =
   * size(update_window_dims) + size(inserted_window_dims) +
   * size(input_batching_dims). */
  for (int i = 1; i < n; i++)
    if (!same_dims(&in->operands[i]->shape, x))
      return fail(v, "input %d %s and input 0 %s have different shapes", i,
                  SHAPE(&in->operands[i]->shape), SHAPE(x));
  if (x->rank != a->update_window_dims.count + a->inserted_window_dims.count + a->input_batching_dims.count)
    return fail(v, "input rank %d must equal size(update_window_dims) %d + "
                "size(inserted_window_dims) %d + size(input_batching_dims) %d",
                x->rank, a->update_window_dims.count, a->inserted_window_dims.count,
                a->input_batching_dims.count);
  /* (C3) updates have the same shape; (C4) update shape. */
  const hlo_shape_t *u = &in->operands[n + 1]->shape;
  for (int i = 1; i < n; i++)
    if (!same_dims(&in->operands[n + 1 + i]->shape, u))
      return fail(v, "update %d %s and update 0 %s have different shapes", i,
                  SHAPE(&in->operands[n + 1 + i]->shape), SHAPE(u));
  for (int i = 0; i < n; i++)
    if (in->operands[n + 1 + i]->shape.element_type != in->operands[i]->shape.element_type)
      return fail(v, "update %d %s and input %d %s have different element types", i,
                  SHAPE(&in->operands[n + 1 + i]->shape), i, SHAPE(&in->operands[i]->shape));
  /* (C11) 0 <= index_vector_dim <= rank(scatter_indices). */
  if (a->index_vector_dim < 0 || a->index_vector_dim > idx->rank)
    return fail(v, "index_vector_dim %lld must be in [0, %d]", (long long)a->index_vector_dim, idx->rank);
  bool ivd_in = a->index_vector_dim < idx->rank;
  /* (C5) update_window_dims sorted, unique, in [0, rank(updates)). */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->update_window_dims, u->rank, "update_window_dims", "the updates rank"));
  VKHLO_RETURN_IF_ERROR(check_sorted(v, &a->update_window_dims, "update_window_dims"));
  /* (C6) inserted_window_dims sorted, unique, in range. */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->inserted_window_dims, x->rank, "inserted_window_dims", "the input rank"));
  VKHLO_RETURN_IF_ERROR(check_sorted(v, &a->inserted_window_dims, "inserted_window_dims"));
  /* (C7) (C8) input_batching_dims sorted, unique, in range, disjoint from
   * inserted_window_dims. */
  /* (C9) (C10) scatter_indices_batching_dims unique, in range, not
   * index_vector_dim, same size as input_batching_dims, matching sizes. */
  static const batching_names_t scatter_names = {"input_batching_dims", "inserted_window_dims",
                                                 "scatter_indices_batching_dims", "input",
                                                 "scatter_indices"};
  VKHLO_RETURN_IF_ERROR(check_batching_dims(v, &a->input_batching_dims, &a->inserted_window_dims,
                                            &a->scatter_indices_batching_dims, a->index_vector_dim,
                                            x, idx, &scatter_names));
  /* (C12) (C13) (C14) scatter_dims_to_operand_dims: index vector size,
   * unique, in range, not a batching dim. */
  int64_t n_index = ivd_in ? idx->dimensions[a->index_vector_dim] : 1;
  if (a->scatter_dims_to_operand_dims.count != n_index)
    return fail(v, "scatter_dims_to_operand_dims %s must have %lld values (the index vector size)",
                DIMS(&a->scatter_dims_to_operand_dims), (long long)n_index);
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &a->scatter_dims_to_operand_dims, x->rank, "scatter_dims_to_operand_dims", "the input rank"));
  for (int i = 0; i < a->scatter_dims_to_operand_dims.count; i++)
    if (hlo_dims_contains(a->input_batching_dims, a->scatter_dims_to_operand_dims.data[i]))
      return fail(v, "scatter_dims_to_operand_dims %s must not contain input batching dimension %lld",
                  DIMS(&a->scatter_dims_to_operand_dims),
                  (long long)a->scatter_dims_to_operand_dims.data[i]);
  /* (C4) shape(updates) = combine(update_scatter_dim_sizes,
   * update_window_dim_sizes), window sizes <= the input's (inserted and
   * batching dims excluded). */
  int n_scatter = idx->rank - (ivd_in ? 1 : 0);
  if (u->rank != n_scatter + a->update_window_dims.count)
    return fail(v, "updates %s should have rank %d (scatter dims %d + update_window_dims %d)",
                SHAPE(u), n_scatter + a->update_window_dims.count, n_scatter,
                a->update_window_dims.count);
  int si = 0, xi = 0;
  for (int d = 0; d < u->rank; d++) {
    if (hlo_dims_contains(a->update_window_dims, d)) {
      while (xi < x->rank && (hlo_dims_contains(a->inserted_window_dims, xi) ||
                              hlo_dims_contains(a->input_batching_dims, xi)))
        xi++;
      if (xi < x->rank && (u->dimensions[d] < 0 || u->dimensions[d] > x->dimensions[xi]))
        return fail(v, "updates window dimension %d has size %lld, larger than input dimension "
                    "%d of size %lld",
                    d, (long long)u->dimensions[d], xi, (long long)x->dimensions[xi]);
      xi++;
    } else {
      if (si == a->index_vector_dim && ivd_in) si++;
      if (si < idx->rank && u->dimensions[d] != idx->dimensions[si])
        return fail(v, "updates scatter dimension %d has size %lld but scatter_indices dimension "
                    "%d has size %lld",
                    d, (long long)u->dimensions[d], si, (long long)idx->dimensions[si]);
      si++;
    }
  }
  /* (C15) update_computation is a reducer; (C16) results = input types. */
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "update_computation"));
  hlo_element_type_t types[HLO_MAX_RANK];
  for (int i = 0; i < n && i < HLO_MAX_RANK; i++) types[i] = in->operands[i]->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_reducer(v, in->called_computations[0], n, n <= HLO_MAX_RANK ? types : NULL,
                                      "update_computation"));
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, n));
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *r = result_shape(&in->shape, i);
    if (!same_dims(r, &in->operands[i]->shape))
      return fail(v, "result %d %s must have the shape of input %d %s", i, SHAPE(r), i,
                  SHAPE(&in->operands[i]->shape));
  }
  return NULL;
}

/* spec "sort": (C1) inputs >= 1 of the same shape; (C2) results have the
 * inputs' types; (C3) -R <= dimension < R; (C4) comparator takes 2N rank-0
 * tensors and returns a rank-0 i1. */
static vkhlo_status_t verify_sort(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  int n = in->operand_count;
  const hlo_shape_t *x = &in->operands[0]->shape;
  for (int i = 1; i < n; i++)
    if (!same_dims(&in->operands[i]->shape, x))
      return fail(v, "input %d %s and input 0 %s have different shapes", i,
                  SHAPE(&in->operands[i]->shape), SHAPE(x));
  int64_t d = in->attrs.dimension;
  if (d < -x->rank || d >= x->rank)
    return fail(v, "dimension %lld is out of range [%d, %d)", (long long)d, -x->rank, x->rank);
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, n));
  for (int i = 0; i < n; i++)
    if (!hlo_shape_equal(result_shape(&in->shape, i), &in->operands[i]->shape))
      return fail(v, "result %d %s differs from input %d %s", i, SHAPE(result_shape(&in->shape, i)),
                  i, SHAPE(&in->operands[i]->shape));
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "comparator"));
  const hlo_computation_t *cmp = in->called_computations[0];
  if (cmp->parameter_count != 2 * n)
    return fail(v, "comparator must take %d parameters but takes %d", 2 * n, cmp->parameter_count);
  for (int i = 0; i < 2 * n; i++) {
    const hlo_shape_t *p = &cmp->parameters[i]->shape;
    hlo_element_type_t want = in->operands[i / 2]->shape.element_type;
    if (!is_scalar_of(p, want))
      return fail(v, "comparator parameter %d is %s but should be tensor<%s>", i, SHAPE(p),
                  hlo_element_type_name(want));
  }
  if (comp_result_count(cmp) != 1 || !is_scalar_of(comp_result(cmp, 0), HLO_PRED))
    return fail(v, "comparator must return tensor<i1> but returns %s", SHAPE(&cmp->root->shape));
  return NULL;
}

/* spec "get_tuple_element": (C1) 0 <= index < size(operand);
 * (C2) result type = operand[index] type. */
static vkhlo_status_t verify_get_tuple_element(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  if (x->element_type != HLO_TUPLE) return fail(v, "operand must be a tuple but is %s", SHAPE(x));
  if (in->attrs.index < 0 || in->attrs.index >= x->tuple_count)
    return fail(v, "index %lld is out of range for a tuple of %d elements",
                (long long)in->attrs.index, x->tuple_count);
  return expect_result_shape(v, &x->tuple_shapes[in->attrs.index]);
}

/* spec "tuple": (C1) result element types = operand types. */
static vkhlo_status_t verify_tuple(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_shape_t *r = &in->shape;
  if (r->element_type != HLO_TUPLE || r->tuple_count != in->operand_count)
    return fail(v, "result %s must be a tuple of %d elements", SHAPE(r), in->operand_count);
  for (int i = 0; i < in->operand_count; i++)
    if (!hlo_shape_equal(&r->tuple_shapes[i], &in->operands[i]->shape))
      return fail(v, "tuple element %d %s differs from operand %d %s", i, SHAPE(&r->tuple_shapes[i]),
                  i, SHAPE(&in->operands[i]->shape));
  return NULL;
}

/* spec "constant": (C1) value and output have the same type. */
static vkhlo_status_t verify_constant(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 0));
  if (!in->literal) return fail(v, "has no value");
  if (!hlo_shape_equal(&in->literal->shape, &in->shape))
    return fail(v, "value type %s differs from result type %s", SHAPE(&in->literal->shape),
                SHAPE(&in->shape));
  int64_t count;
  if (!element_count(&in->shape, &count)) return fail(v, "%s is too large", SHAPE(&in->shape));
  if (in->shape.element_type != HLO_TUPLE &&
      in->literal->size_bytes !=
          (size_t)count * hlo_element_type_size_bytes(in->shape.element_type))
    return fail(v, "value holds %zu bytes but %s needs %zu", in->literal->size_bytes,
                SHAPE(&in->shape), (size_t)count * hlo_element_type_size_bytes(in->shape.element_type));
  if (in->literal->size_bytes && !in->literal->data) return fail(v, "value has no data");
  return NULL;
}

/* ------------------------------------ contractions, reductions, windows */

/* dot_general's dimension lists and operand types (C1-C11): shared by
 * dot_general and chlo.ragged_dot. */
static vkhlo_status_t check_dot_dimension_numbers(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  const hlo_shape_t *l = &in->operands[0]->shape, *r = &in->operands[1]->shape;
  const hlo_dims_t *lb = &a->lhs_batching_dimensions, *rb = &a->rhs_batching_dimensions,
                   *lc = &a->lhs_contracting_dimensions, *rc = &a->rhs_contracting_dimensions;
  /* (C2) (C3) matching sizes of the dimension lists. */
  if (lb->count != rb->count)
    return fail(v, "lhs_batching_dimensions %s and rhs_batching_dimensions %s differ in size",
                DIMS(lb), DIMS(rb));
  if (lc->count != rc->count)
    return fail(v, "lhs_contracting_dimensions %s and rhs_contracting_dimensions %s differ in size",
                DIMS(lc), DIMS(rc));
  /* (C6-C9) in range; (C4) (C5) batching and contracting dims disjoint. */
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, lb, l->rank, "lhs_batching_dimensions", "the lhs rank"));
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, lc, l->rank, "lhs_contracting_dimensions", "the lhs rank"));
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, rb, r->rank, "rhs_batching_dimensions", "the rhs rank"));
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, rc, r->rank, "rhs_contracting_dimensions", "the rhs rank"));
  for (int i = 0; i < lc->count; i++)
    if (hlo_dims_contains(*lb, lc->data[i]))
      return fail(v, "lhs dimension %lld is both a batching and a contracting dimension",
                  (long long)lc->data[i]);
  for (int i = 0; i < rc->count; i++)
    if (hlo_dims_contains(*rb, rc->data[i]))
      return fail(v, "rhs dimension %lld is both a batching and a contracting dimension",
                  (long long)rc->data[i]);
  /* (C10) (C11) sizes agree. */
  for (int i = 0; i < lb->count; i++)
    if (l->dimensions[lb->data[i]] != r->dimensions[rb->data[i]])
      return fail(v, "lhs batching dimension %lld has size %lld but rhs batching dimension %lld "
                  "has size %lld",
                  (long long)lb->data[i], (long long)l->dimensions[lb->data[i]],
                  (long long)rb->data[i], (long long)r->dimensions[rb->data[i]]);
  for (int i = 0; i < lc->count; i++)
    if (l->dimensions[lc->data[i]] != r->dimensions[rc->data[i]])
      return fail(v, "lhs contracting dimension %lld has size %lld but rhs contracting dimension "
                  "%lld has size %lld",
                  (long long)lc->data[i], (long long)l->dimensions[lc->data[i]],
                  (long long)rc->data[i], (long long)r->dimensions[rc->data[i]]);
  /* (C1) element types: the same kind (frameworks mix widths, e.g. bf16
   * x f32 with a preferred element type). */
  if (element_kind(l->element_type) != element_kind(r->element_type))
    return fail(v, "lhs %s and rhs %s have incompatible element types", SHAPE(l), SHAPE(r));
  return NULL;
}

/* spec "dot_general". */
static vkhlo_status_t verify_dot_general(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  VKHLO_RETURN_IF_ERROR(check_dot_dimension_numbers(v));
  const hlo_shape_t *l = &in->operands[0]->shape, *r = &in->operands[1]->shape;
  const hlo_dims_t *lb = &a->lhs_batching_dimensions, *rb = &a->rhs_batching_dimensions,
                   *lc = &a->lhs_contracting_dimensions, *rc = &a->rhs_contracting_dimensions;
  /* (C13) shape(result) = batch ++ lhs free ++ rhs free. */
  int64_t dims[HLO_MAX_RANK];
  int rank = hlo_dot_result_dimensions(l, r, *lb, *lc, *rb, *rc, (hlo_dims_t){0}, dims);
  const hlo_shape_t *res = &in->shape;
  bool ok = res->rank == rank;
  for (int i = 0; ok && i < rank; i++) ok = res->dimensions[i] == dims[i];
  if (!ok)
    return fail(v, "result %s should have dimensions %s (batch, lhs free, rhs free)", SHAPE(res),
                int_list_text(dims, rank).s);
  return NULL;
}

/* chlo.ragged_dot (CHLO's ChloOps.td): dot_general's dimension numbers
 * plus exactly one lhs ragged dimension and the rhs group dimensions.  The
 * ragged dimension's kind sets the mode:
 *   1 non-contracting (m): [b,m,k], [g,b,k,n], group_sizes [b,g] -> [b,m,n]
 *     (one rhs group dimension of size g);
 *   2 contracting (k):     [b,m,k], [b,k,n],   [b,g] -> [g,b,m,n];
 *   3 batch (b):           [b,m,k], [b,k,n],   [g]   -> [b,m,n]
 *     (no rhs group dimension in modes 2 and 3).
 * group_sizes is an integer [g], or [prefix..., g] where the prefix is the
 * sizes of the lhs batching dimensions (the batching list, up to the ragged
 * one in mode 3) then, in mode 1, the lhs non-contracting dimensions before
 * the ragged one, in mode 2 the contracting dimensions listed before it. */
static vkhlo_status_t verify_chlo_ragged_dot(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 3));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 3));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  VKHLO_RETURN_IF_ERROR(check_dot_dimension_numbers(v));
  const hlo_shape_t *l = &in->operands[0]->shape, *r = &in->operands[1]->shape,
                    *gs = &in->operands[2]->shape;
  const hlo_dims_t *lb = &a->lhs_batching_dimensions, *rb = &a->rhs_batching_dimensions,
                   *lc = &a->lhs_contracting_dimensions, *rc = &a->rhs_contracting_dimensions,
                   *lr = &a->lhs_ragged_dimensions, *rg = &a->rhs_group_dimensions;
  if (lr->count != 1) return fail(v, "there must be exactly one lhs ragged dimension, got %s", DIMS(lr));
  int64_t ragged = lr->data[0];
  if (ragged < 0 || ragged >= l->rank)
    return fail(v, "lhs ragged dimension %lld is out of range for the lhs rank %d", (long long)ragged, l->rank);
  if (!hlo_element_type_is_integer(gs->element_type) || gs->rank < 1)
    return fail(v, "group_sizes %s must be an integer tensor of rank >= 1", SHAPE(gs));
  int mode = hlo_dims_contains(*lb, ragged) ? 3 : hlo_dims_contains(*lc, ragged) ? 2 : 1;
  int64_t prefix[HLO_MAX_RANK];
  int np = hlo_ragged_dot_prefix_dimensions(a, l->rank, prefix);
  for (int i = 0; i < np; i++) prefix[i] = l->dimensions[prefix[i]];
  if (gs->rank != 1) {
    bool ok = gs->rank == np + 1;
    for (int i = 0; ok && i < np; i++) ok = gs->dimensions[i] == prefix[i];
    if (!ok)
      return fail(v, "group_sizes %s should have dimensions %s followed by the group count, or be rank 1",
                  SHAPE(gs), int_list_text(prefix, np).s);
  }
  int64_t groups = gs->dimensions[gs->rank - 1];
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, rg, r->rank, "rhs_group_dimensions", "the rhs rank"));
  for (int i = 0; i < rg->count; i++)
    if (hlo_dims_contains(*rb, rg->data[i]) || hlo_dims_contains(*rc, rg->data[i]))
      return fail(v, "rhs group dimension %lld is also a batching or contracting dimension",
                  (long long)rg->data[i]);
  if (mode != 1 && rg->count)
    return fail(v, "there must be no rhs group dimension when the lhs ragged dimension is a %s dimension",
                mode == 2 ? "contracting" : "batching");
  if (mode == 1) {
    if (rg->count != 1)
      return fail(v, "there must be exactly one rhs group dimension when the lhs ragged dimension is "
                  "a non-contracting dimension, got %s", DIMS(rg));
    if (r->dimensions[rg->data[0]] != groups)
      return fail(v, "rhs group dimension %lld has size %lld but group_sizes %s holds %lld groups",
                  (long long)rg->data[0], (long long)r->dimensions[rg->data[0]], SHAPE(gs), (long long)groups);
  }
  /* result: [g (mode 2)] ++ batch ++ lhs free ++ rhs free but the group dimension */
  int64_t dims[HLO_MAX_RANK + 1];
  int rank = mode == 2;
  dims[0] = groups;
  rank += hlo_dot_result_dimensions(l, r, *lb, *lc, *rb, *rc, *rg, dims + rank);
  const hlo_shape_t *res = &in->shape;
  bool ok = res->rank == rank && res->element_type == l->element_type;
  for (int i = 0; ok && i < rank; i++) ok = res->dimensions[i] == dims[i];
  if (!ok)
    return fail(v, "result %s should be %s of dimensions %s (%sbatch, lhs free, rhs free but the group "
                "dimension)", SHAPE(res), hlo_element_type_name(l->element_type), int_list_text(dims, rank).s,
                mode == 2 ? "groups, " : "");
  return NULL;
}

/* "dot" (legacy, not in the spec's list): lhs rank 1 or 2, rhs rank 1 or
 * 2, contracting the last lhs dimension with the first rhs dimension. */
static vkhlo_status_t verify_dot(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *l = &in->operands[0]->shape, *r = &in->operands[1]->shape;
  if (l->rank < 1 || l->rank > 2 || r->rank < 1 || r->rank > 2)
    return fail(v, "operands %s and %s must have rank 1 or 2", SHAPE(l), SHAPE(r));
  if (l->dimensions[l->rank - 1] != r->dimensions[0])
    return fail(v, "lhs contracting dimension %d has size %lld but rhs contracting dimension 0 has "
                "size %lld",
                l->rank - 1, (long long)l->dimensions[l->rank - 1], (long long)r->dimensions[0]);
  int64_t dims[2];
  int rank = 0;
  if (l->rank == 2) dims[rank++] = l->dimensions[0];
  if (r->rank == 2) dims[rank++] = r->dimensions[1];
  bool ok = in->shape.rank == rank;
  for (int i = 0; ok && i < rank; i++) ok = in->shape.dimensions[i] == dims[i];
  if (!ok)
    return fail(v, "result %s should have dimensions %s", SHAPE(&in->shape),
                int_list_text(dims, rank).s);
  return NULL;
}

/* spec "convolution". */
static vkhlo_status_t verify_convolution(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *l = &in->operands[0]->shape, *k = &in->operands[1]->shape, *res = &in->shape;
  /* (C1) N = rank(lhs) = rank(rhs); (C28) rank(result) = N. */
  int n = l->rank;
  if (k->rank != n || res->rank != n)
    return fail(v, "lhs %s, rhs %s and result %s must have the same rank", SHAPE(l), SHAPE(k),
                SHAPE(res));
  if (n < 2) return fail(v, "operands must have rank >= 2 but lhs is %s", SHAPE(l));
  /* (C2) element types: the same kind (see dot_general). */
  if (element_kind(l->element_type) != element_kind(k->element_type))
    return fail(v, "lhs %s and rhs %s have incompatible element types", SHAPE(l), SHAPE(k));
  int s = n - 2;
  /* (C13) (C14) input dimensions form a permutation of [0, N). */
  if (a->input_spatial_dimensions.count != s || a->kernel_spatial_dimensions.count != s ||
      a->output_spatial_dimensions.count != s)
    return fail(v, "input/kernel/output spatial dimensions %s %s %s must each have %d values",
                DIMS(&a->input_spatial_dimensions), DIMS(&a->kernel_spatial_dimensions),
                DIMS(&a->output_spatial_dimensions), s);
  int64_t perm[HLO_MAX_RANK];
  hlo_dims_t pd = {perm, n};
  perm[0] = a->input_batch_dimension;
  perm[1] = a->input_feature_dimension;
  for (int i = 0; i < s; i++) perm[2 + i] = a->input_spatial_dimensions.data[i];
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &pd, n, "input dimension numbers (b, f, spatial)", "rank N"));
  perm[0] = a->kernel_input_feature_dimension;
  perm[1] = a->kernel_output_feature_dimension;
  for (int i = 0; i < s; i++) perm[2 + i] = a->kernel_spatial_dimensions.data[i];
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &pd, n, "kernel dimension numbers (i, o, spatial)", "rank N"));
  perm[0] = a->output_batch_dimension;
  perm[1] = a->output_feature_dimension;
  for (int i = 0; i < s; i++) perm[2 + i] = a->output_spatial_dimensions.data[i];
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, &pd, n, "output dimension numbers (b, f, spatial)", "rank N"));
  /* (C3-C10) window attributes. */
  int64_t strides[HLO_MAX_RANK], lo[HLO_MAX_RANK], hi[HLO_MAX_RANK], ldil[HLO_MAX_RANK],
      rdil[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_strides, s, 1, 1, "window_strides", strides));
  VKHLO_RETURN_IF_ERROR(padding_attr(v, &a->padding, s, lo, hi));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->lhs_dilation, s, 1, 1, "lhs_dilation", ldil));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->rhs_dilation, s, 1, 1, "rhs_dilation", rdil));
  if (a->window_reversal.count != 0 && a->window_reversal.count != s)
    return fail(v, "window_reversal %s must have %d values", DIMS(&a->window_reversal), s);
  /* (C22-C24) group counts. */
  int64_t fgc = a->feature_group_count, bgc = a->batch_group_count;
  if (fgc <= 0 || bgc <= 0)
    return fail(v, "feature_group_count %lld and batch_group_count %lld must be > 0",
                (long long)fgc, (long long)bgc);
  if (fgc != 1 && bgc != 1)
    return fail(v, "feature_group_count %lld and batch_group_count %lld cannot both be > 1",
                (long long)fgc, (long long)bgc);
  int64_t in_batch = l->dimensions[a->input_batch_dimension];
  int64_t in_feat = l->dimensions[a->input_feature_dimension];
  int64_t k_in = k->dimensions[a->kernel_input_feature_dimension];
  int64_t k_out = k->dimensions[a->kernel_output_feature_dimension];
  /* (C11) (C12) (C15-C17). */
  if (in_batch % bgc != 0)
    return fail(v, "input batch dimension size %lld is not a multiple of batch_group_count %lld",
                (long long)in_batch, (long long)bgc);
  if (in_feat % fgc != 0)
    return fail(v, "input feature dimension size %lld is not a multiple of feature_group_count %lld",
                (long long)in_feat, (long long)fgc);
  if (k_in != in_feat / fgc)
    return fail(v, "kernel input feature dimension has size %lld but input feature size %lld / "
                "feature_group_count %lld = %lld",
                (long long)k_in, (long long)in_feat, (long long)fgc, (long long)(in_feat / fgc));
  if (k_out % bgc != 0)
    return fail(v, "kernel output feature size %lld is not a multiple of batch_group_count %lld",
                (long long)k_out, (long long)bgc);
  if (k_out % fgc != 0)
    return fail(v, "kernel output feature size %lld is not a multiple of feature_group_count %lld",
                (long long)k_out, (long long)fgc);
  /* (C26) result dimensions. */
  int64_t dims[HLO_MAX_RANK];
  dims[a->output_batch_dimension] = in_batch / bgc;
  dims[a->output_feature_dimension] = k_out;
  for (int i = 0; i < s; i++) {
    int64_t w;
    if (!num_windows(l->dimensions[a->input_spatial_dimensions.data[i]],
                     k->dimensions[a->kernel_spatial_dimensions.data[i]], strides[i], lo[i], hi[i],
                     ldil[i], rdil[i], &w))
      return fail(v, "spatial dimension %d overflows", i);
    dims[a->output_spatial_dimensions.data[i]] = w;
  }
  bool ok = true;
  for (int i = 0; ok && i < n; i++) ok = res->dimensions[i] == dims[i];
  if (!ok)
    return fail(v, "result %s should have dimensions %s", SHAPE(res), int_list_text(dims, n).s);
  return NULL;
}

/* Result i of a reduction (reduce, reduce_window) has the element type of
 * the body's result i and dimensions |dims|. */
static vkhlo_status_t expect_body_typed_results(const verifier_t *v, const hlo_computation_t *body,
                                                int n, int rank, const int64_t *dims) {
  for (int i = 0; i < n; i++) {
    hlo_shape_t want;
    hlo_shape_init(&want, comp_result(body, i)->element_type, rank, dims);
    const hlo_shape_t *r = result_shape(&v->instr->shape, i);
    if (!hlo_shape_equal(r, &want))
      return fail(v, "result %d %s should be %s", i, SHAPE(r), SHAPE(&want));
  }
  return NULL;
}

/* spec "reduce". */
static vkhlo_status_t verify_reduce(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  if (in->operand_count % 2)
    return fail(v, "expects N inputs and N init_values but has %d operands", in->operand_count);
  int n = in->operand_count / 2;
  const hlo_shape_t *x = &in->operands[0]->shape;
  /* (C1) inputs have the same shape; (C2) init_values are rank 0 of the
   * inputs' element types. */
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *xi = &in->operands[i]->shape, *init = &in->operands[n + i]->shape;
    if (!same_dims(xi, x))
      return fail(v, "input %d %s and input 0 %s have different shapes", i, SHAPE(xi), SHAPE(x));
    if (init->rank != 0 || init->element_type != xi->element_type)
      return fail(v, "init_value %d %s must be a rank-0 tensor of input %d's element type %s", i,
                  SHAPE(init), i, hlo_element_type_name(xi->element_type));
  }
  /* (C4) (C5) dimensions unique and in range. */
  const hlo_dims_t *dims = &in->attrs.dimensions;
  VKHLO_RETURN_IF_ERROR(check_dims_in_range_unique(v, dims, x->rank, "dimensions", "the input rank"));
  /* (C6) body is a reducer. */
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "body"));
  const hlo_computation_t *body = in->called_computations[0];
  hlo_element_type_t types[HLO_MAX_RANK];
  for (int i = 0; i < n && i < HLO_MAX_RANK; i++) types[i] = in->operands[n + i]->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_reducer(v, body, n, n <= HLO_MAX_RANK ? types : NULL, "body"));
  /* (C7) (C8) results: the inputs' shape without `dimensions`, element
   * types of the body's results. */
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, n));
  int64_t rdims[HLO_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++)
    if (!hlo_dims_contains(*dims, i)) rdims[rank++] = x->dimensions[i];
  return expect_body_typed_results(v, body, n, rank, rdims);
}

/* spec "reduce_window". */
static vkhlo_status_t verify_reduce_window(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  if (in->operand_count % 2)
    return fail(v, "expects N inputs and N init_values but has %d operands", in->operand_count);
  int n = in->operand_count / 2;
  const hlo_shape_t *x = &in->operands[0]->shape;
  int rank = x->rank;
  /* (C1) (C2) inputs same shape, init values rank 0. */
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *xi = &in->operands[i]->shape, *init = &in->operands[n + i]->shape;
    if (!same_dims(xi, x))
      return fail(v, "input %d %s and input 0 %s have different shapes", i, SHAPE(xi), SHAPE(x));
    if (init->rank != 0 || init->element_type != xi->element_type)
      return fail(v, "init_value %d %s must be a rank-0 tensor of input %d's element type %s", i,
                  SHAPE(init), i, hlo_element_type_name(xi->element_type));
  }
  /* (C4-C12) window attributes: rank values each, positive. */
  int64_t wd[HLO_MAX_RANK], ws[HLO_MAX_RANK], bd[HLO_MAX_RANK], wdil[HLO_MAX_RANK],
      lo[HLO_MAX_RANK], hi[HLO_MAX_RANK];
  if (a->window_dimensions.count != rank)
    return fail(v, "window_dimensions %s must have %d values (the input rank)",
                DIMS(&a->window_dimensions), rank);
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_dimensions, rank, 1, 1, "window_dimensions", wd));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_strides, rank, 1, 1, "window_strides", ws));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->base_dilations, rank, 1, 1, "base_dilations", bd));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_dilations, rank, 1, 1, "window_dilations", wdil));
  VKHLO_RETURN_IF_ERROR(padding_attr(v, &a->padding, rank, lo, hi));
  /* (C13) body is a reducer. */
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "body"));
  const hlo_computation_t *body = in->called_computations[0];
  hlo_element_type_t types[HLO_MAX_RANK];
  for (int i = 0; i < n && i < HLO_MAX_RANK; i++) types[i] = in->operands[n + i]->shape.element_type;
  VKHLO_RETURN_IF_ERROR(check_reducer(v, body, n, n <= HLO_MAX_RANK ? types : NULL, "body"));
  /* (C15) (C16) result shapes: num_windows per dimension. */
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, n));
  int64_t rdims[HLO_MAX_RANK];
  for (int i = 0; i < rank; i++)
    if (!num_windows(x->dimensions[i], wd[i], ws[i], lo[i], hi[i], bd[i], wdil[i], &rdims[i]))
      return fail(v, "dimension %d overflows", i);
  return expect_body_typed_results(v, body, n, rank, rdims);
}

/* spec "select_and_scatter". */
static vkhlo_status_t verify_select_and_scatter(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 3));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 3));
  const hlo_shape_t *x = &in->operands[0]->shape, *src = &in->operands[1]->shape,
                    *init = &in->operands[2]->shape;
  int rank = x->rank;
  /* (C1) element_type(operand) = element_type(source). */
  if (src->element_type != x->element_type)
    return fail(v, "source %s and operand %s have different element types", SHAPE(src), SHAPE(x));
  if (init->rank != 0 || init->element_type != x->element_type)
    return fail(v, "init_value %s must be a rank-0 tensor of element type %s", SHAPE(init),
                hlo_element_type_name(x->element_type));
  /* (C3-C8) window attributes. */
  int64_t wd[HLO_MAX_RANK], ws[HLO_MAX_RANK], lo[HLO_MAX_RANK], hi[HLO_MAX_RANK];
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_dimensions, rank, 1, 1, "window_dimensions", wd));
  VKHLO_RETURN_IF_ERROR(window_attr(v, &a->window_strides, rank, 1, 1, "window_strides", ws));
  VKHLO_RETURN_IF_ERROR(padding_attr(v, &a->padding, rank, lo, hi));
  /* (C2) shape(source) = shape of the windows. */
  int64_t sdims[HLO_MAX_RANK];
  for (int i = 0; i < rank; i++)
    if (!num_windows(x->dimensions[i], wd[i], ws[i], lo[i], hi[i], 1, 1, &sdims[i]))
      return fail(v, "dimension %d overflows", i);
  bool ok = src->rank == rank;
  for (int i = 0; ok && i < rank; i++) ok = src->dimensions[i] == sdims[i];
  if (!ok)
    return fail(v, "source %s should have dimensions %s (the number of windows)", SHAPE(src),
                int_list_text(sdims, rank).s);
  /* (C9) select: (tensor<E>, tensor<E>) -> tensor<i1>; (C10) scatter is a
   * reducer; (C11) result type = operand type. */
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 2, "computations (select, scatter)"));
  const hlo_computation_t *sel = in->called_computations[0];
  if (sel->parameter_count != 2 || !is_scalar_of(&sel->parameters[0]->shape, x->element_type) ||
      !is_scalar_of(&sel->parameters[1]->shape, x->element_type))
    return fail(v, "select must take two tensor<%s> parameters",
                hlo_element_type_name(x->element_type));
  if (comp_result_count(sel) != 1 || !is_scalar_of(comp_result(sel, 0), HLO_PRED))
    return fail(v, "select must return tensor<i1> but returns %s", SHAPE(&sel->root->shape));
  hlo_element_type_t t = x->element_type;
  VKHLO_RETURN_IF_ERROR(check_reducer(v, in->called_computations[1], 1, &t, "scatter"));
  return expect_result_shape(v, x);
}

/* spec "map": (C1) inputs have the same shape; (C2) dimensions = [0, R);
 * (C3) computation takes N rank-0 tensors; (C4) result has the inputs'
 * shape and the computation's result element type. */
static vkhlo_status_t verify_map(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  const hlo_shape_t *x = &in->operands[0]->shape;
  for (int i = 1; i < in->operand_count; i++)
    if (!same_dims(&in->operands[i]->shape, x))
      return fail(v, "input %d %s and input 0 %s have different shapes", i,
                  SHAPE(&in->operands[i]->shape), SHAPE(x));
  const hlo_dims_t *d = &in->attrs.dimensions;
  bool ok = d->count == x->rank;
  for (int i = 0; ok && i < d->count; i++) ok = d->data[i] == i;
  if (!ok) return fail(v, "dimensions %s must be [0, ..., %d]", DIMS(d), x->rank - 1);
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "computation"));
  const hlo_computation_t *c = in->called_computations[0];
  if (c->parameter_count != in->operand_count)
    return fail(v, "computation must take %d parameters but takes %d", in->operand_count,
                c->parameter_count);
  for (int i = 0; i < c->parameter_count; i++)
    if (!is_scalar_of(&c->parameters[i]->shape, in->operands[i]->shape.element_type))
      return fail(v, "computation parameter %d %s should be tensor<%s>", i,
                  SHAPE(&c->parameters[i]->shape),
                  hlo_element_type_name(in->operands[i]->shape.element_type));
  if (comp_result_count(c) != 1 || comp_result(c, 0)->rank != 0 || !is_array(comp_result(c, 0)))
    return fail(v, "computation must return one rank-0 tensor");
  return expect_result_dims(v, comp_result(c, 0)->element_type, x->rank, x->dimensions);
}

/* ----------------------------------------------------------- control flow */

/* Compares a computation's result list with |count| expected shapes. */
static vkhlo_status_t check_returns(const verifier_t *v, const hlo_computation_t *c, int count,
                                    const hlo_shape_t *(*want)(const hlo_instruction_t *, int),
                                    const char *what) {
  if (comp_result_count(c) != count)
    return fail(v, "%s returns %d values but %d are expected", what, comp_result_count(c), count);
  for (int i = 0; i < count; i++)
    if (!hlo_shape_equal(comp_result(c, i), want(v->instr, i)))
      return fail(v, "%s returns %s as value %d but %s is expected", what, SHAPE(comp_result(c, i)),
                  i, SHAPE(want(v->instr, i)));
  return NULL;
}

static const hlo_shape_t *op_result(const hlo_instruction_t *in, int i) {
  return result_shape(&in->shape, i);
}

/* Checks that parameters [first, first+count) of |c| have the types of
 * operands [op_first, ...) of the current instruction. */
static vkhlo_status_t check_params(const verifier_t *v, const hlo_computation_t *c, int first,
                                   int op_first, int count, const char *what) {
  for (int i = 0; i < count; i++) {
    const hlo_shape_t *p = &c->parameters[first + i]->shape;
    const hlo_shape_t *o = &v->instr->operands[op_first + i]->shape;
    if (!hlo_shape_equal(p, o))
      return fail(v, "%s parameter %d is %s but operand %d is %s", what, first + i, SHAPE(p),
                  op_first + i, SHAPE(o));
  }
  return NULL;
}

/* spec "while": (C1) cond takes the operand types and returns tensor<i1>;
 * (C2) body takes the operand types and returns them; (C3) result types =
 * operand types.  Captures: operands [N, N+K) and parameters [N, N+K). */
static vkhlo_status_t verify_while(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 2, "regions (cond, body)"));
  int n = result_count(&in->shape);
  /* One loop value of tuple type reads as a list of its elements. */
  if (n != 1 && in->operand_count >= 1 && hlo_shape_equal(&in->operands[0]->shape, &in->shape))
    return NULL;
  if (in->operand_count < n)
    return fail(v, "has %d results but only %d operands", n, in->operand_count);
  for (int i = 0; i < n; i++)
    if (!hlo_shape_equal(&in->operands[i]->shape, op_result(in, i)))
      return fail(v, "operand %d %s and result %d %s differ", i, SHAPE(&in->operands[i]->shape), i,
                  SHAPE(op_result(in, i)));
  const hlo_computation_t *cond = in->called_computations[0], *body = in->called_computations[1];
  int total = in->operand_count;
  if (cond->parameter_count != total)
    return fail(v, "cond takes %d parameters but the loop carries %d values (with captures)",
                cond->parameter_count, total);
  if (body->parameter_count != total)
    return fail(v, "body takes %d parameters but the loop carries %d values (with captures)",
                body->parameter_count, total);
  VKHLO_RETURN_IF_ERROR(check_params(v, cond, 0, 0, total, "cond"));
  VKHLO_RETURN_IF_ERROR(check_params(v, body, 0, 0, total, "body"));
  if (comp_result_count(cond) != 1 || !is_scalar_of(comp_result(cond, 0), HLO_PRED))
    return fail(v, "cond must return tensor<i1> but returns %s", SHAPE(&cond->root->shape));
  return check_returns(v, body, n, op_result, "body");
}

/* chlo.scan (CHLO's ChloOps.td): operands are |scan_inputs| inputs then the
 * carries' initial values; results are the outputs then the final carries.
 * The body takes each input's slice at one position of |dimension| (that
 * dimension removed) and the carries, and returns one slice of each output
 * and the new carries; outputs stack the slices along |dimension|. */
static vkhlo_status_t verify_chlo_scan(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  const hlo_attrs_t *a = &in->attrs;
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "region (body)"));
  int ni = (int)a->scan_inputs, nc = in->operand_count - ni, nr = result_count(&in->shape);
  int no = nr - nc;
  if (ni < 0 || nc < 0 || no < 0)
    return fail(v, "has %d operands (%lld inputs) and %d results: fewer results than carries", in->operand_count,
                (long long)a->scan_inputs, nr);
  int64_t d = a->dimension, n = -1;
  for (int i = 0; i < ni + no; i++) {
    const hlo_shape_t *s = i < ni ? &in->operands[i]->shape : op_result(in, i - ni);
    if (s->element_type == HLO_TUPLE || d < 0 || d >= s->rank)
      return fail(v, "dimension %lld is out of range for %s %d %s", (long long)d, i < ni ? "input" : "output",
                  i < ni ? i : i - ni, SHAPE(s));
    if (n >= 0 && s->dimensions[d] != n)
      return fail(v, "%s %d %s has %lld positions along dimension %lld, not %lld", i < ni ? "input" : "output",
                  i < ni ? i : i - ni, SHAPE(s), (long long)s->dimensions[d], (long long)d, (long long)n);
    n = s->dimensions[d];
  }
  const hlo_computation_t *body = in->called_computations[0];
  if (body->parameter_count != ni + nc)
    return fail(v, "body takes %d parameters, not one per input and carry (%d)", body->parameter_count, ni + nc);
  if (comp_result_count(body) != nr)
    return fail(v, "body returns %d values, not one per output and carry (%d)", comp_result_count(body), nr);
  for (int i = 0; i < ni + nc + nr; i++) {
    /* the body's parameters: input slices, carries; its results: output
     * slices, carries; each against the op's operand or result */
    const hlo_shape_t *got, *full;
    bool slice;
    if (i < ni + nc) {
      got = &body->parameters[i]->shape;
      full = &in->operands[i]->shape;
      slice = i < ni;
    } else {
      got = comp_result(body, i - ni - nc);
      full = op_result(in, i - ni - nc);
      slice = i - ni - nc < no;
    }
    bool ok = got->element_type == full->element_type && got->rank == full->rank - (slice ? 1 : 0);
    for (int k = 0, j = 0; ok && k < full->rank; k++) {
      if (slice && k == d) continue;
      ok = got->dimensions[j++] == full->dimensions[k];
    }
    if (!ok)
      return fail(v, "body %s %d is %s; %s %s needs %s", i < ni + nc ? "parameter" : "result",
                  i < ni + nc ? i : i - ni - nc, SHAPE(got), i < ni + nc ? "operand" : "result", SHAPE(full),
                  slice ? "its slice without the scan dimension" : "the same type");
  }
  return NULL;
}

/* spec "if": pred is tensor<i1>; (C1) branches take no inputs (here: only
 * captures); (C2) (C3) they return the op's result types. */
static vkhlo_status_t verify_if(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 2, "branches"));
  if (!is_scalar_of(&in->operands[0]->shape, HLO_PRED))
    return fail(v, "pred must be tensor<i1> but is %s", SHAPE(&in->operands[0]->shape));
  static const char *const names[] = {"true_branch", "false_branch"};
  for (int b = 0; b < 2; b++) {
    const hlo_computation_t *c = in->called_computations[b];
    if (c->parameter_count > in->operand_count - 1)
      return fail(v, "%s takes %d parameters but only %d values are captured", names[b],
                  c->parameter_count, in->operand_count - 1);
    if (c->parameter_count == in->operand_count - 1)
      VKHLO_RETURN_IF_ERROR(check_params(v, c, 0, 1, c->parameter_count, names[b]));
    VKHLO_RETURN_IF_ERROR(check_returns(v, c, result_count(&in->shape), op_result, names[b]));
  }
  return NULL;
}

/* spec "case": index is tensor<i32>; (C1) >= 1 branch; (C2) branches take
 * no inputs (here: only captures); (C3) (C4) they return the op's result
 * types. */
static vkhlo_status_t verify_case(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  if (in->called_count < 1) return fail(v, "must have at least one branch");
  if (!is_scalar_of(&in->operands[0]->shape, HLO_S32))
    return fail(v, "index must be tensor<i32> but is %s", SHAPE(&in->operands[0]->shape));
  for (int b = 0; b < in->called_count; b++) {
    const hlo_computation_t *c = in->called_computations[b];
    char what[32];
    snprintf(what, sizeof what, "branch %d", b);
    if (c->parameter_count > in->operand_count - 1)
      return fail(v, "%s takes %d parameters but only %d values are captured", what,
                  c->parameter_count, in->operand_count - 1);
    if (c->parameter_count == in->operand_count - 1)
      VKHLO_RETURN_IF_ERROR(check_params(v, c, 0, 1, c->parameter_count, what));
    VKHLO_RETURN_IF_ERROR(check_returns(v, c, result_count(&in->shape), op_result, what));
  }
  return NULL;
}

/* The collectives (spec "all_gather", "all_reduce", "reduce_scatter",
 * "all_to_all", "collective_broadcast", "collective_permute"): the
 * process ids (hlo_collective_ids_problem); one result per operand
 * (collective_broadcast's dynamic root, the last operand, aside: a rank-1
 * integer tensor of one entry per result); all_reduce's and
 * reduce_scatter's computation a reducer of tensor<E> to which every
 * operand's element type promotes; dimension attributes in range; each
 * result the operand's type (element type E where there is a computation)
 * except, for all_gather, reduce_scatter and all_to_all, the dimension
 * they gather, scatter, split and concatenate.  How many processes a group holds is known only for a
 * linked op (hlo.h, group_size: its operands are every member's, which
 * must agree); otherwise those dimensions must be a whole multiple. */
static vkhlo_status_t verify_collective(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  char why[160];
  if (hlo_collective_ids_problem(in, why, sizeof why)) return fail(v, "%s", why);
  bool dynamic = hlo_collective_has_dynamic_root(in);
  int64_t members = in->attrs.group_size > 0 ? in->attrs.group_size : 1;
  int data = in->operand_count - (dynamic ? 1 : 0), n = result_count(&in->shape);
  if (data < 1 || data % members || data / members != n)
    return fail(v, "has %d results for %d operands%s", n, in->operand_count,
                dynamic ? " (the last one the root)" : "");
  if (in->attrs.group_size > 0 && in->attrs.group_index >= in->attrs.group_size)
    return fail(v, "group_index %lld is outside its group of %lld", (long long)in->attrs.group_index,
                (long long)in->attrs.group_size);
  if (dynamic) {
    const hlo_shape_t *root = &in->operands[data]->shape;
    if (root->rank != 1 || root->dimensions[0] != n || !(element_kind(root->element_type) & K_INT))
      return fail(v, "the dynamic root %s should hold one integer per result (%d)", SHAPE(root), n);
  }
  /* all_reduce, reduce_scatter (C5/C6): the computation takes and returns
   * tensor<E>, the operands' element types promotable to E, the results' E */
  bool reduces = in->opcode == HLO_OPCODE_ALL_REDUCE || in->opcode == HLO_OPCODE_REDUCE_SCATTER ||
                 in->opcode == HLO_OPCODE_COLLECTIVE_REDUCE;
  hlo_element_type_t e = HLO_TUPLE;
  if (reduces) {
    VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "computation"));
    for (int k = 0; k < n; k++) {
      hlo_element_type_t t = in->operands[k]->shape.element_type;
      VKHLO_RETURN_IF_ERROR(check_reducer(v, in->called_computations[0], 1, &t, "computation"));
    }
    e = in->called_computations[0]->parameters[0]->shape.element_type;
  }
  int64_t d = in->opcode == HLO_OPCODE_ALL_TO_ALL ? in->attrs.split_dimension : in->attrs.dimension;
  int64_t c = in->attrs.concat_dimension, parts = in->attrs.split_count;
  for (int k = 0; k < n; k++) {
    const hlo_shape_t *x = &in->operands[k]->shape, *r = op_result(in, k);
    for (int j = 1; j < members; j++)
      if (!hlo_shape_equal(&in->operands[j * n + k]->shape, x))
        return fail(v, "its processes pass operand %d of different types", k);
    if (!is_array(x) || r->element_type != (reduces ? e : x->element_type) || x->rank != r->rank)
      return fail(v, "operand %d %s and result %d %s differ in element type or rank", k, SHAPE(x), k, SHAPE(r));
    int64_t want[HLO_MAX_RANK];
    memcpy(want, x->dimensions, sizeof(int64_t) * (size_t)x->rank);
    bool scaled = false; /* want[d] is a bound to divide, not the size */
    switch (in->opcode) {
      case HLO_OPCODE_ALL_GATHER:
      case HLO_OPCODE_REDUCE_SCATTER:
        if (d < 0 || d >= x->rank) return fail(v, "dimension %lld is out of range for %s", (long long)d, SHAPE(x));
        if (in->attrs.group_size > 0 && in->opcode == HLO_OPCODE_ALL_GATHER) want[d] *= members;
        else if (in->attrs.group_size > 0) want[d] = x->dimensions[d] % members ? -1 : x->dimensions[d] / members;
        else scaled = true;
        break;
      case HLO_OPCODE_ALL_TO_ALL:
        if (d < 0 || d >= x->rank || c < 0 || c >= x->rank)
          return fail(v, "split_dimension %lld or concat_dimension %lld is out of range for %s", (long long)d,
                      (long long)c, SHAPE(x));
        if (parts <= 0 || x->dimensions[d] % parts)
          return fail(v, "split_count %lld does not divide dimension %lld of %s", (long long)parts, (long long)d,
                      SHAPE(x));
        want[d] /= parts;
        want[c] *= parts;
        break;
      default: break;
    }
    for (int i = 0; i < x->rank; i++) {
      bool ok = r->dimensions[i] == want[i];
      if (scaled && i == d) { /* all_gather: a multiple of the operand's; reduce_scatter: a part of it */
        int64_t big = in->opcode == HLO_OPCODE_ALL_GATHER ? r->dimensions[i] : x->dimensions[i];
        int64_t small = in->opcode == HLO_OPCODE_ALL_GATHER ? x->dimensions[i] : r->dimensions[i];
        ok = small ? big % small == 0 : big == 0;
      }
      if (!ok) return fail(v, "result %d %s does not fit operand %d %s", k, SHAPE(r), k, SHAPE(x));
    }
  }
  return NULL;
}

/* spec "optimization_barrier": (C1) result types = operand types. */
static vkhlo_status_t verify_optimization_barrier(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  if (in->operand_count == 1 && hlo_shape_equal(&in->operands[0]->shape, &in->shape)) return NULL;
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, in->operand_count));
  for (int i = 0; i < in->operand_count; i++)
    if (!hlo_shape_equal(op_result(in, i), &in->operands[i]->shape))
      return fail(v, "result %d %s differs from operand %d %s", i, SHAPE(op_result(in, i)), i,
                  SHAPE(&in->operands[i]->shape));
  return NULL;
}

/* check.expect_*: (actual, expected) of the same type. */
static vkhlo_status_t verify_check(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  const hlo_shape_t *a = &in->operands[0]->shape, *e = &in->operands[1]->shape;
  if (!same_dims(a, e) || a->element_type != e->element_type)
    return fail(v, "actual type %s and expected type %s differ", SHAPE(a), SHAPE(e));
  return NULL;
}

/* ------------------------------------------- linear algebra and signal */

/* spec "batch_norm_inference" / "batch_norm_training" / "batch_norm_grad":
 * (C1) 0 <= feature_index < rank(operand); the 1-d per-feature operands
 * have size dim(operand, feature_index) and the operand's element type. */
static vkhlo_status_t verify_batch_norm(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  int want = in->opcode == HLO_OPCODE_BATCH_NORM_INFERENCE ? 5
             : in->opcode == HLO_OPCODE_BATCH_NORM_GRAD   ? 5
                                                          : 3;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, want));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, want));
  const hlo_shape_t *x = &in->operands[0]->shape;
  VKHLO_RETURN_IF_ERROR(expect_kind(v, x, K_FLOAT, "operand"));
  int64_t fi = in->attrs.feature_index;
  if (fi < 0 || fi >= x->rank)
    return fail(v, "feature_index %lld is out of range for operand %s", (long long)fi, SHAPE(x));
  int64_t f = x->dimensions[fi];
  /* batch_norm_grad's last operand (grad_output) has the operand's shape. */
  int per_feature_end = in->opcode == HLO_OPCODE_BATCH_NORM_GRAD ? want - 1 : want;
  for (int i = 1; i < per_feature_end; i++) {
    const hlo_shape_t *s = &in->operands[i]->shape;
    if (s->rank != 1 || s->dimensions[0] != f || s->element_type != x->element_type)
      return fail(v, "operand %d %s must be tensor<%lldx%s>", i, SHAPE(s), (long long)f,
                  hlo_element_type_name(x->element_type));
  }
  if (in->opcode == HLO_OPCODE_BATCH_NORM_GRAD && !hlo_shape_equal(&in->operands[4]->shape, x))
    return fail(v, "grad_output %s must have the operand's type %s",
                SHAPE(&in->operands[4]->shape), SHAPE(x));
  if (in->opcode == HLO_OPCODE_BATCH_NORM_INFERENCE) return expect_result_shape(v, x);
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, 3));
  if (!hlo_shape_equal(op_result(in, 0), x))
    return fail(v, "result 0 %s must have the operand's type %s", SHAPE(op_result(in, 0)), SHAPE(x));
  return NULL;
}

/* spec "cholesky": (C1) result type = a type; (C2) rank >= 2; (C3) square. */
static vkhlo_status_t verify_cholesky(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  if (x->rank < 2 || x->dimensions[x->rank - 1] != x->dimensions[x->rank - 2])
    return fail(v, "a %s must be a batch of square matrices", SHAPE(x));
  return expect_result_shape(v, x);
}

/* spec "triangular_solve": (C1) same element type; (C2) rank >= 2;
 * (C3) batch dims equal; (C4) a square; (C5) a's size matches b's rows
 * (left_side) or columns; (C6) result type = b type. */
static vkhlo_status_t verify_triangular_solve(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 2));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 2));
  const hlo_shape_t *a = &in->operands[0]->shape, *b = &in->operands[1]->shape;
  if (a->element_type != b->element_type)
    return fail(v, "a %s and b %s have different element types", SHAPE(a), SHAPE(b));
  if (a->rank < 2 || a->rank != b->rank)
    return fail(v, "a %s and b %s must have the same rank >= 2", SHAPE(a), SHAPE(b));
  int r = a->rank;
  for (int i = 0; i < r - 2; i++)
    if (a->dimensions[i] != b->dimensions[i])
      return fail(v, "a %s and b %s have different batch dimensions", SHAPE(a), SHAPE(b));
  if (a->dimensions[r - 1] != a->dimensions[r - 2])
    return fail(v, "a %s must be a batch of square matrices", SHAPE(a));
  int64_t want = in->attrs.left_side ? b->dimensions[r - 2] : b->dimensions[r - 1];
  if (a->dimensions[r - 1] != want)
    return fail(v, "a %s does not match b %s (left_side = %s)", SHAPE(a), SHAPE(b),
                in->attrs.left_side ? "true" : "false");
  return expect_result_shape(v, b);
}

/* spec "fft". */
static vkhlo_status_t verify_fft(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape, *r = &in->shape;
  const hlo_dims_t *len = &in->attrs.fft_length;
  /* (C1) (C3) 1 <= size(fft_length) <= min(3, rank). */
  if (len->count < 1 || len->count > 3 || len->count > x->rank)
    return fail(v, "fft_length %s must have 1 to 3 values and at most rank(operand) = %d",
                DIMS(len), x->rank);
  /* (C2) element types. */
  int t = in->attrs.fft_type;
  hlo_element_type_t want_x = x->element_type, want_r;
  switch (t) {
    case 0: case 1: want_r = x->element_type; if (!hlo_element_type_is_complex(want_x)) want_x = HLO_C64; break;
    case 2: want_r = x->element_type == HLO_F64 ? HLO_C128 : HLO_C64; if (want_x != HLO_F32 && want_x != HLO_F64) want_x = HLO_F32; break;
    case 3: want_r = real_type(x->element_type); if (!hlo_element_type_is_complex(want_x)) want_x = HLO_C64; break;
    default: return fail(v, "unknown fft_type %d", t);
  }
  if (want_x != x->element_type || want_r != r->element_type)
    return fail(v, "operand %s and result %s have the wrong element types for this fft_type",
                SHAPE(x), SHAPE(r));
  /* (C4) (C5) dimensions. */
  if (r->rank != x->rank) return fail(v, "result %s must have the operand's rank", SHAPE(r));
  const hlo_shape_t *real = t == 2 ? x : t == 3 ? r : NULL;
  for (int i = 0; i < x->rank; i++) {
    int64_t xd = x->dimensions[i], rd = r->dimensions[i];
    bool last = i == x->rank - 1;
    bool ok = (t == 2 && last) ? rd == (xd == 0 ? 0 : xd / 2 + 1)
              : (t == 3 && last) ? xd == (rd == 0 ? 0 : rd / 2 + 1)
                                 : xd == rd;
    if (!ok) return fail(v, "operand %s and result %s have inconsistent dimensions", SHAPE(x), SHAPE(r));
  }
  /* (C4) the real tensor's trailing dimensions are fft_length; for fft and
   * ifft the operand's (as XLA requires: a transform of another length
   * than its input's is not defined) */
  const hlo_shape_t *sized = real ? real : x;
  for (int i = 0; i < len->count; i++)
    if (sized->dimensions[sized->rank - len->count + i] != len->data[i])
      return fail(v, "fft_length %s does not match the %s tensor %s", DIMS(len), real ? "real" : "operand",
                  SHAPE(sized));
  return NULL;
}

/* spec "rng_bit_generator": (C1) output_state type = initial_state type. */
static vkhlo_status_t verify_rng_bit_generator(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, 2));
  if (!hlo_shape_equal(op_result(in, 0), &in->operands[0]->shape))
    return fail(v, "output_state %s differs from initial_state %s", SHAPE(op_result(in, 0)),
                SHAPE(&in->operands[0]->shape));
  return NULL;
}

/* spec "composite": (C3) the decomposition takes the inputs' types and
 * returns the results' types. */
static vkhlo_status_t verify_composite(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_called_count(v, 1, "decomposition"));
  const hlo_computation_t *d = in->called_computations[0];
  if (d->parameter_count != in->operand_count)
    return fail(v, "decomposition takes %d parameters but the op has %d operands",
                d->parameter_count, in->operand_count);
  VKHLO_RETURN_IF_ERROR(check_params(v, d, 0, 0, in->operand_count, "decomposition"));
  return check_returns(v, d, result_count(&in->shape), op_result, "decomposition");
}

/* spec "get_dimension_size": (C1) 0 <= dimension < rank(operand); the
 * result is tensor<i32>. */
static vkhlo_status_t verify_get_dimension_size(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  if (in->attrs.dimension < 0 || in->attrs.dimension >= x->rank)
    return fail(v, "dimension %lld is out of range for operand %s", (long long)in->attrs.dimension,
                SHAPE(x));
  return expect_result_dims(v, HLO_S32, 0, NULL);
}

/* CHLO elementwise ops (not in the StableHLO spec; chlo dialect): the
 * operands and the result have the same dimensions, and binary operands
 * the same type. */
static vkhlo_status_t verify_chlo_elementwise(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count_at_least(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, in->operand_count));
  VKHLO_RETURN_IF_ERROR(expect_array_result(v));
  const hlo_shape_t *x = &in->operands[0]->shape;
  for (int i = 1; i < in->operand_count; i++)
    if (!hlo_shape_equal(&in->operands[i]->shape, x))
      return fail(v, "operand types %s and %s differ", SHAPE(x), SHAPE(&in->operands[i]->shape));
  if (!same_dims(&in->shape, x))
    return fail(v, "result type %s and operand type %s have different shapes", SHAPE(&in->shape),
                SHAPE(x));
  return NULL;
}

/* chlo.top_k: operand [..., n] with k <= n; results values [..., k] of the
 * operand's element type and indices [..., k] of i32. */
static vkhlo_status_t verify_chlo_top_k(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  VKHLO_RETURN_IF_ERROR(expect_operand_count(v, 1));
  VKHLO_RETURN_IF_ERROR(expect_array_operands(v, 0, 1));
  const hlo_shape_t *x = &in->operands[0]->shape;
  if (x->rank < 1) return fail(v, "operand %s must have rank >= 1", SHAPE(x));
  int64_t k = in->attrs.k, n = x->dimensions[x->rank - 1];
  if (k < 0 || k > n) return fail(v, "k = %lld must be in [0, %lld]", (long long)k, (long long)n);
  VKHLO_RETURN_IF_ERROR(expect_result_count(v, 2));
  hlo_shape_t want = *x;
  want.dimensions[x->rank - 1] = k;
  if (!hlo_shape_equal(op_result(in, 0), &want))
    return fail(v, "values %s should be %s", SHAPE(op_result(in, 0)), SHAPE(&want));
  want.element_type = HLO_S32;
  if (!same_dims(op_result(in, 1), &want) || !(element_kind(op_result(in, 1)->element_type) & K_INT))
    return fail(v, "indices %s should be %s", SHAPE(op_result(in, 1)), SHAPE(&want));
  return NULL;
}

/* ------------------------------------------------------------ dispatch */

static vkhlo_status_t verify_op(const verifier_t *v) {
  const hlo_instruction_t *in = v->instr;
  int kinds;
  result_rule_t rule;
  if (unary_rule(in->opcode, &kinds, &rule)) return verify_unary(v, kinds, rule);
  if (binary_kinds(in->opcode, &kinds)) return verify_binary(v, kinds);
  switch (in->opcode) {
    case HLO_OPCODE_COMPARE: return verify_compare(v);
    case HLO_OPCODE_COMPLEX: return verify_complex(v);
    case HLO_OPCODE_SELECT: return verify_select(v);
    case HLO_OPCODE_CLAMP: return verify_clamp(v);
    case HLO_OPCODE_BITCAST_CONVERT: return verify_bitcast_convert(v);
    case HLO_OPCODE_BROADCAST: return verify_broadcast(v);
    case HLO_OPCODE_BROADCAST_IN_DIM: return verify_broadcast_in_dim(v);
    case HLO_OPCODE_RESHAPE: return verify_reshape(v);
    case HLO_OPCODE_TRANSPOSE: return verify_transpose(v);
    case HLO_OPCODE_SLICE: return verify_slice(v);
    case HLO_OPCODE_CONCATENATE: return verify_concatenate(v);
    case HLO_OPCODE_PAD: return verify_pad(v);
    case HLO_OPCODE_REVERSE: return verify_reverse(v);
    case HLO_OPCODE_IOTA: return verify_iota(v);
    case HLO_OPCODE_DYNAMIC_SLICE: return verify_dynamic_slice(v);
    /* spec "dynamic_broadcast_in_dim", "dynamic_iota", "dynamic_reshape",
     * "dynamic_pad", "dynamic_gather", "dynamic_conv", "real_dynamic_slice":
     * their operands here; the expand pass checks the static op each becomes. */
    case HLO_OPCODE_DYNAMIC_IOTA: return expect_operand_count(v, 1);
    case HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM: case HLO_OPCODE_DYNAMIC_RESHAPE: return expect_operand_count(v, 2);
    case HLO_OPCODE_DYNAMIC_GATHER: case HLO_OPCODE_DYNAMIC_CONV: return expect_operand_count(v, 3);
    case HLO_OPCODE_REAL_DYNAMIC_SLICE: return expect_operand_count(v, 4);
    case HLO_OPCODE_DYNAMIC_PAD: return expect_operand_count(v, 5);
    case HLO_OPCODE_DYNAMIC_UPDATE_SLICE: return verify_dynamic_update_slice(v);
    case HLO_OPCODE_GATHER: return verify_gather(v);
    case HLO_OPCODE_SCATTER: return verify_scatter(v);
    case HLO_OPCODE_SORT: return verify_sort(v);
    case HLO_OPCODE_GET_TUPLE_ELEMENT: return verify_get_tuple_element(v);
    case HLO_OPCODE_TUPLE: return verify_tuple(v);
    case HLO_OPCODE_CONSTANT: return verify_constant(v);
    case HLO_OPCODE_DOT_GENERAL: return verify_dot_general(v);
    case HLO_OPCODE_DOT: return verify_dot(v);
    case HLO_OPCODE_CONVOLUTION: return verify_convolution(v);
    case HLO_OPCODE_REDUCE: return verify_reduce(v);
    case HLO_OPCODE_REDUCE_WINDOW: return verify_reduce_window(v);
    case HLO_OPCODE_SELECT_AND_SCATTER: return verify_select_and_scatter(v);
    case HLO_OPCODE_MAP: return verify_map(v);
    case HLO_OPCODE_WHILE: return verify_while(v);
    case HLO_OPCODE_IF: return verify_if(v);
    case HLO_OPCODE_CASE: return verify_case(v);
    case HLO_OPCODE_OPTIMIZATION_BARRIER: return verify_optimization_barrier(v);
    case HLO_OPCODE_ALL_GATHER:
    case HLO_OPCODE_ALL_REDUCE:
    case HLO_OPCODE_REDUCE_SCATTER:
    case HLO_OPCODE_ALL_TO_ALL:
    case HLO_OPCODE_COLLECTIVE_BROADCAST:
    case HLO_OPCODE_COLLECTIVE_PERMUTE:
    case HLO_OPCODE_COLLECTIVE_REDUCE: return verify_collective(v);
    case HLO_OPCODE_CHECK: return verify_check(v);
    case HLO_OPCODE_BATCH_NORM_INFERENCE:
    case HLO_OPCODE_BATCH_NORM_TRAINING:
    case HLO_OPCODE_BATCH_NORM_GRAD: return verify_batch_norm(v);
    case HLO_OPCODE_CHOLESKY: return verify_cholesky(v);
    case HLO_OPCODE_TRIANGULAR_SOLVE: return verify_triangular_solve(v);
    case HLO_OPCODE_FFT: return verify_fft(v);
    case HLO_OPCODE_RNG_BIT_GENERATOR: return verify_rng_bit_generator(v);
    case HLO_OPCODE_COMPOSITE: return verify_composite(v);
    case HLO_OPCODE_GET_DIMENSION_SIZE: return verify_get_dimension_size(v);
    case HLO_OPCODE_CHLO_TOP_K: return verify_chlo_top_k(v);
    case HLO_OPCODE_CHLO_RAGGED_DOT: return verify_chlo_ragged_dot(v);
    case HLO_OPCODE_CHLO_SCAN: return verify_chlo_scan(v);
    default:
      if (hlo_opcode_is_chlo(in->opcode)) return verify_chlo_elementwise(v);
      return NULL; /* no checks for this op: accept */
  }
}

/* ------------------------------------------------------------ structure */

/* A shape must be static, of rank 0..HLO_MAX_RANK, one tuple level at a
 * time with element storage present. */
static vkhlo_status_t check_shape(const verifier_t *v, const hlo_shape_t *s, int depth) {
  if (s->element_type == HLO_TUPLE) {
    if (s->tuple_count < 0 || (s->tuple_count > 0 && !s->tuple_shapes))
      return fail(v, "malformed tuple shape");
    if (depth > 8) return fail(v, "tuple nesting is too deep");
    for (int i = 0; i < s->tuple_count; i++)
      VKHLO_RETURN_IF_ERROR(check_shape(v, &s->tuple_shapes[i], depth + 1));
    return NULL;
  }
  if ((unsigned)s->element_type >= HLO_TUPLE) return fail(v, "has an unknown element type");
  if (s->rank < 0 || s->rank > HLO_MAX_RANK)
    return fail(v, "rank %d is out of range [0, %d]", s->rank, HLO_MAX_RANK);
  for (int i = 0; i < s->rank; i++)
    if (s->dimensions[i] < 0)
      return fail(v, "dynamic or negative dimension size %lld is not supported",
                  (long long)s->dimensions[i]);
  return NULL;
}

/* Checks one computation's structure and every instruction in it.
 * |defined[id]| holds |stamp| for the instructions seen so far in it. */
static vkhlo_status_t verify_computation(verifier_t *v, const hlo_computation_t *c, int *defined,
                                         int id_limit, int stamp) {
  v->comp = c;
  v->instr = NULL;
  if (!c->root)
    return hlo_error_at(c->loc, "computation @%s has no root", c->name ? c->name : "?");
  if (c->parameter_count > 0 && !c->parameters)
    return hlo_error_at(c->loc, "computation @%s: malformed parameter list", c->name ? c->name : "?");
  for (int p = 0; p < c->parameter_count; p++) {
    const hlo_instruction_t *param = c->parameters[p];
    if (!param || param->opcode != HLO_OPCODE_PARAMETER)
      return hlo_error_at(c->loc, "computation @%s: parameter %d is not a parameter instruction",
                          c->name ? c->name : "?", p);
    if (param->parameter_number != p) {
      v->instr = param;
      return fail(v, "parameter number %d is listed at position %d", param->parameter_number, p);
    }
  }
  bool root_seen = false;
  for (int i = 0; i < c->instruction_count; i++) {
    const hlo_instruction_t *in = c->instructions[i];
    if (!in) return hlo_error_at(c->loc, "computation @%s: missing instruction %d", c->name ? c->name : "?", i);
    v->instr = in;
    if (in->id < 0 || in->id >= id_limit) return fail(v, "instruction id %d is out of range", in->id);
    if (defined[in->id] == stamp) return fail(v, "instruction %%%s appears twice", in->name ? in->name : "?");
    if ((unsigned)in->opcode >= HLO_OPCODE_COUNT) return fail(v, "unknown opcode %d", (int)in->opcode);
    VKHLO_RETURN_IF_ERROR(check_shape(v, &in->shape, 0));
    if (in->operand_count < 0 || (in->operand_count > 0 && !in->operands))
      return fail(v, "malformed operand list");
    for (int k = 0; k < in->operand_count; k++) {
      const hlo_instruction_t *op = in->operands[k];
      if (!op) return fail(v, "operand %d is missing", k);
      if (op->id < 0 || op->id >= id_limit || defined[op->id] != stamp)
        return fail(v, "operand %d (%%%s) is not defined before its use in this computation", k,
                    op->name ? op->name : "?");
    }
    if (in->called_count < 0 || (in->called_count > 0 && !in->called_computations))
      return fail(v, "malformed list of called computations");
    for (int k = 0; k < in->called_count; k++) {
      const hlo_computation_t *cc = in->called_computations[k];
      if (!cc || !cc->root) return fail(v, "called computation %d is missing or has no root", k);
      if (cc->parameter_count > 0 && !cc->parameters)
        return fail(v, "called computation %d has a malformed parameter list", k);
    }
    if (in->opcode == HLO_OPCODE_PARAMETER) {
      if (in->parameter_number < 0 || in->parameter_number >= c->parameter_count ||
          c->parameters[in->parameter_number] != in)
        return fail(v, "parameter %d is not in the computation's parameter list",
                    in->parameter_number);
    }
    VKHLO_RETURN_IF_ERROR(verify_op(v));
    defined[in->id] = stamp;
    if (in == c->root) root_seen = true;
  }
  if (!root_seen) {
    v->instr = NULL;
    return hlo_error_at(c->root->loc, "computation @%s: root is not one of its instructions",
                        c->name ? c->name : "?");
  }
  return NULL;
}

vkhlo_status_t hlo_verify_instruction(const hlo_instruction_t *instr) {
  verifier_t v = {NULL, NULL, instr};
  return verify_op(&v);
}

vkhlo_status_t hlo_verify(const hlo_module_t *module) {
  if (!module) return VKHLO_INVALID("hlo_verify: no module");
  if (!module->entry_computation)
    return VKHLO_INVALID("%s: module has no entry computation",
                         module->source_file ? module->source_file : "<input>");
  if (module->computation_count > 0 && !module->computations)
    return VKHLO_INVALID("module: malformed computation list");
  int id_limit = module->next_instruction_id;
  if (id_limit < 0) return VKHLO_INVALID("module: malformed instruction numbering");
  int *defined = vkhlo_calloc(module->arena.allocator, (size_t)id_limit + 1, sizeof *defined);
  if (!defined) return VKHLO_NO_MEMORY();
  verifier_t v = {module, NULL, NULL};
  vkhlo_status_t status = NULL;
  bool entry_listed = false;
  for (int i = 0; i < module->computation_count && !status; i++) {
    const hlo_computation_t *c = module->computations[i];
    if (!c) {
      status = VKHLO_INVALID("module: computation %d is missing", i);
      break;
    }
    entry_listed |= c == module->entry_computation;
    status = verify_computation(&v, c, defined, id_limit, i + 1);
  }
  if (!status && !entry_listed)
    status = verify_computation(&v, module->entry_computation, defined, id_limit,
                                module->computation_count + 1);
  vkhlo_free(module->arena.allocator, defined);
  return status;
}
