/*
 * The helper prelude of generated kernels, as a table of pieces.
 *
 * The helpers (GLSL functions giving HLO ops their exact StableHLO/XLA
 * semantics where plain GLSL differs or is undefined) live in the .glsl files of shaders/,
 * one file per group, embedded in the library at build time (shaders.h).
 * A kernel's prelude is the concatenation, in table order, of the pieces its
 * features select (GLSL_HELPERS_* and GLSL_FEATURE_* of glsl_types.h).
 *
 * A piece is one file, optionally instantiated for a type: files written
 * once for several types use macros (FT = float type, FT_EPS its relative
 * precision, CT = complex type, IT/UT = signed/unsigned integer type,
 * IBITS = their width) that the piece #defines before the file and
 * #undefs after it; GLSL overloading picks the right instance.  A file may
 * call the functions of earlier pieces only: those its selector bits pick
 * too, or those its |needs| bits add.
 *
 * Nothing here reads the GLSL: which files a kernel gets is decided by the
 * table alone.  Unused functions cost nothing: the SPIR-V optimizer drops
 * them.  All helper names start with "vk_" (or "i64_"/"u64_" for emulated
 * 64-bit integers, "VK_" for macros).
 */
#ifndef VKHLO_CODEGEN_GLSL_PRELUDE_H
#define VKHLO_CODEGEN_GLSL_PRELUDE_H

#include <stdbool.h>
#include <stddef.h>

#include "support/strbuf.h"

enum { GLSL_PRELUDE_MAX_DEFINES = 3 };

typedef struct glsl_define {
  const char *name;  /* macro name, e.g. "FT" */
  const char *value; /* its replacement, e.g. "float" */
} glsl_define_t;

typedef struct glsl_prelude_piece {
  const char *file; /* name in shaders/, e.g. "float.glsl" */
  unsigned any;     /* selected when the features have any of these bits ... */
  unsigned all;     /* ... and all of these (0: no further condition) */
  unsigned needs;   /* GLSL_HELPERS_* of earlier pieces whose functions the
                       file calls: selecting this piece selects them too */
  /* #defined (in order) before the file and #undef'd after it; the unused
   * entries have a NULL name */
  glsl_define_t defines[GLSL_PRELUDE_MAX_DEFINES];
} glsl_prelude_piece_t;

/* The table, in prelude order; *out_count receives its length.  Static
 * storage, never freed. */
const glsl_prelude_piece_t *glsl_prelude_pieces(size_t *out_count);

/* Whether |piece| belongs to the prelude of a kernel with |features|. */
bool glsl_prelude_piece_selected(const glsl_prelude_piece_t *piece, unsigned features);

/* Appends the pieces among the first |end| of the table that |features|
 * selects.  With |line_directives| each file is preceded by
 * `#line 1 "<file>"` so that glslang's messages name the file's own lines
 * (the shader must enable GL_GOOGLE_cpp_style_line_directive); the library
 * passes false, tests true.  A file missing from shaders/ (a build error)
 * marks |sb| failed. */
void glsl_append_prelude_pieces(strbuf_t *sb, unsigned features, size_t end,
                                bool line_directives);

#endif
