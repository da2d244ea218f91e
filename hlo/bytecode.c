/*
 * StableHLO portable artifacts (MLIR bytecode of VHLO) -> StableHLO text.
 *
 * The file format is MLIR's bytecode (mlir.llvm.org/docs/BytecodeFormat):
 * a magic number, a version, a producer string and sections.  The string
 * section is a table of strings; the dialect section names the dialects and
 * the operation names; the attribute/type section holds every attribute and
 * type once, each either in a dialect's own encoding or as its textual
 * assembly form, found through the offset section; the IR section is the
 * top-level block, each operation a name index, an encoding mask, a
 * location, an attribute dictionary and/or properties, result types,
 * operands (indices of values in the enclosing isolated region, numbered in
 * definition order), and its regions (isolated ones as nested sections).
 *
 * Attributes and types are decoded on first use into nodes (their text and,
 * where the printer needs it, their structure) and kept; locations are
 * never decoded.  VHLO's encodings are those of StableHLO's VhloBytecode;
 * the few builtin attributes an attribute dictionary is made of (dictionary,
 * string, array, symbol, unit) are decoded too, and any attribute or type
 * stored in its assembly form is used as that text.
 *
 * The text is the generic op form the parser reads: each vhlo.<op>_vN
 * becomes "stablehlo.<op>" with its attributes as written (VHLO keeps the
 * dimension numbers of dot_general, convolution, gather and scatter as flat
 * attributes, which the parser takes as they are), func_v1 / call_v1 /
 * return_v1 become func.func / func.call / func.return (or stablehlo.return
 * inside an op's region), channel_id becomes a channel_handle.  Attributes
 * that do not change results (dot algorithms, layouts, result accuracy) are
 * left out.
 *
 * Other dialects, as JAX's artifacts mix them in (VHLO 1.11 and later):
 * Shardy's ops are written in the pretty forms the parser reads without
 * their shardings (one device holds every value whole; the mesh is
 * dropped), builtin.unrealized_conversion_cast between VHLO types and the
 * builtin types of those ops is its operand, and an attribute of another
 * dialect in its own encoding is a placeholder: left out where its name is
 * a dialect's annotation (sdy.sharding), an error where the parser meets it
 * otherwise.  Builtin types are decoded for those casts.
 *
 * Errors longjmp to hlo_bytecode_to_text (as in the parser); all memory is
 * one arena and the output buffer.
 */
#include "hlo/bytecode.h"

#include <inttypes.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "support/arena.h"

enum { MAX_VERSION = 6, NUM_SECTIONS = 9, MAX_NESTING = 256 };
enum { SEC_STRING, SEC_DIALECT, SEC_ATTR_TYPE, SEC_ATTR_TYPE_OFFSET, SEC_IR, SEC_RESOURCE, SEC_RESOURCE_OFFSET,
       SEC_DIALECT_VERSIONS, SEC_PROPERTIES };
enum { OP_HAS_ATTRS = 1, OP_HAS_RESULTS = 2, OP_HAS_OPERANDS = 4, OP_HAS_SUCCESSORS = 8, OP_HAS_REGIONS = 16,
       OP_HAS_USE_LISTS = 32, OP_HAS_PROPERTIES = 64 };

typedef struct reader {
  const uint8_t *p, *end;
} reader_t;

/* A decoded attribute or type. */
typedef enum {
  N_TEXT,     /* only its text matters */
  N_INT,      /* value */
  N_BOOL,     /* value */
  N_STRING,   /* str/len; text is the quoted form */
  N_ARRAY,    /* items */
  N_DICT,     /* items: name, value, name, value ... */
  N_FUNCTION, /* items: inputs then outputs (n_in inputs) */
  N_TENSOR,   /* a ranked tensor type: dims, items[0] = element type */
} node_kind_t;

typedef struct node node_t;
struct node {
  node_kind_t kind;
  const char *text;
  int64_t value;
  const char *str;
  size_t len;
  node_t **items;
  int count, n_in;
  const int64_t *dims;
  int rank;
  bool is_bool;     /* an i1 element type */
  bool placeholder; /* not decoded (text: #vkhlo.unsupported<"...">) */
};

typedef struct entry {
  const uint8_t *data;
  size_t size;
  uint64_t dialect;
  bool custom, busy;
  node_t *node;
} entry_t;

typedef struct op_name {
  uint64_t dialect;
  const char *name;
  size_t len;
  int registered; /* -1: not recorded (bytecode < 5) */
} op_name_t;

typedef struct value {
  uint32_t name; /* 0 = not defined yet */
  node_t *type;
} value_t;

/* The values of one isolated-from-above region and the regions in it. */
typedef struct scope {
  value_t *values;
  uint64_t count, cap;
} scope_t;

typedef struct bc bc_t;

/* Text built in the arena (freed with it, also when an error unwinds). */
typedef struct text {
  bc_t *b;
  char *data;
  size_t length, capacity;
} text_t;

struct bc {
  arena_t arena;
  const uint8_t *base;
  const char *file;
  jmp_buf jb;
  vkhlo_status_t err;
  uint64_t version;
  reader_t sections[NUM_SECTIONS];
  bool has_section[NUM_SECTIONS];
  const char **strings;
  size_t *string_lens;
  uint64_t string_count;
  const char **dialects;
  uint64_t dialect_count;
  op_name_t *op_names;
  uint64_t op_name_count;
  entry_t *attrs, *types;
  uint64_t attr_count, type_count;
  const uint8_t **props;
  size_t *props_sizes;
  uint64_t prop_count;
  text_t out;
  uint32_t next_name;
  int depth;
};

/* ============================================================ errors */

static _Noreturn void failv(bc_t *b, vkhlo_status_code_t code, const uint8_t *at, const char *fmt, va_list ap) {
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  if (at)
    b->err = vkhlo_status_make(code, "%s: bytecode offset %td: %s", b->file, at - b->base, msg);
  else
    b->err = vkhlo_status_make(code, "%s: %s", b->file, msg);
  longjmp(b->jb, 1);
}

static _Noreturn void fail(bc_t *b, const uint8_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void fail(bc_t *b, const uint8_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(b, VKHLO_STATUS_INVALID_ARGUMENT, at, fmt, ap);
}

static _Noreturn void unsupported(bc_t *b, const uint8_t *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void unsupported(bc_t *b, const uint8_t *at, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  failv(b, VKHLO_STATUS_UNIMPLEMENTED, at, fmt, ap);
}

static void *alloc(bc_t *b, size_t n) {
  void *p = arena_alloc(&b->arena, n ? n : 1);
  if (!p) {
    b->err = VKHLO_NO_MEMORY();
    longjmp(b->jb, 1);
  }
  return p;
}

static void *alloc_array(bc_t *b, uint64_t count, size_t size, const uint8_t *at) {
  if (count > (uint64_t)(SIZE_MAX / 2) / (size ? size : 1)) fail(b, at, "count %" PRIu64 " too large", count);
  return alloc(b, (size_t)count * size);
}

static void tx_reserve(text_t *t, size_t more) {
  if (t->length + more + 1 <= t->capacity) return;
  size_t cap = (t->length + more + 1) * 2;
  char *d = alloc(t->b, cap);
  if (t->length) memcpy(d, t->data, t->length);
  t->data = d;
  t->capacity = cap;
}

static void tx_appendn(text_t *t, const char *s, size_t n) {
  tx_reserve(t, n);
  memcpy(t->data + t->length, s, n);
  t->length += n;
  t->data[t->length] = 0;
}

static void tx_append(text_t *t, const char *s) { tx_appendn(t, s, strlen(s)); }

static void tx_printf(text_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tx_printf(text_t *t, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  tx_reserve(t, (size_t)n);
  va_start(ap, fmt);
  vsnprintf(t->data + t->length, (size_t)n + 1, fmt, ap);
  va_end(ap);
  t->length += (size_t)n;
}

static const char *tx_take(text_t *t) { return t->data ? t->data : ""; }

/* ============================================================ primitives */

static uint8_t read_byte(bc_t *b, reader_t *r) {
  if (r->p >= r->end) fail(b, r->p, "unexpected end of data");
  return *r->p++;
}

static const uint8_t *read_bytes(bc_t *b, reader_t *r, uint64_t n) {
  if (n > (uint64_t)(r->end - r->p)) fail(b, r->p, "%" PRIu64 " bytes past the end of the data", n);
  const uint8_t *at = r->p;
  r->p += n;
  return at;
}

/* PrefixVarInt: the count of trailing zero bits of the first byte is the
 * count of further bytes; the rest of the bits are the value. */
static uint64_t read_varint(bc_t *b, reader_t *r) {
  uint8_t first = read_byte(b, r);
  if (first & 1) return first >> 1;
  if (first == 0) {
    const uint8_t *d = read_bytes(b, r, 8);
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | d[i];
    return v;
  }
  int extra = __builtin_ctz(first);
  const uint8_t *d = read_bytes(b, r, (uint64_t)extra);
  uint64_t v = first;
  for (int i = 0; i < extra; i++) v |= (uint64_t)d[i] << (8 * (i + 1));
  return v >> (extra + 1);
}

static int64_t read_svarint(bc_t *b, reader_t *r) {
  uint64_t v = read_varint(b, r);
  return (int64_t)((v >> 1) ^ (~(v & 1) + 1));
}

static uint64_t read_varint_flag(bc_t *b, reader_t *r, bool *flag) {
  uint64_t v = read_varint(b, r);
  *flag = v & 1;
  return v >> 1;
}

static uint64_t read_index(bc_t *b, reader_t *r, uint64_t count, const char *what) {
  const uint8_t *at = r->p;
  uint64_t i = read_varint(b, r);
  if (i >= count) fail(b, at, "%s index %" PRIu64 " out of range (%" PRIu64 ")", what, i, count);
  return i;
}

/* A count of entries that follow, each at least a byte: no more than the
 * bytes left (so no input makes a huge allocation). */
static uint64_t read_count(bc_t *b, reader_t *r, const char *what) {
  const uint8_t *at = r->p;
  uint64_t n = read_varint(b, r);
  if (n > (uint64_t)(r->end - r->p)) fail(b, at, "%" PRIu64 " %s past the end of the data", n, what);
  return n;
}

static const char *read_string(bc_t *b, reader_t *r, size_t *len) {
  uint64_t i = read_index(b, r, b->string_count, "string");
  if (len) *len = b->string_lens[i];
  return b->strings[i];
}

/* A section: id (high bit: aligned), length, [alignment, 0xCB padding], data. */
static int read_section(bc_t *b, reader_t *r, reader_t *data) {
  const uint8_t *at = r->p;
  uint8_t id = read_byte(b, r);
  uint64_t length = read_varint(b, r);
  if ((id & 0x7f) >= NUM_SECTIONS) fail(b, at, "unknown section id %d", id & 0x7f);
  if (id & 0x80) {
    uint64_t align = read_varint(b, r);
    if (!align || (align & (align - 1)) || align > 4096) fail(b, at, "bad section alignment %" PRIu64, align);
    while ((size_t)(r->p - b->base) & (align - 1))
      if (read_byte(b, r) != 0xCB) fail(b, r->p - 1, "expected alignment padding (0xCB)");
  }
  data->p = read_bytes(b, r, length);
  data->end = data->p + length;
  return id & 0x7f;
}

/* ============================================================ text helpers */

static const char *textf(bc_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *textf(bc_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *text = alloc(b, (size_t)n + 1);
  va_start(ap, fmt);
  vsnprintf(text, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return text;
}

/* MLIR string literal: printable characters, \" \\ and \XX. */
static void append_quoted(text_t *sb, const char *s, size_t len) {
  tx_append(sb, "\"");
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\')
      tx_printf(sb, "\\%c", c);
    else if (c >= 0x20 && c < 0x7f)
      tx_appendn(sb, (const char *)&c, 1);
    else
      tx_printf(sb, "\\%02X", c);
  }
  tx_append(sb, "\"");
}

static bool is_bare_identifier(const char *s, size_t len) {
  if (!len || !(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))) return false;
  for (size_t i = 1; i < len; i++) {
    char c = s[i];
    if (!(c == '_' || c == '.' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return false;
  }
  return true;
}

static void append_symbol(text_t *sb, const char *s, size_t len) {
  tx_append(sb, "@");
  if (is_bare_identifier(s, len))
    tx_appendn(sb, s, len);
  else
    append_quoted(sb, s, len);
}

/* A float's text with a '.', as MLIR's float literals need; non-finite
 * values as the hexadecimal bit pattern. */
static void append_float(text_t *sb, double v, uint64_t bits, int width) {
  if (v != v || v - v != 0)
    tx_printf(sb, "0x%0*" PRIX64, width / 4, bits);
  else
    tx_printf(sb, "%.17e", v);
}

static node_t *new_node(bc_t *b, node_kind_t kind, const char *text) {
  node_t *n = alloc(b, sizeof *n);
  n->kind = kind;
  n->text = text;
  return n;
}

static const char *join_items(bc_t *b, node_t **items, int count, const char *open, const char *close) {
  text_t sb = {b, NULL, 0, 0};
  tx_append(&sb, open);
  for (int i = 0; i < count; i++) {
    if (i) tx_append(&sb, ", ");
    tx_append(&sb, items[i]->text);
  }
  tx_append(&sb, close);
  return tx_take(&sb);
}

/* ============================================================ attributes and types */

static node_t *attr_at(bc_t *b, uint64_t index, const uint8_t *at);
static node_t *type_at(bc_t *b, uint64_t index, const uint8_t *at);

static node_t *read_attr(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  return attr_at(b, read_varint(b, r), at);
}

static node_t *read_type(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  return type_at(b, read_varint(b, r), at);
}

static node_t **read_list(bc_t *b, reader_t *r, int *count, bool types) {
  const uint8_t *at = r->p;
  uint64_t n = read_count(b, r, "list entries");
  node_t **items = alloc_array(b, n, sizeof *items, at);
  for (uint64_t i = 0; i < n; i++) items[i] = types ? read_type(b, r) : read_attr(b, r);
  *count = (int)n;
  return items;
}

static int64_t *read_svarints(bc_t *b, reader_t *r, int *count) {
  const uint8_t *at = r->p;
  uint64_t n = read_count(b, r, "integers");
  int64_t *v = alloc_array(b, n, sizeof *v, at);
  for (uint64_t i = 0; i < n; i++) v[i] = read_svarint(b, r);
  *count = (int)n;
  return v;
}

/* An APInt of known width: one byte up to 8 bits, a signed varint up to 64. */
static uint64_t read_apint(bc_t *b, reader_t *r, int width) {
  if (width <= 8) return read_byte(b, r);
  if (width <= 64) return (uint64_t)read_svarint(b, r);
  unsupported(b, r->p, "%d-bit integer attribute", width);
}

static void append_dims(text_t *sb, const int64_t *dims, int rank, const char *sep) {
  for (int i = 0; i < rank; i++) {
    if (i) tx_append(sb, sep);
    if (dims[i] == INT64_MIN)
      tx_append(sb, "?");
    else
      tx_printf(sb, "%" PRId64, dims[i]);
  }
}

/* Encodings VHLO and the builtin dialect share (after their codes). */
static node_t *read_array_node(bc_t *b, reader_t *r) {
  node_t *n = new_node(b, N_ARRAY, NULL);
  n->items = read_list(b, r, &n->count, false);
  n->text = join_items(b, n->items, n->count, "[", "]");
  return n;
}

/* (name, value) pairs; the text is made by dict_text, which needs the names. */
static node_t *read_dict_node(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  uint64_t pairs = read_count(b, r, "dictionary entries");
  node_t *n = new_node(b, N_DICT, NULL);
  n->items = alloc_array(b, pairs * 2, sizeof *n->items, at);
  n->count = (int)(pairs * 2);
  for (uint64_t i = 0; i < pairs * 2; i++) n->items[i] = read_attr(b, r);
  return n;
}

static node_t *read_string_node(bc_t *b, reader_t *r) {
  node_t *n = new_node(b, N_STRING, NULL);
  n->str = read_string(b, r, &n->len);
  text_t sb = {b, NULL, 0, 0};
  append_quoted(&sb, n->str, n->len);
  n->text = tx_take(&sb);
  return n;
}

/* inputs, outputs */
static node_t *read_function_type(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  int n_in, n_out;
  node_t **in = read_list(b, r, &n_in, true);
  node_t **out = read_list(b, r, &n_out, true);
  node_t *n = new_node(b, N_FUNCTION, NULL);
  n->items = alloc_array(b, (uint64_t)n_in + (uint64_t)n_out, sizeof *n->items, at);
  memcpy(n->items, in, (size_t)n_in * sizeof *in);
  memcpy(n->items + n_in, out, (size_t)n_out * sizeof *out);
  n->count = n_in + n_out;
  n->n_in = n_in;
  n->text = textf(b, "%s -> %s", join_items(b, in, n_in, "(", ")"), join_items(b, out, n_out, "(", ")"));
  return n;
}

/* [encoding,] shape, element type */
static node_t *read_ranked_tensor(bc_t *b, reader_t *r, bool has_encoding) {
  node_t *encoding = has_encoding ? read_attr(b, r) : NULL;
  node_t *n = new_node(b, N_TENSOR, NULL);
  n->dims = read_svarints(b, r, &n->rank);
  node_t *element = read_type(b, r);
  n->items = alloc(b, sizeof *n->items);
  n->items[0] = element;
  n->count = 1;
  n->is_bool = !strcmp(element->text, "i1");
  text_t sb = {b, NULL, 0, 0};
  tx_append(&sb, "tensor<");
  append_dims(&sb, n->dims, n->rank, "x");
  if (n->rank) tx_append(&sb, "x");
  tx_append(&sb, element->text);
  if (encoding) tx_printf(&sb, ", %s", encoding->text);
  tx_append(&sb, ">");
  n->text = tx_take(&sb);
  return n;
}

/* VHLO scalar types, by type code (VhloBytecode's TypeCode). */
static const char *const vhlo_scalar_types[] = {
    [0] = "i1",         [2] = "bf16",        [3] = "f16",          [4] = "f32",         [5] = "f64",
    [6] = "f8E4M3FN",   [7] = "f8E5M2",      [9] = "index",        [10] = "i4",         [11] = "i8",
    [12] = "i16",       [13] = "i32",        [14] = "i64",         [15] = "ui4",        [16] = "ui8",
    [17] = "ui16",      [18] = "ui32",       [19] = "ui64",        [26] = "!shape.witness",
    [27] = "f8E4M3FNUZ", [28] = "f8E5M2FNUZ", [29] = "f8E4M3B11FNUZ", [31] = "i2",      [32] = "ui2",
    [33] = "none",      [34] = "tf32",       [35] = "f8E4M3",      [36] = "f8E3M4",     [37] = "f4E2M1FN",
    [38] = "f6E2M3FN",  [39] = "f6E3M2FN",   [40] = "f8E8M0FNU",
};

static int int_type_width(const node_t *t) {
  static const struct { const char *name; int width; } widths[] = {
      {"i1", 1},   {"i2", 2},   {"i4", 4},   {"i8", 8},   {"i16", 16},  {"i32", 32},    {"i64", 64},
      {"ui2", 2},  {"ui4", 4},  {"ui8", 8},  {"ui16", 16}, {"ui32", 32}, {"ui64", 64}, {"index", 64},
  };
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++)
    if (!strcmp(t->text, widths[i].name)) return widths[i].width;
  return 0;
}

/* Storage type of a quantized type: VHLO's si8 / ui8 are quant's i8 / u8. */
static const char *quant_storage(bc_t *b, const node_t *t, const uint8_t *at, int *width, bool *is_unsigned) {
  *width = int_type_width(t);
  *is_unsigned = t->text[0] == 'u';
  if (!*width || *width > 32 || !strcmp(t->text, "index"))
    fail(b, at, "quantized storage type %s is not an integer of at most 32 bits", t->text);
  return *is_unsigned ? textf(b, "u%d", *width) : t->text;
}

static void append_storage_range(text_t *sb, int width, bool is_unsigned, int64_t lo, int64_t hi) {
  int64_t dlo = is_unsigned ? 0 : -((int64_t)1 << (width - 1));
  int64_t dhi = is_unsigned ? ((int64_t)1 << width) - 1 : ((int64_t)1 << (width - 1)) - 1;
  if (lo != dlo || hi != dhi) tx_printf(sb, "<%" PRId64 ":%" PRId64 ">", lo, hi);
}

static double f64_of_bits(uint64_t bits) {
  double d;
  memcpy(&d, &bits, 8);
  return d;
}

static node_t *vhlo_type(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  uint64_t code = read_varint(b, r);
  if (code < sizeof vhlo_scalar_types / sizeof vhlo_scalar_types[0] && vhlo_scalar_types[code])
    return new_node(b, N_TEXT, vhlo_scalar_types[code]);
  text_t sb = {b, NULL, 0, 0};
  switch (code) {
    case 1: /* complex */
      return new_node(b, N_TEXT, textf(b, "complex<%s>", read_type(b, r)->text));
    case 8:
      return read_function_type(b, r);
    case 20: case 21: /* ranked tensor [with encoding] */
      return read_ranked_tensor(b, r, code == 21);
    case 22:
      return new_node(b, N_TEXT, "!stablehlo.token");
    case 23: { /* tuple */
      int count;
      node_t **items = read_list(b, r, &count, true);
      return new_node(b, N_TEXT, join_items(b, items, count, "tuple<", ">"));
    }
    case 24: { /* uniform quantized: flags, storage, expressed, scale, zero point, min, max */
      read_varint(b, r);
      node_t *storage = read_type(b, r), *expressed = read_type(b, r);
      double scale = f64_of_bits(read_apint(b, r, 64));
      int64_t zero_point = read_svarint(b, r), lo = read_svarint(b, r), hi = read_svarint(b, r);
      int width;
      bool is_unsigned;
      tx_printf(&sb, "!quant.uniform<%s", quant_storage(b, storage, at, &width, &is_unsigned));
      append_storage_range(&sb, width, is_unsigned, lo, hi);
      tx_printf(&sb, ":%s, ", expressed->text);
      append_float(&sb, scale, 0, 64);
      tx_printf(&sb, ":%" PRId64 ">", zero_point);
      return new_node(b, N_TEXT, tx_take(&sb));
    }
    case 30: { /* per-axis: flags, storage, expressed, axis, min, max, scales, zero points */
      read_varint(b, r);
      node_t *storage = read_type(b, r), *expressed = read_type(b, r);
      uint64_t axis = read_varint(b, r);
      int64_t lo = read_svarint(b, r), hi = read_svarint(b, r);
      uint64_t n_scales = read_count(b, r, "scales");
      double *scales = alloc_array(b, n_scales, sizeof *scales, at);
      for (uint64_t i = 0; i < n_scales; i++) scales[i] = f64_of_bits(read_apint(b, r, 64));
      int n_zero_points;
      int64_t *zero_points = read_svarints(b, r, &n_zero_points);
      if ((uint64_t)n_zero_points != n_scales) fail(b, at, "%" PRIu64 " scales but %d zero points", n_scales, n_zero_points);
      int width;
      bool is_unsigned;
      tx_printf(&sb, "!quant.uniform<%s", quant_storage(b, storage, at, &width, &is_unsigned));
      append_storage_range(&sb, width, is_unsigned, lo, hi);
      tx_printf(&sb, ":%s:%" PRIu64 ", {", expressed->text, axis);
      for (uint64_t i = 0; i < n_scales; i++) {
        if (i) tx_append(&sb, ", ");
        append_float(&sb, scales[i], 0, 64);
        tx_printf(&sb, ":%" PRId64, zero_points[i]);
      }
      tx_append(&sb, "}>");
      return new_node(b, N_TEXT, tx_take(&sb));
    }
    case 25: /* unranked tensor */
      return new_node(b, N_TEXT, textf(b, "tensor<*x%s>", read_type(b, r)->text));
    case 42: { /* future */
      int count;
      node_t **items = read_list(b, r, &count, true);
      return new_node(b, N_TEXT, join_items(b, items, count, "!stablehlo.future<", ">"));
    }
    default: /* a buffer type, or one newer than this reader */
      return new_node(b, N_TEXT, textf(b, "!vkhlo.unsupported<\"VHLO type code %" PRIu64 "\">", code));
  }
}

static const char *enum_name(bc_t *b, const uint8_t *at, uint64_t v, const char *const *names, size_t count,
                             const char *what) {
  if (v >= count || !names[v]) fail(b, at, "bad %s value %" PRIu64, what, v);
  return names[v];
}

#define ENUM_NAME(v, names, what) enum_name(b, at, v, names, sizeof names / sizeof names[0], what)

/* The text of a TensorV1Attr: dense<"0x..."> with VHLO's packed i1 data
 * unpacked (one byte per element, as a dense literal holds them). */
static const char *tensor_text(bc_t *b, const node_t *type, const uint8_t *data, size_t size, const uint8_t *at) {
  if (type->kind != N_TENSOR) fail(b, at, "tensor attribute of type %s", type->text);
  int64_t count = 1;
  for (int i = 0; i < type->rank; i++) {
    if (type->dims[i] < 0 || (type->dims[i] && count > INT64_MAX / type->dims[i]))
      fail(b, at, "tensor attribute of type %s", type->text);
    count *= type->dims[i];
  }
  uint8_t *unpacked = NULL;
  if (type->is_bool) {
    uint64_t packed = ((uint64_t)count + 7) / 8;
    if (size == 1 && data[0] == 0xFF) {
      static const uint8_t one = 1;
      data = &one;
    } else if (size == packed && (int64_t)size != count) {
      unpacked = alloc(b, (size_t)count);
      for (int64_t i = 0; i < count; i++) unpacked[i] = (data[i / 8] >> (i % 8)) & 1;
      data = unpacked;
      size = (size_t)count;
    }
  }
  text_t sb = {b, NULL, 0, 0};
  int width = int_type_width(type->items[0]);
  size_t element = width == 1 ? 1 : (size_t)width / 8;
  bool is_unsigned = type->items[0]->text[0] == 'u';
  if (!count || !size) {
    tx_printf(&sb, "dense<> : %s", type->text);
  } else if (element && (width == 1 || width % 8 == 0) && count <= 4096 && (size == element || size == (size_t)count * element)) {
    /* Integers and booleans as numbers (dimensions, shapes, masks read
     * better so), nested by the shape; a splat as its one value. */
    bool splat = size == element && count > 1;
    int64_t n = splat ? 1 : count;
    tx_append(&sb, "dense<");
    for (int64_t i = 0; i < n; i++) {
      int64_t stride = n;
      for (int d = 0; d < type->rank && !splat; d++) {
        stride /= type->dims[d];
        if (i % (stride * type->dims[d]) == 0) tx_append(&sb, "[");
      }
      uint64_t u = 0;
      for (size_t k = 0; k < element; k++) u |= (uint64_t)data[(size_t)i * element + k] << (8 * k);
      if (width == 1)
        tx_append(&sb, u ? "true" : "false");
      else if (is_unsigned)
        tx_printf(&sb, "%" PRIu64, u);
      else
        tx_printf(&sb, "%" PRId64, width < 64 && (u >> (width - 1) & 1) ? (int64_t)(u | ~0ull << width) : (int64_t)u);
      stride = 1;
      for (int d = type->rank - 1; d >= 0 && !splat; d--) {
        stride *= type->dims[d];
        if ((i + 1) % stride == 0) tx_append(&sb, "]");
      }
      if (i + 1 < n) tx_append(&sb, ", ");
    }
    tx_printf(&sb, "> : %s", type->text);
  } else {
    tx_append(&sb, "dense<\"0x");
    for (size_t i = 0; i < size; i++) tx_printf(&sb, "%02X", data[i]);
    tx_printf(&sb, "\"> : %s", type->text);
  }
  return tx_take(&sb);
}

static node_t *vhlo_attr(bc_t *b, reader_t *r) {
  static const char *const directions[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static const char *const compare_types[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  static const char *const fft_types[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  static const char *const precisions[] = {"DEFAULT", "HIGH", "HIGHEST"};
  static const char *const rng_algorithms[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  static const char *const rng_distributions[] = {NULL, "UNIFORM", "NORMAL"};
  static const char *const transposes[] = {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  static const char *const accuracy_modes[] = {"DEFAULT", "HIGHEST", "TOLERANCE"};
  /* The enumerations written #stablehlo<kind VALUE>, by attribute code. */
#define ENUM_ATTR(code, kind, names) {code, kind, names, sizeof names / sizeof names[0]}
  static const struct {
    uint64_t code;
    const char *kind;
    const char *const *names;
    size_t count;
  } enum_attrs[] = {
      ENUM_ATTR(3, "comparison_direction", directions), ENUM_ATTR(4, "comparison_type", compare_types),
      ENUM_ATTR(7, "fft_type", fft_types),              ENUM_ATTR(11, "precision", precisions),
      ENUM_ATTR(12, "rng_algorithm", rng_algorithms),   ENUM_ATTR(13, "rng_distribution", rng_distributions),
      ENUM_ATTR(16, "transpose", transposes),
  };
#undef ENUM_ATTR
  const uint8_t *at = r->p;
  uint64_t code = read_varint(b, r);
  for (size_t i = 0; i < sizeof enum_attrs / sizeof enum_attrs[0]; i++)
    if (enum_attrs[i].code == code)
      return new_node(b, N_TEXT, textf(b, "#stablehlo<%s %s>", enum_attrs[i].kind,
                                       enum_name(b, at, read_varint(b, r), enum_attrs[i].names, enum_attrs[i].count,
                                                 enum_attrs[i].kind)));
  text_t sb = {b, NULL, 0, 0};
  switch (code) {
    case 1:
      return read_array_node(b, r);
    case 2: { /* boolean */
      uint64_t v = read_varint(b, r);
      if (v > 1) fail(b, at, "boolean attribute %" PRIu64, v);
      node_t *n = new_node(b, N_BOOL, v ? "true" : "false");
      n->value = (int64_t)v;
      return n;
    }
    case 5: { /* custom call api version */
      node_t *n = new_node(b, N_INT, NULL);
      n->value = (int64_t)read_varint(b, r);
      n->text = textf(b, "%" PRId64 " : i32", n->value);
      return n;
    }
    case 6:
      return read_dict_node(b, r);
    case 8: { /* float: type, value */
      node_t *type = read_type(b, r);
      int width = !strcmp(type->text, "f64") ? 64 : !strcmp(type->text, "f32") ? 32
                  : (!strcmp(type->text, "f16") || !strcmp(type->text, "bf16")) ? 16 : 0;
      if (!width) unsupported(b, at, "float attribute of type %s", type->text);
      uint64_t bits = read_apint(b, r, width);
      double v;
      if (width == 64) {
        v = f64_of_bits(bits);
      } else if (width == 32 || !strcmp(type->text, "bf16")) {
        uint32_t u = width == 32 ? (uint32_t)bits : (uint32_t)(bits & 0xffff) << 16;
        float f;
        memcpy(&f, &u, 4);
        v = f;
      } else {
        int e = (int)(bits >> 10 & 31), m = (int)(bits & 1023);
        v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
        if (bits & 0x8000) v = -v;
      }
      append_float(&sb, v, bits, width);
      tx_printf(&sb, " : %s", type->text);
      return new_node(b, N_TEXT, tx_take(&sb));
    }
    case 9: { /* integer: type, value */
      node_t *type = read_type(b, r);
      int width = int_type_width(type);
      if (!width) fail(b, at, "integer attribute of type %s", type->text);
      uint64_t bits = read_apint(b, r, width);
      node_t *n = new_node(b, N_INT, NULL);
      if (width < 64) {
        bits &= ((uint64_t)1 << width) - 1;
        if (type->text[0] != 'u' && (bits >> (width - 1) & 1)) bits |= ~(uint64_t)0 << width;
      }
      n->value = (int64_t)bits;
      if (type->text[0] == 'u')
        n->text = textf(b, "%" PRIu64 " : %s", bits, type->text);
      else
        n->text = textf(b, "%" PRId64 " : %s", n->value, type->text);
      return n;
    }
    case 10: { /* output operand alias */
      int n_out, n_operand;
      int64_t *out = read_svarints(b, r, &n_out);
      int64_t operand = read_svarint(b, r);
      int64_t *operand_idx = read_svarints(b, r, &n_operand);
      tx_append(&sb, "#stablehlo.output_operand_alias<output_tuple_indices = [");
      append_dims(&sb, out, n_out, ", ");
      tx_printf(&sb, "], operand_index = %" PRId64 ", operand_tuple_indices = [", operand);
      append_dims(&sb, operand_idx, n_operand, ", ");
      tx_append(&sb, "]>");
      return new_node(b, N_TEXT, tx_take(&sb));
    }
    case 14:
      return read_string_node(b, r);
    case 15: { /* tensor: type, blob */
      node_t *type = read_type(b, r);
      uint64_t size = read_varint(b, r);
      const uint8_t *data = read_bytes(b, r, size);
      return new_node(b, N_TEXT, tensor_text(b, type, data, (size_t)size, at));
    }
    case 17: /* type */
      return read_type(b, r);
    case 18: { /* type extensions: bounds */
      int count;
      int64_t *bounds = read_svarints(b, r, &count);
      tx_append(&sb, "#stablehlo.bounds<");
      append_dims(&sb, bounds, count, ", ");
      tx_append(&sb, ">");
      return new_node(b, N_TEXT, tx_take(&sb));
    }
    case 19:
      return new_node(b, N_TEXT, textf(b, "#stablehlo.result_accuracy_mode<%s>",
                                       ENUM_NAME(read_varint(b, r), accuracy_modes, "result_accuracy_mode")));
    case 20: { /* result accuracy: atol, rtol, ulps, mode (left out of the text) */
      read_apint(b, r, 64);
      read_apint(b, r, 64);
      read_svarint(b, r);
      read_attr(b, r);
      return new_node(b, N_TEXT, "#stablehlo.result_accuracy<>");
    }
    default: /* Shardy's meshes and axes, or an attribute newer than this reader */
      return new_node(b, N_TEXT, textf(b, "#vkhlo.unsupported<\"VHLO attribute code %" PRIu64 "\">", code));
  }
}

/* The builtin attributes an attribute dictionary is made of.  Codes as in
 * MLIR's BuiltinDialectBytecode. */
static node_t *builtin_attr(bc_t *b, reader_t *r) {
  uint64_t code = read_varint(b, r);
  text_t sb = {b, NULL, 0, 0};
  switch (code) {
    case 0:
      return read_array_node(b, r);
    case 1:
      return read_dict_node(b, r);
    case 2:
      return read_string_node(b, r);
    case 4: { /* flat symbol reference */
      node_t *n = new_node(b, N_TEXT, NULL);
      size_t len;
      const char *s = read_string(b, r, &len);
      append_symbol(&sb, s, len);
      n->text = tx_take(&sb);
      return n;
    }
    case 7:
      return new_node(b, N_TEXT, "unit");
    default:
      return new_node(b, N_TEXT, textf(b, "#vkhlo.unsupported<\"builtin attribute code %" PRIu64 "\">", code));
  }
}

/* Builtin types (the values of Shardy's ops, between casts from and to
 * VHLO types, have them).  Codes as in MLIR's BuiltinDialectBytecode. */
static node_t *builtin_type(bc_t *b, reader_t *r) {
  const uint8_t *at = r->p;
  uint64_t code = read_varint(b, r);
  static const char *const floats[] = {[3] = "bf16", [4] = "f16", [5] = "f32", [6] = "f64", [7] = "f80", [8] = "f128"};
  switch (code) {
    case 0: { /* integer: width << 2 | signedness (0 signless, 1 signed, 2 unsigned) */
      uint64_t v = read_varint(b, r);
      if ((v >> 2) == 0 || (v >> 2) > 64) fail(b, at, "integer type of width %" PRIu64, v >> 2);
      return new_node(b, N_TEXT, textf(b, "%s%" PRIu64, (v & 3) == 2 ? "ui" : "i", v >> 2));
    }
    case 1:
      return new_node(b, N_TEXT, "index");
    case 2:
      return read_function_type(b, r);
    case 3: case 4: case 5: case 6: case 7: case 8:
      return new_node(b, N_TEXT, floats[code]);
    case 9:
      return new_node(b, N_TEXT, textf(b, "complex<%s>", read_type(b, r)->text));
    case 12:
      return new_node(b, N_TEXT, "none");
    case 13: case 14: /* ranked tensor [with encoding] */
      return read_ranked_tensor(b, r, code == 14);
    case 15: {
      int count;
      node_t **items = read_list(b, r, &count, true);
      return new_node(b, N_TEXT, join_items(b, items, count, "tuple<", ">"));
    }
    case 18:
      return new_node(b, N_TEXT, textf(b, "tensor<*x%s>", read_type(b, r)->text));
    default: /* memrefs, vectors, or a type newer than this reader */
      return new_node(b, N_TEXT, textf(b, "!vkhlo.unsupported<\"builtin type code %" PRIu64 "\">", code));
  }
}

/* Text of a dictionary node; names are strings. */
static const char *dict_text(bc_t *b, node_t *n, const uint8_t *at) {
  if (n->text) return n->text;
  text_t sb = {b, NULL, 0, 0};
  tx_append(&sb, "{");
  for (int i = 0; i + 1 < n->count; i += 2) {
    node_t *name = n->items[i], *value = n->items[i + 1];
    if (name->kind != N_STRING) fail(b, at, "dictionary key %s is not a string", name->text);
    if (value->placeholder && memchr(name->str, '.', name->len)) continue; /* another dialect's annotation */
    if (sb.length > 1) tx_append(&sb, ", ");
    if (is_bare_identifier(name->str, name->len))
      tx_appendn(&sb, name->str, name->len);
    else
      append_quoted(&sb, name->str, name->len);
    tx_printf(&sb, " = %s", value->kind == N_DICT ? dict_text(b, value, at) : value->text);
  }
  tx_append(&sb, "}");
  n->text = tx_take(&sb);
  return n->text;
}

static node_t *decode_entry(bc_t *b, entry_t *e, bool is_type, const uint8_t *at) {
  if (e->node) return e->node;
  if (e->busy) fail(b, at, "an attribute or type that contains itself");
  if (++b->depth > MAX_NESTING) unsupported(b, at, "attributes or types nested more than %d deep", MAX_NESTING);
  e->busy = true;
  reader_t r = {e->data, e->data + e->size};
  node_t *n;
  const char *dialect = b->dialects[e->dialect];
  if (!e->custom) {
    const uint8_t *nul = memchr(e->data, 0, e->size);
    if (!nul) fail(b, e->data, "unterminated assembly-form %s", is_type ? "type" : "attribute");
    n = new_node(b, N_TEXT, arena_strndup(&b->arena, (const char *)e->data, (size_t)(nul - e->data)));
    if (!n->text) {
      b->err = VKHLO_NO_MEMORY();
      longjmp(b->jb, 1);
    }
    r.p = nul + 1;
  } else if (!strcmp(dialect, "vhlo")) {
    n = is_type ? vhlo_type(b, &r) : vhlo_attr(b, &r);
  } else if (!strcmp(dialect, "builtin")) {
    n = is_type ? builtin_type(b, &r) : builtin_attr(b, &r);
  } else {
    /* Another dialect's own encoding (Shardy's shardings in JAX's artifacts):
     * annotations a dotted name drops (see dropped); anything else becomes
     * an error where the parser meets it. */
    n = new_node(b, N_TEXT, textf(b, "%s<\"%s %s\">", is_type ? "!vkhlo.unsupported" : "#vkhlo.unsupported", dialect,
                                  is_type ? "type" : "attribute"));
  }
  /* An entry this reader cannot decode becomes text the parser refuses where
   * (and only if) a function it reads uses it. */
  n->placeholder = n->text && !strncmp(n->text + 1, "vkhlo.unsupported", 17);
  if (r.p != r.end && !n->placeholder)
    fail(b, r.p, "%zu trailing bytes after %s", (size_t)(r.end - r.p), is_type ? "a type" : "an attribute");
  if (n->kind == N_DICT) dict_text(b, n, e->data);
  e->node = n;
  e->busy = false;
  b->depth--;
  return n;
}

static node_t *attr_at(bc_t *b, uint64_t index, const uint8_t *at) {
  if (index >= b->attr_count) fail(b, at, "attribute index %" PRIu64 " out of range (%" PRIu64 ")", index, b->attr_count);
  return decode_entry(b, &b->attrs[index], false, at);
}

static node_t *type_at(bc_t *b, uint64_t index, const uint8_t *at) {
  if (index >= b->type_count) fail(b, at, "type index %" PRIu64 " out of range (%" PRIu64 ")", index, b->type_count);
  return decode_entry(b, &b->types[index], true, at);
}

/* ============================================================ sections */

static void read_strings(bc_t *b) {
  reader_t r = b->sections[SEC_STRING];
  const uint8_t *start = r.p;
  uint64_t n = read_count(b, &r, "strings");
  b->strings = alloc_array(b, n, sizeof *b->strings, start);
  b->string_lens = alloc_array(b, n, sizeof *b->string_lens, start);
  b->string_count = n;
  /* Sizes (each with its NUL) in reverse order, then the data. */
  uint64_t *sizes = alloc_array(b, n, sizeof *sizes, start);
  for (uint64_t i = 0; i < n; i++) sizes[n - 1 - i] = read_varint(b, &r);
  const uint8_t *data = r.p;
  size_t left = (size_t)(r.end - r.p);
  for (uint64_t i = 0; i < n; i++) {
    if (!sizes[i] || sizes[i] > left || data[sizes[i] - 1]) fail(b, data, "malformed string table");
    b->strings[i] = (const char *)data;
    b->string_lens[i] = (size_t)sizes[i] - 1;
    data += sizes[i];
    left -= (size_t)sizes[i];
  }
  if (left) fail(b, data, "trailing data in the string section");
}

static void read_dialects(bc_t *b) {
  reader_t r = b->sections[SEC_DIALECT];
  const uint8_t *start = r.p;
  uint64_t n = read_count(b, &r, "dialects");
  b->dialects = alloc_array(b, n, sizeof *b->dialects, start);
  b->dialect_count = n;
  for (uint64_t i = 0; i < n; i++) {
    bool versioned = false;
    uint64_t name = b->version < 1 ? read_varint(b, &r) : read_varint_flag(b, &r, &versioned);
    if (name >= b->string_count) fail(b, r.p, "dialect name index out of range");
    b->dialects[i] = b->strings[name];
    if (versioned) {
      reader_t version;
      if (read_section(b, &r, &version) != SEC_DIALECT_VERSIONS) fail(b, r.p, "expected a dialect version section");
    }
  }
  if (b->version >= 4) read_varint(b, &r); /* the count of op names */
  uint64_t cap = 0;
  while (r.p < r.end) {
    uint64_t dialect = read_index(b, &r, b->dialect_count, "dialect");
    uint64_t count = read_count(b, &r, "op names");
    for (uint64_t i = 0; i < count; i++) {
      if (b->op_name_count == cap) {
        cap = cap ? cap * 2 : 64;
        op_name_t *grown = alloc_array(b, cap, sizeof *grown, r.p);
        if (b->op_name_count) memcpy(grown, b->op_names, (size_t)b->op_name_count * sizeof *grown);
        b->op_names = grown;
      }
      op_name_t *o = &b->op_names[b->op_name_count++];
      o->dialect = dialect;
      bool registered = false;
      uint64_t s = b->version < 5 ? read_varint(b, &r) : read_varint_flag(b, &r, &registered);
      if (s >= b->string_count) fail(b, r.p, "op name index out of range");
      o->name = b->strings[s];
      o->len = b->string_lens[s];
      o->registered = b->version < 5 ? -1 : registered;
    }
  }
}

static void read_attr_type_offsets(bc_t *b) {
  reader_t r = b->sections[SEC_ATTR_TYPE_OFFSET];
  reader_t data = b->sections[SEC_ATTR_TYPE];
  const uint8_t *start = r.p;
  b->attr_count = read_varint(b, &r);
  b->type_count = read_varint(b, &r);
  if (b->attr_count > (uint64_t)(r.end - r.p) || b->type_count > (uint64_t)(r.end - r.p))
    fail(b, start, "more attributes and types than the offset section holds");
  b->attrs = alloc_array(b, b->attr_count, sizeof *b->attrs, start);
  b->types = alloc_array(b, b->type_count, sizeof *b->types, start);
  size_t offset = 0, total = (size_t)(data.end - data.p);
  for (int kind = 0; kind < 2; kind++) {
    entry_t *entries = kind ? b->types : b->attrs;
    uint64_t count = kind ? b->type_count : b->attr_count, done = 0;
    while (done < count) {
      uint64_t dialect = read_index(b, &r, b->dialect_count, "dialect");
      uint64_t n = read_varint(b, &r);
      if (n > count - done) fail(b, r.p, "attribute/type group larger than the table");
      for (uint64_t i = 0; i < n; i++) {
        bool custom;
        uint64_t size = read_varint_flag(b, &r, &custom);
        if (size > total - offset) fail(b, r.p, "attribute/type entry past the end of its section");
        entry_t *e = &entries[done++];
        e->data = data.p + offset;
        e->size = (size_t)size;
        e->dialect = dialect;
        e->custom = custom;
        offset += (size_t)size;
      }
    }
  }
  if (r.p != r.end) fail(b, r.p, "trailing data in the attribute/type offset section");
}

static void read_properties(bc_t *b) {
  if (!b->has_section[SEC_PROPERTIES]) return;
  reader_t r = b->sections[SEC_PROPERTIES];
  if (r.p == r.end) return;
  const uint8_t *start = r.p;
  uint64_t n = read_count(b, &r, "properties");
  b->props = alloc_array(b, n, sizeof *b->props, start);
  b->props_sizes = alloc_array(b, n, sizeof *b->props_sizes, start);
  b->prop_count = n;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t size = read_varint(b, &r);
    b->props[i] = read_bytes(b, &r, size);
    b->props_sizes[i] = (size_t)size;
  }
}

/* ============================================================ operations */

/* Each VHLO op's attributes in declaration order: the order of its
 * properties (VHLO 0.15.0 and later).  Ops not listed have none. */
static const struct op_attrs {
  const char *op, *names;
} op_attr_table[] = {
    {"all_gather_v1", "all_gather_dim replica_groups channel_id use_global_device_ids"},
    {"all_gather_v2", "all_gather_dim replica_groups channel_id use_global_device_ids"},
    {"all_reduce_v1", "replica_groups channel_id use_global_device_ids"},
    {"all_reduce_v2", "replica_groups channel_id use_global_device_ids"},
    {"all_to_all_v1", "split_dimension concat_dimension split_count replica_groups channel_id"},
    {"all_to_all_v2", "split_dimension concat_dimension split_count replica_groups channel_id"},
    {"batch_norm_grad_v1", "epsilon feature_index"},
    {"batch_norm_inference_v1", "epsilon feature_index"},
    {"batch_norm_training_v1", "epsilon feature_index"},
    {"broadcast_in_dim_v1", "broadcast_dimensions"},
    {"broadcast_v1", "broadcast_sizes"},
    {"call_v1", "callee"},
    {"cbrt_v2", "result_accuracy"},
    {"cholesky_v1", "lower"},
    {"collective_broadcast_v1", "replica_groups channel_id"},
    {"collective_broadcast_v2", "replica_groups channel_id has_dynamic_root"},
    {"collective_reduce_v1", "replica_groups channel_id use_global_device_ids has_dynamic_root"},
    {"collective_permute_v1", "source_target_pairs channel_id"},
    {"compare_v1", "comparison_direction compare_type"},
    {"composite_v1", "name composite_attributes decomposition version"},
    {"composite_v2", "name composite_attributes decomposition version"},
    {"concatenate_v1", "dimension"},
    {"constant_v1", "value"},
    {"convolution_v1", "window_strides padding lhs_dilation rhs_dilation window_reversal input_batch_dimension "
                       "input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension "
                       "kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension "
                       "output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count "
                       "precision_config"},
    {"cosine_v2", "result_accuracy"},
    {"custom_call_v1", "call_target_name has_side_effect backend_config api_version called_computations "
                       "operand_layouts result_layouts output_operand_aliases"},
    {"custom_call_v2", "call_target_name has_side_effect backend_config api_version called_computations "
                       "operand_layouts result_layouts output_operand_aliases result_tilings"},
    {"cross-replica-sum_v1", "replica_groups"},
    {"dot_v1", "precision_config"},
    {"dot_general_v1", "lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions "
                       "rhs_contracting_dimensions precision_config"},
    {"dot_general_v2", "lhs_batching_dimensions rhs_batching_dimensions lhs_contracting_dimensions "
                       "rhs_contracting_dimensions precision_config lhs_precision_type rhs_precision_type "
                       "accumulation_type lhs_component_count rhs_component_count num_primitive_operations "
                       "allow_imprecise_accumulation"},
    {"dynamic_broadcast_in_dim_v1", "broadcast_dimensions known_expanding_dimensions known_nonexpanding_dimensions"},
    {"dynamic_conv_v1", "window_strides padding lhs_dilation rhs_dilation window_reversal input_batch_dimension "
                        "input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension "
                        "kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension "
                        "output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count "
                        "precision_config"},
    {"dynamic_conv_v2", "window_strides lhs_dilation rhs_dilation window_reversal input_batch_dimension "
                        "input_feature_dimension input_spatial_dimensions kernel_input_feature_dimension "
                        "kernel_output_feature_dimension kernel_spatial_dimensions output_batch_dimension "
                        "output_feature_dimension output_spatial_dimensions feature_group_count batch_group_count "
                        "precision_config"},
    {"dynamic_gather_v1", "offset_dims collapsed_slice_dims start_index_map index_vector_dim indices_are_sorted"},
    {"dynamic_gather_v2", "offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims "
                          "start_index_map index_vector_dim indices_are_sorted"},
    {"dynamic_iota_v1", "iota_dimension"},
    {"dynamic_slice_v1", "slice_sizes"},
    {"einsum_v1", "einsum_config"},
    {"exponential_minus_one_v2", "result_accuracy"},
    {"exponential_v2", "result_accuracy"},
    {"fft_v1", "fft_type fft_length"},
    {"func_v1", "sym_name function_type sym_visibility arg_attrs res_attrs"},
    {"gather_v1", "offset_dims collapsed_slice_dims start_index_map index_vector_dim slice_sizes indices_are_sorted"},
    {"gather_v2", "offset_dims collapsed_slice_dims operand_batching_dims start_indices_batching_dims "
                  "start_index_map index_vector_dim slice_sizes indices_are_sorted"},
    {"get_dimension_size_v1", "dimension"},
    {"get_tuple_element_v1", "index"},
    {"infeed_v1", "infeed_config layout"},
    {"iota_v1", "iota_dimension"},
    {"log_plus_one_v2", "result_accuracy"},
    {"logistic_v2", "result_accuracy"},
    {"log_v2", "result_accuracy"},
    {"map_v1", "dimensions"},
    {"outfeed_v1", "outfeed_config"},
    {"pad_v1", "edge_padding_low edge_padding_high interior_padding"},
    {"recv_v1", "channel_id channel_type is_host_transfer"},
    {"recv_v2", "channel_id channel_type is_host_transfer source_target_pairs"},
    {"reduce_v1", "dimensions"},
    {"reduce_precision_v1", "exponent_bits mantissa_bits"},
    {"reduce_scatter_v1", "scatter_dimension replica_groups channel_id use_global_device_ids"},
    {"reduce_window_v1", "window_dimensions window_strides base_dilations window_dilations padding"},
    {"reverse_v1", "dimensions"},
    {"rng_bit_generator_v1", "rng_algorithm"},
    {"rng_v1", "rng_distribution"},
    {"rsqrt_v2", "result_accuracy"},
    {"scatter_v1", "update_window_dims inserted_window_dims scatter_dims_to_operand_dims index_vector_dim "
                   "indices_are_sorted unique_indices"},
    {"scatter_v2", "update_window_dims inserted_window_dims input_batching_dims scatter_indices_batching_dims "
                   "scatter_dims_to_operand_dims index_vector_dim indices_are_sorted unique_indices"},
    {"select_and_scatter_v1", "window_dimensions window_strides padding"},
    {"send_v1", "channel_id channel_type is_host_transfer"},
    {"send_v2", "channel_id channel_type is_host_transfer source_target_pairs"},
    {"set_dimension_size_v1", "dimension"},
    {"sine_v2", "result_accuracy"},
    {"slice_v1", "start_indices limit_indices strides"},
    {"sort_v1", "dimension is_stable"},
    {"sqrt_v2", "result_accuracy"},
    {"tan_v2", "result_accuracy"},
    {"tanh_v2", "result_accuracy"},
    {"torch_index_select_v1", "dim batch_dims"},
    {"transpose_v1", "permutation"},
    {"triangular_solve_v1", "left_side lower unit_diagonal transpose_a"},
    {"unary_einsum_v1", "einsum_config"},
};

/* Attributes that change nothing this compiler computes, left out of the
 * text: dot algorithms (f32 stays f32 here), layouts, tilings, result
 * accuracy, a custom call's API version, dynamic_broadcast_in_dim's hints. */
static const char *const dropped_attrs[] = {
    "result_accuracy", "lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
    "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation", "operand_layouts",
    "result_layouts", "result_tilings", "api_version", "known_expanding_dimensions",
    "known_nonexpanding_dimensions", "layout", "channel_type",
};

typedef struct named {
  const char *name;
  size_t len;
  node_t *value;
} named_t;

typedef struct op {
  const op_name_t *name;
  char base[64]; /* a VHLO op's name without its version: "add" */
  named_t *attrs;
  int attr_count;
  node_t **result_types;
  uint64_t result_count;
  uint64_t *operands;
  uint64_t operand_count;
  uint64_t region_count;
  bool isolated;
  const uint8_t *at;
} op_t;

static named_t *find_attr(op_t *op, const char *name) {
  for (int i = 0; i < op->attr_count; i++)
    if (strlen(name) == op->attrs[i].len && !memcmp(op->attrs[i].name, name, op->attrs[i].len)) return &op->attrs[i];
  return NULL;
}

static void add_attr(bc_t *b, op_t *op, const char *name, size_t len, node_t *value, int *cap) {
  if (op->attr_count == *cap) {
    *cap = *cap ? *cap * 2 : 8;
    named_t *grown = alloc_array(b, (uint64_t)*cap, sizeof *grown, op->at);
    if (op->attr_count) memcpy(grown, op->attrs, (size_t)op->attr_count * sizeof *grown);
    op->attrs = grown;
  }
  op->attrs[op->attr_count++] = (named_t){name, len, value};
}

/* The op's properties: its attributes in op_attr_table order. */
static void read_op_properties(bc_t *b, reader_t *r, op_t *op, int *cap) {
  const uint8_t *at = r->p;
  uint64_t index = read_index(b, r, b->prop_count, "properties");
  if (op->name->registered == 0) return; /* an unregistered op's properties: an attribute, ignored */
  reader_t blob = {b->props[index], b->props[index] + b->props_sizes[index]};
  bool vhlo = !strcmp(b->dialects[op->name->dialect], "vhlo");
  if (!strcmp(b->dialects[op->name->dialect], "builtin") && op->name->len == 6 && !memcmp(op->name->name, "module", 6)) {
    /* builtin.module: its optional sym_name and sym_visibility, each an
     * attribute index with a presence flag */
    static const char *const names[] = {"sym_name", "sym_visibility"};
    for (int i = 0; i < 2 && blob.p < blob.end; i++) {
      bool present;
      const uint8_t *attr_at_p = blob.p;
      uint64_t a = read_varint_flag(b, &blob, &present);
      if (present) add_attr(b, op, names[i], strlen(names[i]), attr_at(b, a, attr_at_p), cap);
    }
    return;
  }
  if (!vhlo) return; /* Shardy's ops: their shardings are not needed */
  const char *names = NULL;
  char full[80];
  snprintf(full, sizeof full, "%.*s", (int)op->name->len, op->name->name);
  for (size_t i = 0; i < sizeof op_attr_table / sizeof op_attr_table[0]; i++)
    if (!strcmp(op_attr_table[i].op, full)) names = op_attr_table[i].names;
  if (!names && blob.p != blob.end)
    unsupported(b, at, "op 'vhlo.%s' is newer than this reader (it knows the VHLO ops of StableHLO 1.20)", full);
  /* Properties are stored in the order of the attribute names (ODS sorts them). */
  const char *name[24];
  size_t len[24];
  int count = 0;
  while (names && *names && count < 24) {
    const char *end = strchr(names, ' ');
    len[count] = end ? (size_t)(end - names) : strlen(names);
    name[count++] = names;
    names += len[count - 1] + (end ? 1 : 0);
  }
  for (int i = 1; i < count; i++)
    for (int j = i; j > 0; j--) {
      size_t n = len[j] < len[j - 1] ? len[j] : len[j - 1];
      int c = memcmp(name[j], name[j - 1], n);
      if (c > 0 || (c == 0 && len[j] > len[j - 1])) break;
      const char *tn = name[j];
      size_t tl = len[j];
      name[j] = name[j - 1], len[j] = len[j - 1];
      name[j - 1] = tn, len[j - 1] = tl;
    }
  for (int i = 0; i < count; i++) {
    if (blob.p == blob.end) fail(b, at, "vhlo.%s: properties end before '%.*s'", full, (int)len[i], name[i]);
    add_attr(b, op, name[i], len[i], read_attr(b, &blob), cap);
  }
  if (blob.p != blob.end) fail(b, at, "vhlo.%s: more properties than its attributes", full);
}

/* Use-list orders change nothing in the text: read and dropped. */
static void skip_use_lists(bc_t *b, reader_t *r, uint64_t value_count) {
  uint64_t n = value_count > 1 ? read_varint(b, r) : 1;
  for (uint64_t i = 0; i < n; i++) {
    if (value_count > 1) read_varint(b, r);
    bool pairs;
    uint64_t count = read_varint_flag(b, r, &pairs);
    for (uint64_t k = 0; k < count; k++) read_varint(b, r);
  }
}

static void indent(bc_t *b, int level) {
  for (int i = 0; i < level; i++) tx_append(&b->out, "  ");
}

/* Where an op is: what its return becomes, whether func_v1 is a function. */
typedef enum { PARENT_MODULE, PARENT_FUNC, PARENT_OP } parent_t;
/* How a region prints: a module's body (its ops), a function's body (the
 * signature from its arguments), an op's region ({ ^bb0(...): ... }). */
typedef enum { REGION_MODULE, REGION_FUNC, REGION_OP, REGION_SDY } region_mode_t;

static void read_block_ops(bc_t *b, reader_t *r, scope_t *s, uint64_t *next, bool has_values, uint64_t op_count,
                           parent_t parent, int level);

static void define(bc_t *b, scope_t *s, uint64_t *next, node_t *type, const uint8_t *at) {
  if (*next >= s->count) fail(b, at, "value index %" PRIu64 " outside its region's %" PRIu64 " values", *next, s->count);
  s->values[*next].name = ++b->next_name;
  s->values[*next].type = type;
  (*next)++;
}

static value_t *use(bc_t *b, scope_t *s, uint64_t index, const uint8_t *at) {
  if (index >= s->count || !s->values[index].name)
    unsupported(b, at, "a use of value %" PRIu64 " before its definition (graph regions are not StableHLO)", index);
  return &s->values[index];
}

/* The function header of a func_v1 whose entry block declares |args|. */
static void print_func_header(bc_t *b, op_t *op, scope_t *s, uint64_t first_arg, uint64_t arg_count, int level) {
  named_t *name = find_attr(op, "sym_name"), *type = find_attr(op, "function_type");
  named_t *visibility = find_attr(op, "sym_visibility");
  named_t *arg_attrs = find_attr(op, "arg_attrs"), *res_attrs = find_attr(op, "res_attrs");
  if (!name || name->value->kind != N_STRING || !type || type->value->kind != N_FUNCTION)
    fail(b, op->at, "vhlo.func_v1 without a name or a function type");
  node_t *ft = type->value;
  bool declaration = arg_count == UINT64_MAX;
  if (declaration) arg_count = (uint64_t)ft->n_in;
  if ((uint64_t)ft->n_in != arg_count) fail(b, op->at, "function with %d inputs but %" PRIu64 " arguments", ft->n_in, arg_count);
  indent(b, level);
  tx_append(&b->out, "func.func ");
  if (visibility && visibility->value->kind == N_STRING && visibility->value->len)
    tx_printf(&b->out, "%.*s ", (int)visibility->value->len, visibility->value->str);
  append_symbol(&b->out, name->value->str, name->value->len);
  tx_append(&b->out, "(");
  for (uint64_t i = 0; i < arg_count; i++) {
    if (declaration) {
      tx_printf(&b->out, "%s%s", i ? ", " : "", ft->items[i]->text);
    } else {
      value_t *v = &s->values[first_arg + i];
      tx_printf(&b->out, "%s%%v%u: %s", i ? ", " : "", v->name, v->type->text);
    }
    if (arg_attrs && arg_attrs->value->kind == N_ARRAY && (uint64_t)arg_attrs->value->count == arg_count &&
        arg_attrs->value->items[i]->kind == N_DICT && arg_attrs->value->items[i]->count)
      tx_printf(&b->out, " %s", arg_attrs->value->items[i]->text);
  }
  tx_append(&b->out, ") -> (");
  int n_out = ft->count - ft->n_in;
  for (int i = 0; i < n_out; i++) {
    tx_printf(&b->out, "%s%s", i ? ", " : "", ft->items[ft->n_in + i]->text);
    if (res_attrs && res_attrs->value->kind == N_ARRAY && res_attrs->value->count == n_out &&
        res_attrs->value->items[i]->kind == N_DICT && res_attrs->value->items[i]->count)
      tx_printf(&b->out, " %s", res_attrs->value->items[i]->text);
  }
  tx_append(&b->out, declaration ? ")\n" : ") {\n");
}

/* One region: its block header, arguments and operations.  |func| is the
 * func_v1 whose body this is (its arguments are the function's). */
static void read_region(bc_t *b, reader_t *r, scope_t *s, op_t *op, region_mode_t mode, parent_t parent, int level,
                        bool first) {
  const uint8_t *at = r->p;
  uint64_t blocks = read_varint(b, r);
  if (mode == REGION_FUNC && blocks > 1) unsupported(b, at, "a function body of %" PRIu64 " blocks", blocks);
  if (mode == REGION_OP && !first) tx_append(&b->out, ", ");
  if (blocks == 0) {
    if (mode == REGION_OP) tx_append(&b->out, "{\n}");
    if (mode == REGION_FUNC) print_func_header(b, op, s, 0, UINT64_MAX, level); /* a declaration */
    return;
  }
  if (blocks > 1) unsupported(b, at, "a region of %" PRIu64 " blocks (StableHLO regions have one)", blocks);
  uint64_t value_count = read_varint(b, r);
  if (value_count > (uint64_t)(r->end - r->p) * 8 + 64) fail(b, at, "region of %" PRIu64 " values", value_count);
  uint64_t base = s->count;
  if (base + value_count > s->cap) {
    uint64_t cap = (base + value_count) * 2;
    value_t *grown = alloc_array(b, cap, sizeof *grown, at);
    if (base) memcpy(grown, s->values, (size_t)base * sizeof *grown);
    s->values = grown;
    s->cap = cap;
  }
  if (value_count) memset(s->values + base, 0, (size_t)value_count * sizeof *s->values);
  s->count = base + value_count;
  uint64_t next = base;
  bool has_args;
  uint64_t op_count = read_varint_flag(b, r, &has_args);
  uint64_t arg_count = 0;
  if (has_args) {
    arg_count = read_varint(b, r);
    for (uint64_t i = 0; i < arg_count; i++) {
      const uint8_t *arg_at = r->p;
      node_t *type;
      if (b->version >= 4) {
        bool has_loc;
        uint64_t t = read_varint_flag(b, r, &has_loc);
        type = type_at(b, t, arg_at);
        if (has_loc) read_varint(b, r);
      } else {
        type = read_type(b, r);
        read_varint(b, r);
      }
      define(b, s, &next, type, arg_at);
    }
    if (b->version >= 3 && read_byte(b, r)) skip_use_lists(b, r, arg_count);
  }
  if (mode == REGION_MODULE && arg_count) fail(b, at, "a module body with arguments");
  if (mode == REGION_FUNC) {
    print_func_header(b, op, s, base, arg_count, level);
  } else if (mode == REGION_SDY) { /* Shardy's pretty form: (%arg: T, ...) { ... } */
    tx_append(&b->out, "(");
    for (uint64_t i = 0; i < arg_count; i++)
      tx_printf(&b->out, "%s%%v%u: %s", i ? ", " : "", s->values[base + i].name, s->values[base + i].type->text);
    tx_append(&b->out, ") {\n");
  } else if (mode == REGION_OP) {
    tx_append(&b->out, "{\n");
    if (arg_count) {
      indent(b, level);
      tx_append(&b->out, "^bb0(");
      for (uint64_t i = 0; i < arg_count; i++)
        tx_printf(&b->out, "%s%%v%u: %s", i ? ", " : "", s->values[base + i].name, s->values[base + i].type->text);
      tx_append(&b->out, "):\n");
    }
  }
  read_block_ops(b, r, s, &next, value_count > 0, op_count, parent, level + 1);
  if (mode != REGION_MODULE) {
    indent(b, level);
    tx_append(&b->out, mode == REGION_FUNC ? "}\n" : "}");
  }
  s->count = base;
}

/* The op's regions: inline, or each in an IR section when isolated from
 * above (bytecode 2 and later), with a scope of its own. */
static void read_regions(bc_t *b, reader_t *r, scope_t *s, op_t *op, region_mode_t mode, parent_t parent, int level) {
  if (++b->depth > MAX_NESTING) unsupported(b, r->p, "regions nested more than %d deep", MAX_NESTING);
  reader_t section = *r;
  reader_t *rr = r;
  if (op->isolated && b->version >= 2) {
    if (read_section(b, r, &section) != SEC_IR) fail(b, r->p, "expected an IR section for an isolated region");
    rr = &section;
  }
  scope_t own = {0};
  scope_t *scope = op->isolated ? &own : s;
  for (uint64_t i = 0; i < op->region_count; i++) read_region(b, rr, scope, op, mode, parent, level, i == 0);
  if (rr == &section && section.p != section.end) fail(b, section.p, "trailing data in an isolated region");
  b->depth--;
}

static void print_attr_value(bc_t *b, const named_t *a) {
  const node_t *v = a->value;
  text_t *o = &b->out;
  if (!strncmp(a->name, "callee", a->len) || !strncmp(a->name, "decomposition", a->len)) {
    if (v->kind == N_STRING) {
      append_symbol(o, v->str, v->len);
      return;
    }
  } else if (!strncmp(a->name, "called_computations", a->len) && v->kind == N_ARRAY) {
    tx_append(o, "[");
    for (int i = 0; i < v->count; i++) {
      if (i) tx_append(o, ", ");
      if (v->items[i]->kind == N_STRING)
        append_symbol(o, v->items[i]->str, v->items[i]->len);
      else
        tx_append(o, v->items[i]->text);
    }
    tx_append(o, "]");
    return;
  }
  tx_append(o, v->text);
}

static bool dropped(const named_t *a) {
  if (a->value->placeholder && memchr(a->name, '.', a->len)) return true; /* e.g. sdy.sharding_rule */
  if (a->len == 14 && !memcmp(a->name, "backend_config", 14) &&
      ((a->value->kind == N_STRING && !a->value->len) || (a->value->kind == N_DICT && !a->value->count)))
    return true; /* VHLO's value for none */
  for (size_t i = 0; i < sizeof dropped_attrs / sizeof dropped_attrs[0]; i++)
    if (strlen(dropped_attrs[i]) == a->len && !memcmp(dropped_attrs[i], a->name, a->len)) return true;
  return false;
}

/* The op's attributes after |open| (" {", or "attributes {" for the
 * module), without the symbol's name and visibility (a module's are its
 * header); false when there are none to print. */
static bool print_attrs(bc_t *b, op_t *op, const char *open) {
  int printed = 0;
  for (int i = 0; i < op->attr_count; i++) {
    named_t *a = &op->attrs[i];
    if (dropped(a) || (a->len == 8 && !memcmp(a->name, "sym_name", 8)) ||
        (a->len == 14 && !memcmp(a->name, "sym_visibility", 14)))
      continue;
    tx_append(&b->out, printed++ ? ", " : open);
    if (a->len == 10 && !memcmp(a->name, "channel_id", 10)) {
      named_t *type = find_attr(op, "channel_type");
      tx_printf(&b->out, "channel_handle = #stablehlo.channel_handle<handle = %" PRId64 ", type = %" PRId64 ">",
                    a->value->value, type ? type->value->value : 0);
      continue;
    }
    if (is_bare_identifier(a->name, a->len))
      tx_appendn(&b->out, a->name, a->len);
    else
      append_quoted(&b->out, a->name, a->len);
    tx_append(&b->out, " = ");
    print_attr_value(b, a);
  }
  if (printed) tx_append(&b->out, "}");
  return printed > 0;
}

static void print_types(bc_t *b, value_t **values, node_t **types, uint64_t count, bool parenthesize) {
  if (parenthesize || count != 1) tx_append(&b->out, "(");
  for (uint64_t i = 0; i < count; i++) tx_printf(&b->out, "%s%s", i ? ", " : "", values ? values[i]->type->text : types[i]->text);
  if (parenthesize || count != 1) tx_append(&b->out, ")");
}

/* Shardy's ops in the pretty forms the parser reads (their shardings are
 * left out: one device holds every value whole): the mesh is dropped,
 * sharding_constraint / reshard / propagation_barrier / data_flow_edge are
 * `%r = sdy.X %v : T`, sharding_group `sdy.sharding_group %v : T`, named and
 * manual computations `sdy.X(%a...) (%arg: T...) { ... } : (T...) -> (R...)`. */
static void print_sdy_op(bc_t *b, reader_t *r, scope_t *s, op_t *op, value_t **operands, uint32_t first_result,
                         int level) {
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)op->name->len, op->name->name);
  bool value_op = !strcmp(name, "sharding_constraint") || !strcmp(name, "reshard") ||
                  !strcmp(name, "propagation_barrier") || !strcmp(name, "data_flow_edge");
  bool region_op = !strcmp(name, "manual_computation") || !strcmp(name, "named_computation");
  if (!strcmp(name, "mesh") && !op->region_count && !op->operand_count && !op->result_count) return;
  if (!strcmp(name, "return")) {
    indent(b, level);
    tx_append(&b->out, "\"sdy.return\"(");
    for (uint64_t i = 0; i < op->operand_count; i++) tx_printf(&b->out, "%s%%v%u", i ? ", " : "", operands[i]->name);
    tx_append(&b->out, ") : ");
    print_types(b, operands, NULL, op->operand_count, true);
    tx_append(&b->out, " -> ()\n");
    return;
  }
  bool group = !strcmp(name, "sharding_group");
  if (!((value_op && op->operand_count == 1 && op->result_count == 1) || (group && op->operand_count == 1) ||
        (region_op && op->region_count == 1)))
    unsupported(b, op->at, "Shardy op 'sdy.%s' (this reader knows its annotations and computations)", name);
  indent(b, level);
  for (uint64_t i = 0; i < op->result_count; i++) tx_printf(&b->out, "%s%%v%u", i ? ", " : "", first_result + (uint32_t)i);
  if (op->result_count) tx_append(&b->out, " = ");
  if (!region_op) {
    tx_printf(&b->out, "sdy.%s %%v%u : %s\n", name, operands[0]->name, operands[0]->type->text);
    return;
  }
  tx_printf(&b->out, "sdy.%s(", name);
  for (uint64_t i = 0; i < op->operand_count; i++) tx_printf(&b->out, "%s%%v%u", i ? ", " : "", operands[i]->name);
  tx_append(&b->out, ") ");
  read_regions(b, r, s, op, REGION_SDY, PARENT_OP, level);
  tx_append(&b->out, " : ");
  print_types(b, operands, NULL, op->operand_count, true);
  tx_append(&b->out, " -> ");
  print_types(b, NULL, op->result_types, op->result_count, true);
  tx_append(&b->out, "\n");
}

static void read_op(bc_t *b, reader_t *r, scope_t *s, uint64_t *next, bool has_values, parent_t parent, int level) {
  op_t op = {.at = r->p};
  op.name = &b->op_names[read_index(b, r, b->op_name_count, "op name")];
  const char *dialect = b->dialects[op.name->dialect];
  uint8_t mask = read_byte(b, r);
  read_varint(b, r); /* the location */
  int cap = 0;
  if (mask & OP_HAS_ATTRS) {
    node_t *dict = read_attr(b, r);
    if (dict->kind != N_DICT) fail(b, op.at, "an op's attributes are not a dictionary");
    for (int i = 0; i + 1 < dict->count; i += 2) {
      if (dict->items[i]->kind != N_STRING) fail(b, op.at, "attribute name is not a string");
      add_attr(b, &op, dict->items[i]->str, dict->items[i]->len, dict->items[i + 1], &cap);
    }
  }
  bool vhlo = !strcmp(dialect, "vhlo");
  if (vhlo) {
    size_t len = op.name->len;
    while (len && op.name->name[len - 1] >= '0' && op.name->name[len - 1] <= '9') len--;
    if (len < 3 || op.name->name[len - 1] != 'v' || op.name->name[len - 2] != '_' || len - 2 >= sizeof op.base)
      fail(b, op.at, "VHLO op name '%.*s' has no version", (int)op.name->len, op.name->name);
    memcpy(op.base, op.name->name, len - 2);
    op.base[len - 2] = 0;
  }
  if (mask & OP_HAS_PROPERTIES) read_op_properties(b, r, &op, &cap);
  if (mask & OP_HAS_RESULTS) {
    op.result_count = read_count(b, r, "results");
    op.result_types = alloc_array(b, op.result_count, sizeof *op.result_types, op.at);
    for (uint64_t i = 0; i < op.result_count; i++) op.result_types[i] = read_type(b, r);
  }
  if (mask & OP_HAS_OPERANDS) {
    op.operand_count = read_count(b, r, "operands");
    op.operands = alloc_array(b, op.operand_count, sizeof *op.operands, op.at);
    for (uint64_t i = 0; i < op.operand_count; i++) op.operands[i] = read_varint(b, r);
  }
  if (mask & OP_HAS_SUCCESSORS) unsupported(b, op.at, "an op with successors (StableHLO has no branches)");
  if (b->version >= 3 && (mask & OP_HAS_USE_LISTS)) skip_use_lists(b, r, op.result_count);
  if (mask & OP_HAS_REGIONS) op.region_count = read_varint_flag(b, r, &op.isolated);

  bool is_module = !strcmp(dialect, "builtin") && op.name->len == 6 && !memcmp(op.name->name, "module", 6);
  bool is_sdy = !strcmp(dialect, "sdy"); /* Shardy's ops, which JAX's artifacts carry (VHLO 1.11) */
  bool is_cast = !strcmp(dialect, "builtin") && op.name->len == 26 &&
                 !memcmp(op.name->name, "unrealized_conversion_cast", 26);
  if (is_cast && op.operand_count == 1 && op.result_count == 1 && !op.region_count && has_values) {
    /* Between VHLO's types and the builtin ones of other dialects' ops (the
     * same tensor): the result is its operand. */
    value_t *v = use(b, s, op.operands[0], op.at);
    if (*next >= s->count) fail(b, op.at, "value index %" PRIu64 " outside its region's values", *next);
    s->values[(*next)++] = *v;
    return;
  }
  if (!vhlo && !is_module && !is_sdy)
    unsupported(b, op.at, "op '%s.%.*s': only StableHLO portable artifacts (the VHLO dialect) are read; write them "
                "with stablehlo.serialize_portable_artifact (jax.export does), or give the text", dialect,
                (int)op.name->len, op.name->name);
  /* Operands are resolved before the results are defined. */
  value_t **operand_values = alloc_array(b, op.operand_count, sizeof *operand_values, op.at);
  for (uint64_t i = 0; i < op.operand_count; i++) operand_values[i] = use(b, s, op.operands[i], op.at);
  uint32_t first_result = b->next_name + 1;
  if (has_values)
    for (uint64_t i = 0; i < op.result_count; i++) define(b, s, next, op.result_types[i], op.at);
  else if (op.result_count)
    fail(b, op.at, "results in a region without values");

  if (is_module) {
    indent(b, level);
    tx_append(&b->out, "module ");
    named_t *name = find_attr(&op, "sym_name");
    if (name && name->value->kind == N_STRING) {
      append_symbol(&b->out, name->value->str, name->value->len);
      tx_append(&b->out, " ");
    }
    if (print_attrs(b, &op, "attributes {")) tx_append(&b->out, " ");
    tx_append(&b->out, "{\n");
    read_regions(b, r, s, &op, REGION_MODULE, PARENT_MODULE, level);
    tx_append(&b->out, "}\n");
    return;
  }
  if (is_sdy) {
    print_sdy_op(b, r, s, &op, operand_values, first_result, level);
    return;
  }
  if (!strcmp(op.base, "func") && parent != PARENT_OP) {
    if (op.region_count != 1) fail(b, op.at, "vhlo.func_v1 with %" PRIu64 " regions", op.region_count);
    read_regions(b, r, s, &op, REGION_FUNC, PARENT_FUNC, level);
    return;
  }
  indent(b, level);
  for (uint64_t i = 0; i < op.result_count; i++) tx_printf(&b->out, "%s%%v%u", i ? ", " : "", first_result + (uint32_t)i);
  if (op.result_count) tx_append(&b->out, " = ");
  if (!strcmp(op.base, "return"))
    tx_printf(&b->out, "\"%s.return\"(", parent == PARENT_FUNC ? "func" : "stablehlo");
  else if (!strcmp(op.base, "call"))
    tx_append(&b->out, "\"func.call\"(");
  else
    tx_printf(&b->out, "\"stablehlo.%s\"(", op.base);
  for (uint64_t i = 0; i < op.operand_count; i++) tx_printf(&b->out, "%s%%v%u", i ? ", " : "", operand_values[i]->name);
  tx_append(&b->out, ")");
  if (op.region_count) {
    tx_append(&b->out, " (");
    read_regions(b, r, s, &op, REGION_OP, PARENT_OP, level);
    tx_append(&b->out, ")");
  }
  print_attrs(b, &op, " {");
  tx_append(&b->out, " : (");
  for (uint64_t i = 0; i < op.operand_count; i++)
    tx_printf(&b->out, "%s%s", i ? ", " : "", operand_values[i]->type->text);
  tx_append(&b->out, ") -> ");
  if (op.result_count == 1) {
    tx_append(&b->out, op.result_types[0]->text);
  } else {
    tx_append(&b->out, "(");
    for (uint64_t i = 0; i < op.result_count; i++) tx_printf(&b->out, "%s%s", i ? ", " : "", op.result_types[i]->text);
    tx_append(&b->out, ")");
  }
  tx_append(&b->out, "\n");
}

static void read_block_ops(bc_t *b, reader_t *r, scope_t *s, uint64_t *next, bool has_values, uint64_t op_count,
                           parent_t parent, int level) {
  for (uint64_t i = 0; i < op_count; i++) read_op(b, r, s, next, has_values, parent, level);
}

static void read_ir(bc_t *b) {
  reader_t r = b->sections[SEC_IR];
  bool has_args;
  uint64_t op_count = read_varint_flag(b, &r, &has_args);
  if (has_args) fail(b, r.p, "top-level block with arguments");
  scope_t top = {0};
  uint64_t next = 0;
  read_block_ops(b, &r, &top, &next, false, op_count, PARENT_MODULE, 0);
  if (r.p != r.end) fail(b, r.p, "trailing data in the IR section");
}

/* ============================================================ entry */

bool hlo_is_bytecode(const void *data, size_t size) {
  return data && size >= 4 && !memcmp(data, "ML\xEFR", 4);
}

bool hlo_find_bytecode(const void *data, size_t size, size_t *offset, size_t *length) {
  const uint8_t *d = data;
  if (hlo_is_bytecode(data, size)) {
    *offset = 0;
    *length = size;
    return true;
  }
  /* A FlatBuffers file (binary: a 32-bit root offset, zero bytes in its
   * first words) holding the artifact as a byte vector: a 4-aligned
   * little-endian length, then the magic number and that many bytes. */
  if (!d || size < 24 || !memchr(d, 0, 16)) return false;
  for (size_t k = 8; k + 4 <= size; k += 4) {
    if (memcmp(d + k, "ML\xEFR", 4)) continue;
    uint32_t n = (uint32_t)d[k - 4] | (uint32_t)d[k - 3] << 8 | (uint32_t)d[k - 2] << 16 | (uint32_t)d[k - 1] << 24;
    if (n >= 16 && n <= size - k) {
      *offset = k;
      *length = n;
      return true;
    }
  }
  return false;
}

static void read_all(bc_t *b, size_t size) {
  reader_t r = {b->base, b->base + size};
  if (!hlo_is_bytecode(b->base, size)) fail(b, NULL, "not MLIR bytecode (no 'ML\\xEFR' magic number)");
  r.p += 4;
  b->version = read_varint(b, &r);
  if (b->version > MAX_VERSION)
    unsupported(b, r.p, "MLIR bytecode version %" PRIu64 " is newer than this reader's %d", b->version, MAX_VERSION);
  const uint8_t *nul = memchr(r.p, 0, (size_t)(r.end - r.p));
  if (!nul) fail(b, r.p, "no producer string");
  r.p = nul + 1;
  while (r.p < r.end) {
    reader_t data;
    const uint8_t *at = r.p;
    int id = read_section(b, &r, &data);
    if (b->has_section[id]) fail(b, at, "section %d appears twice", id);
    b->sections[id] = data;
    b->has_section[id] = true;
  }
  for (int id = SEC_STRING; id <= SEC_IR; id++)
    if (!b->has_section[id]) fail(b, NULL, "bytecode without section %d", id);
  read_strings(b);
  read_properties(b);
  read_dialects(b);
  read_attr_type_offsets(b);
  read_ir(b);
}

vkhlo_status_t hlo_bytecode_to_text(const void *data, size_t size, const char *file_name,
                                    const vkhlo_allocator_t *allocator, char **out_text, size_t *out_length) {
  if (!out_text) return VKHLO_INVALID("hlo_bytecode_to_text: out_text is NULL");
  *out_text = NULL;
  if (out_length) *out_length = 0;
  bc_t *b = vkhlo_calloc(allocator, 1, sizeof *b);
  if (!b) return VKHLO_NO_MEMORY();
  b->base = data;
  b->file = file_name ? file_name : "<input>";
  arena_init(&b->arena, allocator);
  b->out.b = b;
  vkhlo_status_t st = NULL;
  if (setjmp(b->jb)) {
    st = b->err;
  } else {
    read_all(b, size);
    char *text = vkhlo_malloc(allocator, b->out.length + 1);
    if (!text) {
      st = VKHLO_NO_MEMORY();
    } else {
      memcpy(text, tx_take(&b->out), b->out.length + 1);
      *out_text = text;
      if (out_length) *out_length = b->out.length;
    }
  }
  arena_free(&b->arena);
  vkhlo_free(allocator, b);
  return st;
}
