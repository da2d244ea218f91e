/*
 * Shape refinement (see refine.h): the values of small integer tensors,
 * and the spec's shape rules for results whose declared types are dynamic.
 */
#include "hlo/refine.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------- values */

static bool small_integer(const hlo_shape_t *s) {
  if (hlo_shape_is_tuple(s) || hlo_shape_is_dynamic(s)) return false;
  if (s->element_type != HLO_PRED && !hlo_element_type_is_integer(s->element_type)) return false;
  return hlo_shape_element_count(s) <= HLO_REFINE_MAX_VALUES;
}

/* |v| as an element of type |t|: wrapped to its width, sign- or
 * zero-extended. */
static int64_t wrap(hlo_element_type_t t, int64_t v) {
  if (t == HLO_PRED) return v != 0;
  int bits = hlo_element_type_bit_width(t);
  if (bits >= 64) return v;
  uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)v & mask;
  if (hlo_element_type_is_signed_int(t) && (u >> (bits - 1)) & 1) u |= ~mask;
  return (int64_t)u;
}

const int64_t *hlo_refine_value(const hlo_refine_t *r, const hlo_instruction_t *in) {
  return in->id >= 0 && in->id < r->cap ? r->values[in->id] : NULL;
}

/* The row-major index of |idx| in |s|, and back. */
static int64_t linear(const hlo_shape_t *s, const int64_t *idx) {
  int64_t k = 0;
  for (int d = 0; d < s->rank; d++) k = k * s->dimensions[d] + idx[d];
  return k;
}
static void unlinear(const hlo_shape_t *s, int64_t k, int64_t *idx) {
  for (int d = s->rank - 1; d >= 0; d--) {
    idx[d] = s->dimensions[d] ? k % s->dimensions[d] : 0;
    k = s->dimensions[d] ? k / s->dimensions[d] : 0;
  }
}

static bool is_unsigned(hlo_element_type_t t) { return t == HLO_PRED || hlo_element_type_is_unsigned_int(t); }

static bool compare(const hlo_instruction_t *in, hlo_element_type_t t, int64_t a, int64_t b) {
  bool u = is_unsigned(t) || in->attrs.compare_type == HLO_CMP_TYPE_UNSIGNED;
  int lt = u ? (uint64_t)a < (uint64_t)b : a < b;
  switch (in->attrs.comparison_direction) {
    case HLO_CMP_EQ: return a == b;
    case HLO_CMP_NE: return a != b;
    case HLO_CMP_LT: return lt;
    case HLO_CMP_GE: return !lt;
    case HLO_CMP_GT: return a != b && !lt;
    case HLO_CMP_LE: return a == b || lt;
  }
  return false;
}

/* One element of a binary op; false when the result is not defined here
 * (division by zero, shifts and powers are left alone). */
static bool binary(hlo_opcode_t op, hlo_element_type_t t, int64_t a, int64_t b, int64_t *out) {
  bool u = is_unsigned(t);
  switch (op) {
    case HLO_OPCODE_ADD: *out = (int64_t)((uint64_t)a + (uint64_t)b); break;
    case HLO_OPCODE_SUBTRACT: *out = (int64_t)((uint64_t)a - (uint64_t)b); break;
    case HLO_OPCODE_MULTIPLY: *out = (int64_t)((uint64_t)a * (uint64_t)b); break;
    case HLO_OPCODE_DIVIDE:
    case HLO_OPCODE_REMAINDER:
      if (b == 0 || (!u && b == -1 && a == INT64_MIN)) return false;
      if (u) *out = (int64_t)(op == HLO_OPCODE_DIVIDE ? (uint64_t)a / (uint64_t)b : (uint64_t)a % (uint64_t)b);
      else *out = op == HLO_OPCODE_DIVIDE ? a / b : a % b;
      break;
    case HLO_OPCODE_MAXIMUM: *out = (u ? (uint64_t)a > (uint64_t)b : a > b) ? a : b; break;
    case HLO_OPCODE_MINIMUM: *out = (u ? (uint64_t)a < (uint64_t)b : a < b) ? a : b; break;
    case HLO_OPCODE_AND: *out = a & b; break;
    case HLO_OPCODE_OR: *out = a | b; break;
    case HLO_OPCODE_XOR: *out = a ^ b; break;
    default: return false;
  }
  *out = wrap(t, *out);
  return true;
}

static int64_t read_element(const hlo_literal_t *l, int64_t k) {
  size_t size = hlo_element_type_size_bytes(l->shape.element_type);
  const unsigned char *p = (const unsigned char *)l->data + (size_t)k * size;
  uint64_t v = 0;
  for (size_t b = 0; b < size; b++) v |= (uint64_t)p[b] << (8 * b); /* little-endian host layout */
  return wrap(l->shape.element_type, (int64_t)v);
}

/* Evaluates |in| into |out| (its element count); false when unknown. */
static bool evaluate(const hlo_refine_t *r, const hlo_instruction_t *in, int64_t *out) {
  const hlo_shape_t *s = &in->shape;
  hlo_element_type_t t = s->element_type;
  int64_t n = hlo_shape_element_count(s);
  const int64_t *v[3] = {NULL, NULL, NULL};
  for (int i = 0; i < in->operand_count && i < 3; i++) v[i] = hlo_refine_value(r, in->operands[i]);
  const hlo_shape_t *s0 = in->operand_count ? &in->operands[0]->shape : NULL;
  int64_t idx[HLO_MAX_RANK], src[HLO_MAX_RANK];
  /* Operands of the wrong size are the verifier's to report: no value. */
  int64_t have[3] = {0, 0, 0};
  for (int i = 0; i < in->operand_count && i < 3; i++) have[i] = hlo_shape_element_count(&in->operands[i]->shape);
  switch (in->opcode) {
    case HLO_OPCODE_CONVERT: case HLO_OPCODE_RESHAPE: case HLO_OPCODE_NEGATE: case HLO_OPCODE_ABS:
    case HLO_OPCODE_SIGN: case HLO_OPCODE_NOT:
      if (have[0] != n) return false;
      break;
    case HLO_OPCODE_SELECT: case HLO_OPCODE_CLAMP:
      if ((have[0] != n && have[0] != 1) || have[1] != n || (have[2] != n && have[2] != 1)) return false;
      break;
    case HLO_OPCODE_CONSTANT: case HLO_OPCODE_GET_DIMENSION_SIZE: case HLO_OPCODE_BROADCAST_IN_DIM:
    case HLO_OPCODE_SLICE: case HLO_OPCODE_CONCATENATE:
      break;
    default:
      if (in->operand_count == 2 && (have[0] != n || have[1] != n)) return false;
      break;
  }
  switch (in->opcode) {
    case HLO_OPCODE_CONSTANT:
      if (!in->literal || !hlo_shape_equal(&in->literal->shape, s)) return false;
      for (int64_t k = 0; k < n; k++) out[k] = read_element(in->literal, k);
      return true;
    case HLO_OPCODE_GET_DIMENSION_SIZE:
      if (in->attrs.dimension < 0 || in->attrs.dimension >= s0->rank) return false;
      out[0] = wrap(t, s0->dimensions[in->attrs.dimension]);
      return true;
    case HLO_OPCODE_CONVERT:
      if (!v[0]) return false;
      for (int64_t k = 0; k < n; k++) out[k] = wrap(t, v[0][k]);
      return true;
    case HLO_OPCODE_RESHAPE:
      if (!v[0]) return false;
      memcpy(out, v[0], sizeof(int64_t) * (size_t)n);
      return true;
    case HLO_OPCODE_BROADCAST_IN_DIM: {
      const hlo_dims_t *bd = &in->attrs.broadcast_dimensions;
      if (!v[0] || bd->count != s0->rank) return false;
      for (int64_t k = 0; k < n; k++) {
        unlinear(s, k, idx);
        for (int d = 0; d < s0->rank; d++) {
          if (bd->data[d] < 0 || bd->data[d] >= s->rank) return false;
          src[d] = s0->dimensions[d] == 1 ? 0 : idx[bd->data[d]];
          if (src[d] >= s0->dimensions[d]) return false;
        }
        out[k] = v[0][linear(s0, src)];
      }
      return true;
    }
    case HLO_OPCODE_SLICE: {
      const hlo_attrs_t *a = &in->attrs;
      if (!v[0] || a->start_indices.count != s0->rank || a->strides.count != s0->rank) return false;
      for (int64_t k = 0; k < n; k++) {
        unlinear(s, k, idx);
        if (s->rank != s0->rank) return false;
        for (int d = 0; d < s0->rank; d++) {
          src[d] = a->start_indices.data[d] + idx[d] * a->strides.data[d];
          if (src[d] < 0 || src[d] >= s0->dimensions[d]) return false;
        }
        out[k] = v[0][linear(s0, src)];
      }
      return true;
    }
    case HLO_OPCODE_CONCATENATE: {
      int64_t dim = in->attrs.dimension, total = 0;
      if (dim < 0 || dim >= s->rank) return false;
      for (int i = 0; i < in->operand_count; i++) {
        const hlo_shape_t *si = &in->operands[i]->shape;
        if (si->rank != s->rank) return false;
        for (int d = 0; d < s->rank; d++)
          if (d != dim && si->dimensions[d] != s->dimensions[d]) return false;
        total += si->dimensions[dim];
      }
      if (total != s->dimensions[dim]) return false;
      for (int64_t k = 0; k < n; k++) {
        unlinear(s, k, idx);
        int64_t at = idx[dim];
        int i = 0;
        while (i < in->operand_count && at >= in->operands[i]->shape.dimensions[dim])
          at -= in->operands[i++]->shape.dimensions[dim];
        const int64_t *vi = i < in->operand_count ? hlo_refine_value(r, in->operands[i]) : NULL;
        if (!vi) return false;
        memcpy(src, idx, sizeof src);
        src[dim] = at;
        out[k] = vi[linear(&in->operands[i]->shape, src)];
      }
      return true;
    }
    case HLO_OPCODE_NEGATE:
    case HLO_OPCODE_ABS:
    case HLO_OPCODE_SIGN:
    case HLO_OPCODE_NOT:
      if (!v[0]) return false;
      for (int64_t k = 0; k < n; k++) {
        int64_t x = v[0][k];
        switch (in->opcode) {
          case HLO_OPCODE_NEGATE: x = (int64_t)(0 - (uint64_t)x); break;
          case HLO_OPCODE_ABS: x = x < 0 ? (int64_t)(0 - (uint64_t)x) : x; break;
          case HLO_OPCODE_SIGN: x = is_unsigned(t) ? x != 0 : (x > 0) - (x < 0); break;
          default: x = t == HLO_PRED ? !x : ~x; break;
        }
        out[k] = wrap(t, x);
      }
      return true;
    case HLO_OPCODE_COMPARE:
      if (!v[0] || !v[1]) return false;
      for (int64_t k = 0; k < n; k++) out[k] = compare(in, s0->element_type, v[0][k], v[1][k]);
      return true;
    case HLO_OPCODE_SELECT: /* the predicate may be a scalar */
      if (!v[0] || !v[1] || !v[2]) return false;
      for (int64_t k = 0; k < n; k++) out[k] = v[0][s0->rank ? k : 0] ? v[1][k] : v[2][k];
      return true;
    case HLO_OPCODE_CLAMP: { /* min and max may be scalars */
      if (!v[0] || !v[1] || !v[2]) return false;
      bool u = is_unsigned(t);
      for (int64_t k = 0; k < n; k++) {
        int64_t lo = v[0][s0->rank ? k : 0], hi = v[2][in->operands[2]->shape.rank ? k : 0], x = v[1][k];
        if (u ? (uint64_t)x < (uint64_t)lo : x < lo) x = lo;
        if (u ? (uint64_t)x > (uint64_t)hi : x > hi) x = hi;
        out[k] = x;
      }
      return true;
    }
    default:
      if (in->operand_count != 2 || !v[0] || !v[1]) return false;
      for (int64_t k = 0; k < n; k++)
        if (!binary(in->opcode, t, v[0][k], v[1][k], &out[k])) return false;
      return true;
  }
}

static bool store(hlo_refine_t *r, const hlo_instruction_t *in, const int64_t *vals) {
  if (in->id >= r->cap) {
    int cap = r->cap ? r->cap : 256;
    while (cap <= in->id) cap *= 2;
    int64_t **grown = arena_alloc(r->arena, sizeof(int64_t *) * (size_t)cap);
    if (!grown) return false;
    if (r->cap) memcpy(grown, r->values, sizeof(int64_t *) * (size_t)r->cap);
    r->values = grown;
    r->cap = cap;
  }
  int64_t n = hlo_shape_element_count(&in->shape);
  r->values[in->id] = arena_memdup(r->arena, vals, sizeof(int64_t) * (size_t)(n ? n : 1));
  return r->values[in->id] != NULL;
}

bool hlo_refine_record(hlo_refine_t *r, const hlo_instruction_t *in) {
  if (!small_integer(&in->shape) || in->id < 0) return true;
  for (int i = 0; i < in->operand_count; i++)
    if (hlo_shape_is_tuple(&in->operands[i]->shape)) return true;
  int64_t vals[HLO_REFINE_MAX_VALUES];
  return !evaluate(r, in, vals) || store(r, in, vals);
}

bool hlo_refine_copy(hlo_refine_t *r, const hlo_instruction_t *to, const hlo_instruction_t *from) {
  const int64_t *v = hlo_refine_value(r, from);
  if (!v || to->id < 0 || !hlo_shape_equal(&to->shape, &from->shape)) return true;
  return store(r, to, v);
}

/* ------------------------------------------------------------- shapes */

typedef struct {
  const hlo_refine_t *r;
  const hlo_instruction_t *in;
  char *msg;
  size_t size;
} ctx_t;

static bool failf(ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool failf(ctx_t *c, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->msg, c->size, fmt, ap);
  va_end(ap);
  return false;
}

/* The dims of |out| := those of |s| (element type kept). */
static void take_dims(hlo_shape_t *out, const hlo_shape_t *s) {
  hlo_element_type_t t = out->element_type;
  hlo_shape_init(out, t, s->rank, s->dimensions);
}

/* The recorded value of operand |k| as |n| sizes (n = -1: any count). */
static bool sizes_of(ctx_t *c, int k, int n, const char *what, int64_t *out, int *count) {
  if (k >= c->in->operand_count) return failf(c, "%s is missing", what);
  const hlo_instruction_t *x = c->in->operands[k];
  const int64_t *v = hlo_refine_value(c->r, x);
  int64_t m = hlo_shape_element_count(&x->shape);
  if (!v) return failf(c, "its %s is not a value the compiler can compute from the parameters' shapes", what);
  if (n >= 0 && m != n) return failf(c, "its %s has %lld elements, expected %d", what, (long long)m, n);
  for (int64_t i = 0; i < m; i++) out[i] = v[i];
  if (count) *count = (int)m;
  return true;
}

static int64_t dim_at(const hlo_dims_t *d, int i, int64_t dflt) {
  return d->data && i < d->count ? d->data[i] : dflt;
}

/* The three per-dimension lists of a pad (low, high, interior) or slice
 * (start, limit, strides): the dynamic op's shape operands first .. first
 * + 2, or (first < 0) the static op's attributes, |dflt| where absent. */
static bool three_lists(ctx_t *c, int first, const hlo_dims_t *const attrs[3], const char *const names[3],
                        const int64_t dflt[3], int64_t *const out[3]) {
  int rank = c->in->operands[0]->shape.rank;
  for (int k = 0; k < 3; k++) {
    if (first >= 0) {
      if (!sizes_of(c, first + k, rank, names[k], out[k], NULL)) return false;
    } else {
      for (int d = 0; d < rank; d++) out[k][d] = dim_at(attrs[k], d, dflt[k]);
    }
  }
  return true;
}

static int64_t windowed(int64_t size, int64_t base_dilation, int64_t lo, int64_t hi, int64_t window,
                        int64_t window_dilation, int64_t stride) {
  int64_t dilated = size ? (size - 1) * base_dilation + 1 : 0;
  int64_t padded = dilated + lo + hi;
  int64_t span = window ? (window - 1) * window_dilation + 1 : 0;
  if (stride <= 0 || padded < span) return 0;
  return (padded - span) / stride + 1;
}

static bool contains(const hlo_dims_t *d, int64_t x) {
  for (int i = 0; i < d->count; i++)
    if (d->data[i] == x) return true;
  return false;
}

static bool gather_shape(ctx_t *c, const int64_t *slice_sizes, int nsizes, hlo_shape_t *out) {
  const hlo_attrs_t *a = &c->in->attrs;
  const hlo_shape_t *x = &c->in->operands[0]->shape, *idx = &c->in->operands[1]->shape;
  if (nsizes != x->rank) return failf(c, "slice_sizes has %d elements for an operand of rank %d", nsizes, x->rank);
  int64_t batch[HLO_MAX_RANK], offset[HLO_MAX_RANK];
  int nb = 0, no = 0;
  for (int d = 0; d < idx->rank; d++)
    if (d != a->index_vector_dim) batch[nb++] = idx->dimensions[d];
  for (int d = 0; d < x->rank; d++)
    if (!contains(&a->collapsed_slice_dims, d) && !contains(&a->operand_batching_dims, d)) offset[no++] = slice_sizes[d];
  if (nb + no > HLO_MAX_RANK || nb + no != out->rank)
    return failf(c, "the result has rank %d, the gather gives %d", out->rank, nb + no);
  int ib = 0, io = 0;
  for (int d = 0; d < out->rank; d++) {
    if (contains(&a->offset_dims, d)) {
      if (io >= no) return failf(c, "offset_dims does not fit the slice sizes");
      out->dimensions[d] = offset[io++];
    } else {
      if (ib >= nb) return failf(c, "offset_dims does not fit the start indices");
      out->dimensions[d] = batch[ib++];
    }
  }
  return true;
}

static bool convolution_shape(ctx_t *c, const int64_t *padding, hlo_shape_t *out) {
  const hlo_attrs_t *a = &c->in->attrs;
  const hlo_shape_t *x = &c->in->operands[0]->shape, *w = &c->in->operands[1]->shape;
  int n = a->input_spatial_dimensions.count;
  bool fits = out->rank == x->rank && n + 2 == x->rank && w->rank == x->rank && a->kernel_spatial_dimensions.count == n &&
              a->output_spatial_dimensions.count == n;
  int64_t ends[] = {a->input_batch_dimension, a->kernel_output_feature_dimension, a->output_batch_dimension,
                    a->output_feature_dimension};
  for (int i = 0; i < 4; i++) fits = fits && ends[i] >= 0 && ends[i] < x->rank;
  for (int i = 0; fits && i < n; i++)
    fits = a->input_spatial_dimensions.data[i] >= 0 && a->input_spatial_dimensions.data[i] < x->rank &&
           a->kernel_spatial_dimensions.data[i] >= 0 && a->kernel_spatial_dimensions.data[i] < x->rank &&
           a->output_spatial_dimensions.data[i] >= 0 && a->output_spatial_dimensions.data[i] < x->rank;
  if (!fits) return failf(c, "the dimension numbers do not fit the operands");
  int64_t bgc = a->batch_group_count > 0 ? a->batch_group_count : 1;
  out->dimensions[a->output_batch_dimension] = x->dimensions[a->input_batch_dimension] / bgc;
  out->dimensions[a->output_feature_dimension] = w->dimensions[a->kernel_output_feature_dimension];
  for (int i = 0; i < n; i++) {
    out->dimensions[a->output_spatial_dimensions.data[i]] =
        windowed(x->dimensions[a->input_spatial_dimensions.data[i]], dim_at(&a->lhs_dilation, i, 1),
                 padding[2 * i], padding[2 * i + 1], w->dimensions[a->kernel_spatial_dimensions.data[i]],
                 dim_at(&a->rhs_dilation, i, 1), dim_at(&a->window_strides, i, 1));
  }
  return true;
}

/* The shape rule of |in|'s op: sets the dims of |out| (rank and element
 * type as declared; |k|: which result, for ops with several). */
static bool infer(ctx_t *c, int k, hlo_shape_t *out) {
  const hlo_instruction_t *in = c->in;
  const hlo_attrs_t *a = &in->attrs;
  const hlo_shape_t *s0 = in->operand_count ? &in->operands[0]->shape : NULL;
  int64_t vals[HLO_REFINE_MAX_VALUES], lo[HLO_REFINE_MAX_VALUES], hi[HLO_REFINE_MAX_VALUES],
      inner[HLO_REFINE_MAX_VALUES];
  int count = 0;
  int need = 1; /* operands the rules below read */
  switch (in->opcode) {
    case HLO_OPCODE_DOT_GENERAL: case HLO_OPCODE_GATHER: case HLO_OPCODE_CONVOLUTION:
    case HLO_OPCODE_DYNAMIC_GATHER: case HLO_OPCODE_DYNAMIC_CONV: case HLO_OPCODE_TRIANGULAR_SOLVE:
      need = 2;
      break;
    default: break;
  }
  if (!in->operand_count)
    return failf(c, "no operand gives the shape of its dynamic result (stablehlo.%s needs a static type)",
                 hlo_opcode_name(in->opcode));
  if (in->operand_count < need) return failf(c, "it has %d operands", in->operand_count);
  if (a->input_spatial_dimensions.count > HLO_MAX_RANK) return failf(c, "too many spatial dimensions");
  switch (in->opcode) {
    case HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM:
    case HLO_OPCODE_DYNAMIC_RESHAPE:
    case HLO_OPCODE_DYNAMIC_IOTA: /* the output shape: operand 1 (dynamic_iota's only operand) */
      if (!sizes_of(c, in->opcode == HLO_OPCODE_DYNAMIC_IOTA ? 0 : 1, out->rank, "output shape", vals, NULL))
        return false;
      hlo_shape_init(out, out->element_type, out->rank, vals);
      return true;
    case HLO_OPCODE_PAD:
    case HLO_OPCODE_DYNAMIC_PAD: {
      const hlo_dims_t *const at[3] = {&a->edge_padding_low, &a->edge_padding_high, &a->interior_padding};
      static const char *const names[3] = {"edge_padding_low", "edge_padding_high", "interior_padding"};
      static const int64_t dflt[3] = {0, 0, 0};
      int64_t *const lists[3] = {lo, hi, inner};
      if (!three_lists(c, in->opcode == HLO_OPCODE_DYNAMIC_PAD ? 2 : -1, at, names, dflt, lists)) return false;
      take_dims(out, s0);
      for (int d = 0; d < s0->rank; d++) {
        int64_t n = s0->dimensions[d];
        out->dimensions[d] = lo[d] + hi[d] + n + (n ? (n - 1) * inner[d] : 0);
      }
      return true;
    }
    case HLO_OPCODE_SLICE:
    case HLO_OPCODE_REAL_DYNAMIC_SLICE: {
      const hlo_dims_t *const at[3] = {&a->start_indices, &a->limit_indices, &a->strides};
      static const char *const names[3] = {"start_indices", "limit_indices", "strides"};
      static const int64_t dflt[3] = {0, 0, 1};
      int64_t *const lists[3] = {lo, hi, inner};
      if (!three_lists(c, in->opcode == HLO_OPCODE_REAL_DYNAMIC_SLICE ? 1 : -1, at, names, dflt, lists)) return false;
      take_dims(out, s0);
      for (int d = 0; d < s0->rank; d++) {
        if (inner[d] <= 0) return failf(c, "stride %lld is not positive", (long long)inner[d]);
        out->dimensions[d] = hi[d] > lo[d] ? (hi[d] - lo[d] + inner[d] - 1) / inner[d] : 0;
      }
      return true;
    }
    case HLO_OPCODE_DYNAMIC_SLICE:
      take_dims(out, s0);
      for (int d = 0; d < s0->rank; d++) out->dimensions[d] = dim_at(&a->slice_sizes, d, 0);
      return true;
    case HLO_OPCODE_DYNAMIC_GATHER:
      if (!sizes_of(c, 2, s0->rank, "slice_sizes", vals, &count)) return false;
      return gather_shape(c, vals, count, out);
    case HLO_OPCODE_GATHER:
      return gather_shape(c, a->slice_sizes.data, a->slice_sizes.count, out);
    case HLO_OPCODE_DYNAMIC_CONV:
      if (!sizes_of(c, 2, 2 * a->input_spatial_dimensions.count, "padding", vals, NULL)) return false;
      return convolution_shape(c, vals, out);
    case HLO_OPCODE_CONVOLUTION:
      for (int i = 0; i < 2 * a->input_spatial_dimensions.count; i++) vals[i] = dim_at(&a->padding, i, 0);
      return convolution_shape(c, vals, out);
    case HLO_OPCODE_BROADCAST_IN_DIM: { /* the operand's sizes where mapped, the declared ones elsewhere */
      const hlo_dims_t *bd = &a->broadcast_dimensions;
      for (int d = 0; d < s0->rank && d < bd->count; d++)
        if (bd->data[d] >= 0 && bd->data[d] < out->rank && out->dimensions[bd->data[d]] == HLO_DYNAMIC_DIM)
          out->dimensions[bd->data[d]] = s0->dimensions[d];
      return true;
    }
    case HLO_OPCODE_RESHAPE: { /* one open dimension: what the element count leaves */
      int64_t known = 1;
      int open = -1;
      for (int d = 0; d < out->rank; d++) {
        if (out->dimensions[d] != HLO_DYNAMIC_DIM) known *= out->dimensions[d];
        else if (open >= 0) return failf(c, "reshape to more than one dynamic dimension");
        else open = d;
      }
      if (open >= 0) {
        if (!known || hlo_shape_element_count(s0) % known) return failf(c, "the element counts do not divide");
        out->dimensions[open] = hlo_shape_element_count(s0) / known;
      }
      return true;
    }
    case HLO_OPCODE_TRANSPOSE:
      take_dims(out, s0);
      for (int d = 0; d < s0->rank && d < a->permutation.count; d++) {
        int64_t p = a->permutation.data[d];
        if (p < 0 || p >= s0->rank) return failf(c, "permutation out of range");
        out->dimensions[d] = s0->dimensions[p];
      }
      return true;
    case HLO_OPCODE_CONCATENATE: {
      if (a->dimension < 0 || a->dimension >= s0->rank) return failf(c, "dimension out of range");
      take_dims(out, s0);
      int64_t sum = 0;
      for (int i = 0; i < in->operand_count; i++) sum += in->operands[i]->shape.dimensions[a->dimension];
      out->dimensions[a->dimension] = sum;
      return true;
    }
    case HLO_OPCODE_DOT_GENERAL: {
      const hlo_shape_t *s1 = &in->operands[1]->shape;
      int r = 0;
      for (int i = 0; i < a->lhs_batching_dimensions.count; i++) {
        int64_t d = a->lhs_batching_dimensions.data[i];
        if (d < 0 || d >= s0->rank || r >= HLO_MAX_RANK) return failf(c, "lhs_batching_dimensions out of range");
        vals[r++] = s0->dimensions[d];
      }
      for (int d = 0; d < s0->rank; d++)
        if (!contains(&a->lhs_batching_dimensions, d) && !contains(&a->lhs_contracting_dimensions, d) && r < 2 * HLO_MAX_RANK)
          vals[r++] = s0->dimensions[d];
      for (int d = 0; d < s1->rank; d++)
        if (!contains(&a->rhs_batching_dimensions, d) && !contains(&a->rhs_contracting_dimensions, d) && r < 2 * HLO_MAX_RANK)
          vals[r++] = s1->dimensions[d];
      if (r != out->rank) return failf(c, "the result has rank %d, the product gives %d", out->rank, r);
      hlo_shape_init(out, out->element_type, r, vals);
      return true;
    }
    case HLO_OPCODE_REDUCE: { /* (inputs..., inits...) */
      if (k >= in->operand_count) return failf(c, "more results than operands");
      const hlo_shape_t *x = &in->operands[k]->shape;
      int r = 0;
      for (int d = 0; d < x->rank; d++)
        if (!contains(&a->dimensions, d)) vals[r++] = x->dimensions[d];
      if (r != out->rank) return failf(c, "the result has rank %d, the reduce gives %d", out->rank, r);
      hlo_shape_init(out, out->element_type, r, vals);
      return true;
    }
    case HLO_OPCODE_REDUCE_WINDOW: {
      if (k >= in->operand_count) return failf(c, "more results than operands");
      const hlo_shape_t *x = &in->operands[k]->shape;
      take_dims(out, x);
      for (int d = 0; d < x->rank; d++)
        out->dimensions[d] = windowed(x->dimensions[d], dim_at(&a->base_dilations, d, 1), dim_at(&a->padding, 2 * d, 0),
                                      dim_at(&a->padding, 2 * d + 1, 0), dim_at(&a->window_dimensions, d, 1),
                                      dim_at(&a->window_dilations, d, 1), dim_at(&a->window_strides, d, 1));
      return true;
    }
    case HLO_OPCODE_IF:
    case HLO_OPCODE_CASE:
    case HLO_OPCODE_COMPOSITE: { /* the (first) called computation's results */
      const hlo_instruction_t *root = in->called_count ? in->called_computations[0]->root : NULL;
      if (!root) return failf(c, "its branches return nothing");
      const hlo_shape_t *rs = hlo_shape_is_tuple(&root->shape) && hlo_shape_is_tuple(&in->shape)
                                  ? (k < root->shape.tuple_count ? &root->shape.tuple_shapes[k] : NULL)
                                  : &root->shape;
      if (!rs || hlo_shape_is_tuple(rs)) return failf(c, "its branches' results do not fit its types");
      take_dims(out, rs);
      return true;
    }
    case HLO_OPCODE_CHLO_TOP_K:
      take_dims(out, s0);
      if (out->rank) out->dimensions[out->rank - 1] = a->k;
      return true;
    case HLO_OPCODE_TRIANGULAR_SOLVE:
      take_dims(out, &in->operands[1]->shape);
      return true;
    case HLO_OPCODE_BATCH_NORM_TRAINING: /* (output, batch_mean, batch_var) */
    case HLO_OPCODE_BATCH_NORM_GRAD:     /* (grad_operand, grad_scale, grad_offset) */
      if (k == 0) take_dims(out, s0);
      else if (a->feature_index >= 0 && a->feature_index < s0->rank) out->dimensions[0] = s0->dimensions[a->feature_index];
      return true;
    case HLO_OPCODE_RNG_BIT_GENERATOR: /* (output_state, output): the output's shape is static */
      if (k == 0) take_dims(out, s0);
      return true;
    case HLO_OPCODE_WHILE:
    case HLO_OPCODE_SORT:
    case HLO_OPCODE_OPTIMIZATION_BARRIER:
    case HLO_OPCODE_SCATTER: /* results: the first operands' shapes */
    case HLO_OPCODE_TUPLE:
      if (k >= in->operand_count) return failf(c, "more results than operands");
      take_dims(out, &in->operands[k]->shape);
      return true;
    case HLO_OPCODE_DYNAMIC_UPDATE_SLICE:
    case HLO_OPCODE_REVERSE:
    case HLO_OPCODE_CHOLESKY:
    case HLO_OPCODE_SELECT_AND_SCATTER:
    case HLO_OPCODE_BATCH_NORM_INFERENCE:
    case HLO_OPCODE_FFT:
      take_dims(out, s0);
      if (in->opcode == HLO_OPCODE_FFT && s0->rank && a->fft_length.count) {
        int64_t last = a->fft_length.data[a->fft_length.count - 1];
        if (a->fft_type == 2 /* RFFT */) out->dimensions[s0->rank - 1] = last / 2 + 1;
        if (a->fft_type == 3 /* IRFFT */) out->dimensions[s0->rank - 1] = last;
      }
      return true;
    default:
      break;
  }
  if (hlo_opcode_is_pointwise(in->opcode) || in->opcode == HLO_OPCODE_MAP ||
      in->opcode == HLO_OPCODE_COMPARE || in->opcode == HLO_OPCODE_SELECT || in->opcode == HLO_OPCODE_CLAMP ||
      in->opcode == HLO_OPCODE_CONVERT || in->opcode == HLO_OPCODE_REDUCE_PRECISION ||
      in->opcode == HLO_OPCODE_BITCAST_CONVERT) {
    const hlo_shape_t *big = NULL; /* select's and clamp's scalars aside */
    for (int i = 0; i < in->operand_count; i++)
      if (!big || in->operands[i]->shape.rank > big->rank) big = &in->operands[i]->shape;
    if (!big || hlo_shape_is_tuple(big)) return failf(c, "it has no array operand");
    if (in->opcode == HLO_OPCODE_BITCAST_CONVERT && big->rank != out->rank)
      return failf(c, "a bitcast_convert between widths");
    take_dims(out, big);
    return true;
  }
  return failf(c, "the compiler has no shape rule for stablehlo.%s with a dynamic result", hlo_opcode_name(in->opcode));
}

bool hlo_refine_fits(const hlo_shape_t *actual, const hlo_shape_t *declared) {
  if (actual->element_type != declared->element_type) return false;
  if (hlo_shape_is_tuple(actual)) {
    if (actual->tuple_count != declared->tuple_count) return false;
    for (int i = 0; i < actual->tuple_count; i++)
      if (!hlo_refine_fits(&actual->tuple_shapes[i], &declared->tuple_shapes[i])) return false;
    return true;
  }
  if (actual->rank != declared->rank) return false;
  for (int d = 0; d < actual->rank; d++)
    if (declared->dimensions[d] != HLO_DYNAMIC_DIM && declared->dimensions[d] != actual->dimensions[d]) return false;
  return true;
}

/* Refines one array result |decl| (result |k|). */
static bool refine_one(ctx_t *c, int k, hlo_shape_t *decl) {
  if (!hlo_shape_is_dynamic(decl)) return true;
  hlo_shape_t got = *decl;
  if (!infer(c, k, &got)) return false;
  if (got.rank != decl->rank) return failf(c, "the inferred rank %d differs from the declared %d", got.rank, decl->rank);
  int64_t count = 1;
  for (int d = 0; d < got.rank; d++) {
    if (got.dimensions[d] == HLO_DYNAMIC_DIM) return failf(c, "dimension %d has no size the compiler can infer", d);
    if (got.dimensions[d] < 0) return failf(c, "dimension %d would be %lld", d, (long long)got.dimensions[d]);
    if (got.dimensions[d] > ((int64_t)1 << 40) ||
        (got.dimensions[d] && count > ((int64_t)1 << 48) / got.dimensions[d]))
      return failf(c, "its shape would be too large");
    count *= got.dimensions[d];
    if (decl->dimensions[d] != HLO_DYNAMIC_DIM && decl->dimensions[d] != got.dimensions[d]) {
      char a[128], b[128];
      hlo_shape_to_string(&got, a, sizeof a);
      hlo_shape_to_string(decl, b, sizeof b);
      return failf(c, "its operands give %s, which does not fit the declared %s", a, b);
    }
  }
  got.quant = decl->quant;
  *decl = got;
  return true;
}

bool hlo_refine_shape(const hlo_refine_t *r, hlo_instruction_t *in, char *msg, size_t msg_size) {
  ctx_t c = {r, in, msg, msg_size};
  for (int i = 0; i < in->operand_count; i++)
    if (hlo_shape_is_dynamic(&in->operands[i]->shape)) return failf(&c, "operand %d has a dynamic shape", i);
  if (!hlo_shape_is_tuple(&in->shape)) return refine_one(&c, 0, &in->shape);
  for (int k = 0; k < in->shape.tuple_count; k++) {
    if (hlo_shape_is_tuple(&in->shape.tuple_shapes[k])) {
      if (hlo_shape_is_dynamic(&in->shape.tuple_shapes[k])) return failf(&c, "a nested tuple with dynamic shapes");
      continue;
    }
    if (!refine_one(&c, k, &in->shape.tuple_shapes[k])) return false;
  }
  return true;
}
