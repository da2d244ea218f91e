/*
 * Tests for reading StableHLO portable artifacts (hlo/bytecode.c through
 * hlo_parse, and vkhlo_portable_artifact_to_text).
 *
 * The artifacts are assembled here, byte by byte, by a small writer that
 * follows the MLIR bytecode format document and StableHLO's VHLO encodings
 * (prefix varints, the string / dialect / attribute-type / IR / properties
 * sections, VHLO type and attribute codes), independently of the reader.
 * One program is written at bytecode version 1 (VHLO before 0.15: attribute
 * dictionaries, isolated regions inline) and at version 6 (properties,
 * isolated regions as sections, use-list bytes): both must give the module
 * the same program written as StableHLO text gives, and run to values
 * computed here.  Every prefix of an artifact, and single-byte changes to
 * it, must give an error or a module, never a crash.  The check against
 * the artifacts of StableHLO's own test suite (every VHLO version from
 * 0.9.0 to 1.20.0) is tests/vhlo_upstream.sh, which needs a checkout.
 */
#define _GNU_SOURCE /* memmem */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hlo/hlo.h"
#include "tests/test_support.h"
#include "vkhlo/vkhlo.h"

/* ---------------------------------------------------------- a writer */

typedef struct buf {
  uint8_t *data;
  size_t size, cap;
} buf_t;

static void put(buf_t *b, const void *p, size_t n) {
  if (b->size + n > b->cap) {
    b->cap = (b->size + n) * 2 + 64;
    b->data = realloc(b->data, b->cap);
    assert_non_null(b->data);
  }
  if (n) memcpy(b->data + b->size, p, n);
  b->size += n;
}

static void put_byte(buf_t *b, uint8_t v) { put(b, &v, 1); }

/* PrefixVarInt: n bytes hold 7n value bits; the first byte's low bits are
 * n-1 zeros and a one.  Nine bytes (a zero byte, then 8) above 2^56. */
static void put_varint(buf_t *b, uint64_t v) {
  for (int n = 1; n <= 8; n++) {
    if (n < 8 ? v < (1ull << (7 * n)) : v < (1ull << 56)) {
      uint64_t e = (v << n) | (1ull << (n - 1));
      for (int i = 0; i < n; i++) put_byte(b, (uint8_t)(e >> (8 * i)));
      return;
    }
  }
  put_byte(b, 0);
  for (int i = 0; i < 8; i++) put_byte(b, (uint8_t)(v >> (8 * i)));
}

static void put_svarint(buf_t *b, int64_t v) { put_varint(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63)); }

static void put_section(buf_t *out, int id, const buf_t *data) {
  put_byte(out, (uint8_t)id);
  put_varint(out, data->size);
  put(out, data->data, data->size);
}

/* The tables of one artifact. */
enum { MAX_ENTRIES = 64 };
typedef struct artifact {
  int version;
  const char *strings[MAX_ENTRIES];
  int string_count;
  buf_t attrs[MAX_ENTRIES], types[MAX_ENTRIES];
  int attr_dialect[MAX_ENTRIES], type_dialect[MAX_ENTRIES];
  int attr_count, type_count;
  buf_t props[MAX_ENTRIES];
  int prop_count;
} artifact_t;

enum { D_BUILTIN, D_VHLO, D_SDY };

static artifact_t *new_artifact(int version) {
  artifact_t *a = calloc(1, sizeof *a);
  assert_non_null(a);
  a->version = version;
  return a;
}

static int str(artifact_t *a, const char *s) {
  for (int i = 0; i < a->string_count; i++)
    if (!strcmp(a->strings[i], s)) return i;
  a->strings[a->string_count] = s;
  return a->string_count++;
}

/* A new attribute (or type) entry in its dialect's own encoding; returns
 * its index and the buffer to write the encoding into. */
static buf_t *new_attr(artifact_t *a, int dialect, int *index) {
  *index = a->attr_count;
  a->attr_dialect[a->attr_count] = dialect;
  return &a->attrs[a->attr_count++];
}

static buf_t *new_type_of(artifact_t *a, int dialect, int *index) {
  *index = a->type_count;
  a->type_dialect[a->type_count] = dialect;
  return &a->types[a->type_count++];
}

static buf_t *new_type(artifact_t *a, int *index) { return new_type_of(a, D_VHLO, index); }

/* VHLO type codes: 0 i1, 4 f32, 14 si64, 20 ranked tensor, 8 function. */
static int scalar_type(artifact_t *a, int code) {
  int i;
  put_varint(new_type(a, &i), (uint64_t)code);
  return i;
}

static int tensor_type(artifact_t *a, int element, int rank, const int64_t *dims) {
  int i;
  buf_t *b = new_type(a, &i);
  put_varint(b, 20);
  put_varint(b, (uint64_t)rank);
  for (int d = 0; d < rank; d++) put_svarint(b, dims[d]);
  put_varint(b, (uint64_t)element);
  return i;
}

static int function_type(artifact_t *a, int n_in, const int *in, int n_out, const int *out) {
  int i;
  buf_t *b = new_type(a, &i);
  put_varint(b, 8);
  put_varint(b, (uint64_t)n_in);
  for (int k = 0; k < n_in; k++) put_varint(b, (uint64_t)in[k]);
  put_varint(b, (uint64_t)n_out);
  for (int k = 0; k < n_out; k++) put_varint(b, (uint64_t)out[k]);
  return i;
}

/* An attribute that is a code and one varint: VHLO's string (14, a string
 * index), type (17, a type index) and array (1, a count: 0 here); the
 * builtin string (2, a string index). */
static int code_and_varint(artifact_t *a, int dialect, uint64_t code, uint64_t value) {
  int i;
  buf_t *b = new_attr(a, dialect, &i);
  put_varint(b, code);
  put_varint(b, value);
  return i;
}

static int vhlo_string(artifact_t *a, const char *s) { return code_and_varint(a, D_VHLO, 14, (uint64_t)str(a, s)); }
static int vhlo_type_attr(artifact_t *a, int type) { return code_and_varint(a, D_VHLO, 17, (uint64_t)type); }
static int vhlo_empty_array(artifact_t *a) { return code_and_varint(a, D_VHLO, 1, 0); }
static int builtin_string(artifact_t *a, const char *s) { return code_and_varint(a, D_BUILTIN, 2, (uint64_t)str(a, s)); }

/* VHLO's tensor attribute (15): type, data. */
static int vhlo_tensor(artifact_t *a, int type, const void *data, size_t size) {
  int i;
  buf_t *b = new_attr(a, D_VHLO, &i);
  put_varint(b, 15);
  put_varint(b, (uint64_t)type);
  put_varint(b, size);
  put(b, data, size);
  return i;
}

/* The builtin dictionary (1): (name, value) pairs. */
static int builtin_dict(artifact_t *a, int pairs, const char *const *names, const int *values) {
  int keys[8];
  for (int k = 0; k < pairs; k++) keys[k] = builtin_string(a, names[k]);
  int i;
  buf_t *b = new_attr(a, D_BUILTIN, &i);
  put_varint(b, 1);
  put_varint(b, (uint64_t)pairs);
  for (int k = 0; k < pairs; k++) {
    put_varint(b, (uint64_t)keys[k]);
    put_varint(b, (uint64_t)values[k]);
  }
  return i;
}

/* An op's attributes: a dictionary before bytecode 5 (VHLO < 0.15), after
 * it properties, which are the attributes in the order of their names. */
typedef struct attrs {
  int count;
  const char *names[8];
  int values[8];
} attrs_t;

enum { HAS_ATTRS = 1, HAS_RESULTS = 2, HAS_OPERANDS = 4, HAS_REGIONS = 16, HAS_PROPERTIES = 64 };

typedef struct op_names {
  int module, func, add, constant, reduce, ret, negate, select, compare;
} op_names_t;

/* |raw_props| >= 0: that properties entry, written by the caller. */
static void put_op_with(artifact_t *a, buf_t *ir, int name, int location, const attrs_t *attrs, int raw_props,
                        int n_results, const int *result_types, int n_operands, const int *operands, int regions,
                        bool isolated) {
  uint8_t mask = 0;
  bool props = a->version >= 5;
  if (attrs && attrs->count) mask |= props ? HAS_PROPERTIES : HAS_ATTRS;
  if (raw_props >= 0) mask |= HAS_PROPERTIES;
  if (n_results) mask |= HAS_RESULTS;
  if (n_operands) mask |= HAS_OPERANDS;
  if (regions) mask |= HAS_REGIONS;
  put_varint(ir, (uint64_t)name);
  put_byte(ir, mask);
  put_varint(ir, (uint64_t)location);
  if (mask & HAS_ATTRS) put_varint(ir, (uint64_t)builtin_dict(a, attrs->count, attrs->names, attrs->values));
  if ((mask & HAS_PROPERTIES) && raw_props < 0) {
    int order[8];
    for (int k = 0; k < attrs->count; k++) order[k] = k;
    for (int k = 1; k < attrs->count; k++)
      for (int j = k; j > 0 && strcmp(attrs->names[order[j]], attrs->names[order[j - 1]]) < 0; j--) {
        int t = order[j];
        order[j] = order[j - 1];
        order[j - 1] = t;
      }
    buf_t *p = &a->props[a->prop_count];
    for (int k = 0; k < attrs->count; k++) put_varint(p, (uint64_t)attrs->values[order[k]]);
    put_varint(ir, (uint64_t)a->prop_count++);
  } else if (mask & HAS_PROPERTIES) {
    put_varint(ir, (uint64_t)raw_props);
  }
  if (n_results) {
    put_varint(ir, (uint64_t)n_results);
    for (int k = 0; k < n_results; k++) put_varint(ir, (uint64_t)result_types[k]);
  }
  if (n_operands) {
    put_varint(ir, (uint64_t)n_operands);
    for (int k = 0; k < n_operands; k++) put_varint(ir, (uint64_t)operands[k]);
  }
  if (regions) put_varint(ir, (uint64_t)regions << 1 | isolated);
}

static void put_op(artifact_t *a, buf_t *ir, int name, int location, const attrs_t *attrs, int n_results,
                   const int *result_types, int n_operands, const int *operands, int regions, bool isolated) {
  put_op_with(a, ir, name, location, attrs, -1, n_results, result_types, n_operands, operands, regions, isolated);
}

/* A region of one block: its value count, then the block header and
 * argument types (the ops follow). */
static void put_region_header(artifact_t *a, buf_t *ir, int values, int ops, int n_args, const int *arg_types) {
  put_varint(ir, 1);
  put_varint(ir, (uint64_t)values);
  put_varint(ir, (uint64_t)ops << 1 | (n_args > 0));
  if (!n_args) return;
  put_varint(ir, (uint64_t)n_args);
  for (int k = 0; k < n_args; k++) {
    if (a->version >= 4) {
      put_varint(ir, (uint64_t)arg_types[k] << 1); /* no location */
    } else {
      put_varint(ir, (uint64_t)arg_types[k]);
      put_varint(ir, 0); /* the location: attribute 0 */
    }
  }
  if (a->version >= 3) put_byte(ir, 0); /* no use-list orders */
}

/* An isolated region's bytes: a nested IR section from bytecode 2 on. */
static void put_isolated(artifact_t *a, buf_t *ir, buf_t *region) {
  if (a->version >= 2)
    put_section(ir, 4, region);
  else
    put(ir, region->data, region->size);
  free(region->data);
}

/* The artifact's bytes: header, string, dialect (with the |n_ops| op names,
 * |ops| in order, which put_op referred to by index), attribute/type, IR
 * and properties sections.  Frees |a| and |ir|. */
typedef struct op_name {
  int dialect;
  const char *name;
} op_name_t;

static buf_t finish(artifact_t *a, buf_t *ir, const op_name_t *ops, int n_ops) {
  int version = a->version;
  static const char *const dialect_names[] = {"builtin", "vhlo", "sdy"};
  int n_dialects = 2;
  for (int k = 0; k < n_ops; k++)
    if (ops[k].dialect + 1 > n_dialects) n_dialects = ops[k].dialect + 1;
  for (int k = 0; k < a->attr_count; k++)
    if (a->attr_dialect[k] + 1 > n_dialects) n_dialects = a->attr_dialect[k] + 1;
  buf_t dialects = {0};
  put_varint(&dialects, (uint64_t)n_dialects);
  for (int d = 0; d < n_dialects; d++)
    put_varint(&dialects, version >= 1 ? (uint64_t)str(a, dialect_names[d]) << 1 : (uint64_t)str(a, dialect_names[d]));
  if (version >= 4) put_varint(&dialects, (uint64_t)n_ops);
  for (int k = 0; k < n_ops;) { /* groups of consecutive ops of one dialect */
    int end = k;
    while (end < n_ops && ops[end].dialect == ops[k].dialect) end++;
    put_varint(&dialects, (uint64_t)ops[k].dialect);
    put_varint(&dialects, (uint64_t)(end - k));
    for (; k < end; k++)
      put_varint(&dialects, version >= 5 ? (uint64_t)str(a, ops[k].name) << 1 | 1 : (uint64_t)str(a, ops[k].name));
  }
  /* Attributes and types: grouped by dialect in index order. */
  buf_t at_data = {0}, at_offsets = {0};
  put_varint(&at_offsets, (uint64_t)a->attr_count);
  put_varint(&at_offsets, (uint64_t)a->type_count);
  for (int kind = 0; kind < 2; kind++) {
    int count = kind ? a->type_count : a->attr_count;
    buf_t *entries = kind ? a->types : a->attrs;
    int *dialect = kind ? a->type_dialect : a->attr_dialect;
    for (int k = 0; k < count;) {
      int end = k;
      while (end < count && dialect[end] == dialect[k]) end++;
      put_varint(&at_offsets, (uint64_t)dialect[k]);
      put_varint(&at_offsets, (uint64_t)(end - k));
      for (; k < end; k++) {
        put_varint(&at_offsets, entries[k].size << 1 | 1); /* a custom encoding */
        put(&at_data, entries[k].data, entries[k].size);
        free(entries[k].data);
      }
    }
  }

  buf_t strings = {0};
  put_varint(&strings, (uint64_t)a->string_count);
  for (int k = a->string_count - 1; k >= 0; k--) put_varint(&strings, strlen(a->strings[k]) + 1);
  for (int k = 0; k < a->string_count; k++) put(&strings, a->strings[k], strlen(a->strings[k]) + 1);

  buf_t out = {0};
  put(&out, "ML\xEFR", 4);
  put_varint(&out, (uint64_t)version);
  put(&out, "vkhlo test", 11);
  put_section(&out, 0, &strings);
  put_section(&out, 1, &dialects);
  put_section(&out, 2, &at_data);
  put_section(&out, 3, &at_offsets);
  put_section(&out, 4, ir);
  if (version >= 5) {
    buf_t props = {0};
    put_varint(&props, (uint64_t)a->prop_count);
    for (int k = 0; k < a->prop_count; k++) {
      put_varint(&props, a->props[k].size);
      put(&props, a->props[k].data, a->props[k].size);
      free(a->props[k].data);
    }
    put_section(&out, 8, &props);
    free(props.data);
  }
  free(strings.data);
  free(dialects.data);
  free(at_data.data);
  free(at_offsets.data);
  free(ir->data);
  free(a);
  return out;
}


/*
 * The program (as text in kProgramText):
 *   main(x: 2x3xf32, y: 2x3xf32) -> 2xf32
 *     s = add x, y; r = reduce(s, 0.0) over dimension 1 with add;
 *     m = constant [true, false]; out = select(m, r, -r)
 */
static const char kProgramText[] =
    "func.func public @main(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2xf32> {\n"
    "  %s = stablehlo.add %x, %y : tensor<2x3xf32>\n"
    "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
    "  %r = \"stablehlo.reduce\"(%s, %zero) ({\n"
    "  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
    "    %t = stablehlo.add %a, %b : tensor<f32>\n"
    "    stablehlo.return %t : tensor<f32>\n"
    "  }) {dimensions = array<i64: 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>\n"
    "  %m = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
    "  %n = stablehlo.negate %r : tensor<2xf32>\n"
    "  %out = stablehlo.select %m, %r, %n : tensor<2xi1>, tensor<2xf32>\n"
    "  return %out : tensor<2xf32>\n"
    "}\n";

static buf_t write_program(int version) {
  artifact_t *a = new_artifact(version);
  str(a, "builtin");
  str(a, "vhlo");
  op_names_t on;
  int *slots[] = {&on.module, &on.func, &on.add, &on.constant, &on.reduce, &on.ret, &on.negate, &on.select};
  for (int k = 0; k < 8; k++) *slots[k] = k; /* the order of |ops| below */

  int loc;
  put_varint(new_attr(a, D_BUILTIN, &loc), 15); /* an unknown location, never decoded */
  int f32 = scalar_type(a, 4), i1 = scalar_type(a, 0), i64 = scalar_type(a, 14);
  const int64_t d23[] = {2, 3}, d2[] = {2}, d1[] = {1};
  int t23 = tensor_type(a, f32, 2, d23), t2 = tensor_type(a, f32, 1, d2), ts = tensor_type(a, f32, 0, NULL);
  int tb2 = tensor_type(a, i1, 1, d2), ti1 = tensor_type(a, i64, 1, d1);
  int fn = function_type(a, 2, (int[]){t23, t23}, 1, (int[]){t2});

  const float zero = 0;
  const int64_t one = 1;
  const uint8_t packed = 0x01; /* [true, false]: VHLO packs i1 data in bits */
  attrs_t func_attrs = {5, {"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"},
                        {vhlo_string(a, "main"), vhlo_type_attr(a, fn), vhlo_string(a, ""), vhlo_empty_array(a),
                         vhlo_empty_array(a)}};
  attrs_t zero_attrs = {1, {"value"}, {vhlo_tensor(a, ts, &zero, 4)}};
  attrs_t dims_attrs = {1, {"dimensions"}, {vhlo_tensor(a, ti1, &one, 8)}};
  attrs_t mask_attrs = {1, {"value"}, {vhlo_tensor(a, tb2, &packed, 1)}};

  /* The function body.  Values: x 0, y 1, s 2, zero 3, r 4, m 5, n 6, out 7;
   * the reduce body's: a 8, b 9, sum 10. */
  buf_t body = {0};
  put_region_header(a, &body, 8, 7, 2, (int[]){t23, t23});
  put_op(a, &body, on.add, loc, NULL, 1, &t23, 2, (int[]){0, 1}, 0, false);
  put_op(a, &body, on.constant, loc, &zero_attrs, 1, &ts, 0, NULL, 0, false);
  put_op(a, &body, on.reduce, loc, &dims_attrs, 1, &t2, 2, (int[]){2, 3}, 1, false);
  put_region_header(a, &body, 3, 2, 2, (int[]){ts, ts});
  put_op(a, &body, on.add, loc, NULL, 1, &ts, 2, (int[]){8, 9}, 0, false);
  put_op(a, &body, on.ret, loc, NULL, 0, NULL, 1, (int[]){10}, 0, false);
  put_op(a, &body, on.constant, loc, &mask_attrs, 1, &tb2, 0, NULL, 0, false);
  put_op(a, &body, on.negate, loc, NULL, 1, &t2, 1, (int[]){4}, 0, false);
  put_op(a, &body, on.select, loc, NULL, 1, &t2, 3, (int[]){5, 4, 6}, 0, false);
  put_op(a, &body, on.ret, loc, NULL, 0, NULL, 1, (int[]){7}, 0, false);

  buf_t module_body = {0};
  put_region_header(a, &module_body, 0, 1, 0, NULL);
  put_op(a, &module_body, on.func, loc, &func_attrs, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &module_body, &body);

  buf_t ir = {0};
  put_varint(&ir, 1 << 1); /* the top-level block: one op, no arguments */
  put_op(a, &ir, on.module, loc, NULL, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &ir, &module_body);

  static const op_name_t ops[] = {{D_BUILTIN, "module"}, {D_VHLO, "func_v1"}, {D_VHLO, "add_v1"},
                                   {D_VHLO, "constant_v1"}, {D_VHLO, "reduce_v1"}, {D_VHLO, "return_v1"},
                                   {D_VHLO, "negate_v1"}, {D_VHLO, "select_v1"}};
  return finish(a, &ir, ops, 8);
}

/*
 * A program as JAX writes it with Shardy (VHLO 1.11 and later mix dialects):
 * a named module, a top-level sdy.mesh, a Shardy sharding on the argument
 * (an attribute of the sdy dialect in its own encoding), and a
 * sharding_constraint on builtin tensor types between
 * unrealized_conversion_casts from and to VHLO's.  As text (kShardedText):
 */
static const char kShardedText[] =
    "module @jit_f {\n"
    "  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
    "    %y = stablehlo.add %x, %x : tensor<4xf32>\n"
    "    return %y : tensor<4xf32>\n"
    "  }\n"
    "}\n";

static buf_t write_sharded_program(void) {
  artifact_t *a = new_artifact(6);
  enum { MODULE, CAST, FUNC, ADD, RET, MESH, CONSTRAINT };
  static const op_name_t ops[] = {{D_BUILTIN, "module"}, {D_BUILTIN, "unrealized_conversion_cast"},
                                   {D_VHLO, "func_v1"},    {D_VHLO, "add_v1"}, {D_VHLO, "return_v1"},
                                   {D_SDY, "mesh"},        {D_SDY, "sharding_constraint"}};
  int loc;
  put_varint(new_attr(a, D_BUILTIN, &loc), 15);
  const int64_t d4[] = {4};
  int t4 = tensor_type(a, scalar_type(a, 4), 1, d4);
  int b_f32, b_t4; /* builtin f32 (type code 5) and tensor<4xf32> (13) */
  put_varint(new_type_of(a, D_BUILTIN, &b_f32), 5);
  buf_t *bt = new_type_of(a, D_BUILTIN, &b_t4);
  put_varint(bt, 13);
  put_varint(bt, 1);
  put_svarint(bt, 4);
  put_varint(bt, (uint64_t)b_f32);
  int sharding;
  put(new_attr(a, D_SDY, &sharding), "\x03\x01\x05", 3); /* Shardy's own bytes: never decoded */
  int arg_dict = builtin_dict(a, 1, (const char *const[]){"sdy.sharding"}, &sharding);
  int arg_attrs;
  buf_t *aa = new_attr(a, D_VHLO, &arg_attrs);
  put_varint(aa, 1); /* an array of the one argument's dictionary */
  put_varint(aa, 1);
  put_varint(aa, (uint64_t)arg_dict);
  int fn = function_type(a, 1, &t4, 1, &t4);
  attrs_t func_attrs = {5, {"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"},
                        {vhlo_string(a, "main"), vhlo_type_attr(a, fn), vhlo_string(a, "public"), arg_attrs,
                         vhlo_empty_array(a)}};
  /* Properties written here: the module's (sym_name present, no
   * sym_visibility), the mesh's and the constraint's (two attributes each,
   * which the reader does not need). */
  int module_props = a->prop_count++, mesh_props = a->prop_count++, constraint_props = a->prop_count++;
  put_varint(&a->props[module_props], (uint64_t)builtin_string(a, "jit_f") << 1 | 1);
  put_varint(&a->props[module_props], 0);
  put_varint(&a->props[mesh_props], (uint64_t)sharding);
  put_varint(&a->props[mesh_props], (uint64_t)builtin_string(a, "mesh"));
  put_varint(&a->props[constraint_props], (uint64_t)sharding);

  /* Values: x 0, cast 1, constrained 2, back 3, y 4. */
  buf_t body = {0};
  put_region_header(a, &body, 5, 5, 1, &t4);
  put_op(a, &body, CAST, loc, NULL, 1, &b_t4, 1, (int[]){0}, 0, false);
  put_op_with(a, &body, CONSTRAINT, loc, NULL, constraint_props, 1, &b_t4, 1, (int[]){1}, 0, false);
  put_op(a, &body, CAST, loc, NULL, 1, &t4, 1, (int[]){2}, 0, false);
  put_op(a, &body, ADD, loc, NULL, 1, &t4, 2, (int[]){3, 3}, 0, false);
  put_op(a, &body, RET, loc, NULL, 0, NULL, 1, (int[]){4}, 0, false);

  buf_t module_body = {0};
  put_region_header(a, &module_body, 0, 2, 0, NULL);
  put_op_with(a, &module_body, MESH, loc, NULL, mesh_props, 0, NULL, 0, NULL, 0, false);
  put_op(a, &module_body, FUNC, loc, &func_attrs, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &module_body, &body);

  buf_t ir = {0};
  put_varint(&ir, 1 << 1);
  put_op_with(a, &ir, MODULE, loc, NULL, module_props, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &ir, &module_body);
  return finish(a, &ir, ops, 7);
}

/* func main(%x: tensor<2x!quant.uniform<STORAGE:f32, 0.5:3>>) returning %x:
 * a uniform quantized type (VHLO type 24) of storage type |storage_code|. */
static const char kQuantizedText[] =
    "func.func public @main(%x: tensor<2x!quant.uniform<i8:f32, 5.000000e-01:3>>) -> "
    "tensor<2x!quant.uniform<i8:f32, 5.000000e-01:3>> {\n"
    "  return %x : tensor<2x!quant.uniform<i8:f32, 5.000000e-01:3>>\n"
    "}\n";

static buf_t write_quantized_program(int storage_code) {
  artifact_t *a = new_artifact(6);
  enum { MODULE, FUNC, RET };
  static const op_name_t ops[] = {{D_BUILTIN, "module"}, {D_VHLO, "func_v1"}, {D_VHLO, "return_v1"}};
  int loc;
  put_varint(new_attr(a, D_BUILTIN, &loc), 15);
  int storage = scalar_type(a, storage_code), f32 = scalar_type(a, 4), q;
  buf_t *qt = new_type(a, &q);
  put_varint(qt, 24);
  put_varint(qt, 1); /* signed */
  put_varint(qt, (uint64_t)storage);
  put_varint(qt, (uint64_t)f32);
  const double scale = 0.5;
  int64_t bits;
  memcpy(&bits, &scale, 8);
  put_svarint(qt, bits);
  put_svarint(qt, 3);
  put_svarint(qt, -128);
  put_svarint(qt, 127);
  const int64_t d2[] = {2};
  int t = tensor_type(a, q, 1, d2);
  int fn = function_type(a, 1, &t, 1, &t);
  attrs_t func_attrs = {5, {"sym_name", "function_type", "sym_visibility", "arg_attrs", "res_attrs"},
                        {vhlo_string(a, "main"), vhlo_type_attr(a, fn), vhlo_string(a, "public"), vhlo_empty_array(a),
                         vhlo_empty_array(a)}};
  buf_t body = {0};
  put_region_header(a, &body, 1, 1, 1, &t);
  put_op(a, &body, RET, loc, NULL, 0, NULL, 1, (int[]){0}, 0, false);
  buf_t module_body = {0};
  put_region_header(a, &module_body, 0, 1, 0, NULL);
  put_op(a, &module_body, FUNC, loc, &func_attrs, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &module_body, &body);
  buf_t ir = {0};
  put_varint(&ir, 1 << 1);
  put_op(a, &ir, MODULE, loc, NULL, 0, NULL, 0, NULL, 1, true);
  put_isolated(a, &ir, &module_body);
  return finish(a, &ir, ops, 3);
}

/* ---------------------------------------------------------- helpers */

/* The module's text without the printer's location comments. */
static char *module_text(const hlo_module_t *m) {
  char *s = hlo_module_to_string(m);
  assert_non_null(s);
  char *w = s;
  for (char *r = s; *r;) {
    if (!strncmp(r, "  //", 4)) {
      while (*r && *r != '\n') r++;
      continue;
    }
    *w++ = *r++;
  }
  *w = 0;
  return s;
}

static hlo_module_t *parse(const void *data, size_t size) {
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse(data, size, "t.mlirbc", NULL, &m);
  if (st) fprintf(stderr, "%s\n", vkhlo_status_message(st));
  assert_null(st);
  return m;
}

/* |x| and |y| (bytecode or text) parse to modules that print the same;
 * that text contains |needle| when given. */
static void assert_same_module(const void *x, size_t x_size, const void *y, size_t y_size, const char *needle) {
  hlo_module_t *mx = parse(x, x_size), *my = parse(y, y_size);
  char *a = module_text(mx), *b = module_text(my);
  if (strcmp(a, b)) fprintf(stderr, "first:\n%s\nsecond:\n%s\n", a, b);
  assert_string_equal(a, b);
  if (needle) assert_non_null(strstr(a, needle));
  free(a);
  free(b);
  hlo_module_destroy(mx);
  hlo_module_destroy(my);
}

static void expect_same_as_text(int version) {
  buf_t bc = write_program(version);
  assert_same_module(bc.data, bc.size, kProgramText, strlen(kProgramText), NULL);
  free(bc.data);
}

/* ---------------------------------------------------------- tests */

static void test_version_1_attribute_dictionaries(void **state) {
  (void)state;
  expect_same_as_text(1);
}

static void test_version_6_properties(void **state) {
  (void)state;
  expect_same_as_text(6);
}

static void test_versions_between(void **state) {
  (void)state;
  for (int v = 0; v <= 6; v++) expect_same_as_text(v);
}

static void test_shardy_and_casts(void **state) {
  (void)state;
  buf_t bc = write_sharded_program();
  assert_same_module(bc.data, bc.size, kShardedText, strlen(kShardedText), "module @jit_f");
  char *text = NULL;
  expect_ok(vkhlo_portable_artifact_to_text(bc.data, bc.size, "t.mlirbc", &text, NULL));
  assert_non_null(strstr(text, "sdy.sharding_constraint %v1 : tensor<4xf32>"));
  assert_null(strstr(text, "sdy.sharding =")); /* the argument's Shardy sharding is left out */
  free(text);
  free(bc.data);
}

/* Compiled and run through the public API: out[i] = +-sum_j (x + y)[i][j]. */
static void test_runs(void **state) {
  vkhlo_context_t *ctx = *state;
  buf_t bc = write_program(6);
  vkhlo_executable_t *exe = NULL;
  expect_ok(vkhlo_executable_compile(ctx, (const char *)bc.data, bc.size, "t.mlirbc", NULL, &exe));
  const float x[6] = {1, 2, 3, 4, 5, 6}, y[6] = {0.5f, 0.25f, 0.125f, -1, -2, -3};
  float expected[2];
  for (int i = 0; i < 2; i++) {
    float s = 0;
    for (int j = 0; j < 3; j++) s += x[3 * i + j] + y[3 * i + j];
    expected[i] = i == 0 ? s : -s;
  }
  vkhlo_tensor_type_t t = {VKHLO_F32, 2, {2, 3}};
  vkhlo_buffer_t *args[2] = {NULL, NULL}, *result = NULL;
  expect_ok(vkhlo_buffer_create(ctx, &t, x, &args[0]));
  expect_ok(vkhlo_buffer_create(ctx, &t, y, &args[1]));
  expect_ok(vkhlo_executable_execute(exe, 2, args, 1, &result));
  float out[2] = {0};
  expect_ok(vkhlo_buffer_read(result, out, sizeof out));
  assert_true(out[0] == expected[0] && out[1] == expected[1]);
  vkhlo_buffer_destroy(result);
  vkhlo_buffer_destroy(args[0]);
  vkhlo_buffer_destroy(args[1]);
  vkhlo_executable_destroy(exe);
  free(bc.data);
}

static void test_to_text(void **state) {
  (void)state;
  buf_t bc = write_program(6);
  char *text = NULL;
  size_t length = 0;
  expect_ok(vkhlo_portable_artifact_to_text(bc.data, bc.size, "t.mlirbc", &text, &length));
  assert_int_equal(strlen(text), length);
  assert_non_null(strstr(text, "func.func @main(%v1: tensor<2x3xf32>, %v2: tensor<2x3xf32>) -> (tensor<2xf32>) {"));
  assert_non_null(strstr(text, "\"stablehlo.reduce\"(%v3, %v4) ({\n"));
  assert_non_null(strstr(text, "{value = dense<[true, false]> : tensor<2xi1>}")); /* unpacked from bits */
  assert_non_null(strstr(text, "{dimensions = dense<[1]> : tensor<1xi64>}"));
  assert_non_null(strstr(text, "{value = dense<\"0x00000000\"> : tensor<f32>}"));
  free(text);
  free(bc.data);
}

/* jax.export's Exported.serialize() is a FlatBuffers table whose
 * mlir_module_serialized is the artifact as a byte vector (a 4-aligned
 * 32-bit length, then the bytes); here a minimal such file around one. */
static void test_in_a_flatbuffer(void **state) {
  (void)state;
  buf_t bc = write_program(6), fb = {0};
  const uint8_t head[8] = {0x10, 0, 0, 0, 0, 0, 0x0a, 0}; /* a root offset and a vtable's start */
  put(&fb, head, sizeof head);
  uint8_t len[4] = {(uint8_t)bc.size, (uint8_t)(bc.size >> 8), (uint8_t)(bc.size >> 16), 0};
  put(&fb, len, 4);
  put(&fb, bc.data, bc.size);
  put(&fb, "\0\0\0\0cpu\0", 8); /* more of the table after it */
  assert_same_module(fb.data, fb.size, bc.data, bc.size, NULL);
  char *text = NULL;
  expect_ok(vkhlo_portable_artifact_to_text(fb.data, fb.size, "t.bin", &text, NULL));
  assert_non_null(strstr(text, "\"stablehlo.reduce\""));
  free(text);
  /* A length that runs past the file is not an artifact. */
  fb.data[10] = 0x7f;
  hlo_module_t *m = NULL;
  vkhlo_status_t st = hlo_parse((const char *)fb.data, fb.size, "t.bin", NULL, &m);
  assert_non_null(st);
  vkhlo_status_free(st);
  free(fb.data);
  free(bc.data);
}

static void expect_status(const void *data, size_t size, vkhlo_status_code_t code, const char *needle);

/* A quantized type (8-bit storage) reads as its text does; 64-bit storage
 * (which quant types do not have) is an error, not an overflow (found by
 * fuzzing). */
static void test_quantized_type(void **state) {
  (void)state;
  buf_t bc = write_quantized_program(11);
  assert_same_module(bc.data, bc.size, kQuantizedText, strlen(kQuantizedText), NULL);
  free(bc.data);
  bc = write_quantized_program(14);
  expect_status(bc.data, bc.size, VKHLO_STATUS_INVALID_ARGUMENT, "quantized storage type i64 is not an integer of at most 32 bits");
  free(bc.data);
}

static void expect_status(const void *data, size_t size, vkhlo_status_code_t code, const char *needle) {
  hlo_module_t *m = (hlo_module_t *)0x1;
  vkhlo_status_t st = hlo_parse(data, size, "t.mlirbc", NULL, &m);
  assert_non_null(st);
  assert_null(m);
  if (!strstr(vkhlo_status_message(st), needle) || vkhlo_status_code(st) != code)
    fprintf(stderr, "got: %s\n", vkhlo_status_message(st));
  assert_int_equal(vkhlo_status_code(st), code);
  assert_non_null(strstr(vkhlo_status_message(st), needle));
  vkhlo_status_free(st);
}

static void test_errors(void **state) {
  (void)state;
  buf_t bc = write_program(6);
  /* A newer bytecode version. */
  bc.data[4] = 7 << 1 | 1;
  expect_status(bc.data, bc.size, VKHLO_STATUS_UNIMPLEMENTED, "bytecode version 7 is newer");
  bc.data[4] = 6 << 1 | 1;
  /* The magic number alone, and a cut-off file. */
  expect_status(bc.data, 4, VKHLO_STATUS_INVALID_ARGUMENT, "t.mlirbc: bytecode offset 4: unexpected end of data");
  expect_status(bc.data, bc.size - 3, VKHLO_STATUS_INVALID_ARGUMENT, "t.mlirbc: bytecode offset");
  /* An op of another dialect: rename "vhlo" to "vhlx" in the string table. */
  uint8_t *v = memmem(bc.data, bc.size, "vhlo", 5);
  assert_non_null(v);
  v[3] = 'x';
  expect_status(bc.data, bc.size, VKHLO_STATUS_UNIMPLEMENTED, "only StableHLO portable artifacts (the VHLO dialect)");
  free(bc.data);
}

/* No prefix of an artifact and no single changed byte may crash the reader
 * (ASan runs this too); each gives a module or an error. */
static void test_prefixes_and_mutations(void **state) {
  (void)state;
  for (int which = 0; which < 3; which++) {
    buf_t bc = which == 2 ? write_sharded_program() : write_program(which ? 6 : 1);
    for (size_t n = 0; n < bc.size; n++) {
      hlo_module_t *m = NULL;
      vkhlo_status_t st = hlo_parse((const char *)bc.data, n, "t.mlirbc", NULL, &m);
      assert_true(st != NULL);
      vkhlo_status_free(st);
    }
    uint8_t *copy = malloc(bc.size);
    assert_non_null(copy);
    int modules = 0, errors = 0;
    for (size_t i = 4; i < bc.size; i++) {
      static const uint8_t values[] = {0x00, 0x01, 0x7f, 0xff};
      for (size_t k = 0; k < sizeof values; k++) {
        memcpy(copy, bc.data, bc.size);
        copy[i] = values[k];
        hlo_module_t *m = NULL;
        vkhlo_status_t st = hlo_parse((const char *)copy, bc.size, "t.mlirbc", NULL, &m);
        if (st) {
          errors++;
          assert_null(m);
          vkhlo_status_free(st);
        } else {
          modules++;
          hlo_module_destroy(m);
        }
      }
    }
    assert_true(errors > 0 && modules + errors == (int)(bc.size - 4) * 4);
    free(copy);
    free(bc.data);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version_1_attribute_dictionaries),
      cmocka_unit_test(test_version_6_properties),
      cmocka_unit_test(test_versions_between),
      cmocka_unit_test(test_to_text),
      cmocka_unit_test(test_shardy_and_casts),
      cmocka_unit_test(test_in_a_flatbuffer),
      cmocka_unit_test(test_quantized_type),
      cmocka_unit_test(test_errors),
      cmocka_unit_test(test_prefixes_and_mutations),
      cmocka_unit_test_setup_teardown(test_runs, validated_context_setup, validated_context_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
