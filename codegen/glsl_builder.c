/* GLSL text with scopes (see codegen/glsl_builder.h). */
#include "codegen/glsl_builder.h"

#include <stdio.h>
#include <string.h>

void glsl_builder_init(glsl_builder_t *b, strbuf_t *text, int indent, glsl_note_fn note) {
  memset(b, 0, sizeof *b);
  b->text = text;
  b->indent = indent;
  b->note = note;
  b->frames[0] = (glsl_frame_t){.id = 1, .function = true, .outer_indent = indent, .outer_text = text};
  b->depth = 1;
  b->next_id = 2;
}

static void fail(glsl_builder_t *b, const char *message) {
  if (!b->error) b->error = message;
}

/* Appends printf(fmt, ap) to |sb| with no allocation of its own: the
 * formatted length is reserved as spaces, then written over. */
static void append_vformat(strbuf_t *sb, const char *fmt, va_list ap) {
  va_list count;
  va_copy(count, ap);
  int n = vsnprintf(NULL, 0, fmt, count);
  va_end(count);
  if (n <= 0) return;
  size_t at = sb->length;
  strbuf_printf(sb, "%*s", n, "");
  if (sb->failed) return;
  vsnprintf(sb->data + at, (size_t)n + 1, fmt, ap);
}

static void end_line(glsl_builder_t *b, const void *note) {
  if (b->note) b->note(b->text, note);
  else strbuf_append(b->text, "\n");
}

static void vline(glsl_builder_t *b, const void *note, const char *prefix, const char *fmt,
                  va_list ap) {
  for (int i = 0; i < b->indent; i++) strbuf_append(b->text, "  ");
  strbuf_append(b->text, prefix);
  append_vformat(b->text, fmt, ap);
  end_line(b, note);
}

void glsl_vline(glsl_builder_t *b, const void *note, const char *fmt, va_list ap) {
  vline(b, note, "", fmt, ap);
}

void glsl_line(glsl_builder_t *b, const void *note, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_vline(b, note, fmt, ap);
  va_end(ap);
}

/* Pushes a scope whose lines go to |text| at |indent|. */
static glsl_scope_t push(glsl_builder_t *b, bool function, strbuf_t *text, int indent) {
  if (b->depth == GLSL_BUILDER_MAX_DEPTH) {
    fail(b, "GLSL blocks nested too deeply");
    return (glsl_scope_t){0};
  }
  glsl_frame_t *f = &b->frames[b->depth++];
  *f = (glsl_frame_t){.id = b->next_id++, .function = function, .outer_indent = b->indent,
                      .outer_text = b->text};
  b->text = text;
  b->indent = indent;
  return (glsl_scope_t){f->id};
}

/* Pops |s| if it is the innermost scope and of the kind asked for. */
static bool pop(glsl_builder_t *b, glsl_scope_t s, bool function) {
  const glsl_frame_t *f = &b->frames[b->depth - 1];
  if (b->depth <= 1 || s.id != f->id) {
    fail(b, "closing a GLSL block that is not the innermost open one");
    return false;
  }
  if (f->function != function) {
    fail(b, function ? "glsl_close_function on a block" : "glsl_close on a function");
    return false;
  }
  b->indent = f->outer_indent;
  b->text = f->outer_text;
  b->depth--;
  return true;
}

glsl_scope_t glsl_vopen(glsl_builder_t *b, const void *note, const char *fmt, va_list ap) {
  vline(b, note, "", fmt, ap);
  return push(b, false, b->text, b->indent + 1);
}

glsl_scope_t glsl_open(glsl_builder_t *b, const void *note, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_scope_t s = glsl_vopen(b, note, fmt, ap);
  va_end(ap);
  return s;
}

void glsl_close(glsl_builder_t *b, glsl_scope_t s, const void *note) {
  if (!pop(b, s, false)) return;
  glsl_line(b, note, "}");
}

glsl_scope_t glsl_velse(glsl_builder_t *b, glsl_scope_t s, const void *note, const char *fmt,
                        va_list ap) {
  if (!pop(b, s, false)) return (glsl_scope_t){0};
  vline(b, note, "} ", fmt, ap);
  return push(b, false, b->text, b->indent + 1);
}

glsl_scope_t glsl_else(glsl_builder_t *b, glsl_scope_t s, const void *note, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  glsl_scope_t n = glsl_velse(b, s, note, fmt, ap);
  va_end(ap);
  return n;
}

glsl_scope_t glsl_open_function(glsl_builder_t *b, strbuf_t *text) {
  return push(b, true, text, b->frames[0].outer_indent);
}

void glsl_close_function(glsl_builder_t *b, glsl_scope_t s) { pop(b, s, true); }

glsl_scope_t glsl_innermost(const glsl_builder_t *b) {
  return (glsl_scope_t){b->frames[b->depth - 1].id};
}

bool glsl_scope_open(const glsl_builder_t *b, glsl_scope_t s) {
  for (int i = b->depth - 1; i >= 0; i--)
    if (b->frames[i].id == s.id) return true;
  return false;
}

bool glsl_scope_visible(const glsl_builder_t *b, glsl_scope_t s) {
  for (int i = b->depth - 1; i >= 0; i--) {
    if (b->frames[i].id == s.id) return true;
    if (b->frames[i].function) return false;
  }
  return false;
}

vkhlo_status_t glsl_builder_check(const glsl_builder_t *b) {
  if (b->error) return VKHLO_INTERNAL("generated GLSL: %s", b->error);
  if (b->depth != 1)
    return VKHLO_INTERNAL("generated GLSL: %d block(s) left open", b->depth - 1);
  return NULL;
}
