/*
 * A GLSL text builder with real scopes: the emitters open and close blocks
 * through calls, and the builder owns the indentation and knows which
 * blocks are open.
 *
 *   glsl_scope_t s = glsl_open(b, note, "if (%s) {", cond);
 *   glsl_line(b, note, "x = %s;", v);
 *   s = glsl_else(b, s, note, "else {");    // "} else {": a new scope
 *   glsl_line(b, note, "x = 0;");
 *   glsl_close(b, s, note);                 // "}"
 *
 * Every block gets a scope with an id that is never reused, so that a
 * value defined in a block can be remembered with the scope it was
 * defined in and reused exactly while glsl_scope_visible says so (the
 * fused-kernel memo, codegen/emit_fusion.c): after the block closes, or in
 * the next branch of an if, the id is no longer open.
 *
 * Functions.  glsl_open_function sends the lines to another text (a GLSL
 * function's body) at the indentation of a function body until its scope
 * closes; scopes opened outside the function are not visible inside it
 * (their locals are not in the function's scope).  The builder's root
 * scope, open from glsl_builder_init on, is a function scope too (main()).
 *
 * Misuse (closing a scope other than the innermost one, nesting deeper
 * than GLSL_BUILDER_MAX_DEPTH) is a bug of the emitter: the builder
 * records the first one in |error| and ignores the call; glsl_builder_check
 * turns it, or scopes still open, into an INTERNAL status.  Lines go on
 * being appended, so an emitter need not check after every call.
 *
 * Allocation failures are recorded in the text's strbuf (|failed|).
 */
#ifndef VKHLO_CODEGEN_GLSL_BUILDER_H
#define VKHLO_CODEGEN_GLSL_BUILDER_H

#include <stdarg.h>
#include <stdbool.h>

#include "support/status.h"
#include "support/strbuf.h"

#define GLSL_BUILDER_MAX_DEPTH 128

/* A block opened by glsl_open (or glsl_open_function); id > 0. */
typedef struct glsl_scope {
  int id;
} glsl_scope_t;

/* Ends a line: appends its comment for |note| (may be NULL) and "\n". */
typedef void (*glsl_note_fn)(strbuf_t *text, const void *note);

typedef struct glsl_frame {
  int id;
  bool function;            /* opened by glsl_open_function (or the root) */
  int outer_indent;         /* restored when the scope closes */
  strbuf_t *outer_text;
} glsl_frame_t;

typedef struct glsl_builder {
  strbuf_t *text;    /* where lines go now (not owned) */
  int indent;        /* of the next line, in steps of two spaces */
  glsl_note_fn note; /* NULL: lines end with "\n" alone */
  int depth;         /* frames[0] is the root scope */
  glsl_frame_t frames[GLSL_BUILDER_MAX_DEPTH];
  int next_id;
  const char *error; /* first misuse (a static message), NULL if none */
} glsl_builder_t;

/* Starts a builder writing to |text| (not owned; it must outlive |b|),
 * whose root-level lines are indented |indent| steps (1 for the body of
 * main()).  |note| ends each line (see glsl_note_fn). */
void glsl_builder_init(glsl_builder_t *b, strbuf_t *text, int indent, glsl_note_fn note);

/* Appends one line at the current indentation: printf(fmt, ...), then the
 * note's comment. */
void glsl_line(glsl_builder_t *b, const void *note, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void glsl_vline(glsl_builder_t *b, const void *note, const char *fmt, va_list ap);

/* Appends the line printf(fmt, ...) (which ends with "{") and opens a
 * scope: the lines until glsl_close are indented one step more. */
glsl_scope_t glsl_open(glsl_builder_t *b, const void *note, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
glsl_scope_t glsl_vopen(glsl_builder_t *b, const void *note, const char *fmt, va_list ap);

/* Closes |s|, which must be the innermost open scope, and appends "}". */
void glsl_close(glsl_builder_t *b, glsl_scope_t s, const void *note);

/* Closes |s| (the innermost) and opens the next branch on one line:
 * "} " then printf(fmt, ...), e.g. glsl_else(b, s, note, "else {").  The
 * branch is a new scope: what |s| defined is not visible in it. */
glsl_scope_t glsl_else(glsl_builder_t *b, glsl_scope_t s, const void *note, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
glsl_scope_t glsl_velse(glsl_builder_t *b, glsl_scope_t s, const void *note, const char *fmt,
                        va_list ap);

/* Sends the following lines to |text| (not owned), indented as a function
 * body, until |s| is closed with glsl_close_function, which appends
 * nothing (the caller writes the function's header and closing brace). */
glsl_scope_t glsl_open_function(glsl_builder_t *b, strbuf_t *text);
void glsl_close_function(glsl_builder_t *b, glsl_scope_t s);

/* True when no scope but the root is open (the top level of main()). */
static inline bool glsl_at_root(const glsl_builder_t *b) { return b->depth == 1; }

/* The innermost open scope (the root scope at the top level). */
glsl_scope_t glsl_innermost(const glsl_builder_t *b);

/* True if |s| is open: glsl_open returned it and it is not closed yet
 * (whether or not a function opened since hides it). */
bool glsl_scope_open(const glsl_builder_t *b, glsl_scope_t s);

/* True if |s| is open and visible from the current line: it is the
 * innermost scope or encloses it, within the current function. */
bool glsl_scope_visible(const glsl_builder_t *b, glsl_scope_t s);

/* NULL if the builder was used correctly and every scope but the root is
 * closed; else an INTERNAL status naming the misuse. */
vkhlo_status_t glsl_builder_check(const glsl_builder_t *b);

#endif
