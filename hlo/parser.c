/*
 * The StableHLO text parser: text -> HloModule.
 *
 * Input is MLIR text as JAX, torch_xla and the StableHLO test suite write
 * it (a portable artifact, MLIR bytecode, is first turned into such text by
 * hlo/bytecode.c): an optional `module @name attributes {...} { ... }` around
 * `func.func`s whose bodies are StableHLO / CHLO / check ops, in the pretty
 * form (`%2 = stablehlo.add %0, %1 : tensor<4xf32>`) or the generic form
 * (`%2 = "stablehlo.add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> ...`).
 *
 * Structure (one pass over each function body, recursive descent):
 *
 *   parse_top        module / func.func / #alias lines.  Functions are only
 *                    located here (their bodies skipped); a function is
 *                    parsed when first needed, so a call to a function
 *                    written further down can be inlined immediately.
 *   parse_function   signature -> PARAMETER instructions, then the body.
 *   parse_block      ops until the terminator (return), which sets root.
 *   parse_op         results, op name, then either parse_generic (quoted
 *                    name) or one of the pretty-form parsers; both fill a
 *                    raw_op_t (operands, attributes already decoded into an
 *                    hlo_attrs_t, regions, types) that build_op turns into
 *                    instructions.
 *   parse_region     a nested block -> a separate hlo_computation_t.
 *
 * Values: each function or region has a scope mapping SSA names to
 * instructions.  An op with several results gets a tuple shape and one
 * get_tuple_element per result, emitted right after it; `%0#k` and the
 * names of `%a, %b = ...` refer to those.  A name not found in a region's
 * scope is looked up in the enclosing scope; for while/if/case regions that
 * is an implicit capture and becomes an extra parameter of the region and
 * an extra operand of the op (see finish_captures).
 *
 * Calls are inlined (hlo/inline.c); afterwards the module lists only the
 * entry computation and what it references, callees first.
 *
 * Errors: every failure goes through fail(), which formats a status with
 * "file:line:col: " and longjmps to the single boundary in hlo_parse (the
 * shape of Lua's protected parser).  Everything the parser allocates lives
 * in two arenas, the module's and a scratch arena, so unwinding frees all
 * of it.  Nesting depth is bounded (MAX_DEPTH) so no input can exhaust the
 * stack.
 *
 * Quantized types (!quant.uniform) become their storage values and
 * explicit arithmetic ("quantized types" below).
 *
 * Dynamic shapes (`tensor<?x4xf32>`) are refined while parsing (hlo/refine.h):
 * the entry function's dynamic parameters take the types the caller gives
 * (hlo_parse_options_t.parameter_shapes), a function whose signature is
 * dynamic is parsed once per call, for its operands' types, and each op
 * whose declared result is dynamic gets the static shape its operands give.
 *
 * Not handled: unranked tensors, quantized types other than !quant.uniform
 * (and quantized values in custom calls and composites),
 * dense_resource blobs other than the elided ones, the fully generic
 * "builtin.module"/"func.func" spelling, and ops outside opcodes.def (they
 * fail with "unknown op").
 */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/bytecode.h"
#include "hlo/hlo.h"
#include "hlo/literal.h"
#include "hlo/refine.h"
#include "support/hash.h"

#define MAX_DEPTH 256

/* ============================================================== lexer */

typedef enum {
  TK_EOF,
  TK_VALUE,  /* %name or %name#3 */
  TK_SYMBOL, /* @name or @"name" */
  TK_CARET,  /* ^bb0 */
  TK_HASH,   /* #stablehlo.gather, #loc3 */
  TK_BANG,   /* !stablehlo.token */
  TK_IDENT,  /* stablehlo.add, tensor, f32, LT */
  TK_INT,    /* 12, -3, 0x7FC00000 */
  TK_FLOAT,  /* 1.5, -2.0e+03 */
  TK_STRING, /* "..." (start/len include the quotes) */
  TK_ARROW,  /* -> */
  TK_PUNCT   /* any other single character */
} tok_kind_t;

typedef struct token {
  tok_kind_t kind;
  const char *start;
  size_t len;
  int line, col;
} token_t;

/* The lexer state is a plain value: saving and restoring it (to re-read a
 * dense literal once its type is known, or to parse a function found
 * earlier) is a struct copy. */
typedef struct lexer {
  const char *pos;
  const char *line_start;
  int line;
  token_t tok; /* the current (lookahead) token */
} lexer_t;

typedef struct binding {
  const char *name;
  size_t len;
  int count;                 /* number of results bound to this name */
  hlo_instruction_t *single; /* count == 1 */
  hlo_instruction_t **results;
} binding_t;

typedef struct capture {
  hlo_instruction_t *outer; /* the value in the enclosing computation */
  hlo_instruction_t *param; /* the region's parameter standing for it */
} capture_t;

typedef struct scope {
  struct scope *parent;
  hlo_computation_t *comp;
  binding_t *table;
  size_t table_cap, table_count;
  bool capture_allowed;
  const char *owner; /* op name, for "implicit capture in X region" */
  capture_t *captures;
  int capture_count, capture_cap;
  int returned; /* values of the block's return (one tuple value counts one) */
} scope_t;

typedef struct func_info {
  const char *name;
  size_t len;
  bool is_public;
  bool has_body;
  lexer_t start; /* at the '(' of the argument list */
  hlo_location_t loc;
  int state; /* 0 not parsed, 1 being parsed, 2 done */
  bool dynamic; /* its signature has a dynamic type: parsed per call */
  hlo_computation_t *comp;
  int result_count;
} func_info_t;

/* interpreter.probe %v, probe_id = "id": the value recorded under "id". */
typedef struct probe {
  const char *id;
  hlo_instruction_t *value;
  hlo_computation_t *comp;
} probe_t;

typedef struct parser {
  probe_t *probes;
  int probe_count, probe_cap;
  const char *text, *end;
  const char *file;
  lexer_t lx;
  hlo_module_t *m;
  arena_t tmp; /* scratch: scopes, tables, raw ops */
  const hlo_parse_options_t *opts;
  jmp_buf jb;
  vkhlo_status_t err;
  int depth;
  uint64_t rng_state;
  scope_t *scope;
  func_info_t *funcs;
  int func_count, func_cap;
  const char *module_name;
  size_t module_name_len;
  int region_counter;
  /* quantized values: the quantization of instruction id i's storage value
   * (see "quantized types") */
  const hlo_quant_t **quant_of;
  int quant_cap;
  hlo_refine_t refine; /* values of small integer tensors (dynamic shapes) */
  /* the bounds of the last tensor type read (#stablehlo.bounds<8, ?>):
   * -1 where a dimension has none; bounds_rank 0 when it had no encoding */
  int64_t bounds[HLO_MAX_RANK];
  int bounds_rank;
} parser_t;

static void fail_at(parser_t *p, hlo_location_t loc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
static void fail(parser_t *p, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

static void fail_code_at(parser_t *p, vkhlo_status_code_t code, hlo_location_t loc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5), noreturn));
static void fail_code_at(parser_t *p, vkhlo_status_code_t code, hlo_location_t loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  p->err = hlo_vstatus_at(code, loc, fmt, ap);
  va_end(ap);
  longjmp(p->jb, 1);
}

static void fail_at(parser_t *p, hlo_location_t loc, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  p->err = hlo_vstatus_at(VKHLO_STATUS_INVALID_ARGUMENT, loc, fmt, ap);
  va_end(ap);
  longjmp(p->jb, 1);
}

static hlo_location_t tok_loc(parser_t *p) {
  hlo_location_t l = {p->file, p->lx.tok.line, p->lx.tok.col};
  return l;
}

static void fail(parser_t *p, const char *fmt, ...) {
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fail_at(p, tok_loc(p), "%s", msg);
}

static void out_of_memory(parser_t *p) __attribute__((noreturn));
static void out_of_memory(parser_t *p) {
  p->err = VKHLO_NO_MEMORY();
  longjmp(p->jb, 1);
}

static void *m_alloc(parser_t *p, size_t size) {
  void *q = arena_alloc(&p->m->arena, size);
  if (!q) out_of_memory(p);
  return q;
}
static void *t_alloc(parser_t *p, size_t size) {
  void *q = arena_alloc(&p->tmp, size);
  if (!q) out_of_memory(p);
  return q;
}
static const char *m_strndup(parser_t *p, const char *s, size_t n) {
  char *q = arena_strndup(&p->m->arena, s, n);
  if (!q) out_of_memory(p);
  return q;
}

/* Grows a scratch array of |item| bytes per element to hold |need|. */
static void t_grow(parser_t *p, void **items, int *cap, int need, size_t item) {
  if (need <= *cap) return;
  int ncap = *cap ? *cap * 2 : 8;
  while (ncap < need) ncap *= 2;
  void *q = t_alloc(p, (size_t)ncap * item);
  if (*cap) memcpy(q, *items, (size_t)*cap * item);
  *items = q;
  *cap = ncap;
}

static void enter(parser_t *p) {
  if (++p->depth > MAX_DEPTH) fail(p, "nesting too deep (more than %d levels)", MAX_DEPTH);
}
static void leave(parser_t *p) { p->depth--; }

static bool is_ident_start(char c) { return isalpha((unsigned char)c) || c == '_'; }
static bool is_ident_char(char c) {
  return isalnum((unsigned char)c) || c == '_' || c == '$' || c == '.';
}

/* Moves the lexer forward to |to|, keeping line numbers right. */
static void lex_advance_to(parser_t *p, const char *to) {
  lexer_t *L = &p->lx;
  for (const char *s = L->pos; s < to; s++) {
    if (*s == '\n') {
      L->line++;
      L->line_start = s + 1;
    }
  }
  L->pos = to;
}

static void lex_error(parser_t *p, const char *at, const char *msg) __attribute__((noreturn));
static void lex_error(parser_t *p, const char *at, const char *msg) {
  hlo_location_t l = {p->file, p->lx.line, (int)(at - p->lx.line_start) + 1};
  fail_at(p, l, "%s", msg);
}

/* Skips a string starting at |s| (the opening quote); returns the position
 * after the closing quote. */
static const char *skip_string(parser_t *p, const char *s) {
  const char *e = p->end;
  const char *start = s++;
  while (s < e && *s != '"') {
    if (*s == '\n') lex_error(p, start, "unterminated string");
    if (*s == '\\' && s + 1 < e) s++;
    s++;
  }
  if (s >= e) lex_error(p, start, "unterminated string");
  return s + 1;
}

/* Reads the next token into p->lx.tok.  Comments, `loc(...)` locations
 * and `{-# ... #-}` resource sections are skipped like whitespace. */
static void lex_next(parser_t *p) {
  lexer_t *L = &p->lx;
  const char *e = p->end;
again:;
  const char *s = L->pos;
  while (s < e && isspace((unsigned char)*s)) {
    if (*s == '\n') {
      L->line++;
      L->line_start = s + 1;
    }
    s++;
  }
  L->pos = s;
  if (s + 1 < e && s[0] == '/' && s[1] == '/') {
    while (s < e && *s != '\n') s++;
    L->pos = s;
    goto again;
  }
  if (s + 2 < e && s[0] == '{' && s[1] == '-' && s[2] == '#') {
    const char *q = s + 3;
    while (q + 2 < e && !(q[0] == '#' && q[1] == '-' && q[2] == '}')) q++;
    if (q + 2 >= e) lex_error(p, s, "unterminated '{-#' section");
    lex_advance_to(p, q + 3);
    goto again;
  }
  token_t *t = &L->tok;
  t->start = s;
  t->line = L->line;
  t->col = (int)(s - L->line_start) + 1;
  if (s >= e) {
    t->kind = TK_EOF;
    t->len = 0;
    return;
  }
  char c = *s;
  const char *q = s + 1;
  if (c == '%' || c == '^' || c == '#' || c == '!') {
    while (q < e && is_ident_char(*q)) q++;
    if (c == '%' && q + 1 < e && *q == '#' && isdigit((unsigned char)q[1])) {
      q++;
      while (q < e && isdigit((unsigned char)*q)) q++;
    }
    t->kind = c == '%' ? TK_VALUE : c == '^' ? TK_CARET : c == '#' ? TK_HASH : TK_BANG;
    if (q == s + 1) t->kind = TK_PUNCT;
  } else if (c == '@') {
    if (q < e && *q == '"') {
      q = skip_string(p, q);
    } else {
      while (q < e && is_ident_char(*q)) q++;
    }
    t->kind = TK_SYMBOL;
    if (q == s + 1) t->kind = TK_PUNCT;
  } else if (c == '"') {
    q = skip_string(p, s);
    t->kind = TK_STRING;
  } else if (isdigit((unsigned char)c) || (c == '-' && q < e && isdigit((unsigned char)*q))) {
    const char *d = c == '-' ? q : s;
    if (d + 2 < e + 0 && d[0] == '0' && (d[1] == 'x' || d[1] == 'X') && d + 2 < e &&
        isxdigit((unsigned char)d[2])) {
      q = d + 2;
      while (q < e && isxdigit((unsigned char)*q)) q++;
      t->kind = TK_INT;
    } else {
      q = d;
      bool is_float = false;
      while (q < e && isdigit((unsigned char)*q)) q++;
      if (q < e && *q == '.') {
        is_float = true;
        q++;
        while (q < e && isdigit((unsigned char)*q)) q++;
      }
      if (q < e && (*q == 'e' || *q == 'E')) {
        const char *x = q + 1;
        if (x < e && (*x == '+' || *x == '-')) x++;
        if (x < e && isdigit((unsigned char)*x)) {
          is_float = true;
          q = x;
          while (q < e && isdigit((unsigned char)*q)) q++;
        }
      }
      t->kind = is_float ? TK_FLOAT : TK_INT;
    }
  } else if (c == '-' && q < e && *q == '>') {
    q++;
    t->kind = TK_ARROW;
  } else if (is_ident_start(c)) {
    while (q < e && is_ident_char(*q)) q++;
    if (q - s == 3 && memcmp(s, "loc", 3) == 0 && q < e && *q == '(') {
      /* A location: skip the balanced parentheses. */
      int depth = 0;
      const char *r = q;
      while (r < e) {
        if (*r == '"') {
          r = skip_string(p, r);
          continue;
        }
        if (*r == '(') depth++;
        if (*r == ')' && --depth == 0) break;
        r++;
      }
      if (r >= e) lex_error(p, s, "unterminated loc(...)");
      lex_advance_to(p, r + 1);
      goto again;
    }
    t->kind = TK_IDENT;
  } else {
    t->kind = TK_PUNCT;
  }
  t->len = (size_t)(q - s);
  L->pos = q;
}

/* ------------------------------------------------------ token helpers */

static token_t *tok(parser_t *p) { return &p->lx.tok; }
static bool at_punct(parser_t *p, char c) {
  return tok(p)->kind == TK_PUNCT && tok(p)->start[0] == c;
}
static bool tok_text_is(const token_t *t, const char *s) {
  size_t n = strlen(s);
  return t->len == n && memcmp(t->start, s, n) == 0;
}
static bool at_ident(parser_t *p, const char *s) {
  return tok(p)->kind == TK_IDENT && tok_text_is(tok(p), s);
}

/* A short description of the current token for messages. */
static const char *tok_desc(parser_t *p, char *buf, size_t size) {
  token_t *t = tok(p);
  if (t->kind == TK_EOF) return "end of input";
  size_t n = t->len > 40 ? 40 : t->len;
  snprintf(buf, size, "'%.*s%s'", (int)n, t->start, t->len > 40 ? "..." : "");
  for (char *c = buf; *c; c++)
    if ((unsigned char)*c < 0x20) *c = ' ';
  return buf;
}

static void fail_expected(parser_t *p, const char *what) __attribute__((noreturn));
static void fail_expected(parser_t *p, const char *what) {
  char buf[64];
  if (tok(p)->kind == TK_EOF) fail(p, "unexpected end of input (expected %s)", what);
  fail(p, "expected %s, found %s", what, tok_desc(p, buf, sizeof buf));
}

static void expect_punct(parser_t *p, char c) {
  if (!at_punct(p, c)) {
    char what[8];
    snprintf(what, sizeof what, "'%c'", c);
    fail_expected(p, what);
  }
  lex_next(p);
}
static bool accept_punct(parser_t *p, char c) {
  if (!at_punct(p, c)) return false;
  lex_next(p);
  return true;
}
static void expect_ident(parser_t *p, const char *s) {
  if (!at_ident(p, s)) {
    char what[64];
    snprintf(what, sizeof what, "'%s'", s);
    fail_expected(p, what);
  }
  lex_next(p);
}
static bool accept_ident(parser_t *p, const char *s) {
  if (!at_ident(p, s)) return false;
  lex_next(p);
  return true;
}
static void expect_arrow(parser_t *p) {
  if (tok(p)->kind != TK_ARROW) fail_expected(p, "'->'");
  lex_next(p);
}

/* Skips a balanced bracket group starting at the current opener. */
static void skip_balanced(parser_t *p) {
  int depth = 0;
  do {
    if (tok(p)->kind == TK_EOF) fail(p, "unexpected end of input (unbalanced brackets)");
    if (tok(p)->kind == TK_PUNCT) {
      char c = tok(p)->start[0];
      if (c == '(' || c == '[' || c == '{' || c == '<') depth++;
      if (c == ')' || c == ']' || c == '}' || c == '>') depth--;
    }
    lex_next(p);
  } while (depth > 0);
}

/* --------------------------------------------------------- numbers */

static bool parse_u64_text(const char *s, size_t n, uint64_t *out) {
  uint64_t v = 0;
  if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    if (n - 2 > 16) return false;
    for (size_t i = 2; i < n; i++) {
      int d = isdigit((unsigned char)s[i]) ? s[i] - '0' : (tolower((unsigned char)s[i]) - 'a' + 10);
      v = v * 16 + (uint64_t)d;
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      uint64_t d = (uint64_t)(s[i] - '0');
      if (v > (UINT64_MAX - d) / 10) return false;
      v = v * 10 + d;
    }
  }
  *out = v;
  return true;
}

/* Reads an integer token into magnitude + sign. */
static void int_token_value(parser_t *p, bool *neg, uint64_t *mag) {
  token_t *t = tok(p);
  const char *s = t->start;
  size_t n = t->len;
  *neg = false;
  if (n && s[0] == '-') {
    *neg = true;
    s++;
    n--;
  }
  if (!parse_u64_text(s, n, mag)) fail(p, "integer literal too large");
}

static int64_t parse_int(parser_t *p) {
  if (tok(p)->kind != TK_INT) {
    if (at_ident(p, "true") || at_ident(p, "false")) {
      int64_t v = at_ident(p, "true");
      lex_next(p);
      return v;
    }
    fail_expected(p, "an integer");
  }
  bool neg;
  uint64_t mag;
  int_token_value(p, &neg, &mag);
  if ((!neg && mag > (uint64_t)INT64_MAX) || (neg && mag > (uint64_t)INT64_MAX + 1))
    fail(p, "integer literal out of range for i64");
  lex_next(p);
  return neg ? (int64_t)(0 - mag) : (int64_t)mag;
}

static double parse_float_token(parser_t *p) {
  token_t *t = tok(p);
  char buf[128];
  if (t->kind == TK_INT || t->kind == TK_FLOAT) {
    if (t->len >= sizeof buf) fail(p, "number too long");
    memcpy(buf, t->start, t->len);
    buf[t->len] = 0;
    double v = t->kind == TK_INT && t->len > 2 && (buf[1] == 'x' || buf[1] == 'X')
                   ? (double)strtoull(buf, NULL, 16)
                   : strtod(buf, NULL);
    lex_next(p);
    return v;
  }
  fail_expected(p, "a number");
}

/* ============================================================= types */

static const char *parse_quant_type(parser_t *p, const char *s, hlo_element_type_t *storage,
                                    const hlo_quant_t **out);

/* Parses an element type name at |s| (e.g. "f32", "complex<f64>", "ui8",
 * or a quantized type: then *quant is set, *out is its storage type);
 * returns the position after it. */
static const char *parse_element_type(parser_t *p, const char *s, hlo_element_type_t *out,
                                      const hlo_quant_t **quant) {
  const char *e = p->end;
  const char *q = s;
  if (quant) *quant = NULL;
  if (q < e && *q == '!') {
    if (!quant || (size_t)(e - q) < 15 || memcmp(q, "!quant.uniform<", 15) != 0)
      lex_error(p, s, "unsupported element type (quantized types other than !quant.uniform are not supported)");
    return parse_quant_type(p, s, out, quant);
  }
  while (q < e && (isalnum((unsigned char)*q) || *q == '_')) q++;
  size_t n = (size_t)(q - s);
  if (n == 7 && memcmp(s, "complex", 7) == 0 && q < e && *q == '<') {
    const char *r = q + 1;
    while (r < e && isalnum((unsigned char)*r)) r++;
    if (r >= e || *r != '>') lex_error(p, s, "malformed complex type");
    q = r + 1;
    n = (size_t)(q - s);
  }
  if (n == 0) lex_error(p, s, "expected an element type");
  if (n == 5 && memcmp(s, "index", 5) == 0) { /* shape tensors' extents (tensor<2xindex>): 64-bit */
    *out = HLO_S64;
    return q;
  }
  if (!hlo_element_type_from_name(s, n, out) || *out == HLO_TOKEN) {
    char msg[96];
    snprintf(msg, sizeof msg, "unsupported element type '%.*s'", (int)(n > 40 ? 40 : n), s);
    lex_error(p, s, msg);
  }
  return q;
}

static void parse_type(parser_t *p, hlo_shape_t *out);

/* tensor<2x3xf32>: read character by character (dimension lists do not
 * tokenize well), then resynchronize the lexer after the closing '>'. */
static void parse_tensor_type(parser_t *p, hlo_shape_t *out) {
  const char *s = tok(p)->start + tok(p)->len; /* after "tensor" */
  const char *e = p->end;
  if (s >= e || *s != '<') fail(p, "expected '<' after 'tensor'");
  s++;
  int64_t dims[HLO_MAX_RANK];
  int rank = 0;
  int64_t count = 1;
  for (;;) {
    while (s < e && *s == ' ') s++;
    if (s < e && *s == '*') lex_error(p, s, "unranked tensors are not supported");
    if (s < e && *s == '?') { /* a dynamic dimension (refined later) */
      if (++s >= e || *s != 'x') lex_error(p, s, "expected 'x' after a dimension");
      s++;
      if (rank == HLO_MAX_RANK) lex_error(p, s, "tensor rank exceeds 16");
      dims[rank++] = HLO_DYNAMIC_DIM;
      continue;
    }
    if (s < e && isdigit((unsigned char)*s)) {
      const char *d = s;
      uint64_t v = 0;
      while (s < e && isdigit((unsigned char)*s)) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > ((uint64_t)1 << 40)) lex_error(p, d, "dimension too large");
        s++;
      }
      if (s >= e || *s != 'x') lex_error(p, s, "expected 'x' after a dimension");
      s++;
      if (rank == HLO_MAX_RANK) lex_error(p, d, "tensor rank exceeds 16");
      dims[rank++] = (int64_t)v;
      if (v && count > ((int64_t)1 << 48) / (int64_t)v) lex_error(p, d, "tensor too large");
      count *= (int64_t)v;
      continue;
    }
    break;
  }
  hlo_element_type_t et;
  const hlo_quant_t *quant;
  const char *at = s;
  s = parse_element_type(p, s, &et, &quant);
  while (s < e && *s == ' ') s++;
  p->bounds_rank = 0;
  if (s < e && *s == ',') { /* the bounds of dynamic dimensions (parameters are checked against them) */
    const char *enc = s + 1;
    while (enc < e && *enc == ' ') enc++;
    static const char *const bounds[] = {"#stablehlo.bounds<", "#stablehlo.type_extensions<",
                                         "#mhlo.type_extensions<"};
    size_t skip = 0;
    for (int i = 0; i < 3; i++)
      if ((size_t)(e - enc) > strlen(bounds[i]) && !memcmp(enc, bounds[i], strlen(bounds[i]))) skip = strlen(bounds[i]);
    if (!skip) lex_error(p, s, "tensor encodings other than bounds are not supported");
    s = enc + skip;
    int n = 0;
    for (int depth = 1; depth > 0; s++) {
      if (s >= e) lex_error(p, enc, "unterminated tensor encoding");
      depth += *s == '<' ? 1 : *s == '>' ? -1 : 0;
      if (*s == '?' || isdigit((unsigned char)*s)) { /* the bounds, one per dimension, in order */
        int64_t b = -1;
        if (*s != '?') {
          for (b = 0; s < e && isdigit((unsigned char)*s); s++)
            if (b < ((int64_t)1 << 40)) b = b * 10 + (*s - '0');
          s--; /* the loop's s++ */
        }
        if (n < HLO_MAX_RANK) p->bounds[n] = b;
        n++;
      }
    }
    if (n != rank) lex_error(p, enc, "the bounds do not have one entry per dimension");
    p->bounds_rank = rank;
    while (s < e && *s == ' ') s++;
  }
  if (s >= e || *s != '>') lex_error(p, s, "expected '>' to close the tensor type");
  s++;
  if (quant && quant->axis >= 0 && (quant->axis >= rank || dims[quant->axis] != quant->count))
    lex_error(p, at, "the quantization dimension and the number of scales do not fit the tensor's shape");
  hlo_shape_init(out, et, rank, dims);
  out->quant = quant;
  lex_advance_to(p, s);
  lex_next(p);
}

static void parse_type(parser_t *p, hlo_shape_t *out) {
  enter(p);
  token_t *t = tok(p);
  if (t->kind == TK_IDENT && tok_text_is(t, "tensor")) {
    parse_tensor_type(p, out);
  } else if (t->kind == TK_BANG && tok_text_is(t, "!stablehlo.token")) {
    hlo_shape_init(out, HLO_TOKEN, 0, NULL);
    lex_next(p);
  } else if (t->kind == TK_BANG && t->len > 6 && memcmp(t->start, "!quant", 6) == 0) {
    fail(p, "unsupported element type (quantized types are not supported)");
  } else if ((t->kind == TK_IDENT && tok_text_is(t, "tuple")) ||
             (t->kind == TK_BANG && tok_text_is(t, "!stablehlo.future"))) {
    /* a future (async_start's result) is its values: one, or a tuple */
    bool future = t->kind == TK_BANG;
    lex_next(p);
    expect_punct(p, '<');
    hlo_shape_t *elems = NULL;
    int n = 0, cap = 0;
    if (!at_punct(p, '>')) {
      do {
        t_grow(p, (void **)&elems, &cap, n + 1, sizeof *elems);
        parse_type(p, &elems[n++]);
      } while (accept_punct(p, ','));
    }
    expect_punct(p, '>');
    if (future && n == 1) *out = elems[0];
    else if (!hlo_shape_make_tuple(p->m, out, n, elems)) out_of_memory(p);
  } else if (t->kind == TK_IDENT && (tok_text_is(t, "memref") || tok_text_is(t, "vector"))) {
    fail(p, "unsupported type '%.*s'", (int)t->len, t->start);
  } else {
    fail_expected(p, "a type");
  }
  leave(p);
}

/* !quant.uniform<STORAGE[<MIN:MAX>]:EXPRESSED[:AXIS], SCALE[:ZERO_POINT]>,
 * or with {SCALE[:ZERO_POINT], ...} per index along AXIS (spec "Quantized
 * element types"; STORAGE i4..i32 or u4..u32, EXPRESSED a float type).
 * Character-level, like the rest of a tensor type. */
static const char *parse_quant_type(parser_t *p, const char *s, hlo_element_type_t *storage,
                                    const hlo_quant_t **out) {
  const char *e = p->end, *q = s + 15; /* after "!quant.uniform<" */
  hlo_quant_t *qt = arena_alloc(&p->tmp, sizeof *qt);
  if (!qt) out_of_memory(p);
  memset(qt, 0, sizeof *qt);
  /* the storage type: i8, u8 (MLIR's unsigned spelling), ui8 */
  const char *t = q;
  while (q < e && isalnum((unsigned char)*q)) q++;
  char name[16];
  size_t n = (size_t)(q - t);
  if (n == 0 || n + 1 >= sizeof name) lex_error(p, t, "expected the storage type of a quantized type");
  if (*t == 'u' && n > 1 && t[1] != 'i') snprintf(name, sizeof name, "ui%.*s", (int)(n - 1), t + 1);
  else snprintf(name, sizeof name, "%.*s", (int)n, t);
  if (!hlo_element_type_from_name(name, strlen(name), &qt->storage) || !hlo_element_type_is_integer(qt->storage) ||
      hlo_element_type_bit_width(qt->storage) > 32)
    lex_error(p, t, "unsupported storage type of a quantized type (i2..i32 or u2..u32)");
  int bits = hlo_element_type_bit_width(qt->storage);
  bool is_signed = hlo_element_type_is_signed_int(qt->storage);
  qt->storage_min = is_signed ? -((int64_t)1 << (bits - 1)) : 0;
  qt->storage_max = is_signed ? ((int64_t)1 << (bits - 1)) - 1 : ((int64_t)1 << bits) - 1;
  char num[64];
#define QNUM(dst, conv)                                                             \
  do {                                                                             \
    while (q < e && *q == ' ') q++;                                                \
    const char *b = q;                                                             \
    while (q < e && (isalnum((unsigned char)*q) || *q == '.' || *q == '-' || *q == '+')) q++; \
    if (q == b || (size_t)(q - b) >= sizeof num) lex_error(p, b, "expected a number in a quantized type"); \
    memcpy(num, b, (size_t)(q - b));                                               \
    num[q - b] = 0;                                                                \
    char *stop;                                                                    \
    dst = conv(num, &stop);                                                        \
    if (*stop) lex_error(p, b, "malformed number in a quantized type");            \
  } while (0)
#define STRTOLL(a, b) strtoll(a, b, 10)
  if (q < e && *q == '<') { /* <min:max> */
    q++;
    QNUM(qt->storage_min, STRTOLL);
    if (q >= e || *q != ':') lex_error(p, q, "expected ':' in a quantized type's storage range");
    q++;
    QNUM(qt->storage_max, STRTOLL);
    if (q >= e || *q != '>') lex_error(p, q, "expected '>' after a quantized type's storage range");
    q++;
  }
  if (q >= e || *q != ':') lex_error(p, q, "expected ':' after a quantized type's storage type");
  q++;
  t = q;
  while (q < e && isalnum((unsigned char)*q)) q++;
  if (!hlo_element_type_from_name(t, (size_t)(q - t), &qt->expressed) || !hlo_element_type_is_float(qt->expressed))
    lex_error(p, t, "the expressed type of a quantized type must be a float type");
  qt->axis = -1;
  if (q < e && *q == ':') {
    q++;
    int64_t axis;
    QNUM(axis, STRTOLL);
    if (axis < 0 || axis >= HLO_MAX_RANK) lex_error(p, q, "bad quantization dimension");
    qt->axis = (int)axis;
  }
  while (q < e && *q == ' ') q++;
  if (q >= e || *q != ',') lex_error(p, q, "expected ',' before a quantized type's scale");
  q++;
  while (q < e && *q == ' ') q++;
  bool list = q < e && *q == '{';
  if (list != (qt->axis >= 0)) lex_error(p, q, "per-axis quantized types take {scale:zero_point, ...}, per-tensor ones one scale");
  if (list) q++;
  double *scales = NULL;
  int64_t *zps = NULL;
  int cap = 0, zcap = 0;
  for (;;) {
    t_grow(p, (void **)&scales, &cap, qt->count + 1, sizeof *scales);
    t_grow(p, (void **)&zps, &zcap, qt->count + 1, sizeof *zps);
    while (q < e && *q == ' ') q++;
    const char *at = q;
    QNUM(scales[qt->count], strtod);
    zps[qt->count] = 0;
    if (q < e && *q == ':') {
      q++;
      QNUM(zps[qt->count], STRTOLL);
    }
    if (!(scales[qt->count] > 0) || zps[qt->count] < qt->storage_min || zps[qt->count] > qt->storage_max)
      lex_error(p, at, "a quantized type's scale must be positive and its zero point within the storage range");
    qt->count++;
    while (q < e && *q == ' ') q++;
    if (!list || q >= e || *q != ',') break;
    q++;
  }
#undef QNUM
#undef STRTOLL
  if (list) {
    while (q < e && *q == ' ') q++;
    if (q >= e || *q != '}') lex_error(p, q, "expected '}' after a quantized type's scales");
    q++;
  }
  while (q < e && *q == ' ') q++;
  if (q >= e || *q != '>') lex_error(p, q, "expected '>' to close a quantized type");
  qt->scales = scales;
  qt->zero_points = zps;
  *storage = qt->storage;
  *out = qt;
  return q + 1;
}

/* ========================================================== literals */

typedef struct literal_ref {
  bool present;
  bool is_resource;
  lexer_t at; /* first token inside dense< */
  hlo_location_t loc;
  const char *resource_name;
  size_t resource_len;
} literal_ref_t;

/* At `dense<` or `dense_resource<`: remembers where the elements start and
 * skips to after the closing '>'.  The elements are read by
 * build_literal once the type (which follows) is known. */
static void scan_literal(parser_t *p, literal_ref_t *ref) {
  memset(ref, 0, sizeof *ref);
  ref->loc = tok_loc(p);
  ref->present = true;
  ref->is_resource = at_ident(p, "dense_resource");
  lex_next(p);
  expect_punct(p, '<');
  ref->at = p->lx;
  if (ref->is_resource) {
    if (tok(p)->kind != TK_IDENT) fail_expected(p, "a resource name");
    ref->resource_name = tok(p)->start;
    ref->resource_len = tok(p)->len;
    lex_next(p);
    expect_punct(p, '>');
    return;
  }
  int depth = 0;
  for (;;) {
    if (tok(p)->kind == TK_EOF) fail(p, "unexpected end of input in dense literal");
    if (tok(p)->kind == TK_PUNCT) {
      char c = tok(p)->start[0];
      if (c == '[' || c == '(') depth++;
      if (c == ']' || c == ')') depth--;
      if (c == '>' && depth <= 0) break;
      if (c == '<') fail(p, "unexpected '<' in dense literal");
    }
    lex_next(p);
  }
  lex_next(p);
}

static void store_le(void *dst, size_t size, uint64_t bits) {
  uint8_t *d = dst;
  for (size_t i = 0; i < size; i++) d[i] = (uint8_t)(bits >> (8 * i));
}

/* Stores an integer literal into an element of type |et|, checking range
 * the way MLIR does for signless integers: any value that fits in the
 * bit width either signed or unsigned. */
static void store_int(parser_t *p, hlo_element_type_t et, void *dst, bool neg, uint64_t mag,
                      hlo_location_t loc) {
  int bits = hlo_element_type_bit_width(et);
  size_t size = hlo_element_type_size_bytes(et);
  if (et == HLO_PRED) {
    if (neg || mag > 1) fail_at(p, loc, "integer literal out of range for i1");
    if (dst) *(uint8_t *)dst = (uint8_t)mag;
    return;
  }
  bool is_unsigned = hlo_element_type_is_unsigned_int(et);
  uint64_t limit = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
  if (neg) {
    if (is_unsigned) fail_at(p, loc, "negative literal for unsigned type %s", hlo_element_type_name(et));
    if (mag > ((uint64_t)1 << (bits - 1)))
      fail_at(p, loc, "integer literal out of range for %s", hlo_element_type_name(et));
  } else if (mag > limit) {
    fail_at(p, loc, "integer literal out of range for %s", hlo_element_type_name(et));
  }
  uint64_t v = neg ? (uint64_t)0 - mag : mag;
  if (bits < 64) v &= limit;
  if (!is_unsigned && bits < 64 && (v >> (bits - 1)) & 1) v |= ~limit; /* sign-extend */
  if (dst) store_le(dst, size, v);
}

/* One floating-point component: decimal, hex bit pattern, inf/nan. */
static void parse_float_elem(parser_t *p, hlo_element_type_t ft, void *dst) {
  token_t *t = tok(p);
  size_t size = hlo_element_type_size_bytes(ft);
  uint64_t bits = 0;
  if (t->kind == TK_INT && t->len > 2 && t->start[0] == '0' && (t->start[1] == 'x' || t->start[1] == 'X')) {
    uint64_t v;
    if (!parse_u64_text(t->start, t->len, &v)) fail(p, "hex literal too large");
    int width = hlo_element_type_bit_width(ft);
    if (width < 64 && (v >> width) != 0)
      fail(p, "hex literal does not fit in %s", hlo_element_type_name(ft));
    bits = v;
    lex_next(p);
  } else if (t->kind == TK_INT || t->kind == TK_FLOAT) {
    double v = parse_float_token(p);
    hlo_float_encode(ft, v, &bits);
  } else {
    bool neg = false;
    if (at_punct(p, '-')) {
      neg = true;
      lex_next(p);
    } else if (at_punct(p, '+')) {
      lex_next(p);
    }
    double v;
    if (at_ident(p, "inf")) v = INFINITY;
    else if (at_ident(p, "nan")) v = NAN;
    else fail_expected(p, "a floating-point literal");
    lex_next(p);
    hlo_float_encode(ft, neg ? -v : v, &bits);
  }
  if (dst) store_le(dst, size, bits);
}

static void parse_scalar_elem(parser_t *p, hlo_element_type_t et, void *dst) {
  token_t *t = tok(p);
  hlo_location_t loc = tok_loc(p);
  if (hlo_element_type_is_complex(et)) {
    hlo_element_type_t part = hlo_element_type_real(et);
    size_t half = hlo_element_type_size_bytes(part);
    expect_punct(p, '(');
    parse_float_elem(p, part, dst);
    expect_punct(p, ',');
    parse_float_elem(p, part, dst ? (uint8_t *)dst + half : NULL);
    expect_punct(p, ')');
    return;
  }
  if (hlo_element_type_is_float(et)) {
    parse_float_elem(p, et, dst);
    return;
  }
  if (at_ident(p, "true") || at_ident(p, "false")) {
    store_int(p, et, dst, false, at_ident(p, "true") ? 1 : 0, loc);
    lex_next(p);
    return;
  }
  if (t->kind != TK_INT) fail_expected(p, "an integer literal");
  bool neg;
  uint64_t mag;
  int_token_value(p, &neg, &mag);
  store_int(p, et, dst, neg, mag, loc);
  lex_next(p);
}

typedef struct elem_walk {
  hlo_element_type_t et;
  size_t esize;
  uint8_t *data;
  int64_t total, count;
  const hlo_shape_t *shape;
  bool shape_mismatch;
  int leaf_depth; /* -1 until the first leaf */
} elem_walk_t;

static void parse_elem_tree(parser_t *p, elem_walk_t *w, int depth) {
  enter(p);
  if (at_punct(p, '[')) {
    lex_next(p);
    int64_t n = 0;
    if (!at_punct(p, ']')) {
      do {
        parse_elem_tree(p, w, depth + 1);
        n++;
      } while (accept_punct(p, ','));
    }
    expect_punct(p, ']');
    if (depth >= w->shape->rank || n != w->shape->dimensions[depth]) w->shape_mismatch = true;
  } else {
    if (w->leaf_depth < 0) w->leaf_depth = depth;
    if (depth != w->leaf_depth || (depth != 0 && depth != w->shape->rank)) w->shape_mismatch = true;
    void *dst = w->count < w->total ? w->data + (size_t)w->count * w->esize : NULL;
    parse_scalar_elem(p, w->et, dst);
    w->count++;
  }
  leave(p);
}

static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = (char)tolower((unsigned char)c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

static void fill_elided(parser_t *p, const hlo_shape_t *shape, void *data) {
  if (p->opts->fill_elided == 2) {
    hlo_fill_random(shape->element_type, data, hlo_shape_element_count(shape), &p->rng_state);
  } /* zeros: the arena already zeroed the memory */
}

/* Reads the literal remembered by |ref| as a value of |shape|. */
static hlo_literal_t *build_literal(parser_t *p, const literal_ref_t *ref, const hlo_shape_t *shape) {
  char tbuf[256];
  hlo_shape_to_string(shape, tbuf, sizeof tbuf);
  if (shape->element_type == HLO_TUPLE || shape->element_type == HLO_TOKEN)
    fail_at(p, ref->loc, "a dense literal needs a tensor type, not %s", tbuf);
  if (hlo_shape_is_dynamic(shape)) fail_at(p, ref->loc, "a dense literal needs a static type, not %s", tbuf);
  hlo_literal_t *lit = m_alloc(p, sizeof *lit);
  lit->shape = *shape;
  size_t esize = hlo_element_type_size_bytes(shape->element_type);
  int64_t total = hlo_shape_element_count(shape);
  lit->size_bytes = (size_t)total * esize;
  lit->data = arena_alloc(&p->m->arena, lit->size_bytes ? lit->size_bytes : 1);
  if (!lit->data) /* the one allocation an input sizes: say where */
    fail_code_at(p, VKHLO_STATUS_RESOURCE_EXHAUSTED, ref->loc, "out of host memory for the %zu bytes of a %s constant",
                 lit->size_bytes, tbuf);

  if (ref->is_resource) {
    if (ref->resource_len == 10 && memcmp(ref->resource_name, "__elided__", 10) == 0) {
      if (p->opts->fill_elided != 1 && p->opts->fill_elided != 2)
        fail_at(p, ref->loc,
                "elided constant (dense_resource<__elided__>): pass --fill-elided=zeros|random");
      fill_elided(p, shape, lit->data);
      return lit;
    }
    fail_at(p, ref->loc, "dense_resource<%.*s> blobs are not supported",
            (int)(ref->resource_len > 64 ? 64 : ref->resource_len), ref->resource_name);
  }

  lexer_t saved = p->lx;
  p->lx = ref->at;
  if (tok(p)->kind == TK_STRING) {
    /* "0x..." raw little-endian bytes in host representation. */
    const char *s = tok(p)->start + 1;
    size_t n = tok(p)->len - 2;
    if (n < 2 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') || (n - 2) % 2)
      fail(p, "expected a hex string \"0x...\" in dense literal");
    size_t nbytes = (n - 2) / 2;
    s += 2;
    uint8_t *dst;
    bool splat = nbytes == esize && nbytes != lit->size_bytes;
    if (nbytes != lit->size_bytes && !splat)
      fail(p, "hex literal has %zu bytes but %s needs %zu", nbytes, tbuf, lit->size_bytes);
    dst = lit->data;
    for (size_t i = 0; i < nbytes; i++) {
      int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);
      if (hi < 0 || lo < 0) fail(p, "invalid hex digit in dense literal");
      dst[i] = (uint8_t)(hi * 16 + lo);
    }
    if (splat)
      for (int64_t i = 1; i < total; i++) memcpy(dst + (size_t)i * esize, dst, esize);
    lex_next(p);
  } else if (at_punct(p, '>')) {
    if (total != 0) fail(p, "literal has 0 elements but %s needs %" PRId64, tbuf, total);
  } else {
    elem_walk_t w = {shape->element_type, esize, lit->data, total, 0, shape, false, -1};
    hlo_location_t start = ref->loc;
    parse_elem_tree(p, &w, 0);
    if (w.count == 1 && w.leaf_depth == 0) {
      for (int64_t i = 1; i < total; i++) memcpy(lit->data + 0 + (size_t)i * esize, lit->data, esize);
    } else if (w.count != total) {
      fail_at(p, start, "literal has %" PRId64 " elements but %s needs %" PRId64, w.count, tbuf, total);
    } else if (w.shape_mismatch) {
      fail_at(p, start, "literal nesting does not match %s", tbuf);
    }
  }
  if (!at_punct(p, '>')) fail_expected(p, "'>' to close the dense literal");
  p->lx = saved;
  return lit;
}

/* `dense<...> : tensor<...>` where the type follows immediately. */
static hlo_literal_t *parse_typed_literal(parser_t *p) {
  literal_ref_t ref;
  scan_literal(p, &ref);
  expect_punct(p, ':');
  hlo_shape_t shape;
  parse_type(p, &shape);
  return build_literal(p, &ref, &shape);
}

/* ====================================================== attributes */

typedef struct i64vec {
  int64_t *data;
  int count, cap;
} i64vec_t;

static void vec_push(parser_t *p, i64vec_t *v, int64_t x) {
  t_grow(p, (void **)&v->data, &v->cap, v->count + 1, sizeof(int64_t));
  v->data[v->count++] = x;
}

static hlo_dims_t vec_to_dims(parser_t *p, const i64vec_t *v) {
  hlo_dims_t d = {NULL, 0};
  if (!v->count) {
    d.data = m_alloc(p, sizeof(int64_t)); /* non-NULL: "present but empty" */
    return d;
  }
  d = hlo_dims_make(p->m, v->data, v->count);
  if (!d.data) out_of_memory(p);
  return d;
}

/* [1, 2], [[0, 1], [2, 3]] (flattened; *cols = inner length). */
static void parse_int_list(parser_t *p, i64vec_t *v, int64_t *cols, int depth) {
  enter(p);
  expect_punct(p, '[');
  int64_t n = 0;
  if (!at_punct(p, ']')) {
    do {
      if (at_punct(p, '[')) {
        int before = v->count;
        parse_int_list(p, v, cols, depth + 1);
        if (cols) *cols = v->count - before;
      } else {
        vec_push(p, v, parse_int(p));
      }
      n++;
    } while (accept_punct(p, ','));
  }
  expect_punct(p, ']');
  leave(p);
}

static void skip_type_suffix(parser_t *p, bool allow_suffix) {
  if (allow_suffix && at_punct(p, ':')) {
    lex_next(p);
    if (at_ident(p, "tensor") || tok(p)->kind == TK_BANG || at_ident(p, "tuple")) {
      hlo_shape_t s;
      parse_type(p, &s);
    } else {
      lex_next(p); /* i64, f32, index ... */
    }
  }
}

/* An integer array in any of its spellings:
 *   [1, 2]   array<i64: 1, 2>   array<i64>   dense<[1, 2]> : tensor<2xi64>
 *   array<i1: true, false>   [true, false]   [[0, 1], [2, 3]] */
static void parse_dims_value(parser_t *p, i64vec_t *v, int64_t *cols, bool allow_suffix) {
  if (cols) *cols = 0;
  if (at_punct(p, '[')) {
    parse_int_list(p, v, cols, 0);
  } else if (at_ident(p, "array")) {
    lex_next(p);
    expect_punct(p, '<');
    if (tok(p)->kind != TK_IDENT) fail_expected(p, "an element type");
    lex_next(p);
    if (accept_punct(p, ':')) {
      do vec_push(p, v, parse_int(p));
      while (accept_punct(p, ','));
    }
    expect_punct(p, '>');
  } else if (at_ident(p, "dense")) {
    hlo_literal_t *lit = parse_typed_literal(p);
    hlo_element_type_t et = lit->shape.element_type;
    if (!hlo_element_type_is_integer(et) && et != HLO_PRED) fail(p, "expected an integer array");
    size_t es = hlo_element_type_size_bytes(et);
    int64_t n = hlo_shape_element_count(&lit->shape);
    for (int64_t i = 0; i < n; i++) {
      const uint8_t *src = (const uint8_t *)lit->data + (size_t)i * es;
      int64_t x = 0;
      switch (es) {
        case 1: x = hlo_element_type_is_unsigned_int(et) || et == HLO_PRED ? *src : (int8_t)*src; break;
        case 2: { int16_t y; memcpy(&y, src, 2); x = y; break; }
        case 4: { int32_t y; memcpy(&y, src, 4); x = y; break; }
        default: memcpy(&x, src, 8); break;
      }
      vec_push(p, v, x);
    }
    if (cols && lit->shape.rank == 2) *cols = lit->shape.dimensions[1];
    return; /* the type was the literal's own */
  } else if (tok(p)->kind == TK_INT) {
    vec_push(p, v, parse_int(p));
  } else {
    fail_expected(p, "an integer array");
  }
  skip_type_suffix(p, allow_suffix);
}

static void skip_value(parser_t *p, bool allow_suffix);

static void skip_value_inner(parser_t *p) {
  enter(p);
  token_t *t = tok(p);
  if (t->kind == TK_PUNCT && strchr("([{<", t->start[0])) {
    skip_balanced(p);
  } else if (t->kind == TK_EOF) {
    fail(p, "unexpected end of input (expected an attribute value)");
  } else {
    bool may_have_params = t->kind == TK_IDENT || t->kind == TK_HASH || t->kind == TK_BANG;
    lex_next(p);
    if (may_have_params && at_punct(p, '<')) skip_balanced(p);
  }
  if (tok(p)->kind == TK_ARROW) { /* a function type used as a value */
    lex_next(p);
    skip_value_inner(p);
  }
  leave(p);
}

static void skip_value(parser_t *p, bool allow_suffix) {
  skip_value_inner(p);
  skip_type_suffix(p, allow_suffix);
}

/* ------------------------------------------------------------ raw op */

typedef struct region {
  hlo_computation_t *comp;
  int normal_params;
  capture_t *captures;
  int capture_count;
} region_t;

/* @name references of an attribute, in order. */
typedef struct symbol_list {
  const char **names;
  size_t *lens;
  int count, cap, lens_cap;
} symbol_list_t;

typedef struct raw_op {
  const char *name; /* full op name, NUL-terminated scratch copy */
  hlo_location_t loc;
  hlo_instruction_t **operands;
  int operand_count, operand_cap;
  hlo_attrs_t attrs;
  bool has_compare_direction;
  hlo_literal_t *literal;
  literal_ref_t pending; /* a dense<...> whose type comes after ':' */
  region_t *regions;
  int region_count, region_cap;
  hlo_shape_t *in_types, *out_types;
  int in_count, in_cap, out_count, out_cap;
  bool has_types, has_arrow, parenthesized_inputs;
  const char *symbol; /* @callee / custom_call target */
  size_t symbol_len;
  const char *called; /* custom_call's called_computations = [@first, ...] */
  size_t called_len;
  const char *composite_name;
  int applies_opcode; /* reduce ... applies stablehlo.add; -1 if none */
  const char *probe_id; /* interpreter.probe, check.expect_serialized_eq */
  bool has_probe_iter;
  symbol_list_t programs; /* interpreter.run_parallel: rows x cols functions */
  int program_rows, program_cols;
  symbol_list_t infeed; /* interpreter.run_parallel's infeed functions */
  bool smallest; /* custom_call @mhlo.topk {mhlo.attributes = {largest = false}} */
  bool has_dimension; /* a `dimension` attribute was written (sort's default is -1) */
  hlo_dims_t shape_operands; /* a custom_call's indices_of_shape_operands */
  bool has_scalar_value; /* value = 1.0 : f32 (chlo.constant_like) */
  lexer_t scalar_value; /* at the value's first token */
} raw_op_t;

static void raw_push_operand(parser_t *p, raw_op_t *r, hlo_instruction_t *v) {
  t_grow(p, (void **)&r->operands, &r->operand_cap, r->operand_count + 1, sizeof(void *));
  r->operands[r->operand_count++] = v;
}


static const char *decode_string(parser_t *p) {
  token_t *t = tok(p);
  if (t->kind != TK_STRING) fail_expected(p, "a string");
  char *out = m_alloc(p, t->len);
  size_t n = 0;
  for (size_t i = 1; i + 1 < t->len; i++) {
    char c = t->start[i];
    if (c == '\\' && i + 2 < t->len) {
      char d = t->start[++i];
      if (d == 'n') c = '\n';
      else if (d == 't') c = '\t';
      else if (hex_digit(d) >= 0 && i + 2 < t->len && hex_digit(t->start[i + 1]) >= 0) {
        c = (char)(hex_digit(d) * 16 + hex_digit(t->start[i + 1]));
        i++;
      } else c = d;
    }
    out[n++] = c;
  }
  out[n] = 0;
  lex_next(p);
  return out;
}

/* Enumerations: `#stablehlo<comparison_direction LT>` or a bare `LT`. */
static int parse_enum(parser_t *p, const char *const *names, int count, const char *what) {
  bool wrapped = false;
  if (tok(p)->kind == TK_HASH) {
    lex_next(p);
    expect_punct(p, '<');
    if (tok(p)->kind != TK_IDENT) fail_expected(p, what);
    lex_next(p); /* the enum's name, e.g. comparison_direction */
    wrapped = true;
  }
  if (tok(p)->kind != TK_IDENT) fail_expected(p, what);
  for (int i = 0; i < count; i++) {
    if (tok_text_is(tok(p), names[i])) {
      lex_next(p);
      if (wrapped) expect_punct(p, '>');
      return i;
    }
  }
  char buf[64];
  fail(p, "unknown %s %s", what, tok_desc(p, buf, sizeof buf));
}

static const char *const cmp_dir_names[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
static const char *const cmp_type_names[] = {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
static const char *const transpose_names[] = {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
static const char *const fft_names[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
static const char *const rng_alg_names[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
static const char *const rng_dist_names[] = {"UNIFORM", "NORMAL"};
#define COUNT(a) ((int)(sizeof(a) / sizeof(a)[0]))

typedef enum {
  A_DIMS, A_I64, A_INT, A_BOOL, A_FLOAT, A_CMPDIR, A_CMPTYPE, A_TRANSPOSE, A_FFT, A_RNG_ALG,
  A_RNG_DIST, A_STRING, A_SYMBOL, A_SYMBOLS, A_STRUCT, A_VALUE, A_REPLICA, A_SKIP,
  A_PROGRAMS, A_INFEED /* interpreter.run_parallel's [[@f, ...], ...] and [@f, ...] */
} attr_kind_t;

typedef struct attr_spec {
  const char *name;
  attr_kind_t kind;
  size_t offset;
} attr_spec_t;

#define F(field) offsetof(hlo_attrs_t, field)
static const attr_spec_t attr_specs[] = {
    {"broadcast_dimensions", A_DIMS, F(broadcast_dimensions)},
    {"permutation", A_DIMS, F(permutation)},
    {"dimensions", A_DIMS, F(dimensions)},
    {"broadcast_sizes", A_DIMS, F(dimensions)},
    {"start_indices", A_DIMS, F(start_indices)},
    {"limit_indices", A_DIMS, F(limit_indices)},
    {"strides", A_DIMS, F(strides)},
    {"edge_padding_low", A_DIMS, F(edge_padding_low)},
    {"edge_padding_high", A_DIMS, F(edge_padding_high)},
    {"interior_padding", A_DIMS, F(interior_padding)},
    {"slice_sizes", A_DIMS, F(slice_sizes)},
    {"offset_dims", A_DIMS, F(offset_dims)},
    {"collapsed_slice_dims", A_DIMS, F(collapsed_slice_dims)},
    {"operand_batching_dims", A_DIMS, F(operand_batching_dims)},
    {"start_indices_batching_dims", A_DIMS, F(start_indices_batching_dims)},
    {"start_index_map", A_DIMS, F(start_index_map)},
    {"update_window_dims", A_DIMS, F(update_window_dims)},
    {"inserted_window_dims", A_DIMS, F(inserted_window_dims)},
    {"input_batching_dims", A_DIMS, F(input_batching_dims)},
    {"scatter_indices_batching_dims", A_DIMS, F(scatter_indices_batching_dims)},
    {"scatter_dims_to_operand_dims", A_DIMS, F(scatter_dims_to_operand_dims)},
    {"lhs_batching_dimensions", A_DIMS, F(lhs_batching_dimensions)},
    {"rhs_batching_dimensions", A_DIMS, F(rhs_batching_dimensions)},
    {"lhs_contracting_dimensions", A_DIMS, F(lhs_contracting_dimensions)},
    {"rhs_contracting_dimensions", A_DIMS, F(rhs_contracting_dimensions)},
    {"lhs_ragged_dimensions", A_DIMS, F(lhs_ragged_dimensions)},
    {"rhs_group_dimensions", A_DIMS, F(rhs_group_dimensions)},
    {"window_strides", A_DIMS, F(window_strides)},
    {"padding", A_DIMS, F(padding)},
    {"lhs_dilation", A_DIMS, F(lhs_dilation)},
    {"rhs_dilation", A_DIMS, F(rhs_dilation)},
    {"window_reversal", A_DIMS, F(window_reversal)},
    {"input_spatial_dimensions", A_DIMS, F(input_spatial_dimensions)},
    {"kernel_spatial_dimensions", A_DIMS, F(kernel_spatial_dimensions)},
    {"output_spatial_dimensions", A_DIMS, F(output_spatial_dimensions)},
    {"window_dimensions", A_DIMS, F(window_dimensions)},
    {"base_dilations", A_DIMS, F(base_dilations)},
    {"window_dilations", A_DIMS, F(window_dilations)},
    {"fft_length", A_DIMS, F(fft_length)},
    {"source_target_pairs", A_DIMS, F(source_target_pairs)},
    {"dimension", A_I64, F(dimension)},
    {"iota_dimension", A_I64, F(dimension)},
    {"all_gather_dim", A_I64, F(dimension)},
    {"scatter_dimension", A_I64, F(dimension)},
    {"index", A_I64, F(index)},
    {"index_vector_dim", A_I64, F(index_vector_dim)},
    {"input_batch_dimension", A_I64, F(input_batch_dimension)},
    {"input_feature_dimension", A_I64, F(input_feature_dimension)},
    {"kernel_input_feature_dimension", A_I64, F(kernel_input_feature_dimension)},
    {"kernel_output_feature_dimension", A_I64, F(kernel_output_feature_dimension)},
    {"output_batch_dimension", A_I64, F(output_batch_dimension)},
    {"output_feature_dimension", A_I64, F(output_feature_dimension)},
    {"feature_group_count", A_I64, F(feature_group_count)},
    {"batch_group_count", A_I64, F(batch_group_count)},
    {"feature_index", A_I64, F(feature_index)},
    {"k", A_I64, F(k)},
    {"max_ulp_difference", A_I64, F(max_ulp_difference)},
    {"min_ulp_difference", A_I64, F(min_ulp_difference)},
    {"split_dimension", A_I64, F(split_dimension)},
    {"concat_dimension", A_I64, F(concat_dimension)},
    {"split_count", A_I64, F(split_count)},
    {"handle", A_I64, F(channel_id)},
    {"exponent_bits", A_INT, F(exponent_bits)},
    {"mantissa_bits", A_INT, F(mantissa_bits)},
    {"indices_are_sorted", A_BOOL, F(indices_are_sorted)},
    {"unique_indices", A_BOOL, F(unique_indices)},
    {"is_stable", A_BOOL, F(is_stable)},
    {"is_reverse", A_BOOL, F(is_reverse)},
    {"has_side_effect", A_BOOL, F(has_side_effect)},
    {"use_global_device_ids", A_BOOL, F(use_global_device_ids)},
    {"has_dynamic_root", A_BOOL, F(has_dynamic_root)},
    {"left_side", A_BOOL, F(left_side)},
    {"lower", A_BOOL, F(lower)},
    {"unit_diagonal", A_BOOL, F(unit_diagonal)},
    {"tolerance", A_FLOAT, F(tolerance)},
    {"epsilon", A_FLOAT, F(epsilon)},
    {"comparison_direction", A_CMPDIR, F(comparison_direction)},
    {"compare_type", A_CMPTYPE, F(compare_type)},
    {"transpose_a", A_TRANSPOSE, F(transpose_a)},
    {"fft_type", A_FFT, F(fft_type)},
    {"rng_algorithm", A_RNG_ALG, F(rng_algorithm)},
    {"rng_distribution", A_RNG_DIST, F(rng_distribution)},
    {"call_target_name", A_STRING, F(call_target_name)},
    {"backend_config", A_STRING, F(backend_config)},
    {"error_message", A_STRING, F(error_message)},
    {"mhlo.backend_config", A_STRING, F(backend_config)}, /* JAX's typed-FFI custom calls: a dictionary */
    {"infeed_config", A_STRING, F(backend_config)},
    {"outfeed_config", A_STRING, F(backend_config)},
    {"name", A_STRING, F(call_target_name)},
    {"callee", A_SYMBOL, 0},
    {"decomposition", A_SYMBOL, 0},
    {"called_computations", A_SYMBOLS, 0},
    {"dimension_numbers", A_STRUCT, 0},
    {"scatter_dimension_numbers", A_STRUCT, 0},
    {"dot_dimension_numbers", A_STRUCT, 0},
    {"ragged_dot_dimension_numbers", A_STRUCT, 0},
    {"channel_handle", A_STRUCT, 0},
    {"value", A_VALUE, 0},
    {"replica_groups", A_REPLICA, 0},
    {"programs", A_PROGRAMS, 0},
    {"infeed", A_INFEED, 0},
};
#undef F

static void parse_conv_dim_string(parser_t *p, hlo_attrs_t *a);

/* [@a, @b, ...] appended to |list|. */
static void parse_symbol_list(parser_t *p, symbol_list_t *list) {
  expect_punct(p, '[');
  if (accept_punct(p, ']')) return;
  do {
    if (tok(p)->kind != TK_SYMBOL) fail_expected(p, "a symbol (@name)");
    t_grow(p, (void **)&list->names, &list->cap, list->count + 1, sizeof(char *));
    t_grow(p, (void **)&list->lens, &list->lens_cap, list->count + 1, sizeof(size_t));
    list->names[list->count] = tok(p)->start + 1;
    list->lens[list->count++] = tok(p)->len - 1;
    lex_next(p);
  } while (accept_punct(p, ','));
  expect_punct(p, ']');
}

static void apply_attr(parser_t *p, raw_op_t *r, const char *key, size_t key_len, bool allow_suffix);
static void parse_attr_dict(parser_t *p, raw_op_t *r);

/* #stablehlo.gather<offset_dims = [1], ...>, #stablehlo.conv<[b, 0, f]x...>,
 * #stablehlo.channel_handle<handle = 1, type = 0> ... : key = value pairs
 * applied to the same fields as top-level attributes. */
static void parse_struct_attr(parser_t *p, raw_op_t *r) {
  if (tok(p)->kind != TK_HASH) fail_expected(p, "a '#stablehlo.' attribute");
  lex_next(p);
  expect_punct(p, '<');
  if (at_punct(p, '[')) {
    parse_conv_dim_string(p, &r->attrs);
    expect_punct(p, '>');
    return;
  }
  accept_ident(p, "raw");
  if (accept_punct(p, '>')) return;
  do {
    if (tok(p)->kind != TK_IDENT) fail_expected(p, "an attribute name");
    const char *k = tok(p)->start;
    size_t kl = tok(p)->len;
    lex_next(p);
    expect_punct(p, '=');
    apply_attr(p, r, k, kl, false);
  } while (accept_punct(p, ','));
  expect_punct(p, '>');
}

static void apply_attr(parser_t *p, raw_op_t *r, const char *key, size_t key_len, bool allow_suffix) {
  const attr_spec_t *spec = NULL;
  for (int i = 0; i < COUNT(attr_specs); i++) {
    if (strlen(attr_specs[i].name) == key_len && memcmp(attr_specs[i].name, key, key_len) == 0) {
      spec = &attr_specs[i];
      break;
    }
  }
  if (!spec) {
    if (key_len == 15 && !memcmp(key, "mhlo.attributes", 15) && at_punct(p, '{')) {
      parse_attr_dict(p, r); /* a custom call's own attributes (@mhlo.topk's k, largest) */
    } else if (key_len == 25 && !memcmp(key, "indices_of_shape_operands", 25)) {
      i64vec_t v = {0};
      parse_dims_value(p, &v, NULL, allow_suffix);
      r->shape_operands = vec_to_dims(p, &v);
    } else if (key_len == 7 && !memcmp(key, "largest", 7)) {
      r->smallest = at_ident(p, "false");
      skip_value(p, allow_suffix);
    } else {
      skip_value(p, allow_suffix);
    }
    return;
  }
  char *base = (char *)&r->attrs;
  void *field = base + spec->offset;
  if (key_len == 9 && !memcmp(key, "dimension", 9)) r->has_dimension = true;
  switch (spec->kind) {
    case A_DIMS: {
      i64vec_t v = {0};
      parse_dims_value(p, &v, NULL, allow_suffix);
      *(hlo_dims_t *)field = vec_to_dims(p, &v);
      break;
    }
    case A_REPLICA: {
      i64vec_t v = {0};
      int64_t cols = 0;
      parse_dims_value(p, &v, &cols, allow_suffix);
      r->attrs.replica_groups = vec_to_dims(p, &v);
      r->attrs.replica_groups_cols = cols ? cols : v.count;
      break;
    }
    case A_I64:
      *(int64_t *)field = parse_int(p);
      skip_type_suffix(p, allow_suffix);
      break;
    case A_INT: {
      int64_t v = parse_int(p);
      if (v < INT_MIN || v > INT_MAX) fail(p, "value out of range");
      *(int *)field = (int)v;
      skip_type_suffix(p, allow_suffix);
      break;
    }
    case A_BOOL:
      if (at_ident(p, "true")) *(bool *)field = true;
      else if (at_ident(p, "false")) *(bool *)field = false;
      else fail_expected(p, "'true' or 'false'");
      lex_next(p);
      break;
    case A_FLOAT:
      *(double *)field = parse_float_token(p);
      skip_type_suffix(p, allow_suffix);
      break;
    case A_CMPDIR:
      r->attrs.comparison_direction =
          (hlo_comparison_direction_t)parse_enum(p, cmp_dir_names, COUNT(cmp_dir_names), "comparison direction");
      r->has_compare_direction = true;
      break;
    case A_CMPTYPE:
      r->attrs.compare_type = (hlo_compare_type_t)parse_enum(p, cmp_type_names, COUNT(cmp_type_names), "comparison type");
      break;
    case A_TRANSPOSE:
      r->attrs.transpose_a = parse_enum(p, transpose_names, COUNT(transpose_names), "transpose");
      break;
    case A_FFT: r->attrs.fft_type = parse_enum(p, fft_names, COUNT(fft_names), "fft type"); break;
    case A_RNG_ALG:
      r->attrs.rng_algorithm = parse_enum(p, rng_alg_names, COUNT(rng_alg_names), "rng algorithm");
      break;
    case A_RNG_DIST:
      r->attrs.rng_distribution = parse_enum(p, rng_dist_names, COUNT(rng_dist_names), "rng distribution");
      break;
    case A_STRING:
      if (tok(p)->kind == TK_STRING) {
        /* an empty backend_config beside mhlo.backend_config's dictionary keeps the dictionary */
        const char *v = decode_string(p);
        if (v[0] || !*(const char **)field) *(const char **)field = v;
      } else if (at_punct(p, '{')) { /* backend_config as a dictionary: keep its text */
        const char *s = tok(p)->start;
        skip_balanced(p);
        const char *e = p->lx.tok.start;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        *(const char **)field = m_strndup(p, s, (size_t)(e - s));
      } else {
        skip_value(p, allow_suffix); /* some other dialect's attribute of that name */
      }
      break;
    case A_SYMBOL:
      if (tok(p)->kind != TK_SYMBOL) fail_expected(p, "a symbol (@name)");
      r->symbol = tok(p)->start + 1;
      r->symbol_len = tok(p)->len - 1;
      lex_next(p);
      break;
    case A_SYMBOLS: { /* [@a, @b, ...]: the first is kept (custom_call uses one) */
      symbol_list_t called = {0};
      parse_symbol_list(p, &called);
      if (!r->called && called.count) {
        r->called = called.names[0];
        r->called_len = called.lens[0];
      }
      break;
    }
    case A_STRUCT: parse_struct_attr(p, r); break;
    case A_PROGRAMS: /* [[@a, @b], [@c, @d]]: one row per replica, one function per partition */
      expect_punct(p, '[');
      do {
        int before = r->programs.count;
        parse_symbol_list(p, &r->programs);
        int cols = r->programs.count - before;
        if (cols == 0) fail(p, "a row of programs names no function");
        if (r->program_rows && cols != r->program_cols)
          fail(p, "every row of programs must name as many functions (one per partition)");
        r->program_cols = cols;
        r->program_rows++;
      } while (accept_punct(p, ','));
      expect_punct(p, ']');
      break;
    case A_INFEED: parse_symbol_list(p, &r->infeed); break;
    case A_VALUE: {
      if (!at_ident(p, "dense") && !at_ident(p, "dense_resource")) { /* a scalar: read for its type later */
        r->has_scalar_value = true;
        r->scalar_value = p->lx;
        skip_value(p, allow_suffix);
        break;
      }
      r->literal = parse_typed_literal(p);
      break;
    }
    case A_SKIP: skip_value(p, allow_suffix); break;
  }
}

/* { key = value, unit_key, "quoted.key" = value } */
static void parse_attr_dict(parser_t *p, raw_op_t *r) {
  enter(p);
  expect_punct(p, '{');
  if (!accept_punct(p, '}')) {
    do {
      const char *k;
      size_t kl;
      if (tok(p)->kind == TK_IDENT) {
        k = tok(p)->start;
        kl = tok(p)->len;
      } else if (tok(p)->kind == TK_STRING) {
        k = tok(p)->start + 1;
        kl = tok(p)->len - 2;
      } else {
        fail_expected(p, "an attribute name");
      }
      lex_next(p);
      if (accept_punct(p, '=')) {
        apply_attr(p, r, k, kl, true);
      } else { /* unit attribute */
        for (int i = 0; i < COUNT(attr_specs); i++) {
          if (attr_specs[i].kind == A_BOOL && strlen(attr_specs[i].name) == kl &&
              memcmp(attr_specs[i].name, k, kl) == 0)
            *(bool *)((char *)&r->attrs + attr_specs[i].offset) = true;
        }
      }
    } while (accept_punct(p, ','));
    expect_punct(p, '}');
  }
  leave(p);
}

/* [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]: letters name the batch/feature
 * dimensions, digit d at position k means spatial dimension d is k. */
static void parse_conv_dims_list(parser_t *p, const char *letters, int64_t *first, int64_t *second,
                                 hlo_dims_t *spatial) {
  int64_t sp[HLO_MAX_RANK];
  int nsp = 0;
  int pos = 0;
  bool seen[HLO_MAX_RANK] = {false};
  expect_punct(p, '[');
  do {
    if (pos >= HLO_MAX_RANK) fail(p, "too many dimensions");
    if (tok(p)->kind == TK_INT) {
      int64_t d = parse_int(p);
      if (d < 0 || d >= HLO_MAX_RANK || seen[d]) fail(p, "bad spatial dimension %" PRId64, d);
      seen[d] = true;
      sp[d] = pos;
      if (d + 1 > nsp) nsp = (int)d + 1;
    } else if (tok(p)->kind == TK_IDENT && tok(p)->len == 1 && tok(p)->start[0] == letters[0]) {
      *first = pos;
      lex_next(p);
    } else if (tok(p)->kind == TK_IDENT && tok(p)->len == 1 && tok(p)->start[0] == letters[1]) {
      *second = pos;
      lex_next(p);
    } else {
      char what[40];
      snprintf(what, sizeof what, "'%c', '%c' or a spatial dimension", letters[0], letters[1]);
      fail_expected(p, what);
    }
    pos++;
  } while (accept_punct(p, ','));
  expect_punct(p, ']');
  for (int i = 0; i < nsp; i++)
    if (!seen[i]) fail(p, "spatial dimension %d missing", i);
  *spatial = hlo_dims_make(p->m, sp, nsp);
  if (nsp && !spatial->data) out_of_memory(p);
}

static void parse_conv_dim_string(parser_t *p, hlo_attrs_t *a) {
  parse_conv_dims_list(p, "bf", &a->input_batch_dimension, &a->input_feature_dimension,
                       &a->input_spatial_dimensions);
  expect_ident(p, "x");
  parse_conv_dims_list(p, "io", &a->kernel_input_feature_dimension,
                       &a->kernel_output_feature_dimension, &a->kernel_spatial_dimensions);
  expect_arrow(p);
  parse_conv_dims_list(p, "bf", &a->output_batch_dimension, &a->output_feature_dimension,
                       &a->output_spatial_dimensions);
}

/* window = {stride = [2, 2], pad = [[0, 0], [1, 1]], lhs_dilate = [1, 1],
 *           rhs_dilate = [1, 1], reverse = [false, false]} */
static void parse_conv_window(parser_t *p, hlo_attrs_t *a) {
  expect_punct(p, '{');
  if (accept_punct(p, '}')) return;
  do {
    if (tok(p)->kind != TK_IDENT) fail_expected(p, "a window attribute");
    token_t key = *tok(p);
    lex_next(p);
    expect_punct(p, '=');
    i64vec_t v = {0};
    parse_int_list(p, &v, NULL, 0);
    hlo_dims_t d = vec_to_dims(p, &v);
    if (tok_text_is(&key, "stride")) a->window_strides = d;
    else if (tok_text_is(&key, "pad")) a->padding = d;
    else if (tok_text_is(&key, "lhs_dilate")) a->lhs_dilation = d;
    else if (tok_text_is(&key, "rhs_dilate")) a->rhs_dilation = d;
    else if (tok_text_is(&key, "reverse")) a->window_reversal = d;
    else fail_at(p, (hlo_location_t){p->file, key.line, key.col}, "unknown window attribute '%.*s'",
                 (int)key.len, key.start);
  } while (accept_punct(p, ','));
  expect_punct(p, '}');
}

/* ========================================================== scopes */

static binding_t *scope_find(scope_t *s, const char *name, size_t len) {
  if (!s->table_cap) return NULL;
  size_t mask = s->table_cap - 1;
  for (size_t i = fnv1a(FNV1A_BASIS, name, len) & mask;; i = (i + 1) & mask) {
    binding_t *b = &s->table[i];
    if (!b->name) return NULL;
    if (b->len == len && memcmp(b->name, name, len) == 0) return b;
  }
}

static binding_t *scope_insert(parser_t *p, scope_t *s, const char *name, size_t len) {
  if ((s->table_count + 1) * 2 > s->table_cap) {
    size_t ncap = s->table_cap ? s->table_cap * 2 : 64;
    binding_t *old = s->table;
    size_t old_cap = s->table_cap;
    s->table = t_alloc(p, ncap * sizeof(binding_t));
    s->table_cap = ncap;
    s->table_count = 0;
    for (size_t i = 0; i < old_cap; i++) {
      if (old[i].name) {
        binding_t *b = scope_insert(p, s, old[i].name, old[i].len);
        *b = old[i];
      }
    }
  }
  binding_t *b = scope_find(s, name, len);
  if (b) return b; /* redefinition shadows (MLIR would reject it) */
  size_t mask = s->table_cap - 1;
  size_t i = fnv1a(FNV1A_BASIS, name, len) & mask;
  while (s->table[i].name) i = (i + 1) & mask;
  b = &s->table[i];
  b->name = name;
  b->len = len;
  s->table_count++;
  return b;
}

static void bind_single(parser_t *p, const token_t *name, hlo_instruction_t *v) {
  binding_t *b = scope_insert(p, p->scope, name->start, name->len);
  b->count = 1;
  b->single = v;
  b->results = NULL;
}

static hlo_instruction_t *emit(parser_t *p, hlo_opcode_t op, const hlo_shape_t *shape, int n,
                               hlo_instruction_t *const *operands, hlo_location_t loc) {
  hlo_shape_t s = *shape;
  s.quant = NULL; /* instructions hold storage values (see "quantized types") */
  hlo_instruction_t *in = hlo_instruction_create(p->m, op, &s, n, operands);
  if (!in) out_of_memory(p);
  in->loc = loc;
  if (!hlo_computation_append(p->m, p->scope->comp, in)) out_of_memory(p);
  return in;
}

static void set_value_quant(parser_t *p, const hlo_instruction_t *in, const hlo_quant_t *q);
static const hlo_quant_t *value_quant(const parser_t *p, const hlo_instruction_t *in);

static hlo_instruction_t *new_parameter(parser_t *p, hlo_computation_t *c, const hlo_shape_t *shape,
                                        hlo_location_t loc) {
  hlo_shape_t s = *shape;
  s.quant = NULL;
  hlo_instruction_t *in = hlo_instruction_create(p->m, HLO_OPCODE_PARAMETER, &s, 0, NULL);
  if (!in) out_of_memory(p);
  if (shape->quant) set_value_quant(p, in, shape->quant);
  in->loc = loc;
  in->parameter_number = c->parameter_count;
  if (!hlo_computation_append(p->m, c, in)) out_of_memory(p);
  return in;
}

/* Resolves a value name (with optional #k) in scope |s|, capturing it
 * into regions between its definition and |s|. */
static hlo_instruction_t *lookup_in(parser_t *p, scope_t *s, const char *name, size_t len, int index,
                                    bool has_index, hlo_location_t loc) {
  binding_t *b = scope_find(s, name, len);
  if (b) {
    if (has_index) {
      if (index >= b->count)
        fail_at(p, loc, "result #%d of '%.*s' does not exist (it has %d)", index, (int)len, name, b->count);
      return b->count == 1 ? b->single : b->results[index];
    }
    if (b->count == 1) return b->single;
    if (b->count == 0) fail_at(p, loc, "'%.*s' has no results", (int)len, name);
    return b->results[0];
  }
  if (!s->parent) fail_at(p, loc, "unknown value '%.*s'", (int)len, name);
  hlo_instruction_t *outer = lookup_in(p, s->parent, name, len, index, has_index, loc);
  if (!s->capture_allowed)
    fail_at(p, loc, "implicit capture in %s region is not supported (value '%.*s')", s->owner,
            (int)len, name);
  for (int i = 0; i < s->capture_count; i++)
    if (s->captures[i].outer == outer) return s->captures[i].param;
  hlo_instruction_t *param = new_parameter(p, s->comp, &outer->shape, loc);
  if (value_quant(p, outer)) set_value_quant(p, param, value_quant(p, outer));
  t_grow(p, (void **)&s->captures, &s->capture_cap, s->capture_count + 1, sizeof(capture_t));
  s->captures[s->capture_count].outer = outer;
  s->captures[s->capture_count].param = param;
  s->capture_count++;
  return param;
}

/* Parses a value use (%x, %x#2) and returns its instruction. */
static hlo_instruction_t *parse_value_use(parser_t *p) {
  if (tok(p)->kind != TK_VALUE) fail_expected(p, "a value (%name)");
  token_t t = *tok(p);
  hlo_location_t loc = tok_loc(p);
  const char *hash = memchr(t.start, '#', t.len);
  size_t len = hash ? (size_t)(hash - t.start) : t.len;
  int index = 0;
  if (hash) {
    uint64_t v;
    if (!parse_u64_text(hash + 1, t.len - len - 1, &v) || v > INT_MAX) fail(p, "bad result index");
    index = (int)v;
  }
  lex_next(p);
  return lookup_in(p, p->scope, t.start, len, index, hash != NULL, loc);
}

static scope_t *push_scope(parser_t *p, hlo_computation_t *comp, bool capture_allowed, const char *owner) {
  scope_t *s = t_alloc(p, sizeof *s);
  s->parent = p->scope;
  s->comp = comp;
  s->capture_allowed = capture_allowed;
  s->owner = owner;
  p->scope = s;
  return s;
}

/* ================================================== blocks and ops */

static func_info_t *find_func(parser_t *p, const char *name, size_t len) {
  for (int i = 0; i < p->func_count; i++)
    if (p->funcs[i].len == len && memcmp(p->funcs[i].name, name, len) == 0) return &p->funcs[i];
  return NULL;
}

static void parse_function(parser_t *p, func_info_t *f, const hlo_shape_t *given, int given_count,
                           hlo_instruction_t *const *operands);
static bool parse_op(parser_t *p); /* true when it parsed the terminator */

/* Sets the root of the current computation from a return's operands. */
static int parse_return(parser_t *p, hlo_location_t loc, bool generic) {
  hlo_instruction_t **vals = NULL;
  int n = 0, cap = 0;
  if (generic) expect_punct(p, '(');
  if (tok(p)->kind == TK_VALUE) {
    do {
      t_grow(p, (void **)&vals, &cap, n + 1, sizeof(void *));
      vals[n++] = parse_value_use(p);
    } while (accept_punct(p, ','));
  }
  if (generic) expect_punct(p, ')');
  if (at_punct(p, '{')) {
    raw_op_t dummy;
    memset(&dummy, 0, sizeof dummy);
    parse_attr_dict(p, &dummy);
  }
  if (accept_punct(p, ':')) { /* types: checked against the values */
    int k = 0;
    if (accept_punct(p, '(')) {
      if (!at_punct(p, ')')) {
        do {
          hlo_shape_t s;
          parse_type(p, &s);
          k++;
        } while (accept_punct(p, ','));
      }
      expect_punct(p, ')');
      if (tok(p)->kind == TK_ARROW) {
        lex_next(p);
        skip_value(p, false);
      }
    } else {
      do {
        hlo_shape_t s;
        hlo_location_t tl = tok_loc(p);
        parse_type(p, &s);
        if (k < n && !hlo_refine_fits(&vals[k]->shape, &s)) {
          char a[128], b[128];
          hlo_shape_to_string(&s, a, sizeof a);
          hlo_shape_to_string(&vals[k]->shape, b, sizeof b);
          fail_at(p, tl, "return type %s does not match the value's type %s", a, b);
        }
        k++;
      } while (accept_punct(p, ','));
    }
    if (k != n) fail_at(p, loc, "return has %d values but %d types", n, k);
  }
  hlo_computation_t *c = p->scope->comp;
  if (n == 1) {
    c->root = vals[0];
  } else {
    hlo_shape_t *shapes = t_alloc(p, sizeof(hlo_shape_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) shapes[i] = vals[i]->shape;
    hlo_shape_t ts;
    if (!hlo_shape_make_tuple(p->m, &ts, n, shapes)) out_of_memory(p);
    c->root = emit(p, HLO_OPCODE_TUPLE, &ts, n, vals, loc);
  }
  p->scope->returned = n;
  return n;
}

/* Parses ops until the terminator, then the closing '}'.  Returns the
 * number of values returned. */
static int parse_block_body(parser_t *p) {
  for (;;) {
    if (at_punct(p, '}')) fail(p, "block has no terminator (expected a return)");
    if (tok(p)->kind == TK_EOF) fail(p, "unexpected end of input (expected '}')");
    if (parse_op(p)) break;
  }
  int n = p->scope->returned;
  expect_punct(p, '}');
  return n;
}

typedef struct block_arg {
  token_t name;
  hlo_shape_t shape;
} block_arg_t;

/* [(%a: tensor<f32>, %b: tensor<f32>)]: a block's arguments, if any. */
static block_arg_t *parse_block_args(parser_t *p, int *count) {
  block_arg_t *args = NULL;
  int n = 0, cap = 0;
  if (accept_punct(p, '(')) {
    if (!at_punct(p, ')')) {
      do {
        if (tok(p)->kind != TK_VALUE) fail_expected(p, "a block argument");
        t_grow(p, (void **)&args, &cap, n + 1, sizeof *args);
        args[n].name = *tok(p);
        lex_next(p);
        expect_punct(p, ':');
        parse_type(p, &args[n].shape);
        n++;
      } while (accept_punct(p, ','));
    }
    expect_punct(p, ')');
  }
  *count = n;
  return args;
}

/* ^bb0(%a: tensor<f32>, %b: tensor<f32>): */
static block_arg_t *parse_block_header(parser_t *p, int *count) {
  lex_next(p); /* ^bb0 */
  block_arg_t *args = parse_block_args(p, count);
  expect_punct(p, ':');
  return args;
}

/* A region: '{' [^bb0(args):] ops '}' -> a new computation.  |args| are
 * block arguments given by the op's own syntax (while, reduce reducer). */
static void parse_region(parser_t *p, raw_op_t *r, const char *kind, bool capture_allowed,
                         const block_arg_t *args, int nargs) {
  enter(p);
  hlo_location_t loc = tok_loc(p);
  expect_punct(p, '{');
  char name[96];
  const char *short_name = strchr(r->name, '.') ? strchr(r->name, '.') + 1 : r->name;
  snprintf(name, sizeof name, "%s_%s.%d", short_name, kind, ++p->region_counter);
  hlo_computation_t *comp = hlo_computation_create(p->m, name);
  if (!comp) out_of_memory(p);
  comp->loc = loc;
  scope_t *s = push_scope(p, comp, capture_allowed, short_name);
  if (tok(p)->kind == TK_CARET) {
    if (args) fail(p, "unexpected block label in this region");
    args = parse_block_header(p, &nargs);
  }
  for (int i = 0; i < nargs; i++) {
    hlo_location_t al = {p->file, args[i].name.line, args[i].name.col};
    hlo_shape_t shape = args[i].shape;
    if (hlo_shape_is_dynamic(&shape)) { /* a loop variable takes its initial value's shape */
      if (strcmp(short_name, "while") || i >= r->operand_count || !hlo_refine_fits(&r->operands[i]->shape, &shape))
        fail_at(p, al, "block argument %d of this %s region has a dynamic type the compiler cannot refine", i, short_name);
      shape = r->operands[i]->shape;
    }
    hlo_instruction_t *param = new_parameter(p, comp, &shape, al);
    bind_single(p, &args[i].name, param);
  }
  parse_block_body(p);
  p->scope = s->parent;
  t_grow(p, (void **)&r->regions, &r->region_cap, r->region_count + 1, sizeof(region_t));
  region_t *rg = &r->regions[r->region_count++];
  rg->comp = comp;
  rg->normal_params = nargs;
  rg->captures = s->captures;
  rg->capture_count = s->capture_count;
  leave(p);
}

/* ( { region }, { region } ) */
static void parse_region_list(parser_t *p, raw_op_t *r, bool capture_allowed) {
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    int i = 0;
    do {
      char kind[24];
      snprintf(kind, sizeof kind, "region%d", i++);
      parse_region(p, r, kind, capture_allowed, NULL, 0);
    } while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
}

/* Captures: every region of the op gets, after its own parameters, one
 * parameter per captured value of any of the op's regions, in one order;
 * the op gets the captured values as extra operands in that order. */
static void finish_captures(parser_t *p, raw_op_t *r) {
  hlo_instruction_t **outer = NULL;
  int n = 0, cap = 0;
  for (int i = 0; i < r->region_count; i++) {
    region_t *rg = &r->regions[i];
    for (int k = 0; k < rg->capture_count; k++) {
      bool seen = false;
      for (int j = 0; j < n; j++) seen |= outer[j] == rg->captures[k].outer;
      if (!seen) {
        t_grow(p, (void **)&outer, &cap, n + 1, sizeof(void *));
        outer[n++] = rg->captures[k].outer;
      }
    }
  }
  if (n == 0) return;
  for (int i = 0; i < r->region_count; i++) {
    region_t *rg = &r->regions[i];
    hlo_computation_t *c = rg->comp;
    int np = rg->normal_params + n;
    hlo_instruction_t **params = m_alloc(p, sizeof(void *) * (size_t)np);
    for (int k = 0; k < rg->normal_params; k++) params[k] = c->parameters[k];
    for (int j = 0; j < n; j++) {
      hlo_instruction_t *param = NULL;
      for (int k = 0; k < rg->capture_count; k++)
        if (rg->captures[k].outer == outer[j]) param = rg->captures[k].param;
      if (!param) {
        param = hlo_instruction_create(p->m, HLO_OPCODE_PARAMETER, &outer[j]->shape, 0, NULL);
        if (!param) out_of_memory(p);
        param->loc = c->loc;
        if (value_quant(p, outer[j])) set_value_quant(p, param, value_quant(p, outer[j]));
      }
      params[rg->normal_params + j] = param;
    }
    /* Rebuild: parameters first (in order), then the other instructions. */
    hlo_instruction_t **instrs = m_alloc(p, sizeof(void *) * (size_t)(c->instruction_count + n));
    int count = 0;
    for (int k = 0; k < np; k++) {
      params[k]->parameter_number = k;
      instrs[count++] = params[k];
    }
    for (int k = 0; k < c->instruction_count; k++)
      if (c->instructions[k]->opcode != HLO_OPCODE_PARAMETER) instrs[count++] = c->instructions[k];
    c->instructions = instrs;
    c->instruction_count = count;
    c->instruction_capacity = c->instruction_count + n;
    c->parameters = params;
    c->parameter_count = np;
  }
  for (int j = 0; j < n; j++) raw_push_operand(p, r, outer[j]);
}

/* ------------------------------------------------------ type signatures */

static void push_type(parser_t *p, hlo_shape_t **arr, int *count, int *cap, const hlo_shape_t *s) {
  t_grow(p, (void **)arr, cap, *count + 1, sizeof(hlo_shape_t));
  (*arr)[(*count)++] = *s;
}

/* After ':': `T`, `T1, T2`, `(T1, T2) -> T3`, `T -> (T1, T2)`, `() -> T`. */
static void parse_type_sig(parser_t *p, raw_op_t *r) {
  r->has_types = true;
  hlo_shape_t s;
  if (accept_punct(p, '(')) {
    r->parenthesized_inputs = true;
    if (!at_punct(p, ')')) {
      do {
        parse_type(p, &s);
        push_type(p, &r->in_types, &r->in_count, &r->in_cap, &s);
      } while (accept_punct(p, ','));
    }
    expect_punct(p, ')');
    if (tok(p)->kind != TK_ARROW) fail_expected(p, "'->'");
  } else {
    do {
      parse_type(p, &s);
      push_type(p, &r->in_types, &r->in_count, &r->in_cap, &s);
    } while (accept_punct(p, ','));
  }
  if (tok(p)->kind == TK_ARROW) {
    lex_next(p);
    r->has_arrow = true;
    if (accept_punct(p, '(')) {
      if (!at_punct(p, ')')) {
        do {
          parse_type(p, &s);
          push_type(p, &r->out_types, &r->out_count, &r->out_cap, &s);
        } while (accept_punct(p, ','));
      }
      expect_punct(p, ')');
    } else {
      parse_type(p, &s);
      push_type(p, &r->out_types, &r->out_count, &r->out_cap, &s);
    }
  }
}

/* ------------------------------------------------------- op lookup */

static bool lookup_opcode(const char *name, hlo_opcode_t *out) {
  const char *rest;
  bool chlo;
  if (strncmp(name, "stablehlo.", 10) == 0) {
    rest = name + 10;
    chlo = false;
  } else if (strncmp(name, "chlo.", 5) == 0) {
    rest = name + 5;
    chlo = true;
  } else {
    return false;
  }
  for (int i = 0; i < HLO_OPCODE_COUNT; i++) {
    hlo_opcode_t op = (hlo_opcode_t)i;
    if (op == HLO_OPCODE_PARAMETER || op == HLO_OPCODE_CHECK) continue;
    if (hlo_opcode_is_chlo(op) != chlo) continue;
    if (strcmp(hlo_opcode_name(op), rest) == 0) {
      *out = op;
      return true;
    }
  }
  return false;
}

typedef enum {
  OPK_UNKNOWN, OPK_HLO, OPK_CALL, OPK_RETURN, OPK_CHECK,
  OPK_PROBE,      /* interpreter.probe */
  OPK_PRINT,      /* interpreter.print */
  OPK_PROBE_CHECK, /* check.expect_serialized_eq */
  OPK_RUN_PARALLEL, /* interpreter.run_parallel */
  OPK_BROADCASTING, /* chlo.broadcast_add ... (implicit broadcasting) */
  OPK_SQUARE,       /* chlo.square */
  OPK_CONSTANT_LIKE, /* chlo.constant_like */
  OPK_ASYNC_START,  /* stablehlo.async_start */
  OPK_ASYNC_DONE,   /* stablehlo.async_done */
  OPK_SDY_VALUE,    /* sdy.sharding_constraint, sdy.reshard, ...: the operand */
  OPK_SDY_GROUP,    /* sdy.sharding_group: nothing */
  OPK_SDY_REGION    /* sdy.named_computation, sdy.manual_computation */
} op_kind_t;

/* The ops chlo.broadcast_X wraps: X's elementwise binary op (compare and
 * complex among them), select, or CHLO's next_after, polygamma, zeta. */
static bool broadcasting_op(hlo_opcode_t op) {
  return (op >= HLO_OPCODE_ADD && op <= HLO_OPCODE_XOR) || op == HLO_OPCODE_SELECT ||
         op == HLO_OPCODE_CHLO_NEXT_AFTER || op == HLO_OPCODE_CHLO_POLYGAMMA || op == HLO_OPCODE_CHLO_ZETA;
}

static op_kind_t classify_op(const char *name, hlo_opcode_t *opcode) {
  if (!strcmp(name, "return") || !strcmp(name, "func.return") || !strcmp(name, "stablehlo.return") ||
      !strcmp(name, "sdy.return"))
    return OPK_RETURN;
  /* Shardy's annotations (one device: every sharding is the whole value) */
  if (!strcmp(name, "sdy.sharding_constraint") || !strcmp(name, "sdy.reshard") ||
      !strcmp(name, "sdy.propagation_barrier") || !strcmp(name, "sdy.data_flow_edge"))
    return OPK_SDY_VALUE;
  if (!strcmp(name, "sdy.sharding_group")) return OPK_SDY_GROUP;
  if (!strcmp(name, "sdy.named_computation") || !strcmp(name, "sdy.manual_computation")) return OPK_SDY_REGION;
  if (!strcmp(name, "sdy.constant")) {
    *opcode = HLO_OPCODE_CONSTANT;
    return OPK_HLO;
  }
  if (!strcmp(name, "call") || !strcmp(name, "func.call")) return OPK_CALL;
  if (!strcmp(name, "check.expect_eq") || !strcmp(name, "check.expect_eq_const") ||
      !strcmp(name, "check.expect_almost_eq") || !strcmp(name, "check.expect_almost_eq_const") ||
      !strcmp(name, "check.expect_close"))
    return OPK_CHECK;
  if (!strcmp(name, "interpreter.probe")) return OPK_PROBE;
  if (!strcmp(name, "interpreter.print")) return OPK_PRINT;
  if (!strcmp(name, "check.expect_serialized_eq")) return OPK_PROBE_CHECK;
  if (!strcmp(name, "interpreter.run_parallel")) return OPK_RUN_PARALLEL;
  if (!strcmp(name, "stablehlo.dot")) {
    *opcode = HLO_OPCODE_DOT_GENERAL;
    return OPK_HLO;
  }
  if (lookup_opcode(name, opcode)) return OPK_HLO;
  if (!strcmp(name, "chlo.constant")) {
    *opcode = HLO_OPCODE_CONSTANT;
    return OPK_HLO;
  }
  if (!strcmp(name, "chlo.square")) return OPK_SQUARE;
  if (!strcmp(name, "stablehlo.async_start")) return OPK_ASYNC_START;
  if (!strcmp(name, "stablehlo.async_done")) return OPK_ASYNC_DONE;
  if (!strcmp(name, "chlo.constant_like")) return OPK_CONSTANT_LIKE;
  if (strncmp(name, "chlo.broadcast_", 15) == 0) {
    char wrapped[160];
    for (int chlo = 0; chlo < 2; chlo++) {
      snprintf(wrapped, sizeof wrapped, "%s.%s", chlo ? "chlo" : "stablehlo", name + 15);
      if (lookup_opcode(wrapped, opcode) && broadcasting_op(*opcode)) return OPK_BROADCASTING;
    }
  }
  return OPK_UNKNOWN;
}

/* ------------------------------------------------------ pretty forms */

static void parse_slice_ranges(parser_t *p, raw_op_t *r) {
  /* [0:33, 0:79:2] */
  i64vec_t start = {0}, limit = {0}, stride = {0};
  expect_punct(p, '[');
  if (!at_punct(p, ']')) {
    do {
      vec_push(p, &start, parse_int(p));
      expect_punct(p, ':');
      vec_push(p, &limit, parse_int(p));
      vec_push(p, &stride, accept_punct(p, ':') ? parse_int(p) : 1);
    } while (accept_punct(p, ','));
  }
  expect_punct(p, ']');
  r->attrs.start_indices = vec_to_dims(p, &start);
  r->attrs.limit_indices = vec_to_dims(p, &limit);
  r->attrs.strides = vec_to_dims(p, &stride);
}

/* `dims = [...]` and friends: the pretty spellings whose field depends on
 * the op.  Returns false if |key| is not one of them. */
static bool apply_pretty_attr(parser_t *p, raw_op_t *r, const token_t *key, hlo_opcode_t op) {
  hlo_dims_t *target = NULL;
  if (tok_text_is(key, "probe_id")) {
    r->probe_id = decode_string(p);
    return true;
  }
  if (tok_text_is(key, "iter")) {
    parse_int(p);
    r->has_probe_iter = true;
    return true;
  }
  if (tok_text_is(key, "dims")) {
    target = op == HLO_OPCODE_BROADCAST_IN_DIM || op == HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM ? &r->attrs.broadcast_dimensions
             : op == HLO_OPCODE_TRANSPOSE      ? &r->attrs.permutation
                                               : &r->attrs.dimensions;
  } else if (tok_text_is(key, "sizes")) {
    target = op == HLO_OPCODE_BROADCAST ? &r->attrs.dimensions : &r->attrs.slice_sizes;
  } else if (tok_text_is(key, "low")) {
    target = &r->attrs.edge_padding_low;
  } else if (tok_text_is(key, "high")) {
    target = &r->attrs.edge_padding_high;
  } else if (tok_text_is(key, "interior")) {
    target = &r->attrs.interior_padding;
  } else if (tok_text_is(key, "length")) {
    target = &r->attrs.fft_length;
  }
  if (target) {
    i64vec_t v = {0};
    parse_dims_value(p, &v, NULL, false);
    *target = vec_to_dims(p, &v);
    return true;
  }
  if (tok_text_is(key, "dim")) {
    r->attrs.dimension = parse_int(p);
    return true;
  }
  if (tok_text_is(key, "batching_dims") || tok_text_is(key, "contracting_dims")) {
    bool batching = tok_text_is(key, "batching_dims");
    i64vec_t l = {0}, rr = {0};
    parse_int_list(p, &l, NULL, 0);
    expect_ident(p, "x");
    parse_int_list(p, &rr, NULL, 0);
    if (batching) {
      r->attrs.lhs_batching_dimensions = vec_to_dims(p, &l);
      r->attrs.rhs_batching_dimensions = vec_to_dims(p, &rr);
    } else {
      r->attrs.lhs_contracting_dimensions = vec_to_dims(p, &l);
      r->attrs.rhs_contracting_dimensions = vec_to_dims(p, &rr);
    }
    return true;
  }
  if (tok_text_is(key, "precision")) {
    skip_value(p, false);
    return true;
  }
  if (tok_text_is(key, "algorithm")) {
    if (op == HLO_OPCODE_RNG_BIT_GENERATOR)
      r->attrs.rng_algorithm = parse_enum(p, rng_alg_names, COUNT(rng_alg_names), "rng algorithm");
    else
      skip_value(p, false); /* dot algorithm */
    return true;
  }
  if (tok_text_is(key, "distribution")) {
    r->attrs.rng_distribution = parse_enum(p, rng_dist_names, COUNT(rng_dist_names), "rng distribution");
    return true;
  }
  if (tok_text_is(key, "type") && op == HLO_OPCODE_FFT) {
    r->attrs.fft_type = parse_enum(p, fft_names, COUNT(fft_names), "fft type");
    return true;
  }
  if (tok_text_is(key, "format")) { /* reduce_precision format = e5m10 */
    token_t *t = tok(p);
    int e = 0, m = 0;
    char buf[32];
    if (t->kind != TK_IDENT || t->len >= sizeof buf) fail_expected(p, "a format like e5m10");
    memcpy(buf, t->start, t->len);
    buf[t->len] = 0;
    if (sscanf(buf, "e%dm%d", &e, &m) != 2 || e < 1 || e > 64 || m < 0 || m > 64)
      fail_expected(p, "a format like e5m10");
    r->attrs.exponent_bits = e;
    r->attrs.mantissa_bits = m;
    lex_next(p);
    return true;
  }
  if (tok_text_is(key, "dim_numbers")) {
    parse_conv_dim_string(p, &r->attrs);
    return true;
  }
  if (tok_text_is(key, "window")) {
    parse_conv_window(p, &r->attrs);
    return true;
  }
  return false;
}

/* The common pretty form: a comma-separated mix of operands, `key = value`
 * attributes and bare keywords, then an optional attribute dictionary and
 * the type signature:
 *   stablehlo.add %a, %b : tensor<4xf32>
 *   stablehlo.compare  LT, %a, %b,  SIGNED : (T, T) -> T'
 *   stablehlo.broadcast_in_dim %x, dims = [0] : (T) -> T'
 *   stablehlo.convolution(%a, %b) dim_numbers = ..., window = {...} {...} : ...
 *   stablehlo.custom_call @target(%a) {has_side_effect = true} : (T) -> ()
 *   stablehlo.composite "name" %a {decomposition = @f} : (T) -> T
 *   stablehlo.slice %x [0:2, 1:3] : ...      stablehlo.get_tuple_element %t[0] : T
 *   stablehlo.constant dense<1.0> : tensor<f32>
 *   check.expect_almost_eq_const %x, dense<1.0> : tensor<f32> {tolerance = 0.1 : f64} */
static void parse_pretty_generic(parser_t *p, raw_op_t *r, hlo_opcode_t op, bool is_check) {
  int paren = 0;
  for (;;) {
    token_t *t = tok(p);
    if (t->kind == TK_VALUE) {
      raw_push_operand(p, r, parse_value_use(p));
    } else if (t->kind == TK_SYMBOL) {
      r->symbol = t->start + 1;
      r->symbol_len = t->len - 1;
      if (r->symbol_len && r->symbol[0] == '"') {
        r->symbol++;
        r->symbol_len -= 2;
      }
      lex_next(p);
    } else if (t->kind == TK_STRING) {
      r->composite_name = decode_string(p);
    } else if (t->kind == TK_IDENT && (tok_text_is(t, "dense") || tok_text_is(t, "dense_resource"))) {
      scan_literal(p, &r->pending);
    } else if (t->kind == TK_IDENT) {
      token_t key = *t;
      lex_next(p);
      if (accept_punct(p, '=')) {
        if (!apply_pretty_attr(p, r, &key, op)) apply_attr(p, r, key.start, key.len, false);
      } else {
        int d = -1;
        for (int i = 0; i < COUNT(cmp_dir_names); i++)
          if (tok_text_is(&key, cmp_dir_names[i])) d = i;
        if (d >= 0) {
          r->attrs.comparison_direction = (hlo_comparison_direction_t)d;
          r->has_compare_direction = true;
        } else {
          int ct = -1;
          for (int i = 0; i < COUNT(cmp_type_names); i++)
            if (tok_text_is(&key, cmp_type_names[i])) ct = i;
          if (ct < 0)
            fail_at(p, (hlo_location_t){p->file, key.line, key.col}, "unexpected '%.*s'",
                    (int)(key.len > 40 ? 40 : key.len), key.start);
          r->attrs.compare_type = (hlo_compare_type_t)ct;
        }
      }
    } else if (at_punct(p, '(')) {
      paren++;
      lex_next(p);
      continue;
    } else if (at_punct(p, ')') && paren > 0) {
      paren--;
      lex_next(p);
      continue;
    } else if (at_punct(p, '[')) {
      if (op == HLO_OPCODE_SLICE) {
        parse_slice_ranges(p, r);
      } else if (op == HLO_OPCODE_GET_TUPLE_ELEMENT) {
        lex_next(p);
        r->attrs.index = parse_int(p);
        expect_punct(p, ']');
      } else {
        fail(p, "unexpected '['");
      }
    } else if (at_punct(p, '{')) {
      parse_attr_dict(p, r);
    } else if (at_punct(p, '<') ) { /* properties in pretty form */
      lex_next(p);
      parse_attr_dict(p, r);
      expect_punct(p, '>');
    } else if (at_punct(p, ',')) {
      lex_next(p);
      continue;
    } else {
      break;
    }
  }
  if (paren) expect_punct(p, ')');
  if (!at_punct(p, ':')) fail_expected(p, "':' and a type");
  lex_next(p);
  parse_type_sig(p, r);
  if (is_check && at_punct(p, '{')) parse_attr_dict(p, r);
}

/* stablehlo.reduce(%x init: %c), (%y init: %d) applies stablehlo.add
 *     across dimensions = [1] : (T, T, I, I) -> (R, R)
 * stablehlo.reduce(%x init: %c) across dimensions = [0] : (T, I) -> R
 *     reducer(%a: I, %b: I) (%c: J, %d: J) { ... stablehlo.return ... } */
static void parse_pretty_reduce(parser_t *p, raw_op_t *r) {
  hlo_instruction_t **inputs = NULL, **inits = NULL;
  int n = 0, cap1 = 0, cap2 = 0;
  do {
    expect_punct(p, '(');
    t_grow(p, (void **)&inputs, &cap1, n + 1, sizeof(void *));
    t_grow(p, (void **)&inits, &cap2, n + 1, sizeof(void *));
    inputs[n] = parse_value_use(p);
    expect_ident(p, "init");
    expect_punct(p, ':');
    inits[n] = parse_value_use(p);
    expect_punct(p, ')');
    n++;
  } while (accept_punct(p, ','));
  for (int i = 0; i < n; i++) raw_push_operand(p, r, inputs[i]);
  for (int i = 0; i < n; i++) raw_push_operand(p, r, inits[i]);
  if (accept_ident(p, "applies")) {
    if (tok(p)->kind != TK_IDENT) fail_expected(p, "an op name");
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)(tok(p)->len > 60 ? 60 : tok(p)->len), tok(p)->start);
    hlo_opcode_t op;
    if (!lookup_opcode(name, &op) || !hlo_opcode_is_elementwise(op) || op < HLO_OPCODE_ADD ||
        op > HLO_OPCODE_XOR)
      fail(p, "reduce cannot apply '%s'", name);
    r->applies_opcode = op;
    lex_next(p);
  }
  expect_ident(p, "across");
  expect_ident(p, "dimensions");
  expect_punct(p, '=');
  i64vec_t v = {0};
  parse_dims_value(p, &v, NULL, false);
  r->attrs.dimensions = vec_to_dims(p, &v);
  if (at_punct(p, '{')) parse_attr_dict(p, r);
  expect_punct(p, ':');
  parse_type_sig(p, r);
  if (r->applies_opcode < 0) {
    expect_ident(p, "reducer");
    /* Groups (%lhs_i: T, %rhs_i: T); block arguments are all lhs, then all rhs. */
    block_arg_t *args = t_alloc(p, sizeof(block_arg_t) * (size_t)(2 * n));
    int groups = 0;
    while (at_punct(p, '(')) {
      lex_next(p);
      if (groups >= n) fail(p, "reducer has more argument pairs than reduce has inputs");
      for (int k = 0; k < 2; k++) {
        if (tok(p)->kind != TK_VALUE) fail_expected(p, "a block argument");
        block_arg_t *a = &args[k * n + groups];
        a->name = *tok(p);
        lex_next(p);
        expect_punct(p, ':');
        parse_type(p, &a->shape);
        if (k == 0) expect_punct(p, ',');
      }
      expect_punct(p, ')');
      groups++;
    }
    if (groups != n) fail(p, "reducer needs %d argument pairs, got %d", n, groups);
    parse_region(p, r, "body", false, args, 2 * n);
  }
}

/* stablehlo.while(%iterArg = %init, ...) : T1, T2
 *   cond { ... stablehlo.return %p : tensor<i1> } do { ... } */
static void parse_pretty_while(parser_t *p, raw_op_t *r) {
  block_arg_t *args = NULL;
  int n = 0, cap = 0;
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do {
      if (tok(p)->kind != TK_VALUE) fail_expected(p, "a loop variable");
      t_grow(p, (void **)&args, &cap, n + 1, sizeof *args);
      args[n].name = *tok(p);
      lex_next(p);
      expect_punct(p, '=');
      raw_push_operand(p, r, parse_value_use(p));
      n++;
    } while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  if (at_punct(p, '{')) parse_attr_dict(p, r);
  expect_punct(p, ':');
  parse_type_sig(p, r);
  if (r->in_count != n) fail(p, "while has %d loop variables but %d types", n, r->in_count);
  for (int i = 0; i < n; i++) args[i].shape = r->in_types[i];
  expect_ident(p, "cond");
  parse_region(p, r, "cond", true, args, n);
  expect_ident(p, "do");
  parse_region(p, r, "body", true, args, n);
}

/* chlo.scan(%in, ..) inits(%init, ..) dimension=D [attributes {is_reverse = B}]
 *   { ^bb0(%slice: T, .., %carry: C, ..): ... stablehlo.return %out, .., %carry', .. }
 *   : (input types.., init types..) -> (output types.., carry types..) */
static void parse_pretty_scan(parser_t *p, raw_op_t *r) {
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do raw_push_operand(p, r, parse_value_use(p));
    while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  r->attrs.scan_inputs = r->operand_count;
  expect_ident(p, "inits");
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do raw_push_operand(p, r, parse_value_use(p));
    while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  expect_ident(p, "dimension");
  expect_punct(p, '=');
  r->attrs.dimension = parse_int(p);
  if (accept_ident(p, "attributes")) parse_attr_dict(p, r);
  parse_region(p, r, "body", false, NULL, 0);
  expect_punct(p, ':');
  parse_type_sig(p, r);
}

/* "op.name"(%a, %b) <{props}> ({regions}) {attrs} : (T, T) -> R */
static void parse_generic(parser_t *p, raw_op_t *r, bool capture_allowed) {
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do raw_push_operand(p, r, parse_value_use(p));
    while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  if (at_punct(p, '<')) {
    lex_next(p);
    parse_attr_dict(p, r);
    expect_punct(p, '>');
  }
  if (at_punct(p, '(')) parse_region_list(p, r, capture_allowed);
  if (at_punct(p, '{')) parse_attr_dict(p, r);
  expect_punct(p, ':');
  parse_type_sig(p, r);
}

/* ------------------------------------------------------------ building */

static void check_operand_count(parser_t *p, raw_op_t *r, int want) {
  if (r->operand_count != want)
    fail_at(p, r->loc, "%s: expected %d operands, got %d", r->name, want, r->operand_count);
}

static hlo_dims_t ones_dims(parser_t *p, int n, int64_t value) {
  int64_t vals[HLO_MAX_RANK * 2] = {0};
  if (n > HLO_MAX_RANK * 2) n = HLO_MAX_RANK * 2;
  for (int i = 0; i < n; i++) vals[i] = value;
  hlo_dims_t d = hlo_dims_make(p->m, vals, n);
  if (n && !d.data) out_of_memory(p);
  if (!n) d.data = m_alloc(p, sizeof(int64_t));
  return d;
}

/* Defaults the spec gives to absent attributes: the window attributes,
 * and sort's dimension (-1, the last; |has_dimension|: one was written). */
static void apply_defaults(parser_t *p, hlo_opcode_t op, hlo_attrs_t *a, const hlo_shape_t *operand0,
                           bool has_dimension) {
  int rank = operand0 ? operand0->rank : 0;
  if (op == HLO_OPCODE_SORT) {
    if (!has_dimension) a->dimension = -1;
  } else if (op == HLO_OPCODE_CONVOLUTION) {
    int n = a->input_spatial_dimensions.count;
    if (!a->window_strides.data) a->window_strides = ones_dims(p, n, 1);
    if (!a->padding.data) a->padding = ones_dims(p, 2 * n, 0);
    if (!a->lhs_dilation.data) a->lhs_dilation = ones_dims(p, n, 1);
    if (!a->rhs_dilation.data) a->rhs_dilation = ones_dims(p, n, 1);
    if (!a->window_reversal.data) a->window_reversal = ones_dims(p, n, 0);
  } else if (op == HLO_OPCODE_REDUCE_WINDOW || op == HLO_OPCODE_SELECT_AND_SCATTER) {
    if (!a->window_strides.data) a->window_strides = ones_dims(p, rank, 1);
    if (!a->padding.data) a->padding = ones_dims(p, 2 * rank, 0);
    if (op == HLO_OPCODE_REDUCE_WINDOW) {
      if (!a->base_dilations.data) a->base_dilations = ones_dims(p, rank, 1);
      if (!a->window_dilations.data) a->window_dilations = ones_dims(p, rank, 1);
    }
  } else if (op == HLO_OPCODE_SLICE) {
    if (!a->strides.data) a->strides = ones_dims(p, rank, 1);
  } else if (op == HLO_OPCODE_PAD) {
    if (!a->interior_padding.data) a->interior_padding = ones_dims(p, rank, 0);
  }
}

/* Binds the op's result names: |instr| has |nres| results; for nres != 1
 * one get_tuple_element per result is emitted. */
typedef struct result_names {
  token_t *names;
  int *counts; /* %x:3 -> 3 */
  int count;   /* number of names */
  int total;   /* sum of counts */
} result_names_t;

static void bind_results(parser_t *p, const result_names_t *rn, hlo_instruction_t **vals, int nres,
                         hlo_location_t loc) {
  if (rn->count == 0) return;
  if (rn->total != nres) fail_at(p, loc, "op has %d results but %d names", nres, rn->total);
  int k = 0;
  for (int i = 0; i < rn->count; i++) {
    binding_t *b = scope_insert(p, p->scope, rn->names[i].start, rn->names[i].len);
    b->count = rn->counts[i];
    if (rn->counts[i] == 1) {
      b->single = vals[k];
      b->results = NULL;
    } else {
      b->single = NULL;
      b->results = t_alloc(p, sizeof(void *) * (size_t)rn->counts[i]);
      for (int j = 0; j < rn->counts[i]; j++) b->results[j] = vals[k + j];
    }
    k += rn->counts[i];
  }
}

/* The results of |in| bound to the op's names; with |types| (the declared
 * result types), each result a quantized type names holds its storage
 * values with that quantization. */
static void emit_typed_results(parser_t *p, const result_names_t *rn, hlo_instruction_t *in, int nres,
                               hlo_location_t loc, const hlo_shape_t *types) {
  hlo_instruction_t **vals = t_alloc(p, sizeof(void *) * (size_t)(nres ? nres : 1));
  if (nres == 1) {
    vals[0] = in;
  } else {
    for (int k = 0; k < nres; k++) {
      vals[k] = emit(p, HLO_OPCODE_GET_TUPLE_ELEMENT, &in->shape.tuple_shapes[k], 1, &in, loc);
      vals[k]->attrs.index = k;
    }
  }
  for (int k = 0; types && k < nres; k++)
    if (types[k].quant) set_value_quant(p, vals[k], types[k].quant);
  bind_results(p, rn, vals, nres, loc);
}

static void emit_results(parser_t *p, const result_names_t *rn, hlo_instruction_t *in, int nres,
                         hlo_location_t loc) {
  emit_typed_results(p, rn, in, nres, loc, NULL);
}

/* The computation of function |name|, parsed on first use; a function
 * whose signature is dynamic is parsed anew for the shapes of |operands|
 * (|n| of them; NULL where the caller passes none). */
static hlo_computation_t *function_computation(parser_t *p, const char *name, size_t len, hlo_location_t loc,
                                               hlo_instruction_t *const *operands, int n) {
  func_info_t *f = find_func(p, name, len);
  if (!f) fail_at(p, loc, "undefined function '@%.*s'", (int)len, name);
  if (!f->has_body) fail_at(p, loc, "function '@%.*s' has no body", (int)len, name);
  if (f->state == 1) fail_at(p, loc, "recursive call to '@%.*s' cannot be inlined", (int)len, name);
  if (f->dynamic) {
    hlo_shape_t *shapes = t_alloc(p, sizeof(hlo_shape_t) * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) shapes[i] = operands[i]->shape;
    parse_function(p, f, shapes, n, operands);
  } else if (f->state == 0) {
    parse_function(p, f, NULL, 0, NULL);
  }
  return f->comp;
}

static void build_call(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  if (!r->symbol) fail_at(p, r->loc, "call needs a callee (@name)");
  func_info_t *f = find_func(p, r->symbol, r->symbol_len);
  hlo_computation_t *callee = function_computation(p, r->symbol, r->symbol_len, r->loc, r->operands, r->operand_count);
  if (callee->parameter_count != r->operand_count)
    fail_at(p, r->loc, "call to '@%.*s': expected %d operands, got %d", (int)r->symbol_len, r->symbol,
            callee->parameter_count, r->operand_count);
  for (int i = 0; i < r->operand_count; i++) {
    if (!hlo_shape_equal(&callee->parameters[i]->shape, &r->operands[i]->shape)) {
      char a[128], b[128];
      hlo_shape_to_string(&r->operands[i]->shape, a, sizeof a);
      hlo_shape_to_string(&callee->parameters[i]->shape, b, sizeof b);
      fail_at(p, r->loc, "call to '@%.*s': operand %d is %s but the function takes %s",
              (int)r->symbol_len, r->symbol, i, a, b);
    }
  }
  int nres = f->result_count;
  hlo_instruction_t **vals = t_alloc(p, sizeof(void *) * (size_t)(nres > 0 ? nres : 1));
  if (!hlo_computation_inline(p->m, p->scope->comp, callee, r->operands, nres != 1, vals))
    out_of_memory(p);
  if (r->has_types && r->out_count != nres && r->has_arrow)
    fail_at(p, r->loc, "call to '@%.*s' expects %d results but the function returns %d",
            (int)r->symbol_len, r->symbol, r->out_count, nres);
  for (int k = 0; r->has_types && r->has_arrow && k < nres; k++)
    if (r->out_types[k].quant) set_value_quant(p, vals[k], r->out_types[k].quant);
  bind_results(p, rn, vals, nres, r->loc);
}

/* "interpreter.run_parallel"(%args...) {programs = [[@f, ...], ...], infeed = [@g, ...]}
 * The reference interpreter's grid of processes (hlo/run_parallel.c): row
 * r of programs is replica r, column p partition p; the operands are each
 * process's arguments in process order (replica-major), the results each
 * process's results in the same order. */
/* The computations of the functions |list| names (parsed on demand) and
 * their result counts, into arrays of the parser's scratch. */
static hlo_computation_t **list_functions(parser_t *p, const symbol_list_t *list, hlo_location_t loc,
                                          int **result_counts) {
  size_t n = (size_t)(list->count ? list->count : 1);
  hlo_computation_t **fns = t_alloc(p, sizeof(void *) * n);
  *result_counts = t_alloc(p, sizeof(int) * n);
  for (int i = 0; i < list->count; i++) {
    fns[i] = function_computation(p, list->names[i], list->lens[i], loc, NULL, 0);
    (*result_counts)[i] = find_func(p, list->names[i], list->lens[i])->result_count;
  }
  return fns;
}

static void build_run_parallel(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  int count = r->programs.count;
  if (!count) fail_at(p, r->loc, "interpreter.run_parallel needs programs = [[@function, ...], ...]");
  int *result_counts, *infeed_results;
  hlo_computation_t **programs = list_functions(p, &r->programs, r->loc, &result_counts);
  int args = 0, results = 0;
  for (int i = 0; i < count; i++) {
    args += programs[i]->parameter_count;
    results += result_counts[i];
  }
  if (args != r->operand_count)
    fail_at(p, r->loc, "interpreter.run_parallel: the programs take %d arguments in all, got %d operands", args,
            r->operand_count);
  for (int i = 0, a = 0; i < count; i++)
    for (int k = 0; k < programs[i]->parameter_count; k++, a++)
      if (!hlo_shape_equal(&programs[i]->parameters[k]->shape, &r->operands[a]->shape))
        fail_at(p, r->loc, "interpreter.run_parallel: operand %d goes to argument %d of '@%s' (process %d), "
                "whose type differs", a, k, programs[i]->name, i);
  hlo_computation_t **infeed = list_functions(p, &r->infeed, r->loc, &infeed_results);
  hlo_run_parallel_t rp = {
      .num_replicas = r->program_rows, .num_partitions = r->program_cols, .programs = programs,
      .result_counts = result_counts, .args = r->operands, .infeed = infeed,
      .infeed_result_counts = infeed_results, .infeed_count = r->infeed.count, .loc = r->loc};
  hlo_instruction_t **vals = t_alloc(p, sizeof(void *) * (size_t)(results ? results : 1));
  vkhlo_status_t st = hlo_run_parallel(p->m, p->scope->comp, &rp, vals);
  if (st) {
    p->err = st;
    longjmp(p->jb, 1);
  }
  bind_results(p, rn, vals, results, r->loc);
}

static hlo_instruction_t *emit_check(parser_t *p, raw_op_t *r, hlo_check_kind_t kind,
                                     hlo_instruction_t *actual, hlo_instruction_t *expected) {
  hlo_shape_t empty;
  hlo_shape_make_tuple(p->m, &empty, 0, NULL);
  hlo_instruction_t *ops[2] = {actual, expected};
  hlo_instruction_t *in = emit(p, HLO_OPCODE_CHECK, &empty, 2, ops, r->loc);
  in->attrs = r->attrs;
  in->attrs.check_kind = kind;
  return in;
}

static bool check_kind_of(const char *name, hlo_check_kind_t *kind, bool *is_const) {
  static const struct {
    const char *name;
    hlo_check_kind_t kind;
    bool is_const;
  } checks[] = {
      {"check.expect_eq", HLO_CHECK_EXPECT_EQ, false},
      {"check.expect_eq_const", HLO_CHECK_EXPECT_EQ, true},
      {"check.expect_almost_eq", HLO_CHECK_EXPECT_ALMOST_EQ, false},
      {"check.expect_almost_eq_const", HLO_CHECK_EXPECT_ALMOST_EQ, true},
      {"check.expect_close", HLO_CHECK_EXPECT_CLOSE, false},
  };
  for (int i = 0; i < COUNT(checks); i++) {
    if (!strcmp(checks[i].name, name)) {
      *kind = checks[i].kind;
      *is_const = checks[i].is_const;
      return true;
    }
  }
  return false;
}

/* interpreter.probe %v, probe_id = "id" : T
 * The reference interpreter's probe: returns %v and records it under "id"
 * (the interpreter writes it to a file).  Here the recorded value is the
 * instruction itself, compared by check.expect_serialized_eq below. */
static void build_probe(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  check_operand_count(p, r, 1);
  if (!r->probe_id) fail_at(p, r->loc, "interpreter.probe needs a probe_id");
  t_grow(p, (void **)&p->probes, &p->probe_cap, p->probe_count + 1, sizeof(probe_t));
  p->probes[p->probe_count++] = (probe_t){r->probe_id, r->operands[0], p->scope->comp};
  bind_results(p, rn, r->operands, 1, r->loc);
}

/* check.expect_serialized_eq %v, probe_id = "id"[, iter = N] : T
 * Checks that %v equals the value last probed under "id".  Supported when
 * that probe ran once, in the same function (no iter); values probed in a
 * loop body (iter = N) are per-iteration files we do not keep. */
static void build_probe_check(parser_t *p, raw_op_t *r) {
  check_operand_count(p, r, 1);
  if (!r->probe_id) fail_at(p, r->loc, "check.expect_serialized_eq needs a probe_id");
  const probe_t *found = NULL;
  for (int i = 0; i < p->probe_count; i++)
    if (!strcmp(p->probes[i].id, r->probe_id)) found = &p->probes[i];
  if (!found) fail_at(p, r->loc, "no interpreter.probe with probe_id \"%s\"", r->probe_id);
  if (r->has_probe_iter || found->comp != p->scope->comp) {
    fail_code_at(p, VKHLO_STATUS_UNIMPLEMENTED, r->loc,
                 "check.expect_serialized_eq of a value probed in another region (per-iteration probes are not kept)");
  }
  emit_check(p, r, HLO_CHECK_EXPECT_EQ, r->operands[0], found->value);
}

static void build_check(parser_t *p, raw_op_t *r, const char *name) {
  hlo_check_kind_t kind = HLO_CHECK_EXPECT_EQ;
  bool is_const = false;
  check_kind_of(name, &kind, &is_const);
  if (is_const) {
    check_operand_count(p, r, 1);
    if (!r->pending.present) fail_at(p, r->loc, "%s needs a dense literal", name);
    if (r->in_count < 1) fail_at(p, r->loc, "%s needs a type", name);
    hlo_literal_t *lit = build_literal(p, &r->pending, &r->in_types[0]);
    hlo_instruction_t *c = emit(p, HLO_OPCODE_CONSTANT, &lit->shape, 0, NULL, r->pending.loc);
    c->literal = lit;
    emit_check(p, r, kind, r->operands[0], c);
  } else {
    check_operand_count(p, r, 2);
    emit_check(p, r, kind, r->operands[0], r->operands[1]);
  }
}

/* Region-taking ops and whether their regions may capture values. */
static bool op_allows_capture(hlo_opcode_t op) {
  return op == HLO_OPCODE_WHILE || op == HLO_OPCODE_IF || op == HLO_OPCODE_CASE;
}

/* Result types: from "-> results" when present; else the op's own rule. */
static void result_types(parser_t *p, raw_op_t *r, hlo_opcode_t op, hlo_shape_t **types, int *count) {
  if (!r->has_types) fail_at(p, r->loc, "%s: missing type", r->name);
  if (r->has_arrow) {
    *types = r->out_types;
    *count = r->out_count;
    return;
  }
  if (op == HLO_OPCODE_WHILE || op == HLO_OPCODE_OPTIMIZATION_BARRIER) {
    *types = r->in_types;
    *count = r->in_count;
    return;
  }
  *types = &r->in_types[r->in_count - 1];
  *count = 1;
}

/* ================================================== quantized types */

/* A quantized value is its storage values (the parser records which
 * quantization they carry, per instruction), and the ops on it are the
 * spec's definitions made explicit: uniform_quantize and
 * uniform_dequantize become their arithmetic, bitcast_convert to or from
 * the storage type is the storage value, and any other op dequantizes its
 * quantized operands, runs on the expressed type and quantizes its result
 * (spec "dequantize_op_quantize", also "hybrid_dequantize_then_op" and
 * dequantize_compare).  Per-axis quantization broadcasts its scales and
 * zero points along the quantization dimension. */

static void set_value_quant(parser_t *p, const hlo_instruction_t *in, const hlo_quant_t *q) {
  if (in->id >= p->quant_cap) {
    int cap = p->quant_cap;
    t_grow(p, (void **)&p->quant_of, &cap, in->id + 1, sizeof *p->quant_of);
    memset(p->quant_of + p->quant_cap, 0, sizeof *p->quant_of * (size_t)(cap - p->quant_cap));
    p->quant_cap = cap;
  }
  p->quant_of[in->id] = q;
}

static const hlo_quant_t *value_quant(const parser_t *p, const hlo_instruction_t *in) {
  return in->id < p->quant_cap ? p->quant_of[in->id] : NULL;
}

/* |q|'s scales (or zero points, or one value |v| when count 0) as type
 * |t| broadcast to |like|'s dimensions. */
static hlo_instruction_t *quant_param(parser_t *p, const hlo_quant_t *q, bool zero_points, int count, double v,
                                      const hlo_shape_t *like, hlo_element_type_t t, hlo_location_t loc) {
  bool wide = t == HLO_F64;
  int n = count ? count : 1;
  void *data = t_alloc(p, (size_t)n * (wide ? 8 : 4));
  for (int i = 0; i < n; i++) {
    double x = !count ? v : zero_points ? (double)q->zero_points[i] : q->scales[i];
    if (wide) ((double *)data)[i] = x;
    else ((float *)data)[i] = (float)x;
  }
  int64_t dim = n;
  hlo_shape_t cs;
  hlo_shape_init(&cs, wide ? HLO_F64 : HLO_F32, count && q->axis >= 0 ? 1 : 0, &dim); /* per axis: a vector */
  hlo_instruction_t *c = hlo_constant_create(p->m, &cs, data);
  if (!c || !hlo_computation_append(p->m, p->scope->comp, c)) out_of_memory(p);
  c->loc = loc;
  if (!wide && t != HLO_F32) {
    hlo_shape_t ts = cs;
    ts.element_type = t;
    c = emit(p, HLO_OPCODE_CONVERT, &ts, 1, &c, loc);
  }
  hlo_shape_t bs;
  hlo_shape_init(&bs, t, like->rank, like->dimensions);
  hlo_instruction_t *b = emit(p, HLO_OPCODE_BROADCAST_IN_DIM, &bs, 1, &c, loc);
  if (cs.rank == 1) {
    int64_t axis = q->axis;
    b->attrs.broadcast_dimensions = hlo_dims_make(p->m, &axis, 1);
    if (!b->attrs.broadcast_dimensions.data) out_of_memory(p);
  }
  return b;
}

static hlo_instruction_t *emit_binary(parser_t *p, hlo_opcode_t op, hlo_instruction_t *a, hlo_instruction_t *b,
                                      hlo_location_t loc) {
  hlo_instruction_t *ops[2] = {a, b};
  return emit(p, op, &a->shape, 2, ops, loc);
}

/* spec 'dequantize': (storage - zero_point) * scale in the expressed type
 * (the difference is taken there: exact, and no wrap-around). */
static hlo_instruction_t *emit_dequantize(parser_t *p, hlo_instruction_t *v, const hlo_quant_t *q,
                                          hlo_location_t loc) {
  hlo_shape_t fs = v->shape;
  fs.element_type = q->expressed;
  hlo_instruction_t *x = emit(p, HLO_OPCODE_CONVERT, &fs, 1, &v, loc);
  x = emit_binary(p, HLO_OPCODE_SUBTRACT, x, quant_param(p, q, true, q->count, 0, &fs, q->expressed, loc), loc);
  return emit_binary(p, HLO_OPCODE_MULTIPLY, x, quant_param(p, q, false, q->count, 0, &fs, q->expressed, loc), loc);
}

/* spec 'quantize': round_nearest_even(clamp(min, x / scale + zero_point,
 * max)) in the expressed type, converted to the storage type. */
static hlo_instruction_t *emit_quantize(parser_t *p, hlo_instruction_t *x, const hlo_quant_t *q,
                                        hlo_location_t loc) {
  hlo_element_type_t e = q->expressed;
  if (x->shape.element_type != e) {
    hlo_shape_t es = x->shape;
    es.element_type = e;
    x = emit(p, HLO_OPCODE_CONVERT, &es, 1, &x, loc);
  }
  const hlo_shape_t *s = &x->shape;
  x = emit_binary(p, HLO_OPCODE_DIVIDE, x, quant_param(p, q, false, q->count, 0, s, e, loc), loc);
  x = emit_binary(p, HLO_OPCODE_ADD, x, quant_param(p, q, true, q->count, 0, s, e, loc), loc);
  hlo_instruction_t *ops[3] = {quant_param(p, q, false, 0, (double)q->storage_min, s, e, loc), x,
                               quant_param(p, q, false, 0, (double)q->storage_max, s, e, loc)};
  x = emit(p, HLO_OPCODE_CLAMP, s, 3, ops, loc);
  x = emit(p, HLO_OPCODE_ROUND_NEAREST_EVEN, s, 1, &x, loc);
  hlo_shape_t st = *s;
  st.element_type = q->storage;
  return emit(p, HLO_OPCODE_CONVERT, &st, 1, &x, loc);
}

/* Before an op is built: the quantize / dequantize / storage bitcasts are
 * built here whole (true: done, results bound); any other op with
 * quantized operands gets them dequantized, and a quantized result's type
 * becomes its expressed type, with *requantize set to quantize the
 * result once it is built. */
/* Ops whose quantized values are their storage values moved, selected or
 * folded by their regions: control flow and the optimization barrier pass
 * them on, sort orders them by its comparator, and the reductions,
 * scatters and map combine them through their bodies, whose ops on
 * quantized values are then the spec's dequantize-op-quantize (the
 * regions' parameters carry the quantization).  Results take the declared
 * quantization (emit_results). */
static bool moves_quantized_values(hlo_opcode_t op) {
  switch (op) {
    case HLO_OPCODE_WHILE: case HLO_OPCODE_IF: case HLO_OPCODE_CASE: case HLO_OPCODE_OPTIMIZATION_BARRIER:
    case HLO_OPCODE_SORT: case HLO_OPCODE_REDUCE: case HLO_OPCODE_REDUCE_WINDOW: case HLO_OPCODE_SCATTER:
    case HLO_OPCODE_SELECT_AND_SCATTER: case HLO_OPCODE_ALL_REDUCE: case HLO_OPCODE_REDUCE_SCATTER:
    case HLO_OPCODE_MAP: case HLO_OPCODE_TUPLE: case HLO_OPCODE_GET_TUPLE_ELEMENT:
      return true;
    default:
      return false;
  }
}

static bool quantized_prologue(parser_t *p, raw_op_t *r, hlo_opcode_t op, hlo_shape_t *types, int nres,
                               const result_names_t *rn, const hlo_quant_t **requantize) {
  *requantize = NULL;
  bool any = false;
  for (int i = 0; i < r->operand_count; i++) any |= value_quant(p, r->operands[i]) != NULL;
  for (int k = 0; k < nres; k++) any |= types[k].quant != NULL;
  if (!any || op == HLO_OPCODE_CONSTANT) return false;
  if (moves_quantized_values(op)) return false; /* storage values in and out (see there) */
  if (nres != 1 || r->region_count || op == HLO_OPCODE_CUSTOM_CALL || op == HLO_OPCODE_COMPOSITE)
    fail_code_at(p, VKHLO_STATUS_UNIMPLEMENTED, r->loc,
                 "%s on quantized values: only ops of one result and no region are supported", r->name);
  const hlo_quant_t *rq = types[0].quant;
  hlo_instruction_t *v = NULL;
  if (op == HLO_OPCODE_UNIFORM_QUANTIZE || op == HLO_OPCODE_UNIFORM_DEQUANTIZE ||
      op == HLO_OPCODE_BITCAST_CONVERT) {
    if (r->operand_count != 1) fail_at(p, r->loc, "%s takes one operand", r->name);
    hlo_instruction_t *x = r->operands[0];
    const hlo_quant_t *xq = value_quant(p, x);
    if (op == HLO_OPCODE_UNIFORM_QUANTIZE) {
      if (!rq) fail_at(p, r->loc, "uniform_quantize's result must be quantized");
      v = emit_quantize(p, xq ? emit_dequantize(p, x, xq, r->loc) : x, rq, r->loc);
    } else if (op == HLO_OPCODE_UNIFORM_DEQUANTIZE) {
      if (!xq || rq || !hlo_element_type_is_float(types[0].element_type))
        fail_at(p, r->loc, "uniform_dequantize takes a quantized operand to a float result");
      v = emit_dequantize(p, x, xq, r->loc);
      if (types[0].element_type != xq->expressed) v = emit(p, HLO_OPCODE_CONVERT, &types[0], 1, &v, r->loc);
    } else { /* bitcast_convert: between a quantized type and its storage */
      v = x->shape.element_type == types[0].element_type ? x
                                                         : emit(p, HLO_OPCODE_BITCAST_CONVERT, &types[0], 1, &x, r->loc);
    }
    if (rq) set_value_quant(p, v, rq);
    bind_results(p, rn, &v, 1, r->loc);
    return true;
  }
  for (int i = 0; i < r->operand_count; i++) {
    const hlo_quant_t *q = value_quant(p, r->operands[i]);
    if (q) r->operands[i] = emit_dequantize(p, r->operands[i], q, r->loc);
  }
  if (rq) {
    types[0].element_type = rq->expressed;
    types[0].quant = NULL;
  }
  *requantize = rq;
  return false;
}

static void shape_assertion(parser_t *p, raw_op_t *r);
static void custom_call_result_shapes(parser_t *p, raw_op_t *r);
static void dynamic_custom_call(parser_t *p, raw_op_t *r, const result_names_t *rn, const char *target);
static void mhlo_topk(parser_t *p, raw_op_t *r, const result_names_t *rn);
static void known_shape_operands(parser_t *p, raw_op_t *r, hlo_opcode_t op);
static void build_hlo(parser_t *p, raw_op_t *r, hlo_opcode_t op, const result_names_t *rn);

/* The one result type of |r| (its last type when it has no arrow), refined
 * to the static shape |s| where declared dynamic. */
static hlo_shape_t single_result(parser_t *p, raw_op_t *r, const hlo_shape_t *s) {
  if (!r->has_types) fail_at(p, r->loc, "%s: missing type", r->name);
  if (r->has_arrow && r->out_count != 1) fail_at(p, r->loc, "%s has one result", r->name);
  hlo_shape_t t = r->has_arrow ? r->out_types[0] : r->in_types[r->in_count - 1];
  if (t.element_type == HLO_TUPLE || t.rank != s->rank)
    fail_at(p, r->loc, "%s: the result's rank differs from the operand's", r->name);
  for (int d = 0; d < t.rank; d++)
    if (t.dimensions[d] != HLO_DYNAMIC_DIM && t.dimensions[d] != s->dimensions[d])
      fail_at(p, r->loc, "%s: the result's shape differs from the operand's", r->name);
  hlo_shape_init(&t, t.element_type, s->rank, s->dimensions);
  return t;
}

/* Skips tokens up to the next |stop| outside brackets (Shardy's shardings:
 * <@mesh, [{"x"}, {}]>, [<@mesh, ...>, ...], {"x"}, allowed_direction=NONE). */
static void skip_to_punct(parser_t *p, char stop) {
  while (!at_punct(p, stop)) {
    if (tok(p)->kind == TK_EOF) fail_expected(p, "':' and a type");
    if (tok(p)->kind == TK_PUNCT && strchr("([{<", tok(p)->start[0])) skip_balanced(p);
    else lex_next(p);
  }
}

/* Shardy (sdy) ops as JAX writes them with its Shardy partitioner:
 *   sdy.sharding_constraint %v <@mesh, [{"x"}, {}]> : T   (also reshard,
 *   propagation_barrier %v allowed_direction=..., data_flow_edge, and
 *   sharding_group %v group_id=N, which has no result)
 *   sdy.named_computation<"name">(%a...) [in_shardings=...] [out_shardings=...]
 *       (%arg: T, ...) { ... sdy.return %r : R } : (T...) -> (R...)
 *   sdy.manual_computation(%a...) in_shardings=... out_shardings=...
 *       manual_axes={...} (%arg: T, ...) { ... } : (T...) -> (R...) */
static void parse_sdy(parser_t *p, raw_op_t *r, op_kind_t kind) {
  if (kind != OPK_SDY_REGION) {
    raw_push_operand(p, r, parse_value_use(p));
    skip_to_punct(p, ':');
    lex_next(p);
    parse_type_sig(p, r);
    return;
  }
  if (at_punct(p, '<')) skip_balanced(p); /* named_computation's name */
  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do raw_push_operand(p, r, parse_value_use(p));
    while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  /* the shardings and manual axes, up to the block arguments' '(' */
  while (!at_punct(p, '(') && !at_punct(p, '{')) {
    if (tok(p)->kind == TK_EOF) fail_expected(p, "the region's arguments");
    if (tok(p)->kind == TK_PUNCT && strchr("[<", tok(p)->start[0])) skip_balanced(p);
    else if (tok(p)->kind == TK_IDENT && tok_text_is(tok(p), "manual_axes")) {
      lex_next(p);
      expect_punct(p, '=');
      skip_balanced(p);
    } else lex_next(p);
  }
  int n = 0;
  block_arg_t *args = parse_block_args(p, &n);
  parse_region(p, r, "body", false, args, n);
  if (at_punct(p, '{')) parse_attr_dict(p, r);
  expect_punct(p, ':');
  parse_type_sig(p, r);
}

/* A named or manual computation runs its body on the operands (inlined).
 * A manual computation's body works on each device's part of the values
 * (its arguments' types); on one device that is the whole value, so a body
 * whose argument types are not the operands' is a program for several
 * devices: UNIMPLEMENTED. */
static void build_sdy_region(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  hlo_computation_t *body = r->regions[0].comp;
  if (body->parameter_count != r->operand_count)
    fail_at(p, r->loc, "%s: the body takes %d arguments but the op has %d operands", r->name, body->parameter_count,
            r->operand_count);
  for (int i = 0; i < r->operand_count; i++)
    if (!hlo_shape_equal(&body->parameters[i]->shape, &r->operands[i]->shape)) {
      char a[128], b[128];
      hlo_shape_to_string(&r->operands[i]->shape, a, sizeof a);
      hlo_shape_to_string(&body->parameters[i]->shape, b, sizeof b);
      fail_code_at(p, VKHLO_STATUS_UNIMPLEMENTED, r->loc,
                   "%s: operand %d is %s but the body takes %s (each device's part: a program for several "
                   "devices, and vkhlo runs one)", r->name, i, a, b);
    }
  if (!body->root) fail_at(p, r->loc, "%s: the body returns nothing", r->name);
  int nres = hlo_shape_is_tuple(&body->root->shape) && body->root->opcode == HLO_OPCODE_TUPLE
                 ? body->root->operand_count : 1;
  hlo_instruction_t **vals = t_alloc(p, sizeof(void *) * (size_t)(nres ? nres : 1));
  if (!hlo_computation_inline(p->m, p->scope->comp, body, r->operands, nres != 1, vals)) out_of_memory(p);
  if (r->has_types && r->has_arrow && r->out_count != nres)
    fail_at(p, r->loc, "%s: the body returns %d values, %d results declared", r->name, nres, r->out_count);
  for (int k = 0; r->has_types && r->has_arrow && k < nres; k++)
    if (!hlo_shape_equal(&r->out_types[k], &vals[k]->shape)) {
      char a[128], b[128];
      hlo_shape_to_string(&vals[k]->shape, a, sizeof a);
      hlo_shape_to_string(&r->out_types[k], b, sizeof b);
      fail_code_at(p, VKHLO_STATUS_UNIMPLEMENTED, r->loc,
                   "%s: the body returns %s for result %d, declared %s (a program for several devices)", r->name, a,
                   k, b);
    }
  bind_results(p, rn, vals, nres, r->loc);
}

/* "stablehlo.async_start"(%x...) ({ [^bb0(%a...):] op; return }) :
 *     (T...) -> !stablehlo.future<R...>
 * (spec "async_start"): the body's one collective or slice runs where the
 * op stands (a backend may run it synchronously; one device runs its
 * collectives at once anyway), and the future is its values: the body is
 * inlined, its block arguments bound to the operands (or, without
 * arguments, the values it captures). */
static void build_async_start(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  if (r->region_count != 1) fail_at(p, r->loc, "%s: expected 1 region, got %d", r->name, r->region_count);
  int given = r->operand_count;
  finish_captures(p, r);
  region_t *rg = &r->regions[0];
  hlo_computation_t *body = rg->comp;
  if (rg->normal_params && rg->normal_params != given)
    fail_at(p, r->loc, "%s: the body takes %d arguments but the op has %d operands", r->name, rg->normal_params, given);
  for (int i = 0; i < rg->normal_params; i++)
    if (!hlo_shape_equal(&body->parameters[i]->shape, &r->operands[i]->shape))
      fail_at(p, r->loc, "%s: the body's argument %d does not have operand %d's type", r->name, i, i);
  hlo_instruction_t **args = t_alloc(p, sizeof(void *) * (size_t)(body->parameter_count ? body->parameter_count : 1));
  for (int i = 0; i < body->parameter_count; i++)
    args[i] = r->operands[i < rg->normal_params ? i : given + (i - rg->normal_params)];
  hlo_instruction_t *v = NULL;
  if (!body->root) fail_at(p, r->loc, "%s: the body returns nothing", r->name);
  if (!hlo_computation_inline(p->m, p->scope->comp, body, args, false, &v)) out_of_memory(p);
  if (r->has_types && r->has_arrow && (r->out_count != 1 || !hlo_shape_equal(&r->out_types[0], &v->shape)))
    fail_at(p, r->loc, "%s: the result is not a future of the body's values", r->name);
  emit_results(p, rn, v, 1, r->loc);
}

/* "stablehlo.async_done"(%f) : (!stablehlo.future<R...>) -> (R...): the
 * future's values. */
static void build_async_done(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  check_operand_count(p, r, 1);
  hlo_instruction_t *f = r->operands[0];
  int n = hlo_shape_is_tuple(&f->shape) ? f->shape.tuple_count : 1;
  if (r->has_types && r->has_arrow && r->out_count != n)
    fail_at(p, r->loc, "%s: the future holds %d values, %d results declared", r->name, n, r->out_count);
  if (n == 1) {
    bind_results(p, rn, &f, 1, r->loc);
    return;
  }
  hlo_instruction_t **vals = t_alloc(p, sizeof(void *) * (size_t)n);
  for (int k = 0; k < n; k++) {
    vals[k] = emit(p, HLO_OPCODE_GET_TUPLE_ELEMENT, &f->shape.tuple_shapes[k], 1, &f, r->loc);
    vals[k]->attrs.index = k;
  }
  bind_results(p, rn, vals, n, r->loc);
}

/* chlo.square %x : T -> T: x * x; for complex x the CHLO definition
 * complex((re - im) * (re + im), re * im * 2). */
static void build_square(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  check_operand_count(p, r, 1);
  hlo_instruction_t *x = r->operands[0], *y;
  hlo_shape_t t = single_result(p, r, &x->shape);
  if (t.element_type != x->shape.element_type) fail_at(p, r->loc, "%s: the result's element type differs", r->name);
  if (!hlo_element_type_is_complex(t.element_type)) {
    hlo_instruction_t *xx[2] = {x, x};
    y = emit(p, HLO_OPCODE_MULTIPLY, &t, 2, xx, r->loc);
  } else {
    hlo_shape_t part = t;
    part.element_type = hlo_element_type_real(t.element_type);
    hlo_instruction_t *re = emit(p, HLO_OPCODE_REAL, &part, 1, &x, r->loc);
    hlo_instruction_t *im = emit(p, HLO_OPCODE_IMAG, &part, 1, &x, r->loc);
    hlo_instruction_t *d = emit_binary(p, HLO_OPCODE_SUBTRACT, re, im, r->loc);
    hlo_instruction_t *s = emit_binary(p, HLO_OPCODE_ADD, re, im, r->loc);
    hlo_instruction_t *ri = emit_binary(p, HLO_OPCODE_MULTIPLY, re, im, r->loc);
    hlo_instruction_t *parts[2] = {emit_binary(p, HLO_OPCODE_MULTIPLY, d, s, r->loc),
                                   emit_binary(p, HLO_OPCODE_ADD, ri, ri, r->loc)}; /* 2 re im, exactly */
    y = emit(p, HLO_OPCODE_COMPLEX, &t, 2, parts, r->loc);
  }
  emit_results(p, rn, y, 1, r->loc);
}

/* "chlo.constant_like"(%x) {value = V : T}: V splat to the result's type,
 * which has the operand's shape. */
static void build_constant_like(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  check_operand_count(p, r, 1);
  if (!r->has_scalar_value && !r->literal) fail_at(p, r->loc, "%s needs a value", r->name);
  hlo_shape_t t = single_result(p, r, &r->operands[0]->shape), scalar;
  hlo_shape_init(&scalar, t.element_type, 0, NULL);
  hlo_literal_t *l = r->literal;
  if (l && (l->shape.element_type != t.element_type || hlo_shape_element_count(&l->shape) != 1))
    fail_at(p, r->loc, "%s: the value is not one %s", r->name, hlo_element_type_name(t.element_type));
  if (!l) {
    l = m_alloc(p, sizeof *l);
    l->shape = scalar;
    l->size_bytes = hlo_element_type_size_bytes(t.element_type);
    l->data = m_alloc(p, l->size_bytes);
    lexer_t saved = p->lx;
    p->lx = r->scalar_value;
    parse_scalar_elem(p, t.element_type, l->data);
    p->lx = saved;
  }
  l->shape = scalar;
  hlo_instruction_t *c = emit(p, HLO_OPCODE_CONSTANT, &scalar, 0, NULL, r->loc);
  c->literal = l;
  hlo_instruction_t *b = emit(p, HLO_OPCODE_BROADCAST_IN_DIM, &t, 1, &c, r->loc);
  b->attrs.broadcast_dimensions.data = m_alloc(p, sizeof(int64_t));
  emit_results(p, rn, b, 1, r->loc);
}

/* chlo.broadcast_X %lhs, %rhs {broadcast_dimensions = [...]} (CHLO's
 * "CHLO_Broadcasting" ops, as TensorFlow's legalization writes them; also
 * broadcast_select %pred, %t, %f): X of the operands broadcast to a common
 * shape, numpy-style.  The result has the largest operand rank; an operand
 * of lower rank maps its dimensions onto the result's trailing ones, or
 * onto broadcast_dimensions where given (binary ops); along each result
 * dimension the operands' sizes agree or are 1.  Each operand not of the
 * result's shape goes through broadcast_in_dim, then X is built as usual. */
static void build_broadcasting(parser_t *p, raw_op_t *r, hlo_opcode_t op, const result_names_t *rn) {
  int n = op == HLO_OPCODE_SELECT ? 3 : 2;
  check_operand_count(p, r, n);
  int rank = 0;
  for (int i = 0; i < n; i++)
    if (r->operands[i]->shape.rank > rank) rank = r->operands[i]->shape.rank;
  const hlo_dims_t *bd = &r->attrs.broadcast_dimensions;
  int64_t map[3][HLO_MAX_RANK], dims[HLO_MAX_RANK];
  for (int d = 0; d < rank; d++) dims[d] = 1;
  for (int i = 0; i < n; i++) {
    const hlo_shape_t *s = &r->operands[i]->shape;
    bool given = n == 2 && bd->count && s->rank < rank;
    if (given && bd->count != s->rank)
      fail_at(p, r->loc, "%s: broadcast_dimensions has %d values for an operand of rank %d", r->name, bd->count,
              s->rank);
    for (int d = 0; d < s->rank; d++) {
      map[i][d] = given ? bd->data[d] : rank - s->rank + d;
      if (map[i][d] < 0 || map[i][d] >= rank || (d && map[i][d] <= map[i][d - 1]))
        fail_at(p, r->loc, "%s: broadcast_dimensions must be increasing result dimensions", r->name);
      int64_t *to = &dims[map[i][d]], size = s->dimensions[d];
      if (*to != 1 && size != 1 && size != *to)
        fail_at(p, r->loc, "%s: operand %d's dimension %d (%lld) does not broadcast to %lld", r->name, i, d,
                (long long)size, (long long)*to);
      if (size != 1) *to = size;
    }
  }
  for (int i = 0; i < n; i++) {
    hlo_instruction_t *x = r->operands[i];
    hlo_shape_t to;
    hlo_shape_init(&to, x->shape.element_type, rank, dims);
    if (hlo_shape_equal(&to, &x->shape) || (op == HLO_OPCODE_SELECT && i == 0 && x->shape.rank == 0)) continue;
    hlo_instruction_t *b = emit(p, HLO_OPCODE_BROADCAST_IN_DIM, &to, 1, &x, r->loc);
    b->attrs.broadcast_dimensions = hlo_dims_make(p->m, map[i], x->shape.rank);
    if (x->shape.rank && !b->attrs.broadcast_dimensions.data) out_of_memory(p);
    if (!b->attrs.broadcast_dimensions.data) b->attrs.broadcast_dimensions.data = m_alloc(p, sizeof(int64_t));
    if (!hlo_refine_record(&p->refine, b)) out_of_memory(p);
    r->operands[i] = b;
  }
  memset(&r->attrs.broadcast_dimensions, 0, sizeof r->attrs.broadcast_dimensions);
  r->parenthesized_inputs = false; /* the types given are the operands' before broadcasting */
  build_hlo(p, r, op, rn);
}

static void build_hlo(parser_t *p, raw_op_t *r, hlo_opcode_t op, const result_names_t *rn) {
  /* custom_call @check.expect_*: a check op. */
  if (op == HLO_OPCODE_CUSTOM_CALL) {
    const char *target = r->attrs.call_target_name;
    char buf[64];
    if (r->symbol) {
      snprintf(buf, sizeof buf, "%.*s", (int)(r->symbol_len > 60 ? 60 : r->symbol_len), r->symbol);
      target = buf;
    }
    hlo_check_kind_t kind = HLO_CHECK_EXPECT_EQ;
    bool is_const = false;
    if (target && check_kind_of(target, &kind, &is_const) && !is_const) {
      check_operand_count(p, r, 2);
      emit_check(p, r, kind, r->operands[0], r->operands[1]);
      if (rn->count) fail_at(p, r->loc, "%s has no results", target);
      return;
    }
    if (r->shape_operands.count) custom_call_result_shapes(p, r);
    if (target && !strcmp(target, "stablehlo.shape_refinement_operand_wrapper")) {
      check_operand_count(p, r, 1);
      if (r->has_types && r->has_arrow && (r->out_count != 1 || !hlo_refine_fits(&r->operands[0]->shape, &r->out_types[0])))
        fail_at(p, r->loc, "%s: the result does not fit the operand's type", target);
      bind_results(p, rn, r->operands, 1, r->loc);
      return;
    }
    if (target && !strcmp(target, "stablehlo.dynamic_approx_top_k")) {
      /* jax.lax.approx_max_k / approx_min_k under shape polymorphism:
       * @ApproxTopK's operands (operand, its iota, two init values) and k,
       * whose extent the result types (from the shape operands) carry. */
      check_operand_count(p, r, 5);
      r->operand_count = 4;
      if (r->parenthesized_inputs && r->in_count == 5) r->in_count = 4;
      r->symbol = "ApproxTopK";
      r->symbol_len = 10;
      target = "ApproxTopK";
    }
    if (target && (!strcmp(target, "stablehlo.dynamic_reduce_window") || !strcmp(target, "stablehlo.dynamic_top_k") ||
                   !strcmp(target, "stablehlo.dynamic_rng_bit_generator"))) {
      dynamic_custom_call(p, r, rn, target);
      return;
    }
    if (target && (!strcmp(target, "mhlo.topk") || !strcmp(target, "TopK"))) {
      mhlo_topk(p, r, rn);
      return;
    }
    if (target && !strcmp(target, "shape_assertion")) {
      shape_assertion(p, r);
      if (rn->count) fail_at(p, r->loc, "%s has no results", target);
      return;
    }
    if (r->symbol) r->attrs.call_target_name = m_strndup(p, r->symbol, r->symbol_len);
  }

  int n_in = r->operand_count;
  if (r->parenthesized_inputs && r->in_count != n_in)
    fail_at(p, r->loc, "%s: expected %d operands, got %d", r->name, r->in_count, n_in);
  /* as MLIR: a value is used with the type it was defined with */
  for (int i = 0; r->parenthesized_inputs && i < n_in; i++)
    if (!hlo_refine_fits(&r->operands[i]->shape, &r->in_types[i])) {
      char have[128], said[128];
      hlo_shape_to_string(&r->operands[i]->shape, have, sizeof have);
      hlo_shape_to_string(&r->in_types[i], said, sizeof said);
      fail_at(p, r->loc, "%s: operand %d is %s but its type is given as %s", r->name, i, have, said);
    }

  /* Arity of elementwise ops. */
  int want = -1;
  if (op >= HLO_OPCODE_ABS && op <= HLO_OPCODE_BITCAST_CONVERT) want = 1;
  else if (op >= HLO_OPCODE_ADD && op <= HLO_OPCODE_XOR) want = 2;
  else if (op == HLO_OPCODE_SELECT || op == HLO_OPCODE_CLAMP) want = 3;
  else if (op >= HLO_OPCODE_CHLO_ACOS && op <= HLO_OPCODE_CHLO_MULHI)
    want = (op == HLO_OPCODE_CHLO_NEXT_AFTER || op == HLO_OPCODE_CHLO_POLYGAMMA ||
            op == HLO_OPCODE_CHLO_ZETA || op == HLO_OPCODE_CHLO_MULHI)
               ? 2
               : 1;
  if (want >= 0) check_operand_count(p, r, want);
  if (op == HLO_OPCODE_COMPARE && !r->has_compare_direction)
    fail_at(p, r->loc, "compare needs a comparison direction");

  hlo_shape_t *types;
  int nres;
  result_types(p, r, op, &types, &nres);
  const hlo_quant_t *requantize = NULL;
  if (quantized_prologue(p, r, op, types, nres, rn, &requantize)) return;

  /* Constants. */
  if (op == HLO_OPCODE_CONSTANT) {
    if (nres != 1) fail_at(p, r->loc, "constant must have one result");
    if (r->pending.present) r->literal = build_literal(p, &r->pending, &types[0]);
    if (!r->literal) fail_at(p, r->loc, "constant needs a value");
    if (!hlo_shape_equal(&r->literal->shape, &types[0])) fail_at(p, r->loc, "constant value type does not match its result type");
  }

  /* Reduce with `applies`: synthesize the body. */
  if (op == HLO_OPCODE_REDUCE && r->applies_opcode >= 0) {
    int n = r->operand_count / 2;
    char name[64];
    snprintf(name, sizeof name, "reduce_body.%d", ++p->region_counter);
    hlo_computation_t *body = hlo_computation_create(p->m, name);
    if (!body) out_of_memory(p);
    body->loc = r->loc;
    scope_t *s = push_scope(p, body, false, "reduce");
    hlo_instruction_t **params = t_alloc(p, sizeof(void *) * (size_t)(2 * n));
    for (int k = 0; k < 2 * n; k++) {
      hlo_shape_t sc = r->operands[n + k % n]->shape;
      params[k] = new_parameter(p, body, &sc, r->loc);
      const hlo_quant_t *q = value_quant(p, r->operands[n + k % n]);
      if (q) set_value_quant(p, params[k], q);
    }
    hlo_instruction_t **outs = t_alloc(p, sizeof(void *) * (size_t)n);
    for (int k = 0; k < n; k++) {
      hlo_instruction_t *ops[2] = {params[k], params[n + k]};
      const hlo_quant_t *q = value_quant(p, params[k]);
      if (q) { /* on quantized values: dequantize, the op, quantize (spec dequantize_op_quantize) */
        ops[0] = emit_dequantize(p, ops[0], q, r->loc);
        ops[1] = emit_dequantize(p, ops[1], q, r->loc);
        outs[k] = emit_quantize(p, emit_binary(p, (hlo_opcode_t)r->applies_opcode, ops[0], ops[1], r->loc), q, r->loc);
      } else {
        outs[k] = emit(p, (hlo_opcode_t)r->applies_opcode, &params[k]->shape, 2, ops, r->loc);
      }
    }
    if (n == 1) {
      body->root = outs[0];
    } else {
      hlo_shape_t *sh = t_alloc(p, sizeof(hlo_shape_t) * (size_t)n);
      for (int k = 0; k < n; k++) sh[k] = outs[k]->shape;
      hlo_shape_t ts;
      if (!hlo_shape_make_tuple(p->m, &ts, n, sh)) out_of_memory(p);
      body->root = emit(p, HLO_OPCODE_TUPLE, &ts, n, outs, r->loc);
    }
    p->scope = s->parent;
    t_grow(p, (void **)&r->regions, &r->region_cap, r->region_count + 1, sizeof(region_t));
    region_t *rg = &r->regions[r->region_count++];
    memset(rg, 0, sizeof *rg);
    rg->comp = body;
  }

  /* Region counts per op. */
  int want_regions = -1;
  switch (op) {
    case HLO_OPCODE_REDUCE: case HLO_OPCODE_SORT: case HLO_OPCODE_SCATTER:
    case HLO_OPCODE_REDUCE_WINDOW: case HLO_OPCODE_MAP: case HLO_OPCODE_ALL_REDUCE:
    case HLO_OPCODE_REDUCE_SCATTER: case HLO_OPCODE_CHLO_SCAN: case HLO_OPCODE_COLLECTIVE_REDUCE:
      want_regions = 1; break;
    case HLO_OPCODE_WHILE: case HLO_OPCODE_IF: case HLO_OPCODE_SELECT_AND_SCATTER:
      want_regions = 2; break;
    case HLO_OPCODE_CASE: want_regions = r->region_count >= 1 ? r->region_count : 1; break;
    default: want_regions = 0; break;
  }
  if (op == HLO_OPCODE_CUSTOM_CALL) want_regions = 0;
  /* A composite's body may be a region (VHLO 1.14), beside or instead of
   * its decomposition function. */
  if (op == HLO_OPCODE_COMPOSITE) want_regions = r->region_count > 1 ? 1 : r->region_count;
  if (r->region_count != want_regions)
    fail_at(p, r->loc, "%s: expected %d regions, got %d", r->name, want_regions, r->region_count);

  if (op_allows_capture(op)) finish_captures(p, r);
  known_shape_operands(p, r, op);

  hlo_shape_t shape;
  if (nres == 1) {
    shape = types[0];
  } else if (!hlo_shape_make_tuple(p->m, &shape, nres, types)) {
    out_of_memory(p);
  }
  hlo_instruction_t *in = emit(p, op, &shape, r->operand_count, r->operands, r->loc);
  int fg = (int)r->attrs.feature_group_count, bg = (int)r->attrs.batch_group_count;
  in->attrs = r->attrs;
  in->attrs.feature_group_count = fg ? fg : 1;
  in->attrs.batch_group_count = bg ? bg : 1;
  in->literal = r->literal;

  if (op == HLO_OPCODE_DOT_GENERAL && !strcmp(r->name, "stablehlo.dot")) {
    int64_t lc = r->operand_count > 0 && r->operands[0]->shape.rank > 0 ? r->operands[0]->shape.rank - 1 : 0;
    int64_t rc = 0;
    in->attrs.lhs_contracting_dimensions = hlo_dims_make(p->m, &lc, 1);
    in->attrs.rhs_contracting_dimensions = hlo_dims_make(p->m, &rc, 1);
    if (!in->attrs.lhs_contracting_dimensions.data || !in->attrs.rhs_contracting_dimensions.data)
      out_of_memory(p);
  }
  if (op == HLO_OPCODE_COMPOSITE) {
    if (r->composite_name) in->attrs.call_target_name = r->composite_name;
    if (!r->symbol && !r->region_count) fail_at(p, r->loc, "composite needs a decomposition");
    hlo_computation_t *d = r->symbol ? function_computation(p, r->symbol, r->symbol_len, r->loc, r->operands,
                                                            r->operand_count)
                                     : r->regions[0].comp;
    if (!hlo_instruction_set_called(p->m, in, 1, &d)) out_of_memory(p);
  } else if (op == HLO_OPCODE_CUSTOM_CALL && r->called) {
    hlo_computation_t *c = function_computation(p, r->called, r->called_len, r->loc, NULL, 0);
    if (!hlo_instruction_set_called(p->m, in, 1, &c)) out_of_memory(p);
  } else if (r->region_count) {
    hlo_computation_t **cs = t_alloc(p, sizeof(void *) * (size_t)r->region_count);
    for (int i = 0; i < r->region_count; i++) cs[i] = r->regions[i].comp;
    if (!hlo_instruction_set_called(p->m, in, r->region_count, cs)) out_of_memory(p);
  }
  apply_defaults(p, op, &in->attrs, r->operand_count ? &r->operands[0]->shape : NULL, r->has_dimension);
  if (hlo_shape_is_dynamic(&in->shape)) {
    char msg[256];
    if (!hlo_refine_shape(&p->refine, in, msg, sizeof msg)) fail_at(p, r->loc, "%s: %s", r->name, msg);
  }
  if (!hlo_refine_record(&p->refine, in)) out_of_memory(p);
  if (requantize) {
    in = emit_quantize(p, in, requantize, r->loc);
    set_value_quant(p, in, requantize);
  } else if (op == HLO_OPCODE_CONSTANT && types[0].quant) {
    set_value_quant(p, in, types[0].quant); /* its literal holds storage values */
  }
  emit_typed_results(p, rn, in, nres, r->loc, moves_quantized_values(op) ? types : NULL);
}

/* custom_call @shape_assertion(%ok, %dim...) {error_message = "... {0} ..."}:
 * jax.export's check that the arguments' shapes meet the program's
 * constraints (e.g. a dimension divisible by 2).  The parser knows the
 * shapes, so it evaluates the assertion: true -> nothing; false -> the
 * error, {k} replaced by the value of the k-th operand after %ok. */
static void shape_assertion(parser_t *p, raw_op_t *r) {
  if (r->operand_count < 1) fail_at(p, r->loc, "shape_assertion needs a predicate");
  const int64_t *ok = hlo_refine_value(&p->refine, r->operands[0]);
  if (!ok || hlo_shape_element_count(&r->operands[0]->shape) != 1)
    fail_at(p, r->loc, "shape_assertion: its predicate is not a value the compiler can compute from the "
            "parameters' shapes");
  if (ok[0]) return;
  char msg[512];
  size_t n = 0;
  const char *m = r->attrs.error_message ? r->attrs.error_message : "shape assertion failed";
  for (; *m && n + 24 < sizeof msg; m++) {
    int k = -1, used = 0;
    if (*m == '{' && sscanf(m, "{%d}%n", &k, &used) == 1 && used > 0 && k >= 0 && k + 1 < r->operand_count) {
      const int64_t *v = hlo_refine_value(&p->refine, r->operands[k + 1]);
      if (v) {
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%lld", (long long)v[0]);
        m += used - 1;
        continue;
      }
    }
    msg[n++] = *m;
  }
  msg[n] = 0;
  fail_at(p, r->loc, "shape assertion failed: %s", msg);
}

/* The value of operand |k| of |r| (|n| elements, or any count with n < 0)
 * as an attribute list. */
static hlo_dims_t known_operand(parser_t *p, raw_op_t *r, int k, int n, const char *what) {
  if (k >= r->operand_count) fail_at(p, r->loc, "%s: its %s operand is missing", r->name, what);
  const hlo_instruction_t *x = r->operands[k];
  const int64_t *v = hlo_refine_value(&p->refine, x);
  int64_t m = hlo_shape_element_count(&x->shape);
  if (!v) fail_at(p, r->loc, "%s: its %s is not a value the compiler can compute from shapes and constants", r->name, what);
  if (n >= 0 && m != n) fail_at(p, r->loc, "%s: its %s has %lld values, expected %d", r->name, what, (long long)m, n);
  hlo_dims_t d = hlo_dims_make(p->m, v, (int)m);
  if (m && !d.data) out_of_memory(p);
  return d;
}

/* The static shape operand |k| of |r| gives the array type |declared|
 * (whose dynamic dimensions it fills; the static ones must agree). */
static void shape_from_operand(parser_t *p, raw_op_t *r, int k, hlo_shape_t *declared, const char *what) {
  hlo_dims_t v = known_operand(p, r, k, declared->rank, what);
  hlo_shape_t got = *declared;
  for (int d = 0; d < got.rank; d++) got.dimensions[d] = v.data[d];
  if (!hlo_refine_fits(&got, declared)) fail_at(p, r->loc, "%s: its %s does not fit the result's type", r->name, what);
  *declared = got;
}

/* A custom call's result shapes as operands (jax's mlir.custom_call with
 * result_shapes under shape polymorphism): indices_of_shape_operands lists
 * one 1-D integer operand per array result (tuple elements in order) whose
 * value is that result's shape.  The parser knows the values: the results
 * get those static shapes and the call loses the shape operands, which
 * its target never sees (stablehlo's refine-shapes does the same).
 * @stablehlo.shape_refinement_operand_wrapper(%x, %shape) is then %x. */
static void custom_call_result_shapes(parser_t *p, raw_op_t *r) {
  if (!r->has_types || !r->has_arrow) fail_at(p, r->loc, "%s: indices_of_shape_operands needs result types", r->name);
  hlo_shape_t *leaves[64];
  int n = 0;
  for (int k = 0; k < r->out_count; k++) {
    hlo_shape_t *t = &r->out_types[k];
    if (!hlo_shape_is_tuple(t)) {
      if (n < 64) leaves[n++] = t;
      continue;
    }
    /* a tuple's elements: refined in a copy the result type then points to */
    hlo_shape_t copy;
    if (!hlo_shape_make_tuple(p->m, &copy, t->tuple_count, t->tuple_shapes)) out_of_memory(p);
    *t = copy;
    for (int j = 0; j < t->tuple_count && n < 64; j++) leaves[n++] = &t->tuple_shapes[j];
  }
  const hlo_dims_t *idx = &r->shape_operands;
  if (idx->count > n) fail_at(p, r->loc, "%s: %d shape operands for %d results", r->name, idx->count, n);
  bool drop[256] = {false};
  for (int j = 0; j < idx->count; j++) {
    int64_t i = idx->data[j];
    if (i < 0 || i >= r->operand_count || i >= 256) fail_at(p, r->loc, "%s: shape operand index %lld out of range", r->name, (long long)i);
    if (r->operands[i]->shape.rank != 1) fail_at(p, r->loc, "%s: shape operand %lld is not 1-D", r->name, (long long)i);
    shape_from_operand(p, r, (int)i, leaves[j], "result shape operand");
    drop[i] = true;
  }
  int m = 0, t = 0;
  for (int i = 0; i < r->operand_count; i++) {
    if (i < 256 && drop[i]) continue;
    r->operands[m++] = r->operands[i];
  }
  for (int i = 0; r->parenthesized_inputs && i < r->in_count; i++) {
    if (i < 256 && drop[i]) continue;
    r->in_types[t++] = r->in_types[i];
  }
  r->operand_count = m;
  if (r->parenthesized_inputs) r->in_count = t;
  memset(&r->shape_operands, 0, sizeof r->shape_operands);
}

/* StableHLO's dynamic ops written as custom calls (jax.export under shape
 * polymorphism), with operands the parser knows, become their static ops:
 *   @stablehlo.dynamic_reduce_window(inputs..., inits..., window_dimensions,
 *       window_strides, base_dilations, window_dilations, padding)
 *       {called_computations = [@body]}          -> reduce_window
 *   @stablehlo.dynamic_top_k(%x, %k)            -> chlo.top_k
 *   @stablehlo.dynamic_rng_bit_generator(%state, %output_shape)
 *       {rng_algorithm = ...}                    -> rng_bit_generator
 * (and @stablehlo.dynamic_approx_top_k, in build_hlo: @ApproxTopK) */
static void dynamic_custom_call(parser_t *p, raw_op_t *r, const result_names_t *rn, const char *target) {
  r->parenthesized_inputs = false;
  r->attrs.call_target_name = NULL;
  r->attrs.backend_config = NULL;
  if (!strcmp(target, "stablehlo.dynamic_reduce_window")) {
    int n = (r->operand_count - 5) / 2, rank = n > 0 ? r->operands[0]->shape.rank : 0;
    if (n < 1 || r->operand_count != 2 * n + 5 || !r->called)
      fail_at(p, r->loc, "%s: expected inputs, init values, five window operands and a body", target);
    r->attrs.window_dimensions = known_operand(p, r, 2 * n, rank, "window_dimensions");
    r->attrs.window_strides = known_operand(p, r, 2 * n + 1, rank, "window_strides");
    r->attrs.base_dilations = known_operand(p, r, 2 * n + 2, rank, "base_dilations");
    r->attrs.window_dilations = known_operand(p, r, 2 * n + 3, rank, "window_dilations");
    r->attrs.padding = known_operand(p, r, 2 * n + 4, 2 * rank, "padding");
    r->operand_count = 2 * n;
    t_grow(p, (void **)&r->regions, &r->region_cap, r->region_count + 1, sizeof(region_t));
    region_t *rg = &r->regions[r->region_count++];
    memset(rg, 0, sizeof *rg);
    rg->comp = function_computation(p, r->called, r->called_len, r->loc, NULL, 0);
    r->called = NULL;
    build_hlo(p, r, HLO_OPCODE_REDUCE_WINDOW, rn);
  } else if (!strcmp(target, "stablehlo.dynamic_top_k")) {
    check_operand_count(p, r, 2);
    r->attrs.k = known_operand(p, r, 1, 1, "k").data[0];
    r->operand_count = 1;
    build_hlo(p, r, HLO_OPCODE_CHLO_TOP_K, rn);
  } else {
    check_operand_count(p, r, 2);
    if (!r->has_types || !r->has_arrow || r->out_count != 2 || hlo_shape_is_tuple(&r->out_types[1]))
      fail_at(p, r->loc, "%s: expected results (output_state, output)", target);
    shape_from_operand(p, r, 1, &r->out_types[1], "output_shape");
    r->operand_count = 1;
    build_hlo(p, r, HLO_OPCODE_RNG_BIT_GENERATOR, rn);
  }
}

/* custom_call @mhlo.topk(%x) {mhlo.attributes = {k = K, largest = B}} :
 * (T[..., n]) -> (T[..., K], i32[..., K]), as jax.lax.top_k exports: the
 * K largest (or smallest) elements along the last dimension in order,
 * equal ones by position, and their positions.  Largest is chlo.top_k;
 * smallest is a stable ascending sort of (x, iota) by total order, sliced.
 * custom_call @TopK(%x) {called_computations = [@cmp]} : (...) ->
 * tuple<values, indices> (XLA's partitioner): the same, ordered by the
 * comparator (a sort comparator of the value and index pairs), K from the
 * result type. */
static void mhlo_topk(parser_t *p, raw_op_t *r, const result_names_t *rn) {
  check_operand_count(p, r, 1);
  hlo_instruction_t *x = r->operands[0];
  const hlo_shape_t *s = &x->shape;
  const char *what = r->called ? "custom_call @TopK" : "custom_call @mhlo.topk";
  const hlo_shape_t *types = r->has_types && r->has_arrow ? r->out_types : NULL;
  bool tupled = types && r->out_count == 1 && hlo_shape_is_tuple(&types[0]);
  if (tupled) types = types[0].tuple_shapes;
  if (!types || (tupled ? r->out_types[0].tuple_count : r->out_count) != 2 || types[0].element_type != s->element_type ||
      !hlo_element_type_is_integer(types[1].element_type) || types[0].rank != s->rank || s->rank < 1)
    fail_at(p, r->loc, "%s: expected results (values of the operand's type, integer indices)", what);
  int last = s->rank - 1;
  /* k: @TopK's result type; @mhlo.topk's mhlo.attributes, or its type
   * where the attributes are a backend_config JSON object instead */
  int64_t k = r->called || !r->attrs.k ? types[0].dimensions[last] : r->attrs.k;
  if (!r->called && r->attrs.backend_config && strstr(r->attrs.backend_config, "\"largest\": false")) r->smallest = true;
  if (k < 0 || k > s->dimensions[last])
    fail_at(p, r->loc, "%s: k = %lld does not fit the operand's last dimension", what, (long long)k);
  hlo_shape_t out[2];
  for (int i = 0; i < 2; i++) {
    hlo_shape_init(&out[i], types[i].element_type, s->rank, s->dimensions);
    out[i].dimensions[last] = k;
    if (!hlo_refine_fits(&out[i], &types[i]))
      fail_at(p, r->loc, "%s: result %d does not have the shape of k elements per row", what, i);
  }
  hlo_shape_t ts;
  hlo_instruction_t *v;
  if (!r->smallest && !r->called) {
    if (!hlo_shape_make_tuple(p->m, &ts, 2, out)) out_of_memory(p);
    v = emit(p, HLO_OPCODE_CHLO_TOP_K, &ts, 1, &x, r->loc);
    v->attrs.k = k;
  } else {
    hlo_shape_t is = *s, sorted[2] = {*s, *s};
    is.element_type = sorted[1].element_type = out[1].element_type;
    hlo_instruction_t *ops[2] = {x, emit(p, HLO_OPCODE_IOTA, &is, 0, NULL, r->loc)};
    ops[1]->attrs.dimension = last;
    hlo_computation_t *cmp;
    if (r->called) {
      cmp = function_computation(p, r->called, r->called_len, r->loc, NULL, 0);
    } else { /* a < b by total order (signed / unsigned for integers) */
      char name[64];
      snprintf(name, sizeof name, "topk_smallest.%d", ++p->region_counter);
      cmp = hlo_computation_create(p->m, name);
      if (!cmp) out_of_memory(p);
      cmp->loc = r->loc;
      scope_t *sc = push_scope(p, cmp, false, "sort");
      hlo_shape_t scalar, index, pred;
      hlo_shape_init(&scalar, s->element_type, 0, NULL);
      hlo_shape_init(&index, out[1].element_type, 0, NULL);
      hlo_shape_init(&pred, HLO_PRED, 0, NULL);
      hlo_instruction_t *a = new_parameter(p, cmp, &scalar, r->loc), *b = new_parameter(p, cmp, &scalar, r->loc);
      new_parameter(p, cmp, &index, r->loc);
      new_parameter(p, cmp, &index, r->loc);
      hlo_instruction_t *ab[2] = {a, b};
      cmp->root = emit(p, HLO_OPCODE_COMPARE, &pred, 2, ab, r->loc);
      cmp->root->attrs.comparison_direction = HLO_CMP_LT;
      cmp->root->attrs.compare_type = hlo_element_type_is_float(s->element_type)      ? HLO_CMP_TYPE_TOTALORDER
                                      : hlo_element_type_is_signed_int(s->element_type) ? HLO_CMP_TYPE_SIGNED
                                                                                        : HLO_CMP_TYPE_UNSIGNED;
      p->scope = sc->parent;
    }
    if (!hlo_shape_make_tuple(p->m, &ts, 2, sorted)) out_of_memory(p);
    hlo_instruction_t *sort = emit(p, HLO_OPCODE_SORT, &ts, 2, ops, r->loc);
    sort->attrs.dimension = last;
    sort->attrs.is_stable = true;
    if (!hlo_instruction_set_called(p->m, sort, 1, &cmp)) out_of_memory(p);
    hlo_instruction_t *parts[2];
    int64_t start[HLO_MAX_RANK] = {0}, ones[HLO_MAX_RANK];
    for (int d = 0; d < s->rank; d++) ones[d] = 1;
    for (int i = 0; i < 2; i++) {
      hlo_instruction_t *e = emit(p, HLO_OPCODE_GET_TUPLE_ELEMENT, &sorted[i], 1, &sort, r->loc);
      e->attrs.index = i;
      parts[i] = emit(p, HLO_OPCODE_SLICE, &out[i], 1, &e, r->loc);
      parts[i]->attrs.start_indices = hlo_dims_make(p->m, start, s->rank);
      parts[i]->attrs.limit_indices = hlo_dims_make(p->m, out[i].dimensions, s->rank);
      parts[i]->attrs.strides = hlo_dims_make(p->m, ones, s->rank);
      if (!parts[i]->attrs.start_indices.data || !parts[i]->attrs.limit_indices.data || !parts[i]->attrs.strides.data)
        out_of_memory(p);
    }
    if (!hlo_shape_make_tuple(p->m, &ts, 2, out)) out_of_memory(p);
    v = emit(p, HLO_OPCODE_TUPLE, &ts, 2, parts, r->loc);
  }
  emit_results(p, rn, v, tupled ? 1 : 2, r->loc);
}

/* A dynamic op's shape operands (output_dimensions, padding, slice sizes)
 * whose values the parser knows become constants, which the expand pass
 * reads (codegen/expand.c "dynamic shapes"). */
static void known_shape_operands(parser_t *p, raw_op_t *r, hlo_opcode_t op) {
  int first = 1, last = 1;
  switch (op) {
    case HLO_OPCODE_DYNAMIC_BROADCAST_IN_DIM: case HLO_OPCODE_DYNAMIC_RESHAPE: break;
    case HLO_OPCODE_DYNAMIC_IOTA: first = last = 0; break;
    case HLO_OPCODE_DYNAMIC_PAD: first = 2, last = 4; break;
    case HLO_OPCODE_DYNAMIC_GATHER: case HLO_OPCODE_DYNAMIC_CONV: first = last = 2; break;
    case HLO_OPCODE_REAL_DYNAMIC_SLICE: first = 1, last = 3; break;
    default: return;
  }
  for (int k = first; k <= last && k < r->operand_count; k++) {
    hlo_instruction_t *x = r->operands[k];
    const int64_t *v = hlo_refine_value(&p->refine, x);
    if (!v || x->opcode == HLO_OPCODE_CONSTANT) continue;
    hlo_literal_t *l = m_alloc(p, sizeof *l);
    l->shape = x->shape;
    l->size_bytes = hlo_shape_size_bytes(&x->shape);
    l->data = m_alloc(p, l->size_bytes ? l->size_bytes : 1);
    size_t size = hlo_element_type_size_bytes(x->shape.element_type);
    for (int64_t i = 0; i < hlo_shape_element_count(&x->shape); i++)
      store_le((unsigned char *)l->data + (size_t)i * size, size, (uint64_t)v[i]);
    hlo_instruction_t *c = emit(p, HLO_OPCODE_CONSTANT, &x->shape, 0, NULL, r->loc);
    c->literal = l;
    if (!hlo_refine_copy(&p->refine, c, x)) out_of_memory(p);
    r->operands[k] = c;
  }
}

/* Region ops whose only syntax is the generic one (possibly unquoted). */
static bool op_has_generic_only_regions(hlo_opcode_t op) {
  switch (op) {
    case HLO_OPCODE_IF: case HLO_OPCODE_CASE: case HLO_OPCODE_SORT: case HLO_OPCODE_MAP:
    case HLO_OPCODE_SCATTER: case HLO_OPCODE_REDUCE_WINDOW: case HLO_OPCODE_SELECT_AND_SCATTER:
    case HLO_OPCODE_ALL_REDUCE: case HLO_OPCODE_REDUCE_SCATTER: case HLO_OPCODE_COLLECTIVE_REDUCE:
      return true;
    default: return false;
  }
}

/* One op statement.  Returns true for a terminator. */
static bool parse_op(parser_t *p) {
  enter(p);
  hlo_location_t loc = tok_loc(p);
  result_names_t rn = {0};
  int cap = 0, cap2 = 0;
  if (tok(p)->kind == TK_VALUE) {
    do {
      if (tok(p)->kind != TK_VALUE) fail_expected(p, "a result name");
      if (memchr(tok(p)->start, '#', tok(p)->len)) fail(p, "a result name cannot have '#'");
      t_grow(p, (void **)&rn.names, &cap, rn.count + 1, sizeof(token_t));
      t_grow(p, (void **)&rn.counts, &cap2, rn.count + 1, sizeof(int));
      rn.names[rn.count] = *tok(p);
      lex_next(p);
      int n = 1;
      if (accept_punct(p, ':')) {
        int64_t v = parse_int(p);
        if (v < 1 || v > 1 << 20) fail(p, "bad result count");
        n = (int)v;
      }
      rn.counts[rn.count++] = n;
      rn.total += n;
    } while (accept_punct(p, ','));
    expect_punct(p, '=');
  }
  bool generic = false;
  char name[128];
  hlo_location_t name_loc = tok_loc(p);
  if (tok(p)->kind == TK_STRING) {
    generic = true;
    size_t n = tok(p)->len - 2;
    if (n >= sizeof name) fail(p, "op name too long");
    memcpy(name, tok(p)->start + 1, n);
    name[n] = 0;
  } else if (tok(p)->kind == TK_IDENT) {
    size_t n = tok(p)->len;
    if (n >= sizeof name) fail(p, "op name too long");
    memcpy(name, tok(p)->start, n);
    name[n] = 0;
  } else {
    fail_expected(p, "an op");
  }
  hlo_opcode_t op = HLO_OPCODE_COUNT;
  op_kind_t kind = classify_op(name, &op);
  if (kind == OPK_UNKNOWN) fail_at(p, name_loc, "unknown op '%s'", name);
  lex_next(p);

  if (kind == OPK_RETURN) {
    if (rn.count) fail_at(p, loc, "return has no results");
    parse_return(p, loc, generic);
    leave(p);
    return true;
  }

  raw_op_t *r = t_alloc(p, sizeof *r);
  r->name = arena_strdup(&p->tmp, name);
  if (!r->name) out_of_memory(p);
  r->loc = loc;
  r->applies_opcode = -1;
  r->attrs.feature_group_count = 1;
  r->attrs.batch_group_count = 1;

  if (kind == OPK_SDY_VALUE || kind == OPK_SDY_GROUP || kind == OPK_SDY_REGION) {
    parse_sdy(p, r, kind);
  } else if (generic) {
    parse_generic(p, r, (kind == OPK_HLO && op_allows_capture(op)) || kind == OPK_ASYNC_START);
  } else if (kind == OPK_HLO && at_punct(p, '(') && op_has_generic_only_regions(op)) {
    /* stablehlo.case(%i) ({...}, {...}) : ...: the generic form, unquoted. */
    parse_generic(p, r, op_allows_capture(op));
  } else if (kind == OPK_HLO && op == HLO_OPCODE_REDUCE) {
    parse_pretty_reduce(p, r);
  } else if (kind == OPK_HLO && op == HLO_OPCODE_WHILE) {
    parse_pretty_while(p, r);
  } else if (kind == OPK_HLO && op == HLO_OPCODE_CHLO_SCAN) {
    parse_pretty_scan(p, r);
  } else {
    parse_pretty_generic(p, r, op, kind == OPK_CHECK || kind == OPK_PRINT);
  }

  switch (kind) {
    case OPK_CALL: build_call(p, r, &rn); break;
    case OPK_CHECK:
      if (rn.count) fail_at(p, loc, "%s has no results", name);
      build_check(p, r, name);
      break;
    case OPK_HLO: build_hlo(p, r, op, &rn); break;
    case OPK_BROADCASTING: build_broadcasting(p, r, op, &rn); break;
    case OPK_SQUARE: build_square(p, r, &rn); break;
    case OPK_CONSTANT_LIKE: build_constant_like(p, r, &rn); break;
    case OPK_ASYNC_START: build_async_start(p, r, &rn); break;
    case OPK_ASYNC_DONE: build_async_done(p, r, &rn); break;
    case OPK_SDY_VALUE:
      check_operand_count(p, r, 1);
      bind_results(p, &rn, r->operands, 1, loc);
      break;
    case OPK_SDY_GROUP:
      if (rn.count) fail_at(p, loc, "%s has no results", name);
      break;
    case OPK_SDY_REGION: build_sdy_region(p, r, &rn); break;
    case OPK_PROBE: build_probe(p, r, &rn); break;
    case OPK_PRINT:
      /* interpreter.print %v : T: a check that always passes and gives the
       * value as text (vkhlo_check_result_t, kind "print") */
      if (rn.count) fail_at(p, loc, "%s has no results", name);
      check_operand_count(p, r, 1);
      emit_check(p, r, HLO_CHECK_PRINT, r->operands[0], r->operands[0]);
      break;
    case OPK_RUN_PARALLEL: build_run_parallel(p, r, &rn); break;
    case OPK_PROBE_CHECK:
      if (rn.count) fail_at(p, loc, "%s has no results", name);
      build_probe_check(p, r);
      break;
    default: break;
  }
  leave(p);
  return false;
}

/* ========================================================= functions */

/* Skips `{...}` attribute dictionaries of arguments and results. */
static void skip_attr_dict_if_any(parser_t *p) {
  if (at_punct(p, '{')) skip_balanced(p);
}

/* (%arg0: T {attrs}, ...) -> (R {attrs}, ...) [attributes {...}] { body }
 * A parameter of dynamic type takes given[i] (|given_count| shapes; the
 * entry's from the parse options, a callee's from its call's |operands|,
 * whose values, where the parser knows them, the parameters take too). */
static void parse_function(parser_t *p, func_info_t *f, const hlo_shape_t *given, int given_count,
                           hlo_instruction_t *const *operands) {
  enter(p);
  lexer_t saved = p->lx;
  scope_t *saved_scope = p->scope;
  p->scope = NULL;
  p->lx = f->start;
  f->state = 1;

  char *name = arena_strndup(&p->m->arena, f->name, f->len);
  if (!name) out_of_memory(p);
  if (f->comp) { /* another specialization of a dynamic signature: its own name */
    size_t size = f->len + 24;
    char *unique = m_alloc(p, size);
    snprintf(unique, size, "%s.%d", name, ++p->region_counter);
    name = unique;
  }
  hlo_computation_t *comp = hlo_computation_create(p->m, name);
  if (!comp) out_of_memory(p);
  comp->loc = f->loc;
  push_scope(p, comp, false, "func");

  expect_punct(p, '(');
  if (!at_punct(p, ')')) {
    do {
      if (tok(p)->kind != TK_VALUE) fail_expected(p, "an argument (%name: type)");
      token_t an = *tok(p);
      hlo_location_t al = tok_loc(p);
      lex_next(p);
      expect_punct(p, ':');
      hlo_shape_t s;
      parse_type(p, &s);
      int64_t bounds[HLO_MAX_RANK];
      int bounded = p->bounds_rank;
      memcpy(bounds, p->bounds, sizeof bounds);
      skip_attr_dict_if_any(p);
      if (hlo_shape_is_dynamic(&s)) {
        int i = comp->parameter_count;
        char a[128], b[128];
        hlo_shape_to_string(&s, a, sizeof a);
        if (i >= given_count)
          fail_at(p, al, "parameter %d of '@%.*s' has the dynamic type %s: give the parameters' types to compile it "
                  "(vkhlo_compile_options_t.parameter_types; vkhlo run --input=...)", i, (int)f->len, f->name, a);
        if (!hlo_refine_fits(&given[i], &s)) {
          hlo_shape_to_string(&given[i], b, sizeof b);
          fail_at(p, al, "parameter %d of '@%.*s' is %s, which does not fit its type %s", i, (int)f->len, f->name, b, a);
        }
        for (int d = 0; d < bounded; d++)
          if (bounds[d] >= 0 && given[i].dimensions[d] > bounds[d]) {
            hlo_shape_to_string(&given[i], b, sizeof b);
            fail_at(p, al, "parameter %d of '@%.*s' is %s, over the bound %lld of its dimension %d", i, (int)f->len,
                    f->name, b, (long long)bounds[d], d);
          }
        s = given[i];
      }
      hlo_instruction_t *param = new_parameter(p, comp, &s, al);
      if (operands && param->parameter_number < given_count && !hlo_refine_copy(&p->refine, param, operands[param->parameter_number]))
        out_of_memory(p);
      bind_single(p, &an, param);
    } while (accept_punct(p, ','));
  }
  expect_punct(p, ')');
  int declared = 0;
  if (tok(p)->kind == TK_ARROW) {
    lex_next(p);
    if (accept_punct(p, '(')) {
      if (!at_punct(p, ')')) {
        do {
          hlo_shape_t s;
          parse_type(p, &s);
          skip_attr_dict_if_any(p);
          declared++;
        } while (accept_punct(p, ','));
      }
      expect_punct(p, ')');
    } else {
      hlo_shape_t s;
      parse_type(p, &s);
      declared = 1;
    }
  }
  if (accept_ident(p, "attributes")) skip_balanced(p);
  hlo_location_t body_loc = tok_loc(p);
  expect_punct(p, '{');
  if (tok(p)->kind == TK_CARET) {
    int n;
    parse_block_header(p, &n);
    if (n) fail(p, "function body block cannot have arguments here");
  }
  int returned = parse_block_body(p);
  if (!comp->root) fail_at(p, body_loc, "function has no return");
  if (returned != declared)
    fail_at(p, f->loc, "function '@%.*s' returns %d values but declares %d", (int)f->len, f->name,
            returned, declared);
  f->comp = comp;
  f->result_count = returned;
  f->state = 2;
  p->scope = saved_scope;
  p->lx = saved;
  leave(p);
}

/* func.func [public|private|nested] @name(...) ...: records the function and
 * skips its body. */
static void scan_function(parser_t *p) {
  lex_next(p); /* func.func */
  bool is_public = true;
  if (accept_ident(p, "private")) is_public = false;
  else if (accept_ident(p, "public")) is_public = true;
  else if (accept_ident(p, "nested")) is_public = false;
  if (tok(p)->kind != TK_SYMBOL) fail_expected(p, "a function name (@name)");
  t_grow(p, (void **)&p->funcs, &p->func_cap, p->func_count + 1, sizeof(func_info_t));
  func_info_t *f = &p->funcs[p->func_count];
  memset(f, 0, sizeof *f);
  f->loc = tok_loc(p);
  f->name = tok(p)->start + 1;
  f->len = tok(p)->len - 1;
  if (f->len && f->name[0] == '"') {
    f->name++;
    f->len -= 2;
  }
  if (find_func(p, f->name, f->len))
    fail(p, "redefinition of function '@%.*s'", (int)f->len, f->name);
  f->is_public = is_public;
  lex_next(p);
  f->start = p->lx;
  if (!at_punct(p, '(')) fail_expected(p, "'('");
  const char *signature = tok(p)->start;
  skip_balanced(p);
  f->dynamic = memchr(signature, '?', (size_t)(tok(p)->start - signature)) != NULL;
  if (tok(p)->kind == TK_ARROW) {
    lex_next(p);
    if (at_punct(p, '(')) {
      skip_balanced(p);
    } else {
      hlo_shape_t s;
      parse_type(p, &s);
    }
  }
  if (accept_ident(p, "attributes")) {
    if (!at_punct(p, '{')) fail_expected(p, "'{'");
    skip_balanced(p);
  }
  if (at_punct(p, '{')) {
    /* Skip the body by its braces only: a stray parenthesis inside is
     * reported precisely when the body is parsed.  Running into the end
     * of input is likewise left to the real parse. */
    f->has_body = true;
    int depth = 0;
    do {
      if (tok(p)->kind == TK_EOF) break;
      if (at_punct(p, '{')) depth++;
      if (at_punct(p, '}')) depth--;
      lex_next(p);
    } while (depth > 0);
  }
  p->func_count++;
}

static void parse_items(parser_t *p, bool in_module) {
  for (;;) {
    if (tok(p)->kind == TK_EOF) {
      if (in_module) fail(p, "unexpected end of input (expected '}' to close the module)");
      return;
    }
    if (in_module && at_punct(p, '}')) {
      lex_next(p);
      return;
    }
    if (at_ident(p, "func.func")) {
      scan_function(p);
    } else if (!in_module && at_ident(p, "module")) {
      lex_next(p);
      if (tok(p)->kind == TK_SYMBOL) {
        if (!p->module_name) {
          p->module_name = tok(p)->start + 1;
          p->module_name_len = tok(p)->len - 1;
        }
        lex_next(p);
      }
      if (accept_ident(p, "attributes")) {
        if (!at_punct(p, '{')) fail_expected(p, "'{'");
        skip_balanced(p);
      }
      expect_punct(p, '{');
      enter(p);
      parse_items(p, true);
      leave(p);
    } else if (at_ident(p, "sdy.mesh")) {
      /* sdy.mesh @name = <["x"=2, ...]>: Shardy's device mesh (one device runs
       * the whole values; manual computations check their own types) */
      lex_next(p);
      if (tok(p)->kind != TK_SYMBOL) fail_expected(p, "a mesh name (@name)");
      lex_next(p);
      expect_punct(p, '=');
      skip_value(p, false);
    } else if (tok(p)->kind == TK_HASH) {
      /* #alias = value (locations, mostly; loc(...) itself is skipped by the lexer). */
      lex_next(p);
      expect_punct(p, '=');
      if (tok(p)->kind != TK_EOF && !at_ident(p, "func.func") && !at_ident(p, "module") &&
          tok(p)->kind != TK_HASH && !at_punct(p, '}'))
        skip_value(p, true);
    } else {
      char buf[64];
      fail(p, "expected 'func.func' or 'module', found %s", tok_desc(p, buf, sizeof buf));
    }
  }
}

/* Post-order over called computations: callees first, entry last. */
static void collect_computations(parser_t *p, hlo_computation_t *c, int depth) {
  if (depth > MAX_DEPTH) fail_at(p, c->loc, "computations nested too deeply");
  for (int i = 0; i < p->m->computation_count; i++)
    if (p->m->computations[i] == c) return;
  for (int i = 0; i < c->instruction_count; i++) {
    hlo_instruction_t *in = c->instructions[i];
    for (int k = 0; k < in->called_count; k++) collect_computations(p, in->called_computations[k], depth + 1);
  }
  for (int i = 0; i < p->m->computation_count; i++)
    if (p->m->computations[i] == c) return; /* added by a recursive visit */
  if (!hlo_module_add_computation(p->m, c)) out_of_memory(p);
}

static func_info_t *choose_entry(parser_t *p) {
  const char *want = p->opts->entry_name;
  if (want) {
    func_info_t *f = find_func(p, want, strlen(want));
    if (!f) {
      hlo_location_t l = {p->file, 1, 1};
      fail_at(p, l, "entry function '@%s' not found", want);
    }
    return f;
  }
  func_info_t *f = find_func(p, "main", 4);
  if (f) return f;
  func_info_t *only = NULL;
  int publics = 0;
  for (int i = 0; i < p->func_count; i++) {
    if (p->funcs[i].is_public) {
      publics++;
      only = &p->funcs[i];
    }
  }
  if (publics == 1) return only;
  if (p->func_count == 1) return &p->funcs[0];
  hlo_location_t l = {p->file, 1, 1};
  if (p->func_count == 0) fail_at(p, l, "no functions in input");
  fail_at(p, l, "no entry function: no '@main' and %d public functions", publics);
}

static void parse_all(parser_t *p) {
  lex_next(p);
  parse_items(p, false);
  func_info_t *entry = choose_entry(p);
  if (!entry->has_body) fail_at(p, entry->loc, "entry function has no body");
  /* Parse every function (errors anywhere are reported), entry included;
   * those with dynamic signatures only where called. */
  for (int i = 0; i < p->func_count; i++) {
    func_info_t *f = &p->funcs[i];
    if (f->has_body && f->state == 0 && !f->dynamic) parse_function(p, f, NULL, 0, NULL);
  }
  if (entry->dynamic) parse_function(p, entry, p->opts->parameter_shapes, p->opts->parameter_shape_count, NULL);
  if (p->module_name) {
    p->m->name = m_strndup(p, p->module_name, p->module_name_len);
  }
  collect_computations(p, entry->comp, 0);
  p->m->entry_computation = entry->comp;
}

vkhlo_status_t hlo_parse(const char *text, size_t length, const char *file_name,
                         const hlo_parse_options_t *options, hlo_module_t **out_module) {
  if (!out_module) return VKHLO_INVALID("hlo_parse: out_module is NULL");
  *out_module = NULL;
  if (!text && length) return VKHLO_INVALID("hlo_parse: text is NULL");
  static const hlo_parse_options_t default_options = {0};
  const vkhlo_allocator_t *allocator = options ? options->allocator : NULL;
  size_t bc_offset, bc_length;
  if (hlo_find_bytecode(text, length, &bc_offset, &bc_length)) {
    /* A portable artifact (or a jax.export file holding one): parsed as the
     * text it stands for; errors in that text name it "FILE (as text)"
     * (`vkhlo deserialize FILE` prints it). */
    char *converted = NULL;
    size_t converted_length = 0;
    vkhlo_status_t st =
        hlo_bytecode_to_text(text + bc_offset, bc_length, file_name, allocator, &converted, &converted_length);
    if (st) return st;
    char name[512];
    snprintf(name, sizeof name, "%s (as text)", file_name ? file_name : "<input>");
    st = hlo_parse(converted, converted_length, name, options, out_module);
    vkhlo_free(allocator, converted);
    return st;
  }
  parser_t *p = vkhlo_calloc(allocator, 1, sizeof *p);
  if (!p) return VKHLO_NO_MEMORY();
  p->m = hlo_module_create("module", allocator);
  if (!p->m) {
    vkhlo_free(allocator, p);
    return VKHLO_NO_MEMORY();
  }
  arena_init(&p->tmp, allocator);
  p->refine.arena = &p->tmp;
  p->opts = options ? options : &default_options;
  p->rng_state = p->opts->seed;
  p->text = text ? text : "";
  p->end = p->text + length;
  p->lx.pos = p->text;
  p->lx.line_start = p->text;
  p->lx.line = 1;
  p->file = arena_strdup(&p->m->arena, file_name ? file_name : "<input>");
  if (!p->file) {
    hlo_module_destroy(p->m);
    vkhlo_free(allocator, p);
    return VKHLO_NO_MEMORY();
  }
  p->m->source_file = p->file;
  if (setjmp(p->jb)) {
    vkhlo_status_t err = p->err;
    hlo_module_destroy(p->m);
    arena_free(&p->tmp);
    vkhlo_free(allocator, p);
    return err;
  }
  parse_all(p);
  *out_module = p->m;
  arena_free(&p->tmp);
  vkhlo_free(allocator, p);
  return NULL;
}
