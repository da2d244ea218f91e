/*
 * HLO IR construction helpers and the element-type / opcode tables, which
 * are generated from element_types.def and opcodes.def.
 */
#include "hlo/hlo.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ tables */

typedef struct {
  const char *name;
  size_t size;
  char kind;
  int bits;
} element_type_info_t;

static const element_type_info_t element_types[] = {
#define X(e, name, size, kind, bits) {name, size, #kind[0], bits},
#include "hlo/element_types.def"
#undef X
    {"tuple", 0, 'T', 0},
};
_Static_assert(sizeof element_types / sizeof element_types[0] == HLO_ELEMENT_TYPE_COUNT,
               "element_types.def and the table disagree");

typedef struct {
  const char *name;
  char kind;
  hlo_emitter_class_t emitter;
  hlo_op_cost_t cost;
  bool remap, alias, effect;
} opcode_info_t;

#define COLUMN__ false
#define COLUMN_remap true
#define COLUMN_alias true
#define COLUMN_effect true
static const opcode_info_t opcodes[] = {
#define X(e, name, kind, emitter, cost, remap, alias, effect)                              \
  {name, #kind[0], HLO_EMITTER_##emitter, HLO_COST_##cost, COLUMN_##remap, COLUMN_##alias, \
   COLUMN_##effect},
#include "hlo/opcodes.def"
#undef X
};
#undef COLUMN__
#undef COLUMN_remap
#undef COLUMN_alias
#undef COLUMN_effect
_Static_assert(sizeof opcodes / sizeof opcodes[0] == HLO_OPCODE_COUNT,
               "opcodes.def and the table disagree");

static const opcode_info_t *opcode_info(hlo_opcode_t op) {
  static const opcode_info_t unknown = {"?", '?', HLO_EMITTER_UNSUPPORTED, HLO_COST_CHEAP, false, false, false};
  return (unsigned)op < HLO_OPCODE_COUNT ? &opcodes[op] : &unknown;
}

const char *hlo_element_type_name(hlo_element_type_t t) {
  return (unsigned)t < HLO_ELEMENT_TYPE_COUNT ? element_types[t].name : "?";
}
size_t hlo_element_type_size_bytes(hlo_element_type_t t) {
  return (unsigned)t < HLO_ELEMENT_TYPE_COUNT ? element_types[t].size : 0;
}
int hlo_element_type_bit_width(hlo_element_type_t t) {
  return (unsigned)t < HLO_ELEMENT_TYPE_COUNT ? element_types[t].bits : 0;
}
static char kind_of(hlo_element_type_t t) {
  return (unsigned)t < HLO_ELEMENT_TYPE_COUNT ? element_types[t].kind : '?';
}
bool hlo_element_type_is_float(hlo_element_type_t t) { return kind_of(t) == 'F'; }
bool hlo_element_type_is_complex(hlo_element_type_t t) { return kind_of(t) == 'C'; }
hlo_element_type_t hlo_element_type_real(hlo_element_type_t t) {
  return t == HLO_C64 ? HLO_F32 : t == HLO_C128 ? HLO_F64 : t;
}
bool hlo_element_type_is_signed_int(hlo_element_type_t t) { return kind_of(t) == 'S'; }
bool hlo_element_type_is_unsigned_int(hlo_element_type_t t) { return kind_of(t) == 'U'; }
bool hlo_element_type_is_integer(hlo_element_type_t t) {
  return kind_of(t) == 'S' || kind_of(t) == 'U';
}

bool hlo_element_type_from_name(const char *name, size_t len, hlo_element_type_t *out) {
  for (int i = 0; i < HLO_TUPLE; i++) {
    const char *n = element_types[i].name;
    if (strlen(n) == len && memcmp(n, name, len) == 0) {
      *out = (hlo_element_type_t)i;
      return true;
    }
  }
  /* MLIR also spells signed integers "si32". */
  if (len > 2 && name[0] == 's' && name[1] == 'i') {
    return hlo_element_type_from_name(name + 1, len - 1, out);
  }
  return false;
}

const char *hlo_opcode_name(hlo_opcode_t op) { return opcode_info(op)->name; }
bool hlo_opcode_is_elementwise(hlo_opcode_t op) { return opcode_info(op)->kind == 'E'; }
bool hlo_opcode_is_pointwise(hlo_opcode_t op) {
  const opcode_info_t *info = opcode_info(op);
  return info->kind == 'E' ||
         (info->kind == 'C' && info->emitter == HLO_EMITTER_ELEMENTAL && info->cost == HLO_COST_CHEAP);
}
bool hlo_opcode_is_chlo(hlo_opcode_t op) { return opcode_info(op)->kind == 'C'; }
hlo_emitter_class_t hlo_opcode_emitter(hlo_opcode_t op) { return opcode_info(op)->emitter; }
hlo_op_cost_t hlo_opcode_cost(hlo_opcode_t op) { return opcode_info(op)->cost; }
bool hlo_opcode_is_expensive(hlo_opcode_t op) { return opcode_info(op)->cost != HLO_COST_CHEAP; }
bool hlo_opcode_is_contraction(hlo_opcode_t op) { return opcode_info(op)->cost == HLO_COST_CONTRACTION; }
bool hlo_opcode_only_remaps_indices(hlo_opcode_t op) { return opcode_info(op)->remap; }
bool hlo_opcode_aliases_operand(hlo_opcode_t op) { return opcode_info(op)->alias; }
bool hlo_opcode_needs_kernel(hlo_opcode_t op) {
  return opcode_info(op)->emitter != HLO_EMITTER_NONE;
}

/* ------------------------------------------------------- side effects */

bool hlo_opcode_has_side_effect(hlo_opcode_t op) { return opcode_info(op)->effect; }

bool hlo_instruction_has_side_effect(const hlo_instruction_t *instr) {
  if (hlo_opcode_has_side_effect(instr->opcode)) return true;
  if (instr->opcode == HLO_OPCODE_CUSTOM_CALL && instr->attrs.has_side_effect) return true;
  for (int k = 0; k < instr->called_count; k++)
    if (instr->called_computations[k] && hlo_computation_has_side_effect(instr->called_computations[k]))
      return true;
  return false;
}

bool hlo_computation_has_side_effect(const hlo_computation_t *c) {
  for (int i = 0; i < c->instruction_count; i++)
    if (hlo_instruction_has_side_effect(c->instructions[i])) return true;
  return false;
}

/* Whether data[i] (stride apart from |first|) equals an earlier one. */
static bool seen_before(const int64_t *data, int first, int i, int stride) {
  for (int k = first; k < i; k += stride)
    if (data[k] == data[i]) return true;
  return false;
}

const char *hlo_collective_ids_problem(const hlo_instruction_t *instr, char *buf, size_t size) {
  if (instr->opcode == HLO_OPCODE_COLLECTIVE_PERMUTE) {
    const hlo_dims_t *p = &instr->attrs.source_target_pairs;
    if (p->count % 2) {
      snprintf(buf, size, "source_target_pairs has %d ids, not pairs", p->count);
      return buf;
    }
    for (int i = 0; i < p->count; i++) {
      if (p->data[i] < 0) snprintf(buf, size, "source_target_pairs has the negative id %lld", (long long)p->data[i]);
      else if (seen_before(p->data, i % 2, i, 2))
        snprintf(buf, size, "%s %lld appears twice in source_target_pairs", i % 2 ? "target" : "source",
                 (long long)p->data[i]);
      else continue;
      return buf;
    }
    return NULL;
  }
  const hlo_dims_t *g = &instr->attrs.replica_groups;
  int64_t cols = instr->attrs.replica_groups_cols;
  if (g->count && (cols <= 0 || g->count % cols)) {
    snprintf(buf, size, "replica_groups holds %d ids, not rows of %lld", g->count, (long long)cols);
    return buf;
  }
  for (int i = 0; i < g->count; i++) {
    if (g->data[i] < -1) snprintf(buf, size, "replica_groups has the id %lld", (long long)g->data[i]);
    else if (g->data[i] >= 0 && seen_before(g->data, 0, i, 1))
      snprintf(buf, size, "id %lld appears twice in replica_groups", (long long)g->data[i]);
    else continue;
    return buf;
  }
  return NULL;
}

/* ------------------------------------------------------------ shapes */

void hlo_shape_init(hlo_shape_t *shape, hlo_element_type_t t, int rank, const int64_t *dims) {
  memset(shape, 0, sizeof *shape);
  shape->element_type = t;
  shape->rank = rank;
  for (int i = 0; i < rank; i++) {
    shape->dimensions[i] = dims ? dims[i] : 0;
    shape->minor_to_major[i] = (int8_t)(rank - 1 - i);
  }
}

int64_t hlo_shape_element_count(const hlo_shape_t *shape) {
  int64_t n = 1;
  for (int i = 0; i < shape->rank; i++) n *= shape->dimensions[i];
  return n;
}

int64_t hlo_sort_runs_length(int64_t len, int64_t merged, int64_t k) {
  if (k <= 0 || merged <= 0) return len;
  int64_t groups = (len + merged - 1) / merged, rest = len - (groups - 1) * merged;
  return (groups - 1) * k + (rest < k ? rest : k);
}

size_t hlo_shape_size_bytes(const hlo_shape_t *shape) {
  if (shape->element_type == HLO_TUPLE) return 0;
  return (size_t)hlo_shape_element_count(shape) * hlo_element_type_size_bytes(shape->element_type);
}

bool hlo_shape_is_tuple(const hlo_shape_t *shape) { return shape->element_type == HLO_TUPLE; }

bool hlo_shape_is_dynamic(const hlo_shape_t *shape) {
  for (int i = 0; i < shape->tuple_count; i++)
    if (hlo_shape_is_dynamic(&shape->tuple_shapes[i])) return true;
  for (int i = 0; i < shape->rank; i++)
    if (shape->dimensions[i] == HLO_DYNAMIC_DIM) return true;
  return false;
}

bool hlo_shape_compatible_dims(const hlo_shape_t *a, const hlo_shape_t *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dimensions[i] != b->dimensions[i]) return false;
  return true;
}

bool hlo_shape_dims_equal_but_ones(const hlo_shape_t *a, const hlo_shape_t *b) {
  if (hlo_shape_is_tuple(a) || hlo_shape_is_tuple(b)) return false;
  if (a->rank == 0 || b->rank == 0) return a->rank == b->rank;
  if (a->dimensions[a->rank - 1] != b->dimensions[b->rank - 1]) return false;
  int i = 0, j = 0;
  for (;;) {
    while (i < a->rank && a->dimensions[i] == 1) i++;
    while (j < b->rank && b->dimensions[j] == 1) j++;
    if (i == a->rank || j == b->rank) return i == a->rank && j == b->rank;
    if (a->dimensions[i++] != b->dimensions[j++]) return false;
  }
}

bool hlo_shape_dims_contiguous(const hlo_shape_t *shape, const int64_t *dims, int n) {
  int64_t prev = -1;
  for (int i = 0; i < n; i++) {
    if (dims[i] < 0 || dims[i] >= shape->rank) return false;
    if (shape->dimensions[dims[i]] == 1) continue;
    if (prev >= 0 && dims[i] < prev) return false;
    for (int64_t d = prev + 1; prev >= 0 && d < dims[i]; d++)
      if (shape->dimensions[d] != 1) return false;
    prev = dims[i];
  }
  return true;
}

bool hlo_shape_equal(const hlo_shape_t *a, const hlo_shape_t *b) {
  if (a->element_type != b->element_type) return false;
  if (a->element_type == HLO_TUPLE) {
    if (a->tuple_count != b->tuple_count) return false;
    for (int i = 0; i < a->tuple_count; i++)
      if (!hlo_shape_equal(&a->tuple_shapes[i], &b->tuple_shapes[i])) return false;
    return true;
  }
  return hlo_shape_compatible_dims(a, b);
}

static void shape_to_sb(const hlo_shape_t *s, char *buf, size_t size, size_t *pos) {
#define PUT(...)                                                              \
  do {                                                                        \
    if (*pos < size) {                                                        \
      int n_ = snprintf(buf + *pos, size - *pos, __VA_ARGS__);                \
      if (n_ > 0) *pos += (size_t)n_;                                         \
    }                                                                         \
  } while (0)
  if (s->element_type == HLO_TUPLE) {
    PUT("tuple<");
    for (int i = 0; i < s->tuple_count; i++) {
      if (i) PUT(", ");
      shape_to_sb(&s->tuple_shapes[i], buf, size, pos);
    }
    PUT(">");
    return;
  }
  if (s->element_type == HLO_TOKEN) {
    PUT("!stablehlo.token");
    return;
  }
  PUT("tensor<");
  for (int i = 0; i < s->rank; i++) {
    if (s->dimensions[i] == HLO_DYNAMIC_DIM) PUT("?x");
    else PUT("%lldx", (long long)s->dimensions[i]);
  }
  PUT("%s>", hlo_element_type_name(s->element_type));
#undef PUT
}

void hlo_shape_to_string(const hlo_shape_t *shape, char *buf, size_t buf_size) {
  size_t pos = 0;
  if (!buf_size) return;
  buf[0] = 0;
  shape_to_sb(shape, buf, buf_size, &pos);
  buf[buf_size - 1] = 0;
}

/* ------------------------------------------------------ construction */

hlo_module_t *hlo_module_create(const char *name, const vkhlo_allocator_t *allocator) {
  arena_t arena;
  arena_init(&arena, allocator);
  hlo_module_t *m = arena_alloc(&arena, sizeof *m);
  if (!m) return NULL;
  m->arena = arena;
  m->name = arena_strdup(&m->arena, name ? name : "module");
  if (!m->name) {
    hlo_module_destroy(m);
    return NULL;
  }
  return m;
}

void hlo_module_destroy(hlo_module_t *module) {
  if (!module) return;
  arena_t arena = module->arena; /* the module itself lives in its arena */
  arena_free(&arena);
}

hlo_computation_t *hlo_computation_create(hlo_module_t *m, const char *name) {
  hlo_computation_t *c = arena_alloc(&m->arena, sizeof *c);
  if (!c) return NULL;
  c->name = arena_strdup(&m->arena, name ? name : "computation");
  return c->name ? c : NULL;
}

static bool grow(hlo_module_t *m, void **items, int *capacity, int count, size_t item_size) {
  if (count < *capacity) return true;
  int cap = *capacity ? *capacity * 2 : 16;
  void *p = arena_alloc(&m->arena, (size_t)cap * item_size);
  if (!p) return false;
  if (count) memcpy(p, *items, (size_t)count * item_size);
  *items = p;
  *capacity = cap;
  return true;
}

bool hlo_module_add_computation(hlo_module_t *m, hlo_computation_t *c) {
  if (!grow(m, (void **)&m->computations, &m->computation_capacity, m->computation_count,
            sizeof(void *)))
    return false;
  m->computations[m->computation_count++] = c;
  return true;
}

hlo_instruction_t *hlo_instruction_create(hlo_module_t *m, hlo_opcode_t op,
                                          const hlo_shape_t *shape, int operand_count,
                                          hlo_instruction_t *const *operands) {
  hlo_instruction_t *instr = arena_alloc(&m->arena, sizeof *instr);
  if (!instr) return NULL;
  instr->opcode = op;
  instr->id = m->next_instruction_id++;
  char name[64];
  snprintf(name, sizeof name, "%s.%d", hlo_opcode_name(op), instr->id);
  instr->name = arena_strdup(&m->arena, name);
  if (shape) instr->shape = *shape;
  instr->attrs.feature_group_count = 1;
  instr->attrs.batch_group_count = 1;
  if (operand_count) {
    instr->operands = arena_memdup(&m->arena, operands, sizeof(void *) * (size_t)operand_count);
    if (!instr->operands) return NULL;
  }
  instr->operand_count = operand_count;
  return instr->name ? instr : NULL;
}

bool hlo_computation_append(hlo_module_t *m, hlo_computation_t *c, hlo_instruction_t *instr) {
  if (!grow(m, (void **)&c->instructions, &c->instruction_capacity, c->instruction_count,
            sizeof(void *)))
    return false;
  c->instructions[c->instruction_count++] = instr;
  if (instr->opcode == HLO_OPCODE_PARAMETER) {
    hlo_instruction_t **p = arena_alloc(&m->arena, sizeof(void *) * (size_t)(c->parameter_count + 1));
    if (!p) return false;
    if (c->parameter_count) memcpy(p, c->parameters, sizeof(void *) * (size_t)c->parameter_count);
    p[c->parameter_count++] = instr;
    c->parameters = p;
  }
  return true;
}

bool hlo_instruction_set_called(hlo_module_t *m, hlo_instruction_t *instr, int count,
                                hlo_computation_t *const *computations) {
  instr->called_count = count;
  if (!count) return true;
  instr->called_computations = arena_memdup(&m->arena, computations, sizeof(void *) * (size_t)count);
  return instr->called_computations != NULL;
}

bool hlo_dims_contains(hlo_dims_t dims, int64_t value) {
  for (int i = 0; i < dims.count; i++)
    if (dims.data[i] == value) return true;
  return false;
}

int hlo_dot_result_dimensions(const hlo_shape_t *lhs, const hlo_shape_t *rhs, hlo_dims_t lhs_batching,
                              hlo_dims_t lhs_contracting, hlo_dims_t rhs_batching, hlo_dims_t rhs_contracting,
                              hlo_dims_t rhs_skip, int64_t *dims) {
  int rank = 0;
  for (int i = 0; i < lhs_batching.count && rank < HLO_MAX_RANK; i++) {
    int64_t d = lhs_batching.data[i];
    dims[rank++] = d >= 0 && d < lhs->rank ? lhs->dimensions[d] : 0;
  }
  for (int i = 0; i < lhs->rank && rank < HLO_MAX_RANK; i++)
    if (!hlo_dims_contains(lhs_batching, i) && !hlo_dims_contains(lhs_contracting, i))
      dims[rank++] = lhs->dimensions[i];
  for (int i = 0; i < rhs->rank && rank < HLO_MAX_RANK; i++)
    if (!hlo_dims_contains(rhs_batching, i) && !hlo_dims_contains(rhs_contracting, i) &&
        !hlo_dims_contains(rhs_skip, i))
      dims[rank++] = rhs->dimensions[i];
  return rank;
}

int hlo_ragged_dot_prefix_dimensions(const hlo_attrs_t *a, int lhs_rank, int64_t *dims) {
  const hlo_dims_t *lb = &a->lhs_batching_dimensions, *lc = &a->lhs_contracting_dimensions;
  int64_t ragged = a->lhs_ragged_dimensions.data[0];
  bool batch = hlo_dims_contains(*lb, ragged), contracting = hlo_dims_contains(*lc, ragged);
  int n = 0;
  for (int i = 0; i < lb->count && lb->data[i] != ragged; i++) dims[n++] = lb->data[i];
  if (contracting)
    for (int i = 0; i < lc->count && lc->data[i] != ragged; i++) dims[n++] = lc->data[i];
  else if (!batch)
    for (int i = 0; i < ragged && i < lhs_rank; i++)
      if (!hlo_dims_contains(*lb, i) && !hlo_dims_contains(*lc, i)) dims[n++] = i;
  return n;
}

hlo_dims_t hlo_dims_make(hlo_module_t *m, const int64_t *values, int count) {
  hlo_dims_t d = {0, 0};
  if (count <= 0) return d;
  d.data = arena_memdup(&m->arena, values, sizeof(int64_t) * (size_t)count);
  d.count = d.data ? count : 0;
  return d;
}

bool hlo_shape_make_tuple(hlo_module_t *m, hlo_shape_t *out, int count, const hlo_shape_t *elements) {
  memset(out, 0, sizeof *out);
  out->element_type = HLO_TUPLE;
  out->tuple_count = count;
  if (!count) return true;
  out->tuple_shapes = arena_memdup(&m->arena, elements, sizeof(hlo_shape_t) * (size_t)count);
  return out->tuple_shapes != NULL;
}

bool hlo_compute_users(hlo_module_t *m, hlo_computation_t *c) {
  for (int i = 0; i < c->instruction_count; i++) {
    c->instructions[i]->user_count = 0;
    c->instructions[i]->users = NULL;
  }
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    for (int k = 0; k < in->operand_count; k++) in->operands[k]->user_count++;
  }
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    if (in->user_count) {
      in->users = arena_alloc(&m->arena, sizeof(void *) * (size_t)in->user_count);
      if (!in->users) return false;
    }
    in->user_count = 0;
  }
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    for (int k = 0; k < in->operand_count; k++) {
      hlo_instruction_t *op = in->operands[k];
      bool seen = false;
      for (int u = 0; u < op->user_count; u++) seen |= op->users[u] == in;
      if (!seen) op->users[op->user_count++] = in;
    }
  }
  return true;
}

hlo_computation_t *hlo_module_find_computation(const hlo_module_t *m, const char *name) {
  for (int i = 0; i < m->computation_count; i++)
    if (strcmp(m->computations[i]->name, name) == 0) return m->computations[i];
  return NULL;
}

vkhlo_status_t hlo_vstatus_at(vkhlo_status_code_t code, hlo_location_t loc, const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  return vkhlo_status_make(code, "%s:%d:%d: %s", loc.file ? loc.file : "<input>", loc.line, loc.col, msg);
}

vkhlo_status_t hlo_error_at(hlo_location_t loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vkhlo_status_t st = hlo_vstatus_at(VKHLO_STATUS_INVALID_ARGUMENT, loc, fmt, ap);
  va_end(ap);
  return st;
}
